/* The machine-readable outputs give the records a trace lost apart by
 * why (a full ring, a signal handler's interruption of our recording, a
 * summary's node bound) beside the total they add up to: the report's
 * JSON, the SQLite export's meta and threads, the HTML page's summary. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef OPP_HAVE_SQLITE
#include <sqlite3.h>
#endif

#include "testutil.h"
#include "tool/cmds.h"
#include "tracebuild.h"

TU_TRACE_FIXTURE

/* Thread 10: 3 records lost to its full ring, 2 to an interruption;
 * thread 11: 4 to its full ring; the summary's bound: 5. 14 in all. */
static void drops_trace(void)
{
    struct tb b;
    tb_open(&b, trace);
    tb_process(&b, .proc = 0, .pid = 10, .ppid = 1, .parent = UINT32_MAX, .real = 1,
               .exe = "/usr/bin/app", .argv = {"app"});
    tb_funcs(&b, [0] = {OPP_OP_PLAIN, OPP_DT_NONE, "blas", "cblas_ddot"});
    tb_thread(&b, 10, "app");
    tb_events(&b, TB_CALL(0, 1000, 2000, 0));
    tb_dropped(&b, 3);
    tb_dropped_why(&b, 2, OPP_DROP_INTERRUPTED);
    tb_thread(&b, 11, "worker");
    tb_events(&b, TB_CALL(0, 1100, 1900, 0));
    tb_dropped(&b, 4);
    b.tid = OPP_DROPPED_SUMMARY;
    tb_dropped(&b, 5);
    tb_process_end(&b, 0, OPP_END_EXITED, 3000);
    tb_end(&b);
}

START_TEST(json_drops_apart)
{
    drops_trace();
    char *out, *err;
    char *argv[] = {"report", trace, "--format", "json", NULL};
    ck_assert_int_eq(tu_call(cmd_report, argv, dir, &out, &err), 0);
    const char *want = "  \"dropped\": 14,\n  \"dropped_full\": 7,\n  \"dropped_interrupted\": 2,\n"
                       "  \"dropped_node_bound\": 5,\n";
    ck_assert_msg(strstr(out, want), "no\n%s\nin\n%s", want, out);
    /* each thread's total, as before */
    ck_assert_ptr_nonnull(strstr(out, "\"name\": \"app\", \"events\": 1, \"dropped\": 5}"));
    ck_assert_ptr_nonnull(strstr(out, "\"name\": \"worker\", \"events\": 1, \"dropped\": 4}"));
    free(out), free(err);
}
END_TEST

START_TEST(html_drops_apart)
{
    drops_trace();
    char *out, *err, *html = tu_path(dir, "t.html");
    char *argv[] = {"export", "html", trace, "-o", html, NULL};
    ck_assert_int_eq(tu_call(cmd_export, argv, dir, &out, &err), 0);
    char *page = tu_slurp(html);
    ck_assert_ptr_nonnull(page);
    const char *want = ", 14 records dropped (7 buffers full, 2 interrupted by a signal handler, "
                       "5 past the summary's node bound)";
    ck_assert_msg(strstr(page, want), "no %s", want);
    free(page), free(out), free(err), free(html);
}
END_TEST

#ifdef OPP_HAVE_SQLITE
/* The first column of sql's one row, as text (malloc'd). */
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

START_TEST(sqlite_drops_apart)
{
    drops_trace();
    char *out, *err, *db = tu_path(dir, "t.sqlite");
    char *argv[] = {"export", "sqlite", trace, "-o", db, NULL};
    ck_assert_int_eq(tu_call(cmd_export, argv, dir, &out, &err), 0);
    const char *sql[][2] = {
        {"SELECT value FROM meta WHERE key = 'schema_version'", "2"},
        {"SELECT group_concat(key || '=' || value, ' ') FROM meta WHERE key LIKE 'dropped%'",
         "dropped=14 dropped_full=7 dropped_interrupted=2 dropped_node_bound=5"},
        {"SELECT group_concat(tid || ':' || dropped || ':' || interrupted, ' ') FROM "
         "(SELECT * FROM threads ORDER BY tid)",
         "10:5:2 11:4:0"},
    };
    for (size_t i = 0; i < sizeof sql / sizeof *sql; i++) {
        char *got = query(db, sql[i][0]);
        ck_assert_msg(!strcmp(got, sql[i][1]), "%s:\n%s\nnot\n%s", sql[i][0], got, sql[i][1]);
        free(got);
    }
    free(out), free(err), free(db);
}
END_TEST
#else
TU_SKIPPED(sqlite_drops_apart, TU_NO_SQLITE)
#endif

Suite *suite_drop_reasons(void)
{
    Suite *s = suite_create("drop_reasons");
    TCase *tc = tcase_create("drop_reasons");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, json_drops_apart);
    tcase_add_test(tc, html_drops_apart);
    tcase_add_test(tc, sqlite_drops_apart);
    suite_add_tcase(s, tc);
    return s;
}
