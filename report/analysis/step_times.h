/* Steps and latency (`opprof report --step NAME`, shown by views/steps.h): a
 * recurring operator as the step boundary, per-step wall, CPU and GPU time
 * and their distribution. Answers "what is my inference time" with no code
 * change. And the windows a schedule recorded (--window). */
#ifndef OPP_STEP_TIMES_H
#define OPP_STEP_TIMES_H

#include "analysis/aggregate.h"
#include "analysis/model.h"

struct opp_step {
    uint64_t begin_ns, end_ns; /* wall = end - begin */
    uint64_t cpu_ns;           /* time inside intercepted calls within the step */
    uint64_t gpu_ns;           /* device time of the GPU work they caused */
    uint32_t thread;           /* index in model->threads */
};

/* Where a step name's calls are: some call of the trace (any thread) has
 * it (named), some call of the processes and threads the filters select
 * (held); proc: the first process that has one (model->procs). */
struct opp_step_name {
    int named, held;
    uint32_t proc;
};

struct opp_steps {
    int ranges;             /* the steps are the named operator's own calls (NVTX
                               ranges); else the intervals between its calls */
    struct opp_step *steps; /* by thread, then time */
    size_t n;
    struct opp_step_name found; /* of the name looked for (all 0 without one) */
    uint32_t name; /* the first step's call's name (string id); with ranges every step's
                      but ProfilerStep#N's */
};

/* Which of a program's own steps (step_stream.h) they are, and how it
 * says so in what (name: the first optimizer step's or module's). */
enum opp_default_steps {
    OPP_STEPS_PROFILER,  /* ProfilerStep#N */
    OPP_STEPS_TRAINING,  /* to each optimizer step's end */
    OPP_STEPS_INFERENCE, /* the outermost nn.Module forwards */
    OPP_STEPS_NONE,
};
void opp_steps_default_what(enum opp_default_steps which, const char *name, char *what,
                            size_t cap_what);
void opp_steps_free(struct opp_steps *s);
/* Steps without --pid, --tid or --rank, on one trace (ntraces 1) of
 * several processes none of which is a rank: the main process's (the
 * first, the one `opprof run` started), not its workers' too. 1 with o's
 * pid filter set to it, else 0 and o as it was. */
int opp_steps_main_process(const struct opp_model *m, struct opp_agg_opts *o, size_t ntraces);
/* With --step name: 0 when the calls selected (o; in_main: the filter is
 * opp_steps_main_process's) hold it, else 1 and why in msg (the trace
 * has no such call, or only other processes' calls). */
int opp_step_name_missing(const struct opp_model *m, const struct opp_step_name *f,
                          const struct opp_agg_opts *o, int in_main, const char *name,
                          const char *trace, char *msg, size_t cap);

struct opp_dist {
    uint64_t count, mean, p50, p90, p99, max; /* ns; nearest-rank percentiles */
};
/* The distribution of v[0..n) (v is sorted in place). */
void opp_dist_of(uint64_t *v, size_t n, struct opp_dist *d);

/* The windows a schedule recorded (OPPROF_SCHEDULE): runs of consecutive
 * ProfilerStep#N numbers, in step order, each from the first step's begin
 * to the last step's end (over every process). */
struct opp_window {
    uint64_t first_step, last_step;
    uint64_t begin_ns, end_ns;
};
/* A ProfilerStep#N call (N, its begin and end), as a read finds them
 * (table_stream.c). */
struct opp_pstep {
    uint64_t n, begin, end;
};
/* 1 and *num when name is ProfilerStep#N, else 0. */
int opp_profiler_step_number(const char *name, uint64_t *num);
/* The windows of steps ps[0..np) (reordered). 0 (n may be 0) or
 * -ENOMEM; *out malloc'd. */
int opp_profiler_windows_of(struct opp_pstep *ps, size_t np, struct opp_window **out, size_t *n);

/* A summary trace numbers its windows (opp_sum_stat.window): how many it
 * recorded. */
uint32_t opp_summary_windows(const struct opp_model *m);

#endif
