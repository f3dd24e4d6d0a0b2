/* What advise's rules share (advise.c): the steps and aggregates every rule
 * reads, computed once, the helpers that add a finding and look rows up,
 * and each rule's function (advise_*.c, by what they look at). */
#ifndef OPP_ADVISE_RULES_H
#define OPP_ADVISE_RULES_H

#include "analysis/advise_findings.h"
#include "analysis/aggregate.h"
#include "analysis/callpath_tree.h"
#include "analysis/gpu_stats.h"
#include "analysis/step_times.h"

struct opp_advise_src; /* advise.h */

struct opp_advise_ctx {
    const struct opp_model *m;
    const struct opp_advise_src *src; /* the pass's answers */
    uint64_t first_ns;                /* the trace's first time */
    struct opp_agg_opts o; /* the filters given; window: the steps' span */
    const double *th;
    /* The steps of one thread (the first that has any), in time order;
     * without steps, the run of the calls o selects as one. */
    struct opp_step *steps;
    size_t n;
    size_t nall;      /* steps[n..nall): the other threads' (the rows' spans) */
    int real_steps;   /* steps were found */
    uint32_t thread;  /* their thread (index in m->threads), UINT32_MAX: none */
    const char *range; /* the name of the calls that are the steps (ranges), else NULL */
    uint64_t wall_ns; /* the steps' wall times summed */
    uint64_t p50_ns, p99_ns;
    size_t warm;            /* leading steps of warm-up (the warm-up rule's) */
    struct opp_agg agg;     /* key_averages of the calls in the steps, by name */
    struct opp_agg shapes;  /* the same by name and input shapes */
    struct opp_agg stacks;  /* the same by name, input shapes and every frame of its stack,
                               when a call can show a code line (adv_code_of); else empty */
    struct opp_calltree ct; /* the calls o selects by call path (the layers) */
};

static inline double adv_th(const struct opp_advise_ctx *c, enum opp_advise_threshold id)
{
    return c->th[id];
}

static inline uint64_t adv_wall(const struct opp_step *s)
{
    return s->end_ns > s->begin_ns ? s->end_ns - s->begin_ns : 0;
}

/* A new finding of rule, its "where" and "how much" not applying (-1),
 * NULL when out of memory. */
struct opp_finding *adv_add(struct opp_findings *out, const char *rule);
/* Its ms per step and share of the steps from stake_ns. */
void adv_stake(const struct opp_advise_ctx *c, struct opp_finding *f, uint64_t stake_ns);
/* The CPU row named key of a, NULL when none. */
const struct opp_row *adv_row(const struct opp_agg *a, const char *key);
/* The aggregate of o, from c's source: 0, 1 (the pass cannot) or -errno. */
int adv_aggregate(const struct opp_advise_ctx *c, const struct opp_agg_opts *o,
                  struct opp_agg *out);
/* The steps of name (step_stream.h) for c's filters, from c's source: as
 * above. */
int adv_steps_find(const struct opp_advise_ctx *c, const char *name, struct opp_steps *out);
/* opp_gpu_stats for c's filters, from c's source: as above. */
int adv_gpu_stats(const struct opp_advise_ctx *c, struct opp_gpu_stats *out);
/* key_averages over [begin, end) of the filters' calls: 0 or -ENOMEM. */
int adv_agg_span(const struct opp_advise_ctx *c, uint64_t begin, uint64_t end,
                 uint32_t group_by_stack, int group_by_shape, struct opp_agg *out);
/* The innermost code frame (a Python line with OPPROF_STACKS) of key's
 * calls (on first input shape first; NULL: any) that took the most time,
 * into buf ("" when none). */
void adv_code_of(const struct opp_advise_ctx *c, const char *key, const char *first, char *buf,
                 size_t cap);
/* The first input's shape of a row's shapes ("[64, 64]" of "[[64, 64],
 * [64, 64], []]") into buf; 0 when it has none. "[]" is a shape: an
 * elementwise operator's first input is its tensor, there a 0-d one. */
int adv_first_shape(const char *shapes, char *buf, size_t cap);
/* The innermost nn.Module layer ("nn.Module: Linear_0") above key's call
 * path of the most CPU time, into buf ("" when none). */
void adv_layer_of(const struct opp_advise_ctx *c, const char *key, char *buf, size_t cap);
/* Whether the steps' process (else the first the filters select) runs
 * Python. */
int adv_python(const struct opp_advise_ctx *c);
/* What time inside no recorded call is in the steps' program: its
 * Python's in a Python program, else its own code's, or waits. */
const char *adv_outside_what(const struct opp_advise_ctx *c);
/* The operator whose self CPU time in step i exceeds that in step ref by
 * the most: its name into buf, the excess into *ns (0: none); or, when
 * step i's time inside no recorded call exceeds step ref's by more, that
 * excess, buf "" and *outside 1. 0 or -ENOMEM. */
int adv_step_excess(const struct opp_advise_ctx *c, size_t i, size_t ref, char *buf, size_t cap,
                    uint64_t *ns, int *outside);

int adv_rule_lost(const struct opp_advise_ctx *c, struct opp_findings *out);
int adv_rule_input(const struct opp_advise_ctx *c, struct opp_findings *out);
int adv_rule_outside(const struct opp_advise_ctx *c, struct opp_findings *out);
int adv_rule_warmup(const struct opp_advise_ctx *c, struct opp_findings *out);
int adv_rule_outliers(const struct opp_advise_ctx *c, struct opp_findings *out);
int adv_rule_sync(const struct opp_advise_ctx *c, struct opp_findings *out);
int adv_rule_fusable(const struct opp_advise_ctx *c, struct opp_findings *out);
int adv_rule_tiny_gemm(const struct opp_advise_ctx *c, struct opp_findings *out);
int adv_rule_gpu_idle(const struct opp_advise_ctx *c, struct opp_findings *out);
int adv_rule_comm(const struct opp_advise_ctx *c, struct opp_findings *out);
int adv_rule_launch(const struct opp_advise_ctx *c, struct opp_findings *out);
int adv_rule_cpu_allocs(const struct opp_advise_ctx *c, struct opp_findings *out);
int adv_rule_cuda_allocs(const struct opp_advise_ctx *c, struct opp_findings *out);
int adv_rule_growth(const struct opp_advise_ctx *c, struct opp_findings *out);
int adv_rule_stragglers(const struct opp_advise_ctx *c, struct opp_findings *out);

#endif
