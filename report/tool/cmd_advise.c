/* `opprof advise TRACE [options]`: findings about a trace ranked by the
 * time at stake (analysis/advise.h), as text or JSON (views/advise_view.h).
 * A full trace is read through the pass (analysis/advise_pass.h): memory
 * bounded by the rows, call paths, steps and devices, not by the calls;
 * a summary trace's steps are counted, not timed, and the rules that need
 * the calls' times are not run (--step is refused: it keeps no call's
 * time); a trace whose GPU join finds no room in TMPDIR is refused (said).
 * Exit status: 0 (findings or none), 1 the trace cannot be read (or
 * --step of a summary), 2 usage (a --pid, --rank or --step the trace does
 * not have). */
#include <errno.h>
#include <inttypes.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/advise.h"
#include "analysis/advise_pass.h"
#include "analysis/pass.h"
#include "analysis/step_times.h"
#include "tool/cmds.h"
#include "tool/options.h"
#include "views/advise_view.h"
#include "views/out_end.h"
#include "views/say.h"

#define PREFIX "opprof advise: "

struct advise_args {
    int json, json_given, thresholds;
    const char *step;
    struct opp_agg_opts o;
    uint64_t rank; /* --rank R, into o */
    double th[OPP_TH_COUNT];
    const char *th_set[OPP_TH_COUNT]; /* the --set that gave each, as the parser's once() */
};

static int opt_set(const struct opp_option *o, const char *arg)
{
    struct advise_args *aa = o->value;
    double v;
    const char *eq = strchr(arg, '=');
    char name[64];
    enum opp_advise_threshold id;
    if (!eq || (size_t)(eq - arg) >= sizeof name) {
        opp_say(PREFIX "--set wants NAME=VALUE (`opprof advise --thresholds` lists the "
                       "names), not '%s'",
                arg);
        return 2;
    }
    memcpy(name, arg, (size_t)(eq - arg));
    name[eq - arg] = 0;
    if (opp_advise_threshold_parse(name, &id)) {
        opp_say(PREFIX "--set: no threshold '%s' (`opprof advise --thresholds` lists "
                       "them)",
                name);
        return 2;
    }
    if (opp_option_number(eq + 1, 0, DBL_MAX, 0, &v)) {
        opp_say(PREFIX "--set %s wants a number (0 or more), not '%s'", name, eq + 1);
        return 2;
    }
    if (aa->th_set[id]) { /* one threshold, two values: neither says which is meant */
        opp_say(PREFIX "--set %s given twice ('%s' and '%s'): give it once", name, aa->th_set[id],
                arg);
        return 2;
    }
    aa->th_set[id] = arg;
    aa->th[id] = v;
    return 0;
}

/* 0 to go on, 1 after --help, 2 on a usage error (said). */
static int parse_args(int argc, char **argv, struct advise_args *aa, int *first)
{
    memset(aa, 0, sizeof *aa);
    for (int i = 0; i < OPP_TH_COUNT; i++)
        aa->th[i] = opp_advise_thresholds[i].value;
    const struct opp_option options[] = {
        OPP_OPT_CHOICE('f', "format", &aa->json, &aa->json_given, "FMT", "text (default) or json",
                       "text", "json"),
        OPP_OPT_STRING(0, "step", &aa->step, "NAME",
                       "the steps are NAME's calls (as `opprof report --step NAME`);\n"
                       "default: the program's own (ProfilerStep#N, optimizer steps,\n"
                       "outermost nn.Module forwards)"),
        OPP_OPT_NUMBER_GIVEN(0, "pid", &aa->o.pid, &aa->o.filter_pid, "PID",
                             "the process looked at (default: the first, the one\n"
                             "`opprof run` started, when no process is a rank)",
                             OPP_NUMBER_U32, 0, UINT32_MAX, "a number"),
        OPP_OPT_NUMBER_GIVEN(0, "rank", &aa->rank, &aa->o.filter_rank, "R",
                             "the processes of rank R", OPP_NUMBER_U64, 0, 1e15,
                             "a rank number from 0"),
        OPP_OPT_REPEATABLE(0, "set", aa, "NAME=VALUE", "a threshold of the rules (repeatable)",
                           opt_set),
        OPP_OPT_FLAG(0, "thresholds", &aa->thresholds,
                     "print the thresholds (with --set's values) and exit"),
        OPP_OPT_HELP("show this help"),
        OPP_OPT_END(),
    };
    const struct opp_command cmd = {
        .name = "advise",
        .usage = "usage: opprof advise TRACE [options]\n"
                 "\n"
                 "What to try first: findings about the steps of a trace (input pipeline,\n"
                 "host synchronisation, small operators, warm-up and outlier steps, GPU\n"
                 "idle time and launching, allocations, stragglers among ranks), each\n"
                 "with where, how much and what to try, ranked by the time at stake; what\n"
                 "the trace lost is said first. A summary trace's steps are counted, and\n"
                 "the rules that need the calls' times are not run (said).\n"
                 "\n",
        .col = 24,
        .options = options,
    };
    int parsed = opp_options_parse(&cmd, argc, argv, first);
    if (parsed)
        return parsed;
    aa->o.rank = (int64_t)aa->rank;
    if (aa->thresholds &&
        (argc - *first || aa->json_given || aa->step || aa->o.filter_pid || aa->o.filter_rank)) {
        opp_say(PREFIX "--thresholds prints the rules' thresholds and exits: no TRACE, --format, "
                       "--step, --pid or --rank with it, only --set");
        return 2;
    }
    if (!aa->thresholds && argc - *first != 1) {
        opp_say(PREFIX "%s (usage: opprof advise TRACE [options])",
                argc - *first ? "one trace at a time" : "which trace?");
        return 2;
    }
    return 0;
}

/* The exit status of what a view wrote on stdout (its status rc): 1 when
 * not all of it was written (said). */
static int written(int rc)
{
    if (!(rc = opp_out_end(stdout, rc)))
        return 0;
    opp_say(PREFIX "cannot write the output: %s", strerror(-rc));
    return 1;
}

/* The step's check and the output, of the advice on trace: the exit status. */
static int advice_out(const struct advise_args *aa, const struct opp_model *m, int in_main,
                      const char *trace, struct opp_advice *a)
{
    char msg[512];
    if (opp_step_name_missing(m, &a->step_found, &aa->o, in_main, aa->step, trace, msg,
                              sizeof msg)) {
        opp_say(PREFIX "%s", msg);
        opp_advice_free(a);
        return 2;
    }
    int rc = opp_out_advice(stdout, trace, a, aa->json);
    opp_advice_free(a);
    return written(rc);
}

/* The filters' check against m's processes: 0, or 2 (said). */
static int filters_known(const struct advise_args *aa, const struct opp_model *m)
{
    char err[512];
    struct opp_agg_filter_names names = {.filter_pid = aa->o.filter_pid,
                                         .pid = aa->o.pid,
                                         .filter_rank = aa->o.filter_rank,
                                         .rank = aa->o.rank};
    if (opp_model_filters_known(m, &names, err, sizeof err)) {
        opp_say(PREFIX "%s", err);
        return 2;
    }
    return 0;
}

/* advise through the pass (advise_pass.h): the exit status. */
static int advise_streams(struct advise_args *aa, const char *trace)
{
    enum opp_stream_refused why;
    char err[512];
    int rc;
    struct opp_pass *p = opp_pass_open(&trace, 1, &why, err, sizeof err);
    if (!p && why == OPP_STREAM_SUMMARY_FILE) {
        if (aa->step) { /* its steps are its own, counted */
            opp_summary_refusal(trace, "--step", err, sizeof err);
            opp_say(PREFIX "%s", err);
            return 1;
        }
        p = opp_pass_open_summary(&trace, 1, err, sizeof err);
    }
    struct opp_advise_pass *ap = p ? opp_advise_pass_over(p, err, sizeof err) : NULL;
    if (!ap) {
        opp_pass_free(p);
        opp_say(PREFIX "%s", err);
        return 1;
    }
    const struct opp_model *m = opp_pass_model(p);
    if ((rc = filters_known(aa, m)))
        goto out;
    int in_main = opp_steps_main_process(m, &aa->o, 1);
    struct opp_advice a;
    rc = opp_advise_pass_run(ap, &aa->o, aa->step, aa->th, &a, err, sizeof err);
    if (rc) {
        opp_say(PREFIX "%s", err);
        rc = 1;
    } else {
        rc = advice_out(aa, m, in_main, trace, &a);
    }
out:
    opp_advise_pass_free(ap);
    opp_pass_free(p);
    return rc;
}

int cmd_advise(int argc, char **argv)
{
    struct advise_args aa;
    int first, rc = parse_args(argc, argv, &aa, &first);
    if (rc)
        return rc == 1 ? 0 : rc;
    if (aa.thresholds)
        return written(opp_out_advise_thresholds(stdout, aa.th));
    return advise_streams(&aa, argv[first]);
}
