/* Traces of unusual GPU shape: no GPU records, many devices, malformed
 * records (no crash: what can be read is reported), GPU records of a
 * process never declared. */
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
#include "oracle/loaded.h"
#include "testutil.h"
#include "tool/cmds.h"
#include "views/fmt.h"
#include "views/output.h"

/* ---- traces without GPU records ---- */

/* A CUDA program's trace without GPU records (no GPU, or CUPTI held by
 * another tool): the CUDA columns and fields at 0, torch's NaN share of a
 * zero total; a selection without CUDA calls looks as it always did. */
static char *write_cpu_only(void)
{
    char *path = tu_path(dir, "cpu.opprof");
    write_trace(path, 0);
    return path;
}

START_TEST(cpu_only_cuda_columns_at_zero)
{
    char *path = write_cpu_only();
    struct opp_model *m = load(path);
    ck_assert(!opp_model_has_gpu(m));
    ck_assert_ptr_null(m->threads[0].gpu);
    struct opp_agg a;
    struct opp_agg_opts o = {.limit = 3};
    struct opp_out_opts oo = {0};
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    ck_assert_int_eq(a.gpu, 1);
    ck_assert_int_eq(a.cuda_calls, 1);
    char *out;
    CAPTURE(out, opp_out_table(f, &a, &oo));
#define SEP_Z "--------------------  " S12 S12 S12 S12 S12 S12 S12 S12 "-------------  " S12 "\n"
#define ZERO_CUDA "       0.000us           NaN       0.000us        0.000us"
    ck_assert_str_eq(out, SEP_Z
                     "                Name    Self CPU %      Self CPU   CPU total %     CPU total"
                     "  CPU time avg     Self CUDA   Self CUDA %    CUDA total  CUDA time avg"
                     "    # of Calls  \n" SEP_Z
                     "          cudaMemcpy        52.08%       5.000us        52.08%       5.000us"
                     "       5.000us" ZERO_CUDA "             1  \n"
                     "      cublasSgemm_v2        20.83%       2.000us        83.33%       8.000us"
                     "       8.000us" ZERO_CUDA "             1  \n"
                     "    cudaLaunchKernel        17.71%       1.700us        17.71%       1.700us"
                     "       0.567us" ZERO_CUDA "             3  \n" SEP_Z
                     "Self CPU time total: 9.600us\nSelf CUDA time total: 0.000us\n");
    free(out);
    CAPTURE(out, opp_out_csv(f, &a, &oo));
    const char *want_csv = "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,"
                           "flops,device_type,self_cuda_time_total_us,cuda_time_total_us,"
                           "cuda_time_avg_us,self_cuda_memory_usage,cuda_memory_usage,bytes,gbps\n"
                           "cudaMemcpy,cudart,1,5.000,5.000,5.000,0,CPU,0.000,0.000,0.000,0,0,,\n";
    ck_assert(!strncmp(out, want_csv, strlen(want_csv)));
    free(out);
    CAPTURE(out, opp_out_json(f, path, m, &a, &oo));
    ck_assert_ptr_nonnull(strstr(out, "\n  \"self_cuda_time_total\": 0.000,\n"));
    ck_assert_ptr_nonnull(strstr(out, "\n  \"gpu\": null,\n  \"rows\": [\n"));
    ck_assert_ptr_nonnull(strstr(out,
                                 "\"cpu_time\": 5.000, \"flops\": 0, \"device_type\": \"CPU\", "
                                 "\"self_cuda_time_total\": 0.000, \"cuda_time_total\": 0.000, "
                                 "\"cuda_time\": 0.000, \"self_cuda_memory_usage\": 0, "
                                 "\"cuda_memory_usage\": 0},\n"));
    free(out);
    opp_agg_free(&a);
    opp_model_free(m);
    free(path);
}
END_TEST

START_TEST(cpu_only_without_cuda_calls_cpu_table)
{
    char *path = write_cpu_only();
    struct opp_model *m = load(path);
    struct opp_agg a;
    struct opp_agg_opts o = {.limit = 3};
    struct opp_out_opts oo = {0};
    char *out;
    /* Only cuBLAS: no CUDA call, so the CPU table, CSV and JSON. */
    o.lib = "cublas";
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    ck_assert_int_eq(a.gpu, 0);
    ck_assert_int_eq(a.cuda_calls, 0);
    CAPTURE(out, opp_out_table(f, &a, &oo));
#define SEP_C "------------------  " S12 S12 S12 S12 S12 S12 "\n"
    ck_assert_str_eq(
        out,
        SEP_C "              Name    Self CPU %      Self CPU   CPU total %     CPU total"
              "  CPU time avg    # of Calls  \n" SEP_C
              "    cublasSgemm_v2        20.83%       2.000us        83.33%       8.000us"
              "       8.000us             1  \n" SEP_C
              "Self CPU time total: 2.000us of 9.600us before --lib (the percentages' base)\n");
    free(out);
    CAPTURE(out, opp_out_csv(f, &a, &oo));
    ck_assert_str_eq(out, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,"
                          "flops\ncublasSgemm_v2,cublas,1,2.000,8.000,8.000,524288\n");
    free(out);
    CAPTURE(out, opp_out_json(f, path, m, &a, &oo));
    ck_assert_ptr_null(strstr(out, "device_type"));
    free(out);
    opp_agg_free(&a);
    opp_model_free(m);
    free(path);
}
END_TEST

START_TEST(cpu_only_gpu_view_says_none)
{
    char *path = write_cpu_only();
    char *out;
    char *err;
    char *a1[] = {"report", path, "--gpu", NULL};
    ck_assert_int_eq(run_report(a1, &out, &err), 0);
    char want[512];
    snprintf(want, sizeof want, "%s has no GPU activity records\n", path);
    ck_assert_str_eq(out, want);
    ck_assert_str_eq(err, "");
    free(out);
    free(err);
    free(path);
}
END_TEST

/* Names, code stacks and module maps travel as GPU records in programs
 * with no GPU (a torch op's name, OPPROF_STACKS): no GPU view, "gpu": null
 * in the JSON, loaded or streamed. */
START_TEST(gpu_records_of_no_gpu_say_none)
{
    char *path = tu_path(dir, "names.opprof");
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 0, .pid = 300, .ppid = 1, .parent = UINT32_MAX, .real = 1,
               .exe = "python3");
    tb_funcs(&b, [0] = {OPP_OP_PLAIN, OPP_DT_NONE, "torch", "aten::add"});
    tb_string(&b, 7, "aten::add");
    tb_module(&b, 0x1000, 0x1000, 0x2000, 7);
    tb_stack(&b, 5, 0x1100, 0x1200);
    tb_thread(&b, 300, "main");
    tb_events(&b, TB_CALL(0, 1000, 2000, 0), {0, 3000, 4000, 0, .stack = 5});
    tb_end(&b);
    struct opp_model *m = load(path);
    ck_assert(!opp_model_has_gpu(m));
    opp_model_free(m);
    char *out, *err, want[512];
    char *a1[] = {"report", path, "--gpu", NULL};
    ck_assert_int_eq(run_report(a1, &out, &err), 0);
    snprintf(want, sizeof want, "%s has no GPU activity records\n", path);
    ck_assert_str_eq(out, want);
    free(out), free(err);
    const char *how[] = {"--no-stream", "--stream"};
    for (int i = 0; i < 2; i++) {
        char *a2[] = {"report", path, "-f", "json", (char *)how[i], NULL};
        ck_assert_int_eq(run_report(a2, &out, &err), 0);
        ck_assert_msg(strstr(out, "\n  \"gpu\": null,\n"), "%s: %s", how[i], out);
        free(out), free(err);
    }
    free(path);
}
END_TEST

/* ---- many devices: each found by search, not by scanning the others ---- */

#define MANY 4000

/* Devices described (twice: the first wins), allocated on and run on in
 * descending id order, one each. */
START_TEST(many_devices)
{
    char *path = tu_path(dir, "many.opprof");
    struct tb b;
    tb_open(&b, path);
    put_cpu(&b);
    for (uint32_t i = MANY; i-- > 0;) {
        tb_device(&b, .id = i, .name = 3, .sms = i % 100 + 1);
        tb_device(&b, .id = i, .name = 3, .sms = 999);
        tb_memory(&b, .start = 100 + i, .device = i, .op = OPP_GPU_MEM_ALLOC, .mem_kind = 3,
                  .address = 0x1000 + i, .bytes = i + 1);
        tb_kernel(&b, .name = 1, .start = 1000 + 2 * i, .end = 1001 + 2 * i, .device = i,
                  .stream = 7);
        if (i % 50 == 0)
            tb_gpu_chunk(&b);
    }
    tb_string(&b, 1, "k");
    tb_string(&b, 3, "GPU");
    tb_close(&b);
    struct opp_model *m = load(path);
    const struct opp_gpu *g = &m->gpu;
    ck_assert_uint_eq(g->ndevices, MANY);
    ck_assert_uint_eq(g->nmemseries, MANY);
    for (uint32_t i = 0; i < MANY; i++) {
        ck_assert_uint_eq(g->devices[i].id, i);
        ck_assert_uint_eq(g->devices[i].sms, i % 100 + 1);
        ck_assert_uint_eq(g->memseries[i].device, i);
        ck_assert_uint_eq(g->memseries[i].npts, 1);
        ck_assert_int_eq(g->memseries[i].peak, (int64_t)i + 1);
    }
    struct opp_agg_opts o = {0};
    struct opp_gpu_stats st;
    struct opp_pass *gs = tu_gpu_stats(path, &o, &st, NULL, NULL);
    ck_assert_ptr_nonnull(gs);
    ck_assert_uint_eq(st.ndevs, MANY);
    for (uint32_t i = 0; i < MANY; i++) {
        ck_assert_uint_eq(st.devs[i].device, i);
        ck_assert_uint_eq(st.devs[i].kernels, 1);
        ck_assert_int_eq(st.devs[i].peak_memory, (int64_t)i + 1);
    }
    opp_gpu_stats_free(&st);
    opp_pass_free(gs);
    opp_model_free(m);
    free(path);
}
END_TEST

/* The GPU view of 18,003 kernels on 12,002 devices (a stream or two each):
 * each stream's Busy % is of its own device's span (4 ns
 * plus a gap of i % 3 ns: a kernel of 1 ns on stream 7, so 25%, 20% or
 * 16.67%, then after the gap one of 3 ns on stream 8) for the first half,
 * 100% for the second (one kernel each), its device found by search (it
 * was a scan of every device for each stream). */
#define MANY_VIEW 12002 /* half of it 1 more than a multiple of 3, as the counts below take */

START_TEST(many_devices_gpu_view)
{
    char *path = tu_path(dir, "view.opprof");
    struct tb b;
    tb_open(&b, path);
    put_cpu(&b);
    for (uint32_t i = MANY_VIEW / 2; i-- > 0;) {
        uint64_t t = 100000 + 10 * (uint64_t)i, gap = i % 3;
        tb_kernel(&b, .name = 1, .start = t, .end = t + 1, .device = i, .stream = 7);
        tb_kernel(&b, .name = 1, .start = t + 1 + gap, .end = t + 4 + gap, .device = i,
                  .stream = 8);
        if (i % 500 == 0)
            tb_gpu_chunk(&b);
    }
    for (uint32_t i = MANY_VIEW / 2; i < MANY_VIEW; i++) {
        tb_kernel(&b, .name = 1, .start = 1000000 + 10 * (uint64_t)i,
                  .end = 1000002 + 10 * (uint64_t)i, .device = i, .stream = 7);
        if (i % 500 == 0)
            tb_gpu_chunk(&b);
    }
    tb_string(&b, 1, "k");
    tb_end(&b);
    /* one read: --gpu is the pass's (--stream and --no-stream alike) */
    {
        char *out, *err;
        char *a[] = {"report", path, "--gpu", NULL};
        ck_assert_int_eq(run_report(a, &out, &err), 0);
        ck_assert_msg(strstr(out, "Kernel time total: 36.006us (18003 launches of 1 kernels)"),
                      "%s", out);
        /* streams: PID, device, stream, ops, kernels, kernel time, busy, Busy % */
        ck_assert_int_eq(tu_occurrences(out, "  7             1             1       0.001us       "
                                             "0.001us        25.00%  \n"),
                         MANY_VIEW / 2 / 3 + 1); /* gap 0: span 4 */
        ck_assert_int_eq(tu_occurrences(out, "  7             1             1       0.001us       "
                                             "0.001us        20.00%  \n"),
                         MANY_VIEW / 2 / 3);
        ck_assert_int_eq(tu_occurrences(out, "  7             1             1       0.001us       "
                                             "0.001us        16.67%  \n"),
                         MANY_VIEW / 2 / 3);
        ck_assert_int_eq(tu_occurrences(out, "  8             1             1       0.003us       "
                                             "0.003us        75.00%  \n"),
                         MANY_VIEW / 2 / 3 + 1);
        ck_assert_int_eq(tu_occurrences(out, "  7             1             1       0.002us       "
                                             "0.002us       100.00%  \n"),
                         MANY_VIEW / 2);
        /* devices: the last, then the rows of every device */
        ck_assert_msg(strstr(out, "       12001            --             1       0.002us       "
                                  "0.002us         0.00%"),
                      "%s", out);
        ck_assert_int_eq(tu_occurrences(out, "            --             2       0.004us       "
                                             "0.004us         0.00%"),
                         MANY_VIEW / 2 / 3 + 1);
        ck_assert_str_eq(err, "");
        free(out), free(err);
    }
    free(path);
}
END_TEST

/* ---- malformed GPU records: no crash, what can be read is reported ---- */

/* A trace of damaged GPU records; its path. */
static char *write_malformed(void)
{
    char *path = tu_path(dir, "bad.opprof");
    struct tb b;
    tb_open(&b, path);
    put_cpu(&b);
    /* Too few fields: no name, stream or correlation (they read as 0). */
    struct opp_gpu_rec r = TB_KERNEL(.start = 100, .end = 300);
    r.nfields = 3;
    tb_gpu(&b, r);
    /* More fields than a reader keeps. */
    r = TB_KERNEL(.start = 400, .end = 500, .stream = 2, .corr = 7, .name = 1);
    r.nfields = OPP_GPU_FIELDS_MAX;
    r.f[OPP_GPU_FIELDS_MAX - 1] = 12345;
    tb_gpu(&b, r);
    /* Ends before it starts: no duration. A huge correlation id. */
    r = TB_MEMSET(.start = 900, .end = 800, .stream = 2);
    r.f[OPP_GF_CORRELATION] = UINT64_MAX;
    tb_gpu(&b, r);
    /* An unknown record type, and kinds nobody defined. */
    tb_gpu(&b, (struct opp_gpu_rec){.type = 77, .nfields = 2, .f = {1, 2}});
    tb_memcpy(&b, .start = 1000, .end = 1100, .stream = 2, .kind = 99, .src_kind = 1000,
              .dst_kind = 9);
    /* A free nobody allocated, with no size; an allocation of every byte. */
    tb_memory(&b, .start = 50, .op = OPP_GPU_MEM_FREE, .mem_kind = 3, .address = 0xdead);
    tb_memory(&b, .start = 60, .op = OPP_GPU_MEM_ALLOC, .mem_kind = 3, .address = 0xbeef,
              .bytes = UINT64_MAX);
    tb_memory(&b, .start = 70, .op = 9, .mem_kind = 3, .address = 0xbeef,
              .bytes = 5); /* not an operation we know */
    tb_memory(&b, .start = 80, .corr = 7, .op = OPP_GPU_MEM_ALLOC, .mem_kind = 3, .address = 0x1,
              .bytes = UINT64_MAX); /* sums saturate */
    tb_memory(&b, .start = 90, .corr = 9, .op = OPP_GPU_MEM_ALLOC, .mem_kind = 3, .address = 0x2,
              .bytes = UINT64_MAX);
    /* A name with a NUL inside; a device whose name is an undefined id. */
    tb_string_n(&b, 1, "ab\0cd", 5);
    tb_gpu(&b, (struct opp_gpu_rec){.type = OPP_GPU_DEVICE, .nfields = 2, .f = {0, 9}});
    tb_gpu_chunk(&b);
    /* A chunk whose second record claims 300 fields: the reader stops
     * there, keeping the first. */
    tb_kernel(&b, .name = 1, .start = 2000, .end = 2100, .stream = 2, .corr = 9, K_FULL);
    struct opp_wbuf *raw = tb_gpu_raw(&b);
    opp_put_varint(raw, OPP_GPU_KERNEL);
    opp_put_varint(raw, 300);
    tb_close(&b);
    return path;
}

START_TEST(malformed_records_read)
{
    char *path = write_malformed();
    struct opp_model *m = load(path);
    ck_assert_ptr_nonnull(strstr(m->sum.warning, "invalid gpu chunk"));
    const struct opp_gpu *g = &m->gpu;
    ck_assert_uint_eq(g->skipped, 1);
    ck_assert_uint_eq(g->nops, 5);
    ck_assert_str_eq(opp_model_str(m, g->ops[0].name), "<unnamed kernel>");
    ck_assert_uint_eq(g->ops[0].thread, OPP_GPU_NONE);
    ck_assert_str_eq(opp_model_str(m, g->ops[1].name), "ab");
    ck_assert_uint_eq(g->ops[1].event, find_event(m, 0, "cudaLaunchKernel", 0));
    ck_assert_uint_eq(opp_gpu_op_dur(&g->ops[2]), 0);
    ck_assert_uint_eq(g->ops[2].corr, 0);
    ck_assert_str_eq(opp_model_str(m, g->ops[3].name),
                     "Memcpy <unknown> (Unrecognized -> Unrecognized)");
    ck_assert_str_eq(opp_model_str(m, g->ops[4].name), "ab");
    ck_assert_uint_eq(g->ops[4].event, find_event(m, 0, "cudaLaunchKernel", 1));
    opp_model_free(m);
    free(path);
}
END_TEST

START_TEST(malformed_memory_saturates)
{
    char *path = write_malformed();
    struct opp_model *m = load(path);
    const struct opp_gpu *g = &m->gpu;
    ck_assert_uint_eq(g->nmem, 5);
    ck_assert_int_eq(g->mem[0].bytes, 0);
    ck_assert_int_eq(g->mem[1].bytes, INT64_MAX);
    ck_assert_int_eq(g->mem[2].bytes, 0);
    ck_assert_int_eq(g->memseries[0].peak, INT64_MAX);
    ck_assert_int_eq(g->memseries[0].final, INT64_MAX);
    struct opp_agg a;
    struct opp_agg_opts ao = {.sort = OPP_SORT_CUDA_MEMORY_USAGE};
    ck_assert_int_eq(tu_aggregate(m, &ao, &a), 0);
    ck_assert_str_eq(a.rows[0].key, "cublasSgemm_v2"); /* a tie: by name */
    ck_assert_int_eq(a.rows[0].cuda_memory_usage, INT64_MAX);
    ck_assert_int_eq(a.rows[0].self_cuda_memory_usage, 0);
    ck_assert_str_eq(a.rows[1].key, "cudaLaunchKernel");
    ck_assert_int_eq(a.rows[1].self_cuda_memory_usage, INT64_MAX);
    ck_assert_int_eq(a.rows[1].cuda_memory_usage, INT64_MAX);
    opp_agg_free(&a);
    opp_model_free(m);
    free(path);
}
END_TEST

START_TEST(malformed_device_without_limits)
{
    char *path = write_malformed();
    struct opp_model *m = load(path);
    const struct opp_gpu *g = &m->gpu;
    ck_assert_uint_eq(g->ndevices, 1);
    ck_assert_str_eq(opp_model_str(m, g->devices[0].name), "");
    /* A device record with no limits: no occupancy estimate. */
    struct opp_kernel_stats *k;
    size_t nk;
    struct opp_agg_opts o = {0};
    struct opp_gpu_stats st;
    struct opp_pass *gs = tu_gpu_stats(path, &o, &st, &k, &nk);
    ck_assert_ptr_nonnull(gs);
    ck_assert_uint_eq(nk, 2);
    ck_assert(k[0].occupancy == -1 && k[1].occupancy == -1);
    free(k);
    opp_gpu_stats_free(&st);
    opp_pass_free(gs);
    opp_model_free(m);
    free(path);
}
END_TEST

START_TEST(malformed_command_reports)
{
    char *path = write_malformed();
    /* The command reports it, warning first about the damage. */
    char *out, *errs;
    char *a1[] = {"report", path, "--format", "json", NULL};
    ck_assert_int_eq(run_report(a1, &out, &errs), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"key\": \"ab\", \"lib\": \"\", \"count\": 2"));
    ck_assert_ptr_nonnull(strstr(errs, "invalid gpu chunk"));
    free(out);
    free(errs);
    char *a2[] = {"report", path, "--gpu", NULL};
    ck_assert_int_eq(run_report(a2, &out, &errs), 0);
    ck_assert_ptr_nonnull(strstr(out, "\nKernel time total: 0.400us (3 launches of 2 kernels)\n"));
    free(out);
    free(errs);
    free(path);
}
END_TEST

START_TEST(gpu_chunk_of_undeclared_process)
{
    char *path = tu_path(dir, "bad.opprof");
    struct tb b;
    struct opp_model *m;
    /* GPU records for a process the trace never declared: the chunk is
     * refused, the rest reported. */
    tb_open(&b, path);
    put_cpu(&b);
    tb_at(&b, 7, 0);
    tb_kernel(&b, .name = 1, .start = 2000, .end = 2100, .stream = 2, .corr = 7, K_FULL);
    tb_close(&b);
    m = load(path);
    ck_assert_ptr_nonnull(strstr(m->sum.warning, "invalid gpu chunk"));
    ck_assert_uint_eq(m->gpu.nops, 0);
    ck_assert_uint_eq(m->events, 8);
    opp_model_free(m);
    free(path);
}
END_TEST

Suite *suite_gpu_traces(void)
{
    Suite *s = suite_create("gpu_traces");
    TCase *tc = tcase_create("gpu_traces");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, cpu_only_cuda_columns_at_zero);
    tcase_add_test(tc, cpu_only_without_cuda_calls_cpu_table);
    tcase_add_test(tc, cpu_only_gpu_view_says_none);
    tcase_add_test(tc, gpu_records_of_no_gpu_say_none);
    tcase_add_test(tc, malformed_records_read);
    tcase_add_test(tc, malformed_memory_saturates);
    tcase_add_test(tc, malformed_device_without_limits);
    tcase_add_test(tc, malformed_command_reports);
    tcase_add_test(tc, gpu_chunk_of_undeclared_process);
    suite_add_tcase(s, tc);
    /* many devices: seconds under the sanitizers */
    TCase *many = tcase_create("many");
    tcase_set_timeout(many, 60);
    tcase_add_checked_fixture(many, setup, teardown);
    tcase_add_test(many, many_devices);
    tcase_add_test(many, many_devices_gpu_view);
    suite_add_tcase(s, many);
    return s;
}
