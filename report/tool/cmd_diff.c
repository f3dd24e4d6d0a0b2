/* `opprof diff A B [options]`: two traces compared by operator and kernel
 * (analysis/diff.h) as a table or JSON (views/diff_view.h); with --fail-above, a CI gate: exit 1 when the
 * total or an operator slowed by more than a percentage. Exit codes: 0 ok,
 * 1 regression, 2 usage, 3 a trace cannot be read or the output written. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "analysis/model.h"
#include "tool/cli.h"
#include "tool/cmds.h"
#include "views/diff_view.h"
#include "views/fmt.h"

#define PREFIX "opprof diff: "
#define MAX_OPS 64
#define EXIT_REGRESSION 1
#define EXIT_USAGE 2
#define EXIT_TROUBLE 3

struct diff_args {
    const char *a, *b;
    int json;
    size_t limit;
    double fail_above; /* NAN: no gate */
    const char *ops[MAX_OPS];
    size_t nops;
    struct opp_diff_opts o;
};

static void usage(FILE *f)
{
    fputs("usage: opprof diff A.trace B.trace [--metric M] [--by name|shape] [--format table|json]\n"
          "                 [--limit N] [--same PCT,US] [--fail-above PCT [--op NAME]...]\n"
          "\n"
          "Compare two traces by operator and kernel: calls, self and total CPU and CUDA\n"
          "time in each, and the change of one metric from A to B with its percent; each\n"
          "row classed added (only in B), removed (only in A), slower, faster or same;\n"
          "rows by the size of the change.\n"
          "\n"
          "  -m, --metric M      self_cpu (default), cpu_total, self_cuda, cuda_total; kernel,\n"
          "                      copy and memset rows compare their device time under a CPU\n"
          "                      metric. The total is the Self CPU (CUDA) time total\n"
          "      --by KEY        name (default) or shape: one row per name and input shapes\n"
          "      --group-by-shape  the same as --by shape\n"
          "  -f, --format FMT    table (default) or json\n"
          "  -n, --limit N       show only the first N rows\n"
          "      --same PCT,US   a change is none when its size is at most PCT% of A's\n"
          "                      value or US microseconds, whichever is larger (default 1,1)\n"
          "      --fail-above PCT  exit 1 when the total, or any operator, got slower (beyond\n"
          "                      --same) by more than PCT%; one line names the worst\n"
          "      --op NAME       with --fail-above: check these operators (repeatable) instead\n"
          "                      of every operator present in both traces; a named operator\n"
          "                      only in B counts as slower without bound\n"
          "  -h, --help          show this help\n"
          "\n"
          "Exit status: 0 ok, 1 a regression above --fail-above, 2 wrong arguments,\n"
          "3 a trace could not be read or the output written.\n",
          f);
}

static int parse_double(const char *s, double lo, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (errno || end == s || *end || !(d >= lo) || !isfinite(d))
        return -1;
    *out = d;
    return 0;
}

/* 0 to go on, 1 after --help, 2 on a usage error (reported). */
static int parse_args(int argc, char **argv, struct diff_args *da)
{
    enum { OPT_BY = 256, OPT_GROUP, OPT_SAME, OPT_FAIL, OPT_OP };
    static const struct option opts[] = {
        {"metric", required_argument, NULL, 'm'},
        {"by", required_argument, NULL, OPT_BY},
        {"group-by-shape", no_argument, NULL, OPT_GROUP},
        {"format", required_argument, NULL, 'f'},
        {"limit", required_argument, NULL, 'n'},
        {"same", required_argument, NULL, OPT_SAME},
        {"fail-above", required_argument, NULL, OPT_FAIL},
        {"op", required_argument, NULL, OPT_OP},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(da, 0, sizeof *da);
    da->fail_above = NAN;
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":m:f:n:h", opts, NULL)) != -1) {
        switch (c) {
        case 'm':
            if (opp_diff_metric_parse(optarg, &da->o.metric)) {
                fprintf(stderr, PREFIX "unknown metric '%s' (one of: self_cpu, cpu_total, "
                                       "self_cuda, cuda_total)\n", optarg);
                return 2;
            }
            break;
        case OPT_BY:
            if (!strcmp(optarg, "shape")) {
                da->o.group_by_shape = 1;
            } else if (!strcmp(optarg, "name")) {
                da->o.group_by_shape = 0;
            } else {
                fprintf(stderr, PREFIX "--by wants name or shape, not '%s'\n", optarg);
                return 2;
            }
            break;
        case OPT_GROUP:
            da->o.group_by_shape = 1;
            break;
        case 'f':
            if (!strcmp(optarg, "table") || !strcmp(optarg, "json")) {
                da->json = optarg[0] == 'j';
            } else {
                fprintf(stderr, PREFIX "unknown format '%s' (one of: table, json)\n", optarg);
                return 2;
            }
            break;
        case 'n': {
            double v;
            if (parse_double(optarg, 1, &v) || v != floor(v) || v > 1e15) {
                fprintf(stderr, PREFIX "--limit wants a positive number of rows, not '%s'\n",
                        optarg);
                return 2;
            }
            da->limit = (size_t)v;
            break;
        }
        case OPT_SAME: {
            char buf[64];
            const char *comma = strchr(optarg, ',');
            size_t len = comma ? (size_t)(comma - optarg) : 0;
            if (!comma || len >= sizeof buf) {
                fprintf(stderr, PREFIX "--same wants PCT,US (e.g. 1,1), not '%s'\n", optarg);
                return 2;
            }
            memcpy(buf, optarg, len);
            buf[len] = 0;
            double us;
            if (parse_double(buf, 0, &da->o.same_pct) || parse_double(comma + 1, 0, &us)) {
                fprintf(stderr, PREFIX "--same wants PCT,US (e.g. 1,1), not '%s'\n", optarg);
                return 2;
            }
            da->o.same_ns = us * 1000.0;
            da->o.same_given = 1;
            break;
        }
        case OPT_FAIL:
            if (parse_double(optarg, 0, &da->fail_above)) {
                fprintf(stderr, PREFIX "--fail-above wants a percentage (0 or more), not '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case OPT_OP:
            if (!optarg[0] || da->nops == MAX_OPS) {
                fprintf(stderr, PREFIX "--op wants an operator name (at most %d)\n", MAX_OPS);
                return 2;
            }
            da->ops[da->nops++] = optarg;
            break;
        case 'h':
            usage(stdout);
            return 1;
        default: /* ':' or an unknown option */
            return opp_cli_bad_option("diff", c, argv);
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, PREFIX "%s (usage: opprof diff A.trace B.trace [options])\n",
                argc - optind < 2 ? "which two traces?" : "two traces, no more");
        return 2;
    }
    if (da->nops && isnan(da->fail_above)) {
        fprintf(stderr, PREFIX "--op goes with --fail-above\n");
        return 2;
    }
    da->a = argv[optind];
    da->b = argv[optind + 1];
    return 0;
}

static struct opp_model *load(const char *path)
{
    char err[512];
    struct opp_model *m = opp_model_load(path, err, sizeof err);
    if (!m)
        fprintf(stderr, PREFIX "%s\n", err);
    else if (m->sum.warning[0])
        fprintf(stderr, PREFIX "warning: %s: %s\n", path, m->sum.warning);
    return m;
}

int cmd_diff(int argc, char **argv)
{
    struct diff_args da;
    int rc = parse_args(argc, argv, &da);
    if (rc)
        return rc == 1 ? 0 : EXIT_USAGE;
    struct opp_model *ma = load(da.a), *mb = ma ? load(da.b) : NULL;
    if (!ma || !mb) {
        if (ma)
            opp_model_free(ma);
        return EXIT_TROUBLE;
    }
    struct opp_diff d;
    if (opp_diff(ma, mb, &da.o, &d)) {
        fprintf(stderr, PREFIX "out of memory\n");
        opp_model_free(ma);
        opp_model_free(mb);
        return EXIT_TROUBLE;
    }
    int code = 0;
    for (size_t k = 0; k < da.nops; k++) {
        int found = 0;
        for (size_t i = 0; i < d.n && !found; i++)
            found = !strcmp(d.rows[i].key, da.ops[k]);
        if (!found) {
            fprintf(stderr, PREFIX "--op '%s': no such operator in either trace\n", da.ops[k]);
            code = EXIT_USAGE;
        }
    }
    const struct opp_diff_row *worst = NULL;
    int worst_total = 0;
    size_t nreg = 0;
    if (!code && !isnan(da.fail_above))
        nreg = opp_diff_regressions(&d, da.fail_above, da.ops, da.nops, &worst, &worst_total);
    if (!code) {
        struct opp_diff_view v = {.a = da.a, .b = da.b, .limit = da.limit,
                                  .by_shape = da.o.group_by_shape, .gate = !isnan(da.fail_above),
                                  .nreg = nreg, .worst = worst, .worst_total = worst_total};
        if (da.json)
            opp_out_diff_json(stdout, &d, &v);
        else
            opp_out_diff_table(stdout, &d, &v);
        if (fflush(stdout) || ferror(stdout)) {
            fprintf(stderr, PREFIX "cannot write the comparison: %s\n", strerror(errno));
            code = EXIT_TROUBLE;
        }
    }
    if (!code && nreg) {
        char ta[OPP_FMT_MAX], tb[OPP_FMT_MAX], pct[OPP_DIFF_CELL_MAX];
        double va = worst_total ? d.total_a : worst->va, vb = worst_total ? d.total_b : worst->vb;
        double p = worst_total ? d.total_percent : worst->percent;
        if (worst_total)
            fprintf(stderr, PREFIX "regression above %.2f%%: %s %s -> %s (%s)", da.fail_above,
                    opp_diff_total_name(d.metric), opp_fmt_time(ta, va), opp_fmt_time(tb, vb),
                    opp_diff_pct_text(pct, p));
        else
            fprintf(stderr, PREFIX "regression above %.2f%%: %s %s %s -> %s (%s)", da.fail_above,
                    worst->key, opp_diff_metric_name(d.metric), opp_fmt_time(ta, va),
                    opp_fmt_time(tb, vb), isnan(p) ? "new" : opp_diff_pct_text(pct, p));
        fprintf(stderr, nreg > 1 ? "; %zu regressions in all\n" : "\n", nreg);
        code = EXIT_REGRESSION;
    }
    opp_diff_free(&d);
    opp_model_free(ma);
    opp_model_free(mb);
    return code;
}
