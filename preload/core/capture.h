/* The core's seventh layer: capture windows and steps (capture.c), and
 * the hot path's entry as the wrappers call it, which asks them first.
 * Below: thread.h. */
#ifndef OPP_CORE_CAPTURE_H
#define OPP_CORE_CAPTURE_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/thread.h"

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
/* A collector in summary mode (opp_conn_summary; OPPROF_MODE=summary here
 * till it said) with a schedule: the collector adds calls up per window,
 * so each thread marks in its ring when the window it records in changed
 * (a record with OPP_REC_WINDOW) before its next call's record. Set at a
 * step (atomic). */
extern int opp_summary_windows;
void opp_window_sync(void);
/* Recompute opp_capturing and opp_enter_gate (after a setting changed). */
void opp_capture_update(void);
int opp_enter_gated(struct opp_frame *f, uint32_t fn, uint32_t sp);
/* 1 when OPPROF_CAPTURE=cudaProfilerApi: the CUDA paths call
 * opp_capture_cuda with each call's function id before opp_enter. */
extern int opp_capture_api;
/* From the constructor, before any call is recorded: read the settings
 * (a bad value: one line on stderr, ignored), start the timer, and have
 * a fork child's first connection call opp_capture_child_start. */
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

/* 1 when this call is recorded (then opp_leave must follow), 0 when not:
 * outside a capture window, or when this thread cannot record. One load
 * decides the common case: opp_enter_gate is set while anything else must
 * be looked at (a step marker, a closed window, code stacks). */
OPP_HOT int opp_enter_at(struct opp_frame *f, uint32_t fn, uint32_t sp)
{
    if (OPP_UNLIKELY(__atomic_load_n(&opp_enter_gate, __ATOMIC_RELAXED))) {
        /* a closed window and no step marker: answered here, no call */
        if (fn != opp_step_fn && !__atomic_load_n(&opp_capturing, __ATOMIC_RELAXED) &&
            !__atomic_load_n(&opp_capture_due, __ATOMIC_RELAXED))
            return 0;
        return opp_enter_gated(f, fn, sp);
    }
    return opp_enter_ring(f, fn, 0, sp);
}
/* A feature's range (f kept anywhere, its leave anywhere). */
OPP_HOT int opp_enter(struct opp_frame *f, uint32_t fn)
{
    return opp_enter_at(f, fn, 0);
}
/* A wrapper's call (inlined into it): the call is left when the thread
 * leaves the wrapper's frame without returning (opp_thread_left). The
 * frame's address is the frame pointer, in a register already. */
OPP_HOT int opp_enter_frame(struct opp_frame *f, uint32_t fn)
{
    return opp_enter_at(f, fn, (uint32_t)(uintptr_t)__builtin_frame_address(0));
}

/* A feature's range just entered (f) is named by a0 and a1, the first two
 * columns of a record of it that the report names it by: the collector
 * gives them to it should the process die inside it. */
static inline void opp_enter_named(const struct opp_frame *f, uint64_t a0, uint64_t a1)
{
    if (f->depth < OPP_OPEN_MAX) {
        f->r->open[f->depth].arg[0] = a0;
        f->r->open[f->depth].arg[1] = a1;
    }
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
    if (OPP_UNLIKELY(__atomic_load_n(&opp_summary_windows, __ATOMIC_RELAXED)))
        opp_window_sync();
    struct opp_ring_hdr *r = opp_thread_ring();
    if (OPP_UNLIKELY(!r))
        return 0;
    opp_publish_f(r, fn, r->depth, begin, end, args, nargs, OPP_REC_RANGE, OPP_PUB_RECORD);
    return 1;
}

#endif
