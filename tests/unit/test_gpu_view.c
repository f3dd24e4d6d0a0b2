/* The GPU view of the suites' trace (gpu_trace.h): occupancy, devices,
 * streams and kernels as --gpu reads them (gpu_stream.c, gpu_stats.c)
 * and `opprof report --gpu`; its
 * summary (opprof summarize) reporting the same. */
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
#include "gpu_trace.h"
#include "testutil.h"
#include "tool/cmds.h"
#include "views/fmt.h"
#include "views/output.h"

/* ---- the GPU view ---- */

START_TEST(occupancy)
{
    const struct opp_gpu_device *d = opp_gpu_device_find(model, 0);
    ck_assert_ptr_nonnull(d);
    struct opp_gpu_launch l = {
        .block = {256, 1, 1}, .regs = 64, .static_smem = 16384, .dynamic_smem = 32768};
    /* 8 warps a block; registers: 64 * 32 = 2048 a warp, 32 warps = 4
     * blocks; shared memory: 233472 / 49152 = 4 blocks; 32 of 64 warps. */
    ck_assert(opp_gpu_occupancy(d, &l) == 0.5);
    /* 37 registers: 1184 a warp, allocated as 1280: 51 warps = 6 blocks. */
    l = (struct opp_gpu_launch){.block = {128, 2, 1}, .regs = 37};
    ck_assert(opp_gpu_occupancy(d, &l) == 0.75);
    /* One warp a block: the 32 blocks an SM may hold are the limit. */
    l = (struct opp_gpu_launch){.block = {32, 1, 1}};
    ck_assert(opp_gpu_occupancy(d, &l) == 0.5);
    /* 48 threads are 2 warps (the second half empty): 32 blocks, 64 warps. */
    l = (struct opp_gpu_launch){.block = {16, 3, 1}};
    ck_assert(opp_gpu_occupancy(d, &l) == 1.0);
    /* Shared memory alone: 100000 B a block, 2 blocks of 8 warps. */
    l = (struct opp_gpu_launch){.block = {256, 1, 1}, .dynamic_smem = 100000};
    ck_assert(opp_gpu_occupancy(d, &l) == 0.25);
    l = (struct opp_gpu_launch){.block = {1024, 2, 1}};
    ck_assert(opp_gpu_occupancy(d, &l) == 0); /* more threads than a block may have */
    l = (struct opp_gpu_launch){.block = {0, 1, 1}};
    ck_assert(opp_gpu_occupancy(d, &l) == -1);
    ck_assert(opp_gpu_occupancy(NULL, &l) == -1);
    struct opp_gpu_device bare = {.id = 5};
    l = (struct opp_gpu_launch){.block = {64, 1, 1}};
    ck_assert(opp_gpu_occupancy(&bare, &l) == -1);
}
END_TEST

START_TEST(gpu_stats_devices_and_streams)
{
    struct opp_gpu_stats s;
    struct opp_agg_opts o = {0};
    struct opp_pass *g = tu_gpu_stats(trace, &o, &s, NULL, NULL);
    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(s.ops, 7);
    ck_assert_uint_eq(s.kernels, 5);
    ck_assert_uint_eq(s.kernel_ns, 6900);
    ck_assert_uint_eq(s.ndevs, 2);
    const struct opp_gpu_dev_stats *d = &s.devs[0];
    ck_assert_uint_eq(d->device, 0);
    ck_assert_ptr_nonnull(d->info);
    ck_assert_uint_eq(d->busy_ns, 8600);
    ck_assert_uint_eq(d->first_ns, 4000);
    ck_assert_uint_eq(d->last_ns, 32000);
    ck_assert(d->idle_share == 1.0 - 8600.0 / 28000.0);
    ck_assert_int_eq(d->has_memory, 1);
    ck_assert_int_eq(d->peak_memory, 4096);
    /* Gaps: the largest first, equal ones in time order. */
    ck_assert_uint_eq(d->ngaps, 5);
    const uint64_t gaps[][2] = {
        {18100, 31000}, {8500, 13500}, {6000, 6500}, {16500, 17000}, {17500, 18000}};
    const char *next[] = {VECADD, VECADD, HTOD, "relu_kernel", "Memset (Device)"};
    for (size_t i = 0; i < 5; i++) {
        ck_assert_uint_eq(d->gaps[i].start_ns, gaps[i][0]);
        ck_assert_uint_eq(d->gaps[i].end_ns, gaps[i][1]);
        ck_assert_str_eq(opp_model_str(opp_pass_model(g), d->gaps[i].next), next[i]);
    }
    ck_assert_uint_eq(s.devs[1].device, 1);
    ck_assert_ptr_null(s.devs[1].info);
    ck_assert(s.devs[1].idle_share == 0.0);
    ck_assert_uint_eq(s.devs[1].ngaps, 0);
    ck_assert_uint_eq(s.nstreams, 3);
    ck_assert_uint_eq(s.streams[0].stream, 7);
    ck_assert_uint_eq(s.streams[0].busy_ns, 8000);
    ck_assert_uint_eq(s.streams[1].stream, 9);
    ck_assert_uint_eq(s.streams[1].busy_ns, 600);
    opp_gpu_stats_free(&s);
    opp_pass_free(g);
}
END_TEST

START_TEST(kernel_stats)
{
    struct opp_agg_opts o = {0};
    struct opp_kernel_stats *k;
    size_t nk;
    struct opp_gpu_stats s;
    struct opp_pass *g = tu_gpu_stats(trace, &o, &s, &k, &nk);
    ck_assert_ptr_nonnull(g);
    opp_gpu_stats_free(&s);
    ck_assert_uint_eq(nk, 3);
    ck_assert_str_eq(k[0].name, VECADD);
    ck_assert_uint_eq(k[0].count, 3);
    ck_assert_uint_eq(k[0].total_ns, 6000);
    ck_assert(k[0].occupancy == (0.5 + 0.75 + 0.5) / 3);
    ck_assert_uint_eq(k[0].delays, 3);
    ck_assert(k[0].delay_sum_ns == 500 + 2000 + 800);
    ck_assert_int_eq(k[0].delay_max_ns, 2000);
    ck_assert_str_eq(k[1].name, "relu_kernel");
    ck_assert(k[1].occupancy == 1.0);
    ck_assert_uint_eq(k[1].delays, 0);
    ck_assert_str_eq(k[2].name, "<unknown kernel 5>");
    ck_assert(k[2].occupancy == -1); /* device 1 was never described */
    free(k);
    opp_pass_free(g);
}
END_TEST

START_TEST(gpu_stats_of_one_thread)
{
    struct opp_gpu_stats s;
    /* --tid 301: its kernel only; the device is busy 1 us of 1 us. */
    struct opp_agg_opts o = {.filter_tid = 1, .tid = 301};
    struct opp_pass *g = tu_gpu_stats(trace, &o, &s, NULL, NULL);
    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(s.ops, 1);
    ck_assert_uint_eq(s.devs[0].busy_ns, 1000);
    ck_assert(s.devs[0].idle_share == 0.0);
    opp_gpu_stats_free(&s);
    opp_pass_free(g);
}
END_TEST

/* The trace summarized (what OPPROF_MODE=summary would have recorded of
 * the same calls) gives the same report: CPU and CUDA columns, memory,
 * shapes, the call tree, byte for byte. */
static char *summarize(void)
{
    char *sum = tu_path(dir, "sum.opprof");
    char *sa[] = {"summarize", trace, "-o", sum, NULL};
    char *out, *err;
    ck_assert_int_eq(tu_call(cmd_summarize, sa, dir, &out, &err), 0);
    char want[4200];
    snprintf(want, sizeof want, "opprof summarize: 8 calls into %s\n", sum);
    ck_assert_str_eq(err, want);
    free(out), free(err);
    return sum;
}

START_TEST(summary_same_report)
{
    char *sum = summarize();
    const char *views[][3] = {{NULL},
                              {"--sort", "self_cuda_time_total"},
                              {"--group-by-shape", NULL},
                              {"--tree", NULL},
                              {"--format", "csv"},
                              {"--group-by-stack", "2"},
                              {"--sort", "cuda_memory_usage"}};
    for (size_t i = 0; i < sizeof views / sizeof *views; i++) {
        char *fa[] = {"report", trace, (char *)views[i][0], (char *)views[i][1], NULL};
        char *fb[] = {"report", sum, (char *)views[i][0], (char *)views[i][1], NULL};
        char *oa, *ob, *ea, *eb;
        ck_assert_int_eq(run_report(fa, &oa, &ea), 0);
        ck_assert_int_eq(run_report(fb, &ob, &eb), 0);
        ck_assert_msg(!strcmp(oa, ob), "view %zu differs:\n%s\n---\n%s", i, oa, ob);
        ck_assert_ptr_nonnull(strstr(oa, i == 3 ? "cublasSgemm_v2" : "vecAdd"));
        free(oa), free(ob), free(ea), free(eb);
    }
    free(sum);
}
END_TEST

START_TEST(summary_names_itself)
{
    char *sum = summarize();
    /* the summary names itself, and a second summary is refused */
    struct opp_model *m = load(sum);
    ck_assert(m->summary);
    ck_assert_uint_eq(m->events, 8);
    opp_model_free(m);
    free(sum);
}
END_TEST

START_TEST(summarize_refuses_a_summary)
{
    char *sum = summarize();
    char *out, *err;
    char want[4200];
    char *again[] = {"summarize", sum, "-o", trace, NULL};
    ck_assert_int_eq(tu_call(cmd_summarize, again, dir, &out, &err), 1);
    snprintf(want, sizeof want, "opprof summarize: %s is a summary trace already\n", sum);
    ck_assert_str_eq(err, want);
    free(out), free(err), free(sum);
}
END_TEST

START_TEST(gpu_view)
{
    char *out, *err;
    char *a1[] = {"report", trace, "--gpu", NULL};
    ck_assert_int_eq(run_report(a1, &out, &err), 0);
    const char *want =
        "GPU kernels\n"
        "-----------------------------------  " S12 S12 S12 S12 "--------------  "
        "----------------  ----------------  \n"
        "                               Name    # of Calls         Total           Avg         "
        "Share"
        "  Est. Occupancy  Launch Delay Avg  Launch Delay Max  \n"
        "-----------------------------------  " S12 S12 S12 S12 "--------------  "
        "----------------  ----------------  \n"
        "vecAdd(float*, float*, float*, int)             3       6.000us       2.000us        "
        "86.96%"
        "          58.33%           1.100us           2.000us  \n"
        "                        relu_kernel             1       0.500us       0.500us         "
        "7.25%"
        "         100.00%                --                --  \n"
        "                 <unknown kernel 5>             1       0.400us       0.400us         "
        "5.80%"
        "              --                --                --  \n"
        "-----------------------------------  " S12 S12 S12 S12 "--------------  "
        "----------------  ----------------  \n"
        "Kernel time total: 6.900us (5 launches of 3 kernels)\n"
        "\n"
        "GPU streams (Busy %: of the device's span)\n" S12 S12 S12 S12 S12 S12 S12 S12 "\n"
        "         PID        Device        Stream      # of Ops       Kernels   Kernel Time"
        "          Busy        Busy %  \n" S12 S12 S12 S12 S12 S12 S12 S12 "\n"
        "         300             0             7             4             3       6.000us"
        "       8.000us        28.57%  \n"
        "         300             0             9             2             1       0.500us"
        "       0.600us         2.14%  \n"
        "         300             1             1             1             1       0.400us"
        "       0.400us       100.00%  \n" S12 S12 S12 S12 S12 S12 S12 S12 "\n"
        "\n"
        "GPU devices (Idle %: 1 - busy / span, span from the first GPU op's start to the last "
        "one's end)\n" S12 S12 S12 S12 S12 S12 S12 S12 "\n"
        "      Device          Name      # of Ops          Busy          Span        Idle %"
        "      Peak Mem     Final Mem  \n" S12 S12 S12 S12 S12 S12 S12 S12 "\n"
        "           0      Test GPU             6       8.600us      28.000us        69.29%"
        "       4.00 Kb         488 b  \n"
        "           1            --             1       0.400us       0.400us         0.00%"
        "            --            --  \n" S12 S12 S12 S12 S12 S12 S12 S12 "\n"
        "\n"
        "Largest idle gaps per device (From, To: since the device's first GPU op)\n" S12 S12 S12 S12
        "-----------------------------------  \n"
        "      Device           Gap          From            To                              Next "
        "Op  \n" S12 S12 S12 S12 "-----------------------------------  \n"
        "           0      12.900us     +14.100us     +27.000us  vecAdd(float*, float*, float*, "
        "int)  \n"
        "           0       5.000us      +4.500us      +9.500us  vecAdd(float*, float*, float*, "
        "int)  \n"
        "           0       0.500us      +2.000us      +2.500us     " HTOD "  \n"
        "           0       0.500us     +12.500us     +13.000us                          "
        "relu_kernel  \n"
        "           0       0.500us     +13.500us     +14.000us                      Memset "
        "(Device)  \n" S12 S12 S12 S12 "-----------------------------------  \n";
    ck_assert_str_eq(out, want);
    ck_assert_str_eq(err, "opprof report: warning: GPU activity records were lost: 4 dropped by "
                          "CUPTI, 2 by opprof (buffers full)\n");
    free(out);
    free(err);
}
END_TEST

START_TEST(gpu_view_limit_and_filter)
{
    char *out, *err;
    /* --limit: kernels; filters as in the table. */
    char *a2[] = {"report", trace, "--gpu", "--limit", "1", "--tid", "300", NULL};
    ck_assert_int_eq(run_report(a2, &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "\nKernel time total: 5.000us (2 launches of 1 kernels)\n"));
    ck_assert_ptr_nonnull(strstr(out, "\n         300             0             7             3"
                                      "             2       5.000us       7.000us        "));
    free(out);
    free(err);
}
END_TEST

START_TEST(gpu_view_is_text_only)
{
    char *out, *err;
    char *a3[] = {"report", trace, "--gpu", "--format", "json", NULL};
    ck_assert_int_eq(run_report(a3, &out, &err), 2);
    ck_assert_str_eq(out, "");
    ck_assert_str_eq(err, "opprof report: --gpu is a text view (the JSON report has its numbers "
                          "in \"gpu\")\n");
    free(out);
    free(err);
}
END_TEST

START_TEST(command_cuda_columns)
{
    char *out, *err;
    /* The table through the command: CUDA columns and both footers. */
    char *a4[] = {"report", trace, "--sort", "self_cuda_time_total", "--limit", "2", NULL};
    ck_assert_int_eq(run_report(a4, &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "\n                       cudaLaunchKernel        17.71%"));
    ck_assert_ptr_nonnull(
        strstr(out, "\nSelf CPU time total: 9.600us\nSelf CUDA time total: 9.000us\n"));
    free(out);
    free(err);
}
END_TEST

Suite *suite_gpu_view(void)
{
    Suite *s = suite_create("gpu_view");
    TCase *tc = tcase_create("gpu_view");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, occupancy);
    tcase_add_test(tc, gpu_stats_devices_and_streams);
    tcase_add_test(tc, kernel_stats);
    tcase_add_test(tc, gpu_stats_of_one_thread);
    tcase_add_test(tc, summary_same_report);
    tcase_add_test(tc, summary_names_itself);
    tcase_add_test(tc, summarize_refuses_a_summary);
    tcase_add_test(tc, gpu_view);
    tcase_add_test(tc, gpu_view_limit_and_filter);
    tcase_add_test(tc, gpu_view_is_text_only);
    tcase_add_test(tc, command_cuda_columns);
    suite_add_tcase(s, tc);
    return s;
}
