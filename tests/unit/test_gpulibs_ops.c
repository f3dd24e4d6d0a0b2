/* Operator arithmetic of the GPU library tables (common/ops.c): GEMM with a
 * status first, cuDNN grouped convolutions, cuFFT tensors, NCCL bytes and
 * bandwidth factors, and the report's bandwidth of a collective row. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "analysis/aggregate.h"
#include "ops.h"

#define K(base, fl) (OPP_OP_##base | (fl))
#define S OPP_OPK_STATUS

START_TEST(gemm_status_batched_types)
{
    /* cublasGemmStridedBatchedEx: status, M, N, K, trans, batch, A/B, C, compute */
    const uint64_t a[] = {1, 32, 16, 8, 'T' | 'T' << 8, 3, OPP_DT_BF16, OPP_DT_F32, OPP_DT_F32};
    struct opp_shapes s;
    char buf[128];
    opp_op_shapes(K(GEMM, S), a, 9, &s);
    ck_assert_int_eq(opp_shapes_format(&s, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "[[3, 32, 8], [3, 8, 16], [3, 32, 16]]");
    ck_assert_uint_eq(opp_op_flops(K(GEMM, S), OPP_DT_NONE, NULL, a, 9), 2ull * 32 * 16 * 8 * 3);
    ck_assert_uint_eq(opp_op_dtype(K(GEMM, S), OPP_DT_NONE, a, 9), OPP_DT_BF16);
    ck_assert_int_eq(opp_op_status(K(GEMM, S), a, 9), 1);
    /* complex: cublasZgemm_v2 records no types, the function's dtype holds */
    const uint64_t z[] = {0, 4, 5, 6, 'N' | 'N' << 8};
    ck_assert_uint_eq(opp_op_flops(K(GEMM, S), OPP_DT_C128, NULL, z, 5), 8ull * 4 * 5 * 6);
}
END_TEST

START_TEST(conv_groups_flops)
{
    /* x [8,16,32,32], w [32, 16/2, 3, 3], y [8,32,32,32]: 2*N*K*C*R*S*P*Q/groups */
    const uint64_t a[] = {2000, OPP_SUB_CONV, OPP_DT_F32, 3, 4, 8, 16, 32, 32, 4, 32, 8, 3, 3,
                          4, 8, 32, 32, 32};
    uint32_t n = sizeof a / sizeof a[0];
    ck_assert_uint_eq(opp_op_flops(K(TENSORS, S | OPP_OPK_SUBNAME), 0, NULL, a, n),
                      2ull * 8 * 32 * 16 * 3 * 3 * 32 * 32 / 2);
    ck_assert_uint_eq(opp_op_flops(K(TENSORS, S | OPP_OPK_SUBNAME), 0, NULL, a, n), 37748736ull);
    /* the same tensors as a backward-data and backward-filter call */
    uint64_t b[sizeof a / sizeof a[0]];
    for (uint32_t i = 0; i < n; i++)
        b[i] = a[i];
    b[1] = OPP_SUB_CONV_BWD_FILTER;
    ck_assert_uint_eq(opp_op_flops(K(TENSORS, S), 0, NULL, b, n), 37748736ull);
}
END_TEST

START_TEST(graph_main_op_flops)
{
    /* cudnnBackendExecute of conv + bias + relu: x [2,3,8,8], w [4,3,3,3],
       y [2,4,6,6], then the main operation's sub and the op count */
    const uint64_t a[] = {2000, OPP_SUB_GRAPH, OPP_DT_F32, 3, 4, 2, 3, 8, 8, 4, 4, 3, 3, 3,
                          4, 2, 4, 6, 6, OPP_SUB_CONV, 3};
    uint32_t n = sizeof a / sizeof a[0];
    uint32_t k = K(TENSORS, S | OPP_OPK_SUBNAME);
    ck_assert_uint_eq(opp_op_flops(k, 0, NULL, a, n), 2ull * 2 * 4 * 3 * 3 * 3 * 6 * 6);
    struct opp_shapes s;
    char buf[128];
    opp_op_shapes(k, a, n, &s);
    ck_assert_int_eq(opp_shapes_format(&s, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "[[2, 3, 8, 8], [4, 3, 3, 3], [2, 4, 6, 6]]");
    /* without the trailing sub (or a graph naming itself): no FLOPs */
    ck_assert_uint_eq(opp_op_flops(k, 0, NULL, a, n - 2), 0);
    uint64_t b[sizeof a / sizeof a[0]];
    memcpy(b, a, sizeof a);
    b[n - 2] = OPP_SUB_GRAPH;
    ck_assert_uint_eq(opp_op_flops(k, 0, NULL, b, n), 0);
    /* a matmul graph: 2*|C|*A[last] */
    const uint64_t m[] = {0, OPP_SUB_GRAPH, OPP_DT_F16, 3, 3, 2, 16, 32, 3, 2, 32, 8, 3, 2, 16, 8,
                          OPP_SUB_MATMUL, 2};
    ck_assert_uint_eq(opp_op_flops(k, 0, NULL, m, sizeof m / sizeof m[0]), 2ull * 2 * 16 * 8 * 32);
    /* a rank that overruns the arguments: none */
    const uint64_t bad[] = {0, OPP_SUB_GRAPH, 0, 1, 9, OPP_SUB_CONV};
    ck_assert_uint_eq(opp_op_flops(k, 0, NULL, bad, 6), 0);
}
END_TEST

START_TEST(fft_tensor)
{
    /* cufftExecD2Z of a [1, 100, 200] plan; an unknown plan has no tensor */
    const uint64_t a[] = {1, OPP_SUB_FFT, OPP_DT_F64, 1, 3, 1, 100, 200, 0};
    const uint64_t u[] = {1, OPP_SUB_FFT, OPP_DT_C64, 0, 0, 0, 0, 0, 0};
    struct opp_shapes s;
    char buf[64];
    opp_op_shapes(K(TENSORS, S), a, 9, &s);
    opp_shapes_format(&s, buf, sizeof buf);
    ck_assert_str_eq(buf, "[[1, 100, 200]]");
    ck_assert_uint_eq(opp_op_flops(K(TENSORS, S), 0, NULL, a, 9), 0);
    opp_op_shapes(K(TENSORS, S), u, 9, &s);
    ck_assert_int_eq(s.n, 0);
}
END_TEST

/* status, coll, count, dtype, redop, rank, nranks, peer */
#define COLL(c, count, dt, n) {0, OPP_COLL_##c, count, OPP_DT_##dt, OPP_RED_SUM, 1, n, ~0ull}

START_TEST(coll_bytes_and_factors)
{
    const uint32_t k = K(COLL, S);
    const uint64_t ar[] = COLL(ALL_REDUCE, 1 << 20, F32, 8);
    ck_assert_uint_eq(opp_op_bytes(k, ar, 8), 4u << 20);
    ck_assert_uint_eq(opp_coll_alg_bytes(k, ar, 8), 4u << 20);
    ck_assert(opp_coll_bus_factor(k, ar, 8) == 2.0 * 7 / 8);
    const uint64_t ag[] = COLL(ALL_GATHER, 1000, F16, 4); /* count per rank */
    ck_assert_uint_eq(opp_op_bytes(k, ag, 8), 2000);
    ck_assert_uint_eq(opp_coll_alg_bytes(k, ag, 8), 8000);
    ck_assert(opp_coll_bus_factor(k, ag, 8) == 3.0 / 4);
    const uint64_t rs[] = COLL(REDUCE_SCATTER, 10, F64, 2);
    ck_assert_uint_eq(opp_coll_alg_bytes(k, rs, 8), 160);
    ck_assert(opp_coll_bus_factor(k, rs, 8) == 0.5);
    const uint64_t a2a[] = COLL(ALL_TO_ALL, 256, I8, 4);
    ck_assert_uint_eq(opp_coll_alg_bytes(k, a2a, 8), 1024);
    ck_assert(opp_coll_bus_factor(k, a2a, 8) == 0.75);
    const uint64_t bc[] = COLL(BROADCAST, 1000, F64, 8);
    ck_assert_uint_eq(opp_coll_alg_bytes(k, bc, 8), 8000);
    ck_assert(opp_coll_bus_factor(k, bc, 8) == 1.0);
    const uint64_t sd[] = COLL(SEND, 100, F32, 2);
    ck_assert(opp_coll_bus_factor(k, sd, 8) == 1.0);
    /* size unknown (0): per-rank bytes, factor 1 */
    const uint64_t un[] = COLL(ALL_REDUCE, 100, F32, 0);
    ck_assert_uint_eq(opp_coll_alg_bytes(k, un, 8), 400);
    ck_assert(opp_coll_bus_factor(k, un, 8) == 1.0);
    /* group calls and communicator set-up: no bytes, no shapes */
    const uint64_t gs[] = {0, OPP_COLL_GROUP_START};
    ck_assert_uint_eq(opp_coll_alg_bytes(k, gs, 2), 0);
    const uint64_t init[] = {1, OPP_COLL_NONE, 0, 0, 0, 2, 4, ~0ull};
    struct opp_shapes s;
    opp_op_shapes(k, init, 8, &s);
    ck_assert_int_eq(s.n, 0);
    ck_assert_uint_eq(opp_coll_alg_bytes(k, init, 8), 0);
}
END_TEST

START_TEST(row_bandwidth)
{
    /* two 4 MiB all_reduce calls on 8 ranks in 2 ms of GPU time */
    struct opp_row r = {.coll = 1, .coll_bytes = 8u << 20,
                        .coll_bus_bytes = (double)(8u << 20) * 2 * 7 / 8,
                        .cuda_time_total_ns = 2000000};
    ck_assert(fabs(opp_row_algbw(&r) - 4.194304) < 1e-9);
    ck_assert(fabs(opp_row_busbw(&r) - 4.194304 * 1.75) < 1e-9);
    r.cuda_time_total_ns = 0;
    ck_assert(opp_row_algbw(&r) == 0.0 && opp_row_busbw(&r) == 0.0);
}
END_TEST

Suite *suite_gpulibs_ops(void)
{
    Suite *s = suite_create("gpulibs_ops");
    TCase *tc = tcase_create("arithmetic");
    tcase_add_test(tc, gemm_status_batched_types);
    tcase_add_test(tc, conv_groups_flops);
    tcase_add_test(tc, graph_main_op_flops);
    tcase_add_test(tc, fft_tensor);
    tcase_add_test(tc, coll_bytes_and_factors);
    tcase_add_test(tc, row_bandwidth);
    suite_add_tcase(s, tc);
    return s;
}
