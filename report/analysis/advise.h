/* `opprof advise` (shown by views/advise_view.h): findings about a trace,
 * each with what (the pattern), where (operator, step, rank, device,
 * stream, Python line), how much (share of the step, ms per step) and what
 * to try, ranked by the time at stake. Computed from the views' results
 * (steps, key_averages, GPU statistics, memory series, the rank table, the
 * model's counts of what it lost), never from the records themselves. The
 * rules and their thresholds are one table each (advise.c). */
#ifndef OPP_ADVISE_H
#define OPP_ADVISE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/advise_findings.h"
#include "analysis/aggregate.h"
#include "analysis/callpath_tree.h"
#include "analysis/gpu_stats.h"
#include "analysis/model.h"
#include "analysis/ranks.h"
#include "analysis/step_times.h"
#include "analysis/table_stream.h"

/* What advise looked at, for the header of its output. */
struct opp_advice {
    struct opp_findings fs;
    char steps_what[OPP_ADVICE_TEXT]; /* which steps ("training iterations ..."), or why none */
    size_t nsteps;                    /* 0: the run taken as one step */
    uint64_t p50_ns, p99_ns, wall_ns; /* of the steps; wall: their sum */
    uint32_t pid;                     /* the process looked at (0: every process) */
    int ranked;                       /* --rank: rank is the one looked at */
    int64_t rank;
    struct opp_step_name step_found; /* where the step name given is (step_times.h) */
    int counted; /* a summary trace: the steps counted, not timed (p50, p99: 0), and the
                    rules that need the calls' times (opp_advise_rule.timed) not run */
};

/* Whether rule r runs for the advice a's steps: not one that needs the
 * calls' times on a summary trace, nor one that looks at each step's own
 * time where the run was taken as one step (a full trace without steps). */
static inline int opp_advise_runs(const struct opp_advise_rule *r, const struct opp_advice *a)
{
    return a->counted ? !r->timed : a->nsteps || !r->stepped;
}

/* Where the rules' inputs come from: a pass over the trace
 * (advise_pass.h: table_stream.h, step_stream.h, gpu_stream.h,
 * mem_stream.h). Each returns 0, a negative errno (-EIO: the source's own
 * message says why), or 1 when the pass cannot answer. */
struct opp_advise_src {
    void *ctx;
    opp_rank_aggregate_fn aggregates; /* the aggregate of each of o[0..n) */
    /* the steps of name, else the program's own (what set: step_stream.h) */
    int (*steps)(void *ctx, const struct opp_agg_opts *o, const char *name, struct opp_steps *out,
                 char *what, size_t cap);
    /* questions q[0..n) answered in one read (table_stream.h) */
    int (*ask)(void *ctx, const struct opp_table_q *q, size_t n);
    int (*gpu_stats)(void *ctx, const struct opp_agg_opts *o, struct opp_gpu_stats *s);
    /* the CPU memory series (every process's MEMORY calls) point by
     * point in time order, to each (its non-zero returned) */
    int (*cpu_series)(void *ctx, int (*each)(void *ectx, uint64_t time_ns, int64_t bytes),
                      void *ectx);
    uint64_t first_ns; /* the traces' first time (opp_pass_first_ns) */
    int code_lines;    /* some call has a code stack (OPPROF_STACKS) or a name with a
                          code line's "): ": the rows by stack are asked for them */
    int summary;       /* a summary trace: its calls counted by call path, not timed
                          (steps, gpu_stats and cpu_series are not asked) */
};

/* The advice for the calls o selects (its pid, tid and rank filters;
 * step: --step NAME, NULL the program's own steps; th: the thresholds,
 * NULL the defaults) from src's answers; m: the model of src's first
 * read (processes, names, devices, device memory series, what was lost),
 * no calls. 0, 1 (src cannot), -ENOMEM, or as src's. */
int opp_advise(const struct opp_model *m, const struct opp_advise_src *src,
               const struct opp_agg_opts *o, const char *step, const double *th,
               struct opp_advice *out);
void opp_advice_free(struct opp_advice *a);

/* Threshold id by name: 0, or -EINVAL. */
int opp_advise_threshold_parse(const char *name, enum opp_advise_threshold *out);

#endif
