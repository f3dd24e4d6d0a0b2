/* The report's outputs of the suites' trace (report_trace.h): the table,
 * CSV and JSON of its key_averages (views/), exact to the byte. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "analysis/aggregate.h"
#include "tool/cmds.h"
#include "tool/outfile.h"
#include "views/columns.h"
#include "views/fmt.h"
#include "analysis/model.h"
#include "views/output.h"
#include "report_trace.h"
#include "testutil.h"

/* ---- outputs ---- */

#define SEP15 "---------------  "
#define SEP12 "------------  "
#define SEP7 SEP15 SEP12 SEP12 SEP12 SEP12 SEP12 SEP12

START_TEST(table)
{
    struct opp_agg a;
    struct opp_agg_opts o = {0};
    struct opp_out_opts oo = {0};
    aggregate(&o, &a);
    char *out;
    CAPTURE(out, opp_out_table(f, &a, &oo));
    /* torch has no ns unit: sub-microsecond times are fractions of us;
     * the rows add up the trace's processes, said above them. */
    const char *want = "3 processes added up (the whole job's cost): --pid PID for one, "
                       "--by-process for each\n" SEP7 "\n"
                       "           Name    Self CPU %      Self CPU   CPU total %     CPU total  "
                       "CPU time avg    # of Calls  \n" SEP7 "\n"
                       "         dgemm_        48.48%       4.800us        48.48%       4.800us    "
                       "   2.400us             2  \n"
                       "    cblas_dgemm        22.22%       2.200us        50.51%       5.000us    "
                       "   1.250us             4  \n"
                       "    cblas_zgemm        19.19%       1.900us        19.19%       1.900us    "
                       "   1.900us             1  \n"
                       "     cblas_ddot         8.08%       0.800us         8.08%       0.800us    "
                       "   0.267us             3  \n"
                       "    cblas_sgemv         2.02%       0.200us         2.02%       0.200us    "
                       "   0.200us             1  \n" SEP7 "\n"
                       "Self CPU time total: 9.900us\n";
    ck_assert_str_eq(out, want);
    free(out);
    opp_agg_free(&a);
}
END_TEST

START_TEST(table_shapes_flops)
{
    struct opp_agg a;
    struct opp_agg_opts o = {.filter_pid = 1, .pid = 200, .group_by_shape = 1};
    struct opp_out_opts oo = {.group_by_shape = 1, .flops = 1};
    aggregate(&o, &a);
    char *out;
    CAPTURE(out, opp_out_table(f, &a, &oo));
    /* Name: 6 + 4 wide; Input Shapes: 30 + 4; 524288 FLOPs shown in K. */
#define SEP_SF                                                                                     \
    "----------  " SEP12 SEP12 SEP12 SEP12 SEP12 SEP12                                             \
    "----------------------------------  " SEP12 SEP12 "\n"
    const char *want =
        SEP_SF "      Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg   "
               " # of Calls"
               "                        Input Shapes  Total KFLOPs       GFLOP/s  \n" SEP_SF
               "    dgemm_       100.00%       2.000us       100.00%       2.000us       2.000us   "
               "          1"
               "      [[64, 64], [64, 64], [64, 64]]       524.288       262.144  \n" SEP_SF
               "Self CPU time total: 2.000us\n";
    ck_assert_str_eq(out, want);
    free(out);
    opp_agg_free(&a);
}
END_TEST

START_TEST(table_flops_none_leaves_columns_out)
{
    char *out;
    /* --flops where no row has any: torch leaves the columns out. */
    struct opp_row r = {.key = "cblas_dscal",
                        .lib = "blas",
                        .count = 1,
                        .self_cpu_time_total_ns = 7600,
                        .cpu_time_total_ns = 7600};
    struct opp_agg a = {.rows = &r,
                        .nrows = 1,
                        .nrows_all = 1,
                        .self_cpu_time_total_ns = 7600,
                        .self_cpu_base_ns = 7600};
    struct opp_out_opts oo = {.flops = 1};
    CAPTURE(out, opp_out_table(f, &a, &oo));
    ck_assert_ptr_null(strstr(out, "FLOP"));
    ck_assert_ptr_nonnull(strstr(out, "# of Calls  \n"));
    ck_assert_ptr_nonnull(strstr(out, "\nSelf CPU time total: 7.600us\n"));
    free(out);
}
END_TEST

START_TEST(table_long_name)
{
    /* 59 characters: cut to 52 and "...", in a column of 55. */
    struct opp_row r = {.key = "a_very_long_entry_point_name_that_goes_on_and_on_and_on_xyz",
                        .lib = "blas",
                        .count = 1,
                        .self_cpu_time_total_ns = 1500000000,
                        .cpu_time_total_ns = 1500000000};
    ck_assert_uint_eq(strlen(r.key), 59);
    struct opp_agg a = {.rows = &r,
                        .nrows = 1,
                        .nrows_all = 1,
                        .self_cpu_time_total_ns = 1500000000,
                        .self_cpu_base_ns = 1500000000};
    struct opp_out_opts oo = {0};
    char *out;
    CAPTURE(out, opp_out_table(f, &a, &oo));
    ck_assert_ptr_nonnull(strstr(out, "\na_very_long_entry_point_name_that_goes_on_and_on_and..."
                                      "       100.00%        1.500s       100.00%        1.500s"
                                      "        1.500s             1  \n"));
    ck_assert_ptr_nonnull(strstr(out, "\nSelf CPU time total: 1.500s\n"));
    free(out);
}
END_TEST

START_TEST(csv_group_by_shape)
{
    struct opp_agg a;
    struct opp_agg_opts o = {.filter_pid = 1, .pid = 200, .group_by_shape = 1};
    struct opp_out_opts oo = {.group_by_shape = 1};
    aggregate(&o, &a);
    char *out;
    CAPTURE(out, opp_out_csv(f, &a, &oo));
    ck_assert_str_eq(out, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,"
                          "input_shapes,flops\n"
                          "dgemm_,blas,1,2.000,2.000,2.000,\"[[64, 64], [64, 64], [64, 64]]\","
                          "524288\n");
    free(out);
    opp_agg_free(&a);
}
END_TEST

START_TEST(csv_sorted_limited)
{
    struct opp_agg a;
    char *out;
    struct opp_agg_opts o = {.sort = OPP_SORT_COUNT, .limit = 2};
    struct opp_out_opts oo = {0};
    aggregate(&o, &a);
    CAPTURE(out, opp_out_csv(f, &a, &oo));
    ck_assert_str_eq(out, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,"
                          "flops\n"
                          "cblas_dgemm,blas,4,2.200,5.000,1.250,24002000\n"
                          "cblas_ddot,blas,3,0.800,0.800,0.267,3020\n");
    free(out);
    opp_agg_free(&a);
}
END_TEST

START_TEST(json_group_by_shape)
{
    struct opp_agg a;
    struct opp_agg_opts o = {.group_by_shape = 1, .limit = 4};
    struct opp_out_opts oo = {.group_by_shape = 1};
    aggregate(&o, &a);
    char *out;
    CAPTURE(out, opp_out_json(f, "dir/t \"1\".opprof", model, &a, &oo));
    const char *want[] = {
        "{\n  \"trace\": \"dir/t \\\"1\\\".opprof\",\n",
        /* one process still ran when the trace was finished: partial */
        "\n  \"complete\": false,\n  \"processes_cut\": 1,\n  \"warning\": null,\n"
        "  \"self_cpu_time_total\": 9.900,\n",
        "\n  \"processes\": [\n    {\"pid\": 100, \"ppid\": 1, \"cmdline\": [\"prog\", \"--n\", "
        "\"3\"], \"exe\": \"/usr/bin/prog\", \"end\": \"exited\", \"host\": \"node7\", "
        "\"rank\": 5, \"local_rank\": null, \"world_size\": 8},\n",
        "\n    {\"pid\": 200, \"ppid\": 100, \"cmdline\": [\"child\"], "
        "\"exe\": \"/usr/bin/child\", "
        "\"end\": \"running\", \"host\": null, \"rank\": null, \"local_rank\": null, "
        "\"world_size\": null},\n",
        "\n    {\"pid\": 100, \"ppid\": 1, \"cmdline\": [\"other\"], \"exe\": \"/usr/bin/other\", "
        "\"end\": \"cut\", \"host\": null, \"rank\": null, \"local_rank\": null, "
        "\"world_size\": null}\n  ],\n",
        "\n  \"threads\": [\n    {\"pid\": 100, \"tid\": 100, \"name\": \"main\", \"events\": 7, "
        "\"dropped\": 0},\n",
        "\n    {\"pid\": 100, \"tid\": 101, \"name\": \"worker\", \"events\": 1, "
        "\"dropped\": 5},\n",
        "\n    {\"pid\": 100, \"tid\": 100, \"name\": \"other\", \"events\": 2, \"dropped\": 0}\n"
        "  ],\n",
        "\n  \"events\": 11,\n  \"dropped\": 5,\n  \"dropped_full\": 5,\n  "
        "\"dropped_interrupted\": 0,\n  "
        "\"dropped_node_bound\": 0,\n  \"summary_lost\": 0,\n  \"open_calls\": 1,\n",
        "\n  \"rows\": [\n    {\"key\": \"dgemm_\", \"lib\": \"blas\", \"count\": 1, "
        "\"self_cpu_time_total\": 2.800, \"cpu_time_total\": 2.800, \"cpu_time\": 2.800, "
        "\"input_shapes\": [[300, 200], [200, 100], [300, 100]], \"flops\": 12000000},\n",
        "\n    {\"key\": \"cblas_dgemm\", \"lib\": \"blas\", \"count\": 2, "
        "\"self_cpu_time_total\": 1.200, \"cpu_time_total\": 4.000, \"cpu_time\": 2.000, "
        "\"input_shapes\": [[300, 200], [200, 100], [300, 100]], \"flops\": 24000000}\n  ],\n  "
        "\"errors\": 0,\n  \"statuses\": []\n}\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(out, want[i]) != NULL, "missing:\n%s\nin:\n%s", want[i], out);
    ck_assert_ptr_null(strstr(out, "\"key\": \"cblas_ddot\"")); /* past the limit */
    ck_assert_ptr_nonnull(strstr(out, "\"key\": \"dgemm_\", \"lib\": \"blas\", \"count\": 1, "
                                      "\"self_cpu_time_total\": 2.000"));
    free(out);
    opp_agg_free(&a);
}
END_TEST

START_TEST(json_empty_selection)
{
    struct opp_agg a;
    char *out;
    /* Without grouping there are no input_shapes. */
    struct opp_agg_opts o = {.filter_pid = 1, .pid = 999};
    struct opp_out_opts oo = {0};
    aggregate(&o, &a);
    CAPTURE(out, opp_out_json(f, "t", model, &a, &oo));
    ck_assert_ptr_nonnull(
        strstr(out, "\n  \"rows\": [],\n  \"errors\": 0,\n  \"statuses\": []\n}\n"));
    ck_assert_ptr_nonnull(strstr(out, "\n  \"self_cpu_time_total\": 0.000,\n"));
    free(out);
    opp_agg_free(&a);
}
END_TEST

/* An export's output is written in large writes, not stdio's default
 * 8 KiB (2 GB of Chrome JSON in 249k writes): 48 KiB stay in the FILE
 * until it is closed, then come whole. */
START_TEST(output_written_in_large_writes)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    char path[32], err[256];
    snprintf(path, sizeof path, "/dev/fd/%d", p[1]);
    struct opp_out o;
    ck_assert_int_eq(opp_out_open(&o, path, 0, NULL, 0, err, sizeof err), 0);
    static char data[48 << 10];
    memset(data, 'x', sizeof data);
    ck_assert_uint_eq(fwrite(data, 1, sizeof data, o.f), sizeof data);
    int pending = -1;
    ck_assert_int_eq(ioctl(p[0], FIONREAD, &pending), 0);
    ck_assert_int_eq(pending, 0);
    ck_assert_int_eq(opp_out_close(&o, 1, err, sizeof err), 0);
    close(p[1]);
    ck_assert_int_eq(ioctl(p[0], FIONREAD, &pending), 0);
    ck_assert_int_eq(pending, (int)sizeof data);
    close(p[0]);
}
END_TEST

Suite *suite_report_outputs(void)
{
    Suite *s = suite_create("report_outputs");
    TCase *tc = tcase_create("report_outputs");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, table);
    tcase_add_test(tc, table_shapes_flops);
    tcase_add_test(tc, table_flops_none_leaves_columns_out);
    tcase_add_test(tc, table_long_name);
    tcase_add_test(tc, csv_group_by_shape);
    tcase_add_test(tc, csv_sorted_limited);
    tcase_add_test(tc, json_group_by_shape);
    tcase_add_test(tc, json_empty_selection);
    tcase_add_test(tc, output_written_in_large_writes);
    suite_add_tcase(s, tc);
    return s;
}
