/* `opprof advise TRACE [options]`: findings about a trace ranked by the
 * time at stake (analysis/advise.h), as text or JSON (views/advise_view.h).
 * A full trace is read through the pass (table_stream.h, step_stream.h,
 * gpu_stream.h): memory bounded by the rows, call paths, steps and devices,
 * not by the calls. Every call is loaded for a summary trace (it says what
 * it lacks), a trace the pass cannot read (said), and where advise reads
 * what only the loaded calls have (advise_streams).
 * Exit status: 0 (findings or none), 1 the trace cannot be read or is a
 * summary, 2 usage (a --pid, --rank or --step the trace does not have). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/advise.h"
#include "analysis/gpu_stream.h"
#include "analysis/step_stream.h"
#include "analysis/step_times.h"
#include "analysis/table_stream.h"
#include "tool/cmds.h"
#include "tool/options.h"
#include "views/advise_view.h"

#define PREFIX "opprof advise: "

struct advise_args {
    int json, thresholds;
    const char *step;
    struct opp_agg_opts o;
    double th[OPP_TH_COUNT];
};

static int opt_format(const struct opp_option *o, const char *arg)
{
    if (strcmp(arg, "text") && strcmp(arg, "json")) {
        fprintf(stderr, PREFIX "unknown format '%s' (one of: text, json)\n", arg);
        return 2;
    }
    *(int *)o->value = arg[0] == 'j';
    return 0;
}

static int parse_num(const char *s, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(d))
        return -1;
    *out = d;
    return 0;
}

/* --pid, --rank */
static int opt_id(const struct opp_option *o, const char *arg)
{
    struct opp_agg_opts *agg = o->value;
    double v;
    int pid = !strcmp(o->long_name, "pid");
    if (parse_num(arg, &v) || v != floor(v) || v < 0 || v > (pid ? UINT32_MAX : 1e15)) {
        fprintf(stderr, PREFIX "--%s wants a number, not '%s'\n", o->long_name, arg);
        return 2;
    }
    if (pid) {
        agg->filter_pid = 1;
        agg->pid = (uint32_t)v;
    } else {
        agg->filter_rank = 1;
        agg->rank = (int64_t)v;
    }
    return 0;
}

static int opt_set(const struct opp_option *o, const char *arg)
{
    double *th = o->value, v;
    const char *eq = strchr(arg, '=');
    char name[64];
    enum opp_advise_threshold id;
    if (!eq || (size_t)(eq - arg) >= sizeof name) {
        fprintf(stderr,
                PREFIX "--set wants NAME=VALUE (`opprof advise --thresholds` lists the "
                       "names), not '%s'\n",
                arg);
        return 2;
    }
    memcpy(name, arg, (size_t)(eq - arg));
    name[eq - arg] = 0;
    if (opp_advise_threshold_parse(name, &id)) {
        fprintf(stderr,
                PREFIX "--set: no threshold '%s' (`opprof advise --thresholds` lists "
                       "them)\n",
                name);
        return 2;
    }
    if (parse_num(eq + 1, &v) || v < 0) {
        fprintf(stderr, PREFIX "--set %s wants a number (0 or more), not '%s'\n", name, eq + 1);
        return 2;
    }
    th[id] = v;
    return 0;
}

/* 0 to go on, 1 after --help, 2 on a usage error (said). */
static int parse_args(int argc, char **argv, struct advise_args *aa, int *first)
{
    memset(aa, 0, sizeof *aa);
    for (int i = 0; i < OPP_TH_COUNT; i++)
        aa->th[i] = opp_advise_thresholds[i].value;
    const struct opp_option options[] = {
        OPP_OPT_CALLBACK('f', "format", &aa->json, "FMT", "text (default) or json", opt_format),
        OPP_OPT_STRING(0, "step", &aa->step, "NAME",
                       "the steps are NAME's calls (as `opprof report --step NAME`);\n"
                       "default: the program's own (ProfilerStep#N, optimizer steps,\n"
                       "outermost nn.Module forwards)"),
        OPP_OPT_CALLBACK(0, "pid", &aa->o, "PID",
                         "the process looked at (default: the first, the one\n"
                         "`opprof run` started, when no process is a rank)",
                         opt_id),
        OPP_OPT_CALLBACK(0, "rank", &aa->o, "R", "the processes of rank R", opt_id),
        OPP_OPT_CALLBACK(0, "set", aa->th, "NAME=VALUE", "a threshold of the rules (repeatable)",
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
                 "the trace lost is said first.\n"
                 "\n",
        .col = 24,
        .options = options,
    };
    int parsed = opp_options_parse(&cmd, argc, argv, first);
    if (parsed)
        return parsed;
    if (!aa->thresholds && argc - *first != 1) {
        fprintf(stderr, PREFIX "%s\n", argc - *first ? "one trace at a time" : "which trace?");
        opp_options_usage(&cmd, stderr);
        return 2;
    }
    return 0;
}

/* The step's check and the output, of the advice on trace: the exit status. */
static int advice_out(const struct advise_args *aa, const char *trace, struct opp_advice *a)
{
    if (a->step_unknown) {
        fprintf(stderr,
                PREFIX "--step '%s': no call of that name in %s (`opprof report %s` lists its "
                       "operators and ranges)\n",
                aa->step, trace, trace);
        opp_advice_free(a);
        return 2;
    }
    int rc = opp_out_advice(stdout, trace, a, aa->json);
    opp_advice_free(a);
    if (!rc && fflush(stdout))
        rc = -EIO;
    if (rc)
        fprintf(stderr, PREFIX "cannot write the output: %s\n", strerror(-rc));
    return rc ? 1 : 0;
}

/* The filters' check against m's processes: 0, or 2 (said). */
static int filters_known(const struct advise_args *aa, const char *trace, const struct opp_model *m)
{
    char err[512];
    struct opp_agg_filter_names names = {.filter_pid = aa->o.filter_pid, .pid = aa->o.pid};
    if (opp_model_filters_known(m, &names, err, sizeof err)) {
        fprintf(stderr, PREFIX "%s\n", err);
        return 2;
    }
    int ranked = 0;
    for (size_t p = 0; p < m->nprocs; p++)
        ranked |= m->procs[p].rank == aa->o.rank;
    if (aa->o.filter_rank && !ranked) {
        fprintf(stderr, PREFIX "--rank %" PRId64 ": no process of %s has that rank\n", aa->o.rank,
                trace);
        return 2;
    }
    return 0;
}

/* The passes over one trace that answer advise's rules (opp_advise_src). */
struct advise_pass {
    struct opp_table_stream *table;
    struct opp_step_stream *steps;
    struct opp_gpu_stream *gpu; /* made when a rule asks */
    struct opp_gpu_stats gs;    /* its answer for gs_opts (two rules ask) */
    struct opp_agg_opts gs_opts;
    int have_gs;
    const char *trace;
    char err[512]; /* why -EIO, or why 1 ("": not said) */
};

/* The pass's answer (0, 1 or -1) as opp_advise_src's (0, 1 or -EIO). */
static int got_of(int got)
{
    return got < 0 ? -EIO : got;
}

static int pass_aggregates(void *ctx, const struct opp_agg_opts *o, size_t n, struct opp_agg *out)
{
    struct advise_pass *ap = ctx;
    int got = opp_table_stream_aggregates(ap->table, o, n, out, ap->err, sizeof ap->err);
    if (!got && n && out[0].cpu_mem) {
        /* the CPU memory series is every MEMORY call's (the loaded model's) */
        for (size_t i = 0; i < n; i++)
            opp_agg_free(&out[i]);
        ap->err[0] = 0;
        return 1;
    }
    return got_of(got);
}

static int pass_steps(void *ctx, const struct opp_agg_opts *o, const char *name,
                      struct opp_steps *out, char *what, size_t cap)
{
    struct advise_pass *ap = ctx;
    return got_of(
        opp_step_stream_steps(ap->steps, o, name, out, what, cap, ap->err, sizeof ap->err));
}

static int pass_calltree(void *ctx, const struct opp_agg_opts *o, struct opp_calltree *ct)
{
    struct advise_pass *ap = ctx;
    return got_of(opp_table_stream_calltree(ap->table, o, ct, ap->err, sizeof ap->err));
}

/* A copy of the array from[0..n) of size bytes each into *to: 0 or -ENOMEM. */
static int copy_array(void **to, const void *from, size_t n, size_t size)
{
    *to = NULL;
    if (!n)
        return 0;
    if (!(*to = malloc(n * size)))
        return -ENOMEM;
    memcpy(*to, from, n * size);
    return 0;
}

static int pass_gpu_stats(void *ctx, const struct opp_agg_opts *o, struct opp_gpu_stats *s)
{
    struct advise_pass *ap = ctx;
    if (!ap->have_gs || memcmp(&ap->gs_opts, o, sizeof *o)) {
        if (!ap->gpu && !(ap->gpu = opp_gpu_stream_over(opp_table_stream_pass(ap->table), ap->err,
                                                        sizeof ap->err)))
            return -EIO;
        struct opp_kernel_stats *k = NULL;
        size_t nk;
        opp_gpu_stats_free(&ap->gs);
        ap->have_gs = 0;
        int got = opp_gpu_stream_stats(ap->gpu, o, &ap->gs, &k, &nk, ap->err, sizeof ap->err);
        free(k);
        if (got)
            return got_of(got);
        ap->gs_opts = *o;
        ap->have_gs = 1;
    }
    *s = ap->gs;
    if (copy_array((void **)&s->devs, ap->gs.devs, ap->gs.ndevs, sizeof *s->devs) ||
        copy_array((void **)&s->streams, ap->gs.streams, ap->gs.nstreams, sizeof *s->streams)) {
        opp_gpu_stats_free(s);
        return -ENOMEM;
    }
    return 0;
}

/* Whether a row by stack can show a code line: some call has a code stack
 * (OPPROF_STACKS), or a name has a code line's "): " (the rows grouped by
 * operator stack would show it). */
static int code_lines(struct opp_table_stream *st)
{
    const struct opp_model *m = opp_table_stream_model(st);
    if (opp_table_stream_has_stacks(st))
        return 1;
    for (uint32_t i = 0; i < m->nstrs; i++)
        if (m->strs[i] && strstr(m->strs[i], "): "))
            return 1;
    return 0;
}

static void pass_free(struct advise_pass *ap)
{
    if (ap->have_gs)
        opp_gpu_stats_free(&ap->gs);
    opp_gpu_stream_free(ap->gpu);
    opp_step_stream_free(ap->steps);
    opp_table_stream_free(ap->table);
}

/* advise through the pass: the exit status, or -1 to load every call
 * instead (said where the pass cannot read the trace). */
static int advise_streams(struct advise_args *aa, const char *trace)
{
    struct advise_pass ap = {.trace = trace};
    enum opp_stream_refused why;
    int rc = -1;
    if (!(ap.table = opp_table_stream_open(&trace, 1, &why, ap.err, sizeof ap.err))) {
        if (why == OPP_STREAM_CANNOT) /* an error or a summary: the loaded path says it */
            fprintf(stderr, PREFIX "%s: %s: loading every call\n", trace, ap.err);
        return -1;
    }
    const struct opp_model *m = opp_table_stream_model(ap.table);
    if (!(ap.steps =
              opp_step_stream_over(opp_table_stream_pass(ap.table), ap.err, sizeof ap.err))) {
        fprintf(stderr, PREFIX "%s\n", ap.err);
        rc = 1;
        goto out;
    }
    if ((rc = filters_known(aa, trace, m)))
        goto out;
    opp_steps_main_process(m, &aa->o, 1);
    const struct opp_advise_src src = {.ctx = &ap,
                                       .aggregates = pass_aggregates,
                                       .steps = pass_steps,
                                       .calltree = pass_calltree,
                                       .gpu_stats = pass_gpu_stats,
                                       .first_ns = opp_table_stream_first_ns(ap.table),
                                       .code_lines = code_lines(ap.table)};
    struct opp_advice a;
    rc = opp_advise_src(m, &src, &aa->o, aa->step, aa->th, &a);
    if (rc == 1) {
        if (ap.err[0])
            fprintf(stderr, PREFIX "%s: %s: loading every call\n", trace, ap.err);
        rc = -1;
    } else if (rc) {
        fprintf(stderr, PREFIX "%s\n", rc == -EIO ? ap.err : strerror(-rc));
        rc = 1;
    } else {
        rc = advice_out(aa, trace, &a);
    }
out:
    pass_free(&ap);
    return rc;
}

int cmd_advise(int argc, char **argv)
{
    struct advise_args aa;
    int first, rc = parse_args(argc, argv, &aa, &first);
    if (rc)
        return rc == 1 ? 0 : rc;
    if (aa.thresholds)
        return opp_out_advise_thresholds(stdout, aa.th) ? 1 : 0;
    const char *trace = argv[first];
    struct opp_agg_opts given = aa.o;
    if ((rc = advise_streams(&aa, trace)) >= 0)
        return rc;
    aa.o = given; /* as the loaded model finds the main process */
    char err[512];
    struct opp_model *m = opp_model_load(trace, err, sizeof err);
    if (!m) {
        fprintf(stderr, PREFIX "%s\n", err);
        return 1;
    }
    if (opp_model_needs_calls(m, "advise", err, sizeof err)) {
        fprintf(stderr, PREFIX "%s: %s\n", trace, err);
        opp_model_free(m);
        return 1;
    }
    if ((rc = filters_known(&aa, trace, m))) {
        opp_model_free(m);
        return rc;
    }
    opp_steps_main_process(m, &aa.o, 1);
    struct opp_advice a;
    rc = opp_advise(m, &aa.o, aa.step, aa.th, &a);
    opp_model_free(m);
    if (rc) {
        fprintf(stderr, PREFIX "%s\n", strerror(-rc));
        return 1;
    }
    return advice_out(&aa, trace, &a);
}
