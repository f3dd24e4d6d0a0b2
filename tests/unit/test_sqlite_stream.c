/* The SQLite export written as the pass hands the calls over
 * (opp_export_sqlite): each call's row id given as it returns,
 * its parent's id filled in when the parent comes, on traces built by
 * hand: nested calls, calls a process died inside, torch's folding of an
 * op into itself with GPU work through both ids, a thread read again
 * whole; each call's name, parent, external id and bytes and each GPU
 * op's call, ids aside. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef OPP_HAVE_SQLITE
#include <sqlite3.h>
#endif

#include "analysis/gpu_join.h"
#include "exports/export.h"
#include "gpu.h"
#include "analysis/pass.h"
#include "testutil.h"
#include "tool/cmds.h"
#include "tracebuild.h"

TU_TRACE_FIXTURE

#ifdef OPP_HAVE_SQLITE
enum { F_TORCH, F_LAUNCH, F_WORK, F_MEM, NF };
enum { S_MM = OPP_STR_PRELOAD, S_GEMM };

static const struct opp_func_desc FUNCS[NF] = {
    [F_TORCH] = TB_FN_TORCH,
    [F_LAUNCH] = TB_FN_LAUNCH,
    [F_WORK] = {OPP_OP_GEMM, OPP_DT_F64, "blas", "cblas_dgemm"},
    [F_MEM] = {OPP_OP_MEMORY, 0, "c10", "_ZN3c108free_cpuEPv"},
};

/* Its entry points, and the strings S_MM on. */
static const struct tb_python PY = {FUNCS, NF, (const char *const[]){"aten::mm", "gemm", NULL}};

/* The trace exported. */
static char *export(void)
{
    char *db = tu_path(dir, "s.sqlite"), err[512] = "";
    struct opp_pass *p = tu_pass_open(trace);
    ck_assert_msg(opp_export_sqlite(p, db, err, sizeof err) == 0, "%s", err);
    opp_pass_free(p);
    return db;
}

/* The first column of sql's one row, as text (malloc'd; "" for NULL). */
static char *query(const char *db, const char *sql)
{
    sqlite3 *h;
    sqlite3_stmt *s;
    ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    ck_assert_msg(sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK, "%s: %s", sql,
                  sqlite3_errmsg(h));
    ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
    const char *t = (const char *)sqlite3_column_text(s, 0);
    char *r = strdup(t ? t : "");
    sqlite3_finalize(s);
    sqlite3_close(h);
    return r;
}

static void query_is(const char *db, const char *sql, const char *want)
{
    char *got = query(db, sql);
    ck_assert_msg(!strcmp(got, want), "%s:\n%s\nnot\n%s", sql, got, want);
    free(got);
}

/* Each call: id, parent's id, start, self time, depth, open. */
#define ROWS                                                                                       \
    "SELECT group_concat(r, ' ') FROM (SELECT id || ':' || parent_id || ':' || start_ns || ':' " \
    "|| self_ns || ':' || depth || ':' || open AS r FROM cpu_ops ORDER BY id)"

/* The rows with each id replaced by what it names (the call's and its
 * parent's times), in tree order; the GPU ops' calls likewise. */
#define SAME                                                                                       \
    "SELECT group_concat(r, ' ') FROM (SELECT c.thread_id || ',' || c.start_ns || ',' || "         \
    "c.end_ns || ',' || c.self_ns || ',' || c.depth || ',' || c.open || ',' || n.value || ',' "    \
    "|| IFNULL(p.start_ns || '-' || p.end_ns, 'top') || ',' || IFNULL(c.external_id, '') || "      \
    "',' || c.bytes AS r "                                                                         \
    "FROM cpu_ops c JOIN strings n ON n.id = c.name_id LEFT JOIN cpu_ops p ON p.id = "             \
    "c.parent_id ORDER BY c.thread_id, c.start_ns, c.end_ns DESC, c.depth)"
#define SAME_GPU                                                                                   \
    "SELECT group_concat(r, ' ') FROM (SELECT g.id || ',' || g.start_ns || ',' || "               \
    "IFNULL(c.start_ns || '-' || c.end_ns, 'none') AS r FROM gpu_ops g LEFT JOIN cpu_ops c ON "  \
    "c.id = g.cpu_op_id ORDER BY g.id)"

/* The database's calls are calls (SAME, with their names and parents'
 * times), its GPU ops' calls gpu (SAME_GPU), and it has count calls. */
static void holds(const char *db, const char *calls, const char *gpu, const char *count)
{
    query_is(db, SAME, calls);
    query_is(db, SAME_GPU, gpu);
    query_is(db, "SELECT COUNT(*) FROM cpu_ops", count);
}

/* Children first, each id as its call returned, each parent's id filled
 * in when the parent came; self time less the children's. */
START_TEST(nested_calls_parents)
{
    const struct tb_ev ev[] = {TB_CALL(F_WORK, 100, 200, 1),  TB_CALL(F_WORK, 320, 400, 2),
                               TB_CALL(F_WORK, 300, 450, 1),  TB_CALL(F_WORK, 50, 500, 0),
                               TB_CALL(F_WORK, 600, 700, 0)};
    tb_python_calls(trace, &PY, ev, 5, NULL, 0, 0);
    char *db = export();
    query_is(db, ROWS, "0:3:100:100:1:0 1:2:320:80:2:0 2:3:300:70:1:0 3:-1:50:200:0:0 "
                       "4:-1:600:100:0:0");
    holds(db,
          "0,50,500,200,0,0,cblas_dgemm,top,,0 "
          "0,100,200,100,1,0,cblas_dgemm,50-500,,0 "
          "0,300,450,70,1,0,cblas_dgemm,50-500,,0 "
          "0,320,400,80,2,0,cblas_dgemm,300-450,,0 "
          "0,600,700,100,0,0,cblas_dgemm,top,,0",
          "", "5");
    free(db);
}
END_TEST

/* Calls a process died inside: ended where it did, open, the completed
 * call inside them the innermost's child. */
START_TEST(process_died_inside)
{
    const struct tb_ev ev[] = {TB_CALL(F_WORK, 300, 400, 2)};
    const struct tb_ev open[] = {TB_OPEN(F_WORK, 100, 450, 0), TB_OPEN(F_WORK, 200, 450, 1)};
    tb_python_calls(trace, &PY, ev, 1, open, 2, 900);
    char *db = export();
    query_is(db, ROWS, "0:1:300:100:2:0 1:2:200:600:1:1 2:-1:100:100:0:1");
    query_is(db, "SELECT group_concat(end_ns, ' ') FROM cpu_ops", "400 900 900");
    holds(db,
          "0,100,900,100,0,1,cblas_dgemm,top,,0 "
          "0,200,900,600,1,1,cblas_dgemm,100-900,,0 "
          "0,300,400,100,2,0,cblas_dgemm,200-900,,0",
          "", "3");
    free(db);
}
END_TEST

/* torch folds an only child of its name into it: the parent's row takes
 * the child's id (its children's parent already), the child has none;
 * the kernel launched inside goes to the launch, the kernel of the
 * folded child's external id to the parent. */
START_TEST(torch_fold_takes_the_child_id)
{
    const struct tb_ev ev[] = {TB_CALL(F_LAUNCH, 200, 300, 2, TB_API(101, 211)),
                               TB_CALL(F_TORCH, 150, 450, 1, TB_TORCH(S_MM, 6)),
                               TB_CALL(F_TORCH, 100, 500, 0, TB_TORCH(S_MM, 5)),
                               TB_CALL(F_WORK, 600, 700, 0)};
    struct tb b;
    tb_open_python(&b, trace, &PY);
    tb_put_events(&b, 0, ev, 4);
    tb_python_strings(&b, &PY);
    tb_kernel(&b, .name = S_GEMM, .start = 1000, .end = 1100, .stream = 7, .corr = 101);
    tb_kernel(&b, .name = S_GEMM, .start = 2000, .end = 2010, .stream = 7, .corr = 201);
    tb_extcorr(&b, OPP_EXTCORR_KIND, 6, 201);
    tb_gpu_chunk(&b);
    tb_process_end(&b, 0, OPP_END_EXITED, 3000);
    tb_end(&b);
    char *db = export();
    query_is(db, ROWS, "0:1:200:100:2:0 1:-1:100:300:0:0 2:-1:600:100:0:0");
    query_is(db, "SELECT group_concat(external_id, ' ') FROM cpu_ops", "5");
    query_is(db, "SELECT group_concat(id || ':' || cpu_op_id, ' ') FROM gpu_ops", "0:0 1:1");
    holds(db,
          "0,100,500,300,0,0,aten::mm,top,5,0 "
          "0,200,300,100,2,0,cudaLaunchKernel,100-500,,0 "
          "0,600,700,100,0,0,cblas_dgemm,top,,0",
          "0,1000,200-300 1,2000,100-500", "3");
    free(db);
}
END_TEST

/* A chunk written late nests a call inside one handed over before it:
 * the pass reads again with the thread whole; the first read's rows are
 * gone, each call once, its parent the call that encloses it. */
START_TEST(thread_read_again_whole)
{
    const struct tb_ev ev[] = {TB_CALL(F_WORK, 1000, 2000, 0), TB_CALL(F_WORK, 2100, 2900, 0)};
    const struct tb_ev late[] = {TB_CALL(F_WORK, 1200, 1500, 1), TB_CALL(F_WORK, 3000, 4000, 0)};
    tb_python_calls(trace, &PY, ev, 2, late, 2, 0);
    char *db = export();
    query_is(db, ROWS, "0:1:1200:300:1:0 1:-1:1000:700:0:0 2:-1:2100:800:0:0 3:-1:3000:1000:0:0");
    holds(db,
          "0,1000,2000,700,0,0,cblas_dgemm,top,,0 "
          "0,1200,1500,300,1,0,cblas_dgemm,1000-2000,,0 "
          "0,2100,2900,800,0,0,cblas_dgemm,top,,0 "
          "0,3000,4000,1000,0,0,cblas_dgemm,top,,0",
          "", "4");
    free(db);
}
END_TEST

/* PyTorch's CPU memory: a free recorded without a size takes its
 * allocation's, one of an address never allocated none. */
START_TEST(cpu_free_takes_its_allocation_size)
{
    const struct tb_ev ev[] = {TB_CALL(F_MEM, 100, 100, 1, OPP_MEM_ALLOC, 0x1000, 4096),
                               TB_CALL(F_MEM, 200, 200, 1, OPP_MEM_FREE, 0x1000, 0),
                               TB_CALL(F_MEM, 250, 250, 1, OPP_MEM_FREE, 0x2000, 0),
                               TB_CALL(F_WORK, 50, 300, 0)};
    tb_python_calls(trace, &PY, ev, 4, NULL, 0, 0);
    char *db = export();
    query_is(db,
             "SELECT group_concat(r, ' ') FROM (SELECT id || ':' || parent_id || ':' || bytes || "
             "':' || self_ns AS r FROM cpu_ops ORDER BY id)",
             "0:3:4096:0 1:3:-4096:0 2:3:0:0 3:-1:0:250");
    holds(db,
          "0,50,300,250,0,0,cblas_dgemm,top,,0 "
          "0,100,100,0,1,0,[memory],50-300,,4096 "
          "0,200,200,0,1,0,[memory],50-300,,-4096 "
          "0,250,250,0,1,0,[memory],50-300,,0",
          "", "4");
    free(db);
}
END_TEST

/* A call its process died inside folds its only child of its name, whose
 * launch owns a kernel: whether it folds the join knows at the thread's
 * next call (none: it folds); the command writes the same rows. */
START_TEST(open_fold_exported_streamed)
{
    const struct tb_ev ev[] = {TB_CALL(F_LAUNCH, 200, 300, 2, TB_API(101, 211)),
                               TB_CALL(F_TORCH, 150, 450, 1, TB_TORCH(S_MM, 6))};
    const struct tb_ev open[] = {TB_OPEN(F_TORCH, 100, 500, 0, TB_TORCH(S_MM, 5))};
    struct tb b;
    tb_open_python(&b, trace, &PY);
    tb_put_events(&b, 0, ev, 2);
    tb_put_events(&b, 0, open, 1);
    tb_python_strings(&b, &PY);
    tb_kernel(&b, .name = S_GEMM, .start = 1000, .end = 1100, .stream = 7, .corr = 101);
    tb_gpu_chunk(&b);
    tb_process_end(&b, 0, OPP_END_LOST, 900);
    tb_end(&b);
    char *db = tu_path(dir, "s.sqlite"), err[512] = "";
    struct opp_pass *p = tu_pass_open(trace);
    ck_assert_int_eq(opp_export_sqlite(p, db, err, sizeof err), 0);
    opp_pass_free(p);
    ck_assert_str_eq(err, "");
    free(db);
    db = tu_path(dir, "c.sqlite");
    char *out, *e;
    char *argv[] = {"export", "sqlite", trace, "-o", db, NULL};
    ck_assert_int_eq(tu_call(cmd_export, argv, dir, &out, &e), 0);
    ck_assert_str_eq(out, "");
    ck_assert_str_eq(e, "");
    /* the launch (ids in return order), the open mm its folded child's
     * launch is the child of; the kernel the launch's */
    query_is(db, ROWS, "0:1:200:100:2:0 1:-1:100:700:0:1");
    query_is(db, "SELECT group_concat(end_ns, ' ') FROM cpu_ops", "300 900");
    query_is(db, "SELECT group_concat(id || ':' || cpu_op_id, ' ') FROM gpu_ops", "0:0");
    holds(db,
          "0,100,900,700,0,1,aten::mm,top,5,0 "
          "0,200,300,100,2,0,cudaLaunchKernel,100-900,,0",
          "0,1000,200-300", "2");
    free(out), free(e), free(db);
}
END_TEST
#else
TU_SKIPPED(nested_calls_parents, TU_NO_SQLITE)
TU_SKIPPED(process_died_inside, TU_NO_SQLITE)
TU_SKIPPED(torch_fold_takes_the_child_id, TU_NO_SQLITE)
TU_SKIPPED(thread_read_again_whole, TU_NO_SQLITE)
TU_SKIPPED(cpu_free_takes_its_allocation_size, TU_NO_SQLITE)
TU_SKIPPED(open_fold_exported_streamed, TU_NO_SQLITE)
#endif

Suite *suite_sqlite_stream(void)
{
    Suite *s = suite_create("sqlite_stream");
    TCase *tc = tcase_create("sqlite_stream");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, nested_calls_parents);
    tcase_add_test(tc, process_died_inside);
    tcase_add_test(tc, torch_fold_takes_the_child_id);
    tcase_add_test(tc, thread_read_again_whole);
    tcase_add_test(tc, cpu_free_takes_its_allocation_size);
    tcase_add_test(tc, open_fold_exported_streamed);
    suite_add_tcase(s, tc);
    return s;
}
