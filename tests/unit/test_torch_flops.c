/* A torch operator's FLOPs: torch.profiler's with_flops formulas
 * (computeFlops) on the inputs the shim records, with torch's numbers for
 * the same calls (Debian's torch 1.13), and the same FLOPs in every output
 * that shows a call's: the table's CSV, the Chrome trace's args, the
 * SQLite export's flops column. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef OPP_HAVE_SQLITE
#include <sqlite3.h>
#endif

#include "ops.h"
#include "testutil.h"
#include "tool/cmds.h"
#include "tracebuild.h"

TU_TRACE_FIXTURE

#define K (OPP_OP_TORCH | OPP_OPK_EXTID)
#define T(rank) OPP_TIN_TAG(OPP_TIN_TENSOR, OPP_DT_F32, rank)
#define NUM OPP_TIN_TAG(OPP_TIN_SCALAR, 0, 0)   /* a number, no value */
#define INT OPP_TIN_TAG(OPP_TIN_SCALAR, 0, 1)   /* an integer and its value */
#define INTS(n) OPP_TIN_TAG(OPP_TIN_LIST, 0, n) /* n integers and their values */
#define NONE OPP_TIN_TAG(OPP_TIN_UNDEF, 0, 0)   /* conv2d's bias=None */
/* An op's arguments: name (a string id), scope, inputs, their tags and
 * values; the external id last. */
#define ARGS(count, ...) 0x80000001u, OPP_TORCH_SCOPE_FUNCTION, (count), __VA_ARGS__, 0
#define FLOPS(name, count, ...)                                                                    \
    opp_op_flops(K, 0, (name), (const uint64_t[]){ARGS(count, __VA_ARGS__)},                       \
                 TB_COUNT(uint64_t, ARGS(count, __VA_ARGS__)))

/* conv2d(x [2, 3, 10, 9], w [6, 3, 3, 2], None, stride, padding, dilation, groups) */
#define CONV(s0, s1, p0, p1, d0, d1, groups)                                                       \
    T(4), 2, 3, 10, 9, T(4), 6, 3, 3, 2, NONE, INTS(2), s0, s1, INTS(2), p0, p1, INTS(2), d0, d1,  \
        INT, groups

/* The numbers torch.profiler gives the same calls (with_flops). */
START_TEST(torch_formulas)
{
    ck_assert_uint_eq(FLOPS("aten::mm", 2, T(2), 5, 7, T(2), 7, 3), 210);
    ck_assert_uint_eq(FLOPS("aten::addmm", 5, T(1), 3, T(2), 5, 7, T(2), 7, 3, NUM, NUM), 210);
    ck_assert_uint_eq(FLOPS("aten::bmm", 2, T(3), 4, 5, 7, T(3), 4, 7, 3), 840);
    ck_assert_uint_eq(
        FLOPS("aten::baddbmm", 5, T(3), 4, 5, 3, T(3), 4, 5, 7, T(3), 4, 7, 3, NUM, NUM), 840);
    /* an element each of the first input, whatever the second */
    ck_assert_uint_eq(FLOPS("aten::mul", 2, T(2), 5, 7, NUM), 35);
    ck_assert_uint_eq(FLOPS("aten::add", 3, T(2), 5, 7, T(2), 5, 7, NUM), 35);
    ck_assert_uint_eq(FLOPS("aten::mul", 3, T(0), T(2), 5, 3, T(2), 5, 3), 1);
    /* out (10 + 2 - 2 - 1) / 2 + 1 = 5 by (9 + 4 - 2 - 1) / 1 + 1 = 11 */
    ck_assert_uint_eq(FLOPS("aten::conv2d", 7, CONV(2, 1, 1, 2, 1, 2, 1)), 23760);
    /* groups 3, weight [6, 1, 3, 3]: torch takes C_in from the input */
    ck_assert_uint_eq(FLOPS("aten::conv2d", 7, T(4), 2, 3, 10, 9, T(4), 6, 1, 3, 3, NONE, INTS(2),
                            1, 1, INTS(2), 0, 0, INTS(2), 1, 1, INT, 3),
                      12096);
    /* torch's none: another operator, in-place ones, a trace without conv2d's values */
    ck_assert_uint_eq(FLOPS("aten::matmul", 2, T(2), 5, 7, T(2), 7, 3), 0);
    ck_assert_uint_eq(FLOPS("aten::mul_", 2, T(2), 5, 7, NUM), 0);
    ck_assert_uint_eq(FLOPS(NULL, 2, T(2), 5, 7, T(2), 7, 3), 0);
    ck_assert_uint_eq(FLOPS("aten::conv2d", 7, T(4), 2, 3, 10, 9, T(4), 6, 3, 3, 2, NONE, INTS(0),
                            INTS(0), INTS(0), NUM),
                      0);
}
END_TEST

/* What torch's checks refuse gives 0, as torch does. */
START_TEST(torch_formulas_refuse)
{
    ck_assert_uint_eq(FLOPS("aten::mm", 2, T(2), 0, 7, T(2), 7, 3), 0);
    ck_assert_uint_eq(FLOPS("aten::mm", 2, T(2), 5, 0, T(2), 0, 3), 0); /* no overlap */
    ck_assert_uint_eq(FLOPS("aten::mm", 1, T(2), 5, 7), 0);
    ck_assert_uint_eq(FLOPS("aten::addmm", 3, NUM, T(2), 5, 7, T(2), 7, 3), 0);
    ck_assert_uint_eq(FLOPS("aten::bmm", 2, T(3), 0, 5, 7, T(3), 0, 7, 3), 0);
    ck_assert_uint_eq(FLOPS("aten::mul", 2, NUM, T(2), 5, 7), 0);
    ck_assert_uint_eq(FLOPS("aten::add", 1, NONE), 0);
    /* a tensor of more dims than a shape holds: its size unknown */
    ck_assert_uint_eq(FLOPS("aten::mul", 1, OPP_TIN_TAG(OPP_TIN_TENSOR, OPP_DT_F32, 9), 1, 2, 1, 1,
                            1, 1, 1, 1, 1),
                      0);
    ck_assert_uint_eq(FLOPS("aten::conv2d", 7, CONV(0, 1, 1, 2, 1, 2, 1)), 0); /* stride 0 */
    ck_assert_uint_eq(FLOPS("aten::conv2d", 7, CONV(2, 1, 1, 2, 1, 2, 0)), 0); /* groups 0 */
    ck_assert_uint_eq(FLOPS("aten::conv2d", 6, T(4), 2, 3, 10, 9, T(4), 6, 3, 3, 2, NONE, INTS(2),
                            1, 1, INTS(2), 0, 0, INTS(2), 1, 1),
                      0); /* no groups */
    ck_assert_uint_eq(FLOPS("aten::conv2d", 7, T(3), 3, 10, 9, T(4), 6, 3, 3, 2, NONE, INTS(2), 1,
                            1, INTS(2), 0, 0, INTS(2), 1, 1, INT, 1),
                      0); /* an unbatched input */
    ck_assert_uint_eq(FLOPS("aten::conv2d", 7, T(4), 2, 3, 10, 9, T(4), 6, 3, 3, 2, NONE, INTS(1),
                            1, INTS(2), 0, 0, INTS(2), 1, 1, INT, 1),
                      0); /* a stride of one item */
}
END_TEST

enum { F_TORCH, F_SGEMM, NF };
enum { S_MM = OPP_STR_PRELOAD, S_CONV, S_MATMUL };
static const struct opp_func_desc FUNCS[NF] = {
    [F_TORCH] = TB_FN_TORCH,
    [F_SGEMM] = {OPP_OP_GEMM, OPP_DT_F32, "blas", "sgemm_"},
};
static const struct tb_python PY = {
    FUNCS, NF, (const char *const[]){"aten::mm", "aten::conv2d", "aten::matmul", NULL}};

/* aten::matmul around aten::mm around BLAS's sgemm_; aten::conv2d twice. */
static void write_calls(void)
{
    const struct tb_ev ev[] = {
        TB_CALL(F_SGEMM, 1200, 1800, 2, 5, 3, 7, 'N' | 'N' << 8),
        TB_CALL(F_TORCH, 1100, 1900, 1, S_MM, 0, 2, T(2), 5, 7, T(2), 7, 3, 0),
        TB_CALL(F_TORCH, 1000, 2000, 0, S_MATMUL, 0, 2, T(2), 5, 7, T(2), 7, 3, 0),
        TB_CALL(F_TORCH, 3000, 4000, 0, S_CONV, 0, 7, CONV(2, 1, 1, 2, 1, 2, 1), 0),
        TB_CALL(F_TORCH, 5000, 6000, 0, S_CONV, 0, 7, CONV(2, 1, 1, 2, 1, 2, 1), 0),
    };
    tb_python_calls(trace, &PY, ev, sizeof ev / sizeof *ev, NULL, 0, 0);
}

/* The table's CSV: the op's FLOPs added up, BLAS's its own, none for
 * matmul (torch gives it none: its mm has them). */
START_TEST(torch_flops_in_table)
{
    write_calls();
    char *o, *e;
    char *argv[] = {"report", trace, "-f", "csv", "--sort", "flops", NULL};
    ck_assert_int_eq(tu_call(cmd_report, argv, dir, &o, &e), 0);
    ck_assert_str_eq(o, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,"
                        "flops\n"
                        "aten::conv2d,torch,2,2.000,2.000,1.000,47520\n"
                        "aten::mm,torch,1,0.200,0.800,0.800,210\n"
                        "sgemm_,blas,1,0.600,0.600,0.600,210\n"
                        "aten::matmul,torch,1,0.200,1.000,1.000,0\n");
    free(o), free(e);
}
END_TEST

/* The Chrome trace's args of each call. */
START_TEST(torch_flops_in_chrome)
{
    write_calls();
    char *o, *e, *json = tu_path(dir, "t.json");
    char *argv[] = {"export", "chrome", trace, "-o", json, NULL};
    ck_assert_int_eq(tu_call(cmd_export, argv, dir, &o, &e), 0);
    char *j = tu_slurp(json);
    ck_assert_ptr_nonnull(j);
    size_t conv = 0, mm = 0;
    for (const char *p = j; (p = strstr(p, "\"flops\": ")); p++) {
        conv += !strncmp(p, "\"flops\": 23760}", 15);
        mm += !strncmp(p, "\"flops\": 210}", 13);
    }
    ck_assert_uint_eq(conv, 2);
    ck_assert_uint_eq(mm, 2); /* aten::mm's and sgemm_'s */
    free(j), free(o), free(e), free(json);
}
END_TEST

/* The SQLite export's flops column. */
#ifdef OPP_HAVE_SQLITE
START_TEST(torch_flops_in_sqlite)
{
    write_calls();
    char *o, *e, *db = tu_path(dir, "t.sqlite");
    char *argv[] = {"export", "sqlite", trace, "-o", db, NULL};
    ck_assert_int_eq(tu_call(cmd_export, argv, dir, &o, &e), 0);
    sqlite3 *h;
    sqlite3_stmt *s;
    ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    const char *sql = "SELECT group_concat(n.value || '=' || c.flops, ' ') FROM (SELECT * FROM "
                      "cpu_ops ORDER BY start_ns) c JOIN strings n ON n.id = c.name_id";
    ck_assert_int_eq(sqlite3_prepare_v2(h, sql, -1, &s, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
    ck_assert_str_eq((const char *)sqlite3_column_text(s, 0),
                     "aten::matmul=0 aten::mm=210 sgemm_=210 aten::conv2d=23760 "
                     "aten::conv2d=23760");
    sqlite3_finalize(s);
    sqlite3_close(h);
    free(o), free(e), free(db);
}
END_TEST
#else
TU_SKIPPED(torch_flops_in_sqlite, TU_NO_SQLITE)
#endif

Suite *suite_torch_flops(void)
{
    Suite *s = suite_create("torch_flops");
    TCase *tc = tcase_create("torch_flops");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, torch_formulas);
    tcase_add_test(tc, torch_formulas_refuse);
    tcase_add_test(tc, torch_flops_in_table);
    tcase_add_test(tc, torch_flops_in_chrome);
    tcase_add_test(tc, torch_flops_in_sqlite);
    suite_add_tcase(s, tc);
    return s;
}
