/* `opprof summarize TRACE -o OUT`: a full trace made into the summary trace
 * that OPPROF_MODE=summary would have recorded (common/summary_calls.c, the
 * collector's own aggregation): constant size, the same report table.
 * Exit status: 0 done, 2 usage, 1 the trace cannot be read or OUT written
 * (as the report's and the exports'). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/summarize.h"
#include "summary.h"
#include "tool/cmds.h"
#include "tool/options.h"
#include "tool/outfile.h"
#include "views/say.h"

int cmd_summarize(int argc, char **argv)
{
    const char *out = NULL;
    uint32_t max_nodes = OPP_SUM_NODES_DEFAULT;
    const struct opp_option options[] = {
        OPP_OPT_STRING('o', "output", &out, "OUT", "the summary trace to write (not TRACE itself)"),
        OPP_OPT_NUMBER(0, "max-nodes", &max_nodes, "N",
                       "call paths kept at most (default 1048576); calls on\n"
                       "new paths past it are counted as dropped",
                       OPP_NUMBER_U32, 1, OPP_SUM_NODES_MAX, "a number from 1 to 268435456"),
        OPP_OPT_HELP("show this help"),
        OPP_OPT_END(),
    };
    const struct opp_command cmd = {
        .name = "summarize",
        .usage = "usage: opprof summarize TRACE -o OUT [--max-nodes N]\n"
                 "\n"
                 "Add up a full trace's calls by call path into a summary trace, as\n"
                 "OPPROF_MODE=summary records one: its size does not grow with the run's\n"
                 "length, and `opprof report OUT` prints the same table (the views that need\n"
                 "every call's time, like --step, --from/--to and the Chrome export, do not\n"
                 "take it).\n"
                 "\n",
        .col = 22,
        .options = options,
    };
    int first, parsed = opp_options_parse(&cmd, argc, argv, &first);
    if (parsed)
        return parsed == 1 ? 0 : parsed;
    if (argc - first != 1 || !out) {
        opp_say("opprof summarize: %s (usage: opprof summarize TRACE -o OUT)",
                argc - first != 1 ? (argc - first ? "one trace at a time" : "which trace?")
                                  : "where to? (-o OUT)");
        return 2;
    }
    if (!strcmp(out, "-")) { /* export's stdout; a summary trace is a file, as sqlite's is */
        opp_say("opprof summarize: a summary trace needs an output file: -o OUT (not -, standard "
                "output)");
        return 2;
    }
    const char *in = argv[first];
    struct opp_out o;
    char err[600] = "";
    int orc = opp_out_open_path(&o, out, &in, 1, err, sizeof err);
    if (orc) {
        opp_say("opprof summarize: %s", err);
        return orc == -2 ? 2 : 1;
    }
    struct opp_summarized res;
    enum opp_summarize_rc rc = opp_summarize(in, o.path, out, max_nodes, &res, err, sizeof err);
    if (opp_out_close(&o, rc == OPP_SUMMARIZED, err, sizeof err) == 0) {
        if (res.warning[0])
            opp_say("opprof summarize: %s: %s", in, res.warning);
        if (res.dropped)
            opp_say("opprof summarize: %llu calls into %s, %llu of them dropped: on new call "
                    "paths past --max-nodes %lu",
                    (unsigned long long)res.calls, out, (unsigned long long)res.dropped,
                    (unsigned long)max_nodes);
        else
            opp_say("opprof summarize: %llu calls into %s", (unsigned long long)res.calls, out);
        if (res.lost) { /* OUT carries it too, for its report */
            char said[320];
            opp_sum_lost_said(said, sizeof said, res.lost);
            opp_say("opprof summarize: %s; the report of %s has them", said, in);
        }
        if (res.ranges_enclose)
            opp_say("opprof summarize: %s has ranges recorded when they ended (NVTX start/end, a "
                    "schedule's ProfilerStep#N) around calls: %s cannot nest those calls in them, "
                    "so the ranges have no self time there, as in a summary-mode run "
                    "(`opprof report %s` nests them)",
                    in, out, in);
        if (res.frees_unordered)
            opp_say("opprof summarize: CPU frees out of time order in %s could not be ordered "
                    "(no room for temporary files in TMPDIR): those read before their "
                    "allocations have no size in %s",
                    in, out);
        return 0;
    }
    opp_say("opprof summarize: %s", err);
    return 1;
}
