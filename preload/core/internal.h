/* The agent's core as its features see it (preload/libs, cuda, nvtx,
 * stacks): the hot path (entering and leaving an intercepted call and
 * publishing it into this thread's ring), the real functions, capture
 * windows and steps, string ids, messages to the collector and to a person,
 * the hooks a feature fills, and the wrapper bodies the library tables
 * expand to. A feature includes this header and nothing of another
 * feature's; the core includes nothing of theirs and reaches them only
 * through the feature table (preload/features.c) and the hooks below.
 *
 * Per call: two clock reads and stores into this thread's shared ring; no
 * lock, no allocation, no syscall, no stdio. Everything slow (attaching a
 * thread, resolving a function) is out of line. */
#ifndef OPP_CORE_INTERNAL_H
#define OPP_CORE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "format.h"
#include "ops.h"
#include "ring.h"
#include "util.h"

/* Every entry point of every library table, one id each. */
#include "tables/funcs.h"

#define OPP_EXPORT __attribute__((visibility("default")))
/* The hot path's helpers: inlined into every wrapper whatever the
 * compiler's size heuristics say (a call per entry and exit costs more
 * than the work they do). */
#define OPP_HOT static inline __attribute__((always_inline))
#define OPP_BARRIER() __asm__ __volatile__("" ::: "memory")

/* ---- features ---- */

/* What a feature does at the agent's start, in the child of fork() and at
 * exit; a NULL hook: nothing. The core walks the table in order (start and
 * fork) and in reverse (exit). */
struct opp_feature {
    const char *name;
    void (*start)(const char *self_path); /* once the collector took us; our path */
    void (*forked)(void);                 /* after the core's own reset in the child */
    void (*stop)(void);                   /* at exit, before the goodbye */
};
extern const struct opp_feature *const opp_features[]; /* NULL-terminated */

/* ---- messages ---- */

/* One line on stderr: "opprof: " a b c (NULLs skipped). */
void opp_agent_say(const char *a, const char *b, const char *c);
/* Whether this process is profiled (the agent started and is connected),
 * and whether it is to be (preloaded, OPPROF_DISABLE not 1; known before
 * the agent starts): the injection entry points (CUDA's, NVTX's) do
 * nothing in a process not to be profiled. */
int opp_agent_on(void);
int opp_agent_wanted(void);
/* A message to the collector from a thread other than the program's
 * calls (CUPTI's, a timer's): 0 or -errno. */
int opp_agent_send(unsigned type, const void *payload, unsigned size);
/* The first messages on a new connection (hello.c): HELLO, INFO and the
 * function table, built in msg (OPP_MSG_MAX bytes). 0 or -errno. */
int opp_hello(int sock, uint8_t *msg, int clock);

/* ---- threads, clock, real functions ---- */

/* NEW: not attached yet; ON: recording; OFF: never (and our reentrancy guard). */
enum opp_thread_state { OPP_T_NEW = 0, OPP_T_ON = 1, OPP_T_OFF = 2 };

struct opp_tls {
    struct opp_ring_hdr *ring; /* NULL: not attached, attaching, or off */
    uint8_t state;             /* enum opp_thread_state */
    uint8_t publishing;        /* inside opp_publish_f: a signal handler's call then
                                  is counted as dropped, not written over */
};
extern __thread struct opp_tls opp_tls;

extern int opp_use_tsc;                         /* clock: TSC (1) or CLOCK_MONOTONIC */
extern void *_Atomic opp_real_fn[OPP_FN_COUNT]; /* resolved real functions */

struct opp_frame {
    struct opp_ring_hdr *r;
    uint64_t begin;
    uint32_t fn, depth;
    uint32_t stack; /* code stack id, 0 when none */
};

struct opp_ring_hdr *opp_thread_attach(void);
/* The ring's thread name, as the report shows it (at most 15 bytes, cut at
 * a UTF-8 character boundary). */
void opp_thread_rename(struct opp_ring_hdr *r, const char *name, size_t n);
void *opp_resolve(uint32_t fn);
/* A call of fn, whose real function no loaded library defines, never ran:
 * what it returns instead (returns: 1 when it returns a value, 0 when
 * nothing), its library's "not initialised" status (tables/funcs.h: missing
 * in OPP_LIBS, OPP_CUDA_MISSING) or 0; said once per entry point on stderr.
 * errno kept. */
long opp_missing(uint32_t fn, int returns);
int opp_is_self(const void *p); /* p lies in libopprof.so itself */
/* The loaded object's mapping that holds p: 0, or -1 when none does. */
int opp_object_range(const void *p, uintptr_t *lo, uintptr_t *hi);
/* Learn our own mapping (before anything is resolved). */
void opp_resolve_init(void);

OPP_HOT uint64_t opp_now(void)
{
    return OPP_LIKELY(opp_use_tsc) ? __rdtsc() : opp_mono_ns();
}

/* The real function behind entry point fn, or NULL when no loaded library
 * defines it (opp_missing then says what the call does instead). */
OPP_HOT void *opp_real(uint32_t fn)
{
    void *p = atomic_load_explicit(&opp_real_fn[fn], memory_order_relaxed);
    return OPP_LIKELY(p != NULL) ? p : opp_resolve(fn);
}

/* ---- hooks a feature fills at its start ---- */

/* Code stacks (preload/stacks): frames captured per recorded call (0: off)
 * and the capture, which returns the stack's id (0: none). */
extern int opp_stacks_n;
extern uint32_t (*opp_stack_capture)(void);
/* Frames a feature adds above the native ones (preload/torch: the Python
 * frames, OPP_STACK_PY words), at most max into out; how many. The
 * mapping of a feature's own code (the torch shim), whose frames are
 * skipped like ours. And the code that calls into the feature (torch's
 * at::RecordFunction::runStartCallbacks): when its frame is among the
 * innermost ones, it, every frame inside it and the one that called it
 * are left out, so the stack begins where the op was called. */
extern int (*opp_stack_extra)(uint64_t *out, int max);
extern uintptr_t opp_stack_skip_lo, opp_stack_skip_hi;
extern uintptr_t opp_stack_entry_lo, opp_stack_entry_hi;

/* CUPTI external correlation (preload/cuda): while on, a GPU library call
 * pushes an id around its real call, so CUPTI maps the runtime and driver
 * calls inside it to that id; the id is recorded as the call's last
 * argument (OPP_OPK_EXTID), 0 when not pushed. */
extern _Atomic int opp_extcorr_on; /* set by CUPTI's start on any thread */
extern uint64_t (*opp_extcorr_push)(void);
extern void (*opp_extcorr_pop)(void);

/* A detached thread of ours with every signal blocked (the program's
 * handlers never run on it). 0 or an errno. (capture.c) */
int opp_spawn(void *(*fn)(void *));

/* ---- capture windows (capture.c) ----
 * OPPROF_DELAY / OPPROF_DURATION (a timer), OPPROF_CAPTURE=cudaProfilerApi
 * (cudaProfilerStart/Stop, like nsys -c cudaProfilerApi) and
 * OPPROF_SCHEDULE with OPPROF_STEP (torch's profiler schedule over steps
 * the program marks). Outside a window opp_enter records nothing: one load
 * and one predictable branch per call. */

/* 1 while calls are recorded: every window open. */
extern int opp_capturing;
/* Non-zero while opp_enter must take its slow path (opp_enter_gated): a
 * step marker is set, a window is closed, or code stacks are on. */
extern int opp_enter_gate;
/* OPPROF_MODE=summary with a schedule: the collector adds calls up per
 * window, so each thread marks in its ring when the window it records in
 * changed (a record with OPP_REC_WINDOW) before its next call's record. */
extern int opp_summary_windows;
void opp_window_sync(void);
/* Recompute opp_capturing and opp_enter_gate (after a setting changed). */
void opp_capture_update(void);
int opp_enter_gated(struct opp_frame *f, uint32_t fn);
/* 1 when OPPROF_CAPTURE=cudaProfilerApi: the CUDA paths call
 * opp_capture_cuda with each call's function id before opp_enter. */
extern int opp_capture_api;
/* From the constructor, before any call is recorded: read the settings
 * (a bad value: one line on stderr, ignored) and start the timer. */
void opp_capture_init(void);
/* In a fork child (the fork handler: async-signal-safe resets only). */
void opp_capture_forked(void);
/* Set in a fork child whose windows or steps need a timer thread, which
 * did not come along: its first intercepted call (even in a closed
 * window) or its first record starts them again, for what is left of the
 * window (opp_capture_child_start). */
extern int opp_capture_due;
void opp_capture_child_start(void);
/* cudaProfilerStart / cuProfilerStart open the API window, the Stops close
 * it (the Stop itself is not recorded). */
void opp_capture_cuda(uint32_t fn);
/* Step markers (OPPROF_STEP): call:NAME makes opp_enter call opp_step_mark
 * when NAME is entered; nvtx:NAME makes the NVTX callbacks call it when a
 * range with that message starts (its string id). UINT32_MAX / 0: none.
 * torch / torch:forward set opp_step_torch: preload/torch calls it at the
 * end of each optimizer step / each outermost nn.Module forward. */
extern uint32_t opp_step_fn, opp_step_msg;
/* What marks a step under OPPROF_STEP=torch (an optimizer step) and
 * torch:forward (an outermost nn.Module forward); NONE: neither. */
enum { OPP_STEP_TORCH_NONE = 0, OPP_STEP_TORCH_OPTIMIZER = 1, OPP_STEP_TORCH_FORWARD = 2 };
extern _Atomic int opp_step_torch; /* cleared by opp_schedule_off on any thread */
/* Called (when set) each time opp_capturing changed: preload/torch turns
 * torch's callbacks off while nothing records. */
extern void (*opp_capture_changed)(void);
/* A marker: the running step ends (recorded as ProfilerStep#N when it was
 * an active step) and the next begins. */
void opp_step_mark(void);
/* The range that began the running step (OPPROF_STEP=nvtx:NAME) ended at
 * t: were it the last step, it would end there, not at the process's exit. */
void opp_step_range_end(uint64_t t);
/* At exit: the running step, when active, is recorded as ProfilerStep#N
 * (ending where its range ended, when it did). */
void opp_step_finish(void);
/* The steps cannot be marked after all (OPPROF_STEP=torch without torch's
 * operators): one line, why, and the schedule is dropped, recording
 * throughout. */
void opp_schedule_off(const char *why);

/* ---- the hot path ---- */

/* The common part of entering a call: the thread's ring, its pause word,
 * then the clock. stack: capture a code stack first (OPPROF_STACKS). */
OPP_HOT int opp_enter_ring(struct opp_frame *f, uint32_t fn, int stack)
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
 * outside a capture window, or when this thread cannot record. One load
 * decides the common case: opp_enter_gate is set while anything else must
 * be looked at (a step marker, a closed window, code stacks). */
OPP_HOT int opp_enter(struct opp_frame *f, uint32_t fn)
{
    if (OPP_UNLIKELY(__atomic_load_n(&opp_enter_gate, __ATOMIC_RELAXED))) {
        /* a closed window and no step marker: answered here, no call */
        if (fn != opp_step_fn && !__atomic_load_n(&opp_capturing, __ATOMIC_RELAXED) &&
            !__atomic_load_n(&opp_capture_due, __ATOMIC_RELAXED))
            return 0;
        return opp_enter_gated(f, fn);
    }
    return opp_enter_ring(f, fn, 0);
}

/* Count one record of this thread as dropped: one instruction, so a
 * signal handler's count and the thread's never overwrite each other. */
static inline void opp_ring_drop(struct opp_ring_hdr *r)
{
    atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
}

/* A quarter of the ring into a lap (ring.h): when the collector has read
 * that quarter, an OPP_REC_REWIND record at h and the ring goes on at the
 * next lap's start; the head to write at. Out of line: once every
 * OPP_RING_REWIND_EVERY slots. */
uint64_t opp_ring_rewind(struct opp_ring_hdr *r, uint64_t h);

/* OPPROF_DROP=block: wait (bounded) for the collector to make room for
 * need slots; 1 when there is room. */
extern int opp_drop_block;
int opp_ring_wait(struct opp_ring_hdr *r, uint64_t h, unsigned need);

/* Append one finished event to ring r (this thread's): no wait, a full
 * ring drops and counts it (unless OPPROF_DROP=block). nargs is a constant
 * at every call site, so the slot arithmetic folds away. A call made by a
 * signal handler that interrupted this very function on this thread would
 * claim the same slot: it is counted as dropped instead. */
OPP_HOT void opp_publish_f(struct opp_ring_hdr *r, uint32_t fn, uint32_t depth,
                                 uint64_t begin, uint64_t end, const uint64_t *args,
                                 unsigned nargs, uint8_t flags)
{
    if (OPP_UNLIKELY(opp_tls.publishing)) {
        opp_ring_drop(r);
        return;
    }
    opp_tls.publishing = 1;
    OPP_BARRIER();
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    unsigned need = opp_rec_slots(nargs);
    if (OPP_UNLIKELY(((h + need) & (OPP_RING_REWIND_EVERY - 1)) < need) &&
        (h & (r->capacity - 1)) >= opp_ring_hot(r->capacity))
        h = opp_ring_rewind(r, h);
    if (OPP_UNLIKELY(h + need - r->cached_tail > r->capacity)) {
        r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (h + need - r->cached_tail > r->capacity &&
            !(opp_drop_block && opp_ring_wait(r, h, need))) {
            opp_ring_drop(r); /* full: drop and count, never wait */
            OPP_BARRIER();
            opp_tls.publishing = 0;
            return;
        }
    }
    struct opp_rec *s = opp_ring_slot(r, r->capacity, h);
    s->begin = begin;
    s->end = end;
    s->fn = fn;
    s->depth = (uint16_t)depth;
    s->nargs = (uint8_t)nargs;
    s->flags = flags;
    s->arg0 = nargs ? args[0] : 0;
    for (unsigned i = 1; i < need; i++) {
        struct opp_rec_ext *e = (struct opp_rec_ext *)opp_ring_slot(r, r->capacity, h + i);
        for (unsigned k = 0; k < 4; k++) {
            unsigned a = 1 + (i - 1) * 4 + k;
            e->arg[k] = a < nargs ? args[a] : 0;
        }
    }
    atomic_store_explicit(&r->head, h + need, memory_order_release);
    OPP_BARRIER();
    opp_tls.publishing = 0;
}

OPP_HOT void opp_publish(struct opp_ring_hdr *r, uint32_t fn, uint32_t depth, uint64_t begin,
                               uint64_t end, const uint64_t *args, unsigned nargs)
{
    opp_publish_f(r, fn, depth, begin, end, args, nargs, 0);
}

/* The same with the frame's code stack id appended (OPP_REC_STACK); a
 * call with all OPP_MAX_ARGS values goes without its stack. */
void opp_publish_stack(struct opp_ring_hdr *r, const struct opp_frame *f, uint64_t end,
                       const uint64_t *args, unsigned nargs);

/* Publish the finished call with its argument values. */
OPP_HOT void opp_leave(struct opp_frame *f, const uint64_t *args, unsigned nargs)
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

/* Whether a call starting now would be recorded: inside every capture
 * window, and this thread's ring not paused (`opprof ctl stop`). For events
 * recorded through opp_record_at, which does not ask. */
static inline int opp_capture_open(void)
{
    const struct opp_ring_hdr *r = opp_tls.ring;
    return __atomic_load_n(&opp_capturing, __ATOMIC_RELAXED) &&
           !(r && atomic_load_explicit(&r->paused, memory_order_relaxed));
}

/* Record, on this thread, an event whose begin was taken earlier (or
 * elsewhere: an NVTX start/end range ended by another thread) and that
 * ends at end: at the thread's current depth, which it leaves untouched,
 * so calls in flight stay as they are. 1 when recorded. */
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

/* ---- string ids (strtab.c) ----
 * NVTX messages, domains, step names, module paths: the same bytes always
 * get the same id, from OPP_STR_PRELOAD up, and the collector has the
 * STRING record (an OPP_MSG_GPU message) before the id is used in any
 * event. Lookups of known strings take no lock. */

/* The id of s[0..n), 0 for NULL or when the table is full (said once). */
uint32_t opp_str_id(const char *s, size_t n);
/* Around fork() (the core's atfork handlers): the table's lock is held
 * across it; the child is a process of its own, whose ids start over. */
void opp_str_atfork_prepare(void);
void opp_str_atfork_parent(void);
void opp_str_forked(void);

/* ---- interning (intern.c) ----
 * Per-process interning of things the collector must hear of once
 * (strings, code stacks): an open-addressing table of 64-bit hashes read
 * without locks; a new entry gets the next id under a mutex, is sent, and
 * only then published, so no event can name an id the collector lacks.
 * The hash stands for the thing (a 64-bit collision would merge two). */

struct opp_intern_slot {
    _Atomic uint64_t hash; /* 0: free */
    _Atomic uint32_t id;
};

struct opp_intern {
    struct opp_intern_slot *tab; /* cap slots, a power of two */
    uint32_t cap, limit;         /* entries kept: at most limit (3/4 of cap) */
    uint32_t first_id, next_id, count;
    int full_said;
    const char *full_msg; /* said once when full */
    pthread_mutex_t lock;
};

#define OPP_INTERN_INIT(slots, ncap, first, msg)                                                   \
    {.tab = (slots), .cap = (ncap), .limit = (ncap) / 4 * 3, .first_id = (first),                  \
     .next_id = (first), .full_msg = (msg), .lock = PTHREAD_MUTEX_INITIALIZER}

/* The id of the entry with hash h, 0 when it has none yet (no lock). */
uint32_t opp_intern_find(struct opp_intern *t, uint64_t h);
/* The id of the entry with hash h; a new one is first passed to send(id,
 * ctx) under the table's lock. 0 when the table is full (said once). */
uint32_t opp_intern_id(struct opp_intern *t, uint64_t h, void (*send)(uint32_t id, void *ctx),
                       void *ctx);
/* In a fork child: empty, ids from the first again, the lock re-made. */
void opp_intern_reset(struct opp_intern *t);

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
        real_t real = (real_t)opp_real(OPP_FN_##name);                                             \
        struct opp_frame f_;                                                                       \
        if (OPP_UNLIKELY(!real)) {                                                                 \
            opp_missing(OPP_FN_##name, 0);                                                         \
            return;                                                                                \
        }                                                                                          \
        if (!opp_enter(&f_, OPP_FN_##name)) {                                                      \
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
        real_t real = (real_t)opp_real(OPP_FN_##name);                                             \
        struct opp_frame f_;                                                                       \
        if (OPP_UNLIKELY(!real))                                                                   \
            return (ret)opp_missing(OPP_FN_##name, 1);                                             \
        if (!opp_enter(&f_, OPP_FN_##name))                                                        \
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
