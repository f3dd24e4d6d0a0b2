/* End to end on real BLAS clients: a C program calling OpenBLAS with known
 * shapes, numpy and Debian's PyTorch under the real preload. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/aggregate.h"
#include "analysis/model.h"
#include "oracle/loaded.h"
#include "testutil.h"

#define PY "/usr/bin/python3"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void)
{
    tu_rmdir(dir);
    free(dir);
}

/* Debian's python3 has the module: else say why the test is skipped. */
static int have_module(const char *mod, const char *test, const char *pkg)
{
    char code[64];
    snprintf(code, sizeof code, "import %s", mod);
    if (access(PY, X_OK) == 0 && tu_code(tu_run((char *[]){PY, "-c", code, NULL}, NULL, NULL, NULL)) == 0)
        return 1;
    fprintf(stderr, "SKIP %s: %s has no %s (apt-get install %s)\n", test, PY, mod, pkg);
    return 0;
}

static const struct opp_row *row(const struct opp_agg *a, const char *key, const char *shapes)
{
    for (size_t i = 0; i < a->nrows; i++)
        if (!strcmp(a->rows[i].key, key) && (!shapes || !strcmp(a->rows[i].shapes_str, shapes)))
            return &a->rows[i];
    return NULL;
}

/* A plugin host that unloads a library linking OpenBLAS, and OpenBLAS
 * with it, and loads it again elsewhere: each call goes to the OpenBLAS
 * loaded then, and is recorded. (Not under ThreadSanitizer, whose runtime
 * keeps unloaded libraries mapped.) */
START_TEST(blas_unloaded_and_loaded_again)
{
    char *trace = tu_path(dir, "t.trace"), *o, *e, want[4400];
    ck_assert_int_eq(tu_unload_run(dir, trace, "tests/progs/libblas_plugin.so", "openblas", &o, &e),
                     0);
    ck_assert_str_eq(o, "round 0: 30\nround 1: 30\nround 2: 30\n");
    snprintf(want, sizeof want, "opprof: trace written to %s (3 events)\n", trace);
    ck_assert_str_eq(e, want);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 3);
    opp_model_free(m);
    free(o), free(e), free(trace);
}
END_TEST

/* blas_calls 2 under `opprof run`: every call, shape and FLOP count. */
START_TEST(blas_program_exact)
{
    char *trace = tu_path(dir, "t.trace"), *out = tu_path(dir, "out"), *plain = tu_path(dir, "plain");
    char *err = tu_path(dir, "err");
    char *run[] = {(char *)tu_tool("opprof"), "run", "-o", trace, "--",
                   (char *)tu_build("tests/progs/blas_calls"), "2", NULL};
    char *bare[] = {(char *)tu_build("tests/progs/blas_calls"), "2", NULL};
    ck_assert_int_eq(tu_code(tu_run(run, NULL, out, err)), 0);
    ck_assert_int_eq(tu_code(tu_run(bare, NULL, plain, NULL)), 0);
    char *o1 = tu_slurp(out), *o2 = tu_slurp(plain), *e = tu_slurp(err);
    ck_assert_str_eq(o1, o2); /* the program's output is untouched */
    ck_assert_ptr_nonnull(strstr(e, "cblas_dgemm"));   /* the top-10 table on stderr */
    ck_assert_ptr_nonnull(strstr(e, "opprof: trace written to"));

    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(m->events, 38);
    ck_assert_uint_eq(m->dropped, 0);
    ck_assert_uint_eq(m->nprocs, 1);
    ck_assert_uint_eq(m->procs[0].end_how, OPP_END_EXITED);
    struct opp_agg_opts o = {.group_by_shape = 1};
    struct opp_agg a;
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    ck_assert_uint_eq(a.nrows, 7); /* dgemm, zgemm, sgemm_, ddot, dgemv_, daxpy, dscal */
    const struct opp_row *r = row(&a, "cblas_dgemm", "[[64, 48], [48, 32], [64, 32]]");
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->count, 10); /* no-trans and trans calls share logical shapes */
    ck_assert_uint_eq(r->flops, 10ull * 2 * 64 * 32 * 48);
    r = row(&a, "cblas_zgemm", "[[16, 16], [16, 16], [16, 16]]");
    ck_assert_uint_eq(r->count, 2);
    ck_assert_uint_eq(r->flops, 2ull * 8 * 16 * 16 * 16);
    r = row(&a, "sgemm_", "[[64, 48], [48, 32], [64, 32]]");
    ck_assert_uint_eq(r->count, 8);
    ck_assert_uint_eq(r->flops, 8ull * 2 * 64 * 32 * 48);
    r = row(&a, "cblas_ddot", "[[1000], [1000]]");
    ck_assert_uint_eq(r->count, 10);
    ck_assert_uint_eq(r->flops, 10ull * 2 * 1000);
    r = row(&a, "dgemv_", "[[48, 64], [64], [48]]"); /* 'T' on a 64 x 48 matrix */
    ck_assert_uint_eq(r->count, 4);
    ck_assert_uint_eq(r->flops, 4ull * 2 * 64 * 48);
    ck_assert_uint_eq(row(&a, "cblas_daxpy", "[[100], [100]]")->count, 2);
    ck_assert_uint_eq(row(&a, "cblas_dscal", "[[100]]")->count, 2);
    /* Nothing nests in these calls: self time is the whole time. */
    for (size_t i = 0; i < a.nrows; i++)
        ck_assert_uint_eq(a.rows[i].self_cpu_time_total_ns, a.rows[i].cpu_time_total_ns);
    opp_agg_free(&a);
    opp_model_free(m);
    free(o1), free(o2), free(e), free(trace), free(out), free(plain), free(err);
}
END_TEST

/* `opprof run --limit N`: the table it prints on stderr when CMD ends has
 * N rows (blas_calls 2 calls 7 functions): three lines of heading, the
 * rows, a rule, the total and where the trace went. */
START_TEST(run_limit_rows)
{
    char *trace = tu_path(dir, "t.trace"), *err = tu_path(dir, "err");
    char *run[] = {(char *)tu_tool("opprof"), "run", "--limit", "3", "-o", trace, "--",
                   (char *)tu_build("tests/progs/blas_calls"), "2", NULL};
    ck_assert_int_eq(tu_code(tu_run(run, NULL, NULL, err)), 0);
    char *e = tu_slurp(err);
    ck_assert_int_eq(tu_count_lines(e, ""), 3 + 3 + 3);
    ck_assert_int_eq(tu_count_lines(e, "----"), 3);
    ck_assert_int_eq(tu_count_lines(e, "Self CPU time total: "), 1);
    free(e), free(trace), free(err);
}
END_TEST

/* blas_values: every way a value crosses a wrapper (returned float, double,
 * index, complex; float scalars by value, complex ones by pointer), in
 * CBLAS and Fortran: the same bits printed with and without the preload,
 * each call recorded once with its shapes and FLOPs. */
START_TEST(blas_values_forwarded_exactly)
{
    char *trace = tu_path(dir, "v.trace"), *out = tu_path(dir, "out"),
         *plain = tu_path(dir, "plain");
    const char *prog = tu_build("tests/progs/blas_values");
    char *run[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", (char *)prog, NULL};
    ck_assert_int_eq(tu_code(tu_run(run, NULL, out, NULL)), 0);
    ck_assert_int_eq(tu_code(tu_run((char *[]){(char *)prog, NULL}, NULL, plain, NULL)), 0);
    char *o1 = tu_slurp(out), *o2 = tu_slurp(plain);
    ck_assert_int_eq(tu_count_lines(o2, ""), 22);
    ck_assert_str_eq(o1, o2);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->events, 22);
    struct opp_agg_opts o = {.group_by_shape = 1};
    struct opp_agg a;
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    ck_assert_uint_eq(a.nrows, 22); /* one row, one call, per function */
    for (size_t i = 0; i < a.nrows; i++)
        ck_assert_uint_eq(a.rows[i].count, 1);
    /* k n (n + 1) / 2 complex multiply-adds */
    ck_assert_uint_eq(row(&a, "cblas_cherk", "[[7, 1], [7, 7]]")->flops, 8ull * 7 * 8 / 2);
    /* B [7, 2] on the left: 56 multiplications, 42 additions, complex */
    ck_assert_uint_eq(row(&a, "ztrsm_", "[[7, 7], [7, 2]]")->flops, 6 * 56 + 2 * 42);
    ck_assert_uint_eq(row(&a, "zdotu_", "[[7], [7]]")->flops, 8 * 7);
    ck_assert_uint_eq(row(&a, "cblas_sdsdot", "[[7], [7]]")->flops, 2 * 7);
    ck_assert_uint_eq(row(&a, "csrot_", "[[7], [7]]")->flops, 12 * 7);
    ck_assert_uint_eq(row(&a, "cblas_csscal", "[[7]]")->flops, 2 * 7);
    ck_assert_uint_eq(row(&a, "izamax_", "[[7]]")->flops, 0);
    opp_agg_free(&a);
    opp_model_free(m);
    free(o1), free(o2), free(trace), free(out), free(plain);
}
END_TEST

/* numpy matmul under plain LD_PRELOAD, checked through the JSON report. */
START_TEST(numpy_plain_preload)
{
    if (!have_module("numpy", "numpy_plain_preload", "python3-numpy"))
        return;
    char *trace = tu_path(dir, "np.trace"), *json = tu_path(dir, "np.json"), *out = tu_path(dir, "out");
    struct tu_env te;
    char **env = tu_preload_env(&te, trace, NULL);
    char *py[] = {PY, "-c",
                  "import numpy as np; a=np.ones((300,200)); b=np.ones((200,100)); "
                  "r=[a@b for _ in range(13)]; print(r[0].sum())", NULL};
    ck_assert_int_eq(tu_code(tu_run(py, env, out, NULL)), 0);
    char *o = tu_slurp(out);
    ck_assert_str_eq(o, "6000000.0\n");
    char *rep[] = {(char *)tu_tool("opprof"), "report", trace, "--group-by-shape", "--format", "json", NULL};
    ck_assert_int_eq(tu_code(tu_run(rep, NULL, json, NULL)), 0);
    char check[5000];
    snprintf(check, sizeof check,
             "import json; d=json.load(open('%s')); "
             "r=[x for x in d['rows'] if x['key']=='cblas_dgemm']; "
             "assert len(r)==1, r; r=r[0]; "
             "assert r['count']==13, r; "
             "assert r['input_shapes']==[[300,200],[200,100],[300,100]], r; "
             "assert r['flops']==13*2*300*100*200, r; "
             "assert d['dropped']==0 and d['processes'][0]['cmdline'][0]=='%s', d['processes']",
             json, PY);
    ck_assert_int_eq(tu_code(tu_run((char *[]){PY, "-c", check, NULL}, NULL, NULL, NULL)), 0);
    free(o), free(trace), free(json), free(out);
}
END_TEST

/* The calls of a root of `opprof report --tree --depth 1`: its line is the
 * name, then spaces, then the count; -1 when no root has that name. */
static long root_calls(const char *tree, const char *name)
{
    size_t n = strlen(name);
    for (const char *l = tree; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (!strncmp(l, name, n) && l[n] == ' ' && l[n + 1] == ' ')
            return strtol(l + n, NULL, 10);
    return -1;
}

/* The roots of such a tree: its lines less the heading and the footer. */
static int tree_roots(const char *tree)
{
    int n = 0;
    for (const char *l = tree; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        n += *l != ' ' && *l != '\n';
    return n - 2;
}

/* What `opprof report TRACE --tree --depth 1 --min-share 0` writes. */
/* tests/py/NAME run under `opprof run` (writing trace) and alone: the
 * same output, digests lines of it (one a result). */
static void script_runs_alike(const char *name, const char *trace, int digests)
{
    char *out = tu_path(dir, "out"), *plain = tu_path(dir, "plain"), script[4200];
    const char *src = getenv("OPPROF_SRC");
    snprintf(script, sizeof script, "%s/tests/py/%s", src ? src : ".", name);
    char *run[] = {
        (char *)tu_tool("opprof"), "run", "-q", "-o", (char *)trace, "--", PY, script, NULL};
    ck_assert_int_eq(tu_code(tu_run(run, NULL, out, NULL)), 0);
    ck_assert_int_eq(tu_code(tu_run((char *[]){PY, script, NULL}, NULL, plain, NULL)), 0);
    char *o1 = tu_slurp(out), *o2 = tu_slurp(plain);
    ck_assert_int_eq(tu_count_lines(o2, ""), digests);
    ck_assert_str_eq(o1, o2);
    free(o1), free(o2), free(out), free(plain);
}

static char *roots_tree(const char *trace)
{
    char *tree = tu_path(dir, "tree");
    char *rt[] = {(char *)tu_tool("opprof"),
                  "report",
                  (char *)trace,
                  "--tree",
                  "--depth",
                  "1",
                  "--min-share",
                  "0",
                  NULL};
    ck_assert_int_eq(tu_code(tu_run(rt, NULL, tree, NULL)), 0);
    char *t = tu_slurp(tree);
    free(tree);
    return t;
}

/* The `--group-by-shape --format csv` row of key with those shapes:
 * key,lib,count,self,total,avg,"shapes",flops. 0 when found. */
static int csv_row(const char *csv, const char *key, const char *shapes, unsigned long *count,
                   unsigned long long *flops)
{
    char head[300], quoted[300];
    snprintf(head, sizeof head, "%s,", key);
    snprintf(quoted, sizeof quoted, ",\"%s\",", shapes);
    for (const char *l = csv; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *end = strchr(l, '\n'), *q = strstr(l, quoted);
        if (strncmp(l, head, strlen(head)) || !q || (end && q > end))
            continue;
        const char *c = strchr(l + strlen(head), ',');
        *count = strtoul(c + 1, NULL, 10);
        *flops = strtoull(q + strlen(quoted), NULL, 10);
        return 0;
    }
    return -1;
}

#define CSV_ROW_IS(csv, key, shapes, n, fl)                                                        \
    do {                                                                                           \
        unsigned long c_ = 0;                                                                      \
        unsigned long long f_ = 0;                                                                 \
        ck_assert_msg(csv_row(csv, key, shapes, &c_, &f_) == 0, "no row %s %s", key, shapes);      \
        ck_assert_msg(c_ == (n) && f_ == (fl), "%s %s: %lu calls, %llu FLOPs", key, shapes, c_,    \
                      f_);                                                                         \
    } while (0)

/* An unmodified numpy.linalg script (tests/py/linalg.py): the same results
 * with and without the preload, every BLAS and LAPACK call numpy makes
 * itself a root of the tree with its exact count, the workspace queries
 * apart, shapes and LAWN 41 FLOPs in the table; what LAPACK calls inside
 * (reference LAPACK's BLAS calls) nests in it. */
START_TEST(numpy_linalg_exact)
{
    if (!have_module("numpy", "numpy_linalg_exact", "python3-numpy"))
        return;
    char *trace = tu_path(dir, "la.trace"), *csv = tu_path(dir, "csv");
    script_runs_alike("linalg.py", trace, 15);

    char *t = roots_tree(trace);
    static const struct {
        const char *name;
        long calls;
    } roots[] = {
        {"cblas_sdot", 1},  /* numpy's own check at import */
        {"cblas_dsyrk", 1}, /* b @ b.T */
        {"cblas_zgemm", 2}, /* z @ z, z @ z^H */
        {"cblas_zsyrk", 1}, /* z @ z.T */
        {"cblas_ssyrk", 1}, /* in float32 */
        {"dgesv_", 2},      /* solve, inv */
        {"dpotrf_", 1},     /* cholesky */
        {"dgetrf_", 1},     /* det */
        {"dsyevd_", 1},     /* eigh */
        {"dsyevd_ (workspace query)", 1},
        {"dgesdd_", 1}, /* svd */
        {"dgesdd_ (workspace query)", 1},
        {"dgeqrf_", 1}, /* qr */
        {"dgeqrf_ (workspace query)", 1},
        {"dorgqr_", 1},
        {"dorgqr_ (workspace query)", 1},
        {"dgelsd_", 1}, /* lstsq */
        {"dgelsd_ (workspace query)", 1},
        {"zgesv_", 1},  /* complex solve */
        {"zheevd_", 1}, /* eigvalsh */
        {"zheevd_ (workspace query)", 1},
        {"zgesdd_", 1}, /* complex svd */
        {"zgesdd_ (workspace query)", 1},
        {"dcopy_", 4519}, /* numpy copies each column in and out of LAPACK */
        {"zcopy_", 904},
    };
    for (size_t i = 0; i < sizeof roots / sizeof *roots; i++)
        ck_assert_msg(root_calls(t, roots[i].name) == roots[i].calls, "%s: %ld calls, not %ld",
                      roots[i].name, root_calls(t, roots[i].name), roots[i].calls);
    ck_assert_int_eq(tree_roots(t), (int)(sizeof roots / sizeof *roots));

    char *rc[] = {
        (char *)tu_tool("opprof"), "report", trace, "--group-by-shape", "--format", "csv", NULL};
    ck_assert_int_eq(tu_code(tu_run(rc, NULL, csv, NULL)), 0);
    char *c = tu_slurp(csv);
    CSV_ROW_IS(c, "cblas_dsyrk", "[[300, 300], [300, 300]]", 1, 27090000ull);
    CSV_ROW_IS(c, "cblas_zsyrk", "[[300, 300], [300, 300]]", 1, 4ull * 300 * 300 * 301);
    CSV_ROW_IS(c, "cblas_ssyrk", "[[300, 300], [300, 300]]", 1, 27090000ull);
    CSV_ROW_IS(c, "cblas_zgemm", "[[300, 300], [300, 300], [300, 300]]", 2,
               2ull * 8 * 300 * 300 * 300);
    CSV_ROW_IS(c, "dgesv_", "[[300, 300], [300, 3]]", 1, 18494350ull);
    CSV_ROW_IS(c, "dgesv_", "[[300, 300], [300, 300]]", 1, 71865250ull);
    CSV_ROW_IS(c, "dpotrf_", "[[300, 300]]", 1, 9045050ull);
    CSV_ROW_IS(c, "dgetrf_", "[[300, 300]]", 1, 17955250ull);
    CSV_ROW_IS(c, "dsyevd_", "[[300, 300]]", 1, 0ull);
    CSV_ROW_IS(c, "dgesdd_", "[[300, 300]]", 1, 0ull);
    CSV_ROW_IS(c, "dgeqrf_", "[[300, 300]]", 1, 36181400ull);
    CSV_ROW_IS(c, "dorgqr_", "[[300, 300], [300]]", 1, 36089600ull);
    CSV_ROW_IS(c, "dgelsd_", "[[300, 300], [300, 3]]", 1, 0ull);
    CSV_ROW_IS(c, "zgesv_", "[[300, 300], [300, 2]]", 1, 73350100ull);
    CSV_ROW_IS(c, "zheevd_", "[[300, 300]]", 1, 0ull);
    CSV_ROW_IS(c, "zgesdd_", "[[300, 300]]", 1, 0ull);
    CSV_ROW_IS(c, "dsyevd_ (workspace query)", "[[300, 300]]", 1, 0ull);
    /* LAPACK's own BLAS calls are its children: dsyevd_'s total is more than its self */
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    struct opp_agg_opts ao = {0};
    struct opp_agg a;
    ck_assert_int_eq(tu_aggregate(m, &ao, &a), 0);
    const struct opp_row *r = row(&a, "dsyevd_", NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_gt(r->cpu_time_total_ns, r->self_cpu_time_total_ns);
    ck_assert_ptr_nonnull(row(&a, "dsyr2k_", NULL)); /* the tridiagonal reduction's */
    opp_agg_free(&a);
    opp_model_free(m);
    free(t), free(c), free(trace), free(csv);
}
END_TEST

/* tests/py/linalg_small.py: the entry points numpy reaches that
 * numpy_linalg_exact leaves out, each a root of the tree with the count
 * ltrace gives for the same script unprofiled; the output unchanged. */
START_TEST(numpy_linalg_small_exact)
{
    if (!have_module("numpy", "numpy_linalg_small_exact", "python3-numpy"))
        return;
    char *trace = tu_path(dir, "small.trace"), *csv = tu_path(dir, "csv");
    script_runs_alike("linalg_small.py", trace, 21);

    char *t = roots_tree(trace);
    static const struct {
        const char *name;
        long calls;
    } roots[] = {
        {"cblas_sdot", 1}, /* numpy's own check at import */
        {"dgeev_", 1},     /* eig */
        {"dgeev_ (workspace query)", 1},
        {"zgeev_", 1}, /* eigvals, complex64 computed in complex128 */
        {"zgeev_ (workspace query)", 1},
        {"dgetrf_", 2}, /* slogdet of 2 float32 matrices, in float64 */
        {"zgetrf_", 1}, /* det */
        {"zpotrf_", 1}, /* cholesky */
        {"zgelsd_", 1}, /* lstsq */
        {"zgelsd_ (workspace query)", 1},
        {"dgesdd_", 2}, /* svd full, pinv */
        {"dgesdd_ (workspace query)", 2},
        {"zgeqrf_", 1}, /* qr complete */
        {"zgeqrf_ (workspace query)", 1},
        {"zungqr_", 1},
        {"zungqr_ (workspace query)", 1},
        {"dgeqrf_", 1}, /* qr r: no dorgqr_ */
        {"dgeqrf_ (workspace query)", 1},
        {"dgesv_", 3},      /* inv of 2 matrices, tensorsolve */
        {"cblas_dgemm", 4}, /* pinv, multi_dot's 2, einsum */
        {"cblas_ddot", 1},  /* norm */
        {"cblas_sgemm", 2}, /* matrix_power 3 */
        {"cblas_cgemm", 2}, /* matmul of 2 complex64 pairs */
        {"cblas_dgemv", 1}, /* matrix @ vector */
        {"cblas_zgemv", 1},
        {"cblas_zdotc_sub", 1}, /* vdot */
        {"cblas_zdotu_sub", 1}, /* dot */
        {"dcopy_", 66},         /* the matrices in and out of LAPACK, column by column */
        {"zcopy_", 48},
    };
    for (size_t i = 0; i < sizeof roots / sizeof *roots; i++)
        ck_assert_msg(root_calls(t, roots[i].name) == roots[i].calls, "%s: %ld calls, not %ld",
                      roots[i].name, root_calls(t, roots[i].name), roots[i].calls);
    ck_assert_int_eq(tree_roots(t), (int)(sizeof roots / sizeof *roots));

    char *rc[] = {
        (char *)tu_tool("opprof"), "report", trace, "--group-by-shape", "--format", "csv", NULL};
    ck_assert_int_eq(tu_code(tu_run(rc, NULL, csv, NULL)), 0);
    char *c = tu_slurp(csv);
    CSV_ROW_IS(c, "dgeev_", "[[4, 4]]", 1, 0ull);
    CSV_ROW_IS(c, "zgelsd_", "[[5, 3], [5, 2]]", 1, 0ull);
    CSV_ROW_IS(c, "zungqr_ (workspace query)", "[[5, 5], [3]]", 1, 0ull);
    CSV_ROW_IS(c, "cblas_cgemm", "[[4, 4], [4, 3], [4, 3]]", 2, 2ull * 8 * 4 * 3 * 4);
    CSV_ROW_IS(c, "cblas_zgemv", "[[4, 4], [4], [4]]", 1, 8ull * 4 * 4);
    CSV_ROW_IS(c, "cblas_zdotc_sub", "[[4], [4]]", 1, 8ull * 4);
    free(t), free(c), free(trace), free(csv);
}
END_TEST

/* Reference LAPACK as liblapack.so.3 (Debian's other alternative) beside
 * OpenBLAS as libblas.so.3: libopenblas.so.0, loaded first, defines dgesv_
 * too, but numpy binds liblapack.so.3's, and so must the preload. Its
 * dgesv_ factors with dgetrf_ and solves with OpenBLAS's dtrsm_, each call
 * nested in it; OpenBLAS's own dgesv_ calls none of them. */
#define REF_LAPACK "/usr/lib/x86_64-linux-gnu/lapack"
START_TEST(numpy_reference_lapack_alternative)
{
    if (!have_module("numpy", "numpy_reference_lapack_alternative", "python3-numpy"))
        return;
    if (access(REF_LAPACK "/liblapack.so.3", R_OK) != 0) {
        fprintf(stderr, "SKIP numpy_reference_lapack_alternative: no " REF_LAPACK
                        "/liblapack.so.3 (apt-get install liblapack3)\n");
        return;
    }
    char *trace = tu_path(dir, "ref.trace"), *out = tu_path(dir, "out"),
         *plain = tu_path(dir, "plain");
    char *env[] = {"LD_LIBRARY_PATH=" REF_LAPACK, NULL};
    char *code = "import numpy as np; "
                 "a = np.array([[4., 1, 2, 0], [1, 5, 1, 2], [2, 1, 6, 1], [0, 2, 1, 7]]); "
                 "print(repr(np.linalg.solve(a, np.arange(8.).reshape(4, 2))))";
    char *run[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", PY, "-c", code, NULL};
    ck_assert_int_eq(tu_code(tu_run(run, env, out, NULL)), 0);
    ck_assert_int_eq(tu_code(tu_run((char *[]){PY, "-c", code, NULL}, env, plain, NULL)), 0);
    char *o1 = tu_slurp(out), *o2 = tu_slurp(plain);
    ck_assert_str_eq(o1, o2);

    char *t = roots_tree(trace);
    ck_assert_int_eq(root_calls(t, "cblas_sdot"), 1); /* numpy's own check at import */
    ck_assert_int_eq(root_calls(t, "dgesv_"), 1);
    ck_assert_int_eq(root_calls(t, "dcopy_"), 8); /* 4 rows of A, 2 columns of B in and out */
    ck_assert_int_eq(tree_roots(t), 3);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    static const struct {
        const char *name;
        unsigned long calls;
    } nested[] = {{"dgetrf_", 1}, {"idamax_", 3}, {"dscal_", 3}, {"dtrsm_", 5}, {"dgemm_", 3}};
    for (size_t i = 0; i < sizeof nested / sizeof *nested; i++)
        ck_assert_msg(tu_count(m, nested[i].name, -1, 0, 0) == nested[i].calls,
                      "%s: %lu calls, not %lu", nested[i].name,
                      tu_count(m, nested[i].name, -1, 0, 0), nested[i].calls);
    opp_model_free(m);
    free(o1), free(o2), free(t), free(trace), free(out), free(plain);
}
END_TEST

/* tests/progs/scopes (with -u: unloading each plugin before the next)
 * loads OpenBLAS's plugin and reference BLAS and LAPACK's, RTLD_LOCAL, in
 * that order or the other: each plugin's dgesv_ and ddot_ run the library
 * it links, whichever called first. The output is the unprofiled run's
 * (the two ddot_ round apart); the trace has every dgesv_ and ddot_ as
 * roots, and nested in each of reference LAPACK's dgesv_ the calls it
 * makes, once (OpenBLAS's makes none). args: the host's (at most 4);
 * runs: the plugins run, reference: of them reference BLAS's. */
#define SOLVE_OPENBLAS "tests/progs/libsolve_openblas.so"
#define SOLVE_REFERENCE "tests/progs/libsolve_reference.so"
static void scopes_run(char *const args[], int runs, unsigned long reference)
{
    char *trace = tu_path(dir, "scopes.trace"), *out = tu_path(dir, "out"),
         *plain = tu_path(dir, "plain");
    char *bare[6] = {strdup(tu_build("tests/progs/scopes"))};
    char *run[12] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", bare[0]};
    for (int i = 0; args[i]; i++) {
        ck_assert_int_lt(i, 4);
        bare[i + 1] = args[i];
        run[i + 7] = args[i];
    }
    ck_assert_int_eq(tu_code(tu_run(run, NULL, out, NULL)), 0);
    ck_assert_int_eq(tu_code(tu_run(bare, NULL, plain, NULL)), 0);
    char *o1 = tu_slurp(out), *o2 = tu_slurp(plain);
    ck_assert_int_eq(tu_count_lines(o2, "libsolve_"), 2 * runs);
    ck_assert_str_eq(o1, o2);

    char *t = roots_tree(trace);
    ck_assert_int_eq(root_calls(t, "dgesv_"), runs);
    ck_assert_int_eq(root_calls(t, "ddot_"), runs);
    ck_assert_int_eq(tree_roots(t), 2);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    static const struct {
        const char *name;
        unsigned long calls;
    } nested[] = {{"dgetrf_", 1}, {"idamax_", 3}, {"dscal_", 3}, {"dtrsm_", 5}, {"dgemm_", 3}};
    unsigned long events = 2 * (unsigned long)runs;
    for (size_t i = 0; i < sizeof nested / sizeof *nested; i++) {
        unsigned long want = nested[i].calls * reference;
        ck_assert_msg(tu_count(m, nested[i].name, -1, 0, 0) == want, "%s: %lu calls, not %lu",
                      nested[i].name, tu_count(m, nested[i].name, -1, 0, 0), want);
        events += want;
    }
    ck_assert_uint_eq(m->events, events);
    opp_model_free(m);
    free(o1), free(o2), free(t), free(bare[0]), free(trace), free(out), free(plain);
}

/* Two plugins, first then second, each run once. */
static void scopes_alike(const char *first, const char *second, int unload)
{
    char *a = strdup(tu_build(first)), *b = strdup(tu_build(second));
    char *args[] = {unload ? "-u" : a, unload ? a : b, unload ? b : NULL, NULL};
    scopes_run(args, 2, 1);
    free(a), free(b);
}

static int have_reference_plugin(const char *test)
{
    if (access(tu_build(SOLVE_REFERENCE), R_OK) == 0)
        return 1;
    fprintf(stderr, "SKIP %s: no %s (apt-get install libblas3 liblapack3, then make test-build)\n",
            test, SOLVE_REFERENCE);
    return 0;
}

START_TEST(caller_scopes_openblas_first)
{
    if (have_reference_plugin("caller_scopes_openblas_first"))
        scopes_alike(SOLVE_OPENBLAS, SOLVE_REFERENCE, 0);
}
END_TEST

START_TEST(caller_scopes_reference_first)
{
    if (have_reference_plugin("caller_scopes_reference_first"))
        scopes_alike(SOLVE_REFERENCE, SOLVE_OPENBLAS, 0);
}
END_TEST

/* The first plugin and its library unloaded: what its calls found goes
 * with them, though the second plugin may land where the first was. */
START_TEST(caller_scopes_after_unload)
{
    if (!have_reference_plugin("caller_scopes_after_unload"))
        return;
    scopes_alike(SOLVE_OPENBLAS, SOLVE_REFERENCE, 1);
    scopes_alike(SOLVE_REFERENCE, SOLVE_OPENBLAS, 1);
}
END_TEST

/* OpenBLAS's plugin loaded RTLD_GLOBAL between two runs of reference
 * BLAS's, bound before OpenBLAS joined the global scope: its second run is
 * still reference BLAS's, as without us. */
START_TEST(caller_scope_kept_past_a_later_global_definition)
{
    if (!have_reference_plugin("caller_scope_kept_past_a_later_global_definition"))
        return;
    char *ref = strdup(tu_build(SOLVE_REFERENCE)), global[4200];
    snprintf(global, sizeof global, "+%s", tu_build(SOLVE_OPENBLAS));
    scopes_run((char *[]){ref, global, ref, NULL}, 3, 2);
    free(ref);
}
END_TEST

/* Debian's PyTorch: one sgemm_ per aten::addmm that torch.profiler counts. */
START_TEST(torch_cnn_sgemm_per_addmm)
{
    if (!have_module("torch", "torch_cnn_sgemm_per_addmm", "python3-torch"))
        return;
    char *trace = tu_path(dir, "cnn.trace"), *out = tu_path(dir, "out"), *plain = tu_path(dir, "plain");
    char script[4200];
    const char *src = getenv("OPPROF_SRC");
    snprintf(script, sizeof script, "%s/tests/py/cnn.py", src ? src : ".");
    char *run[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", PY, script,
                   "--torch-profiler", NULL};
    ck_assert_int_eq(tu_code(tu_run(run, NULL, out, NULL)), 0);
    char *o = tu_slurp(out);
    const char *p = strstr(o, "torch.profiler aten::addmm ");
    ck_assert_ptr_nonnull(p);
    long addmm = atol(p + strlen("torch.profiler aten::addmm "));
    ck_assert_int_eq(addmm, 15); /* 3 Linear layers x 5 steps */
    /* Same model output with and without the preload. */
    ck_assert_int_eq(tu_code(tu_run((char *[]){PY, script, "--torch-profiler", NULL}, NULL, plain, NULL)), 0);
    char *o2 = tu_slurp(plain);
    ck_assert_str_eq(strstr(o, "output"), strstr(o2, "output"));
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(tu_count(m, "sgemm_", -1, 0, 0), (unsigned long)addmm);
    struct opp_agg_opts ao = {.group_by_shape = 1};
    struct opp_agg a;
    ck_assert_int_eq(tu_aggregate(m, &ao, &a), 0);
    /* fc1: x[4,1024] W^T -> sgemm_ as torch calls it, column-major: 64 x 4 x 1024 */
    ck_assert_uint_eq(row(&a, "sgemm_", "[[64, 1024], [1024, 4], [64, 4]]")->count, 5);
    ck_assert_uint_eq(row(&a, "sgemm_", "[[32, 64], [64, 4], [32, 4]]")->count, 5);
    ck_assert_uint_eq(row(&a, "sgemm_", "[[10, 32], [32, 4], [10, 4]]")->count, 5);
    opp_agg_free(&a);
    opp_model_free(m);
    free(o), free(o2), free(trace), free(out), free(plain);
}
END_TEST

Suite *suite_blas(void)
{
    Suite *s = suite_create("blas");
    TCase *tc = tcase_create("clients");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, blas_program_exact);
    tcase_add_test(tc, run_limit_rows);
    tcase_add_test(tc, blas_values_forwarded_exactly);
    tcase_add_test(tc, blas_unloaded_and_loaded_again);
    tcase_add_test(tc, numpy_plain_preload);
    tcase_add_test(tc, numpy_linalg_exact);
    tcase_add_test(tc, numpy_linalg_small_exact);
    tcase_add_test(tc, numpy_reference_lapack_alternative);
    tcase_add_test(tc, caller_scopes_openblas_first);
    tcase_add_test(tc, caller_scopes_reference_first);
    tcase_add_test(tc, caller_scopes_after_unload);
    tcase_add_test(tc, caller_scope_kept_past_a_later_global_definition);
    tcase_add_test(tc, torch_cnn_sgemm_per_addmm);
    suite_add_tcase(s, tc);
    return s;
}
