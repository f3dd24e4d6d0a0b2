/* `opprof report`'s views: what each computes (analysis/) and shows
 * (views/) on stdout, and the table of them that the command picks from.
 * A new view is a function here and its line in the table. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/gpu_stats.h"
#include "analysis/gpu_stream.h"
#include "analysis/pass.h"
#include "analysis/ranks.h"
#include "analysis/step_stream.h"
#include "analysis/step_times.h"
#include "analysis/table_stream.h"
#include "tool/report.h"
#include "views/by_process.h"
#include "views/by_rank.h"
#include "views/steps.h"
#include "views/say.h"

/* --match chose no call of a trace's (a summary's names were checked
 * before the read, report_stream.c): *rc the status, said as of any
 * trace. 0: it chose some, or there is no --match. */
static int match_found_nothing(const struct report_args *ra, const struct opp_model *m,
                               struct opp_table_stream *st, int *rc)
{
    if (!ra->agg.match || m->summary || opp_table_stream_matched(st))
        return 0;
    *rc = report_filters_known(ra, m) ? REPORT_NAME_UNKNOWN : 0;
    return 1;
}

/* The JSON's GPU statistics, read over the same pass (gpu_stream.h; *g
 * holds what they point into, the caller's to free): 0 and *gs; 1 or -1
 * as a view's read says. */
static int json_gpu(const struct report_args *ra, struct opp_pass *p, struct opp_gpu_stream **g,
                    struct opp_gpu_stats *gs, char *err, size_t errlen)
{
    if (!(*g = opp_gpu_stream_over(p, err, errlen)))
        return -1;
    return opp_gpu_stream_stats(*g, &ra->agg, gs, NULL, NULL, err, errlen);
}

int report_table_read(const struct report_args *ra, struct opp_pass *p, struct opp_table_stream *st,
                      int *rc, char *err, size_t errlen)
{
    struct opp_agg agg;
    struct opp_gpu_stats gs;
    struct opp_gpu_stream *g = NULL;
    int got = opp_table_stream_aggregate(st, &ra->agg, &agg, err, errlen);
    if (got)
        return got;
    const struct opp_model *m = opp_pass_model(p);
    struct opp_out_opts o = ra->out;
    /* a summary's --match and --lib were checked against its names before
     * the read (report_stream.c); its JSON has no "gpu" object (it keeps no
     * GPU op's start and end), and its threads' events are its nodes */
    if (match_found_nothing(ra, m, st, rc)) {
        /* said */
    } else if (ra->agg.lib && !agg.nrows_all && !ra->agg.window && !m->summary) {
        /* a library its processes could call, but none of the calls chosen did */
        opp_say("opprof report: --lib %s: no call into that library in %s", ra->agg.lib, ra->trace);
        *rc = REPORT_NAME_UNKNOWN;
    } else if (ra->format == FMT_JSON && opp_model_has_gpu(m) && !m->summary &&
               (got = json_gpu(ra, p, &g, &gs, err, errlen))) {
        /* said by the caller */
    } else {
        o.gpu = ra->format == FMT_JSON && opp_model_has_gpu(m) && !m->summary ? &gs : NULL;
        o.thread_events = m->summary ? NULL : opp_table_stream_thread_calls(st);
        *rc = ra->format == FMT_TABLE ? opp_out_table(stdout, &agg, &o)
              : ra->format == FMT_CSV ? opp_out_csv(stdout, &agg, &o)
                                      : opp_out_json(stdout, ra->trace, m, &agg, &o);
        if (o.gpu)
            opp_gpu_stats_free(&gs);
    }
    opp_gpu_stream_free(g);
    opp_agg_free(&agg);
    return got;
}

/* The GPU view; one line instead when the trace has no GPU records. */
static int gpu_read(const struct report_args *ra, struct opp_pass *p, struct opp_table_stream *t,
                    int *rc, char *err, size_t errlen)
{
    (void)t;
    const struct opp_model *m = opp_pass_model(p);
    struct opp_gpu_stream *g = opp_gpu_stream_over(p, err, errlen);
    struct opp_gpu_stats s;
    struct opp_kernel_stats *k;
    size_t nk;
    int got = g ? opp_gpu_stream_stats(g, &ra->agg, &s, &k, &nk, err, errlen) : -1; /* counts too */
    *rc = 0;
    if (!got && !opp_model_has_gpu(m))
        printf("%s has no GPU activity records\n", ra->trace);
    else if (!got)
        *rc = opp_out_gpu(stdout, m, &s, k, nk, ra->agg.limit ? ra->agg.limit : 10);
    if (!got) {
        free(k);
        opp_gpu_stats_free(&s);
    }
    opp_gpu_stream_free(g);
    return got;
}

static int tree_read(const struct report_args *ra, struct opp_pass *p, struct opp_table_stream *st,
                     int *rc, char *err, size_t errlen)
{
    struct opp_calltree ct;
    int got = opp_table_stream_calltree(st, &ra->agg, &ct, err, errlen);
    if (got)
        return got;
    *rc = opp_out_tree(stdout, opp_pass_model(p), &ct, &ra->tree_opts);
    opp_calltree_free(&ct);
    return 0;
}

static int step_read(const struct report_args *ra, struct opp_pass *p, struct opp_table_stream *t,
                     int *rc, char *err, size_t errlen)
{
    (void)t;
    const struct opp_model *m = opp_pass_model(p);
    struct opp_step_stream *z = opp_step_stream_over(p, err, errlen);
    struct opp_steps s = {0};
    struct opp_agg_opts o = ra->agg; /* the main process's when the rule says so: in_main */
    char what[OPP_NAME_MAX + 64];
    int in_main = opp_steps_main_process(m, &o, ra->ntraces);
    char msg[512];
    int got = z ? opp_step_stream_steps(z, &o, ra->step, &s, what, sizeof what, err, errlen) : -1;
    if (got) {
        /* said by the caller */
    } else if (opp_step_name_missing(m, &s.found, &o, in_main, ra->step, ra->trace, msg,
                                     sizeof msg)) { /* no call selected has --step's NAME */
        opp_say("opprof report: %s", msg);
        *rc = REPORT_NAME_UNKNOWN;
    } else {
        if (in_main && ra->format != FMT_JSON) /* the main process's, said first */
            printf("Steps of pid %" PRIu32 ", the first process (--pid PID for another)\n", o.pid);
        *rc = opp_out_steps(stdout, ra->step ? ra->step : what, &s, ra->format == FMT_JSON);
    }
    opp_steps_free(&s);
    opp_step_stream_free(z);
    return got;
}

/* Every rank's aggregate in the same reads of the pass. */
struct rank_reads {
    void *st;
    char *err;
    size_t errlen;
};

static int rank_aggregates(void *ctx, const struct opp_agg_opts *o, size_t n, struct opp_agg *out)
{
    const struct rank_reads *r = ctx;
    int got = opp_table_stream_aggregates(r->st, o, n, out, r->err, r->errlen);
    return got < 0 ? -EIO : got; /* -EIO: err says why */
}

static int by_rank_read(const struct report_args *ra, struct opp_pass *p,
                        struct opp_table_stream *st, int *rc, char *err, size_t errlen)
{
    struct opp_rank_table t;
    struct rank_reads r = {st, err, errlen};
    int got = opp_rank_table_build(opp_pass_model(p), &ra->agg, rank_aggregates, &r, &t);
    if (got == -EIO)
        return -1;
    if (got > 0)
        return got;
    if (got == -EEXIST) {
        char said[1200];
        opp_rank_twice_said(said, sizeof said, ra->traces[t.twice_files[0]],
                            ra->traces[t.twice_files[1]], t.twice_rank);
        opp_say("opprof report: %s", said);
        *rc = REPORT_NAME_UNKNOWN;
        return 0;
    }
    *rc = got;
    if (!got && !match_found_nothing(ra, opp_pass_model(p), st, rc))
        *rc = opp_out_by_rank(stdout, &t, ra->agg.sort, ra->agg.limit, ra->format == FMT_JSON);
    if (!got)
        opp_rank_table_free(&t);
    return 0;
}

static int by_process_read(const struct report_args *ra, struct opp_pass *p,
                           struct opp_table_stream *st, int *rc, char *err, size_t errlen)
{
    struct opp_agg a;
    int got = opp_table_stream_aggregate(st, &ra->agg, &a, err, errlen);
    if (got)
        return got;
    const struct opp_model *m = opp_pass_model(p);
    if (!match_found_nothing(ra, m, st, rc))
        *rc = opp_out_by_process(stdout, m, &a, ra->format == FMT_JSON);
    opp_agg_free(&a);
    return 0;
}

const struct view views[] = {
    [VIEW_GPU] = {"--gpu", 1u << FMT_TABLE,
                  "--gpu is a text view (the JSON report has its numbers in \"gpu\")", 0, "kernels",
                  "--gpu (its timeline)", gpu_read, 0},
    [VIEW_TREE] = {"--tree", 1u << FMT_TABLE, "--tree is a text view", 0, "call paths", NULL,
                   tree_read, 0},
    [VIEW_STEP] = {"--step", 1u << FMT_TABLE | 1u << FMT_JSON, "--step writes a table or JSON", 0,
                   NULL, "--step", step_read, 0},
    [VIEW_BY_RANK] = {"--by-rank", 1u << FMT_TABLE | 1u << FMT_JSON,
                      "--by-rank writes a table or JSON", 1, "operators", NULL, by_rank_read, 1},
    [VIEW_BY_PROCESS] = {"--by-process", 1u << FMT_TABLE | 1u << FMT_JSON,
                         "--by-process writes a table or JSON", 1, NULL, NULL, by_process_read, 1},
};
const size_t nviews = sizeof views / sizeof *views;
