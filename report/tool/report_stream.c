/* `opprof report` on traces read in one pass (analysis/pass.h, opened
 * here for the view's read, report.h): the table, its CSV and JSON and
 * every view, whatever the traces' size, in memory bounded by what each
 * keeps (rows, call paths, steps, kernels), not by the calls. A summary
 * trace's pass hands its nodes over as counted calls (it says first what
 * it cannot answer); a trace the pass cannot read (no room in TMPDIR) is
 * refused, said. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/pass.h"
#include "analysis/step_times.h"
#include "analysis/table_stream.h"
#include "tool/report.h"
#include "summary.h"
#include "views/say.h"

#define PREFIX "opprof report: "

/* What of the options a summary trace cannot answer (it keeps no call's
 * time and no thread), or NULL. */
static const char *summary_refuses(const struct report_args *ra)
{
    return ra->view && ra->view->needs_calls ? ra->view->needs_calls
           : ra->agg.window                  ? "--from/--to"
           : ra->agg.filter_tid              ? "--tid (it keeps no threads)"
                                             : NULL;
}

/* A summary trace's refusals and filters, said: 0 to read it, else the
 * exit status; --window K is its nodes' (numbered in the file). */
static int summary_checks(struct report_args *ra, const struct opp_model *m)
{
    char err[512];
    const char *what = summary_refuses(ra);
    if (what) {
        opp_summary_refusal(ra->trace, what, err, sizeof err);
        opp_say(PREFIX "%s", err);
        return 1;
    }
    if (report_filters_known(ra, m))
        return 2;
    uint32_t nw = ra->window_k ? opp_summary_windows(m) : 0;
    if (ra->window_k > nw) {
        opp_say(PREFIX "%s has %u recorded window%s (a schedule's active runs of "
                       "steps), not %u",
                ra->trace, nw, nw == 1 ? "" : "s", ra->window_k);
        return 2;
    }
    ra->agg.sched_window = ra->window_k;
    ra->window_k = 0;
    return 0;
}

/* ra with --window K made the K-th schedule window's time, from a read of
 * the traces' steps, into *out, before any view's read (a view that takes
 * neither --from nor --window was refused them: cmd_report.c): 0, or what
 * a read returns (1, -1); when there is no such window, or --from is past
 * the traces' end (said), REPORT_NAME_UNKNOWN in *rc. */
static int windowed(const struct report_args *ra, struct opp_pass *p, struct opp_table_stream *st,
                    struct report_args *out, int *rc, char *err, size_t errlen)
{
    *out = *ra;
    *rc = 0;
    uint64_t first = opp_pass_first_ns(p), last = opp_pass_last_ns(p);
    if (ra->from_given && ra->agg.from_ns > last - first) {
        opp_say(PREFIX "--from %g ms is past the end of %s (%.3f ms)",
                (double)ra->agg.from_ns / 1e6, ra->trace, (double)(last - first) / 1e6);
        *rc = REPORT_NAME_UNKNOWN;
        return 0;
    }
    if (!ra->window_k)
        return 0;
    struct opp_window *w = NULL;
    size_t nw = 0;
    int got = opp_table_stream_windows(st, &w, &nw, err, errlen);
    if (!got)
        *rc = report_window(out, w, nw, first);
    free(w);
    return got;
}

int report_streamed(const struct report_args *rap)
{
    char err[512];
    enum opp_stream_refused why;
    struct report_args sra = *rap;
    const struct report_args *ra = rap;
    struct opp_pass *p = opp_pass_open(ra->traces, ra->ntraces, &why, err, sizeof err);
    if (!p && why == OPP_STREAM_SUMMARY_FILE) {
        p = opp_pass_open_summary(ra->traces, ra->ntraces, err, sizeof err);
        if (!p) {
            opp_say(PREFIX "%s", err);
            return 1;
        }
        int rc = summary_checks(&sra, opp_pass_model(p));
        if (rc) {
            opp_pass_free(p);
            return rc;
        }
        ra = &sra;
    } else if (!p) { /* an error, or what the pass cannot read */
        opp_say(PREFIX "%s", err);
        return 1;
    }
    view_read_fn *read = ra->view ? ra->view->read : report_table_read;
    const struct opp_model *m = opp_pass_model(p);
    struct opp_table_stream *t = opp_table_stream_over(p, err, sizeof err);
    int got = t ? 0 : -1, out, rc = 0;
    struct report_args pre = *ra, w;
    if (!ra->view || ra->view->names_read)
        pre.agg.match = NULL;
    if (!got && !(rc = report_filters_known(&pre, m)) &&
        !(got = windowed(ra, p, t, &w, &out, err, sizeof err)) && !out)
        got = read(&w, p, t, &out, err, sizeof err);
    if (got) /* an error, or no room for the GPU join's sorts */
        opp_say(PREFIX "%s", err);
    rc = got ? 1 : rc ? rc : report_finish(ra, m, out);
    opp_table_stream_free(t);
    opp_pass_free(p);
    return rc;
}
