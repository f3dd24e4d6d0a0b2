/* `opprof diff A B [options]`: two traces compared by operator and kernel
 * (analysis/diff.h) as a table or JSON (views/diff_view.h); with --fail-above, a CI gate: exit 1 when the
 * total or an operator slowed by more than a percentage. Exit codes: 0 ok,
 * 1 regression, 2 usage, 3 a trace cannot be read or the output written. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "analysis/model.h"
#include "analysis/pass.h"
#include "analysis/table_stream.h"
#include "tool/cmds.h"
#include "tool/options.h"
#include "views/diff_view.h"
#include "views/fmt.h"
#include "views/out_end.h"
#include "views/say.h"

#define PREFIX "opprof diff: "
#define MAX_OPS 64
#define EXIT_REGRESSION 1
#define EXIT_USAGE 2
#define EXIT_TROUBLE 3

struct diff_args {
    const char *a, *b;
    int json;
    size_t limit;
    const char *ops[MAX_OPS];
    struct opp_diff_gate gate; /* gate.pct NAN: no gate */
    int floor_given;           /* --min-us or --min-calls */
    int by_shape;              /* --by: 1 shape, 0 name, -1 not given */
    struct opp_diff_opts o;
};

static int opt_metric(const struct opp_option *o, const char *arg)
{
    if (opp_diff_metric_parse(arg, o->value)) {
        opp_say(PREFIX "unknown metric '%s' (one of: self_cpu, cpu_total, "
                       "self_cuda, cuda_total)",
                arg);
        return 2;
    }
    return 0;
}

static int opt_by(const struct opp_option *o, const char *arg)
{
    int *by_shape = o->value;
    if (!strcmp(arg, "shape")) {
        *by_shape = 1;
    } else if (!strcmp(arg, "name")) {
        *by_shape = 0;
    } else {
        opp_say(PREFIX "--by wants name or shape, not '%s'", arg);
        return 2;
    }
    return 0;
}

static int opt_same(const struct opp_option *o, const char *arg)
{
    struct opp_diff_opts *d = o->value;
    char buf[64];
    const char *comma = strchr(arg, ',');
    size_t len = comma ? (size_t)(comma - arg) : 0;
    if (!comma || len >= sizeof buf) {
        opp_say(PREFIX "--same wants PCT,US (e.g. 1,1), not '%s'", arg);
        return 2;
    }
    memcpy(buf, arg, len);
    buf[len] = 0;
    double us;
    if (opp_option_number(buf, 0, DBL_MAX, 0, &d->same_pct) ||
        opp_option_number(comma + 1, 0, DBL_MAX, 0, &us)) {
        opp_say(PREFIX "--same wants PCT,US (e.g. 1,1), not '%s'", arg);
        return 2;
    }
    d->same_ns = us * 1000.0;
    d->same_given = 1;
    return 0;
}

static int opt_op(const struct opp_option *o, const char *arg)
{
    struct diff_args *da = o->value;
    if (!arg[0] || da->gate.nnames == MAX_OPS) {
        opp_say(PREFIX "--op wants an operator name (at most %d)", MAX_OPS);
        return 2;
    }
    da->ops[da->gate.nnames++] = arg;
    return 0;
}

/* 0 to go on, 1 after --help, 2 on a usage error (reported). */
static int parse_args(int argc, char **argv, struct diff_args *da)
{
    memset(da, 0, sizeof *da);
    da->gate.pct = NAN;
    da->by_shape = -1;
    da->gate.names = da->ops;
    da->gate.min_ns = OPP_DIFF_GATE_MIN_US * 1000.0;
    da->gate.min_calls = OPP_DIFF_GATE_MIN_CALLS;
    const struct opp_option options[] = {
        OPP_OPT_CALLBACK('m', "metric", &da->o.metric, "M",
                         "self_cpu (default), cpu_total, self_cuda, cuda_total; kernel,\n"
                         "copy and memset rows compare their device time under a CPU\n"
                         "metric. The total is the Self CPU (CUDA) time total",
                         opt_metric),
        OPP_OPT_CALLBACK(0, "by", &da->by_shape, "KEY",
                         "name (default) or shape: one row per name and input shapes", opt_by),
        OPP_OPT_FLAG(0, "group-by-shape", &da->o.group_by_shape, "the same as --by shape"),
        OPP_OPT_CHOICE('f', "format", &da->json, NULL, "FMT", "table (default) or json", "table",
                       "json"),
        OPP_OPT_NUMBER('n', "limit", &da->limit, "N", "show only the first N rows", OPP_NUMBER_SIZE,
                       1, 1e15, "a positive number of rows"),
        OPP_OPT_CALLBACK(0, "same", &da->o, "PCT,US",
                         "a change is none when its size is at most PCT% of A's\n"
                         "value or US microseconds, whichever is larger (default 1,1)",
                         opt_same),
        OPP_OPT_NUMBER(0, "fail-above", &da->gate.pct, "PCT",
                       "exit 1 when the total, or any operator, got slower (beyond\n"
                       "--same) by more than PCT%; one line names the worst",
                       OPP_NUMBER_DOUBLE, 0, DBL_MAX, "a percentage (0 or more)"),
        OPP_OPT_REPEATABLE(0, "op", da, "NAME",
                           "with --fail-above: check only these operators (repeatable),\n"
                           "not the total and every operator present in both traces; a\n"
                           "named operator only in B counts as slower without bound",
                           opt_op),
        OPP_OPT_NUMBER_GIVEN(
            0, "min-us", &da->gate.min_ns, &da->floor_given, "US",
            "with --fail-above: an operator under US microseconds of\n"
            "the metric in B cannot fail the gate (default " OPP_DIGITS(OPP_DIFF_GATE_MIN_US) ")",
            OPP_NUMBER_US_NS, 0, DBL_MAX, "microseconds (0 or more)"),
        OPP_OPT_NUMBER_GIVEN(0, "min-calls", &da->gate.min_calls, &da->floor_given, "N",
                             "with --fail-above: nor one of fewer than N calls in B\n"
                             "(default " OPP_DIGITS(OPP_DIFF_GATE_MIN_CALLS) ")",
                             OPP_NUMBER_U64, 0, 1e15, "a number of calls (0 or more)"),
        OPP_OPT_HELP("show this help"),
        OPP_OPT_END(),
    };
    const struct opp_command cmd = {
        .name = "diff",
        .usage = "usage: opprof diff A.trace B.trace [--metric M] [--by name|shape] "
                 "[--format table|json]\n"
                 "                 [--limit N] [--same PCT,US]\n"
                 "                 [--fail-above PCT [--op NAME]... [--min-us US] [--min-calls N]]\n"
                 "\n"
                 "Compare two traces by operator and kernel: calls, self and total CPU and CUDA\n"
                 "time in each, and the change of one metric from A to B with its percent; each\n"
                 "row classed added (only in B), removed (only in A), slower, faster or same;\n"
                 "rows by the size of the change.\n"
                 "\n",
        .epilogue = "\n"
                    "Exit status: 0 ok, 1 a regression above --fail-above, 2 wrong arguments,\n"
                    "3 a trace could not be read or the output written.\n",
        .col = 22,
        .options = options,
    };
    int first, rc = opp_options_parse(&cmd, argc, argv, &first);
    if (rc)
        return rc;
    if (argc - first != 2) {
        opp_say(PREFIX "%s (usage: opprof diff A.trace B.trace [options])",
                argc - first < 2 ? "which two traces?" : "two traces, no more");
        return 2;
    }
    if (da->by_shape == 0 && da->o.group_by_shape) {
        opp_say(PREFIX "--by name and --group-by-shape say different things: give one");
        return 2;
    }
    if (da->by_shape == 1)
        da->o.group_by_shape = 1;
    if ((da->gate.nnames || da->floor_given) && isnan(da->gate.pct)) {
        opp_say(PREFIX "--op, --min-us and --min-calls go with --fail-above");
        return 2;
    }
    da->a = argv[first];
    da->b = argv[first + 1];
    return 0;
}

/* One trace compared: its key_averages added up in one pass over it
 * (table_stream.h; a summary trace's nodes as counted calls); the rows
 * point into st's model. */
struct side {
    struct opp_pass *p;
    struct opp_table_stream *st;
    struct opp_agg agg;
    int gpu;
};

/* Of s's torch operator rows (by shape): 0 none, 1 none with input
 * shapes (a lean trace: OPPROF_TORCH=lean records none), 2 some with. */
static int side_torch_shapes(const struct side *s)
{
    int got = 0;
    for (size_t i = 0; i < s->agg.nrows && got < 2; i++)
        if (!strncmp(s->agg.rows[i].key, "aten::", 6))
            got = s->agg.rows[i].shapes.n ? 2 : 1;
    return got;
}

static void side_free(struct side *s)
{
    opp_agg_free(&s->agg);
    opp_table_stream_free(s->st);
    opp_pass_free(s->p);
}

/* 0, or -1 (said). */
static int side_read(const char *path, const struct opp_diff_opts *o, struct side *s)
{
    char err[512];
    enum opp_stream_refused why;
    struct opp_agg_opts ao = {.group_by_shape = o->group_by_shape};
    const struct opp_model *m;
    memset(s, 0, sizeof *s);
    s->p = opp_pass_open(&path, 1, &why, err, sizeof err);
    if (!s->p && why == OPP_STREAM_SUMMARY_FILE)
        s->p = opp_pass_open_summary(&path, 1, err, sizeof err);
    if (!s->p || !(s->st = opp_table_stream_over(s->p, err, sizeof err)) ||
        opp_table_stream_aggregate(s->st, &ao, &s->agg, err, sizeof err)) {
        opp_say(PREFIX "%s", err);
        side_free(s);
        return -1;
    }
    m = opp_pass_model(s->p);
    s->gpu = opp_model_has_gpu(m);
    if (m->sum.warning[0])
        opp_say(PREFIX "warning: %s: %s", path, m->sum.warning);
    return 0;
}

int cmd_diff(int argc, char **argv)
{
    struct diff_args da;
    int rc = parse_args(argc, argv, &da);
    if (rc)
        return rc == 1 ? 0 : EXIT_USAGE;
    struct side a, b;
    if (side_read(da.a, &da.o, &a))
        return EXIT_TROUBLE;
    if (side_read(da.b, &da.o, &b)) {
        side_free(&a);
        return EXIT_TROUBLE;
    }
    if ((da.o.metric == OPP_DIFF_SELF_CUDA || da.o.metric == OPP_DIFF_CUDA_TOTAL) && !a.gpu &&
        !b.gpu) { /* not a comparison of zeros */
        opp_say(PREFIX "--metric %s: neither trace has GPU work (kernels, copies, sets)",
                opp_diff_metric_name(da.o.metric));
        side_free(&a);
        side_free(&b);
        return EXIT_USAGE;
    }
    int sa = da.o.group_by_shape ? side_torch_shapes(&a) : 0, sb = sa ? side_torch_shapes(&b) : 0;
    if (sa && sb && sa != sb)
        opp_say(PREFIX "warning: %s has no operator input shapes (OPPROF_TORCH=lean): its rows "
                       "by shape match none of the other's",
                sa == 2 ? da.b : da.a);
    struct opp_diff d;
    if (opp_diff_aggs(&a.agg, &b.agg, a.gpu || b.gpu, &da.o, &d)) {
        opp_say(PREFIX "out of memory");
        side_free(&a);
        side_free(&b);
        return EXIT_TROUBLE;
    }
    int code = 0;
    for (size_t k = 0; k < da.gate.nnames; k++) {
        int found = 0;
        for (size_t i = 0; i < d.n && !found; i++)
            found = !strcmp(d.rows[i].key, da.ops[k]);
        if (!found) {
            opp_say(PREFIX
                    "--op '%s': no such operator in either trace (`opprof diff %s %s` lists them)",
                    da.ops[k], da.a, da.b);
            code = EXIT_USAGE;
        }
    }
    int gate = !isnan(da.gate.pct);
    struct opp_diff_gate_result found = {0};
    if (!code && gate)
        opp_diff_regressions(&d, &da.gate, &found);
    if (!code) {
        struct opp_diff_view v = {.a = da.a, .b = da.b, .limit = da.limit,
                                  .by_shape = da.o.group_by_shape, .gate = gate ? &da.gate : NULL,
                                  .found = &found};
        int wrc = opp_out_end(stdout, da.json ? opp_out_diff_json(stdout, &d, &v)
                                              : opp_out_diff_table(stdout, &d, &v));
        if (wrc) {
            opp_say(PREFIX "cannot write the comparison: %s", strerror(-wrc));
            code = EXIT_TROUBLE;
        }
    }
    if (!code && found.nreg) {
        const struct opp_diff_row *worst = found.worst;
        char ta[OPP_FMT_MAX], tb[OPP_FMT_MAX], pct[OPP_DIFF_CELL_MAX];
        double va = found.worst_total ? d.total_a : worst->va;
        double vb = found.worst_total ? d.total_b : worst->vb;
        double p = found.worst_total ? d.total_percent : worst->percent;
        if (found.worst_total)
            fprintf(stderr, PREFIX "regression above %.2f%%: %s %s -> %s (%s)", da.gate.pct,
                    opp_diff_total_name(d.metric), opp_fmt_time(ta, va), opp_fmt_time(tb, vb),
                    opp_diff_pct_text(pct, p));
        else {
            fprintf(stderr, PREFIX "regression above %.2f%%: ", da.gate.pct);
            opp_text_fput(stderr, worst->key);
            fprintf(stderr, " %s %s -> %s (%s)", opp_diff_metric_name(d.metric),
                    opp_fmt_time(ta, va), opp_fmt_time(tb, vb),
                    isnan(p) ? "new" : opp_diff_pct_text(pct, p));
        }
        fprintf(stderr, found.nreg > 1 ? "; %zu regressions in all\n" : "\n", found.nreg);
        code = EXIT_REGRESSION;
    }
    opp_diff_free(&d);
    side_free(&a);
    side_free(&b);
    return code;
}
