/* The GPU suites' trace (test_gpu.c, test_gpu_outputs.c,
 * test_gpu_view.c, test_gpu_traces.c): CUDA API events and GPU records
 * (common/gpu.h) written with the builder, loaded before each test
 * (setup), gone after (teardown). */
#ifndef OPP_TEST_GPU_TRACE_H
#define OPP_TEST_GPU_TRACE_H

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model.h"
#include "testutil.h"
#include "tool/cmds.h"
#include "tracebuild.h"
#include "oracle/loaded.h"

#define NN ('N' | 'N' << 8)

/* The trace: process 0, pid 300. Thread 300:
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
#define K_HALF                                                                                     \
    .grid = {80, 1, 1}, .block = {256, 1, 1}, .regs = 64, .static_smem = 16384,                    \
    .dynamic_smem = 32768                                           /* 50%: registers, smem */
#define K_REGS .grid = {80, 1, 1}, .block = {256, 1, 1}, .regs = 37 /* 75%: 37 regs round up */
#define K_FULL .grid = {80, 1, 1}, .block = {1024, 1, 1}            /* 100% */
/* An H100's limits. */
#define GPU_LIMITS                                                                                 \
    .cc_major = 9, .sms = 132, .threads_per_sm = 2048, .regs_per_sm = 65536,                       \
    .smem_per_sm = 233472, .blocks_per_sm = 32, .warps_per_sm = 64, .threads_per_block = 1024,     \
    .global_mem = 80ull << 30

static inline void put_cpu(struct tb *b)
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

static inline void put_gpu(struct tb *b)
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

static inline void write_trace(const char *path, int with_gpu)
{
    struct tb b;
    tb_open(&b, path);
    put_cpu(&b);
    if (with_gpu)
        put_gpu(&b);
    tb_process_end(&b, 0, OPP_END_EXITED, 40000);
    tb_end(&b);
}

static inline struct opp_model *load(const char *path)
{
    char err[512];
    struct opp_model *m = tu_model_load(path, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    return m;
}

static inline void setup(void)
{
    dir = tu_tmpdir();
    ck_assert_ptr_nonnull(dir);
    trace = tu_path(dir, "gpu.opprof");
    write_trace(trace, 1);
    model = load(trace);
}

static inline void teardown(void)
{
    opp_model_free(model);
    model = NULL;
    tu_rmdir(dir);
    free(trace);
    free(dir);
}

/* The event of thread index ti named name, the k-th in tree order. */
static inline uint32_t find_event(const struct opp_model *m, size_t ti, const char *name, int k)
{
    const struct opp_thread *t = &m->threads[ti];
    for (uint32_t i = 0; i < t->nevents; i++)
        if (!strcmp(opp_model_str(m, t->events[i].name), name) && k-- == 0)
            return i;
    ck_abort_msg("no event %s", name);
    return 0;
}

/* The trace's devices, kernel and copy as the report names them; a
 * 12-column separator of the table. */
#define CPU OPP_DEVICE_CPU
#define CUDA OPP_DEVICE_CUDA
#define VECADD "vecAdd(float*, float*, float*, int)"
#define HTOD "Memcpy HtoD (Pageable -> Device)"
#define S12 "------------  "

/* Run cmd_report with stdout and stderr captured. */
static inline int run_report(char **argv, char **out, char **err)
{
    int rc = tu_call(cmd_report, argv, dir, out, err);
    ck_assert_int_ne(rc, -1000);
    return rc;
}

#endif
