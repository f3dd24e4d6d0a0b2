/* `opprof report` on the suites' trace (report_trace.h): what goes to
 * stdout and stderr, the exit statuses, usage errors, a trace cut short,
 * a file that is not a trace, the help. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/aggregate.h"
#include "tool/cmds.h"
#include "views/columns.h"
#include "views/fmt.h"
#include "analysis/model.h"
#include "analysis/summarize.h"
#include "views/output.h"
#include "report_trace.h"
#include "testutil.h"

/* ---- the command ---- */

/* Run cmd_report with stdout and stderr captured. */
static int run_report(char **argv, char **out, char **err)
{
    int rc = tu_call(cmd_report, argv, dir, out, err);
    ck_assert_int_ne(rc, -1000);
    return rc;
}

/* The trace cut inside its END chunk; its size before. */
static long cut_trace(void)
{
    FILE *f = fopen(trace, "r+");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    fclose(f);
    ck_assert_int_eq(truncate(trace, size - 10), 0);
    return size;
}

/* A trace cut inside its END chunk: the report of what was read, and the
 * warnings. */
START_TEST(command_cut_trace_warns)
{
    char *out, *err;
    long size = cut_trace();
    char *a1[] = {"report", trace, "--sort", "count", "--limit", "1", "--format", "csv", NULL};
    ck_assert_int_eq(run_report(a1, &out, &err), 0);
    ck_assert_str_eq(out, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,"
                          "flops\ncblas_dgemm,blas,4,2.200,5.000,1.250,24002000\n");
    char want[512];
    snprintf(want, sizeof want,
             "opprof report: warning: trace cut at byte %ld: last chunk has 14 of its 24 bytes\n"
             "opprof report: warning: 5 records were dropped (buffers full): a larger "
             "OPPROF_BUFFER (slots per thread) makes room; OPPROF_DROP=block waits instead of "
             "dropping\n"
             "opprof report: warning: 1 call was still running when its process died: "
             "shown with the process's end time\n"
             "opprof report: warning: 1 process was still running when the trace was finished: "
             "what it did after that is not in it\n",
             size - 40);
    ck_assert_str_eq(err, want);
    free(out);
    free(err);
}
END_TEST

/* A second trace's warning names it: a path with a terminal's control
 * bytes is escaped there as everywhere (ESC as \x1b). */
START_TEST(command_warning_names_the_trace_escaped)
{
    char *copy = tu_path(dir, "cut\x1b[31m.trace");
    FILE *in = fopen(trace, "rb"), *to = fopen(copy, "wb");
    ck_assert(in && to);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        ck_assert_uint_eq(fwrite(buf, 1, n, to), n);
    fclose(in);
    ck_assert_int_eq(fclose(to), 0);
    struct stat st;
    ck_assert_int_eq(stat(copy, &st), 0);
    ck_assert_int_eq(truncate(copy, st.st_size - 10), 0);
    char *out, *err, *a[] = {"report", trace, copy, "--format", "csv", NULL};
    ck_assert_int_eq(run_report(a, &out, &err), 0);
    char want[1024];
    snprintf(want, sizeof want,
             "opprof report: warning: %s/cut\\x1b[31m.trace: trace cut at byte %ld: last chunk "
             "has 14 of its 24 bytes\n",
             dir, (long)st.st_size - 40);
    ck_assert_msg(!strncmp(err, want, strlen(want)), "%s", err);
    ck_assert_ptr_null(strchr(err, '\x1b'));
    free(out), free(err), free(copy);
}
END_TEST

START_TEST(command_table_only_on_stdout)
{
    char *out, *err;
    char *a2[] = {"report", "--pid", "200", trace, "--group-by-shape", NULL};
    ck_assert_int_eq(run_report(a2, &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "      [[64, 64], [64, 64], [64, 64]]  \n"));
    ck_assert_ptr_nonnull(strstr(out, "\nSelf CPU time total: 2.000us\n"));
    ck_assert(!strncmp(out, "----------  ", 12)); /* nothing before the table */
    free(out);
    free(err);
}
END_TEST

START_TEST(command_json_of_cut_trace)
{
    char *out, *err;
    cut_trace();
    char *a3[] = {"report", trace, "--format", "json", "--tid", "101", NULL};
    ck_assert_int_eq(run_report(a3, &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(
        out, "\"complete\": false,\n  \"processes_cut\": 1,\n  \"warning\": \"trace cut at byte"));
    ck_assert_ptr_nonnull(strstr(out, "\n  \"self_cpu_time_total\": 0.300,\n"));
    free(out);
    free(err);
}
END_TEST

START_TEST(command_usage_errors)
{
    char *out, *err;
    /* Usage errors: exit 2, one line. */
    struct {
        char *argv[6];
        const char *err;
    } bad[] = {
        {{"report", trace, "--sort", "device_time_total", NULL},
         "opprof report: unknown sort key 'device_time_total' (one of: self_cpu_time_total, "
         "cpu_time_total, cpu_time, count, flops, self_cuda_time_total, cuda_time_total, "
         "cuda_time, self_cuda_memory_usage, cuda_memory_usage, cpu_memory_usage, "
         "self_cpu_memory_usage)\n"},
        {{"report", trace, "--limit", "ten", NULL},
         "opprof report: --limit wants a positive number of rows, not 'ten'\n"},
        {{"report", trace, "--limit", "0", NULL},
         "opprof report: --limit wants a positive number of rows, not '0'\n"},
        {{"report", trace, "--pid", "12x", NULL},
         "opprof report: --pid wants a number, not '12x'\n"},
        {{"report", trace, "--format", "xml", NULL},
         "opprof report: unknown format 'xml' (one of: table, csv, json)\n"},
        {{"report", trace, "--frobnicate", NULL},
         "opprof report: unknown option '--frobnicate' (see 'opprof report --help')\n"},
        {{"report", trace, "--sort", NULL}, "opprof report: option '--sort' wants a value\n"},
        {{"report", NULL}, "opprof report: which trace? (usage: opprof report TRACE [options])\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(run_report(bad[i].argv, &out, &err), 2);
        ck_assert_str_eq(out, "");
        ck_assert_str_eq(err, bad[i].err);
        free(out);
        free(err);
    }
}
END_TEST

START_TEST(command_not_a_trace)
{
    char *out, *err;
    char want[512];
    /* Not a trace: exit 1. */
    char *notes = tu_path(dir, "notes");
    FILE *f = fopen(notes, "w");
    fputs("not a trace\n", f);
    fclose(f);
    char *a4[] = {"report", notes, NULL};
    ck_assert_int_eq(run_report(a4, &out, &err), 1);
    snprintf(want, sizeof want, "opprof report: %s is not an opprof trace (bad magic)\n", notes);
    ck_assert_str_eq(err, want);
    ck_assert_str_eq(out, "");
    free(out);
    free(err);
    free(notes);
}
END_TEST

/* A trace path with a newline, a terminal escape and a byte that is not
 * UTF-8: one line, those bytes escaped. */
START_TEST(command_hostile_path)
{
    char *out, *err, want[4400];
    char *hostile = tu_path(dir, "x\nopprof report: fake\x1b[2J\xff.trace");
    FILE *f = fopen(hostile, "w");
    fputs("not a trace\n", f);
    fclose(f);
    char *argv[] = {"report", hostile, NULL};
    ck_assert_int_eq(run_report(argv, &out, &err), 1);
    snprintf(want, sizeof want,
             "opprof report: %s/x\\nopprof report: fake\\x1b[2J\\xff.trace is not an opprof "
             "trace (bad magic)\n",
             dir);
    ck_assert_str_eq(err, want);
    ck_assert_str_eq(out, "");
    free(out), free(err), free(hostile);
}
END_TEST

/* A summary's drops at its node bound (their own DROPPED thread, version
 * 10) are said apart from full buffers, with the bound's advice alone:
 * OPPROF_BUFFER cannot help them. */
START_TEST(command_summary_drops_said_apart)
{
    char *path = tu_path(dir, "drops.opprof");
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 0, .pid = 10, .ppid = 1, .parent = UINT32_MAX, .real = 1,
               .exe = "/usr/bin/app", .argv = {"app"});
    tb_funcs(&b, [0] = {OPP_OP_PLAIN, OPP_DT_NONE, "blas", "cblas_ddot"});
    tb_thread(&b, 10, "app");
    tb_events(&b, TB_CALL(0, 1000, 2000, 0));
    tb_dropped(&b, 3);
    b.tid = OPP_DROPPED_SUMMARY;
    tb_dropped(&b, 5);
    tb_process_end(&b, 0, OPP_END_EXITED, 3000);
    tb_end(&b);
    char *out, *err;
    char *argv[] = {"report", path, "--format", "csv", NULL};
    ck_assert_int_eq(run_report(argv, &out, &err), 0);
    ck_assert_str_eq(err, "opprof report: warning: 3 records were dropped (buffers full): a larger "
                          "OPPROF_BUFFER (slots per thread) makes room; OPPROF_DROP=block waits "
                          "instead of dropping\n"
                          "opprof report: warning: 5 calls on new call paths past the summary's "
                          "bound were dropped: OPPROF_MAX_NODES (opprof run --max-nodes, opprof "
                          "summarize --max-nodes) keeps more\n");
    free(out), free(err), free(path);
}
END_TEST

/* Records lost to a signal handler's interruption of a thread's recording
 * (their own DROPPED reason, version 11) are said apart from full buffers,
 * with no advice to enlarge them, also in the trace's summary (opprof
 * summarize keeps the reason); a trace of version 10 has only full
 * buffers' DROPPED chunks. */
START_TEST(command_interrupted_drops_said_apart)
{
    char *path = tu_path(dir, "drops.opprof");
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 0, .pid = 10, .ppid = 1, .parent = UINT32_MAX, .real = 1,
               .exe = "/usr/bin/app", .argv = {"app"});
    tb_funcs(&b, [0] = {OPP_OP_PLAIN, OPP_DT_NONE, "blas", "cblas_ddot"});
    tb_thread(&b, 10, "app");
    tb_events(&b, TB_CALL(0, 1000, 2000, 0));
    tb_dropped(&b, 3);
    tb_dropped_why(&b, 2, OPP_DROP_INTERRUPTED);
    tb_process_end(&b, 0, OPP_END_EXITED, 3000);
    tb_end(&b);
    char *out, *err;
    char *argv[] = {"report", path, "--format", "csv", NULL};
    ck_assert_int_eq(run_report(argv, &out, &err), 0);
    ck_assert_str_eq(err, "opprof report: warning: 3 records were dropped (buffers full): a larger "
                          "OPPROF_BUFFER (slots per thread) makes room; OPPROF_DROP=block waits "
                          "instead of dropping\n"
                          "opprof report: warning: 2 records were dropped (a signal handler "
                          "interrupted opprof recording a call): not for want of room: a larger "
                          "OPPROF_BUFFER would not keep them\n");
    free(out), free(err);
    char *sum = tu_path(dir, "drops.summary"), e[256];
    struct opp_summarized res;
    ck_assert_msg(opp_summarize(path, sum, NULL, 1000, &res, e, sizeof e) == 0, "%s", e);
    char *sargv[] = {"report", sum, "--format", "csv", NULL};
    ck_assert_int_eq(run_report(sargv, &out, &err), 0);
    ck_assert_str_eq(err, "opprof report: warning: 3 records were dropped (buffers full, or on new "
                          "call paths past the summary's bound: opprof summarize --max-nodes): a "
                          "larger OPPROF_BUFFER (slots per thread) makes room; OPPROF_DROP=block "
                          "waits instead of dropping\n"
                          "opprof report: warning: 2 records were dropped (a signal handler "
                          "interrupted opprof recording a call): not for want of room: a larger "
                          "OPPROF_BUFFER would not keep them\n");
    free(out), free(err), free(sum);
    b.tid = 10;
    tb_open(&b, path);
    tb_process(&b, .proc = 0, .pid = 10, .ppid = 1, .parent = UINT32_MAX, .real = 1,
               .exe = "/usr/bin/app", .argv = {"app"});
    tb_funcs(&b, [0] = {OPP_OP_PLAIN, OPP_DT_NONE, "blas", "cblas_ddot"});
    tb_thread(&b, 10, "app");
    tb_events(&b, TB_CALL(0, 1000, 2000, 0));
    tb_dropped(&b, 3);
    tb_process_end(&b, 0, OPP_END_EXITED, 3000);
    tb_end(&b);
    tb_set_version(path, 10);
    ck_assert_int_eq(run_report(argv, &out, &err), 0);
    ck_assert_str_eq(err, "opprof report: warning: 3 records were dropped (buffers full): a larger "
                          "OPPROF_BUFFER (slots per thread) makes room; OPPROF_DROP=block waits "
                          "instead of dropping\n");
    free(out), free(err), free(path);
}
END_TEST

START_TEST(command_help)
{
    char *out, *err;
    char *a5[] = {"report", "--help", NULL};
    ck_assert_int_eq(run_report(a5, &out, &err), 0);
    ck_assert(!strncmp(out, "usage: opprof report TRACE", 26));
    ck_assert_str_eq(err, "");
    free(out);
    free(err);
}
END_TEST

Suite *suite_report_command(void)
{
    Suite *s = suite_create("report_command");
    TCase *tc = tcase_create("report_command");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, command_cut_trace_warns);
    tcase_add_test(tc, command_warning_names_the_trace_escaped);
    tcase_add_test(tc, command_hostile_path);
    tcase_add_test(tc, command_table_only_on_stdout);
    tcase_add_test(tc, command_json_of_cut_trace);
    tcase_add_test(tc, command_usage_errors);
    tcase_add_test(tc, command_not_a_trace);
    tcase_add_test(tc, command_help);
    tcase_add_test(tc, command_summary_drops_said_apart);
    tcase_add_test(tc, command_interrupted_drops_said_apart);
    suite_add_tcase(s, tc);
    return s;
}
