/* advise's rules on the trace itself and the job: what the trace lost (so
 * that the findings are read knowing it), stragglers among ranks
 * (advise_rules.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/advise.h"
#include "analysis/advise_rules.h"
#include "analysis/ranks.h"
#include "util.h"

static int lost(struct opp_findings *out, uint64_t count, const char *what, const char *try_)
{
    if (!count)
        return 0;
    struct opp_finding *f = adv_add(out, "lost_data");
    if (!f)
        return -ENOMEM;
    f->lost = 1;
    f->per_step = (double)count;
    snprintf(f->what, sizeof f->what, "%s: %" PRIu64, what, count);
    f->try_ = try_;
    return 0;
}

int adv_rule_lost(const struct opp_advise_ctx *c, struct opp_findings *out)
{
    const struct opp_model *m = c->m;
    const char *ring = "a larger ring (OPPROF_BUFFER), OPPROF_DROP=block, or record less "
                       "(OPPROF_TORCH=lean, a schedule)";
    /* a signal handler's interruption and a summary's node bound are not
     * a full ring: a larger one would not keep those */
    int rc = lost(out, opp_model_dropped_full(m),
                  "Records dropped (threads' rings were full: their calls are "
                  "missing)",
                  ring);
    if (!rc)
        rc = lost(out, m->interrupted,
                  "Records dropped (" OPP_INTERRUPTED_WHY ": their calls are missing)",
                  OPP_INTERRUPTED_ADVICE);
    if (!rc)
        rc = lost(out, m->sum_dropped,
                  "Calls on new call paths past the summary's bound (dropped: missing from it)",
                  "a larger bound: OPPROF_MAX_NODES (opprof run --max-nodes, opprof summarize "
                  "--max-nodes)");
    if (!rc)
        rc = lost(out, m->gpu.dropped_cupti + m->gpu.dropped_ours,
                  "GPU activity records lost (CUPTI's buffers, or ours, were full)",
                  "record a shorter window (a schedule, opprof ctl)");
    if (!rc)
        rc = lost(out, m->gpu.unfinished, "GPU records left out without timestamps",
                  "let the program end normally so CUPTI flushes");
    if (!rc)
        rc = lost(out, m->gpu.buffers_taken + m->gpu.yielded,
                  "Times another CUPTI client took the GPU activity (ours stops there)",
                  "profile without torch.profiler's CUDA activities");
    if (!rc)
        rc = lost(out, m->procs_cut, "Processes cut (their records stop before they ended)",
                  "let the processes exit before the trace is finished");
    if (!rc)
        rc = lost(out, m->open_events, "Calls still open when their process ended",
                  "their time runs to the process's end");
    if (!rc && m->sum.warning[0]) {
        rc = lost(out, 1, "Damaged tail: the trace ends early", "");
        if (!rc)
            snprintf(out->f[out->n - 1].evidence, sizeof out->f[out->n - 1].evidence, "%.319s",
                     m->sum.warning);
    }
    return rc;
}

#define STRAGGLERS_MAX 3

int adv_rule_stragglers(const struct opp_advise_ctx *c, struct opp_findings *out)
{
    struct opp_agg_opts o = c->o;
    o.filter_pid = 0; /* every rank */
    o.filter_rank = 0;
    o.window = 0;
    struct opp_rank_table t;
    int rc = opp_rank_table_build(c->m, &o, c->src->aggregates, c->src->ctx, &t);
    if (rc == -ENOENT)
        return 0;
    if (rc)
        return rc;
    size_t found = 0;
    for (size_t i = 0; i < t.nrows && t.nranks > 1 && found < STRAGGLERS_MAX && !rc; i++) {
        const struct opp_rank_row *r = &t.rows[i];
        double excess = r->max - r->median;
        if (r->max < adv_th(c, OPP_TH_STRAGGLER_RATIO) * r->median ||
            excess < adv_th(c, OPP_TH_STRAGGLER_MS) * 1e6)
            continue;
        struct opp_finding *f = adv_add(out, "stragglers");
        if (!f) {
            rc = -ENOMEM;
            break;
        }
        found++;
        adv_stake(c, f, (uint64_t)excess);
        f->share = -1; /* the whole trace's time, not the steps' */
        f->rank = t.ranks[r->slowest];
        snprintf(f->op, sizeof f->op, "%s", r->key);
        snprintf(f->what, sizeof f->what,
                 "Straggler: rank %" PRId64 " spends %.1fx the median "
                 "rank's time in %s",
                 f->rank, r->median > 0 ? r->max / r->median : 0.0, r->key);
        snprintf(f->evidence, sizeof f->evidence,
                 "self CPU time: %.3f ms on rank %" PRId64 ", median %.3f ms, fastest %.3f ms "
                 "(%zu ranks)",
                 r->max / 1e6, f->rank, r->median / 1e6, r->min / 1e6, t.nranks);
        f->try_ = "look at that rank (`opprof advise TRACE --rank R`): uneven data (shard "
                  "sizes, sequence lengths), a slower host or device, work only it does "
                  "(logging, checkpoints)";
    }
    opp_rank_table_free(&t);
    return rc;
}
