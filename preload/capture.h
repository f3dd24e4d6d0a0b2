/* Capture windows inside one process: OPPROF_DELAY / OPPROF_DURATION (a
 * timer), OPPROF_CAPTURE=cudaProfilerApi (cudaProfilerStart/Stop, like
 * nsys -c cudaProfilerApi) and OPPROF_SCHEDULE with OPPROF_STEP (torch's
 * profiler schedule over steps the program marks). Outside a window
 * opp_enter records nothing: one load and one predictable branch per call. */
#ifndef OPP_CAPTURE_H
#define OPP_CAPTURE_H

#include <stdint.h>

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
struct opp_frame;
int opp_enter_gated(struct opp_frame *f, uint32_t fn);
/* 1 when OPPROF_CAPTURE=cudaProfilerApi: the CUDA paths call
 * opp_capture_cuda with each call's function id before opp_enter. */
extern int opp_capture_api;

/* From the constructor, before any call is recorded: read the settings
 * (a bad value: one line on stderr, ignored) and start the timer. */
void opp_capture_init(void);
/* In a fork child: the timer thread did not come along; start it again
 * for what is left of the window. */
void opp_capture_forked(void);
/* cudaProfilerStart / cuProfilerStart open the API window, the Stops close
 * it (the Stop itself is not recorded). */
void opp_capture_cuda(uint32_t fn);

/* Step markers (OPPROF_STEP): call:NAME makes opp_enter call opp_step_mark
 * when NAME is entered; nvtx:NAME makes the NVTX callbacks call it when a
 * range with that message starts (its string id). UINT32_MAX / 0: none. */
extern uint32_t opp_step_fn, opp_step_msg;
/* A marker: the running step ends (recorded as ProfilerStep#N when it was
 * an active step) and the next begins. */
void opp_step_mark(void);
/* At exit: the running step, when active, is recorded as ProfilerStep#N. */
void opp_step_finish(void);

#endif
