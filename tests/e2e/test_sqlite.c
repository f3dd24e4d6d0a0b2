/* `opprof export sqlite` end to end: a real BLAS program under the real
 * preload, its database read back with SQL and compared with what
 * `opprof report --format json` says of the same trace; bad input. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef OPP_HAVE_SQLITE
#include <sqlite3.h>
#endif

#include "testutil.h"

TU_TRACE_FIXTURE

#ifdef OPP_HAVE_SQLITE
/* opprof export sqlite TRACE -o out: its exit code, stderr in *err. */
static int export_db(const char *t, const char *out, char **err)
{
    char *e = tu_path(dir, "export.err");
    char *argv[] = {(char *)tu_tool("opprof"), "export", "sqlite", (char *)t, "-o", (char *)out,
                    NULL};
    if (!out)
        argv[4] = NULL;
    int code = tu_code(tu_run(argv, NULL, NULL, e));
    *err = tu_slurp(e);
    free(e);
    return code;
}

/* Each name's calls and summed self time from trace's database db, by
 * docs/SQLITE.md's query, as the JSON report's row of that name prints
 * them: how many rows (each of the report's). */
static int totals_match(const char *t, const char *db)
{
    char *err;
    ck_assert_int_eq(export_db(t, db, &err), 0);
    ck_assert_str_eq(err, "");
    free(err);
    char *js = tu_path(dir, "t.json");
    char *rep[] = {(char *)tu_tool("opprof"),
                   "report",
                   (char *)t,
                   "--format",
                   "json",
                   "--limit",
                   "1000",
                   NULL};
    ck_assert_int_eq(tu_code(tu_run(rep, NULL, js, NULL)), 0);
    char *json = tu_slurp(js);
    sqlite3 *h;
    ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *s;
    ck_assert_int_eq(
        sqlite3_prepare_v2(h,
                           "SELECT n.value, l.value, COUNT(*), SUM(c.self_ns) FROM cpu_ops c "
                           "JOIN strings n ON n.id = c.name_id JOIN strings l ON l.id = "
                           "c.library_id WHERE c.kind != 'memory' OR c.parent_id = -1 "
                           "GROUP BY c.name_id ORDER BY n.value",
                           -1, &s, NULL),
        SQLITE_OK);
    int rows = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        char want[512];
        snprintf(want, sizeof want,
                 "{\"key\": \"%s\", \"lib\": \"%s\", \"count\": %" PRId64
                 ", \"self_cpu_time_total\": %.3f,",
                 sqlite3_column_text(s, 0), sqlite3_column_text(s, 1),
                 (int64_t)sqlite3_column_int64(s, 2), (double)sqlite3_column_int64(s, 3) / 1000);
        ck_assert_msg(strstr(json, want), "not in the report: %s\n%s", want, json);
        rows++;
    }
    sqlite3_finalize(s);
    sqlite3_close(h);
    ck_assert_int_eq(rows, tu_count_lines(json, "    {\"key\": "));
    free(json), free(js);
    return rows;
}

START_TEST(totals_match_report)
{
    struct tu_env te;
    char *prog[] = {(char *)tu_build("tests/progs/blas_calls"), "3", NULL};
    ck_assert_int_eq(tu_code(tu_run(prog, tu_preload_env(&te, trace, NULL), NULL, NULL)), 0);
    char *db = tu_path(dir, "t.sqlite");
    ck_assert_int_ge(totals_match(trace, db), 5);
    sqlite3 *h;
    sqlite3_stmt *s;
    ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    /* every call a row (57: one multi-row INSERT of 32 and 25 single
     * ones), with its shapes and FLOPs; the metadata */
    const char *checks[][2] = {
        {"SELECT COUNT(*) FROM cpu_ops", "57"},
        {"SELECT MIN(id) || ' ' || MAX(id) FROM cpu_ops", "0 56"},
        {"SELECT COUNT(*) FROM cpu_ops c JOIN cpu_ops p ON p.id = c.parent_id "
         "WHERE p.depth + 1 <> c.depth OR p.start_ns > c.start_ns OR p.end_ns < c.end_ns "
         "OR p.thread_id <> c.thread_id",
         "0"},
        {"SELECT value FROM meta WHERE key = 'schema_version'", "2"},
        {"SELECT COUNT(*) FROM processes WHERE end_how = 'exited'", "1"},
        {"SELECT sh.value || ' ' || dtype || ' ' || flops FROM cpu_ops c JOIN strings n ON n.id = "
         "c.name_id JOIN strings sh ON sh.id = c.shapes_id WHERE n.value = 'cblas_dgemm' LIMIT 1",
         "[[64, 48], [48, 32], [64, 32]] float64 196608"},
        {"SELECT COUNT(*) FROM cpu_ops WHERE parent_id >= 0 AND parent_id NOT IN "
         "(SELECT id FROM cpu_ops)",
         "0"},
    };
    for (size_t i = 0; i < sizeof checks / sizeof *checks; i++) {
        ck_assert_int_eq(sqlite3_prepare_v2(h, checks[i][0], -1, &s, NULL), SQLITE_OK);
        ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
        ck_assert_msg(!strcmp((const char *)sqlite3_column_text(s, 0), checks[i][1]),
                      "%s: %s, not %s", checks[i][0], sqlite3_column_text(s, 0), checks[i][1]);
        sqlite3_finalize(s);
    }
    sqlite3_close(h);
    free(db);
}
END_TEST

/* A PyTorch program's: its CPU allocations inside operators are rows of
 * the database, summed into the operators by the report (torch's rule),
 * and the query of docs/SQLITE.md leaves them out as the report does. */
START_TEST(torch_totals_match_report)
{
    if (!tu_python_has("torch")) {
        fprintf(stderr, "SKIP torch_totals_match_report: %s has no torch\n", TU_PYTHON);
        return;
    }
    struct tu_env te;
    char *prog[] = {TU_PYTHON, "-c",
                    "import torch\n"
                    "a = torch.ones(64, 64)\n"
                    "for _ in range(5):\n"
                    "    b = torch.mm(a, a) + a\n",
                    NULL};
    ck_assert_int_eq(tu_code(tu_run(prog, tu_preload_env(&te, trace, NULL), NULL, NULL)), 0);
    char *db = tu_path(dir, "torch.sqlite");
    ck_assert_int_ge(totals_match(trace, db), 3);
    sqlite3 *h;
    sqlite3_stmt *s;
    ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(h,
                                        "SELECT COUNT(*) FROM cpu_ops WHERE kind = 'memory' AND "
                                        "parent_id >= 0",
                                        -1, &s, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
    ck_assert_int_ge(sqlite3_column_int64(s, 0), 10); /* 2 allocations a step at least */
    sqlite3_finalize(s);
    sqlite3_close(h);
    free(db);
}
END_TEST

/* The steps table holds the steps `opprof report --step` finds (here the
 * ProfilerStep#N of a schedule over ddot calls), as many; meta says what
 * they are, in the report's words. */
START_TEST(steps_match_report)
{
    struct tu_env te;
    char **env = tu_preload_env_list(
        &te, trace,
        (const char *[]){"OPPROF_SCHEDULE=wait=1,active=3", "OPPROF_STEP=call:cblas_ddot", NULL});
    char *prog[] = {(char *)tu_build("tests/progs/scenarios"), "loop", "10", NULL};
    ck_assert_int_eq(tu_code(tu_run(prog, env, NULL, NULL)), 0);
    char *db = tu_path(dir, "t.sqlite"), *err;
    ck_assert_int_eq(export_db(trace, db, &err), 0);
    free(err);
    char *out = tu_path(dir, "steps");
    char *rep[] = {(char *)tu_tool("opprof"), "report", trace, "--step", NULL};
    ck_assert_int_eq(tu_code(tu_run(rep, NULL, out, NULL)), 0);
    char *text = tu_slurp(out);
    sqlite3 *h;
    ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *s;
    ck_assert_int_eq(sqlite3_prepare_v2(h,
                                        "SELECT (SELECT value FROM meta WHERE key = 'steps'), "
                                        "COUNT(*) FROM steps WHERE end_ns > start_ns",
                                        -1, &s, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
    char want[512];
    int64_t n = sqlite3_column_int64(s, 1);
    ck_assert_int_ge(n, 3);
    snprintf(want, sizeof want, "Steps: %s (each call is a step), %" PRId64 " steps\n",
             sqlite3_column_text(s, 0), n);
    ck_assert_msg(!strncmp(text, want, strlen(want)), "%s\nnot\n%s", want, text);
    sqlite3_finalize(s);
    sqlite3_close(h);
    free(text), free(out), free(db);
}
END_TEST

/* No output file (a usage error: exit 2); a summary trace; an output in a
 * missing directory: one line each, exit 1, nothing left behind. */
START_TEST(bad_input)
{
    struct tu_env te;
    char *prog[] = {(char *)tu_build("tests/progs/blas_calls"), NULL};
    char **env = tu_preload_env(&te, trace, "OPPROF_MODE=summary");
    ck_assert_int_eq(tu_code(tu_run(prog, env, NULL, NULL)), 0);
    char *err;
    ck_assert_int_eq(export_db(trace, NULL, &err), 2);
    ck_assert_str_eq(err, "opprof export: sqlite needs an output file: -o OUT.sqlite\n");
    free(err);
    char *db = tu_path(dir, "s.sqlite"), want[4400];
    ck_assert_int_eq(export_db(trace, db, &err), 1);
    snprintf(want, sizeof want,
             "opprof export: %s: this is a summary trace (OPPROF_MODE=summary: calls added up by "
             "call path, without their times); export sqlite needs every call: record without "
             "OPPROF_MODE=summary\n",
             trace);
    ck_assert_str_eq(err, want);
    ck_assert_int_eq(access(db, F_OK), -1);
    ck_assert_int_eq(tu_count_files(dir, ".tmp"), 0);
    free(err);
    /* after a full trace, the summary is the one named */
    char *full = tu_path(dir, "full.trace");
    ck_assert_int_eq(tu_code(tu_run(prog, tu_preload_env(&te, full, NULL), NULL, NULL)), 0);
    char *e = tu_path(dir, "export.err");
    char *argv[] = {(char *)tu_tool("opprof"), "export", "sqlite", full, trace, "-o", db, NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, e)), 1);
    err = tu_slurp(e);
    ck_assert_str_eq(err, want);
    ck_assert_int_eq(access(db, F_OK), -1);
    free(err), free(e), free(full), free(db);
}
END_TEST

/* A full disk: SQLite says "database or disk is full" of whichever file
 * filled it, the database or its own temporary files (the index sorts in
 * TMPDIR): the error names both places. A 64 KiB tmpfs filled up (root
 * only), the output on it, TMPDIR on it too. */
START_TEST(full_disk_named)
{
    char *prog[] = {(char *)tu_build("tests/progs/blas_calls"), NULL};
    struct tu_env te;
    ck_assert_int_eq(tu_code(tu_run(prog, tu_preload_env(&te, trace, NULL), NULL, NULL)), 0);
    char *full = tu_path(dir, "full");
    ck_assert_int_eq(mkdir(full, 0700), 0);
    if (mount("tmpfs", full, "tmpfs", 0, "size=64k") != 0) {
        fprintf(stderr, "sqlite: full_disk_named skipped: cannot mount a tmpfs (not root)\n");
        free(full);
        return;
    }
    char *fill = tu_path(full, "fill"), *db = tu_path(full, "t.sqlite"), *e = tu_path(dir, "e");
    FILE *f = fopen(fill, "w");
    static char block[4096];
    while (f && fwrite(block, 1, sizeof block, f) == sizeof block && fflush(f) == 0)
        ;
    if (f)
        fclose(f);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "TMPDIR=%s", full);
    char *env[] = {tmp, NULL};
    char *argv[] = {(char *)tu_tool("opprof"), "export", "sqlite", trace, "-o", db, NULL};
    int code = tu_code(tu_run(argv, env, NULL, e));
    int left = access(db, F_OK) == 0;
    ck_assert_int_eq(umount(full), 0);
    char *err = tu_slurp(e), want[8500];
    snprintf(want, sizeof want,
             "opprof export: sqlite: commit: database or disk is full: no room on the output's "
             "file system or in TMPDIR (%s)\n",
             full);
    ck_assert_int_eq(code, 1);
    ck_assert_str_eq(err, want);
    ck_assert_int_eq(left, 0);
    free(err), free(e), free(db), free(fill), free(full);
}
END_TEST
#else
TU_SKIPPED(totals_match_report, TU_NO_SQLITE)
TU_SKIPPED(steps_match_report, TU_NO_SQLITE)
TU_SKIPPED(bad_input, TU_NO_SQLITE)
TU_SKIPPED(full_disk_named, TU_NO_SQLITE)
#endif

Suite *suite_sqlite(void)
{
    Suite *s = suite_create("sqlite");
    TCase *tc = tcase_create("export");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, totals_match_report);
    tcase_add_test(tc, torch_totals_match_report);
    tcase_add_test(tc, steps_match_report);
    tcase_add_test(tc, bad_input);
    tcase_add_test(tc, full_disk_named);
    suite_add_tcase(s, tc);
    return s;
}
