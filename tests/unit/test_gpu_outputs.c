/* The table, CSV and JSON of the GPU suites' trace (gpu_trace.h): torch's
 * CUDA columns, exact to the byte. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/aggregate.h"
#include "analysis/gpu_stats.h"
#include "analysis/gpu_stream.h"
#include "analysis/model.h"
#include "analysis/pass.h"
#include "analysis/table_stream.h"
#include "gpu_trace.h"
#include "oracle/loaded.h"
#include "testutil.h"
#include "tool/cmds.h"
#include "views/fmt.h"
#include "views/output.h"

/* ---- outputs ---- */

#define S13 "-------------  "
#define SEP_T                                                                                      \
    "---------------------------------------  " S12 S12 S12 S12 S12 S12 S12 S12 S13 S12 S13 S12 "\n"

START_TEST(table)
{
    struct opp_agg a;
    struct opp_agg_opts o = {0};
    struct opp_out_opts oo = {0};
    ck_assert_int_eq(tu_aggregate(model, &o, &a), 0);
    char *out;
    CAPTURE(out, opp_out_table(f, &a, &oo));
    const char *want = SEP_T
        "                                   Name    Self CPU %      Self CPU   CPU total %     CPU "
        "total"
        "  CPU time avg     Self CUDA   Self CUDA %    CUDA total  CUDA time avg      CUDA Mem"
        "  Self CUDA Mem    # of Calls  \n" SEP_T "                             cudaMemcpy        "
                                                  "52.08%       5.000us        52.08%       5.000us"
        "       5.000us       2.000us        22.22%       2.000us        2.000us           0 b"
        "            0 b             1  \n"
        "                         cublasSgemm_v2        20.83%       2.000us        83.33%       "
        "8.000us"
        "       8.000us       0.000us         0.00%       4.000us        4.000us           0 b"
        "            0 b             1  \n"
        "                       cudaLaunchKernel        17.71%       1.700us        17.71%       "
        "1.700us"
        "       0.567us       6.000us        66.67%       6.000us        2.000us           0 b"
        "            0 b             3  \n"
        "                             cudaMalloc         6.25%       0.600us         6.25%       "
        "0.600us"
        "       0.300us       0.000us         0.00%       0.000us        0.000us       4.98 Kb"
        "        4.98 Kb             2  \n"
        "                               cudaFree         3.12%       0.300us         3.12%       "
        "0.300us"
        "       0.300us       0.000us         0.00%       0.000us        0.000us      -4.00 Kb"
        "       -4.00 Kb             1  \n"
        "                     <unknown kernel 5>         0.00%       0.000us         0.00%       "
        "0.000us"
        "       0.000us       0.400us         4.44%       0.400us        0.400us           0 b"
        "            0 b             1  \n"
        "       Memcpy HtoD (Pageable -> Device)         0.00%       0.000us         0.00%       "
        "0.000us"
        "       0.000us       2.000us        22.22%       2.000us        2.000us           0 b"
        "            0 b             1  \n"
        "                        Memset (Device)         0.00%       0.000us         0.00%       "
        "0.000us"
        "       0.000us       0.100us         1.11%       0.100us        0.100us           0 b"
        "            0 b             1  \n"
        "                            relu_kernel         0.00%       0.000us         0.00%       "
        "0.000us"
        "       0.000us       0.500us         5.56%       0.500us        0.500us           0 b"
        "            0 b             1  \n"
        "    vecAdd(float*, float*, float*, int)         0.00%       0.000us         0.00%       "
        "0.000us"
        "       0.000us       6.000us        66.67%       6.000us        2.000us           0 b"
        "            0 b             3  \n" SEP_T "Self CPU time total: 9.600us\n"
        "Self CUDA time total: 9.000us\n";
    ck_assert_str_eq(out, want);
    free(out);
    opp_agg_free(&a);
}
END_TEST

START_TEST(table_without_cuda_memory)
{
    struct opp_agg a;
    struct opp_out_opts oo = {0};
    char *out;
    /* CUDA time but no CUDA memory in these rows (--tid 301): the memory
     * columns are left out; --limit keeps the totals of every row. */
    struct opp_agg_opts o = {.filter_tid = 1, .tid = 301, .limit = 1};
    ck_assert_int_eq(tu_aggregate(model, &o, &a), 0);
    CAPTURE(out, opp_out_table(f, &a, &oo));
    ck_assert_ptr_null(strstr(out, "Mem"));
    ck_assert_ptr_nonnull(strstr(out, " CUDA time avg    # of Calls  \n"));
    ck_assert_ptr_null(strstr(out, "vecAdd"));
    ck_assert_ptr_nonnull(
        strstr(out, "\nSelf CPU time total: 0.200us\nSelf CUDA time total: 1.000us\n"));
    free(out);
    opp_agg_free(&a);
}
END_TEST

START_TEST(csv)
{
    struct opp_agg a;
    struct opp_agg_opts o = {.sort = OPP_SORT_SELF_CUDA_TIME_TOTAL, .limit = 4};
    struct opp_out_opts oo = {0};
    ck_assert_int_eq(tu_aggregate(model, &o, &a), 0);
    char *out;
    CAPTURE(out, opp_out_csv(f, &a, &oo));
    ck_assert_str_eq(out,
                     "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,flops,"
                     "device_type,self_cuda_time_total_us,cuda_time_total_us,cuda_time_avg_us,"
                     "self_cuda_memory_usage,cuda_memory_usage,bytes,gbps\n"
                     "cudaLaunchKernel,cudart,3,1.700,1.700,0.567,0,CPU,6.000,6.000,2.000,0,0,,\n"
                     "\"" VECADD "\",,3,0.000,0.000,0.000,0,CUDA,6.000,6.000,2.000,0,0,,\n" HTOD
                     ",,1,0.000,0.000,0.000,0,CUDA,2.000,2.000,2.000,0,0,1000000,500.000\n"
                     "cudaMemcpy,cudart,1,5.000,5.000,5.000,0,CPU,2.000,2.000,2.000,0,0,,\n");
    free(out);
    opp_agg_free(&a);
}
END_TEST

START_TEST(json)
{
    struct opp_agg a;
    struct opp_agg_opts o = {.sort = OPP_SORT_CUDA_MEMORY_USAGE};
    struct opp_gpu_stats s;
    /* as `opprof report -f json` reads them: the rows and the GPU
     * statistics over one pass */
    char err[512];
    struct opp_pass *p = tu_pass_open(trace);
    struct opp_table_stream *ts = opp_table_stream_over(p, err, sizeof err);
    ck_assert_msg(ts != NULL, "%s", err);
    ck_assert_msg(opp_table_stream_aggregate(ts, &o, &a, err, sizeof err) == 0, "%s", err);
    struct opp_pass *g = tu_gpu_stats(trace, &o, &s, NULL, NULL);
    ck_assert_ptr_nonnull(g);
    struct opp_out_opts oo = {.gpu = &s};
    char *out;
    CAPTURE(out, opp_out_json(f, "g.trace", opp_pass_model(p), &a, &oo));
    const char *want[] = {
        "\n  \"self_cpu_time_total\": 9.600,\n  \"self_cuda_time_total\": 9.000,\n",
        "\n  \"events\": 8,\n  \"dropped\": 0,\n  \"dropped_full\": 0,\n  \"dropped_interrupted\": "
        "0,\n  "
        "\"dropped_node_bound\": 0,\n  \"summary_lost\": 0,\n  \"open_calls\": 0,\n  "
        "\"gpu\": {\n"
        "    \"ops\": 7, \"kernels\": 5, \"kernel_time\": 6.900, \"unattached\": 1,\n"
        "    \"dropped\": {\"cupti\": 4, \"opprof\": 2}, \"cupti_clients_refused\": 0, "
        "\"cupti_buffers_taken\": 0, \"cupti_yielded\": 0, \"cupti_retaken\": 0, \"unfinished\": "
        "0,\n"
        "    \"devices\": [\n"
        "      {\"device\": 0, \"name\": \"Test GPU\", \"ops\": 6, \"kernels\": 4, "
        "\"kernel_time\": 6.500, \"busy_time\": 8.600, \"span\": 28.000, \"idle_share\": 0.6929, "
        "\"peak_memory\": 4096, \"final_memory\": 488},\n"
        "      {\"device\": 1, \"name\": null, \"ops\": 1, \"kernels\": 1, \"kernel_time\": 0.400, "
        "\"busy_time\": 0.400, \"span\": 0.400, \"idle_share\": 0.0000, \"peak_memory\": null, "
        "\"final_memory\": null}\n    ],\n"
        "    \"streams\": [\n"
        "      {\"pid\": 300, \"device\": 0, \"stream\": 7, \"ops\": 4, \"kernels\": 3, "
        "\"kernel_time\": 6.000, \"busy_time\": 8.000},\n"
        "      {\"pid\": 300, \"device\": 0, \"stream\": 9, \"ops\": 2, \"kernels\": 1, "
        "\"kernel_time\": 0.500, \"busy_time\": 0.600},\n"
        "      {\"pid\": 300, \"device\": 1, \"stream\": 1, \"ops\": 1, \"kernels\": 1, "
        "\"kernel_time\": 0.400, \"busy_time\": 0.400}\n    ]\n  },\n  \"rows\": [\n",
        "\n    {\"key\": \"cudaMalloc\", \"lib\": \"cudart\", \"count\": 2, "
        "\"self_cpu_time_total\": 0.600, \"cpu_time_total\": 0.600, \"cpu_time\": 0.300, "
        "\"flops\": 0, \"device_type\": \"CPU\", \"self_cuda_time_total\": 0.000, "
        "\"cuda_time_total\": 0.000, \"cuda_time\": 0.000, \"self_cuda_memory_usage\": 5096, "
        "\"cuda_memory_usage\": 5096},\n",
        "\n    {\"key\": \"" HTOD "\", \"lib\": \"\", \"count\": 1, "
        "\"self_cpu_time_total\": 0.000, \"cpu_time_total\": 0.000, \"cpu_time\": 0.000, "
        "\"flops\": 0, \"device_type\": \"CUDA\", \"self_cuda_time_total\": 2.000, "
        "\"cuda_time_total\": 2.000, \"cuda_time\": 2.000, \"self_cuda_memory_usage\": 0, "
        "\"cuda_memory_usage\": 0, \"bytes\": 1000000, \"gbps\": 500.000},\n",
        "\"key\": \"Memset (Device)\"",
        "\"bytes\": 4096, \"gbps\": 40.960}",
        "\n    {\"key\": \"cudaFree\", \"lib\": \"cudart\", \"count\": 1, "
        "\"self_cpu_time_total\": 0.300, \"cpu_time_total\": 0.300, \"cpu_time\": 0.300, "
        "\"flops\": 0, \"device_type\": \"CPU\", \"self_cuda_time_total\": 0.000, "
        "\"cuda_time_total\": 0.000, \"cuda_time\": 0.000, \"self_cuda_memory_usage\": -4096, "
        "\"cuda_memory_usage\": -4096}\n  ],\n  \"errors\": 0,\n  \"statuses\": []\n}\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(out, want[i]) != NULL, "missing:\n%s\nin:\n%s", want[i], out);
    free(out);
    opp_gpu_stats_free(&s);
    opp_pass_free(g);
    opp_table_stream_free(ts);
    opp_pass_free(p);
    opp_agg_free(&a);
}
END_TEST

Suite *suite_gpu_outputs(void)
{
    Suite *s = suite_create("gpu_outputs");
    TCase *tc = tcase_create("gpu_outputs");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, table);
    tcase_add_test(tc, table_without_cuda_memory);
    tcase_add_test(tc, csv);
    tcase_add_test(tc, json);
    suite_add_tcase(s, tc);
    return s;
}
