/* The core's sixth layer: threads and the entry of a call. A thread's
 * ring is made and handed to the collector at its first record; entering
 * a call notes it in the ring and reads the clock, leaving publishes it
 * (the hot path's first half, with the hooks a feature fills that it
 * calls). Below: intern.h. */
#ifndef OPP_CORE_THREAD_H
#define OPP_CORE_THREAD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/intern.h"

/* From the constructor, with the settings: ring slots (OPPROF_BUFFER, a
 * power of two in the ring's bounds, made smaller here to fit under the
 * file size limit) and whether new rings start paused (OPPROF_PAUSED=1).
 * 0, or -1 when profiling cannot go on (said). */
int opp_thread_init(uint32_t slots, int paused);
/* This thread's ring, made and sent to the collector now; NULL when this
 * thread does not record (off, attaching already, on a signal's alternate
 * stack, or profiling off). A
 * thread holding its parent's ring (a fork that ran no atfork handler:
 * the ring's gate is shut) forgets it first (opp_fork_thread). */
struct opp_ring_hdr *opp_thread_attach(void);
/* This thread's ring, attached when it has none or only its parent's. */
OPP_HOT struct opp_ring_hdr *opp_thread_ring(void)
{
    struct opp_ring_hdr *r = opp_tls.ring;
    return OPP_LIKELY(r && opp_ring_gate(r)) ? r : opp_thread_attach();
}
/* Before a feature uses what it keeps for this thread across calls (its
 * open ranges, its string ids): a thread holding its parent's ring
 * forgets it, and the features what they kept, now. */
OPP_HOT void opp_thread_check(void)
{
    const struct opp_ring_hdr *r = opp_tls.ring;
    if (OPP_UNLIKELY(r && !opp_ring_gate(r)))
        opp_fork_thread();
}
/* The ring's thread name, as the report shows it (at most 15 bytes, cut at
 * a UTF-8 character boundary). */
void opp_thread_rename(struct opp_ring_hdr *r, const char *name, size_t n);
/* The program jumps (longjmp) to a point whose stack pointer is sp, on
 * this thread, from cur (the jump's frame): the calls in flight whose
 * frames lie below it are left, recorded ending now, unless the jump
 * starts between them and it (a handler's, on an alternate stack lying
 * above them: publish.h's opp_jump_leaves). */
void opp_thread_jumping(uintptr_t sp, uintptr_t cur);
/* The real longjmp and its aliases looked up, from the agent's start: we
 * pass them on (jump.c), settling a publish they leave on the way
 * (opp_publish_left) and telling opp_thread_jumping where the jump goes. */
void opp_jump_init(void);
/* At the process's exit, on the exiting thread: the calls it is still in
 * (exit() from a callback inside one, or left by a longjmp that no call
 * came after) recorded as ending now. */
void opp_thread_exiting(void);
/* In a fork child: the parent's ring forgotten by the thread that holds
 * it (async-signal-safe). */
void opp_thread_forked(void);

/* ---- hooks a feature fills at its start (hooks.c) ---- */

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

/* ---- entering and leaving a call ---- */

/* The calls in flight at d and above it were left without returning
 * (a longjmp out of them, an exception through them), as a call entered
 * at sp, at or above the innermost one's frame, says: each recorded
 * ending now, the depth it leaves returned (thread.c). A handler's call
 * on a signal's alternate stack, anywhere in memory, pops nothing. */
uint32_t opp_thread_left(struct opp_ring_hdr *r, uint32_t d, uint32_t sp);
/* Whether the innermost call in flight of the d (not 0) was left: its
 * frame known, and sp (a frame address's low 32 bits: the difference
 * of two frames on one stack fits) not below it. */
OPP_HOT int opp_call_left(const struct opp_ring_hdr *r, uint32_t d, uint32_t sp)
{
    return d <= OPP_OPEN_MAX && r->open[d - 1].sp && (int32_t)(sp - r->open[d - 1].sp) >= 0;
}

/* The common part of entering a call: the thread's ring and its gate,
 * its pause word, then the clock. stack: capture a code stack first
 * (OPPROF_STACKS). sp: the low 32 bits of the wrapper's frame address,
 * by which a call the thread left without returning is known; 0 for a
 * feature's range, whose frame is not on the stack. */
OPP_HOT int opp_enter_ring(struct opp_frame *f, uint32_t fn, int stack, uint32_t sp)
{
    struct opp_ring_hdr *r = opp_thread_ring();
    if (OPP_UNLIKELY(!r))
        return 0;
    if (OPP_UNLIKELY(atomic_load_explicit(&r->paused, memory_order_relaxed)))
        return 0; /* `opprof ctl stop`: the collector paused this thread's ring */
    /* the stack before the clock: its cost is not the call's */
    uint32_t st = stack ? opp_stack_capture() : 0;
    uint32_t d = r->depth;
    if (OPP_UNLIKELY(d) && sp && OPP_UNLIKELY(opp_call_left(r, d, sp)))
        d = opp_thread_left(r, d, sp);
    uint64_t t = opp_now();
    if (OPP_LIKELY(d < OPP_OPEN_MAX)) {
        /* What the collector reports if the process dies inside this call. */
        r->open[d].begin = t;
        r->open[d].fn = fn;
        r->open[d].sp = sp;
        r->open[d].arg[0] = 0;
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

/* Publish the call, finished at t, with its argument values; the thread
 * leaves it once its record is in. */
OPP_HOT void opp_leave_at(struct opp_frame *f, uint64_t t, const uint64_t *args, unsigned nargs)
{
    struct opp_ring_hdr *r = f->r;
    OPP_BARRIER();
    if (OPP_UNLIKELY(f->stack))
        opp_publish_stack(r, f, t, args, nargs, OPP_PUB_LEAVE);
    else
        opp_publish_f(r, f->fn, f->depth, f->begin, t, args, nargs, 0, OPP_PUB_LEAVE);
}

/* Publish the finished call with its argument values. */
OPP_HOT void opp_leave(struct opp_frame *f, const uint64_t *args, unsigned nargs)
{
    opp_leave_at(f, opp_now(), args, nargs);
}

#endif
