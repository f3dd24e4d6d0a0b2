/* The report by library: --lib NAME, the Lib column (--show-lib) and the
 * achieved FLOP rate (GFLOP/s or TFLOP/s, over CUDA total when the row has
 * GPU time), on a trace of oneDNN, BLAS and XNNPACK calls built with the
 * writer. Exact output throughout. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/aggregate.h"
#include "tool/cmds.h"
#include "analysis/model.h"
#include "views/output.h"
#include "testutil.h"
#include "tracebuild.h"
#include "oracle/loaded.h"

enum { F_EXEC, F_SGEMM, F_XNN };
#define K_ONEDNN (OPP_OP_TENSORS | OPP_OPK_STATUS | OPP_OPK_SUBNAME)

static char *dir, *trace;

/* One process, one thread: a convolution (432 FLOPs in 1 us), a relu, a
 * failed execute (status 2: dnnl_invalid_arguments, listed under the
 * table), an sgemm_ of 2*100*200*300 FLOPs in 30 us and
 * an XNNPACK run. */
static void write_trace(const char *path)
{
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 0, .pid = 10, .ppid = 1, .parent = UINT32_MAX, .real = 1,
               .exe = "/usr/bin/app", .argv = {"app"});
    tb_funcs(&b, [F_EXEC] = {K_ONEDNN, OPP_DT_F32, "onednn", "dnnl_primitive_execute"},
             [F_SGEMM] = {OPP_OP_GEMM, OPP_DT_F32, "blas", "sgemm_"},
             [F_XNN] = {OPP_OP_PLAIN | OPP_OPK_STATUS, OPP_DT_NONE, "xnnpack", "xnn_run_operator"});
    tb_thread(&b, 10, "app");
    tb_events(&b,
              TB_CALL(F_EXEC, 1000, 2000, 0, 0, OPP_SUB_CONV, OPP_DT_F32, 3, 4, 1, 2, 4, 4, 4, 3,
                      2, 3, 3, 4, 1, 3, 2, 2),
              TB_CALL(F_EXEC, 3000, 3500, 0, 0, OPP_SUB_ELTWISE, OPP_DT_F32, 2, 4, 1, 3, 2, 2, 4,
                      1, 3, 2, 2), /* relu */
              TB_CALL(F_EXEC, 4000, 4100, 0, 2), /* failed */
              TB_CALL(F_SGEMM, 5000, 35000, 0, 100, 200, 300, 'N' | 'N' << 8),
              TB_CALL(F_XNN, 40000, 40200, 0, 0));
    tb_process_end(&b, 0, OPP_END_EXITED, 50000);
    tb_end(&b);
}

static void setup(void)
{
    dir = tu_tmpdir();
    ck_assert_ptr_nonnull(dir);
    trace = tu_path(dir, "lib.opprof");
    write_trace(trace);
}

static void teardown(void)
{
    tu_rmdir(dir);
    free(trace);
    free(dir);
}

static struct opp_model *load(void)
{
    char err[512];
    struct opp_model *m = tu_model_load(trace, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    return m;
}

START_TEST(lib_filter_keeps_its_rows)
{
    struct opp_model *m = load();
    struct opp_agg a;
    struct opp_agg_opts o = {.lib = "onednn", .sort = OPP_SORT_COUNT};
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    ck_assert_uint_eq(a.nrows, 3);
    ck_assert_uint_eq(a.events, 3);
    ck_assert_uint_eq(a.self_cpu_time_total_ns, 1600);
    ck_assert_str_eq(a.rows[0].key, "dnnl_primitive_execute"); /* the failed call */
    ck_assert_str_eq(a.rows[1].key, "onednn::convolution");
    ck_assert_uint_eq(a.rows[1].flops, 432);
    ck_assert_str_eq(a.rows[2].key, "onednn::eltwise");
    for (size_t i = 0; i < a.nrows; i++)
        ck_assert_str_eq(a.rows[i].lib, "onednn");
    ck_assert_uint_eq(a.errors, 1); /* the failed execute */
    opp_agg_free(&a);
    opp_model_free(m);
}
END_TEST

START_TEST(lib_filter_leaves_other_statuses_out)
{
    struct opp_model *m = load();
    struct opp_agg a;
    struct opp_agg_opts o = {.lib = "blas", .sort = OPP_SORT_COUNT};
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    ck_assert_uint_eq(a.nrows, 1);
    ck_assert_str_eq(a.rows[0].key, "sgemm_");
    ck_assert_uint_eq(a.errors, 0); /* the failed execute is not listed */
    ck_assert_uint_eq(a.nstatuses, 0);
    opp_agg_free(&a);
    opp_model_free(m);
}
END_TEST

START_TEST(lib_filter_of_absent_lib)
{
    struct opp_model *m = load();
    struct opp_agg a;
    struct opp_agg_opts o = {.lib = "cublas", .sort = OPP_SORT_COUNT};
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    ck_assert_uint_eq(a.nrows, 0);
    ck_assert_uint_eq(a.events, 0);
    opp_agg_free(&a);
    opp_model_free(m);
}
END_TEST

static int report(char **argv, char **out)
{
    char *err = NULL;
    int rc = tu_call(cmd_report, argv, dir, out, &err);
    ck_assert_str_eq(err, "");
    free(err);
    return rc;
}

START_TEST(command_lib_shapes_flops)
{
    char *out;
    char *a1[] = {"report", trace, "--lib", "onednn", "--group-by-shape", "--flops",
                  "--show-lib", NULL};
    ck_assert_int_eq(report(a1, &out), 0);
    ck_assert_str_eq(
        out, "--------------------------  ------------  ------------  ------------  ----------"
             "--  ------------  ------------  ----------------------------------------------  "
             "------------  ------------  ------------  \n"
             "                      Name    Self CPU %      Self CPU   CPU total %     CPU tot"
             "al  CPU time avg    # of Calls                                    Input Shapes  "
             " Total FLOPs       GFLOP/s           Lib  \n"
             "--------------------------  ------------  ------------  ------------  ----------"
             "--  ------------  ------------  ----------------------------------------------  "
             "------------  ------------  ------------  \n"
             "       onednn::convolution         3.14%       1.000us         3.14%       1.000"
             "us       1.000us             1      [[1, 2, 4, 4], [3, 2, 3, 3], [1, 3, 2, 2]]  "
             "     432.000         0.432        onednn  \n"
             "           onednn::eltwise         1.57%       0.500us         1.57%       0.500"
             "us       0.500us             1                    [[1, 3, 2, 2], [1, 3, 2, 2]]  "
             "          --            --        onednn  \n"
             "    dnnl_primitive_execute         0.31%       0.100us         0.31%       0.100"
             "us       0.100us             1                                              []  "
             "          --            --        onednn  \n"
             "--------------------------  ------------  ------------  ------------  ----------"
             "--  ------------  ------------  ----------------------------------------------  "
             "------------  ------------  ------------  \n"
             "Self CPU time total: 1.600us of 31.800us before --lib (the percentages' base)\n"
             "\n"
             "Calls that did not return success: 1 of 3\n"
             "--------------------------  ------------  --------------------------  \n"
             "                      Name    # of Calls  Status                      \n"
             "--------------------------  ------------  --------------------------  \n"
             "    dnnl_primitive_execute             1  dnnl_invalid_arguments (2)  \n"
             "--------------------------  ------------  --------------------------  \n");
    free(out);
}
END_TEST

START_TEST(command_flops_of_every_lib)
{
    char *out;
    /* Every library, by FLOPs: sgemm_ 12 MFLOPs in 30 us. */
    char *a2[] = {"report", trace, "--flops", "--show-lib", "--sort", "flops", "--limit", "2", NULL};
    ck_assert_int_eq(report(a2, &out), 0);
    ck_assert_str_eq(out,
        "-----------------------  ------------  ------------  ------------  ------------ "
        " ------------  ------------  ------------  ------------  ------------  \n"
        "                   Name    Self CPU %      Self CPU   CPU total %     CPU total "
        " CPU time avg    # of Calls   Total FLOPs       GFLOP/s           Lib  \n"
        "-----------------------  ------------  ------------  ------------  ------------ "
        " ------------  ------------  ------------  ------------  ------------  \n"
        "                 sgemm_        94.34%      30.000us        94.34%      30.000us "
        "     30.000us             1  12000000.000       400.000          blas  \n"
        "    onednn::convolution         3.14%       1.000us         3.14%       1.000us "
        "      1.000us             1       432.000         0.432        onednn  \n"
        "-----------------------  ------------  ------------  ------------  ------------ "
        " ------------  ------------  ------------  ------------  ------------  \n"
        "Self CPU time total: 31.800us\n"
        "\n"
        "Calls that did not return success: 1 of 5\n"
        "--------------------------  ------------  --------------------------  \n"
        "                      Name    # of Calls  Status                      \n"
        "--------------------------  ------------  --------------------------  \n"
        "    dnnl_primitive_execute             1  dnnl_invalid_arguments (2)  \n"
        "--------------------------  ------------  --------------------------  \n");
    free(out);
}
END_TEST

START_TEST(command_show_lib)
{
    char *out;
    /* --show-lib alone: the torch columns, then Lib. */
    char *a3[] = {"report", trace, "--lib", "xnnpack", "--show-lib", NULL};
    ck_assert_int_eq(report(a3, &out), 0);
    ck_assert_str_eq(
        out, "--------------------  ------------  ------------  ------------  ------------  --"
             "----------  ------------  ------------  \n"
             "                Name    Self CPU %      Self CPU   CPU total %     CPU total  CP"
             "U time avg    # of Calls           Lib  \n"
             "--------------------  ------------  ------------  ------------  ------------  --"
             "----------  ------------  ------------  \n"
             "    xnn_run_operator         0.63%       0.200us         0.63%       0.200us    "
             "   0.200us             1       xnnpack  \n"
             "--------------------  ------------  ------------  ------------  ------------  --"
             "----------  ------------  ------------  \n"
             "Self CPU time total: 0.200us of 31.800us before --lib (the percentages' base)\n");
    free(out);
}
END_TEST

/* --lib's percentages are of the whole trace, as --match's: a LAPACK
 * call's CPU total holds the BLAS call it made (dgesv_ 10 us, its sgemm_
 * 8 us), and of dgesv_'s own 2 us it would be 500%. */
START_TEST(lib_percentages_of_the_whole)
{
    char *path = tu_path(dir, "nested.opprof");
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 0, .pid = 10, .ppid = 1, .parent = UINT32_MAX, .real = 1,
               .exe = "/usr/bin/app", .argv = {"app"});
    tb_funcs(&b, [0] = {OPP_OP_PLAIN, OPP_DT_NONE, "lapack", "dgesv_"},
             [1] = {OPP_OP_GEMM, OPP_DT_F32, "blas", "sgemm_"});
    tb_thread(&b, 10, "app");
    tb_events(&b, TB_CALL(1, 2000, 10000, 1, 10, 10, 10, 'N' | 'N' << 8),
              TB_CALL(0, 1000, 11000, 0));
    tb_process_end(&b, 0, OPP_END_EXITED, 20000);
    tb_end(&b);
    char *out;
    char *argv[] = {"report", path, "--lib", "lapack", NULL};
    ck_assert_int_eq(report(argv, &out), 0);
    ck_assert_str_eq(
        out, "----------  ------------  ------------  ------------  ------------  ------------  "
             "------------  \n"
             "      Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    "
             "# of Calls  \n"
             "----------  ------------  ------------  ------------  ------------  ------------  "
             "------------  \n"
             "    dgesv_        20.00%       2.000us       100.00%      10.000us      10.000us    "
             "         1  \n"
             "----------  ------------  ------------  ------------  ------------  ------------  "
             "------------  \n"
             "Self CPU time total: 2.000us of 10.000us before --lib (the percentages' base)\n");
    free(out), free(path);
}
END_TEST

/* A filter that names nothing the trace has is a usage error (exit 2, the
 * names it could have been), not an empty table. */
START_TEST(unknown_filter_names)
{
    struct {
        char *opt, *val;
        const char *said;
    } bad[] = {
        {"--lib", "onednnn",
         "opprof report: --lib onednnn: no such library among those the trace's processes could "
         "call (onednn, blas, xnnpack)\n"},
        {"--pid", "99999", "opprof report: --pid 99999: no process with that pid in the trace\n"},
        {"--tid", "99999", "opprof report: --tid 99999: no thread with that tid in the trace\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *argv[] = {"report", trace, bad[i].opt, bad[i].val, NULL};
        char *out = NULL, *err = NULL;
        ck_assert_int_eq(tu_call(cmd_report, argv, dir, &out, &err), 2);
        ck_assert_str_eq(out, "");
        ck_assert_str_eq(err, bad[i].said);
        free(out), free(err);
    }
}
END_TEST

/* The failed execute is counted on its row and listed by status, in the
 * aggregate and in JSON (filter_by_lib: a library filter that leaves it out
 * lists none). */
START_TEST(statuses)
{
    struct opp_model *m = load();
    struct opp_agg a;
    struct opp_agg_opts o = {.sort = OPP_SORT_COUNT};
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    ck_assert_uint_eq(a.events, 5);
    ck_assert_uint_eq(a.errors, 1);
    ck_assert_uint_eq(a.nstatuses, 1);
    ck_assert_str_eq(a.statuses[0].key, "dnnl_primitive_execute");
    ck_assert_str_eq(a.statuses[0].lib, "onednn");
    ck_assert_str_eq(a.statuses[0].name, "dnnl_invalid_arguments");
    ck_assert_int_eq(a.statuses[0].status, 2);
    ck_assert_uint_eq(a.statuses[0].count, 1);
    for (size_t i = 0; i < a.nrows; i++)
        ck_assert_uint_eq(a.rows[i].errors, !strcmp(a.rows[i].key, "dnnl_primitive_execute"));
    char *out = NULL;
    struct opp_out_opts oo = {0};
    CAPTURE(out, opp_out_json(f, "t", m, &a, &oo));
    ck_assert_ptr_nonnull(strstr(out, "\"key\": \"dnnl_primitive_execute\", \"lib\": \"onednn\", "
                                      "\"count\": 1, \"self_cpu_time_total\": 0.100, "
                                      "\"cpu_time_total\": 0.100, \"cpu_time\": 0.100, "
                                      "\"flops\": 0, \"errors\": 1}"));
    ck_assert_ptr_nonnull(strstr(out, "\"key\": \"sgemm_\", \"lib\": \"blas\", \"count\": 1, "
                                      "\"self_cpu_time_total\": 30.000, \"cpu_time_total\": "
                                      "30.000, \"cpu_time\": 30.000, \"flops\": 12000000}"));
    ck_assert_ptr_nonnull(strstr(out, "\n  ],\n  \"errors\": 1,\n  \"statuses\": [\n"
                                      "    {\"key\": \"dnnl_primitive_execute\", \"lib\": "
                                      "\"onednn\", \"status\": 2, \"name\": "
                                      "\"dnnl_invalid_arguments\", \"count\": 1}\n  ]\n}\n"));
    free(out);
    opp_agg_free(&a);
    opp_model_free(m);
}
END_TEST

/* Status names per library, from the headers (common/status_names.h);
 * NULL for an unknown library or value. */
START_TEST(status_names)
{
    ck_assert_str_eq(opp_status_name("cudart", 0), "cudaSuccess");
    ck_assert_str_eq(opp_status_name("cudart", 35), "cudaErrorInsufficientDriver");
    ck_assert_str_eq(opp_status_name("cudart", 600), "cudaErrorNotReady");
    ck_assert_str_eq(opp_status_name("cuda", 34), "CUDA_ERROR_STUB_LIBRARY");
    ck_assert_str_eq(opp_status_name("cuda", 100), "CUDA_ERROR_NO_DEVICE");
    ck_assert_str_eq(opp_status_name("cublas", 7), "CUBLAS_STATUS_INVALID_VALUE");
    ck_assert_str_eq(opp_status_name("cublaslt", 15), "CUBLAS_STATUS_NOT_SUPPORTED");
    ck_assert_str_eq(opp_status_name("cudnn", 2000), "CUDNN_STATUS_BAD_PARAM");
    ck_assert_str_eq(opp_status_name("nccl", 4), "ncclInvalidArgument");
    ck_assert_str_eq(opp_status_name("cufft", 11), "CUFFT_INVALID_DEVICE"); /* 0xB */
    ck_assert_str_eq(opp_status_name("onednn", 3), "dnnl_unimplemented");
    ck_assert_str_eq(opp_status_name("xnnpack", 6), "xnn_status_out_of_memory");
    ck_assert_ptr_null(opp_status_name("nccl", 8)); /* ncclNumResults: a count, not a status */
    ck_assert_ptr_null(opp_status_name("cudart", 10000)); /* cudaErrorApiFailureBase */
    ck_assert_ptr_null(opp_status_name("cudart", -1));
    ck_assert_ptr_null(opp_status_name("blas", 0));
    ck_assert_ptr_null(opp_status_name(NULL, 0));
}
END_TEST

/* A row with GPU time: its rate is over CUDA total, not CPU total. */
START_TEST(rate_over_cuda_time)
{
    struct opp_row rows[2] = {
        {.key = "cublasSgemm_v2", .lib = "cublas", .count = 1, .self_cpu_time_total_ns = 5000,
         .cpu_time_total_ns = 5000, .cuda_time_total_ns = 1000, .flops = 2000000},
        {.key = "sgemm_", .lib = "blas", .count = 1, .self_cpu_time_total_ns = 4000,
         .cpu_time_total_ns = 4000, .flops = 2000000},
    };
    struct opp_agg a = {.rows = rows, .nrows = 2, .nrows_all = 2, .self_cpu_time_total_ns = 9000,
                        .self_cpu_base_ns = 9000};
    struct opp_out_opts oo = {.flops = 1};
    char *out;
    CAPTURE(out, opp_out_table(f, &a, &oo));
    /* 2 MFLOPs in 1 us of GPU time: 2000 GFLOP/s; on the CPU in 4 us: 500 */
    ck_assert_str_eq(out,
        "------------------  ------------  ------------  ------------  ------------  ----"
        "--------  ------------  ------------  ------------  \n"
        "              Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU "
        "time avg    # of Calls  Total MFLOPs       TFLOP/s  \n"
        "------------------  ------------  ------------  ------------  ------------  ----"
        "--------  ------------  ------------  ------------  \n"
        "    cublasSgemm_v2        55.56%       5.000us        55.56%       5.000us      "
        " 5.000us             1         2.000         2.000  \n"
        "            sgemm_        44.44%       4.000us        44.44%       4.000us      "
        " 4.000us             1         2.000         0.500  \n"
        "------------------  ------------  ------------  ------------  ------------  ----"
        "--------  ------------  ------------  ------------  \n"
        "Self CPU time total: 9.000us\n");
    free(out);
}
END_TEST

Suite *suite_report_lib(void)
{
    Suite *s = suite_create("report_lib");
    TCase *tc = tcase_create("report_lib");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, lib_filter_keeps_its_rows);
    tcase_add_test(tc, lib_filter_leaves_other_statuses_out);
    tcase_add_test(tc, lib_filter_of_absent_lib);
    tcase_add_test(tc, command_lib_shapes_flops);
    tcase_add_test(tc, command_flops_of_every_lib);
    tcase_add_test(tc, command_show_lib);
    tcase_add_test(tc, lib_percentages_of_the_whole);
    tcase_add_test(tc, statuses);
    tcase_add_test(tc, status_names);
    tcase_add_test(tc, rate_over_cuda_time);
    tcase_add_test(tc, unknown_filter_names);
    suite_add_tcase(s, tc);
    return s;
}
