/* A schedule over steps, OPPROF_SCHEDULE with OPPROF_STEP: their one
 * reader, for the agent that records by them and for `opprof run`, which
 * refuses what the agent would ignore before its command starts. */
#ifndef OPP_SCHEDULE_H
#define OPP_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

/* What OPPROF_STEP may say, as the messages list it. */
#define OPP_STEP_MARKERS "torch, torch:forward, nvtx:NAME, call:NAME or time:500ms"

/* What marks a step: the end of each optimizer step of a PyTorch program
 * (torch), of each outermost nn.Module forward (torch:forward), the
 * beginning of each NAME range (nvtx:NAME) or each call of NAME
 * (call:NAME), a period (time:N). */
enum opp_step_marker {
    OPP_MARK_TORCH,
    OPP_MARK_TORCH_FORWARD,
    OPP_MARK_NVTX,
    OPP_MARK_CALL,
    OPP_MARK_TIME
};

/* torch.profiler.schedule's numbers and the steps they count. */
struct opp_schedule {
    long skip_first, wait, warmup, active, repeat;
    enum opp_step_marker marker;
    const char *name;   /* nvtx:NAME, call:NAME: NAME, in the step's text */
    uint64_t period_ns; /* time:N */
};

/* What opp_schedule_parse found. */
enum opp_schedule_read {
    OPP_SCHEDULE_NONE = 0,     /* no schedule (sched unset or empty): step is not read */
    OPP_SCHEDULE_OK = 1,       /* *s holds it */
    OPP_SCHEDULE_BAD = -1,     /* the schedule's text is wrong: why says how */
    OPP_SCHEDULE_NO_STEP = -2, /* a schedule, but no step (unset or empty): why says so */
    OPP_SCHEDULE_BAD_STEP = -3 /* the step's text is wrong: why says how */
};

/* sched ("skip_first=10,wait=1,warmup=1,active=3,repeat=2": torch's keys,
 * whole numbers from 0, active at least 1) and step (OPP_STEP_MARKERS;
 * time:N from 1ms to 10000s in us, ms or s) read into *s. On a wrong one,
 * why (cap bytes) says what is wrong in words that follow the variable's
 * name or the option's: for the schedule "wants key=value pairs", for the
 * step "must be torch, ..., not epoch". Whether call:NAME names a function
 * that is intercepted, and nvtx:NAME a build with NVTX, is the agent's to
 * say. */
enum opp_schedule_read opp_schedule_parse(const char *sched, const char *step,
                                          struct opp_schedule *s, char *why, size_t cap);

#endif
