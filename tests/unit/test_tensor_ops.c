/* TENSORS operators (common/ops.c) as oneDNN lays out their tensors:
 * exact shapes and FLOPs, the status first as dnnl_primitive_execute
 * records it. */
#include <check.h>
#include <string.h>

#include "ops.h"

#define K_SN (OPP_OP_TENSORS | OPP_OPK_STATUS | OPP_OPK_SUBNAME)

static uint64_t flops(const uint64_t *a, uint32_t n)
{
    return opp_op_flops(K_SN, OPP_DT_F32, NULL, a, n);
}

static void shapes_are(const uint64_t *a, uint32_t n, const char *want)
{
    struct opp_shapes s;
    char buf[256];
    opp_op_shapes(K_SN, a, n, &s);
    ck_assert_int_eq(opp_shapes_format(&s, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, want);
}

START_TEST(convolution)
{
    /* status 0; N=2 C=3 10x10, K=4 3x3, stride 2 pad 1 -> 5x5 */
    const uint64_t a[] = {0, OPP_SUB_CONV, OPP_DT_F32, 3, 4, 2, 3, 10, 10,
                          4, 4, 3, 3, 3, 4, 2, 4, 5, 5};
    uint32_t n = sizeof a / sizeof a[0];
    shapes_are(a, n, "[[2, 3, 10, 10], [4, 3, 3, 3], [2, 4, 5, 5]]");
    ck_assert_uint_eq(flops(a, n), 2ull * 2 * 4 * 5 * 5 * 3 * 3 * 3);
    ck_assert_int_eq(opp_op_status(K_SN, a, n), 0);
    ck_assert_uint_eq(opp_op_dtype(K_SN, OPP_DT_NONE, a, n), OPP_DT_F32);
}
END_TEST

START_TEST(grouped_convolution)
{
    /* groups 2, weights [G, K/G, C/G, R, S] = [2, 3, 2, 3, 3]: C=4, K=6 */
    const uint64_t a[] = {0, OPP_SUB_CONV, OPP_DT_F32, 3, 4, 1, 4, 6, 6,
                          5, 2, 3, 2, 3, 3, 4, 1, 6, 4, 4};
    uint32_t n = sizeof a / sizeof a[0];
    shapes_are(a, n, "[[1, 4, 6, 6], [2, 3, 2, 3, 3], [1, 6, 4, 4]]");
    ck_assert_uint_eq(flops(a, n), 2ull * 1 * 6 * 4 * 4 * 2 * 3 * 3);
}
END_TEST

START_TEST(deconvolution)
{
    /* stride 2: src [1,4,5,5] -> dst [1,2,10,10], weights [O=2, I=4, 2, 2]:
       each src element meets O*KH*KW weights (by dst it would be 4x more) */
    const uint64_t a[] = {0, OPP_SUB_DECONV, OPP_DT_F32, 3, 4, 1, 4, 5, 5,
                          4, 2, 4, 2, 2, 4, 1, 2, 10, 10};
    ck_assert_uint_eq(flops(a, sizeof a / sizeof a[0]), 2ull * 1 * 5 * 5 * 4 * 2 * 2 * 2);
}
END_TEST

START_TEST(inner_product)
{
    const uint64_t ip[] = {0, OPP_SUB_INNER_PRODUCT, OPP_DT_F32, 3, 2, 3, 7, 2, 5, 7, 2, 3, 5};
    shapes_are(ip, sizeof ip / sizeof ip[0], "[[3, 7], [5, 7], [3, 5]]");
    ck_assert_uint_eq(flops(ip, sizeof ip / sizeof ip[0]), 2ull * 3 * 5 * 7);
    /* inner product over a 4-D src: weights [O, C, H, W] */
    const uint64_t ip4[] = {0, OPP_SUB_INNER_PRODUCT, 0, 3, 4, 2, 3, 4, 4,
                            4, 10, 3, 4, 4, 2, 2, 10};
    ck_assert_uint_eq(flops(ip4, sizeof ip4 / sizeof ip4[0]), 2ull * 2 * 10 * 3 * 4 * 4);
}
END_TEST

START_TEST(matmul)
{
    const uint64_t mm[] = {0, OPP_SUB_MATMUL, OPP_DT_F32, 3, 3, 2, 3, 4, 3, 2, 4, 5, 3, 2, 3, 5};
    shapes_are(mm, sizeof mm / sizeof mm[0], "[[2, 3, 4], [2, 4, 5], [2, 3, 5]]");
    ck_assert_uint_eq(flops(mm, sizeof mm / sizeof mm[0]), 2ull * 2 * 3 * 5 * 4);
}
END_TEST

START_TEST(failed_call_status_only)
{
    /* A failed call records its status alone: no shapes, no FLOPs. */
    const uint64_t bad[] = {2};
    shapes_are(bad, 1, "[]");
    ck_assert_uint_eq(flops(bad, 1), 0);
    ck_assert_int_eq(opp_op_status(K_SN, bad, 1), 2);
}
END_TEST

START_TEST(eltwise_no_flops)
{
    /* eltwise and reorder: src, dst; no FLOPs counted */
    const uint64_t relu[] = {0, OPP_SUB_ELTWISE, OPP_DT_F32, 2, 2, 4, 5, 2, 4, 5};
    shapes_are(relu, sizeof relu / sizeof relu[0], "[[4, 5], [4, 5]]");
    ck_assert_uint_eq(flops(relu, sizeof relu / sizeof relu[0]), 0);
}
END_TEST

Suite *suite_tensor_ops(void)
{
    Suite *s = suite_create("tensor_ops");
    TCase *tc = tcase_create("tensor_ops");
    tcase_add_test(tc, convolution);
    tcase_add_test(tc, grouped_convolution);
    tcase_add_test(tc, deconvolution);
    tcase_add_test(tc, inner_product);
    tcase_add_test(tc, matmul);
    tcase_add_test(tc, failed_call_status_only);
    tcase_add_test(tc, eltwise_no_flops);
    suite_add_tcase(s, tc);
    return s;
}
