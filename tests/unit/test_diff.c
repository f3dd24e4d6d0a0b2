/* opprof diff (report/analysis/diff.c, report/tool/cmd_diff.c) on two traces written by
 * hand: rows matched by name (and shapes), kernels by device time, each
 * class, the same-threshold, the total, --fail-above with and without named
 * operators, the table and JSON, exit codes; exact numbers. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool/cmds.h"
#include "analysis/diff.h"
#include "analysis/table_stream.h"
#include "analysis/model.h"
#include "analysis/pass.h"
#include "testutil.h"
#include "tracebuild.h"

#define US 1000ull
#define NN ('N' | 'N' << 8)

enum { F_DGEMM, F_DDOT, F_DAXPY, F_LAUNCH, F_DSCAL };

/* One process, one thread, flat calls; one kernel "k1" (string id 1) of
 * kernel_us launched by the cudaLaunchKernel call with correlation id 5. */
static void write_pair_trace(const char *path, const struct tb_ev *ev, size_t n, uint64_t kernel_us)
{
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 1, .pid = 77, .real = 1, .exe = "app");
    tb_funcs(&b, [F_DGEMM] = {OPP_OP_GEMM, OPP_DT_F64, "blas", "cblas_dgemm"},
             [F_DDOT] = {OPP_OP_DOT, OPP_DT_F64, "blas", "cblas_ddot"},
             [F_DAXPY] = {OPP_OP_AXPY, OPP_DT_F64, "blas", "cblas_daxpy"},
             [F_LAUNCH] = {OPP_OP_CUDA_API, OPP_DT_NONE, "cudart", "cudaLaunchKernel"},
             [F_DSCAL] = {OPP_OP_SCAL, OPP_DT_F64, "blas", "cblas_dscal"});
    tb_thread(&b, 77, NULL);
    tb_put_events(&b, 0, ev, n);
    tb_string(&b, 1, "k1");
    tb_kernel(&b, .name = 1, .start = 1000 * US, .end = (1000 + kernel_us) * US, .stream = 7,
              .corr = 5, .grid = {1}, .block = {1});
    tb_process_end(&b, 1, OPP_END_EXITED, 2000 * US);
    tb_end(&b);
}

#define SHAPE64 64, 32, 48, NN
#define SHAPE128 128, 32, 48, NN
#define LAUNCH 0, 5, 211 /* status, correlation id, cbid */
/* A flat call of [begin, end] us. */
#define CALL(fn, begin, end, ...) TB_CALL(fn, (begin) * US, (end) * US, 0, __VA_ARGS__)

/* A: dgemm 2 x 100 us, ddot 3 x 10 us, daxpy 5 us, a launch of 10 us whose
 * kernel runs 100 us. B: dgemm 2 x 150 us and one 20 us of another shape,
 * ddot 30.2 us in all (within 1 us: same), no daxpy, a new dscal of 20 us, a
 * launch of 5 us whose kernel runs 50 us. Self CPU totals: A 245 us, B
 * 375.2 us (+130.2 us, +53.1429%). */
static const struct tb_ev EV_A[] = {
    CALL(F_DGEMM, 0, 100, SHAPE64), CALL(F_DGEMM, 200, 300, SHAPE64), CALL(F_DDOT, 400, 410, 8),
    CALL(F_DDOT, 420, 430, 8),      CALL(F_DDOT, 440, 450, 8),        CALL(F_DAXPY, 500, 505, 8),
    CALL(F_LAUNCH, 600, 610, LAUNCH),
};
static const struct tb_ev EV_B[] = {
    CALL(F_DGEMM, 0, 150, SHAPE64), CALL(F_DGEMM, 200, 350, SHAPE64),
    CALL(F_DGEMM, 400, 420, SHAPE128), CALL(F_DDOT, 430, 440, 8), CALL(F_DDOT, 450, 460, 8),
    TB_CALL(F_DDOT, 470 * US, 480 * US + 200, 0, 8), CALL(F_DSCAL, 700, 720, 8),
    CALL(F_LAUNCH, 800, 805, LAUNCH),
};

static char *dir, *path_a, *path_b;
static struct opp_pass *read_a, *read_b; /* the diff's rows name into their models */
static struct opp_table_stream *sa, *sb;

static void setup(void)
{
    dir = tu_tmpdir();
    path_a = tu_path(dir, "a.trace");
    path_b = tu_path(dir, "b.trace");
    write_pair_trace(path_a, EV_A, sizeof EV_A / sizeof EV_A[0], 100);
    write_pair_trace(path_b, EV_B, sizeof EV_B / sizeof EV_B[0], 50);
    char err[512];
    sa = opp_table_stream_over(read_a = tu_pass_open(path_a), err, sizeof err);
    ck_assert_msg(sa != NULL, "%s", err);
    sb = opp_table_stream_over(read_b = tu_pass_open(path_b), err, sizeof err);
    ck_assert_msg(sb != NULL, "%s", err);
}

static void teardown(void)
{
    opp_table_stream_free(sa);
    opp_table_stream_free(sb);
    opp_pass_free(read_a);
    opp_pass_free(read_b);
    tu_rmdir(dir);
    free(dir), free(path_a), free(path_b);
}

/* The two traces compared as `opprof diff` compares them: each one's rows
 * read in one pass (table_stream.h). */
static int diff(const struct opp_diff_opts *o, struct opp_diff *d)
{
    struct opp_agg_opts ao = {.group_by_shape = o->group_by_shape};
    struct opp_agg a, b;
    char err[512];
    ck_assert_msg(opp_table_stream_aggregate(sa, &ao, &a, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(opp_table_stream_aggregate(sb, &ao, &b, err, sizeof err) == 0, "%s", err);
    int gpu =
        opp_model_has_gpu(opp_pass_model(read_a)) || opp_model_has_gpu(opp_pass_model(read_b));
    return opp_diff_aggs(&a, &b, gpu, o, d);
}

struct want {
    const char *key, *shapes;
    enum opp_diff_class cls;
    uint64_t calls_a, calls_b;
    double change_us, percent; /* percent NAN: none */
};

static void check(const struct opp_diff *d, const struct want *w, size_t n)
{
    ck_assert_uint_eq(d->n, n);
    for (size_t i = 0; i < n; i++) {
        const struct opp_diff_row *r = &d->rows[i];
        ck_assert_msg(!strcmp(r->key, w[i].key), "row %zu: %s, want %s", i, r->key, w[i].key);
        ck_assert_str_eq(r->shapes, w[i].shapes);
        ck_assert_msg(r->cls == w[i].cls, "%s: class %s", r->key, opp_diff_class_name(r->cls));
        ck_assert_uint_eq(r->a.count, w[i].calls_a);
        ck_assert_uint_eq(r->b.count, w[i].calls_b);
        ck_assert_msg(fabs(r->change - w[i].change_us * 1000) < 1e-6, "%s: change %f", r->key,
                      r->change);
        if (isnan(w[i].percent))
            ck_assert(isnan(r->percent));
        else
            ck_assert_msg(fabs(r->percent - w[i].percent) < 1e-9, "%s: %f", r->key, r->percent);
    }
}

START_TEST(diff_by_name)
{
    struct opp_diff_opts o = {0};
    struct opp_diff d;
    ck_assert_int_eq(diff(&o, &d), 0);
    const struct want w[] = {
        {"cblas_dgemm", "", OPP_DIFF_SLOWER, 2, 3, 120, 60.0},
        {"k1", "", OPP_DIFF_FASTER, 1, 1, -50, -50.0}, /* a kernel: its device time */
        {"cblas_dscal", "", OPP_DIFF_ADDED, 0, 1, 20, NAN},
        {"cblas_daxpy", "", OPP_DIFF_REMOVED, 1, 0, -5, -100.0},
        {"cudaLaunchKernel", "", OPP_DIFF_FASTER, 1, 1, -5, -50.0},
        {"cblas_ddot", "", OPP_DIFF_SAME, 3, 3, 0.2, 0.2 / 30 * 100},
    };
    check(&d, w, 6);
    ck_assert(d.gpu);
    ck_assert_double_eq_tol(d.total_a, 245 * US, 1e-6);
    ck_assert_double_eq_tol(d.total_b, 375.2 * US, 1e-6);
    ck_assert_double_eq_tol(d.total_percent, 130.2 / 245 * 100, 1e-9);
    ck_assert_int_eq(d.total_cls, OPP_DIFF_SLOWER);
    ck_assert_uint_eq(d.classes[OPP_DIFF_ADDED], 1);
    ck_assert_uint_eq(d.classes[OPP_DIFF_REMOVED], 1);
    ck_assert_uint_eq(d.classes[OPP_DIFF_SLOWER], 1);
    ck_assert_uint_eq(d.classes[OPP_DIFF_FASTER], 2);
    ck_assert_uint_eq(d.classes[OPP_DIFF_SAME], 1);
    /* the sides hold every metric: the launch's kernel is its Self CUDA */
    ck_assert_uint_eq(d.rows[4].a.self_cuda_ns, 100 * US);
    ck_assert_uint_eq(d.rows[4].b.cuda_total_ns, 50 * US);
    ck_assert_uint_eq(d.rows[0].b.cpu_total_ns, 320 * US);
    opp_diff_free(&d);
}
END_TEST

/* The gate at pct over every row, without floors. */
static struct opp_diff_gate_result gate(const struct opp_diff *d, double pct,
                                        const char *const *names, size_t nnames)
{
    struct opp_diff_gate g = {.pct = pct, .names = names, .nnames = nnames};
    struct opp_diff_gate_result r;
    opp_diff_regressions(d, &g, &r);
    return r;
}

START_TEST(regressions_above_threshold)
{
    struct opp_diff_opts o = {0};
    struct opp_diff d;
    ck_assert_int_eq(diff(&o, &d), 0);
    /* --fail-above 50: the total (+53.14%) and dgemm (+60%, the worst);
     * the new dscal alone is not one */
    struct opp_diff_gate_result r = gate(&d, 50, NULL, 0);
    ck_assert_uint_eq(r.nreg, 2);
    ck_assert(!r.worst_total);
    ck_assert_str_eq(r.worst->key, "cblas_dgemm");
    ck_assert_uint_eq(gate(&d, 55, NULL, 0).nreg, 1);
    r = gate(&d, 60, NULL, 0);
    ck_assert_uint_eq(r.nreg, 0);
    ck_assert_ptr_null(r.worst);
    opp_diff_free(&d);
}
END_TEST

START_TEST(regressions_of_named_operators)
{
    struct opp_diff_opts o = {0};
    struct opp_diff d;
    ck_assert_int_eq(diff(&o, &d), 0);
    /* named: a new operator is slower without bound; ddot is "same", and
     * the total (+53.14%) is not checked when operators are named */
    const char *dscal[] = {"cblas_dscal"}, *ddot[] = {"cblas_ddot"};
    struct opp_diff_gate_result r = gate(&d, 60, dscal, 1);
    ck_assert_uint_eq(r.nreg, 1);
    ck_assert_str_eq(r.worst->key, "cblas_dscal");
    r = gate(&d, 0.5, ddot, 1);
    ck_assert_uint_eq(r.nreg, 0);
    ck_assert(!r.worst_total);
    ck_assert_ptr_null(r.worst);
    opp_diff_free(&d);
}
END_TEST

START_TEST(regressions_under_the_floors)
{
    struct opp_diff_opts o = {0};
    struct opp_diff d;
    ck_assert_int_eq(diff(&o, &d), 0);
    /* dgemm is 320 us in 3 calls in B: a floor above either lets it
     * through (counted), the total still fails */
    struct opp_diff_gate g = {.pct = 50, .min_ns = 320 * US, .min_calls = 3};
    struct opp_diff_gate_result r;
    opp_diff_regressions(&d, &g, &r);
    ck_assert_uint_eq(r.nreg, 2);
    ck_assert_str_eq(r.worst->key, "cblas_dgemm");
    ck_assert_uint_eq(r.under_floor, 0);
    g.min_ns = 321 * US;
    opp_diff_regressions(&d, &g, &r);
    ck_assert_uint_eq(r.nreg, 1);
    ck_assert(r.worst_total);
    ck_assert_uint_eq(r.under_floor, 1);
    g.min_ns = 0;
    g.min_calls = 4;
    opp_diff_regressions(&d, &g, &r);
    ck_assert_uint_eq(r.nreg, 1);
    ck_assert_uint_eq(r.under_floor, 1);
    /* a named new operator of 20 us under the default floor of 100 us */
    const char *dscal[] = {"cblas_dscal"};
    g = (struct opp_diff_gate){.pct = 60, .names = dscal, .nnames = 1,
                               .min_ns = OPP_DIFF_GATE_MIN_US * US,
                               .min_calls = OPP_DIFF_GATE_MIN_CALLS};
    opp_diff_regressions(&d, &g, &r);
    ck_assert_uint_eq(r.nreg, 0);
    ck_assert_uint_eq(r.under_floor, 1);
    opp_diff_free(&d);
}
END_TEST

START_TEST(same_threshold)
{
    struct opp_diff_opts o = {0};
    struct opp_diff d;
    /* a tighter threshold: ddot's +0.2 us is now slower */
    o.same_given = 1;
    o.same_pct = 0;
    o.same_ns = 100;
    ck_assert_int_eq(diff(&o, &d), 0);
    ck_assert_int_eq(d.rows[5].cls, OPP_DIFF_SLOWER);
    ck_assert_uint_eq(d.classes[OPP_DIFF_SAME], 0);
    opp_diff_free(&d);
}
END_TEST

START_TEST(diff_by_shape)
{
    struct opp_diff_opts o = {.group_by_shape = 1};
    struct opp_diff d;
    ck_assert_int_eq(diff(&o, &d), 0);
    const struct want w[] = {
        {"cblas_dgemm", "[[64, 48], [48, 32], [64, 32]]", OPP_DIFF_SLOWER, 2, 2, 100, 50.0},
        {"k1", "[]", OPP_DIFF_FASTER, 1, 1, -50, -50.0},
        {"cblas_dgemm", "[[128, 48], [48, 32], [128, 32]]", OPP_DIFF_ADDED, 0, 1, 20, NAN},
        {"cblas_dscal", "[[8]]", OPP_DIFF_ADDED, 0, 1, 20, NAN},
        {"cblas_daxpy", "[[8], [8]]", OPP_DIFF_REMOVED, 1, 0, -5, -100.0},
        {"cudaLaunchKernel", "[]", OPP_DIFF_FASTER, 1, 1, -5, -50.0},
        {"cblas_ddot", "[[8], [8]]", OPP_DIFF_SAME, 3, 3, 0.2, 0.2 / 30 * 100},
    };
    check(&d, w, 7);
    opp_diff_free(&d);
}
END_TEST

START_TEST(diff_by_self_cuda)
{
    struct opp_diff d;
    /* by self CUDA time: the launch and its kernel halve, the rest is 0 */
    struct opp_diff_opts o = {.metric = OPP_DIFF_SELF_CUDA};
    ck_assert_int_eq(diff(&o, &d), 0);
    ck_assert_str_eq(d.rows[0].key, "cudaLaunchKernel");
    ck_assert_str_eq(d.rows[1].key, "k1");
    ck_assert_int_eq(d.rows[0].cls, OPP_DIFF_FASTER);
    ck_assert_double_eq_tol(d.rows[0].change, -50.0 * US, 1e-6);
    /* no change: by name; only in A or B is still removed or added */
    ck_assert_str_eq(d.rows[2].key, "cblas_daxpy");
    ck_assert_int_eq(d.rows[2].cls, OPP_DIFF_REMOVED);
    ck_assert_str_eq(d.rows[3].key, "cblas_ddot");
    ck_assert_int_eq(d.rows[3].cls, OPP_DIFF_SAME);
    ck_assert_str_eq(d.rows[5].key, "cblas_dscal");
    ck_assert_int_eq(d.rows[5].cls, OPP_DIFF_ADDED);
    ck_assert_double_eq_tol(d.total_a, 100 * US, 1e-6);
    ck_assert_double_eq_tol(d.total_percent, -50.0, 1e-9);
    ck_assert_int_eq(d.total_cls, OPP_DIFF_FASTER);
    opp_diff_free(&d);
}
END_TEST

#define DIFF(...) ((char *[]){"diff", __VA_ARGS__, NULL})

static int run(char **argv, char **out, char **err)
{
    return tu_call(cmd_diff, argv, dir, out, err);
}

START_TEST(command_table)
{
    char *out, *err;
    /* the table: header, rows by change, the total, the classes */
    ck_assert_int_eq(run(DIFF(path_a, path_b, "--limit", "2"), &out, &err), 0);
    ck_assert_str_eq(out,
        "---------------  -------  -------  -------  ----------  ----------  -----------  -----------  -----------  -----------  ------------  ------------  ----------  --------  \n"
        "           Name    Class  Calls A  Calls B  Self CPU A  Self CPU B  CPU total A  CPU total B  Self CUDA A  Self CUDA B  CUDA total A  CUDA total B      Change  Change %  \n"
        "---------------  -------  -------  -------  ----------  ----------  -----------  -----------  -----------  -----------  ------------  ------------  ----------  --------  \n"
        "    cblas_dgemm   slower        2        3   200.000us   320.000us    200.000us    320.000us      0.000us      0.000us       0.000us       0.000us  +120.000us   +60.00%  \n"
        "             k1   faster        1        1     0.000us     0.000us      0.000us      0.000us    100.000us     50.000us     100.000us      50.000us   -50.000us   -50.00%  \n"
        "---------------  -------  -------  -------  ----------  ----------  -----------  -----------  -----------  -----------  ------------  ------------  ----------  --------  \n"
        "Self CPU time total: 245.000us -> 375.200us (+53.14%, slower)\n"
        "6 rows: 1 added, 1 removed, 1 slower, 2 faster, 1 same\n"
        "Change: self_cpu from A to B (kernels, copies, memsets: device time); same: within 1.00% of A or 1.000us\n");
    free(out), free(err);
}
END_TEST

START_TEST(command_fail_above)
{
    char *out, *err;
    /* the gate: one line names the worst, exit 1 */
    ck_assert_int_eq(run(DIFF(path_a, path_b, "--fail-above", "50"), &out, &err), 1);
    ck_assert_str_eq(err, "opprof diff: regression above 50.00%: cblas_dgemm self_cpu 200.000us "
                          "-> 320.000us (+60.00%); 2 regressions in all\n");
    free(out), free(err);
    ck_assert_int_eq(run(DIFF(path_a, path_b, "--fail-above", "60"), &out, &err), 0);
    free(out), free(err);
}
END_TEST

START_TEST(command_fail_above_named_op)
{
    char *out, *err;
    ck_assert_int_eq(run(DIFF(path_a, path_b, "--fail-above", "60", "--op", "cblas_dscal",
                              "--min-us", "20", "--min-calls", "1"),
                         &out, &err),
                     1);
    ck_assert_str_eq(err, "opprof diff: regression above 60.00%: cblas_dscal self_cpu 0.000us -> "
                          "20.000us (new)\n");
    ck_assert_ptr_nonnull(strstr(out, "Gate: fails above +60.00% (cblas_dscal); an operator under "
                                      "20.000us or 1 call in B cannot fail (--min-us, "
                                      "--min-calls): 0 slower above +60.00% let through\n"));
    free(out), free(err);
    /* one call in B: under the default floor of calls */
    ck_assert_int_eq(run(DIFF(path_a, path_b, "--fail-above", "60", "--op", "cblas_dscal",
                              "--min-us", "0", "--min-calls", "2"),
                         &out, &err),
                     0);
    ck_assert_str_eq(err, "");
    free(out), free(err);
}
END_TEST

/* --op checks the operators named and nothing else: ddot is the same,
 * the total's +53.14% does not count */
START_TEST(command_fail_above_only_named_op)
{
    char *out, *err;
    ck_assert_int_eq(run(DIFF(path_a, path_b, "--fail-above", "5", "--op", "cblas_ddot"), &out,
                         &err),
                     0);
    ck_assert_str_eq(err, "");
    ck_assert_ptr_nonnull(strstr(out, "\nGate: fails above +5.00% (cblas_ddot); "));
    free(out), free(err);
}
END_TEST

/* A one-call operator from 28 to 69 us (+146%) beside one of 20 calls
 * that went from 2 to 2.1 ms (+5%): the noise of the small one does not
 * fail a gate of 10%; its floor, and what it let through, are shown. */
START_TEST(command_fail_above_floor)
{
    static const struct tb_ev a[] = {CALL(F_DDOT, 0, 28, 8), CALL(F_DGEMM, 100, 2100, SHAPE64)};
    static const struct tb_ev b[] = {CALL(F_DDOT, 0, 69, 8), CALL(F_DGEMM, 100, 2200, SHAPE64)};
    char *pa = tu_path(dir, "small_a.trace"), *pb = tu_path(dir, "small_b.trace"), *out, *err;
    write_pair_trace(pa, a, 2, 100);
    write_pair_trace(pb, b, 2, 100);
    ck_assert_int_eq(run(DIFF(pa, pb, "--fail-above", "10"), &out, &err), 0);
    ck_assert_str_eq(err, "");
    ck_assert_ptr_nonnull(strstr(out, "\nGate: fails above +10.00% (the total and every operator "
                                      "in both traces); an operator under 100.000us or 2 calls in "
                                      "B cannot fail (--min-us, --min-calls): 1 slower above "
                                      "+10.00% let through\n"));
    free(out), free(err);
    /* the floors lowered: it fails the gate again */
    ck_assert_int_eq(run(DIFF(pa, pb, "--fail-above", "10", "--min-us", "10", "--min-calls", "1"),
                         &out, &err),
                     1);
    ck_assert_str_eq(err, "opprof diff: regression above 10.00%: cblas_ddot self_cpu 28.000us -> "
                          "69.000us (+146.43%)\n");
    free(out), free(err);
    ck_assert_int_eq(run(DIFF(pa, pb, "-f", "json", "--fail-above", "10"), &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"gate\": {\"percent\": 10.000, \"ops\": null, "
                                      "\"min_us\": 100.000, \"min_calls\": 2, \"under_floor\": "
                                      "1},\n  \"regression\": null,\n"));
    free(out), free(err);
    free(pa), free(pb);
}
END_TEST

START_TEST(command_same_trace)
{
    char *out, *err;
    /* B against itself: everything the same, whatever the gate */
    ck_assert_int_eq(run(DIFF(path_b, path_b, "--fail-above", "0"), &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "5 rows: 0 added, 0 removed, 0 slower, 0 faster, 5 same\n"));
    free(out), free(err);
}
END_TEST

START_TEST(command_json)
{
    char *out, *err;
    ck_assert_int_eq(run(DIFF(path_a, path_b, "-f", "json", "--fail-above", "50", "-n", "1"),
                         &out, &err),
                     1);
    ck_assert_ptr_nonnull(strstr(out, "\"total\": {\"a\": 245.000, \"b\": 375.200, \"change\": "
                                      "130.200, \"percent\": 53.143, \"class\": \"slower\"},\n"));
    ck_assert_ptr_nonnull(strstr(out, "\"classes\": {\"added\": 1, \"removed\": 1, \"slower\": 1, "
                                      "\"faster\": 2, \"same\": 1},\n"));
    ck_assert_ptr_nonnull(strstr(out, "\"regression\": {\"key\": \"cblas_dgemm\", \"percent\": "
                                      "60.000, \"count\": 2},\n"));
    ck_assert_ptr_nonnull(strstr(out, "{\"key\": \"cblas_dgemm\", \"device_type\": \"CPU\", "
                                      "\"class\": \"slower\", \"a\": {\"count\": 2, "
                                      "\"self_cpu_time_total\": 200.000, \"cpu_time_total\": "
                                      "200.000, \"self_cuda_time_total\": 0.000, "
                                      "\"cuda_time_total\": 0.000}, \"b\": {\"count\": 3, "));
    ck_assert_ptr_null(strstr(out, "\"key\": \"k1\""));
    free(out), free(err);
}
END_TEST

START_TEST(command_json_named_new_op)
{
    char *out, *err;
    /* a named new operator: its percent has no value */
    ck_assert_int_eq(run(DIFF(path_a, path_b, "-f", "json", "--fail-above", "60", "--op",
                              "cblas_dscal", "--min-us", "0", "--min-calls", "0"),
                         &out, &err),
                     1);
    ck_assert_ptr_nonnull(strstr(out, "\"regression\": {\"key\": \"cblas_dscal\", \"percent\": "
                                      "null, \"count\": 1},\n"));
    ck_assert_ptr_nonnull(strstr(out, "\"gate\": {\"percent\": 60.000, \"ops\": "
                                      "[\"cblas_dscal\"], \"min_us\": 0.000, \"min_calls\": 0, "
                                      "\"under_floor\": 0},\n"));
    ck_assert_ptr_nonnull(strstr(out, "{\"key\": \"cblas_dscal\", \"device_type\": \"CPU\", "
                                      "\"class\": \"added\", \"a\": null, \"b\": {\"count\": 1, "));
    free(out), free(err);
}
END_TEST

START_TEST(command_unreadable_trace)
{
    char *out, *err, *bad = tu_path(dir, "bad.trace"), *none = tu_path(dir, "none.trace");
    FILE *f = fopen(bad, "w");
    ck_assert_ptr_nonnull(f);
    fputs("not a trace at all\n", f);
    fclose(f);
    ck_assert_int_eq(run(DIFF(path_a, bad), &out, &err), 3);
    ck_assert_ptr_nonnull(strstr(err, "opprof diff: "));
    ck_assert_ptr_nonnull(strstr(err, "bad.trace"));
    ck_assert_str_eq(out, "");
    free(out), free(err);
    ck_assert_int_eq(run(DIFF(none, path_b), &out, &err), 3);
    ck_assert_ptr_nonnull(strstr(err, "none.trace"));
    free(out), free(err);
    free(bad), free(none);
}
END_TEST

/* A path with a newline, a terminal escape and a byte that is not UTF-8:
 * the message stays one line, those bytes escaped. */
START_TEST(command_hostile_path)
{
    char *out, *err, *hostile = tu_path(dir, "x\nopprof diff: fake\x1b[2J\xff.trace");
    ck_assert_int_eq(run(DIFF(hostile, path_b), &out, &err), 3);
    char want[4400];
    snprintf(want, sizeof want,
             "opprof diff: cannot open %s/x\\nopprof diff: fake\\x1b[2J\\xff.trace: No such "
             "file or directory\n",
             dir);
    ck_assert_str_eq(err, want);
    ck_assert_int_eq(tu_count_lines(err, "opprof diff: "), 1);
    ck_assert_str_eq(out, "");
    free(out), free(err), free(hostile);
}
END_TEST

START_TEST(command_usage_errors)
{
    char *out, *err;
    const struct {
        char **argv;
        const char *msg;
    } usage[] = {
        {DIFF(path_a),
         "opprof diff: which two traces? (usage: opprof diff A.trace B.trace [options])\n"},
        {DIFF(path_a, path_b, path_a),
         "opprof diff: two traces, no more (usage: opprof diff A.trace B.trace [options])\n"},
        {DIFF(path_a, path_b, "--metric", "flops"),
         "opprof diff: unknown metric 'flops' (one of: self_cpu, cpu_total, self_cuda, "
         "cuda_total)\n"},
        {DIFF(path_a, path_b, "--fail-above", "-3"),
         "opprof diff: --fail-above wants a percentage (0 or more), not '-3'\n"},
        {DIFF(path_a, path_b, "--same", "1"),
         "opprof diff: --same wants PCT,US (e.g. 1,1), not '1'\n"},
        {DIFF(path_a, path_b, "--by", "lib"), "opprof diff: --by wants name or shape, not 'lib'\n"},
        {DIFF(path_a, path_b, "--by", "name", "--group-by-shape"),
         "opprof diff: --by name and --group-by-shape say different things: give one\n"},
        {DIFF(path_a, path_b, "--group-by-shape", "--by", "name"),
         "opprof diff: --by name and --group-by-shape say different things: give one\n"},
        {DIFF(path_a, path_b, "--op", "x"),
         "opprof diff: --op, --min-us and --min-calls go with --fail-above\n"},
        {DIFF(path_a, path_b, "--min-us", "5"),
         "opprof diff: --op, --min-us and --min-calls go with --fail-above\n"},
        {DIFF(path_a, path_b, "--fail-above", "5", "--min-us", "-1"),
         "opprof diff: --min-us wants microseconds (0 or more), not '-1'\n"},
        {DIFF(path_a, path_b, "--fail-above", "5", "--min-calls", "1.5"),
         "opprof diff: --min-calls wants a number of calls (0 or more), not '1.5'\n"},
        {DIFF(path_a, path_b, "--fail-above", "5", "--op", "nope"), NULL},
        {DIFF(path_a, path_b, "-f", "csv"),
         "opprof diff: unknown format 'csv' (one of: table, json)\n"},
    };
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        ck_assert_int_eq(run(usage[i].argv, &out, &err), 2);
        char want[1024]; /* NULL: the unknown --op, whose message names the traces */
        snprintf(want, sizeof want, "opprof diff: --op 'nope': no such operator in either trace "
                 "(`opprof diff %s %s` lists them)\n", path_a, path_b);
        ck_assert_str_eq(err, usage[i].msg ? usage[i].msg : want);
        ck_assert_str_eq(out, "");
        free(out), free(err);
    }
}
END_TEST

Suite *suite_diff(void)
{
    Suite *s = suite_create("diff");
    TCase *tc = tcase_create("diff");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, diff_by_name);
    tcase_add_test(tc, regressions_above_threshold);
    tcase_add_test(tc, regressions_of_named_operators);
    tcase_add_test(tc, regressions_under_the_floors);
    tcase_add_test(tc, same_threshold);
    tcase_add_test(tc, diff_by_shape);
    tcase_add_test(tc, diff_by_self_cuda);
    tcase_add_test(tc, command_table);
    tcase_add_test(tc, command_fail_above);
    tcase_add_test(tc, command_fail_above_named_op);
    tcase_add_test(tc, command_fail_above_only_named_op);
    tcase_add_test(tc, command_fail_above_floor);
    tcase_add_test(tc, command_same_trace);
    tcase_add_test(tc, command_json);
    tcase_add_test(tc, command_json_named_new_op);
    tcase_add_test(tc, command_unreadable_trace);
    tcase_add_test(tc, command_hostile_path);
    tcase_add_test(tc, command_usage_errors);
    suite_add_tcase(s, tc);
    return s;
}
