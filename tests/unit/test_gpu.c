/* Over 600 lines: one suite, the GPU model and every view of it, over traces it builds per test. */
/* GPU activity in the report: traces built by hand with CUDA API events and
 * GPU records (common/gpu.h), loaded (analysis/load.c), aggregated with
 * torch's CUDA semantics (aggregate.c), summarised per device, stream and
 * kernel (gpu_stats.c) and shown (views/, tool/cmd_report.c), with exact
 * numbers. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/aggregate.h"
#include "tool/cmds.h"
#include "views/fmt.h"
#include "analysis/gpu_stats.h"
#include "analysis/model.h"
#include "views/output.h"
#include "testutil.h"
#include "tracebuild.h"

#define NN ('N' | 'N' << 8)

/* ---- the trace ----
 * Process 0, pid 300. Thread 300:
 *   cudaMalloc        [1000, 1400]   corr 3   -> alloc 4096 B at 0xA000
 *   cublasSgemm_v2    [2000, 10000]  (an operator holding the next two)
 *     cudaLaunchKernel [2500, 3500]  corr 7   -> vecAdd  [4000, 6000] stream 7
 *     cudaMemcpy       [4000, 9000]  corr 8   -> Memcpy HtoD [6500, 8500] 1e6 B,
 *                                                and a Stream Sync [8500, 9000]
 *   cudaLaunchKernel  [11000, 11500] corr 9   -> vecAdd  [13500, 16500] stream 7
 *   cudaFree          [20000, 20300] corr 10  -> free at 0xA000 (size by address)
 *   cudaMalloc        [21000, 21200] corr 11  -> alloc 1000 B at 0xB000
 * Thread 301:
 *   cudaLaunchKernel  [30000, 30200] corr 20  -> vecAdd  [31000, 32000] stream 7
 * Not attached: relu_kernel [17000, 17500] stream 9 (corr 99: no such call),
 * Memset (Device) [18000, 18100] stream 9, 4096 B, a kernel whose name id 5
 * was never defined [5000, 5400] on device 1, a free of 512 B at 0xC000
 * (allocated before the trace began) at 23000, an overhead record. */

enum { F_OP, F_LAUNCH, F_MEMCPY, F_MALLOC, F_FREE };
/* A CUDA API call's arguments: status, correlation id, cbid. */
#define API(corr, cbid) 0, corr, cbid

/* Launches of 80 blocks, and the occupancy each gets on the test GPU. */
#define K_HALF .grid = {80, 1, 1}, .block = {256, 1, 1}, .regs = 64, .static_smem = 16384, \
               .dynamic_smem = 32768 /* 50%: registers, smem */
#define K_REGS .grid = {80, 1, 1}, .block = {256, 1, 1}, .regs = 37 /* 75%: 37 regs round up */
#define K_FULL .grid = {80, 1, 1}, .block = {1024, 1, 1}            /* 100% */
/* An H100's limits. */
#define GPU_LIMITS .cc_major = 9, .sms = 132, .threads_per_sm = 2048, .regs_per_sm = 65536, \
                   .smem_per_sm = 233472, .blocks_per_sm = 32, .warps_per_sm = 64,         \
                   .threads_per_block = 1024, .global_mem = 80ull << 30

static void put_cpu(struct tb *b)
{
    tb_process(b, .proc = 0, .pid = 300, .ppid = 1, .parent = UINT32_MAX, .real = 1,
               .exe = "/usr/bin/train", .argv = {"train"});
    tb_funcs(b, [F_OP] = {OPP_OP_GEMM, OPP_DT_F32, "cublas", "cublasSgemm_v2"},
             [F_LAUNCH] = {OPP_OP_CUDA_API, OPP_DT_NONE, "cudart", "cudaLaunchKernel"},
             [F_MEMCPY] = {OPP_OP_CUDA_API, OPP_DT_NONE, "cudart", "cudaMemcpy"},
             [F_MALLOC] = {OPP_OP_CUDA_API, OPP_DT_NONE, "cudart", "cudaMalloc"},
             [F_FREE] = {OPP_OP_CUDA_API, OPP_DT_NONE, "cudart", "cudaFree"});
    tb_thread(b, 300, "train");
    tb_thread(b, 301, "loader");
    tb_thread(b, 300, NULL);
    tb_events(b, TB_CALL(F_MALLOC, 1000, 1400, 0, API(3, 20)),
              TB_CALL(F_LAUNCH, 2500, 3500, 1, API(7, 211)),
              TB_CALL(F_MEMCPY, 4000, 9000, 1, API(8, 31)),
              TB_CALL(F_OP, 2000, 10000, 0, 64, 64, 64, NN),
              TB_CALL(F_LAUNCH, 11000, 11500, 0, API(9, 211)),
              TB_CALL(F_FREE, 20000, 20300, 0, API(10, 22)),
              TB_CALL(F_MALLOC, 21000, 21200, 0, API(11, 20)));
    tb_thread(b, 301, NULL);
    tb_events(b, TB_CALL(F_LAUNCH, 30000, 30200, 0, API(20, 211)));
}

static void put_gpu(struct tb *b)
{
    /* First chunk: records that name strings defined only in the next one. */
    tb_kernel(b, .name = 1, .start = 4000, .end = 6000, .stream = 7, .corr = 7, K_HALF);
    tb_memcpy(b, .start = 6500, .end = 8500, .stream = 7, .corr = 8, .bytes = 1000000,
              .kind = 1 /* HtoD */, .src_kind = 1 /* pageable */, .dst_kind = 3 /* device */);
    tb_sync(b, .start = 8500, .end = 9000, .stream = 7, .corr = 8, .type = 3);
    tb_kernel(b, .name = 1, .start = 13500, .end = 16500, .stream = 7, .corr = 9, K_REGS);
    tb_kernel(b, .name = 2, .start = 17000, .end = 17500, .stream = 9, .corr = 99, K_FULL);
    tb_memset(b, .start = 18000, .end = 18100, .stream = 9, .bytes = 4096, .mem_kind = 3);
    tb_kernel(b, .name = 5, .start = 5000, .end = 5400, .device = 1, .stream = 1, K_FULL);
    tb_kernel(b, .name = 1, .start = 31000, .end = 32000, .stream = 7, .corr = 20, K_HALF);
    tb_gpu_chunk(b);

    tb_string(b, 1, "_Z6vecAddPfS_S_i");
    tb_string(b, 2, "relu_kernel");
    tb_string(b, 3, "Test GPU");
    tb_string(b, 4, "Another name");
    tb_device(b, .id = 0, .name = 3, GPU_LIMITS);
    tb_device(b, .id = 0, .name = 4, GPU_LIMITS); /* described again: the first record wins */
    /* Memory, not in time order. */
    tb_memory(b, .start = 1200, .corr = 3, .op = OPP_GPU_MEM_ALLOC, .mem_kind = 3,
              .address = 0xA000, .bytes = 4096);
    tb_memory(b, .start = 21100, .corr = 11, .op = OPP_GPU_MEM_ALLOC, .mem_kind = 3,
              .address = 0xB000, .bytes = 1000);
    tb_memory(b, .start = 20100, .corr = 10, .op = OPP_GPU_MEM_FREE, .mem_kind = 3,
              .address = 0xA000);
    tb_memory(b, .start = 23000, .op = OPP_GPU_MEM_FREE, .mem_kind = 3, .address = 0xC000,
              .bytes = 512);
    tb_overhead(b, .start = 100, .end = 200, .kind = 1u << 16);
    tb_extcorr(b, 2, 42, 7);
    tb_gpu_dropped(b, 3, 2);
    tb_gpu_dropped(b, 1, 0);
    tb_gpu_chunk(b);
}

static char *dir, *trace;
static struct opp_model *model;

static void write_trace(const char *path, int with_gpu)
{
    struct tb b;
    tb_open(&b, path);
    put_cpu(&b);
    if (with_gpu)
        put_gpu(&b);
    tb_process_end(&b, 0, OPP_END_EXITED, 40000);
    tb_end(&b);
}

static struct opp_model *load(const char *path)
{
    char err[512];
    struct opp_model *m = opp_model_load(path, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    return m;
}

static void setup(void)
{
    dir = tu_tmpdir();
    ck_assert_ptr_nonnull(dir);
    trace = tu_path(dir, "gpu.opprof");
    write_trace(trace, 1);
    model = load(trace);
}

static void teardown(void)
{
    opp_model_free(model);
    model = NULL;
    tu_rmdir(dir);
    free(trace);
    free(dir);
}

/* The event of thread index ti named name, the k-th in tree order. */
static uint32_t find_event(const struct opp_model *m, size_t ti, const char *name, int k)
{
    const struct opp_thread *t = &m->threads[ti];
    for (uint32_t i = 0; i < t->nevents; i++)
        if (!strcmp(opp_model_str(m, t->events[i].name), name) && k-- == 0)
            return i;
    ck_abort_msg("no event %s", name);
    return 0;
}

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

#define CPU OPP_DEVICE_CPU
#define CUDA OPP_DEVICE_CUDA
#define VECADD "vecAdd(float*, float*, float*, int)"
#define HTOD "Memcpy HtoD (Pageable -> Device)"

START_TEST(rows)
{
    struct opp_agg a;
    struct opp_agg_opts o = {0};
    ck_assert_int_eq(opp_aggregate(model, &o, &a), 0);
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
    ck_assert_int_eq(opp_aggregate(model, &o, &a), 0);
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
    ck_assert_int_eq(opp_aggregate(model, &o, &a), 0);
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
    ck_assert_int_eq(opp_aggregate(model, &o, &a), 0);
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
    ck_assert_int_eq(opp_aggregate(model, &o, &a), 0);
    ck_assert_uint_eq(a.nrows, 10);
    ck_assert_uint_eq(a.self_cuda_time_total_ns, 9000);
    opp_agg_free(&a);
    o = (struct opp_agg_opts){.filter_pid = 1, .pid = 9};
    ck_assert_int_eq(opp_aggregate(model, &o, &a), 0);
    ck_assert_uint_eq(a.nrows, 0);
    ck_assert_uint_eq(a.self_cuda_time_total_ns, 0);
    opp_agg_free(&a);
}
END_TEST

/* ---- outputs ---- */

#define S12 "------------  "
#define S13 "-------------  "
#define SEP_T "---------------------------------------  " S12 S12 S12 S12 S12 S12 S12 S12 S13 \
              S12 S13 S12 "\n"

START_TEST(table)
{
    struct opp_agg a;
    struct opp_agg_opts o = {0};
    struct opp_out_opts oo = {0};
    ck_assert_int_eq(opp_aggregate(model, &o, &a), 0);
    char *out;
    CAPTURE(out, opp_out_table(f, &a, &oo));
    const char *want =
        SEP_T
        "                                   Name    Self CPU %      Self CPU   CPU total %     CPU total"
        "  CPU time avg     Self CUDA   Self CUDA %    CUDA total  CUDA time avg      CUDA Mem"
        "  Self CUDA Mem    # of Calls  \n"
        SEP_T
        "                             cudaMemcpy        52.08%       5.000us        52.08%       5.000us"
        "       5.000us       2.000us        22.22%       2.000us        2.000us           0 b"
        "            0 b             1  \n"
        "                         cublasSgemm_v2        20.83%       2.000us        83.33%       8.000us"
        "       8.000us       0.000us         0.00%       4.000us        4.000us           0 b"
        "            0 b             1  \n"
        "                       cudaLaunchKernel        17.71%       1.700us        17.71%       1.700us"
        "       0.567us       6.000us        66.67%       6.000us        2.000us           0 b"
        "            0 b             3  \n"
        "                             cudaMalloc         6.25%       0.600us         6.25%       0.600us"
        "       0.300us       0.000us         0.00%       0.000us        0.000us       4.98 Kb"
        "        4.98 Kb             2  \n"
        "                               cudaFree         3.12%       0.300us         3.12%       0.300us"
        "       0.300us       0.000us         0.00%       0.000us        0.000us      -4.00 Kb"
        "       -4.00 Kb             1  \n"
        "                     <unknown kernel 5>         0.00%       0.000us         0.00%       0.000us"
        "       0.000us       0.400us         4.44%       0.400us        0.400us           0 b"
        "            0 b             1  \n"
        "       Memcpy HtoD (Pageable -> Device)         0.00%       0.000us         0.00%       0.000us"
        "       0.000us       2.000us        22.22%       2.000us        2.000us           0 b"
        "            0 b             1  \n"
        "                        Memset (Device)         0.00%       0.000us         0.00%       0.000us"
        "       0.000us       0.100us         1.11%       0.100us        0.100us           0 b"
        "            0 b             1  \n"
        "                            relu_kernel         0.00%       0.000us         0.00%       0.000us"
        "       0.000us       0.500us         5.56%       0.500us        0.500us           0 b"
        "            0 b             1  \n"
        "    vecAdd(float*, float*, float*, int)         0.00%       0.000us         0.00%       0.000us"
        "       0.000us       6.000us        66.67%       6.000us        2.000us           0 b"
        "            0 b             3  \n"
        SEP_T
        "Self CPU time total: 9.600us\n"
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
    ck_assert_int_eq(opp_aggregate(model, &o, &a), 0);
    CAPTURE(out, opp_out_table(f, &a, &oo));
    ck_assert_ptr_null(strstr(out, "Mem"));
    ck_assert_ptr_nonnull(strstr(out, " CUDA time avg    # of Calls  \n"));
    ck_assert_ptr_null(strstr(out, "vecAdd"));
    ck_assert_ptr_nonnull(strstr(out, "\nSelf CPU time total: 0.200us\nSelf CUDA time total: 1.000us\n"));
    free(out);
    opp_agg_free(&a);
}
END_TEST

START_TEST(csv)
{
    struct opp_agg a;
    struct opp_agg_opts o = {.sort = OPP_SORT_SELF_CUDA_TIME_TOTAL, .limit = 4};
    struct opp_out_opts oo = {0};
    ck_assert_int_eq(opp_aggregate(model, &o, &a), 0);
    char *out;
    CAPTURE(out, opp_out_csv(f, &a, &oo));
    ck_assert_str_eq(out,
                     "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,flops,"
                     "device_type,self_cuda_time_total_us,cuda_time_total_us,cuda_time_avg_us,"
                     "self_cuda_memory_usage,cuda_memory_usage,bytes,gbps\n"
                     "cudaLaunchKernel,cudart,3,1.700,1.700,0.567,0,CPU,6.000,6.000,2.000,0,0,,\n"
                     "\"" VECADD "\",,3,0.000,0.000,0.000,0,CUDA,6.000,6.000,2.000,0,0,,\n"
                     HTOD ",,1,0.000,0.000,0.000,0,CUDA,2.000,2.000,2.000,0,0,1000000,500.000\n"
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
    ck_assert_int_eq(opp_aggregate(model, &o, &a), 0);
    ck_assert_int_eq(opp_gpu_stats(model, &o, &s), 0);
    struct opp_out_opts oo = {.gpu = &s};
    char *out;
    CAPTURE(out, opp_out_json(f, "g.trace", model, &a, &oo));
    const char *want[] = {
        "\n  \"self_cpu_time_total\": 9.600,\n  \"self_cuda_time_total\": 9.000,\n",
        "\n  \"events\": 8,\n  \"dropped\": 0,\n  \"gpu\": {\n"
        "    \"ops\": 7, \"kernels\": 5, \"kernel_time\": 6.900, \"unattached\": 1,\n"
        "    \"dropped\": {\"cupti\": 4, \"opprof\": 2}, \"cupti_clients_refused\": 0, \"cupti_buffers_taken\": 0, \"cupti_yielded\": 0, \"cupti_retaken\": 0, \"unfinished\": 0,\n"
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
    opp_agg_free(&a);
}
END_TEST

/* ---- the GPU view ---- */

START_TEST(occupancy)
{
    const struct opp_gpu_device *d = opp_gpu_device_find(model, 0);
    ck_assert_ptr_nonnull(d);
    struct opp_gpu_launch l = {.block = {256, 1, 1}, .regs = 64, .static_smem = 16384,
                               .dynamic_smem = 32768};
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
    ck_assert_int_eq(opp_gpu_stats(model, &o, &s), 0);
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
    const uint64_t gaps[][2] = {{18100, 31000}, {8500, 13500}, {6000, 6500}, {16500, 17000},
                                {17500, 18000}};
    const char *next[] = {VECADD, VECADD, HTOD, "relu_kernel", "Memset (Device)"};
    for (size_t i = 0; i < 5; i++) {
        ck_assert_uint_eq(d->gaps[i].start_ns, gaps[i][0]);
        ck_assert_uint_eq(d->gaps[i].end_ns, gaps[i][1]);
        ck_assert_str_eq(opp_model_str(model, d->gaps[i].next), next[i]);
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
}
END_TEST

START_TEST(kernel_stats)
{
    struct opp_agg_opts o = {0};
    struct opp_kernel_stats *k;
    size_t nk;
    ck_assert_int_eq(opp_kernel_stats(model, &o, &k, &nk), 0);
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
}
END_TEST

START_TEST(gpu_stats_of_one_thread)
{
    struct opp_gpu_stats s;
    /* --tid 301: its kernel only; the device is busy 1 us of 1 us. */
    struct opp_agg_opts o = {.filter_tid = 1, .tid = 301};
    ck_assert_int_eq(opp_gpu_stats(model, &o, &s), 0);
    ck_assert_uint_eq(s.ops, 1);
    ck_assert_uint_eq(s.devs[0].busy_ns, 1000);
    ck_assert(s.devs[0].idle_share == 0.0);
    opp_gpu_stats_free(&s);
}
END_TEST

static int run_report(char **argv, char **out, char **err)
{
    int rc = tu_call(cmd_report, argv, dir, out, err);
    ck_assert_int_ne(rc, -1000);
    return rc;
}

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
    ck_assert_int_eq(tu_call(cmd_summarize, again, dir, &out, &err), 3);
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
        "                               Name    # of Calls         Total           Avg         Share"
        "  Est. Occupancy  Launch Delay Avg  Launch Delay Max  \n"
        "-----------------------------------  " S12 S12 S12 S12 "--------------  "
        "----------------  ----------------  \n"
        "vecAdd(float*, float*, float*, int)             3       6.000us       2.000us        86.96%"
        "          58.33%           1.100us           2.000us  \n"
        "                        relu_kernel             1       0.500us       0.500us         7.25%"
        "         100.00%                --                --  \n"
        "                 <unknown kernel 5>             1       0.400us       0.400us         5.80%"
        "              --                --                --  \n"
        "-----------------------------------  " S12 S12 S12 S12 "--------------  "
        "----------------  ----------------  \n"
        "Kernel time total: 6.900us (5 launches of 3 kernels)\n"
        "\n"
        "GPU streams (Busy %: of the device's span)\n"
        S12 S12 S12 S12 S12 S12 S12 S12 "\n"
        "         PID        Device        Stream      # of Ops       Kernels   Kernel Time"
        "          Busy        Busy %  \n"
        S12 S12 S12 S12 S12 S12 S12 S12 "\n"
        "         300             0             7             4             3       6.000us"
        "       8.000us        28.57%  \n"
        "         300             0             9             2             1       0.500us"
        "       0.600us         2.14%  \n"
        "         300             1             1             1             1       0.400us"
        "       0.400us       100.00%  \n"
        S12 S12 S12 S12 S12 S12 S12 S12 "\n"
        "\n"
        "GPU devices (Idle %: 1 - busy / span, span from the first GPU op's start to the last "
        "one's end)\n"
        S12 S12 S12 S12 S12 S12 S12 S12 "\n"
        "      Device          Name      # of Ops          Busy          Span        Idle %"
        "      Peak Mem     Final Mem  \n"
        S12 S12 S12 S12 S12 S12 S12 S12 "\n"
        "           0      Test GPU             6       8.600us      28.000us        69.29%"
        "       4.00 Kb         488 b  \n"
        "           1            --             1       0.400us       0.400us         0.00%"
        "            --            --  \n"
        S12 S12 S12 S12 S12 S12 S12 S12 "\n"
        "\n"
        "Largest idle gaps per device (From, To: since the device's first GPU op)\n"
        S12 S12 S12 S12 "-----------------------------------  \n"
        "      Device           Gap          From            To                              Next Op  \n"
        S12 S12 S12 S12 "-----------------------------------  \n"
        "           0      12.900us     +14.100us     +27.000us  vecAdd(float*, float*, float*, int)  \n"
        "           0       5.000us      +4.500us      +9.500us  vecAdd(float*, float*, float*, int)  \n"
        "           0       0.500us      +2.000us      +2.500us     " HTOD "  \n"
        "           0       0.500us     +12.500us     +13.000us                          relu_kernel  \n"
        "           0       0.500us     +13.500us     +14.000us                      Memset (Device)  \n"
        S12 S12 S12 S12 "-----------------------------------  \n";
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
    ck_assert_ptr_nonnull(strstr(out, "\nSelf CPU time total: 9.600us\nSelf CUDA time total: 9.000us\n"));
    free(out);
    free(err);
}
END_TEST

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
    ck_assert_int_eq(opp_aggregate(m, &o, &a), 0);
    ck_assert_int_eq(a.gpu, 1);
    ck_assert_int_eq(a.cuda_calls, 1);
    char *out;
    CAPTURE(out, opp_out_table(f, &a, &oo));
#define SEP_Z "--------------------  " S12 S12 S12 S12 S12 S12 S12 S12 "-------------  " S12 "\n"
#define ZERO_CUDA "       0.000us           NaN       0.000us        0.000us"
    ck_assert_str_eq(out,
                     SEP_Z
                     "                Name    Self CPU %      Self CPU   CPU total %     CPU total"
                     "  CPU time avg     Self CUDA   Self CUDA %    CUDA total  CUDA time avg"
                     "    # of Calls  \n"
                     SEP_Z
                     "          cudaMemcpy        52.08%       5.000us        52.08%       5.000us"
                     "       5.000us" ZERO_CUDA "             1  \n"
                     "      cublasSgemm_v2        20.83%       2.000us        83.33%       8.000us"
                     "       8.000us" ZERO_CUDA "             1  \n"
                     "    cudaLaunchKernel        17.71%       1.700us        17.71%       1.700us"
                     "       0.567us" ZERO_CUDA "             3  \n"
                     SEP_Z
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
    ck_assert_ptr_nonnull(strstr(out, "\"cpu_time\": 5.000, \"flops\": 0, \"device_type\": \"CPU\", "
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
    ck_assert_int_eq(opp_aggregate(m, &o, &a), 0);
    ck_assert_int_eq(a.gpu, 0);
    ck_assert_int_eq(a.cuda_calls, 0);
    CAPTURE(out, opp_out_table(f, &a, &oo));
#define SEP_C "------------------  " S12 S12 S12 S12 S12 S12 "\n"
    ck_assert_str_eq(out,
                     SEP_C
                     "              Name    Self CPU %      Self CPU   CPU total %     CPU total"
                     "  CPU time avg    # of Calls  \n"
                     SEP_C
                     "    cublasSgemm_v2       100.00%       2.000us       400.00%       8.000us"
                     "       8.000us             1  \n"
                     SEP_C
                     "Self CPU time total: 2.000us\n");
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
    ck_assert_int_eq(opp_gpu_stats(m, &o, &st), 0);
    ck_assert_uint_eq(st.ndevs, MANY);
    for (uint32_t i = 0; i < MANY; i++) {
        ck_assert_uint_eq(st.devs[i].device, i);
        ck_assert_uint_eq(st.devs[i].kernels, 1);
        ck_assert_int_eq(st.devs[i].peak_memory, (int64_t)i + 1);
    }
    opp_gpu_stats_free(&st);
    opp_model_free(m);
    free(path);
}
END_TEST

/* The GPU view of 18,003 kernels on 12,002 devices (a stream or two each), loaded
 * and streamed: each stream's Busy % is of its own device's span (4 ns
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
    const char *how[] = {"--no-stream", "--stream"};
    for (int h = 0; h < 2; h++) {
        char *out, *err;
        char *a[] = {"report", path, "--gpu", (char *)how[h], NULL};
        ck_assert_int_eq(run_report(a, &out, &err), 0);
        ck_assert_msg(strstr(out, "Kernel time total: 36.006us (18003 launches of 1 kernels)"),
                      "%s", how[h]);
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
                      "%s", how[h]);
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
    ck_assert_str_eq(opp_model_str(m, g->ops[3].name), "Memcpy <unknown> (Unrecognized -> Unrecognized)");
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
    ck_assert_int_eq(opp_aggregate(m, &ao, &a), 0);
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
    ck_assert_int_eq(opp_kernel_stats(m, &o, &k, &nk), 0);
    ck_assert_uint_eq(nk, 2);
    ck_assert(k[0].occupancy == -1 && k[1].occupancy == -1);
    free(k);
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
    tcase_add_test(tc, table);
    tcase_add_test(tc, table_without_cuda_memory);
    tcase_add_test(tc, csv);
    tcase_add_test(tc, json);
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
