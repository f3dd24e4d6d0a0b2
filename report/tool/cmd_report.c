/* `opprof report TRACE [options]`: torch.profiler's key_averages() of a trace
 * as a table, CSV or JSON on stdout; warnings about the trace on stderr. */
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "info.h"
#include "tool/cmds.h"
#include "tool/options.h"
#include "tool/report.h"
#include "views/say.h"

#define PREFIX "opprof report: "

/* --gpu, --tree, --by-rank (o->data: the view); --step NAME sets its own. */
static int opt_view(const struct opp_option *o, const char *arg)
{
    struct report_args *ra = o->value;
    ra->views |= 1u << o->data;
    ra->view = &views[o->data];
    return 0;
}

static int opt_sort(const struct opp_option *o, const char *arg)
{
    struct report_args *ra = o->value;
    if (opp_sort_key_parse(arg, &ra->agg.sort)) {
        opp_say(PREFIX "unknown sort key '%s' (one of: %s)", arg, opp_sort_key_list());
        return 2;
    }
    ra->sort_given = 1;
    return 0;
}

static int opt_match(const struct opp_option *o, const char *arg)
{
    struct report_args *ra = o->value; /* given once (opp_options_parse) */
    if (!*arg) {                       /* as the parser refuses a string option given empty */
        opp_say(PREFIX "--match wants REGEX, not ''");
        return 2;
    }
    int e = regcomp(&ra->match, arg, REG_EXTENDED | REG_NOSUB);
    if (e) {
        char why[256];
        regerror(e, &ra->match, why, sizeof why);
        opp_say(PREFIX "--match '%s': %s", arg, why);
        return 2;
    }
    ra->agg.match = &ra->match;
    ra->match_text = arg;
    return 0;
}

static int opt_step(const struct opp_option *o, const char *arg)
{
    if (arg && !arg[0]) {
        opp_say(PREFIX "--step wants an operator name");
        return 2;
    }
    struct report_args *ra = o->value;
    ra->step = arg; /* NULL: the program's own steps (step_stream.h) */
    ra->views |= 1u << VIEW_STEP;
    ra->view = &views[VIEW_STEP];
    return 0;
}

/* --sort's help, from the sort keys (aggregate.h): "sort rows by KEY,
 * descending: self_cpu_time_total (default), ...", then, were some key of
 * unit NONE, "(and torch's ...: not recorded, 0)", in lines of 60 columns. */
static const char *sort_help(char *out, size_t cap)
{
    char text[1024];
    size_t n = 0;
    const char *sep = " ";
    int unrecorded_keys = 0;
    n += (size_t)snprintf(text, sizeof text, "sort rows by KEY, descending:");
    for (int unrecorded = 0; unrecorded < 2; unrecorded++) {
        for (enum opp_sort_key k = 0; opp_sort_key_name(k) && n < sizeof text; k++) {
            enum opp_unit u = opp_sort_key_unit(k);
            if ((u == OPP_UNIT_NONE) != unrecorded)
                continue;
            n += (size_t)snprintf(text + n, sizeof text - n, "%s%s%s", sep, opp_sort_key_name(k),
                                  k == 0                      ? " (default)"
                                  : u == OPP_UNIT_NS_PER_CALL ? " (average)"
                                                              : "");
            sep = ", ";
            unrecorded_keys += unrecorded;
        }
        sep = " (and torch's ";
    }
    if (unrecorded_keys && n < sizeof text)
        snprintf(text + n, sizeof text - n, ": not recorded, 0)");
    opp_help_wrap(out, cap, text, 60);
    return out;
}

/* --by-rank's help, naming the rank variables (info.h), in lines of 60
 * columns. */
static const char *by_rank_help(char *out, size_t cap)
{
    char keys[160], text[512];
    snprintf(text, sizeof text,
             "a column per rank of a multi-process job (%s), the --sort key's value per "
             "operator, min/median/max over the ranks and the slowest rank",
             opp_info_rank_keys_text(keys, sizeof keys, ", "));
    opp_help_wrap(out, cap, text, 60);
    return out;
}

/* 0 to go on, 1 when --help was shown, 2 on a usage error (reported). */
/* A view's option: no argument, its handler told which view. */
#define VIEW_OPT(l, id, h)                                                                         \
    {.type = OPP_OPTION_CALLBACK, .long_name = (l), .value = ra, .help = (h), .fn = opt_view,     \
     .data = (id)}

static int parse_args(int argc, char **argv, struct report_args *ra)
{
    memset(ra, 0, sizeof *ra);
    char sort[1024], by_rank[512];
    const struct opp_option options[] = {
        OPP_OPT_CALLBACK('s', "sort", ra, "KEY", sort_help(sort, sizeof sort), opt_sort),
        OPP_OPT_NUMBER('n', "limit", &ra->agg.limit, "N",
                       "show only the first N rows (--gpu: kernels, default 10;\n"
                       "--tree: call paths; --by-rank: operators)",
                       OPP_NUMBER_SIZE, 1, 1e15, "a positive number of rows"),
        OPP_OPT_FLAG(0, "group-by-shape", &ra->agg.group_by_shape,
                     "one row per name and input shapes"),
        OPP_OPT_FLAG(0, "flops", &ra->out.flops,
                     "add Total FLOPs and GFLOP/s (TFLOP/s) columns to the table:\n"
                     "the rate over CUDA total where the row has GPU time,\n"
                     "else over CPU total"),
        OPP_OPT_CHOICE('f', "format", &ra->format, &ra->format_given, "FMT",
                       "table (default), csv or json", "table", "csv", "json"),
        OPP_OPT_NUMBER_GIVEN(0, "pid", &ra->agg.pid, &ra->agg.filter_pid, "PID",
                             "only the processes with this pid", OPP_NUMBER_U32, 0, UINT32_MAX,
                             "a number"),
        OPP_OPT_NUMBER_GIVEN(0, "tid", &ra->agg.tid, &ra->agg.filter_tid, "TID",
                             "only the threads with this tid (and the GPU work they\n"
                             "launched)",
                             OPP_NUMBER_U32, 0, UINT32_MAX, "a number"),
        OPP_OPT_STRING(0, "lib", &ra->agg.lib, "NAME",
                       "only calls into library NAME (blas, onednn, xnnpack,\n"
                       "cublas, cudnn, nccl, nvtx, cudart, cuda...)"),
        OPP_OPT_FLAG(0, "show-lib", &ra->out.show_lib,
                     "add a Lib column to the table: each row's library"),
        OPP_OPT_NUMBER(0, "group-by-stack", &ra->agg.group_by_stack, "N",
                       "one row per name and its N innermost frames: the\n"
                       "Python frames that called it (OPPROF_STACKS), else its\n"
                       "enclosing operators (a Stack column, outermost first)",
                       OPP_NUMBER_U32, 1, OPP_STACK_MAX,
                       "a depth from 1 to " OPP_DIGITS(OPP_STACK_MAX)),
        OPP_OPT_NUMBER_GIVEN(0, "from", &ra->agg.from_ns, &ra->from_given, "MS",
                             NULL, /* shares --to's line */
                             OPP_NUMBER_MS_NS, 0, 1.8e13, "milliseconds (0 or more)"),
        OPP_OPT_NUMBER_GIVEN(0, "to", &ra->agg.to_ns, &ra->to_given, "MS",
                             "only calls and GPU ops that begin in this window,\n"
                             "milliseconds since the trace's first event",
                             OPP_NUMBER_MS_NS, 0, 1.8e13, "milliseconds (0 or more)"),
        OPP_OPT_CALLBACK(0, "match", ra, "REGEX", "only names that match REGEX (POSIX extended)",
                         opt_match),
        OPP_OPT_FLAG(0, "stream", &ra->stream, NULL), /* shares --no-stream's line */
        OPP_OPT_FLAG(0, "no-stream", &ra->stream,
                     "accepted for old scripts, no effect: every trace is read\n"
                     "in one pass, whatever its size"),
        VIEW_OPT("gpu", VIEW_GPU,
                 "the GPU view: top kernels (calls, time, estimated\n"
                 "theoretical occupancy, launch delay), busy time per\n"
                 "stream, idle share and largest idle gaps per device"),
        VIEW_OPT("tree", VIEW_TREE,
                 "the operator hierarchy merged by call path: calls, self\n"
                 "and total CPU time, share, and CUDA times per path"),
        OPP_OPT_NUMBER(0, "depth", &ra->tree_opts.max_depth, "N",
                       "--tree: show N levels (default: all)", OPP_NUMBER_U32, 1, UINT32_MAX,
                       "a positive number of levels"),
        OPP_OPT_NUMBER(0, "min-share", &ra->tree_opts.min_share_pct, "PCT",
                       "--tree: hide paths under PCT% of the roots' CPU total", OPP_NUMBER_DOUBLE,
                       0, 100, "a percentage from 0 to 100"),
        {.type = OPP_OPTION_CALLBACK,
         .long_name = "step",
         .value = ra,
         .argh = "NAME",
         .flags = OPP_OPTION_OPTARG,
         .fn = opt_step,
         .help = "steps and latency: NAME's calls are the steps when it is\n"
                 "a range (an NVTX range, a torch label or nn.Module), else\n"
                 "each call ends a step (e.g. cudaDeviceSynchronize); with no\n"
                 "NAME, the program's own: ProfilerStep#N, else a torch\n"
                 "program's training iterations (to each optimizer step's\n"
                 "end), else its outermost nn.Module forwards (inferences);\n"
                 "per-step wall, CPU and GPU time: count, mean, p50, p90,\n"
                 "p99, max (JSON: the per-step series too)"},
        OPP_OPT_NUMBER(0, "window", &ra->window_k, "K",
                       "only the K-th window a schedule recorded (OPPROF_SCHEDULE:\n"
                       "a run of consecutive ProfilerStep#N)",
                       OPP_NUMBER_U32, 1, 1000000, "a window number from 1"),
        VIEW_OPT("by-rank", VIEW_BY_RANK, by_rank_help(by_rank, sizeof by_rank)),
        VIEW_OPT("by-process", VIEW_BY_PROCESS,
                 "a line per process: pid, command, calls, CPU total (its\n"
                 "part of the table, which adds every process up) and how\n"
                 "it ended"),
        OPP_OPT_HELP("show this help"),
        OPP_OPT_END(),
    };
    const struct opp_command cmd = {
        .name = "report",
        .usage =
            "usage: opprof report TRACE... [--sort KEY] [--limit N] [--group-by-shape] [--flops]\n"
            "                           [--format table|csv|json] [--pid PID] [--tid TID]\n"
            "                           [--lib NAME] [--show-lib] [--group-by-stack N]\n"
            "                           [--from MS] [--to MS] [--window K] [--match REGEX]\n"
            "       opprof report TRACE --gpu [--limit N] [--pid PID] [--tid TID]\n"
            "       opprof report TRACE --tree [--depth N] [--min-share PCT] [--limit N]\n"
            "                           [--pid PID] [--tid TID]\n"
            "       opprof report TRACE --step [NAME] [--format table|json] [--pid PID] "
            "[--tid TID]\n"
            "       opprof report TRACE --by-rank [--sort KEY] [--limit N] [--format table|json]\n"
            "       opprof report TRACE --by-process [--format table|json]\n"
            "\n"
            "Summarise a trace like torch.profiler's key_averages().table(). Several traces\n"
            "(one per host) are merged onto the first one's clock.\n"
            "\n",
        .col = 24,
        .options = options,
    };
    int first, rc = opp_options_parse(&cmd, argc, argv, &first);
    if (rc)
        return rc;
    ra->out.group_by_shape = ra->agg.group_by_shape;
    ra->out.group_by_stack = (int)ra->agg.group_by_stack;
    if (first >= argc) {
        opp_say(PREFIX "which trace? (usage: opprof report TRACE [options])");
        return 2;
    }
    if (ra->views & (ra->views - 1)) {
        char names[128] = "";
        for (size_t i = 0; i < nviews; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     !i ? "" : i + 1 < nviews ? ", " : " and ", views[i].option);
        opp_say(PREFIX "%s are different views: choose one", names);
        return 2;
    }
    if (ra->view && ra->format_given && !(ra->view->formats & 1u << ra->format)) {
        opp_say(PREFIX "%s", ra->view->other_format);
        return 2;
    }
    if (ra->agg.limit && ra->view && !ra->view->limits) {
        fprintf(stderr, PREFIX "--limit goes with the table, ");
        for (size_t i = 0; i < nviews; i++)
            if (views[i].limits)
                fprintf(stderr, "%s (%s), ", views[i].option, views[i].limits);
        opp_say("not %s", ra->view->option);
        return 2;
    }
    if (ra->view &&
        (ra->agg.group_by_shape || ra->agg.group_by_stack || ra->out.flops || ra->out.show_lib)) {
        opp_say(PREFIX "--group-by-shape, --group-by-stack, --flops and --show-lib go with the "
                       "table, not %s",
                ra->view->option);
        return 2;
    }
    if (ra->sort_given && ra->view && ra->view != &views[VIEW_BY_RANK]) {
        opp_say(PREFIX "--sort goes with the table and --by-rank, not %s", ra->view->option);
        return 2;
    }
    ra->tree_opts.max_paths = ra->agg.limit;
    if ((ra->tree_opts.max_depth || ra->tree_opts.min_share_pct > 0) &&
        ra->view != &views[VIEW_TREE]) {
        opp_say(PREFIX "--depth and --min-share go with --tree");
        return 2;
    }
    if (ra->window_k && (ra->from_given || ra->to_given)) {
        opp_say(PREFIX "--window is a time window already: no --from/--to with it");
        return 2;
    }
    if (ra->from_given || ra->to_given) {
        ra->agg.window = 1;
        if (!ra->to_given)
            ra->agg.to_ns = UINT64_MAX;
        if (ra->agg.from_ns >= ra->agg.to_ns) {
            opp_say(PREFIX "--from must be before --to");
            return 2;
        }
    }
    if ((ra->agg.window || ra->window_k || ra->agg.match || ra->agg.lib) && ra->view &&
        !ra->view->filters) {
        opp_say(PREFIX "--from, --to, --window, --match and --lib go with the table");
        return 2;
    }
    ra->trace = argv[first];
    ra->traces = (const char *const *)argv + first;
    ra->ntraces = (size_t)(argc - first);
    return opp_option_traces_merged("report", ra->traces, ra->ntraces);
}

int cmd_report(int argc, char **argv)
{
    struct report_args ra;
    int rc = parse_args(argc, argv, &ra);
    if (!rc)
        rc = report_streamed(&ra);
    else if (rc == 1)
        rc = 0;
    if (ra.agg.match)
        regfree(&ra.match);
    return rc;
}
