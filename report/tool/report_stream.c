/* `opprof report` on full traces read in one pass (analysis/pass.h,
 * opened here for the view's read, report.h): the table, its CSV and JSON and every
 * view, whatever the traces' size, in memory bounded by what each keeps
 * (rows, call paths, steps, kernels), not by the calls. A summary trace
 * is loaded as it is (an input format: it says what it cannot answer); a
 * trace the pass cannot read (no room in TMPDIR) is refused, said. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/pass.h"
#include "analysis/table_stream.h"
#include "tool/report.h"
#include "views/say.h"

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

int report_streamed(const struct report_args *ra)
{
    char err[512];
    enum opp_stream_refused why;
    struct opp_pass *p = opp_pass_open(ra->traces, ra->ntraces, &why, err, sizeof err);
    if (!p && why == OPP_STREAM_SUMMARY_FILE) /* loaded, it says what it cannot answer */
        return -1;
    if (!p) { /* an error, or what the pass cannot read */
        opp_say(PREFIX "%s", err);
        return 1;
    }
    view_read_fn *read = ra->view ? ra->view->read : report_table_read;
    const struct opp_model *m = opp_pass_model(p);
    struct opp_table_stream *t = opp_table_stream_over(p, err, sizeof err);
    int got = t ? 0 : -1, out, rc = 0;
    struct report_args pre = *ra;
    if (!ra->view || ra->view->names_read)
        pre.agg.match = NULL;
    if (!got && !(rc = report_filters_known(&pre, m)))
        got = read(ra, p, t, &out, err, sizeof err);
    if (got) /* an error, or no room for the GPU join's sorts */
        opp_say(PREFIX "%s", err);
    rc = got ? 1 : rc ? rc : report_finish(ra, m, out);
    opp_table_stream_free(t);
    opp_pass_free(p);
    return rc;
}
