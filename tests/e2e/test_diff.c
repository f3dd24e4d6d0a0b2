/* `opprof diff` on real runs: tests/progs/blas_calls with 1, 3 and 4000
 * repeats under `opprof run`, compared as a CI pipeline would (exit codes of
 * the real tool, exact call counts in its JSON); two large traces compared
 * in memory bounded by their rows. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tracebuild.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void)
{
    tu_rmdir(dir);
    free(dir);
}

static char *profile(const char *reps)
{
    char name[32];
    snprintf(name, sizeof name, "r%s.trace", reps);
    char *trace = tu_path(dir, name);
    char *run[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--",
                   (char *)tu_build("tests/progs/blas_calls"), (char *)reps, NULL};
    /* one OpenBLAS thread: no thread pool started inside the first call */
    ck_assert_int_eq(tu_code(tu_run(run, (char *[]){"OPENBLAS_NUM_THREADS=1", NULL}, NULL, NULL)), 0);
    return trace;
}

/* `opprof diff A B ARGS...`: its exit code, stdout and stderr in *out, *err. */
static int diff(const char *a, const char *b, const char *x1, const char *x2, const char *x3,
                char **out, char **err)
{
    char *o = tu_path(dir, "diff.out"), *e = tu_path(dir, "diff.err");
    char *argv[] = {(char *)tu_tool("opprof"), "diff", (char *)a, (char *)b,
                    (char *)x1, (char *)x2, (char *)x3, NULL};
    int code = tu_code(tu_run(argv, NULL, o, e));
    *out = tu_slurp(o);
    *err = tu_slurp(e);
    free(o), free(e);
    return code;
}

/* The JSON row line of key: it holds both sides' counts. */
static void calls_are(const char *json, const char *key, const char *a, const char *b)
{
    char want[128];
    snprintf(want, sizeof want, "{\"key\": \"%s\", \"device_type\": \"CPU\", \"class\": ", key);
    const char *p = strstr(json, want);
    ck_assert_msg(p != NULL, "no row %s in %s", key, json);
    const char *eol = strchr(p, '\n');
    char line[1024];
    snprintf(line, sizeof line, "%.*s", (int)(eol - p), p);
    snprintf(want, sizeof want, "\"a\": {\"count\": %s, ", a);
    ck_assert_msg(strstr(line, want), "%s: %s", want, line);
    snprintf(want, sizeof want, "\"b\": {\"count\": %s, ", b);
    ck_assert_msg(strstr(line, want), "%s: %s", want, line);
}

START_TEST(blas_repeats)
{
    char *t1 = profile("1"), *t3 = profile("3"), *t4000 = profile("4000"), *out, *err;
    /* 1 vs 3 repeats: every operator's calls triple, nothing added or removed */
    ck_assert_int_eq(diff(t1, t3, "-f", "json", NULL, &out, &err), 0);
    calls_are(out, "cblas_dgemm", "5", "15");
    calls_are(out, "cblas_zgemm", "1", "3");
    calls_are(out, "sgemm_", "4", "12");
    calls_are(out, "cblas_ddot", "5", "15");
    calls_are(out, "dgemv_", "2", "6");
    calls_are(out, "cblas_daxpy", "1", "3");
    calls_are(out, "cblas_dscal", "1", "3");
    ck_assert_ptr_nonnull(strstr(out, "\"added\": 0, \"removed\": 0, "));
    ck_assert_ptr_nonnull(strstr(out, "\"regression\": null,"));
    ck_assert_int_eq(tu_count_lines(out, "    {\"key\": "), 7);
    free(out), free(err);

    /* the gate: 4000 repeats against 1 is 4000 times the work (first-call
     * costs aside, which a 200% bound leaves room for; so does a preemption
     * of the one repeat's calls, up to about 15 ms on a busy machine: with
     * 400, one of 1.5 ms inside a dgemm of the one repeat hid the
     * regression) */
    ck_assert_int_eq(diff(t1, t4000, "--fail-above", "200", NULL, &out, &err), 1);
    ck_assert_ptr_nonnull(strstr(err, "opprof diff: regression above 200.00%: "));
    ck_assert_int_eq(tu_count_lines(err, "opprof diff:"), 1);
    ck_assert_ptr_nonnull(strstr(out, "7 rows: 0 added, 0 removed, "));
    free(out), free(err);
    /* one named operator */
    ck_assert_int_eq(diff(t1, t4000, "--fail-above=200", "--op", "cblas_dgemm", &out, &err), 1);
    ck_assert_ptr_nonnull(strstr(err, "opprof diff: regression above 200.00%: "));
    free(out), free(err);
    /* the other way round it got faster: no regression. The gate looks at
     * dgemm and the total, 4000 times the work in A: a row of one 100-element
     * daxpy against 4000 is a few microseconds either way, which one
     * preemption of the single call on a busy machine turns into a
     * "regression" of any size. */
    ck_assert_int_eq(diff(t4000, t1, "--fail-above=1000", "--op", "cblas_dgemm", &out, &err), 0);
    ck_assert_str_eq(err, "");
    ck_assert_ptr_nonnull(strstr(out, "(-"));
    free(out), free(err);
    /* a trace against itself: every row the same, even at 0% */
    ck_assert_int_eq(diff(t3, t3, "--fail-above", "0", NULL, &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "7 rows: 0 added, 0 removed, 0 slower, 0 faster, 7 same\n"));
    free(out), free(err);
    /* not a trace: exit 3 with the reason */
    ck_assert_int_eq(diff(t1, tu_build("tests/progs/blas_calls"), NULL, NULL, NULL, &out, &err), 3);
    ck_assert_ptr_nonnull(strstr(err, "opprof diff: "));
    ck_assert_str_eq(out, "");
    free(out), free(err);
    free(t1), free(t3), free(t4000);
}
END_TEST

/* `opprof diff` of a trace of n iterations of outer around inner against
 * another of 2n: the counts exact; the tool's peak memory in KiB. */
static long diff_kb(uint32_t n)
{
    char *a = tu_path(dir, "a.trace"), *b = tu_path(dir, "b.trace");
    tb_outer_inner(a, n);
    tb_outer_inner(b, 2 * n);
    char *argv[] = {(char *)tu_tool("opprof"), "diff", a, b, "-f", "json", NULL};
    long kb;
    char *out, na[16], nb[16], *why = tu_peak_quiet(dir, argv, &out, &kb);
    ck_assert_msg(!why, "%s", why);
    snprintf(na, sizeof na, "%u", n);
    snprintf(nb, sizeof nb, "%u", 2 * n);
    calls_are(out, "outer", na, nb);
    calls_are(out, "inner", na, nb);
    ck_assert_int_eq(tu_count_lines(out, "    {\"key\": "), 2);
    free(out), free(a), free(b);
    return kb;
}

/* Each trace's rows added up in one pass over it: 30 times the calls, the
 * same peak memory give or take 4 MiB (every call loaded: 45 MiB more). */
START_TEST(large_traces_bounded_by_rows)
{
    long small = diff_kb(5000), big = diff_kb(150000);
    ck_assert_msg(big - small < 4096, "peak %ld KiB for 900,000 calls against %ld KiB for 30,000",
                  big, small);
}
END_TEST

Suite *suite_diff(void)
{
    Suite *s = suite_create("diff");
    TCase *tc = tcase_create("blas");
    /* its gates compare the calls' times: run alone (tests/tests.mk), where
     * a preempted call of the 1-repeat run does not pass for the work */
    tcase_set_tags(tc, "timing");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, blas_repeats);
    suite_add_tcase(s, tc);
    TCase *peak = tcase_create("peak"); /* tests/tests.mk: the normal build's memory */
    tcase_set_tags(peak, "peak");
    tcase_add_checked_fixture(peak, setup, teardown);
    tcase_set_timeout(peak, 120);
    tcase_add_test(peak, large_traces_bounded_by_rows);
    suite_add_tcase(s, peak);
    return s;
}
