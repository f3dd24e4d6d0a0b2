/* What `opprof report` says on stderr about what was asked of a trace and
 * how it ended, whichever trace it read (a full trace's views in one
 * pass, report_stream.c and report_views.c, or a summary trace loaded,
 * cmd_report.c):
 * the filters checked against the names the trace holds, --window K made
 * a time range, and the exit status of a view with the trace's warnings. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/step_times.h"
#include "info.h"
#include "tool/report.h"
#include "views/output.h"
#include "views/out_end.h"
#include "views/say.h"

#define PREFIX "opprof report: "

/* The view's (or the table's) status rc as the exit status: what went
 * wrong said, the trace's warnings when it went right. */
int report_finish(const struct report_args *ra, const struct opp_model *m, int rc)
{
    if (rc == REPORT_NAME_UNKNOWN)
        return 2;
    if (rc == -ENOENT) { /* --by-rank of a trace without ranks */
        char keys[160];
        opp_say(PREFIX "no process of %s has a rank (none had %s set)", ra->trace,
                opp_info_rank_keys_text(keys, sizeof keys, " or "));
        return 2;
    }
    if (rc == -ENOMEM) {
        opp_say(PREFIX "out of memory");
        return 1;
    }
    if ((rc = opp_out_end(stdout, rc))) {
        opp_say(PREFIX "cannot write the report: %s", strerror(-rc));
        return 1;
    }
    opp_out_warnings(stderr, ra->trace, m);
    return 0;
}

int report_window(struct report_args *ra, const struct opp_window *w, size_t nw, uint64_t first)
{
    if (ra->window_k > nw) {
        opp_say(PREFIX "%s has %zu recorded window%s (a schedule's runs of ProfilerStep#N), "
                       "not %u",
                ra->trace, nw, nw == 1 ? "" : "s", ra->window_k);
        return REPORT_NAME_UNKNOWN;
    }
    const struct opp_window *k = &w[ra->window_k - 1];
    ra->agg.window = 1;
    ra->agg.from_ns = k->begin_ns - first;
    ra->agg.to_ns = k->end_ns - first + 1;
    opp_say(PREFIX "window %u: steps %" PRIu64 " to %" PRIu64 "", ra->window_k, k->first_step,
            k->last_step);
    return 0;
}

/* The filters name what the trace has: 0, or 2 (said). */
int report_filters_known(const struct report_args *ra, const struct opp_model *m)
{
    struct opp_agg_filter_names names = {.lib = ra->agg.lib,
                                         .filter_pid = ra->agg.filter_pid,
                                         .filter_tid = ra->agg.filter_tid,
                                         .pid = ra->agg.pid,
                                         .tid = ra->agg.tid,
                                         .match = ra->agg.match,
                                         .match_text = ra->match_text};
    char err[512];
    if (!opp_model_filters_known(m, &names, err, sizeof err))
        return 0;
    opp_say(PREFIX "%s", err);
    return 2;
}
