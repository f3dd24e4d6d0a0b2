/* The agent's core as its features see it (preload/libs, cuda, nvtx,
 * stacks, torch): every layer of the core (capture.h and the headers
 * below it: base.h, publish.h, resolve.h, conn.h, intern.h, thread.h),
 * the agent's own entry points (agent.c: settings, start, fork and exit,
 * the features' table), and the wrapper bodies the library tables expand
 * to. A feature includes this header and nothing of another feature's;
 * the core includes nothing of theirs and reaches them only through the
 * feature table (preload/features.c) and the hooks in thread.h.
 *
 * Per call: two clock reads and stores into this thread's shared ring; no
 * lock, no allocation, no syscall, no stdio. Everything slow (attaching a
 * thread, resolving a function) is out of line. */
#ifndef OPP_CORE_INTERNAL_H
#define OPP_CORE_INTERNAL_H

#include <stdint.h>

#include "core/capture.h"

/* ---- features ---- */

/* What a feature does at the agent's start, in the child of fork() and at
 * exit; a NULL hook: nothing. The core walks the table in order (start and
 * fork) and in reverse (exit). In the child of fork() both fork hooks run
 * at once; in the child of a fork that ran no atfork handler (the system
 * call itself), forked runs when the first thread there records, sends or
 * exits, and thread_forked when the forking thread meets its ring. */
struct opp_feature {
    const char *name;
    void (*start)(const char *self_path); /* once the collector took us; our path */
    void (*forked)(void);                 /* the process's state, after the core's own reset */
    void (*thread_forked)(void);          /* the forking thread's own, on that thread */
    void (*stop)(void);                   /* at exit, before the goodbye */
};
extern const struct opp_feature *const opp_features[]; /* NULL-terminated */

/* Whether this process is to be profiled (preloaded, OPPROF_DISABLE not
 * 1; known before the agent starts): the injection entry points (CUDA's,
 * NVTX's) do nothing in a process not to be profiled. (agent.c) */
int opp_agent_wanted(void);

/* ---- the wrapper bodies the library tables expand to ----
 * A table's signature class (tables/LIB.h) gives a prototype once, the
 * arguments it forwards and the values it records; these bodies do the
 * rest. The count of recorded values is the length of the capture list,
 * never typed by hand; a library whose OPP_LIBS line says so (GPU
 * libraries) pushes an external correlation id, recorded last. */

#define OPP_EXT_PUSH(name) (OPP_FNEXT_##name && OPP_UNLIKELY(opp_extcorr_on) ? opp_extcorr_push() : 0)
#define OPP_EXT_POP(x)                                                                             \
    do {                                                                                           \
        if (OPP_UNLIKELY(x))                                                                       \
            opp_extcorr_pop();                                                                     \
    } while (0)

/* Argument capture helpers: negative or missing values record as 0. */
static inline uint64_t opp_dim(long v) { return v > 0 ? (uint64_t)v : 0; }
static inline uint64_t opp_pdim(const int *p) { return p && *p > 0 ? (uint64_t)*p : 0; }
/* A Fortran argument's value (0 when missing): an int, a character. */
static inline int opp_pval(const int *p)
{
    return p ? *p : 0;
}
static inline int opp_pchar(const char *p)
{
    return p ? *p : 0;
}
/* The order of a symmetric or triangular A by side (CBLAS 141/142 or
 * 'L'/'R'): m on the left of B [m, n], n on its right. */
static inline uint64_t opp_side_dim(int side, long m, long n)
{
    return opp_dim(side == 141 || side == 'L' || side == 'l' ? m : n);
}
/* The length of x in op(A) x for A [m, n] stored: n untransposed, else m. */
static inline uint64_t opp_trans_dim(int trans, long m, long n)
{
    return opp_dim(opp_trans_code(trans) == 'N' ? n : m);
}
/* A LAPACK call's sub, or OPP_SUB_LWORK_QUERY when it only asked for its
 * workspace size (query: an lwork argument was -1). */
static inline uint64_t opp_lwork_sub(int query, uint64_t sub)
{
    return query ? OPP_SUB_LWORK_QUERY : sub;
}

#define OPP_UNPAREN(...) __VA_ARGS__
#define OPP_COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

/* A function returning nothing; capture: the values recorded. */
#define OPP_WRAP_VOID(name, params, args, capture)                                                 \
    OPP_EXPORT void name params                                                                    \
    {                                                                                              \
        typedef void(*real_t) params;                                                              \
        real_t real = (real_t)opp_real_from(OPP_FN_##name, __builtin_return_address(0));           \
        struct opp_frame f_;                                                                       \
        if (OPP_UNLIKELY(!real)) {                                                                 \
            opp_missing(OPP_FN_##name, 0);                                                         \
            return;                                                                                \
        }                                                                                          \
        if (!opp_enter_frame(&f_, OPP_FN_##name)) {                                                \
            real args;                                                                             \
            return;                                                                                \
        }                                                                                          \
        real args;                                                                                 \
        const uint64_t a_[] = {OPP_UNPAREN capture};                                               \
        opp_leave(&f_, a_, OPP_COUNTOF(a_));                                                       \
    }

/* The body of every wrapper that returns a value: after, a parenthesized
 * statement list run once the real call returned (r_ holds its value),
 * records the call with opp_leave(&f_, ...). x_: the external correlation
 * id pushed around the real call (0: none), recorded last when the
 * library pushes one (OPP_EXT_N, a compile-time constant). */
#define OPP_EXT_N(name) ((unsigned)OPP_FNEXT_##name)
#define OPP_WRAP_RET_CORE(ret, name, params, args, after)                                          \
    OPP_EXPORT ret name params                                                                     \
    {                                                                                              \
        typedef ret(*real_t) params;                                                               \
        real_t real = (real_t)opp_real_from(OPP_FN_##name, __builtin_return_address(0));           \
        struct opp_frame f_;                                                                       \
        if (OPP_UNLIKELY(!real))                                                                   \
            return (ret)opp_missing(OPP_FN_##name, 1);                                             \
        if (!opp_enter_frame(&f_, OPP_FN_##name))                                                  \
            return real args;                                                                      \
        const uint64_t x_ = OPP_EXT_PUSH(name);                                                    \
        ret r_ = real args;                                                                        \
        OPP_EXT_POP(x_);                                                                           \
        OPP_UNPAREN after;                                                                         \
        return r_;                                                                                 \
    }

/* capture: the values recorded, evaluated after the call (may use r_). */
#define OPP_WRAP_RET(ret, name, params, args, capture)                                             \
    OPP_WRAP_RET_CORE(ret, name, params, args,                                                     \
                      (const uint64_t a_[] = {OPP_UNPAREN capture, x_};                            \
                       opp_leave(&f_, a_, OPP_COUNTOF(a_) - 1 + OPP_EXT_N(name))))

/* The same with one statement (prep) between the call and the capture. */
#define OPP_WRAP_RET_PREP(ret, name, params, args, prep, capture)                                  \
    OPP_WRAP_RET_CORE(ret, name, params, args,                                                     \
                      (OPP_UNPAREN prep; const uint64_t a_[] = {OPP_UNPAREN capture, x_};          \
                       opp_leave(&f_, a_, OPP_COUNTOF(a_) - 1 + OPP_EXT_N(name))))

/* The same with a capture whose length is known only at run time: fill, an
 * expression evaluated after the call (r_ is the returned value), writes
 * up to OPP_MAX_ARGS - 1 values into a_ and yields how many; the external
 * correlation id goes last (over the last value if the fill took all). */
#define OPP_WRAP_RET_FILL(ret, name, params, args, fill)                                           \
    OPP_WRAP_RET_CORE(ret, name, params, args,                                                     \
                      (uint64_t a_[OPP_MAX_ARGS]; unsigned n_ = (fill);                            \
                       if (OPP_EXT_N(name)) a_[n_ < OPP_MAX_ARGS ? n_++ : n_ - 1] = x_;            \
                       opp_leave(&f_, a_, n_)))

/* Every wrapper of a table: X-expand it with OPP_DEFINE_WRAPPERS. */
#define OPP_DEFINE_ONE(lib, name, kind, flags, dtype, cls, ...) cls(name, ##__VA_ARGS__)
#define OPP_DEFINE_WRAPPERS(table) table(OPP_DEFINE_ONE, _)

#endif
