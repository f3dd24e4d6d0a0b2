/* `opprof report` on a trace read as it streams. --step, --gpu, --tree
 * and the table (and its CSV; not with --from/--to, --window or
 * --group-by-stack) are read in one pass over every trace, whatever its
 * size (report.h's view_stream, analysis/pass.h). --by-rank and the JSON
 * (--stream, or chosen by the traces' size: large_trace.h) need each call
 * path's totals, not each call: a full trace is added up as it is read
 * (analysis/summarize.h, the collector's summary mode) into a summary in
 * a temporary file, which is what is loaded. Memory is then bounded by
 * the call paths. Chosen for large traces where the output is the loaded
 * one's: not the table's JSON of several traces, which lists threads and
 * GPU statistics a summary has not. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/gpu_stream.h"
#include "analysis/large_trace.h"
#include "analysis/table_stream.h"
#include "tool/report.h"

#define PREFIX "opprof report: "

/* What of the options a summary trace cannot answer (it keeps no call's
 * time and no thread), or NULL. */
const char *report_summary_refuses(const struct report_args *ra)
{
    return ra->view && ra->view->needs_calls ? ra->view->needs_calls
           : ra->agg.window                  ? "--from/--to"
           : ra->agg.filter_tid              ? "--tid (it keeps no threads)"
                                             : NULL;
}

/* Why the options need every call of a full trace, or NULL when its
 * summary will do: what a summary refuses, and what it answers otherwise
 * (its --window K counts schedule windows) or cannot from a full trace's
 * summary (names matched, code stacks). */
static const char *needs_calls(const struct report_args *ra)
{
    const char *why = report_summary_refuses(ra);
    if (why)
        return why;
    if (ra->window_k)
        return "--window";
    if (ra->agg.match)
        return "--match";
    if (ra->agg.group_by_stack)
        return "--group-by-stack";
    return NULL;
}

/* Whether the view is read in one pass (report.h's view_stream), whatever
 * the traces' size, --stream and --no-stream. */
static int view_streams(const struct report_args *ra)
{
    return ra->view && ra->view->stream &&
           (!ra->view->filters || (!ra->window_k && opp_table_stream_takes(&ra->agg)));
}

/* 1: stream; 0: load every call; -1: --stream where it cannot (said). */
static int stream_chosen(const struct report_args *ra)
{
    const char *why = view_streams(ra) ? NULL : needs_calls(ra);
    if (!why && ra->format == FMT_JSON && !ra->view && ra->ntraces > 1)
        why = "the JSON of several traces (its threads and GPU statistics)";
    if (ra->stream && ra->no_stream) {
        fprintf(stderr, PREFIX "--stream or --no-stream, not both\n");
        return -1;
    }
    if (view_streams(ra))
        return 1; /* one pass over the trace, whatever is asked */
    if (ra->stream && why) {
        fprintf(stderr,
                PREFIX "--stream goes with the table, --tree and --by-rank (their JSON on one "
                       "trace), not %s\n",
                why);
        return -1;
    }
    if (ra->stream || ra->no_stream || why)
        return ra->stream;
    unsigned long long bytes;
    if (!opp_traces_large(ra->traces, ra->ntraces, &bytes))
        return 0;
    fprintf(stderr,
            PREFIX "%llu MiB of trace: calls added up as they are read (--no-stream loads each)\n",
            bytes >> 20);
    return 1;
}

/* A warning of the summary (--stream), said. */
static void warn_line(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, PREFIX "warning: %s\n", line);
}

/* The traces loaded through their summaries (large_trace.h). When
 * streaming was chosen by size and cannot give the loaded report, *load
 * is set (said on stderr) and NULL returned: every call is loaded
 * instead. */
static struct opp_model *load_streamed(const struct report_args *ra, int *load,
                                       struct opp_summarized *first,
                                       const struct opp_owned_tap *tap, char *err, size_t errlen)
{
    const struct opp_summary_load_opts o = {
        .exact = !ra->stream, .warn = warn_line, .tap = tap, .first = first};
    struct opp_model *m;
    enum opp_summary_load_rc rc = opp_summary_load(ra->traces, ra->ntraces, &o, &m, err, errlen);
    if (rc == OPP_SUMMARY_LOAD_CALLS) {
        fprintf(stderr, PREFIX "%s: loading every call\n", err);
        *load = 1;
    }
    return m;
}

/* A view read in one pass over the traces (report.h's view_stream). The
 * exit status; *load set when every call is loaded instead (said, unless
 * the loaded path says it better). */
static int view_streamed(const struct report_args *ra, const struct view_stream *vs, int *load)
{
    char err[512];
    enum opp_stream_refused why;
    int rc = 0;
    void *st = vs->open(ra->traces, ra->ntraces, &why, err, sizeof err);
    if (!st && why == OPP_STREAM_ERROR) {
        fprintf(stderr, PREFIX "%s\n", err);
        return 1;
    }
    if (!st && why == OPP_STREAM_SUMMARY_FILE) { /* loaded, it says what it cannot answer */
        *load = 1;
        return 0;
    }
    if (st) {
        const struct opp_model *m = vs->model(st);
        int got = 0, out;
        struct report_args pre = *ra;
        if (vs->names_read)
            pre.agg.match = NULL;
        if (!(rc = report_filters_known(&pre, m))) {
            got = vs->show(ra, st, &out, err, sizeof err);
            if (got < 0)
                fprintf(stderr, PREFIX "%s\n", err);
            rc = got < 0 ? 1 : got ? 0 : report_finish(ra, m, out);
        }
        vs->close(st);
        if (rc || got <= 0)
            return rc;
    }
    fprintf(stderr, PREFIX "%s: %s: loading every call\n", ra->trace, err);
    *load = 1;
    return 0;
}

/* Whether the table's JSON streams: one trace, no --tid (opp_gpu_stream
 * takes it, the summary does not). */
static int json_streams(const struct report_args *ra)
{
    return !ra->view && ra->format == FMT_JSON && ra->ntraces == 1 && !needs_calls(ra);
}

/* The table's JSON of one large trace: the rows from its summary (as the
 * table streams), the processes, threads and GPU statistics from reads of
 * the trace itself (gpu_stream.h). The exit status; -1 when the default
 * path is to answer (a summary trace, or every call loaded: *load). */
static int json_streamed(struct report_args *ra, int *load)
{
    char err[512];
    enum opp_stream_refused why;
    int rc = 1;
    struct opp_gpu_stream *g = opp_gpu_stream_open(&ra->trace, 1, &why, err, sizeof err);
    if (!g && why == OPP_STREAM_SUMMARY_FILE)
        return -1; /* read as it is */
    if (!g && why == OPP_STREAM_CANNOT) {
        /* what the pass cannot read */
        fprintf(stderr, PREFIX "%s: %s: loading every call\n", ra->trace, err);
        *load = 1;
        return -1;
    }
    if (!g) {
        fprintf(stderr, PREFIX "%s\n", err);
        return 1;
    }
    const struct opp_model *meta = opp_gpu_stream_model(g);
    struct opp_summarized sum = {0};
    struct opp_model *m = NULL;
    uint64_t *calls = NULL;
    struct opp_gpu_stats gs = {0};
    struct opp_kernel_stats *k = NULL;
    size_t nk;
    int have_gs = 0;
    if ((rc = report_filters_known(ra, meta)))
        goto out;
    /* the summary's join of the GPU work to its calls gives the GPU
     * statistics their ops too */
    if (!(m = load_streamed(ra, load, &sum, opp_gpu_stream_tap(g, &ra->agg), err, sizeof err))) {
        rc = *load ? -1 : 1;
        if (!*load)
            fprintf(stderr, PREFIX "%s\n", err);
        goto out;
    }
    if (opp_model_has_gpu(meta)) {
        int got = opp_gpu_stream_stats(g, &ra->agg, &gs, &k, &nk, err, sizeof err);
        if (got) {
            if (got > 0 && !ra->stream) { /* no room for the sorts, or owners untold */
                fprintf(stderr, PREFIX "%s: %s: loading every call\n", ra->trace, err);
                *load = 1;
            } else if (got > 0) {
                fprintf(stderr,
                        PREFIX "cannot stream the JSON: %s (--no-stream loads every call)\n", err);
            } else {
                fprintf(stderr, PREFIX "%s\n", err);
            }
            rc = got > 0 && !ra->stream ? -1 : 1;
            goto out;
        }
        have_gs = 1;
    }
    struct opp_agg agg;
    if (!(calls = opp_summary_thread_calls(opp_gpu_stream_meta(g), &sum)) ||
        opp_aggregate(m, &ra->agg, &agg)) {
        rc = report_finish(ra, m, -ENOMEM);
        goto out;
    }
    struct opp_out_opts o = ra->out;
    o.gpu = have_gs ? &gs : NULL;
    o.thread_events = calls;
    rc = report_finish(ra, m, opp_out_json(stdout, ra->trace, meta, &agg, &o));
    opp_agg_free(&agg);
out:
    if (have_gs)
        opp_gpu_stats_free(&gs);
    free(k);
    free(calls);
    opp_summarized_free(&sum);
    opp_model_free(m);
    opp_gpu_stream_free(g);
    return rc;
}

/* Whether the table (or its CSV) is read in one pass (table_stream.h):
 * whatever the traces' size, --stream and --no-stream. */
static int table_streams(const struct report_args *ra)
{
    return !ra->view && !ra->window_k && opp_table_stream_takes(&ra->agg);
}

int report_streamed(struct report_args *ra, struct opp_model **m)
{
    char err[512];
    *m = NULL;
    if (table_streams(ra)) {
        if (ra->stream && ra->no_stream) {
            fprintf(stderr, PREFIX "--stream or --no-stream, not both\n");
            return 2;
        }
        int load = 0, rc = view_streamed(ra, &table_stream, &load);
        return load ? -1 : rc;
    }
    int rc, stream = stream_chosen(ra);
    if (stream < 0)
        return 2;
    if (!stream)
        return -1;
    int load = 0;
    if (view_streams(ra)) {
        rc = view_streamed(ra, ra->view->stream, &load);
        if (!load)
            return rc;
    }
    if (!load && json_streams(ra)) {
        rc = json_streamed(ra, &load);
        if (rc >= 0)
            return rc;
    }
    if (load)
        return -1;
    *m = load_streamed(ra, &load, NULL, NULL, err, sizeof err);
    if (!*m && !load) {
        fprintf(stderr, PREFIX "%s\n", err);
        return 1;
    }
    return -1;
}
