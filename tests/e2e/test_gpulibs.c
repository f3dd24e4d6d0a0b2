/* End to end on the GPU tensor libraries (cuBLAS, cuBLASLt, cuDNN, NCCL,
 * cuFFT): programs from tests/gpulibs/ linked against the toolkit's real
 * libraries run under the real preload. No GPU here: the libraries fail
 * (statuses below are what they really return without one), and every call
 * must still be in the trace with its arguments, shapes and status. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/aggregate.h"
#include "analysis/model.h"
#include "ops.h"
#include "oracle/loaded.h"
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void)
{
    tu_rmdir(dir);
    free(dir);
}

/* One recorded call: its function and argument values. */
struct call {
    const struct opp_func *fn;
    const uint64_t *a;
    uint32_t n;
};

/* The i-th call (in thread order) of entry point name; fails the test when
 * there is none. */
static struct call nth(const struct opp_model *m, const char *name, int i)
{
    for (size_t t = 0; t < m->nthreads; t++) {
        const struct opp_thread *th = &m->threads[t];
        for (size_t e = 0; e < th->nevents; e++) {
            const struct opp_func *f = opp_event_func(m, th, &th->events[e]);
            if (strcmp(opp_model_str(m, f->name), name) || i-- > 0)
                continue;
            return (struct call){f, opp_event_args(th, &th->events[e]), th->events[e].nargs};
        }
    }
    ck_abort_msg("no call %s", name);
    return (struct call){0};
}

static const char *shapes(struct call c)
{
    static char buf[512];
    struct opp_shapes s;
    opp_op_shapes(c.fn->kind, c.a, c.n, &s);
    ck_assert_int_eq(opp_shapes_format(&s, buf, sizeof buf), 0);
    return buf;
}

static uint64_t flops(struct call c)
{
    return opp_op_flops(c.fn->kind, c.fn->dtype, NULL, c.a, c.n);
}
static int64_t status(struct call c) { return opp_op_status(c.fn->kind, c.a, c.n); }
static uint32_t dtype(struct call c) { return opp_op_dtype(c.fn->kind, c.fn->dtype, c.a, c.n); }
/* The kind's own argument i (past the status). */
static uint64_t arg(struct call c, uint32_t i)
{
    const uint64_t *a = c.a;
    uint32_t n = opp_op_args(c.fn->kind, &a, c.n);
    ck_assert_uint_lt(i, n);
    return a[i];
}

/* Skip without the toolkit's programs; else run prog under `opprof run`
 * and bare, check the output and exit code are the same, load the trace. */
static struct opp_model *run(const char *prog, const char *test)
{
    char rel[256];
    snprintf(rel, sizeof rel, "tests/gpulibs/%s", prog);
    const char *exe = tu_build(rel);
    if (access(exe, X_OK) != 0) {
        fprintf(stderr, "SKIP %s: %s not built (no CUDA toolkit with cuBLAS/cuDNN/NCCL/cuFFT)\n",
                test, rel);
        return NULL;
    }
    char *trace = tu_path(dir, "t.trace"), *out = tu_path(dir, "out"), *plain = tu_path(dir, "plain");
    char *argv[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", (char *)exe, NULL};
    char *bare[] = {(char *)exe, NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, out, NULL)), 0);
    ck_assert_int_eq(tu_code(tu_run(bare, NULL, plain, NULL)), 0);
    char *o1 = tu_slurp(out), *o2 = tu_slurp(plain);
    ck_assert_ptr_nonnull(o1);
    ck_assert_str_eq(o1, o2);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(m->dropped, 0);
    free(o1), free(o2), free(trace), free(out), free(plain);
    return m;
}

#define NOT_INITIALIZED 1 /* CUBLAS_STATUS_NOT_INITIALIZED: every call on a NULL handle */

START_TEST(cublas_calls)
{
    struct opp_model *m = run("cublas_calls", "cublas_calls");
    if (!m)
        return;
    ck_assert_uint_eq(m->events, 23);
    ck_assert_uint_eq(tu_count(m, "cublasSgemm_v2", -1, 0, 0), 3);
    ck_assert_uint_eq(tu_count(m, "cublasCreate_v2", -1, 0, 0), 1);
    ck_assert_int_eq(status(nth(m, "cublasCreate_v2", 0)), NOT_INITIALIZED);
    struct call c = nth(m, "cublasSgemm_v2", 2);
    ck_assert_int_eq(status(c), NOT_INITIALIZED);
    ck_assert_str_eq(shapes(c), "[[64, 48], [48, 32], [64, 32]]");
    ck_assert_uint_eq(flops(c), 2ull * 64 * 32 * 48);
    ck_assert_uint_eq(arg(c, 3), 'N' | 'T' << 8);
    ck_assert_uint_eq(dtype(c), OPP_DT_F32);
    c = nth(m, "cublasDgemm_v2", 0);
    ck_assert_str_eq(shapes(c), "[[10, 30], [30, 20], [10, 20]]");
    ck_assert_uint_eq(arg(c, 3), 'T' | 'N' << 8);
    c = nth(m, "cublasCgemm_v2", 0);
    ck_assert_uint_eq(flops(c), 8ull * 8 * 8 * 8); /* complex */
    ck_assert_uint_eq(arg(c, 3), 'C' | 'N' << 8);
    c = nth(m, "cublasHgemm", 0);
    ck_assert_uint_eq(dtype(c), OPP_DT_F16);
    ck_assert_uint_eq(flops(c), 2ull * 16 * 16 * 16);
    c = nth(m, "cublasSgemm_v2_64", 0);
    ck_assert_str_eq(shapes(c), "[[5000000000, 3], [3, 2], [5000000000, 2]]");
    ck_assert_uint_eq(flops(c), 2ull * 5000000000ull * 2 * 3);
    c = nth(m, "cublasGemmEx", 0);
    ck_assert_str_eq(shapes(c), "[[128, 256], [256, 64], [128, 64]]");
    ck_assert_uint_eq(arg(c, 5), OPP_DT_F16);  /* A/B */
    ck_assert_uint_eq(arg(c, 6), OPP_DT_F32);  /* C */
    ck_assert_uint_eq(arg(c, 7), OPP_DT_TF32); /* compute */
    ck_assert_uint_eq(dtype(c), OPP_DT_F16);
    c = nth(m, "cublasSgemmBatched", 0);
    ck_assert_str_eq(shapes(c), "[[7, 4, 6], [7, 6, 5], [7, 4, 5]]");
    ck_assert_uint_eq(flops(c), 2ull * 4 * 5 * 6 * 7);
    c = nth(m, "cublasSgemmStridedBatched", 0);
    ck_assert_uint_eq(arg(c, 4), 9);
    ck_assert_uint_eq(flops(c), 2ull * 4 * 5 * 6 * 9);
    c = nth(m, "cublasGemmStridedBatchedEx", 0);
    ck_assert_str_eq(shapes(c), "[[3, 32, 8], [3, 8, 16], [3, 32, 16]]");
    ck_assert_uint_eq(arg(c, 3), 'T' | 'T' << 8);
    ck_assert_uint_eq(arg(c, 5), OPP_DT_BF16);
    ck_assert_uint_eq(arg(c, 7), OPP_DT_F32);
    ck_assert_uint_eq(flops(c), 2ull * 32 * 16 * 8 * 3);
    c = nth(m, "cublasGemmBatchedEx", 0);
    ck_assert_uint_eq(arg(c, 5), OPP_DT_I8);
    ck_assert_uint_eq(arg(c, 6), OPP_DT_I32);
    ck_assert_uint_eq(arg(c, 7), OPP_DT_I32);
    ck_assert_uint_eq(flops(c), 2ull * 2 * 3 * 4 * 5);
    c = nth(m, "cublasSgemv_v2", 0);
    ck_assert_str_eq(shapes(c), "[[48, 64], [64], [48]]");
    ck_assert_uint_eq(flops(c), 2ull * 64 * 48);
    ck_assert_str_eq(shapes(nth(m, "cublasStrsm_v2", 0)), "[[12, 12], [12, 7]]");
    ck_assert_str_eq(shapes(nth(m, "cublasSsyrk_v2", 0)), "[[9, 5], [9, 9]]");
    ck_assert_str_eq(shapes(nth(m, "cublasSgeam", 0)), "[[6, 3], [6, 3], [6, 3]]");
    c = nth(m, "cublasSdot_v2", 0);
    ck_assert_str_eq(shapes(c), "[[1000], [1000]]");
    ck_assert_uint_eq(flops(c), 2000);
    ck_assert_uint_eq(flops(nth(m, "cublasSaxpy_v2", 0)), 200);
    ck_assert_uint_eq(flops(nth(m, "cublasSscal_v2", 0)), 100);
    ck_assert_int_eq(status(nth(m, "cublasSetStream_v2", 0)), NOT_INITIALIZED);
    ck_assert_int_eq(status(nth(m, "cublasSetWorkspace_v2", 0)), NOT_INITIALIZED);
    ck_assert_int_eq(status(nth(m, "cublasDestroy_v2", 0)), NOT_INITIALIZED);
    opp_model_free(m);
}
END_TEST

START_TEST(cublaslt_calls)
{
    struct opp_model *m = run("cublaslt_calls", "cublaslt_calls");
    if (!m)
        return;
    ck_assert_uint_eq(m->events, 14);
    ck_assert_int_eq(status(nth(m, "cublasLtCreate", 0)), 1);     /* NOT_INITIALIZED */
    ck_assert_int_eq(status(nth(m, "cublasLtMatrixLayoutCreate", 2)), 0); /* host objects */
    ck_assert_int_eq(status(nth(m, "cublasLtDestroy", 0)), 7);    /* INVALID_VALUE */
    ck_assert_uint_eq(tu_count(m, "cublasLtMatmul", -1, 0, 0), 2);
    struct call c = nth(m, "cublasLtMatmul", 1);
    ck_assert_int_eq(status(c), 1);
    /* op(A) = A^T of a 96 x 128 A: M 128, N 80, K 96, batch 6 from D's layout */
    ck_assert_str_eq(shapes(c), "[[6, 128, 96], [6, 96, 80], [6, 128, 80]]");
    ck_assert_uint_eq(arg(c, 3), 'T' | 'N' << 8);
    ck_assert_uint_eq(arg(c, 5), OPP_DT_BF16);
    ck_assert_uint_eq(arg(c, 6), OPP_DT_F32);
    ck_assert_uint_eq(arg(c, 7), OPP_DT_F32);
    ck_assert_uint_eq(flops(c), 2ull * 128 * 80 * 96 * 6);
    opp_model_free(m);
}
END_TEST

#define CUDNN_BAD_PARAM 2000 /* CUDNN_STATUS_BAD_PARAM: operators on a NULL handle */

START_TEST(cudnn_calls)
{
    struct opp_model *m = run("cudnn_calls", "cudnn_calls");
    if (!m)
        return;
    /* only the table's calls: descriptor set-up is not recorded */
    ck_assert_uint_eq(m->events, 10);
    ck_assert_int_eq(status(nth(m, "cudnnCreate", 0)), 1001); /* NOT_INITIALIZED */
    ck_assert_uint_eq(tu_count(m, "cudnn::convolution", -1, 0, 0), 2); /* events named lib::sub */
    struct call c = nth(m, "cudnnConvolutionForward", 1);
    ck_assert_int_eq(status(c), CUDNN_BAD_PARAM);
    ck_assert_uint_eq(arg(c, 0), OPP_SUB_CONV);
    ck_assert_uint_eq(dtype(c), OPP_DT_F32);
    ck_assert_str_eq(shapes(c), "[[8, 16, 32, 32], [32, 8, 3, 3], [8, 32, 32, 32]]");
    /* 2*N*K*C*R*S*P*Q/groups with 2 groups */
    ck_assert_uint_eq(flops(c), 2ull * 8 * 32 * 16 * 3 * 3 * 32 * 32 / 2);
    c = nth(m, "cudnnConvolutionBackwardData", 0);
    ck_assert_uint_eq(arg(c, 0), OPP_SUB_CONV_BWD_DATA);
    ck_assert_str_eq(shapes(c), "[[8, 16, 32, 32], [32, 8, 3, 3], [8, 32, 32, 32]]");
    ck_assert_uint_eq(flops(c), 2ull * 8 * 32 * 16 * 3 * 3 * 32 * 32 / 2);
    c = nth(m, "cudnnConvolutionBackwardFilter", 0);
    ck_assert_uint_eq(arg(c, 0), OPP_SUB_CONV_BWD_FILTER);
    ck_assert_uint_eq(flops(c), 2ull * 8 * 32 * 16 * 3 * 3 * 32 * 32 / 2);
    c = nth(m, "cudnnBatchNormalizationForwardTraining", 0);
    ck_assert_int_eq(status(c), CUDNN_BAD_PARAM);
    ck_assert_str_eq(shapes(c), "[[8, 16, 32, 32], [8, 16, 32, 32], [1, 16, 1, 1]]");
    ck_assert_str_eq(shapes(nth(m, "cudnnSoftmaxForward", 0)), "[[8, 32, 32, 32], [8, 32, 32, 32]]");
    ck_assert_uint_eq(arg(nth(m, "cudnnPoolingForward", 0), 0), OPP_SUB_POOLING);
    ck_assert_uint_eq(arg(nth(m, "cudnnActivationForward", 0), 0), OPP_SUB_ELTWISE);
    ck_assert_int_eq(status(nth(m, "cudnnDestroy", 0)), 0);
    opp_model_free(m);
}
END_TEST

/* The backend API: each execution finds its plan's operation graph through
 * engine config -> engine -> graph (those destroyed before execution). */
START_TEST(cudnn_graph_calls)
{
    struct opp_model *m = run("cudnn_graph_calls", "cudnn_graph_calls");
    if (!m)
        return;
    /* create 36, set 119, finalize 36, destroy 21, execute 5, cudnnCreate */
    ck_assert_uint_eq(m->events, 218);
    ck_assert_uint_eq(tu_count(m, "cudnnBackendSetAttribute", -1, 0, 0), 119);
    ck_assert_uint_eq(tu_count(m, "cudnnBackendFinalize", -1, 0, 0), 36);
    ck_assert_uint_eq(tu_count(m, "cudnn::convolution", -1, 0, 0), 1);
    ck_assert_uint_eq(tu_count(m, "cudnn::matmul", -1, 0, 0), 1);
    ck_assert_uint_eq(tu_count(m, "cudnn::graph", -1, 0, 0), 1);
    ck_assert_uint_eq(tu_count(m, "cudnn::eltwise", -1, 0, 0), 1);
    ck_assert_uint_eq(tu_count(m, "cudnnBackendExecute", -1, 0, 0), 1); /* the unknown plan */
    ck_assert_int_eq(status(nth(m, "cudnnBackendFinalize", 7)), 3000); /* engine config: NOT_SUPPORTED */
    ck_assert_int_eq(status(nth(m, "cudnnBackendFinalize", 8)), 2004); /* plan: not finalized */
    ck_assert_int_eq(status(nth(m, "cudnnBackendDestroyDescriptor", 20)), 2002); /* NULL */
    /* a single convolution: N=2 C=3 H=W=8, K=4 R=S=3 -> [2,4,6,6] */
    struct call c = nth(m, "cudnnBackendExecute", 0);
    ck_assert_int_eq(status(c), CUDNN_BAD_PARAM);
    ck_assert_uint_eq(arg(c, 0), OPP_SUB_CONV);
    ck_assert_uint_eq(dtype(c), OPP_DT_F32);
    ck_assert_str_eq(shapes(c), "[[2, 3, 8, 8], [4, 3, 3, 3], [2, 4, 6, 6]]");
    ck_assert_uint_eq(flops(c), 2ull * 2 * 4 * 3 * 3 * 3 * 6 * 6);
    ck_assert_uint_eq(arg(c, 18), OPP_SUB_CONV); /* the main operation */
    ck_assert_uint_eq(arg(c, 19), 1);            /* operations in the graph */
    c = nth(m, "cudnnBackendExecute", 1);
    ck_assert_uint_eq(arg(c, 0), OPP_SUB_MATMUL);
    ck_assert_str_eq(shapes(c), "[[2, 16, 32], [2, 32, 8], [2, 16, 8]]");
    ck_assert_uint_eq(flops(c), 2ull * 2 * 16 * 8 * 32);
    /* ReLU then convolution: a graph whose FLOPs are the convolution's */
    c = nth(m, "cudnnBackendExecute", 2);
    ck_assert_uint_eq(arg(c, 0), OPP_SUB_GRAPH);
    ck_assert_str_eq(shapes(c), "[[2, 3, 8, 8], [4, 3, 3, 3], [2, 4, 6, 6]]");
    ck_assert_uint_eq(flops(c), 2ull * 2 * 4 * 3 * 3 * 3 * 6 * 6);
    ck_assert_uint_eq(arg(c, 18), OPP_SUB_CONV);
    ck_assert_uint_eq(arg(c, 19), 2);
    /* ReLU alone: x, y */
    c = nth(m, "cudnnBackendExecute", 3);
    ck_assert_uint_eq(arg(c, 0), OPP_SUB_ELTWISE);
    ck_assert_str_eq(shapes(c), "[[2, 4, 6, 6], [2, 4, 6, 6]]");
    ck_assert_uint_eq(flops(c), 0);
    /* a plan never described: the status, sub none, no tensors */
    c = nth(m, "cudnnBackendExecute", 4);
    ck_assert_int_eq(status(c), CUDNN_BAD_PARAM);
    ck_assert_uint_eq(c.n, 5); /* and the external correlation id, 0: no CUPTI */
    ck_assert_uint_eq(c.a[4], 0);
    ck_assert_uint_eq(arg(c, 0), OPP_SUB_NONE);
    ck_assert_uint_eq(arg(c, 2), 0);
    opp_model_free(m);
}
END_TEST

/* RNN: x, y as [steps, batch, vector], h; attention: q, k, v, o as
 * [batch, beam, time, vector]. */
START_TEST(cudnn_seq_calls)
{
    struct opp_model *m = run("cudnn_seq_calls", "cudnn_seq_calls");
    if (!m)
        return;
    ck_assert_uint_eq(m->events, 4);
    struct call c = nth(m, "cudnnRNNForward", 0);
    ck_assert_int_eq(status(c), CUDNN_BAD_PARAM);
    ck_assert_uint_eq(arg(c, 0), OPP_SUB_RNN);
    ck_assert_uint_eq(dtype(c), OPP_DT_F32);
    ck_assert_str_eq(shapes(c), "[[10, 4, 16], [10, 4, 32], [2, 4, 32]]");
    ck_assert_uint_eq(tu_count(m, "cudnn::rnn", -1, 0, 0), 1);
    ck_assert_uint_eq(tu_count(m, "cudnn::attention", -1, 0, 0), 2);
    c = nth(m, "cudnnMultiHeadAttnForward", 0);
    ck_assert_int_eq(status(c), CUDNN_BAD_PARAM);
    ck_assert_uint_eq(arg(c, 0), OPP_SUB_ATTENTION);
    ck_assert_str_eq(shapes(c), "[[2, 1, 5, 64], [2, 1, 7, 64], [2, 1, 7, 64], [2, 1, 5, 64]]");
    ck_assert_uint_eq(flops(c), 0);
    c = nth(m, "cudnnMultiHeadAttnForward", 1); /* NULL descriptors: rank 0 */
    ck_assert_str_eq(shapes(c), "[[], [], [], []]");
    ck_assert_uint_eq(dtype(c), OPP_DT_NONE);
    opp_model_free(m);
}
END_TEST

START_TEST(nccl_calls)
{
    struct opp_model *m = run("nccl_calls", "nccl_calls");
    if (!m)
        return;
    /* 16 calls, and inside 15 of them (all but ncclGetUniqueId) NCCL's own
     * NVTX range, domain "NCCL", recorded through our NVTX injection */
    ck_assert_uint_eq(m->events, 31);
    ck_assert_uint_eq(tu_count(m, "NCCL:ncclAllReduce", -1, 0, 0), 2);
    unsigned ranges = 0;
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        for (size_t k = 0; k < t->nevents; k++) {
            const char *name = m->strs[t->events[k].name];
            if (strncmp(name, "NCCL:", 5))
                continue;
            ranges++;
            ck_assert_uint_ne(t->events[k].parent, OPP_NO_PARENT);
            ck_assert_str_eq(m->strs[t->events[t->events[k].parent].name], name + 5);
        }
    }
    ck_assert_uint_eq(ranges, 15);
    struct call c = nth(m, "ncclCommInitRank", 0);
    ck_assert_int_eq(status(c), 1); /* ncclUnhandledCudaError */
    ck_assert_uint_eq(arg(c, 0), OPP_COLL_NONE);
    ck_assert_uint_eq(arg(c, 4), 2); /* rank it was given */
    ck_assert_uint_eq(arg(c, 5), 4); /* size */
    ck_assert_str_eq(shapes(c), "[]");
    ck_assert_int_eq(status(nth(m, "ncclCommUserRank", 0)), 4); /* ncclInvalidArgument */
    ck_assert_uint_eq(tu_count(m, "ncclAllReduce", -1, 0, 0), 2);
    c = nth(m, "ncclAllReduce", 1);
    ck_assert_int_eq(status(c), 4);
    ck_assert_uint_eq(arg(c, 0), OPP_COLL_ALL_REDUCE);
    ck_assert_uint_eq(arg(c, 1), 1 << 20);
    ck_assert_uint_eq(dtype(c), OPP_DT_F32);
    ck_assert_uint_eq(arg(c, 3), OPP_RED_SUM);
    ck_assert_uint_eq(arg(c, 4), ~0ull); /* NULL communicator: rank unknown */
    ck_assert_uint_eq(arg(c, 5), 0);     /* size unknown */
    ck_assert_uint_eq(opp_op_bytes(c.fn->kind, c.a, c.n), 4u << 20);
    c = nth(m, "ncclBroadcast", 0);
    ck_assert_uint_eq(arg(c, 6), 1); /* root */
    ck_assert_uint_eq(opp_op_bytes(c.fn->kind, c.a, c.n), 8000);
    c = nth(m, "ncclReduce", 0);
    ck_assert_uint_eq(arg(c, 3), OPP_RED_MAX_);
    ck_assert_uint_eq(arg(c, 6), 3);
    ck_assert_uint_eq(opp_op_bytes(c.fn->kind, c.a, c.n), 6000); /* bf16 */
    c = nth(m, "ncclAllGather", 0);
    ck_assert_uint_eq(arg(c, 0), OPP_COLL_ALL_GATHER);
    ck_assert_uint_eq(opp_op_bytes(c.fn->kind, c.a, c.n), 4096 * 4);
    c = nth(m, "ncclReduceScatter", 0);
    ck_assert_uint_eq(arg(c, 3), OPP_RED_AVG);
    ck_assert_uint_eq(opp_op_bytes(c.fn->kind, c.a, c.n), 1024);
    c = nth(m, "ncclAlltoAll", 0);
    ck_assert_uint_eq(arg(c, 0), OPP_COLL_ALL_TO_ALL);
    ck_assert_uint_eq(opp_op_bytes(c.fn->kind, c.a, c.n), 256);
    c = nth(m, "ncclSend", 0);
    ck_assert_uint_eq(arg(c, 0), OPP_COLL_SEND);
    ck_assert_uint_eq(arg(c, 6), 1); /* peer */
    c = nth(m, "ncclRecv", 0);
    ck_assert_uint_eq(arg(c, 6), 3);
    ck_assert_uint_eq(opp_op_bytes(c.fn->kind, c.a, c.n), 1600);
    ck_assert_uint_eq(arg(nth(m, "ncclGroupStart", 0), 0), OPP_COLL_GROUP_START);
    ck_assert_int_eq(status(nth(m, "ncclGroupStart", 0)), 0);
    ck_assert_int_eq(status(nth(m, "ncclGroupEnd", 0)), 4);
    ck_assert_str_eq(shapes(nth(m, "ncclGroupEnd", 0)), "[]");
    /* the report's collective rows: algorithm bytes, no bandwidth without GPU time */
    struct opp_agg_opts o = {0};
    struct opp_agg a;
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    int seen = 0;
    for (size_t i = 0; i < a.nrows; i++) {
        const struct opp_row *r = &a.rows[i];
        if (!strcmp(r->key, "ncclAllReduce")) {
            seen++;
            ck_assert(r->coll);
            ck_assert_uint_eq(r->coll_bytes, 2 * (4u << 20)); /* size unknown: per rank */
            ck_assert(opp_row_busbw(r) == 0.0);
        }
        if (!strcmp(r->key, "ncclGroupStart") || !strcmp(r->key, "ncclCommInitRank"))
            ck_assert(!r->coll);
    }
    ck_assert_int_eq(seen, 1);
    opp_agg_free(&a);
    opp_model_free(m);
}
END_TEST

START_TEST(cufft_calls)
{
    struct opp_model *m = run("cufft_calls", "cufft_calls");
    if (!m)
        return;
    ck_assert_uint_eq(m->events, 9);
    struct call c = nth(m, "cufftPlan1d", 0);
    ck_assert_int_eq(status(c), 5); /* CUFFT_INTERNAL_ERROR */
    ck_assert_uint_eq(arg(c, 0), OPP_SUB_FFT);
    ck_assert_uint_eq(dtype(c), OPP_DT_C64);
    ck_assert_str_eq(shapes(c), "[[8, 1024]]");
    ck_assert_str_eq(shapes(nth(m, "cufftPlan2d", 0)), "[[1, 256, 128]]");
    ck_assert_uint_eq(dtype(nth(m, "cufftPlan2d", 0)), OPP_DT_F32);
    ck_assert_str_eq(shapes(nth(m, "cufftPlan3d", 0)), "[[1, 16, 32, 64]]");
    ck_assert_str_eq(shapes(nth(m, "cufftPlanMany", 0)), "[[5, 64, 32]]");
    /* no plan was made on handle 0 yet: an exec of unknown sizes */
    c = nth(m, "cufftExecC2C", 0);
    ck_assert_int_eq(status(c), 1); /* CUFFT_INVALID_PLAN */
    ck_assert_str_eq(shapes(c), "[]");
    /* MakePlan2d on handle 0 (it fails: cufftCreate could not make one)... */
    c = nth(m, "cufftMakePlan2d", 0);
    ck_assert_int_eq(status(c), 1);
    ck_assert_str_eq(shapes(c), "[[1, 100, 200]]");
    /* ...and the exec on handle 0 shows the sizes it was told */
    c = nth(m, "cufftExecD2Z", 0);
    ck_assert_str_eq(shapes(c), "[[1, 100, 200]]");
    ck_assert_uint_eq(dtype(c), OPP_DT_F64);
    opp_model_free(m);
}
END_TEST

/* A plugin host that unloads a plugin linking cuDNN, and libcudnn.so.9
 * with it, and loads it again elsewhere: each call's tensors are still
 * read back, by the getters of the cuDNN loaded then. */
START_TEST(cudnn_unloaded_and_loaded_again)
{
    if (access(tu_build("tests/gpulibs/libcudnn_plugin.so"), R_OK) != 0) {
        fprintf(stderr, "SKIP cudnn_unloaded_and_loaded_again: tests/gpulibs/libcudnn_plugin.so "
                        "not built (no CUDA toolkit with cuDNN)\n");
        return;
    }
    char *trace = tu_path(dir, "t.trace"), *o, *e, want[4400];
    ck_assert_int_eq(
        tu_unload_run(dir, trace, "tests/gpulibs/libcudnn_plugin.so", "/libcudnn.so.9", &o, &e), 0);
    /* CUDNN_STATUS_BAD_PARAM: no handle */
    ck_assert_str_eq(o, "round 0: 2000\nround 1: 2000\nround 2: 2000\n");
    snprintf(want, sizeof want, "opprof: trace written to %s (3 events)\n", trace);
    ck_assert_str_eq(e, want);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(m->events, 3);
    ck_assert_uint_eq(tu_count(m, "cudnn::softmax", -1, 0, 0), 3);
    for (int i = 0; i < 3; i++) {
        struct call c = nth(m, "cudnnSoftmaxForward", i);
        ck_assert_int_eq(status(c), 2000);
        ck_assert_str_eq(shapes(c), "[[2, 3, 4, 5], [2, 3, 4, 5]]");
        ck_assert_uint_eq(dtype(c), OPP_DT_F32);
    }
    opp_model_free(m);
    free(o), free(e), free(trace);
}
END_TEST

Suite *suite_gpulibs(void)
{
    Suite *s = suite_create("gpulibs");
    TCase *tc = tcase_create("libraries");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, cublas_calls);
    tcase_add_test(tc, cublaslt_calls);
    tcase_add_test(tc, cudnn_calls);
    tcase_add_test(tc, cudnn_graph_calls);
    tcase_add_test(tc, cudnn_seq_calls);
    tcase_add_test(tc, nccl_calls);
    tcase_add_test(tc, cufft_calls);
    tcase_add_test(tc, cudnn_unloaded_and_loaded_again);
    suite_add_tcase(s, tc);
    return s;
}
