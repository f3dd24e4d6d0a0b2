/* `opprof report` on full traces read in one pass (report.h's
 * view_stream, analysis/pass.h): the table, its CSV and JSON and every
 * view, whatever the traces' size, in memory bounded by what each keeps
 * (rows, call paths, steps, kernels), not by the calls. A summary trace
 * is loaded as it is (an input format: it says what it cannot answer); a
 * trace the pass cannot read (no room in TMPDIR) is refused, said. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

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

/* A view read in one pass over the traces (report.h's view_stream). The
 * exit status; *load set for a summary trace (loaded as it is). */
static int view_streamed(const struct report_args *ra, const struct view_stream *vs, int *load)
{
    char err[512];
    enum opp_stream_refused why;
    int rc = 0;
    void *st = vs->open(ra->traces, ra->ntraces, &why, err, sizeof err);
    if (!st && why != OPP_STREAM_SUMMARY_FILE) { /* an error, or what the pass cannot read */
        opp_say(PREFIX "%s", err);
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
                opp_say(PREFIX "%s", err);
            rc = got < 0 ? 1 : got ? 0 : report_finish(ra, m, out);
        }
        vs->close(st);
        if (got > 0) { /* no room for the GPU join's sorts */
            opp_say(PREFIX "%s", err);
            rc = 1;
        }
    }
    return rc;
}

int report_streamed(const struct report_args *ra)
{
    int load = 0, rc = view_streamed(ra, ra->view ? ra->view->stream : &table_stream, &load);
    return load ? -1 : rc;
}
