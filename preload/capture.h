/* Capture windows inside one process: OPPROF_DELAY / OPPROF_DURATION (a
 * timer) and OPPROF_CAPTURE=cudaProfilerApi (cudaProfilerStart/Stop, like
 * nsys -c cudaProfilerApi). Outside a window opp_enter records nothing:
 * one load and one predictable branch per call. */
#ifndef OPP_CAPTURE_H
#define OPP_CAPTURE_H

#include <stdint.h>

/* 1 while calls are recorded: every window open. Read by opp_enter. */
extern int opp_capturing;
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

#endif
