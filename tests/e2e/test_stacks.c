/* Code stacks end to end (OPPROF_STACKS): stack_calls (main -> outer_fn ->
 * inner_fn -> cblas_ddot, 3 calls) recorded with libunwind in the program,
 * symbolized by the report tool from the memory map the trace recorded;
 * folded stacks and the flame graph by code frame; without the variable
 * nothing changes; a bad value says one line and records no stacks. The
 * operator call paths of a trace without code stacks, its code frames
 * when it has them, and the table grouped by stack, in memory bounded by
 * the paths, not the calls. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model.h"
#include "analysis/symbolize.h"
#include "testutil.h"
#include "tracebuild.h"

TU_TRACE_FIXTURE

/* Run stack_calls under `opprof run` with env (NULL: none); its stderr in *err. */
static void record(const char *env, char **err_text)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    char *run[] = {(char *)tu_tool("opprof"), "run", "-o", trace, "--",
                   (char *)tu_build("tests/progs/stack_calls"), NULL};
    char *envs[] = {(char *)env, NULL};
    ck_assert_int_eq(tu_code(tu_run(run, env ? envs : NULL, out, err)), 0);
    char *o = tu_slurp(out);
    ck_assert_str_eq(o, "786438.0\n"); /* the program's output is untouched */
    *err_text = tu_slurp(err);
    free(o), free(out), free(err);
}

/* `opprof export FMT TRACE [--frames more]` to a file: its text (the error
 * text when it fails), its exit code in *code. */
static char *export(const char *fmt, const char *more, int *code)
{
    char *path = tu_path(dir, "x.out"), *err = tu_path(dir, "x.err");
    char *argv[] = {(char *)tu_tool("opprof"), "export", (char *)fmt, trace, "-o", path,
                    NULL, NULL, NULL};
    if (more) {
        argv[6] = "--frames";
        argv[7] = (char *)more;
    }
    *code = tu_code(tu_run(argv, NULL, NULL, err));
    char *t = *code == 0 ? tu_slurp(path) : tu_slurp(err);
    free(path), free(err);
    return t;
}

/* The 3 cblas_ddot events: their self time summed, in us as folded stacks
 * give it; each one's code stack id (all the same) in *stack. */
static uint64_t ddot_us(const struct opp_model *m, uint32_t *stack)
{
    uint64_t ns = 0;
    unsigned n = 0;
    *stack = UINT32_MAX;
    for (size_t k = 0; k < m->nthreads; k++)
        for (size_t i = 0; i < m->threads[k].nevents; i++) {
            const struct opp_event *e = &m->threads[k].events[i];
            ck_assert_str_eq(opp_model_str(m, e->name), "cblas_ddot");
            ns += e->self_ns;
            if (*stack != UINT32_MAX)
                ck_assert_uint_eq(e->stack, *stack);
            *stack = e->stack;
            n++;
        }
    ck_assert_uint_eq(n, 3);
    return ns / 1000;
}

START_TEST(stacks_three_frames_exact)
{
    char *err;
    record("OPPROF_STACKS=3", &err);
    ck_assert_int_eq(tu_count_lines(err, "opprof: OPPROF_STACKS"), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    uint32_t st;
    uint64_t us = ddot_us(m, &st);
    ck_assert_uint_ne(st, 0);
    ck_assert_uint_gt(us, 0);
    const char *fr[8];
    ck_assert_int_eq(opp_code_frames(m->code, m->threads[0].proc, st, fr, 8), 3);
    ck_assert_str_eq(fr[0], "inner_fn");
    ck_assert_str_eq(fr[1], "outer_fn");
    ck_assert_str_eq(fr[2], "main");

    char want[128];
    int code;
    snprintf(want, sizeof want, "main;outer_fn;inner_fn;cblas_ddot %" PRIu64 "\n", us);
    char *t = export("stacks", NULL, &code); /* code frames: the default for this trace */
    ck_assert_int_eq(code, 0);
    ck_assert_str_eq(t, want);
    free(t);
    t = export("stacks", "code", &code);
    ck_assert_int_eq(code, 0);
    ck_assert_str_eq(t, want);
    free(t);
    snprintf(want, sizeof want, "cblas_ddot %" PRIu64 "\n", us);
    t = export("stacks", "ops", &code);
    ck_assert_int_eq(code, 0);
    ck_assert_str_eq(t, want);
    free(t);
    t = export("flamegraph", NULL, &code);
    ck_assert_int_eq(code, 0);
    ck_assert_ptr_nonnull(strstr(t, "<title>main ("));
    ck_assert_ptr_nonnull(strstr(t, "<title>outer_fn ("));
    ck_assert_ptr_nonnull(strstr(t, "<title>inner_fn ("));
    ck_assert_ptr_nonnull(strstr(t, "<title>cblas_ddot ("));
    ck_assert_ptr_nonnull(strstr(t, "self CPU time by code frame"));
    free(t);
    opp_model_free(m);
    free(err);
}
END_TEST

START_TEST(stacks_eight_frames_contain_the_calls)
{
    char *err;
    record("OPPROF_STACKS=8", &err);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    uint32_t st;
    uint64_t us = ddot_us(m, &st);
    int code;
    char *t = export("stacks", NULL, &code);
    ck_assert_int_eq(code, 0);
    ck_assert_int_eq(tu_count_lines(t, ""), 1); /* one path: the same stack 3 times */
    char tail[128];
    snprintf(tail, sizeof tail, ";main;outer_fn;inner_fn;cblas_ddot %" PRIu64 "\n", us);
    ck_assert_uint_gt(strlen(t), strlen(tail));
    ck_assert_str_eq(t + strlen(t) - strlen(tail), tail); /* libc's frames above main */
    free(t);
    opp_model_free(m);
    free(err);
}
END_TEST

START_TEST(stacks_off_changes_nothing)
{
    char *err;
    record(NULL, &err);
    ck_assert_ptr_null(strstr(err, "OPPROF_STACKS"));
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    uint32_t st;
    uint64_t us = ddot_us(m, &st);
    ck_assert_uint_eq(st, 0);
    ck_assert_ptr_null(m->code);
    char want[128];
    int code;
    snprintf(want, sizeof want, "cblas_ddot %" PRIu64 "\n", us);
    char *t = export("stacks", NULL, &code);
    ck_assert_int_eq(code, 0);
    ck_assert_str_eq(t, want);
    free(t);
    t = export("stacks", "code", &code);
    ck_assert_int_eq(code, 2); /* what it does not hold, as a metric or a device */
    ck_assert_str_eq(t, "opprof export: the trace has no code stacks (record with OPPROF_STACKS=N)\n");
    free(t);
    opp_model_free(m);
    free(err);
}
END_TEST

static const char *const bad_values[] = {"OPPROF_STACKS=0", "OPPROF_STACKS=17",
                                         "OPPROF_STACKS=4x"};

START_TEST(stacks_bad_value_one_line)
{
    char *err;
    record(bad_values[_i], &err);
    char want[160];
    snprintf(want, sizeof want,
             "opprof: OPPROF_STACKS must be a number of frames from 1 to 16, got \"%s\"; code "
             "stacks off\n",
             strchr(bad_values[_i], '=') + 1);
    ck_assert_int_eq(tu_count_lines(err, "opprof: OPPROF_STACKS"), 1);
    ck_assert_ptr_nonnull(strstr(err, want));
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    uint32_t st;
    ddot_us(m, &st);
    ck_assert_uint_eq(st, 0);
    opp_model_free(m);
    free(err);
}
END_TEST

/* The tool run with argv into its output, exactly as want; its peak
 * memory in KiB. */
static long output_kb(char *const argv[], const char *want)
{
    long kb;
    char *o, *why = tu_peak_quiet(dir, argv, &o, &kb);
    ck_assert_msg(!why, "%s", why);
    ck_assert_str_eq(o, want);
    free(o);
    return kb;
}

/* `opprof export stacks` of path, as output_kb. */
static long folded_kb(const char *path, const char *want)
{
    char *argv[] = {(char *)tu_tool("opprof"), "export", "stacks", (char *)path, NULL};
    return output_kb(argv, want);
}

/* The folded stacks of a trace built by build with 10,000 and 300,000
 * iterations: small and big, the same paths, the same peak memory give
 * or take 4 MiB (every call loaded: 30 MiB more). */
static void folded_bounded(void (*build)(const char *, uint32_t), const char *small_want,
                           const char *big_want)
{
    char *small = tu_path(dir, "small.trace"), *big = tu_path(dir, "big.trace");
    build(small, 10000);
    build(big, 300000);
    long a = folded_kb(small, small_want);
    long b = folded_kb(big, big_want);
    ck_assert_msg(b - a < 4096, "peak %ld KiB for 600,000 calls against %ld KiB for 20,000", b, a);
    free(small), free(big);
}

/* The operator call paths (the fold of a trace without code stacks) as the
 * one pass merges them; self times in us: outer 80 ns a call, inner 20. */
START_TEST(operator_paths_bounded_by_paths)
{
    folded_bounded(tb_outer_inner, "outer 800\nouter;inner 200\n",
                   "outer 24000\nouter;inner 6000\n");
}
END_TEST

/* The code-frame tree of a trace with code stacks, as the one pass adds
 * it up. */
START_TEST(code_frames_bounded_by_paths)
{
    folded_bounded(tb_outer_inner_stacked, "0x20;0x10;outer 800\n0x20;0x10;inner 200\n",
                   "0x20;0x10;outer 24000\n0x20;0x10;inner 6000\n");
}
END_TEST

/* The table by the operator around each call (--group-by-stack), which
 * the pass hands over after the call: 30 times the calls, the same rows,
 * the same peak memory give or take 4 MiB (every call loaded: 30 MiB
 * more). */
START_TEST(group_by_stack_bounded_by_rows)
{
    char *small = tu_path(dir, "small.trace"), *big = tu_path(dir, "big.trace");
    tb_outer_inner(small, 10000);
    tb_outer_inner(big, 300000);
    char *argv[] = {
        (char *)tu_tool("opprof"), "report", small, "--group-by-stack", "2", "-f", "csv", NULL};
    long a = output_kb(argv, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,"
                             "cpu_time_avg_us,stack,flops\n"
                             "outer,app,10000,800.000,1000.000,0.100,,0\n"
                             "inner,app,10000,200.000,200.000,0.020,outer,0\n");
    argv[2] = big;
    long b = output_kb(argv, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,"
                             "cpu_time_avg_us,stack,flops\n"
                             "outer,app,300000,24000.000,30000.000,0.100,,0\n"
                             "inner,app,300000,6000.000,6000.000,0.020,outer,0\n");
    ck_assert_msg(b - a < 4096, "peak %ld KiB for 600,000 calls against %ld KiB for 20,000", b, a);
    free(small), free(big);
}
END_TEST

Suite *suite_stacks(void)
{
    Suite *s = suite_create("stacks");
    TCase *tc = tcase_create("code");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, stacks_three_frames_exact);
    tcase_add_test(tc, stacks_eight_frames_contain_the_calls);
    tcase_add_test(tc, stacks_off_changes_nothing);
    tcase_add_loop_test(tc, stacks_bad_value_one_line, 0, 3);
    suite_add_tcase(s, tc);
    TCase *peak = tcase_create("peak"); /* tests/tests.mk: the normal build's memory */
    tcase_set_tags(peak, "peak");
    tcase_add_checked_fixture(peak, setup, teardown);
    tcase_set_timeout(peak, 60);
    tcase_add_test(peak, operator_paths_bounded_by_paths);
    tcase_add_test(peak, group_by_stack_bounded_by_rows);
    tcase_add_test(peak, code_frames_bounded_by_paths);
    suite_add_tcase(s, peak);
    return s;
}
