/* GPU activity in the report's model: the suites' trace (gpu_trace.h)
 * loaded (analysis/load.c), its ops attached to their calls, and
 * aggregated with torch's CUDA semantics (aggregate.c), with exact
 * numbers. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/aggregate.h"
#include "analysis/gpu_stats.h"
#include "analysis/model.h"
#include "gpu_trace.h"
#include "oracle/loaded.h"
#include "testutil.h"
#include "tool/cmds.h"
#include "views/fmt.h"
#include "views/output.h"

/* ---- the model ---- */

START_TEST(model_gpu_counts)
{
    const struct opp_model *m = model;
    const struct opp_gpu *g = &m->gpu;
    ck_assert_str_eq(m->sum.warning, "");
    ck_assert(opp_model_has_gpu(m));
    ck_assert_uint_eq(g->records, 4 + 14); /* not the 4 strings */
    ck_assert_uint_eq(g->nops, 9); /* 5 kernels, memcpy, sync, memset, overhead */
    ck_assert_uint_eq(g->nlaunches, 5);
    ck_assert_uint_eq(g->skipped, 0);
    ck_assert_uint_eq(g->unattached, 1); /* relu_kernel's correlation 99 */
    ck_assert_uint_eq(g->dropped_cupti, 4);
    ck_assert_uint_eq(g->dropped_ours, 2);
}
END_TEST

START_TEST(gpu_op_names)
{
    const struct opp_model *m = model;
    const struct opp_gpu *g = &m->gpu;
    /* Names: demangled, Kineto's, unknown ids said so. */
    const char *names[] = {"vecAdd(float*, float*, float*, int)", "Memcpy HtoD (Pageable -> Device)",
                           "Stream Sync", "vecAdd(float*, float*, float*, int)", "relu_kernel",
                           "Memset (Device)", "<unknown kernel 5>",
                           "vecAdd(float*, float*, float*, int)", "Overhead (Buffer Flush)"};
    for (size_t i = 0; i < g->nops; i++)
        ck_assert_str_eq(opp_model_str(m, g->ops[i].name), names[i]);
    ck_assert_uint_eq(g->ops[1].bytes, 1000000);
    ck_assert_uint_eq(g->ops[5].bytes, 4096);
    const struct opp_gpu_launch *l = &g->launches[g->ops[3].launch];
    ck_assert_uint_eq(l->block[0], 256);
    ck_assert_uint_eq(l->regs, 37);
    ck_assert_uint_eq(l->grid[0], 80);
}
END_TEST

/* Every overhead kind of CUDA 13's CUPTI by name (Kineto's for the first
 * five), and a kind it does not know as Unknown. */
START_TEST(overhead_kind_names)
{
    static const struct { uint32_t kind; const char *name; } k[] = {
        {0, "Unknown"},
        {1, "Driver Compiler"},
        {1u << 16, "Buffer Flush"},
        {2u << 16, "Instrumentation"},
        {3u << 16, "Resource"},
        {4u << 16, "Runtime Triggered Module Loading"},
        {5u << 16, "Lazy Function Loading"},
        {6u << 16, "Command Buffer Full"},
        {7u << 16, "Activity Buffer Request"},
        {8u << 16, "UVM Activity Init"},
        {9u << 16, "Unknown"},
        {(1u << 16) | 1, "Unknown"},
    };
    char buf[96];
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        struct opp_gpu_op op;
        struct opp_gpu_launch l;
        struct opp_gpu_rec r = TB_OVERHEAD(.start = 1, .end = 2, .kind = k[i].kind);
        opp_gpu_op_decode(&r, 0, &op, &l);
        opp_gpu_op_label(&op, buf, sizeof buf);
        char want[96];
        snprintf(want, sizeof want, "Overhead (%s)", k[i].name);
        ck_assert_str_eq(buf, want);
    }
}
END_TEST

START_TEST(gpu_ops_attached_by_correlation)
{
    const struct opp_model *m = model;
    const struct opp_gpu *g = &m->gpu;
    /* Attached to the API call with the same correlation id. */
    uint32_t launch = find_event(m, 0, "cudaLaunchKernel", 0);
    uint32_t launch2 = find_event(m, 0, "cudaLaunchKernel", 1);
    uint32_t memcpy_ev = find_event(m, 0, "cudaMemcpy", 0);
    uint32_t op = find_event(m, 0, "cublasSgemm_v2", 0);
    ck_assert_uint_eq(g->ops[0].thread, 0);
    ck_assert_uint_eq(g->ops[0].event, launch);
    ck_assert_uint_eq(g->ops[1].event, memcpy_ev);
    ck_assert_uint_eq(g->ops[2].event, memcpy_ev); /* the sync too */
    ck_assert_uint_eq(g->ops[3].event, launch2);
    ck_assert_uint_eq(g->ops[4].thread, OPP_GPU_NONE); /* correlation pointing nowhere */
    ck_assert_uint_eq(g->ops[6].thread, OPP_GPU_NONE); /* correlation 0 */
    ck_assert_uint_eq(g->ops[7].thread, 1);
    ck_assert_uint_eq(m->threads[0].events[launch].parent, op);
}
END_TEST

/* Correlation ids past CUPTI's 32-bit wrap (the agent extends them): two
 * launches an hour of calls apart, 5 and 2^32 + 5, each keep their own
 * kernel, whichever comes first in the trace. */
START_TEST(gpu_ops_attached_past_the_wrap)
{
    char *path = tu_path(dir, "wrap.opprof");
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 0, .pid = 300, .ppid = 1, .parent = UINT32_MAX, .real = 1,
               .exe = "/usr/bin/train", .argv = {"train"});
    tb_funcs(&b, [0] = {OPP_OP_CUDA_API, OPP_DT_NONE, "cudart", "cudaLaunchKernel"});
    tb_thread(&b, 300, "train");
    tb_events(&b, TB_CALL(0, 1000, 1100, 0, API(5, 211)),
              TB_CALL(0, 5000, 5100, 0, API((1ull << 32) + 5, 211)));
    tb_kernel(&b, .name = 1, .start = 6000, .end = 9000, .stream = 7, .corr = (1ull << 32) + 5, K_FULL);
    tb_kernel(&b, .name = 1, .start = 2000, .end = 3000, .stream = 7, .corr = 5, K_FULL);
    tb_string(&b, 1, "k");
    tb_gpu_chunk(&b);
    tb_process_end(&b, 0, OPP_END_EXITED, 10000);
    tb_end(&b);
    struct opp_model *m = load(path);
    ck_assert_uint_eq(m->gpu.nops, 2);
    ck_assert_uint_eq(m->gpu.ops[0].corr, (1ull << 32) + 5);
    ck_assert_uint_eq(m->gpu.ops[0].event, find_event(m, 0, "cudaLaunchKernel", 1));
    ck_assert_uint_eq(m->gpu.ops[1].event, find_event(m, 0, "cudaLaunchKernel", 0));
    ck_assert_uint_eq(m->gpu.unattached, 0);
    opp_model_free(m);
    free(path);
}
END_TEST

START_TEST(cuda_time_of_calls)
{
    const struct opp_model *m = model;
    uint32_t launch = find_event(m, 0, "cudaLaunchKernel", 0);
    uint32_t launch2 = find_event(m, 0, "cudaLaunchKernel", 1);
    uint32_t memcpy_ev = find_event(m, 0, "cudaMemcpy", 0);
    uint32_t op = find_event(m, 0, "cublasSgemm_v2", 0);
    /* Self CUDA: kernels, memcpy and memset attached directly (not the
     * sync); CUDA total adds the children's. */
    const struct opp_event_gpu *eg = m->threads[0].gpu;
    ck_assert_ptr_nonnull(eg);
    ck_assert_uint_eq(eg[launch].self_cuda_ns, 2000);
    ck_assert_uint_eq(eg[launch].cuda_ns, 2000);
    ck_assert_uint_eq(eg[memcpy_ev].self_cuda_ns, 2000);
    ck_assert_uint_eq(eg[op].self_cuda_ns, 0);
    ck_assert_uint_eq(eg[op].cuda_ns, 4000);
    ck_assert_uint_eq(eg[launch2].cuda_ns, 3000);
}
END_TEST

START_TEST(cuda_memory_of_calls)
{
    const struct opp_model *m = model;
    const struct opp_event_gpu *eg = m->threads[0].gpu;
    uint32_t op = find_event(m, 0, "cublasSgemm_v2", 0);
    uint32_t malloc_ev = find_event(m, 0, "cudaMalloc", 0);
    uint32_t free_ev = find_event(m, 0, "cudaFree", 0);
    ck_assert_int_eq(eg[malloc_ev].self_mem, 4096);
    ck_assert_int_eq(eg[free_ev].self_mem, -4096);
    ck_assert_int_eq(eg[op].mem, 0);
}
END_TEST

START_TEST(cuda_time_of_other_thread)
{
    const struct opp_model *m = model;
    ck_assert_uint_eq(m->threads[1].gpu[0].self_cuda_ns, 1000);
}
END_TEST

START_TEST(gpu_memory_records)
{
    const struct opp_model *m = model;
    const struct opp_gpu *g = &m->gpu;
    uint32_t free_ev = find_event(m, 0, "cudaFree", 0);
    /* Memory: by time; a free without a size takes the allocation's. */
    ck_assert_uint_eq(g->nmem, 4);
    const uint64_t when[] = {1200, 20100, 21100, 23000};
    const int64_t bytes[] = {4096, -4096, 1000, -512};
    for (size_t i = 0; i < 4; i++) {
        ck_assert_uint_eq(g->mem[i].time_ns, when[i]);
        ck_assert_int_eq(g->mem[i].bytes, bytes[i]);
    }
    ck_assert_uint_eq(g->mem[1].op, OPP_GPU_MEM_FREE);
    ck_assert_uint_eq(g->mem[1].event, free_ev);
    ck_assert_uint_eq(g->mem[3].thread, OPP_GPU_NONE);
    ck_assert_uint_eq(g->nmemseries, 1);
    const struct opp_gpu_memseries *ms = &g->memseries[0];
    ck_assert_uint_eq(ms->device, 0);
    ck_assert_uint_eq(ms->npts, 4);
    const int64_t level[] = {4096, 0, 1000, 488};
    for (size_t i = 0; i < 4; i++) {
        ck_assert_uint_eq(ms->pts[i].time_ns, when[i]);
        ck_assert_int_eq(ms->pts[i].bytes, level[i]);
    }
    ck_assert_int_eq(ms->peak, 4096);
    ck_assert_int_eq(ms->final, 488);
}
END_TEST

START_TEST(gpu_devices)
{
    const struct opp_model *m = model;
    const struct opp_gpu *g = &m->gpu;
    /* Described twice: the first record wins; device 1 never described. */
    ck_assert_uint_eq(g->ndevices, 1);
    const struct opp_gpu_device *d = opp_gpu_device_find(m, 0);
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(opp_model_str(m, d->name), "Test GPU");
    ck_assert_uint_eq(d->sms, 132);
    ck_assert_uint_eq(d->global_mem, 80ull << 30);
    ck_assert_ptr_null(opp_gpu_device_find(m, 1));
}
END_TEST

START_TEST(gpu_external_correlations)
{
    const struct opp_gpu *g = &model->gpu;
    ck_assert_uint_eq(g->nextcorr, 1);
    ck_assert_uint_eq(g->extcorr[0].external, 42);
    ck_assert_uint_eq(g->extcorr[0].corr, 7);
    ck_assert_uint_eq(g->extcorr[0].kind, 2);
}
END_TEST

/* ---- key_averages ---- */

struct want {
    const char *key;
    uint32_t device_type;
    uint64_t count, self_cpu, cpu_total, self_cuda, cuda_total;
    int64_t self_mem, mem;
    uint64_t bytes;
};

static void check_rows(const struct opp_agg *a, const struct want *w, size_t n)
{
    ck_assert_uint_eq(a->nrows, n);
    for (size_t i = 0; i < n; i++) {
        const struct opp_row *r = &a->rows[i];
        ck_assert_msg(!strcmp(r->key, w[i].key), "row %zu: %s, want %s", i, r->key, w[i].key);
        ck_assert_uint_eq(r->device_type, w[i].device_type);
        ck_assert_uint_eq(r->count, w[i].count);
        ck_assert_uint_eq(r->self_cpu_time_total_ns, w[i].self_cpu);
        ck_assert_uint_eq(r->cpu_time_total_ns, w[i].cpu_total);
        ck_assert_msg(r->self_cuda_time_total_ns == w[i].self_cuda, "%s: self cuda %llu", r->key,
                      (unsigned long long)r->self_cuda_time_total_ns);
        ck_assert_msg(r->cuda_time_total_ns == w[i].cuda_total, "%s: cuda total %llu", r->key,
                      (unsigned long long)r->cuda_time_total_ns);
        ck_assert_int_eq(r->self_cuda_memory_usage, w[i].self_mem);
        ck_assert_int_eq(r->cuda_memory_usage, w[i].mem);
        ck_assert_uint_eq(r->bytes, w[i].bytes);
    }
}

START_TEST(rows)
{
    struct opp_agg a;
    struct opp_agg_opts o = {0};
    ck_assert_int_eq(tu_aggregate(model, &o, &a), 0);
    const struct want w[] = {
        {"cudaMemcpy", CPU, 1, 5000, 5000, 2000, 2000, 0, 0, 0},
        {"cublasSgemm_v2", CPU, 1, 2000, 8000, 0, 4000, 0, 0, 0},
        {"cudaLaunchKernel", CPU, 3, 1700, 1700, 6000, 6000, 0, 0, 0},
        {"cudaMalloc", CPU, 2, 600, 600, 0, 0, 5096, 5096, 0},
        {"cudaFree", CPU, 1, 300, 300, 0, 0, -4096, -4096, 0},
        /* CUDA rows: no CPU time; ties by name. */
        {"<unknown kernel 5>", CUDA, 1, 0, 0, 400, 400, 0, 0, 0},
        {HTOD, CUDA, 1, 0, 0, 2000, 2000, 0, 0, 1000000},
        {"Memset (Device)", CUDA, 1, 0, 0, 100, 100, 0, 0, 4096},
        {"relu_kernel", CUDA, 1, 0, 0, 500, 500, 0, 0, 0},
        {VECADD, CUDA, 3, 0, 0, 6000, 6000, 0, 0, 0},
    };
    check_rows(&a, w, 10);
    ck_assert_uint_eq(a.self_cpu_time_total_ns, 9600);
    ck_assert_uint_eq(a.self_cuda_time_total_ns, 9000); /* the CUDA rows' */
    ck_assert_uint_eq(a.events, 8);
    ck_assert_uint_eq(a.gpu_ops, 7);
    ck_assert_int_eq(a.gpu, 1);
    ck_assert_str_eq(a.rows[0].lib, "cudart");
    ck_assert_str_eq(a.rows[5].lib, "");
    ck_assert_int_eq(a.rows[6].transfers, 1);
    ck_assert_int_eq(a.rows[9].transfers, 0);
    ck_assert(opp_row_gbps(&a.rows[6]) == 500.0);
    ck_assert(opp_row_cuda_avg_ns(&a.rows[9]) == 2000.0);
    opp_agg_free(&a);
}
END_TEST

static void check_order(enum opp_sort_key key, const char *const *names, size_t n)
{
    struct opp_agg a;
    struct opp_agg_opts o = {.sort = key, .limit = n};
    ck_assert_int_eq(tu_aggregate(model, &o, &a), 0);
    ck_assert_uint_eq(a.nrows, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(!strcmp(a.rows[i].key, names[i]), "sort %d row %zu: %s, want %s", key, i,
                      a.rows[i].key, names[i]);
    ck_assert_uint_eq(a.self_cuda_time_total_ns, 9000); /* before the limit */
    opp_agg_free(&a);
}

START_TEST(cuda_sort_key_names)
{
    enum opp_sort_key k;
    const struct {
        const char *name;
        enum opp_sort_key key;
    } keys[] = {
        {"self_cuda_time_total", OPP_SORT_SELF_CUDA_TIME_TOTAL},
        {"cuda_time_total", OPP_SORT_CUDA_TIME_TOTAL},
        {"cuda_time", OPP_SORT_CUDA_TIME},
        {"cuda_memory_usage", OPP_SORT_CUDA_MEMORY_USAGE},
        {"self_cuda_memory_usage", OPP_SORT_SELF_CUDA_MEMORY_USAGE},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        ck_assert_int_eq(opp_sort_key_parse(keys[i].name, &k), 0);
        ck_assert_int_eq(k, keys[i].key);
    }
}
END_TEST

START_TEST(cuda_sort_orders)
{
    const char *self_cuda[] = {"cudaLaunchKernel", VECADD, HTOD, "cudaMemcpy", "relu_kernel",
                               "<unknown kernel 5>", "Memset (Device)", "cublasSgemm_v2"};
    check_order(OPP_SORT_SELF_CUDA_TIME_TOTAL, self_cuda, 8);
    const char *cuda_total[] = {"cudaLaunchKernel", VECADD, "cublasSgemm_v2", HTOD, "cudaMemcpy"};
    check_order(OPP_SORT_CUDA_TIME_TOTAL, cuda_total, 5);
    /* Averages: memcpy 2000 each, vecAdd 2000, launch 2000, cublas 4000. */
    const char *cuda_avg[] = {"cublasSgemm_v2", HTOD, "cudaLaunchKernel", "cudaMemcpy", VECADD,
                              "relu_kernel"};
    check_order(OPP_SORT_CUDA_TIME, cuda_avg, 6);
    const char *mem[] = {"cudaMalloc", "<unknown kernel 5>"};
    check_order(OPP_SORT_CUDA_MEMORY_USAGE, mem, 2);
    struct opp_agg a;
    struct opp_agg_opts o = {.sort = OPP_SORT_SELF_CUDA_MEMORY_USAGE};
    ck_assert_int_eq(tu_aggregate(model, &o, &a), 0);
    ck_assert_str_eq(a.rows[0].key, "cudaMalloc");
    ck_assert_str_eq(a.rows[a.nrows - 1].key, "cudaFree"); /* freed: negative, last */
    opp_agg_free(&a);
}
END_TEST

START_TEST(filter_tid_keeps_its_gpu_work)
{
    /* --tid: the thread's calls and the GPU work they launched only. */
    struct opp_agg a;
    struct opp_agg_opts o = {.filter_tid = 1, .tid = 301};
    ck_assert_int_eq(tu_aggregate(model, &o, &a), 0);
    const struct want w[] = {
        {"cudaLaunchKernel", CPU, 1, 200, 200, 1000, 1000, 0, 0, 0},
        {VECADD, CUDA, 1, 0, 0, 1000, 1000, 0, 0, 0},
    };
    check_rows(&a, w, 2);
    ck_assert_uint_eq(a.self_cuda_time_total_ns, 1000);
    opp_agg_free(&a);
}
END_TEST

START_TEST(filter_pid_keeps_every_op)
{
    struct opp_agg a;
    /* --pid: every op of the process, attached or not. */
    struct opp_agg_opts o = {.filter_pid = 1, .pid = 300};
    ck_assert_int_eq(tu_aggregate(model, &o, &a), 0);
    ck_assert_uint_eq(a.nrows, 10);
    ck_assert_uint_eq(a.self_cuda_time_total_ns, 9000);
    opp_agg_free(&a);
    o = (struct opp_agg_opts){.filter_pid = 1, .pid = 9};
    ck_assert_int_eq(tu_aggregate(model, &o, &a), 0);
    ck_assert_uint_eq(a.nrows, 0);
    ck_assert_uint_eq(a.self_cuda_time_total_ns, 0);
    opp_agg_free(&a);
}
END_TEST

Suite *suite_gpu(void)
{
    Suite *s = suite_create("gpu");
    TCase *tc = tcase_create("gpu");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, model_gpu_counts);
    tcase_add_test(tc, gpu_op_names);
    tcase_add_test(tc, overhead_kind_names);
    tcase_add_test(tc, gpu_ops_attached_by_correlation);
    tcase_add_test(tc, gpu_ops_attached_past_the_wrap);
    tcase_add_test(tc, cuda_time_of_calls);
    tcase_add_test(tc, cuda_memory_of_calls);
    tcase_add_test(tc, cuda_time_of_other_thread);
    tcase_add_test(tc, gpu_memory_records);
    tcase_add_test(tc, gpu_devices);
    tcase_add_test(tc, gpu_external_correlations);
    tcase_add_test(tc, rows);
    tcase_add_test(tc, cuda_sort_key_names);
    tcase_add_test(tc, cuda_sort_orders);
    tcase_add_test(tc, filter_tid_keeps_its_gpu_work);
    tcase_add_test(tc, filter_pid_keeps_every_op);
    suite_add_tcase(s, tc);
    return s;
}
