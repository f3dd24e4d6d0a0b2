/* `opprof report TRACE [options]`: torch.profiler's key_averages() of a trace
 * as a table, CSV or JSON on stdout; warnings about the trace on stderr. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>
#include <regex.h>

#include "analysis/aggregate.h"
#include "analysis/gpu_stats.h"
#include "analysis/model.h"
#include "tool/cli.h"
#include "tool/cmds.h"
#include "views/output.h"
#include "views/ranks.h"
#include "views/steps.h"
#include "views/tree_view.h"

#define PREFIX "opprof report: "

enum format { FMT_TABLE, FMT_CSV, FMT_JSON };

struct report_args {
    const char *trace;         /* the first */
    const char *const *traces; /* every trace named: one per host, merged */
    size_t ntraces;
    enum format format;
    int format_given;
    int gpu;  /* --gpu: the GPU view */
    int tree; /* --tree: the call-path tree */
    int by_rank; /* --by-rank: a column per rank */
    const char *step; /* --step NAME: steps and latency */
    unsigned long window_k; /* --window K: the K-th window a schedule recorded (1..) */
    struct opp_tree_opts tree_opts;
    struct opp_agg_opts agg;
    struct opp_out_opts out;
    int from_given, to_given;
    regex_t match; /* agg.match points here when --match was given */
};

static void usage(FILE *f)
{
    fputs("usage: opprof report TRACE... [--sort KEY] [--limit N] [--group-by-shape] [--flops]\n"
          "                           [--format table|csv|json] [--pid PID] [--tid TID]\n"
          "                           [--lib NAME] [--show-lib] [--group-by-stack N]\n"
          "                           [--from MS] [--to MS] [--match REGEX]\n"
          "       opprof report TRACE --gpu [--limit N] [--pid PID] [--tid TID]\n"
          "       opprof report TRACE --tree [--depth N] [--min-share PCT] [--pid PID] [--tid TID]\n"
          "       opprof report TRACE --step NAME [--format table|json] [--pid PID] [--tid TID]\n"
          "       opprof report TRACE --by-rank [--sort KEY] [--limit N] [--format table|json]\n"
          "\n"
          "Summarise a trace like torch.profiler's key_averages().table(). Several traces\n"
          "(one per host) are merged onto the first one's clock.\n"
          "\n"
          "  -s, --sort KEY        sort rows by KEY, descending: self_cpu_time_total (default),\n"
          "                        cpu_time_total, cpu_time (average), count, flops,\n"
          "                        self_cuda_time_total, cuda_time_total, cuda_time (average),\n"
          "                        self_cuda_memory_usage, cuda_memory_usage (and torch's\n"
          "                        cpu_memory_usage, self_cpu_memory_usage: not recorded, 0)\n"
          "  -n, --limit N         show only the first N rows (--gpu: kernels, default 10)\n"
          "      --group-by-shape  one row per name and input shapes\n"
          "      --flops           add Total FLOPs and GFLOP/s (TFLOP/s) columns to the table:\n"
          "                        the rate over CUDA total where the row has GPU time,\n"
          "                        else over CPU total\n"
          "  -f, --format FMT      table (default), csv or json\n"
          "      --pid PID         only the processes with this pid\n"
          "      --tid TID         only the threads with this tid (and the GPU work they\n"
          "                        launched)\n"
          "      --lib NAME        only calls into library NAME (blas, onednn, xnnpack,\n"
          "                        cublas, cudnn, nccl, nvtx, cudart, cuda...)\n"
          "      --show-lib        add a Lib column to the table: each row's library\n"
          "      --group-by-stack N  one row per name and its N innermost enclosing\n"
          "                        operators (a Stack column, outermost first)\n"
          "      --from MS, --to MS  only calls and GPU ops that begin in this window,\n"
          "                        milliseconds since the trace's first event\n"
          "      --match REGEX     only names that match REGEX (POSIX extended)\n"
          "      --gpu             the GPU view: top kernels (calls, time, estimated\n"
          "                        theoretical occupancy, launch delay), busy time per\n"
          "                        stream, idle share and largest idle gaps per device\n"
          "      --tree            the operator hierarchy merged by call path: calls, self\n"
          "                        and total CPU time, share, and CUDA times per path\n"
          "      --depth N         --tree: show N levels (default: all)\n"
          "      --min-share PCT   --tree: hide paths under PCT%% of the roots' CPU total\n"
          "      --step NAME       steps and latency: NAME's calls are the steps when it is\n"
          "                        an NVTX range (e.g. train_step), else each call ends a\n"
          "                        step (e.g. cudaDeviceSynchronize); per-step wall, CPU and\n"
          "                        GPU time: count, mean, p50, p90, p99, max (JSON: the\n"
          "                        per-step series too)\n"
          "      --window K        only the K-th window a schedule recorded (OPPROF_SCHEDULE:\n"
          "                        a run of consecutive ProfilerStep#N)\n"
          "      --by-rank         a column per rank of a multi-process job (RANK,\n"
          "                        OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID), the --sort\n"
          "                        key's value per operator, min/median/max over the ranks\n"
          "                        and the slowest rank\n"
          "  -h, --help            show this help\n",
          f);
}

/* An unsigned decimal no larger than max; 0 or -1. */
static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
    if (!s[0] || s[0] == '-' || s[0] == '+')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max)
        return -1;
    *out = v;
    return 0;
}

/* 0 to go on, 1 when --help was shown, 2 on a usage error (reported). */
static int parse_args(int argc, char **argv, struct report_args *ra)
{
    enum { OPT_GROUP = 256, OPT_FLOPS, OPT_PID, OPT_TID, OPT_GPU, OPT_LIB, OPT_SHOW_LIB,
           OPT_TREE, OPT_DEPTH, OPT_SHARE, OPT_STEP, OPT_BY_RANK, OPT_STACK, OPT_FROM, OPT_TO, OPT_WINDOW,
           OPT_MATCH };
    static const struct option opts[] = {
        {"sort", required_argument, NULL, 's'},
        {"limit", required_argument, NULL, 'n'},
        {"group-by-shape", no_argument, NULL, OPT_GROUP},
        {"flops", no_argument, NULL, OPT_FLOPS},
        {"format", required_argument, NULL, 'f'},
        {"pid", required_argument, NULL, OPT_PID},
        {"tid", required_argument, NULL, OPT_TID},
        {"gpu", no_argument, NULL, OPT_GPU},
        {"lib", required_argument, NULL, OPT_LIB},
        {"show-lib", no_argument, NULL, OPT_SHOW_LIB},
        {"tree", no_argument, NULL, OPT_TREE},
        {"depth", required_argument, NULL, OPT_DEPTH},
        {"min-share", required_argument, NULL, OPT_SHARE},
        {"step", required_argument, NULL, OPT_STEP},
        {"group-by-stack", required_argument, NULL, OPT_STACK},
        {"from", required_argument, NULL, OPT_FROM},
        {"window", required_argument, NULL, OPT_WINDOW},
        {"to", required_argument, NULL, OPT_TO},
        {"match", required_argument, NULL, OPT_MATCH},
        {"by-rank", no_argument, NULL, OPT_BY_RANK},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(ra, 0, sizeof *ra);
    optind = 0; /* glibc: start afresh (cmd_report may run more than once) */
    opterr = 0; /* our own messages */
    int c;
    unsigned long long v;
    while ((c = getopt_long(argc, argv, ":s:n:f:h", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (opp_sort_key_parse(optarg, &ra->agg.sort)) {
                fprintf(stderr, PREFIX "unknown sort key '%s' (one of: %s)\n", optarg,
                        opp_sort_key_list());
                return 2;
            }
            break;
        case 'n':
            if (parse_uint(optarg, SIZE_MAX, &v) || v == 0) {
                fprintf(stderr, PREFIX "--limit wants a positive number of rows, not '%s'\n",
                        optarg);
                return 2;
            }
            ra->agg.limit = (size_t)v;
            break;
        case OPT_GROUP:
            ra->agg.group_by_shape = ra->out.group_by_shape = 1;
            break;
        case OPT_FLOPS:
            ra->out.flops = 1;
            break;
        case OPT_GPU:
            ra->gpu = 1;
            break;
        case OPT_LIB:
            ra->agg.lib = optarg;
            break;
        case OPT_SHOW_LIB:
            ra->out.show_lib = 1;
            break;
        case OPT_TREE:
            ra->tree = 1;
            break;
        case OPT_BY_RANK:
            ra->by_rank = 1;
            break;
        case OPT_DEPTH:
            if (parse_uint(optarg, UINT32_MAX, &v) || v == 0) {
                fprintf(stderr, PREFIX "--depth wants a positive number of levels, not '%s'\n",
                        optarg);
                return 2;
            }
            ra->tree_opts.max_depth = (uint32_t)v;
            break;
        case OPT_SHARE: {
            char *end;
            errno = 0;
            double d = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(d >= 0 && d <= 100)) {
                fprintf(stderr, PREFIX "--min-share wants a percentage from 0 to 100, not '%s'\n",
                        optarg);
                return 2;
            }
            ra->tree_opts.min_share_pct = d;
            break;
        }
        case OPT_STACK:
            if (parse_uint(optarg, OPP_STACK_MAX, &v) || v == 0) {
                fprintf(stderr, PREFIX "--group-by-stack wants a depth from 1 to %d, not '%s'\n",
                        OPP_STACK_MAX, optarg);
                return 2;
            }
            ra->agg.group_by_stack = ra->out.group_by_stack = (uint32_t)v;
            break;
        case OPT_WINDOW:
            if (parse_uint(optarg, 1000000, &v) || v == 0) {
                fprintf(stderr, PREFIX "--window wants a window number from 1, not '%s'\n", optarg);
                return 2;
            }
            ra->window_k = (unsigned long)v;
            break;
        case OPT_FROM:
        case OPT_TO: {
            char *end;
            errno = 0;
            double d = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(d >= 0 && d < 1.8e13)) {
                fprintf(stderr, PREFIX "--%s wants milliseconds (0 or more), not '%s'\n",
                        c == OPT_FROM ? "from" : "to", optarg);
                return 2;
            }
            uint64_t ns = (uint64_t)llround(d * 1e6);
            if (c == OPT_FROM) {
                ra->from_given = 1;
                ra->agg.from_ns = ns;
            } else {
                ra->to_given = 1;
                ra->agg.to_ns = ns;
            }
            break;
        }
        case OPT_MATCH: {
            if (ra->agg.match) {
                fprintf(stderr, PREFIX "one --match at a time (use REGEX|REGEX)\n");
                return 2;
            }
            int e = regcomp(&ra->match, optarg, REG_EXTENDED | REG_NOSUB);
            if (e) {
                char why[256];
                regerror(e, &ra->match, why, sizeof why);
                fprintf(stderr, PREFIX "--match '%s': %s\n", optarg, why);
                return 2;
            }
            ra->agg.match = &ra->match;
            break;
        }
        case OPT_STEP:
            if (!optarg[0]) {
                fprintf(stderr, PREFIX "--step wants an operator name\n");
                return 2;
            }
            ra->step = optarg;
            break;
        case 'f':
            ra->format_given = 1;
            if (!strcmp(optarg, "table"))
                ra->format = FMT_TABLE;
            else if (!strcmp(optarg, "csv"))
                ra->format = FMT_CSV;
            else if (!strcmp(optarg, "json"))
                ra->format = FMT_JSON;
            else {
                fprintf(stderr, PREFIX "unknown format '%s' (one of: table, csv, json)\n", optarg);
                return 2;
            }
            break;
        case OPT_PID:
        case OPT_TID:
            if (parse_uint(optarg, UINT32_MAX, &v)) {
                fprintf(stderr, PREFIX "--%s wants a number, not '%s'\n",
                        c == OPT_PID ? "pid" : "tid", optarg);
                return 2;
            }
            if (c == OPT_PID) {
                ra->agg.filter_pid = 1;
                ra->agg.pid = (uint32_t)v;
            } else {
                ra->agg.filter_tid = 1;
                ra->agg.tid = (uint32_t)v;
            }
            break;
        case 'h':
            usage(stdout);
            return 1;
        default: /* ':' or an unknown option */
            return opp_cli_bad_option("report", c, argv);
        }
    }
    if (optind >= argc) {
        fprintf(stderr, PREFIX "which trace? (usage: opprof report TRACE [options])\n");
        return 2;
    }
    if (argc - optind > 255) {
        fprintf(stderr, PREFIX "at most 255 traces at a time\n");
        return 2;
    }    if (ra->gpu + ra->tree + (ra->step != NULL) + ra->by_rank > 1) {
        fprintf(stderr, PREFIX "--gpu, --tree, --step and --by-rank are different views: choose one\n");
        return 2;
    }
    if (ra->by_rank && ra->format == FMT_CSV) {
        fprintf(stderr, PREFIX "--by-rank writes a table or JSON\n");
        return 2;
    }
    if ((ra->tree_opts.max_depth || ra->tree_opts.min_share_pct > 0) && !ra->tree) {
        fprintf(stderr, PREFIX "--depth and --min-share go with --tree\n");
        return 2;
    }
    if (ra->tree && ra->format_given && ra->format != FMT_TABLE) {
        fprintf(stderr, PREFIX "--tree is a text view\n");
        return 2;
    }
    if (ra->step && ra->format == FMT_CSV) {
        fprintf(stderr, PREFIX "--step writes a table or JSON\n");
        return 2;
    }
    if (ra->window_k && (ra->from_given || ra->to_given)) {
        fprintf(stderr, PREFIX "--window is a time window already: no --from/--to with it\n");
        return 2;
    }
    if (ra->from_given || ra->to_given) {
        ra->agg.window = 1;
        if (!ra->to_given)
            ra->agg.to_ns = UINT64_MAX;
        if (ra->agg.from_ns >= ra->agg.to_ns) {
            fprintf(stderr, PREFIX "--from must be before --to\n");
            return 2;
        }
    }
    if ((ra->agg.window || ra->window_k || ra->agg.match || ra->agg.group_by_stack) &&
        (ra->gpu || ra->tree || ra->step)) {
        fprintf(stderr, PREFIX "--from, --to, --window, --match and --group-by-stack go with the table\n");
        return 2;
    }
    if (ra->gpu && ra->format_given && ra->format != FMT_TABLE) {
        fprintf(stderr, PREFIX "--gpu is a text view (the JSON report has its numbers in \"gpu\")\n");
        return 2;
    }
    ra->trace = argv[optind];
    ra->traces = (const char *const *)argv + optind;
    ra->ntraces = (size_t)(argc - optind);
    return 0;
}

static void warn_about(const struct opp_model *m)
{
    if (m->sum.warning[0])
        fprintf(stderr, PREFIX "warning: %s\n", m->sum.warning);
    if (m->dropped)
        fprintf(stderr, PREFIX "warning: %" PRIu64 " records were dropped (buffers full)\n",
                m->dropped);
    if (m->open_events)
        fprintf(stderr,
                PREFIX "warning: %" PRIu64 " calls were still running when their process died: "
                       "shown with the process's end time\n",
                m->open_events);
    if (m->gpu.dropped_cupti || m->gpu.dropped_ours)
        fprintf(stderr,
                PREFIX "warning: GPU activity records were lost: %" PRIu64 " dropped by CUPTI, "
                       "%" PRIu64 " by opprof (buffers full)\n",
                m->gpu.dropped_cupti, m->gpu.dropped_ours);
}

/* The GPU view; one line instead when the trace has no GPU records. */
static int gpu_view(const struct report_args *ra, const struct opp_model *m)
{
    if (!opp_model_has_gpu(m)) {
        printf("%s has no GPU activity records\n", ra->trace);
        return 0;
    }
    struct opp_gpu_stats s;
    struct opp_kernel_stats *k;
    size_t nk;
    int rc = opp_gpu_stats(m, &ra->agg, &s);
    if (rc)
        return rc;
    rc = opp_kernel_stats(m, &ra->agg, &k, &nk);
    if (!rc) {
        rc = opp_out_gpu(stdout, m, &s, k, nk, ra->agg.limit ? ra->agg.limit : 10);
        free(k);
    }
    opp_gpu_stats_free(&s);
    return rc;
}

static int tree_view(const struct report_args *ra, const struct opp_model *m)
{
    struct opp_calltree ct;
    int rc = opp_calltree_build(m, &ra->agg, &ct);
    if (rc)
        return rc;
    rc = opp_out_tree(stdout, m, &ct, &ra->tree_opts);
    opp_calltree_free(&ct);
    return rc;
}

static int step_view(const struct report_args *ra, const struct opp_model *m)
{
    struct opp_steps st;
    int rc = opp_steps_find(m, &ra->agg, ra->step, &st);
    if (rc)
        return rc;
    rc = opp_out_steps(stdout, ra->step, &st, ra->format == FMT_JSON);
    opp_steps_free(&st);
    return rc;
}

/* The key_averages report in the chosen format. */
static int key_averages(struct report_args *ra, const struct opp_model *m)
{
    struct opp_agg agg;
    struct opp_gpu_stats gs;
    int rc = opp_aggregate(m, &ra->agg, &agg);
    if (rc)
        return rc;
    if (ra->format == FMT_JSON && opp_model_has_gpu(m) && !m->summary) {
        rc = opp_gpu_stats(m, &ra->agg, &gs);
        if (rc) {
            opp_agg_free(&agg);
            return rc;
        }
        ra->out.gpu = &gs;
    }
    switch (ra->format) {
    case FMT_TABLE:
        rc = opp_out_table(stdout, &agg, &ra->out);
        break;
    case FMT_CSV:
        rc = opp_out_csv(stdout, &agg, &ra->out);
        break;
    case FMT_JSON:
        rc = opp_out_json(stdout, ra->trace, m, &agg, &ra->out);
        break;
    }
    if (ra->out.gpu)
        opp_gpu_stats_free(&gs);
    ra->out.gpu = NULL;
    opp_agg_free(&agg);
    return rc;
}

static int report(struct report_args *ra);

int cmd_report(int argc, char **argv)
{
    struct report_args ra;
    int rc = parse_args(argc, argv, &ra);
    if (!rc)
        rc = report(&ra);
    else if (rc == 1)
        rc = 0;
    if (ra.agg.match)
        regfree(&ra.match);
    return rc;
}

static int report(struct report_args *rap)
{
    struct report_args ra = *rap;
    int rc;

    char err[512];
    struct opp_model *m = opp_model_load_many(ra.traces, ra.ntraces, err, sizeof err);
    if (!m) {
        fprintf(stderr, PREFIX "%s\n", err);
        return 1;
    }
    if (m->summary) {
        const char *what = ra.gpu          ? "--gpu (its timeline)"
                            : ra.step      ? "--step"
                            : ra.agg.window ? "--from/--to"
                            : ra.agg.filter_tid ? "--tid (it keeps no threads)"
                                                : NULL;
        if (what && opp_model_needs_calls(m, what, err, sizeof err)) {
            fprintf(stderr, PREFIX "%s: %s\n", ra.trace, err);
            opp_model_free(m);
            return 1;
        }
    }
    if (ra.window_k && m->summary) { /* windows are numbered in the file */
        uint32_t nw = 0;
        for (size_t i = 0; i < m->nthreads; i++)
            for (size_t k = 0; m->threads[i].stat && k < m->threads[i].nevents; k++)
                if (m->threads[i].stat[k].window > nw)
                    nw = m->threads[i].stat[k].window;
        if (ra.window_k > nw) {
            fprintf(stderr, PREFIX "%s has %u recorded window%s (a schedule's active runs of "
                                   "steps), not %lu\n",
                    ra.trace, nw, nw == 1 ? "" : "s", ra.window_k);
            opp_model_free(m);
            return 1;
        }
        ra.agg.sched_window = (uint32_t)ra.window_k;
    } else if (ra.window_k) {
        struct opp_window *w;
        size_t nw;
        if (opp_profiler_windows(m, &w, &nw)) {
            fprintf(stderr, PREFIX "out of memory\n");
            opp_model_free(m);
            return 1;
        }
        if (ra.window_k > nw) {
            fprintf(stderr, PREFIX "%s has %zu recorded window%s (a schedule's runs of "
                                   "ProfilerStep#N), not %lu\n",
                    ra.trace, nw, nw == 1 ? "" : "s", ra.window_k);
            free(w);
            opp_model_free(m);
            return 1;
        }
        uint64_t first = opp_model_first_ns(m);
        const struct opp_window *k = &w[ra.window_k - 1];
        ra.agg.window = 1;
        ra.agg.from_ns = k->begin_ns - first;
        ra.agg.to_ns = k->end_ns - first + 1;
        fprintf(stderr, PREFIX "window %lu: steps %" PRIu64 " to %" PRIu64 "\n", ra.window_k,
                k->first_step, k->last_step);
        free(w);
    }
    rc = ra.gpu ? gpu_view(&ra, m)
         : ra.tree ? tree_view(&ra, m)
         : ra.step ? step_view(&ra, m)
         : ra.by_rank ? opp_out_by_rank(stdout, m, &ra.agg, ra.format == FMT_JSON)
                   : key_averages(&ra, m);
    if (rc == -ENOMEM || rc == -ENOENT) {
        if (rc == -ENOENT)
            fprintf(stderr, PREFIX "no process of %s has a rank (none had RANK, "
                                   "OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID set)\n",
                    ra.trace);
        else
            fprintf(stderr, PREFIX "out of memory\n");
        opp_model_free(m);
        return 1;
    }
    if (!rc && fflush(stdout))
        rc = -errno;
    if (rc) {
        fprintf(stderr, PREFIX "cannot write the report: %s\n", strerror(-rc));
        rc = 1;
    } else {
        warn_about(m);
    }
    opp_model_free(m);
    return rc;
}
