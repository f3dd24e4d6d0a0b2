/* End to end on CPU tensor libraries: a C program calling Debian's oneDNN
 * with known shapes, and a CNN on Debian's PyTorch, under the real preload. */
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

static const struct opp_row *row(const struct opp_agg *a, const char *key, const char *shapes)
{
    for (size_t i = 0; i < a->nrows; i++)
        if (!strcmp(a->rows[i].key, key) && (!shapes || !strcmp(a->rows[i].shapes_str, shapes)))
            return &a->rows[i];
    return NULL;
}

/* The row must exist: say which one is missing. */
static const struct opp_row *need(const struct opp_agg *a, const char *key, const char *shapes)
{
    const struct opp_row *r = row(a, key, shapes);
    if (!r) {
        for (size_t i = 0; i < a->nrows; i++)
            fprintf(stderr, "  row %s %s x%llu\n", a->rows[i].key, a->rows[i].shapes_str,
                    (unsigned long long)a->rows[i].count);
        ck_abort_msg("no row %s %s", key, shapes ? shapes : "");
    }
    return r;
}

/* Events named name, and how many of them returned status. */
static void statuses(const struct opp_model *m, const char *name, int64_t status,
                     unsigned long *n, unsigned long *with)
{
    *n = *with = 0;
    for (size_t t = 0; t < m->nthreads; t++) {
        const struct opp_thread *th = &m->threads[t];
        const struct opp_process *p = &m->procs[th->proc];
        for (size_t i = 0; i < th->nevents; i++) {
            const struct opp_event *e = &th->events[i];
            if (strcmp(opp_model_str(m, e->name), name))
                continue;
            (*n)++;
            uint32_t kind = e->fn < p->nfuncs ? p->funcs[e->fn].kind : 0;
            *with += opp_op_status(kind, th->args + e->args, e->nargs) == status;
        }
    }
}

static int have_file(const char *path, const char *test, const char *pkg)
{
    if (access(path, F_OK) == 0)
        return 1;
    fprintf(stderr, "SKIP %s: no %s (apt-get install %s)\n", test, path, pkg);
    return 0;
}

/* onednn_app under `opprof run`: each primitive named by its kind, with
 * its tensors' dims, FLOPs and status; the program's output untouched. */
START_TEST(onednn_program_exact)
{
    const char *app = tu_build("tests/cpulibs/onednn_app");
    if (!have_file(app, "onednn_program_exact", "libdnnl-dev"))
        return;
    char *trace = tu_path(dir, "t.trace"), *out = tu_path(dir, "out"), *plain = tu_path(dir, "plain");
    char *run[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", (char *)app, NULL};
    ck_assert_int_eq(tu_code(tu_run(run, NULL, out, NULL)), 0);
    ck_assert_int_eq(tu_code(tu_run((char *[]){(char *)app, NULL}, NULL, plain, NULL)), 0);
    char *o1 = tu_slurp(out), *o2 = tu_slurp(plain);
    ck_assert_str_eq(o1, o2);
    ck_assert_ptr_nonnull(strstr(o1, "null execute 2\n"));

    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->dropped, 0);
    /* 18 executions (one failing), 8 primitives destroyed. */
    ck_assert_uint_eq(m->events, 18 + 8);
    struct opp_agg_opts ao = {.group_by_shape = 1};
    struct opp_agg a;
    ck_assert_int_eq(tu_aggregate(m, &ao, &a), 0);
    ck_assert_uint_eq(a.nrows, 10);
    /* N=2 C=3 10x10, K=4 3x3, stride 2, pad 1: 2*N*K*5*5*C*3*3 per call */
    const struct opp_row *r =
        need(&a, "onednn::convolution", "[[2, 3, 10, 10], [4, 3, 3, 3], [2, 4, 5, 5]]");
    ck_assert_uint_eq(r->count, 3);
    ck_assert_uint_eq(r->flops, 3ull * 2 * 2 * 4 * 5 * 5 * 3 * 3 * 3);
    ck_assert_str_eq(r->lib, "onednn");
    /* groups 2: weights [G, K/G, C/G, R, S]; 2*N*K*4*4*(C/G)*3*3 per call */
    r = need(&a, "onednn::convolution", "[[1, 4, 6, 6], [2, 3, 2, 3, 3], [1, 6, 4, 4]]");
    ck_assert_uint_eq(r->count, 2);
    ck_assert_uint_eq(r->flops, 2ull * 2 * 1 * 6 * 4 * 4 * 2 * 3 * 3);
    /* backward data, forward-sense tensors dx, w, dy: the forward's FLOPs */
    r = need(&a, "onednn::convolution_backward_data",
             "[[2, 3, 10, 10], [4, 3, 3, 3], [2, 4, 5, 5]]");
    ck_assert_uint_eq(r->count, 1);
    ck_assert_uint_eq(r->flops, 2ull * 2 * 4 * 5 * 5 * 3 * 3 * 3);
    r = need(&a, "onednn::matmul", "[[2, 3, 4], [2, 4, 5], [2, 3, 5]]");
    ck_assert_uint_eq(r->count, 2);
    ck_assert_uint_eq(r->flops, 2ull * 2 * (2 * 3 * 5) * 4);
    r = need(&a, "onednn::inner_product", "[[3, 7], [5, 7], [3, 5]]");
    ck_assert_uint_eq(r->count, 2);
    ck_assert_uint_eq(r->flops, 2ull * 2 * 3 * 5 * 7);
    r = need(&a, "onednn::eltwise", "[[2, 4, 5, 5], [2, 4, 5, 5]]");
    ck_assert_uint_eq(r->count, 4);
    ck_assert_uint_eq(r->flops, 0);
    ck_assert_uint_eq(need(&a, "onednn::pooling", "[[1, 6, 4, 4], [1, 6, 2, 2]]")->count, 1);
    ck_assert_uint_eq(need(&a, "onednn::reorder", "[[2, 3, 4], [2, 3, 4]]")->count, 2);
    /* The failing call: no primitive to name, its status recorded. */
    ck_assert_uint_eq(need(&a, "dnnl_primitive_execute", "[]")->count, 1);
    ck_assert_uint_eq(need(&a, "dnnl_primitive_destroy", "[]")->count, 8);
    unsigned long n, ok;
    statuses(m, "dnnl_primitive_execute", 2, &n, &ok); /* dnnl_invalid_arguments */
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(ok, 1);
    statuses(m, "onednn::convolution", 0, &n, &ok);
    ck_assert_uint_eq(n, 5);
    ck_assert_uint_eq(ok, 5);
    statuses(m, "dnnl_primitive_destroy", 0, &n, &ok);
    ck_assert_uint_eq(ok, 8);
    opp_agg_free(&a);
    opp_model_free(m);
    free(o1), free(o2), free(trace), free(out), free(plain);
}
END_TEST

/* A plugin host that unloads a plugin linking oneDNN, and oneDNN with it
 * (a copy of Debian's libdnnl.so.2 that can be unloaded, tests/cpulibs.mk),
 * and loads it again elsewhere: each primitive is still described, by
 * the query functions of the oneDNN loaded then. (Not under
 * ThreadSanitizer, whose runtime keeps unloaded libraries mapped.) */
START_TEST(onednn_unloaded_and_loaded_again)
{
    if (!have_file(tu_build("tests/cpulibs/libonednn_plugin.so"),
                   "onednn_unloaded_and_loaded_again", "libdnnl-dev"))
        return;
    char *trace = tu_path(dir, "t.trace"), *o, *e, want[4400];
    ck_assert_int_eq(tu_unload_run(dir, trace, "tests/cpulibs/libonednn_plugin.so",
                                   "dnnl-global/libdnnl.so.2", &o, &e),
                     0);
    ck_assert_str_eq(o, "round 0: 6\nround 1: 6\nround 2: 6\n");
    snprintf(want, sizeof want, "opprof: trace written to %s (9 events)\n", trace);
    ck_assert_str_eq(e, want);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    struct opp_agg_opts ao = {.group_by_shape = 1};
    struct opp_agg a;
    ck_assert_int_eq(tu_aggregate(m, &ao, &a), 0);
    ck_assert_uint_eq(a.nrows, 2);
    /* each round's relu over [2, 3], run twice */
    ck_assert_uint_eq(need(&a, "onednn::eltwise", "[[2, 3], [2, 3]]")->count, 6);
    ck_assert_uint_eq(need(&a, "dnnl_primitive_destroy", "[]")->count, 3);
    unsigned long n, ok;
    statuses(m, "onednn::eltwise", 0, &n, &ok);
    ck_assert_uint_eq(n, 6);
    ck_assert_uint_eq(ok, 6);
    opp_agg_free(&a);
    opp_model_free(m);
    free(o), free(e), free(trace);
}
END_TEST

/* xnnpack_app: each run of an operator, with its status. */
START_TEST(xnnpack_program_exact)
{
    const char *app = tu_build("tests/cpulibs/xnnpack_app");
    if (!have_file(app, "xnnpack_program_exact", "libxnnpack-dev libpthreadpool-dev"))
        return;
    char *trace = tu_path(dir, "x.trace"), *out = tu_path(dir, "out"), *plain = tu_path(dir, "plain");
    struct tu_env te;
    char **env = tu_preload_env(&te, trace, NULL);
    ck_assert_int_eq(tu_code(tu_run((char *[]){(char *)app, NULL}, env, out, NULL)), 0);
    ck_assert_int_eq(tu_code(tu_run((char *[]){(char *)app, NULL}, NULL, plain, NULL)), 0);
    char *o1 = tu_slurp(out), *o2 = tu_slurp(plain);
    ck_assert_str_eq(o1, o2);
    ck_assert_str_eq(o1, "clamp 25.5000\nrun before setup 3\n");
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->events, 4);
    unsigned long n, ok;
    statuses(m, "xnn_run_operator", 0, &n, &ok);
    ck_assert_uint_eq(n, 4);
    ck_assert_uint_eq(ok, 3);
    statuses(m, "xnn_run_operator", 3, &n, &ok); /* xnn_status_invalid_state */
    ck_assert_uint_eq(ok, 1);
    opp_model_free(m);
    free(o1), free(o2), free(trace), free(out), free(plain);
}
END_TEST

/* Debian's PyTorch, unmodified python3 under plain LD_PRELOAD: each conv
 * layer is a oneDNN convolution with its input dims, each nn.Linear call
 * one sgemm_. */
START_TEST(torch_cnn_onednn_conv)
{
    if (access(PY, X_OK) != 0 ||
        tu_code(tu_run((char *[]){PY, "-c", "import torch", NULL}, NULL, NULL, NULL)) != 0) {
        fprintf(stderr, "SKIP torch_cnn_onednn_conv: %s has no torch (apt-get install python3-torch)\n", PY);
        return;
    }
    char *trace = tu_path(dir, "cnn.trace"), *out = tu_path(dir, "out"), *plain = tu_path(dir, "plain");
    char script[4200];
    const char *src = getenv("OPPROF_SRC");
    snprintf(script, sizeof script, "%s/tests/py/cnn.py", src ? src : ".");
    struct tu_env te;
    char **env = tu_preload_env(&te, trace, NULL);
    ck_assert_int_eq(tu_code(tu_run((char *[]){PY, script, NULL}, env, out, NULL)), 0);
    ck_assert_int_eq(tu_code(tu_run((char *[]){PY, script, NULL}, NULL, plain, NULL)), 0);
    char *o1 = tu_slurp(out), *o2 = tu_slurp(plain);
    ck_assert_str_eq(o1, o2);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->dropped, 0);
    struct opp_agg_opts ao = {.group_by_shape = 1};
    struct opp_agg a;
    ck_assert_int_eq(tu_aggregate(m, &ao, &a), 0);
    /* 5 steps; conv1 3->8 3x3 pad 1 on [4,3,32,32], conv2 8->16 on [4,8,16,16] */
    const struct opp_row *r =
        need(&a, "onednn::convolution", "[[4, 3, 32, 32], [8, 3, 3, 3], [4, 8, 32, 32]]");
    ck_assert_uint_eq(r->count, 5);
    ck_assert_uint_eq(r->flops, 5ull * 2 * 4 * 8 * 32 * 32 * 3 * 3 * 3);
    r = need(&a, "onednn::convolution", "[[4, 8, 16, 16], [16, 8, 3, 3], [4, 16, 16, 16]]");
    ck_assert_uint_eq(r->count, 5);
    ck_assert_uint_eq(r->flops, 5ull * 2 * 4 * 16 * 16 * 16 * 8 * 3 * 3);
    ck_assert_uint_eq(tu_count(m, "onednn::convolution", -1, 0, 0), 10);
    unsigned long n, ok;
    statuses(m, "onednn::convolution", 0, &n, &ok);
    ck_assert_uint_eq(ok, 10);
    /* 3 nn.Linear layers x 5 steps, one sgemm_ each */
    ck_assert_uint_eq(tu_count(m, "sgemm_", -1, 0, 0), 15);
    ck_assert_str_eq(need(&a, "sgemm_", "[[64, 1024], [1024, 4], [64, 4]]")->lib, "blas");
    opp_agg_free(&a);
    opp_model_free(m);
    free(o1), free(o2), free(trace), free(out), free(plain);
}
END_TEST

Suite *suite_cpulibs(void)
{
    Suite *s = suite_create("cpulibs");
    TCase *tc = tcase_create("clients");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, onednn_program_exact);
    tcase_add_test(tc, onednn_unloaded_and_loaded_again);
    tcase_add_test(tc, xnnpack_program_exact);
    tcase_add_test(tc, torch_cnn_onednn_conv);
    suite_add_tcase(s, tc);
    return s;
}
