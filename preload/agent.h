/* The in-process agent's hot path: entering and leaving an intercepted call.
 * Per call: two clock reads and stores into this thread's shared ring; no
 * lock, no allocation, no syscall, no stdio. Everything slow (attaching a
 * thread, resolving a function) is out of line. */
#ifndef OPP_AGENT_H
#define OPP_AGENT_H

#include <stdatomic.h>
#include <stdint.h>

#include "buf.h"
#include "format.h"
#include "ops.h"
#include "ring.h"
#include "util.h"

#define OPP_EXPORT __attribute__((visibility("default")))
#define OPP_BARRIER() __asm__ __volatile__("" ::: "memory")

/* Every entry point of every library table, one id each. */
#include "funcs.h"
#include "capture.h"

/* NEW: not attached yet; ON: recording; OFF: never (and our reentrancy guard). */
enum opp_thread_state { OPP_T_NEW = 0, OPP_T_ON = 1, OPP_T_OFF = 2 };

struct opp_tls {
    struct opp_ring_hdr *ring; /* NULL: not attached, attaching, or off */
    uint8_t state;             /* enum opp_thread_state */
};
extern __thread struct opp_tls opp_tls;

extern int opp_use_tsc;                    /* clock: TSC (1) or CLOCK_MONOTONIC */
extern void *_Atomic opp_real_fn[OPP_FN_COUNT]; /* resolved real functions */

struct opp_frame {
    struct opp_ring_hdr *r;
    uint64_t begin;
    uint32_t fn, depth;
    uint32_t stack; /* code stack id (stacks.h), 0 when none */
};

/* OPPROF_STACKS (stacks.c): frames to capture per call, 0 when off. */
extern int opp_stacks_n;
uint32_t opp_stack_capture(void);

struct opp_ring_hdr *opp_thread_attach(void);
void *opp_resolve(uint32_t fn);
int opp_is_self(const void *p); /* p lies in libopprof.so itself */

static inline uint64_t opp_now(void)
{
    return OPP_LIKELY(opp_use_tsc) ? __rdtsc() : opp_mono_ns();
}

/* The real function behind entry point fn, or NULL when no loaded library
 * defines it (reported once). */
static inline void *opp_real(uint32_t fn)
{
    void *p = atomic_load_explicit(&opp_real_fn[fn], memory_order_relaxed);
    return OPP_LIKELY(p != NULL) ? p : opp_resolve(fn);
}

/* The common part of entering a call: the thread's ring, its pause word,
 * then the clock. stack: capture a code stack first (OPPROF_STACKS). */
static inline int opp_enter_ring(struct opp_frame *f, uint32_t fn, int stack)
{
    struct opp_ring_hdr *r = opp_tls.ring;
    if (OPP_UNLIKELY(!r)) {
        r = opp_thread_attach();
        if (!r)
            return 0;
    }
    if (OPP_UNLIKELY(atomic_load_explicit(&r->paused, memory_order_relaxed)))
        return 0; /* `opprof ctl stop`: the collector paused this thread's ring */
    /* the stack before the clock: its cost is not the call's */
    uint32_t st = stack ? opp_stack_capture() : 0;
    uint32_t d = r->depth;
    uint64_t t = opp_now();
    if (OPP_LIKELY(d < OPP_OPEN_MAX)) {
        /* What the collector reports if the process dies inside this call. */
        r->open[d].begin = t;
        r->open[d].fn = fn;
    }
    OPP_BARRIER();
    r->depth = d + 1;
    f->r = r;
    f->depth = d;
    f->fn = fn;
    f->begin = t;
    f->stack = st;
    return 1;
}

/* 1 when this call is recorded (then opp_leave must follow), 0 when not:
 * outside a capture window (capture.h), or when this thread cannot record.
 * One load decides the common case: opp_enter_gate is set while anything
 * else must be looked at (a step marker, a closed window, code stacks). */
static inline int opp_enter(struct opp_frame *f, uint32_t fn)
{
    if (OPP_UNLIKELY(__atomic_load_n(&opp_enter_gate, __ATOMIC_RELAXED))) {
        /* a closed window and no step marker: answered here, no call */
        if (fn != opp_step_fn && !__atomic_load_n(&opp_capturing, __ATOMIC_RELAXED))
            return 0;
        return opp_enter_gated(f, fn);
    }
    return opp_enter_ring(f, fn, 0);
}

/* Append one finished event to ring r (this thread's): no wait, a full
 * ring drops and counts it. nargs is a constant at every call site, so the
 * slot arithmetic folds away. */
static inline void opp_publish_f(struct opp_ring_hdr *r, uint32_t fn, uint32_t depth,
                                 uint64_t begin, uint64_t end, const uint64_t *args,
                                 unsigned nargs, uint8_t flags)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    unsigned need = opp_rec_slots(nargs);
    if (OPP_UNLIKELY(h + need - r->cached_tail > r->capacity)) {
        r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (h + need - r->cached_tail > r->capacity) {
            /* Full: drop and count, never wait. */
            atomic_store_explicit(&r->dropped,
                                  atomic_load_explicit(&r->dropped, memory_order_relaxed) + 1,
                                  memory_order_relaxed);
            return;
        }
    }
    struct opp_rec *s = opp_ring_slot(r, h);
    s->begin = begin;
    s->end = end;
    s->fn = fn;
    s->depth = (uint16_t)depth;
    s->nargs = (uint8_t)nargs;
    s->flags = flags;
    s->arg0 = nargs ? args[0] : 0;
    for (unsigned i = 1; i < need; i++) {
        struct opp_rec_ext *e = (struct opp_rec_ext *)opp_ring_slot(r, h + i);
        for (unsigned k = 0; k < 4; k++) {
            unsigned a = 1 + (i - 1) * 4 + k;
            e->arg[k] = a < nargs ? args[a] : 0;
        }
    }
    atomic_store_explicit(&r->head, h + need, memory_order_release);
}

static inline void opp_publish(struct opp_ring_hdr *r, uint32_t fn, uint32_t depth, uint64_t begin,
                               uint64_t end, const uint64_t *args, unsigned nargs)
{
    opp_publish_f(r, fn, depth, begin, end, args, nargs, 0);
}

/* The same with the frame's code stack id appended (OPP_REC_STACK); a
 * call with all OPP_MAX_ARGS values goes without its stack. */
void opp_publish_stack(struct opp_ring_hdr *r, const struct opp_frame *f, uint64_t end,
                       const uint64_t *args, unsigned nargs);

/* Publish the finished call with its argument values. */
static inline void opp_leave(struct opp_frame *f, const uint64_t *args, unsigned nargs)
{
    uint64_t t = opp_now();
    struct opp_ring_hdr *r = f->r;
    OPP_BARRIER();
    r->depth = f->depth;
    OPP_BARRIER();
    if (OPP_UNLIKELY(f->stack))
        opp_publish_stack(r, f, t, args, nargs);
    else
        opp_publish(r, f->fn, f->depth, f->begin, t, args, nargs);
}

/* Record, on this thread, an event whose begin was taken earlier (or
 * elsewhere: an NVTX start/end range ended by another thread) and that
 * ends at end: at the thread's current depth, which it leaves untouched,
 * so calls in flight stay as they are. 1 when recorded. */
/* Whether a call starting now would be recorded: inside every capture
 * window, and this thread's ring not paused (`opprof ctl stop`). For events
 * recorded through opp_record_at, which does not ask. */
static inline int opp_capture_open(void)
{
    const struct opp_ring_hdr *r = opp_tls.ring;
    return __atomic_load_n(&opp_capturing, __ATOMIC_RELAXED) &&
           !(r && atomic_load_explicit(&r->paused, memory_order_relaxed));
}

static inline int opp_record_at(uint32_t fn, uint64_t begin, uint64_t end, const uint64_t *args,
                                unsigned nargs)
{
    if (OPP_UNLIKELY(opp_summary_windows))
        opp_window_sync();
    struct opp_ring_hdr *r = opp_tls.ring;
    if (OPP_UNLIKELY(!r)) {
        r = opp_thread_attach();
        if (!r)
            return 0;
    }
    opp_publish_f(r, fn, r->depth, begin, end, args, nargs, OPP_REC_RANGE);
    return 1;
}

/* CUPTI external correlation (cupti.c): while CUPTI records, a GPU library
 * call pushes an id (CUSTOM0) around its real call, so CUPTI maps the
 * runtime/driver calls inside it to that id; the id is recorded as the
 * event's last argument (OPP_OPK_EXTID). 0 when not pushed. */
extern int opp_extcorr_on;
uint64_t opp_extcorr_push(void);
void opp_extcorr_pop(void);
#define OPP_EXT_PUSH(fn) (opp_fn_extid(fn) && OPP_UNLIKELY(opp_extcorr_on) ? opp_extcorr_push() : 0)
#define OPP_EXT_POP(x)                                                                             \
    do {                                                                                           \
        if (OPP_UNLIKELY(x))                                                                       \
            opp_extcorr_pop();                                                                     \
    } while (0)

/* Argument capture helpers: negative or missing values record as 0. */
static inline uint64_t opp_dim(long v) { return v > 0 ? (uint64_t)v : 0; }
static inline uint64_t opp_pdim(const int *p) { return p && *p > 0 ? (uint64_t)*p : 0; }

/* ---- one generic wrapper body per return kind ---- */
#define OPP_UNPAREN(...) __VA_ARGS__

#define OPP_WRAP_VOID(name, params, args, nargs, capture)                                         \
    OPP_EXPORT void name params                                                                    \
    {                                                                                              \
        typedef void(*real_t) params;                                                              \
        real_t real = (real_t)opp_real(OPP_FN_##name);                                            \
        struct opp_frame f_;                                                                       \
        if (OPP_UNLIKELY(!real))                                                                   \
            return;                                                                                \
        if (!opp_enter(&f_, OPP_FN_##name)) {                                                      \
            real args;                                                                             \
            return;                                                                                \
        }                                                                                          \
        real args;                                                                                 \
        const uint64_t a_[] = {OPP_UNPAREN capture};                                               \
        opp_leave(&f_, a_, nargs);                                                                 \
    }

/* The body of every wrapper that returns a value: after, a parenthesized
 * statement list run once the real call returned (r_ holds its value),
 * records the call with opp_leave(&f_, ...). GPU library entry points
 * (a compile-time test on the id) push an external correlation id while
 * CUPTI records, x_, recorded last. */
#define OPP_EXT_N(name) ((unsigned)opp_fn_extid(OPP_FN_##name))
#define OPP_WRAP_RET_CORE(ret, name, params, args, after)                                          \
    OPP_EXPORT ret name params                                                                     \
    {                                                                                              \
        typedef ret(*real_t) params;                                                               \
        real_t real = (real_t)opp_real(OPP_FN_##name);                                            \
        struct opp_frame f_;                                                                       \
        if (OPP_UNLIKELY(!real))                                                                   \
            return (ret)0;                                                                         \
        if (!opp_enter(&f_, OPP_FN_##name))                                                        \
            return real args;                                                                      \
        const uint64_t x_ = OPP_EXT_PUSH(OPP_FN_##name);                                           \
        ret r_ = real args;                                                                        \
        OPP_EXT_POP(x_);                                                                           \
        OPP_UNPAREN after;                                                                         \
        return r_;                                                                                 \
    }

/* capture: the argument values, evaluated after the call (may use r_). */
#define OPP_WRAP_RET(ret, name, params, args, nargs, capture)                                      \
    OPP_WRAP_RET_CORE(ret, name, params, args,                                                     \
                      (const uint64_t a_[] = {OPP_UNPAREN capture, x_};                            \
                       opp_leave(&f_, a_, nargs + OPP_EXT_N(name))))

/* The same with one statement (prep) between the call and the capture. */
#define OPP_WRAP_RET_PREP(ret, name, params, args, nargs, prep, capture)                           \
    OPP_WRAP_RET_CORE(ret, name, params, args,                                                     \
                      (OPP_UNPAREN prep; const uint64_t a_[] = {OPP_UNPAREN capture, x_};          \
                       opp_leave(&f_, a_, nargs + OPP_EXT_N(name))))

/* The same with a capture whose length is known only at run time: fill, an
 * expression evaluated after the call (r_ is the returned value), writes
 * up to OPP_MAX_ARGS - 1 values into a_ and yields how many. */
#define OPP_WRAP_RET_FILL(ret, name, params, args, fill)                                           \
    OPP_WRAP_RET_CORE(ret, name, params, args,                                                     \
                      (uint64_t a_[OPP_MAX_ARGS]; unsigned n_ = (fill);                            \
                       if (OPP_EXT_N(name)) a_[n_ < OPP_MAX_ARGS ? n_++ : n_ - 1] = x_;            \
                       opp_leave(&f_, a_, n_)))

#endif
