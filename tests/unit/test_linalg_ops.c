/* BLAS and LAPACK operators (common/ops.c) as tables/blas.h and
 * tables/lapack.h record them: TENSORS with a BLAS sub. FLOPs worked out by
 * hand: level 1 and 2 as multiply-adds (2 each, 8 complex), level 3 and
 * LAPACK by LAWN 41's multiplications and additions (complex: 6 and 2). */
#include <check.h>
#include <string.h>

#include "ops.h"

#define K OPP_OP_TENSORS

/* sub, dtype 0 (the function's), the tensors as rank, dims... */
#define CALL(...) ((const uint64_t[]){__VA_ARGS__})
#define N(...) (sizeof((const uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t))
#define FLOPS(dt, ...) opp_op_flops(K, OPP_DT_##dt, NULL, CALL(__VA_ARGS__), N(__VA_ARGS__))

START_TEST(level1_flops)
{
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_NRM2, 0, 1, 1, 10), 20);
    ck_assert_uint_eq(FLOPS(C128, OPP_SUB_NRM2, 0, 1, 1, 10), 40);
    ck_assert_uint_eq(FLOPS(F32, OPP_SUB_ASUM, 0, 1, 1, 10), 10);
    ck_assert_uint_eq(FLOPS(C64, OPP_SUB_ASUM, 0, 1, 1, 10), 20);
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_ROT, 0, 2, 1, 10, 1, 10), 60);
    ck_assert_uint_eq(FLOPS(C64, OPP_SUB_ROT, 0, 2, 1, 10, 1, 10), 120); /* csrot */
    ck_assert_uint_eq(FLOPS(C128, OPP_SUB_RSCAL, 0, 1, 1, 10), 20);      /* zdscal */
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_NONE, 0, 2, 1, 10, 1, 10), 0);  /* copy, swap */
}
END_TEST

START_TEST(level2_flops)
{
    /* trmv n = 4: 10 multiplies, 6 adds */
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_TRMV, 0, 2, 2, 4, 4, 1, 4), 16);
    ck_assert_uint_eq(FLOPS(C128, OPP_SUB_TRMV, 0, 2, 2, 4, 4, 1, 4), 6 * 10 + 2 * 6);
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_SYMV, 0, 3, 2, 4, 4, 1, 4, 1, 4), 2 * 16);
    ck_assert_uint_eq(FLOPS(C64, OPP_SUB_SYMV, 0, 3, 2, 4, 4, 1, 4, 1, 4), 8 * 16);
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_GER, 0, 3, 1, 3, 1, 4, 2, 3, 4), 2 * 12);
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_SYR, 0, 2, 1, 4, 2, 4, 4), 2 * 10);
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_SYR2, 0, 3, 1, 4, 1, 4, 2, 4, 4), 2 * 20);
    /* banded: no standard count */
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_NONE, 0, 3, 2, 3, 9, 1, 9, 1, 9), 0);
}
END_TEST

START_TEST(level3_flops)
{
    /* b @ b.T, 300 x 300: k n (n + 1) / 2 multiply-adds */
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_SYRK, 0, 2, 2, 300, 300, 2, 300, 300), 27090000);
    ck_assert_uint_eq(FLOPS(C128, OPP_SUB_SYRK, 0, 2, 2, 300, 300, 2, 300, 300), 108360000);
    /* symm on the left: A [4, 4], B and C [4, 5] */
    ck_assert_uint_eq(FLOPS(F32, OPP_SUB_SYMM, 0, 3, 2, 4, 4, 2, 4, 5, 2, 4, 5), 2 * 4 * 5 * 4);
    /* syr2k n = 3, k = 2: 18 multiplies, 21 adds */
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_SYR2K, 0, 3, 2, 3, 2, 2, 3, 2, 2, 3, 3), 39);
    /* trmm/trsm, B [4, 5]: on the left A [4, 4] (50 multiplies, 30 adds),
       on the right A [5, 5] (60, 40) */
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_TRMM, 0, 2, 2, 4, 4, 2, 4, 5), 80);
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_TRMM, 0, 2, 2, 5, 5, 2, 4, 5), 100);
    ck_assert_uint_eq(FLOPS(C64, OPP_SUB_TRMM, 0, 2, 2, 4, 4, 2, 4, 5), 6 * 50 + 2 * 30);
}
END_TEST

START_TEST(lapack_flops_lawn41)
{
    /* getrf 300 x 300: 9000200 multiplies, 8955050 adds */
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_GETRF, 0, 1, 2, 300, 300), 17955250);
    /* 4 x 2 and 2 x 4: 10 multiplies (reciprocals counted), 3 adds */
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_GETRF, 0, 1, 2, 4, 2), 13);
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_GETRF, 0, 1, 2, 2, 4), 13);
    /* gesv: getrf, then getrs on 3 columns (270000 multiplies, 269100 adds) */
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_GESV, 0, 2, 2, 300, 300, 2, 300, 3), 18494350);
    /* complex, 2 columns: 6 (9000200 + 180000) + 2 (8955050 + 179400) */
    ck_assert_uint_eq(FLOPS(C128, OPP_SUB_GESV, 0, 2, 2, 300, 300, 2, 300, 2), 73350100);
    /* potrf 300: 4545100 multiplies, 4499950 adds */
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_POTRF, 0, 1, 2, 300, 300), 9045050);
    /* geqrf 300 x 300: 18136150 and 18045250 */
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_GEQRF, 0, 1, 2, 300, 300), 36181400);
    /* orgqr 300 x 300 from 300 reflectors: 18089500 and 18000100 */
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_ORGQR, 0, 2, 2, 300, 300, 1, 300), 36089600);
    /* the iterative drivers (syevd, gesdd, geev, gelsd): none */
    ck_assert_uint_eq(FLOPS(F64, OPP_SUB_NONE, 0, 1, 2, 300, 300), 0);
}
END_TEST

START_TEST(shapes_are_the_recorded_tensors)
{
    const uint64_t a[] = {OPP_SUB_ORGQR, 0, 2, 2, 300, 200, 1, 100};
    struct opp_shapes s;
    char buf[128];
    opp_op_shapes(K, a, sizeof a / sizeof *a, &s);
    ck_assert_int_eq(opp_shapes_format(&s, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "[[300, 200], [100]]");
}
END_TEST

/* A workspace query keeps its shapes, has no FLOPs and is named apart. */
START_TEST(workspace_query_is_named_apart)
{
    const uint64_t q[] = {OPP_SUB_LWORK_QUERY, 0, 1, 2, 300, 300};
    const uint64_t call[] = {OPP_SUB_GEQRF, 0, 1, 2, 300, 300};
    char buf[128] = "";
    ck_assert_uint_eq(opp_op_relabel(K, q, 6), OPP_SUB_LWORK_QUERY);
    ck_assert_int_eq(opp_op_label(K, q, 6, "lapack", "dgeqrf_", buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "dgeqrf_ (workspace query)");
    ck_assert_uint_eq(opp_op_flops(K, OPP_DT_F64, NULL, q, 6), 0);
    ck_assert_uint_eq(opp_op_relabel(K, call, 6), 0);
    ck_assert_int_eq(opp_op_label(K, call, 6, "lapack", "dgeqrf_", buf, sizeof buf), 0);
    ck_assert_str_eq(opp_subop_name(OPP_SUB_LWORK_QUERY), "workspace_query");
    /* oneDNN's sub-named operators keep their names */
    const uint64_t conv[] = {0, OPP_SUB_CONV, OPP_DT_F32, 0};
    uint32_t sn = OPP_OP_TENSORS | OPP_OPK_STATUS | OPP_OPK_SUBNAME;
    ck_assert_int_eq(opp_op_label(sn, conv, 4, "onednn", "dnnl_primitive_execute", buf, sizeof buf),
                     1);
    ck_assert_str_eq(buf, "onednn::convolution");
}
END_TEST

Suite *suite_linalg_ops(void)
{
    Suite *s = suite_create("linalg_ops");
    TCase *tc = tcase_create("linalg_ops");
    tcase_add_test(tc, level1_flops);
    tcase_add_test(tc, level2_flops);
    tcase_add_test(tc, level3_flops);
    tcase_add_test(tc, lapack_flops_lawn41);
    tcase_add_test(tc, shapes_are_the_recorded_tensors);
    tcase_add_test(tc, workspace_query_is_named_apart);
    suite_add_tcase(s, tc);
    return s;
}
