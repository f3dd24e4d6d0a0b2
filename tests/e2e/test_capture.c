/* Capture windows: OPPROF_DELAY/OPPROF_DURATION and
 * OPPROF_CAPTURE=cudaProfilerApi. Nothing is recorded outside a window; the
 * program's output does not change. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "testutil.h"

static char *dir, *trace;

static void setup(void)
{
    dir = tu_tmpdir();
    trace = tu_path(dir, "t.trace");
}
static void teardown(void)
{
    tu_rmdir(dir);
    free(dir);
    free(trace);
}

/* Run argv under the preload with extra settings; its stdout and stderr. */
static void run(char **argv, const char *e1, const char *e2, char **out, char **err)
{
    struct tu_env te;
    char **pe = tu_preload_env(&te, trace, e1);
    int k = 0;
    while (pe[k])
        k++;
    pe[k] = (char *)e2;
    pe[k + (e2 != NULL)] = NULL;
    char *o = tu_path(dir, "out"), *e = tu_path(dir, "err");
    ck_assert_int_eq(tu_code(tu_run(argv, pe, o, e)), 0);
    *out = tu_slurp(o);
    *err = tu_slurp(e);
    free(o), free(e);
}

/* 600 calls 1 ms apart, recorded from 200 ms to 400 ms after the start. */
START_TEST(delay_and_duration)
{
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "paced", "600", "1000", NULL};
    char *out, *err;
    run(argv, "OPPROF_DELAY=0.2", "OPPROF_DURATION=0.2", &out, &err);
    ck_assert_str_eq(out, "paced 600\n");
    ck_assert_int_eq(tu_count_lines(err, "opprof: "), 1); /* where the trace went */
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->nprocs, 1);
    const struct opp_process *p = &m->procs[0];
    unsigned long n = tu_count(m, "cblas_ddot", -1, 0, 0);
    ck_assert_uint_gt(n, 0);
    ck_assert_uint_lt(n, 600);
    /* every recorded call began inside the window (the timer starts a
     * little after the hello that dates the process: 20 ms of slack) */
    for (size_t ti = 0; ti < m->nthreads; ti++)
        for (size_t k = 0; k < m->threads[ti].nevents; k++) {
            uint64_t b = m->threads[ti].events[k].begin_ns;
            ck_assert_uint_ge(b, p->start_ns + 200000000ull);
            ck_assert_uint_le(b, p->start_ns + 420000000ull);
        }
    opp_model_free(m);
    free(out), free(err);

    /* bad values: one line each, recorded throughout */
    run(argv + 0, "OPPROF_DELAY=soon", "OPPROF_DURATION=-1", &out, &err);
    ck_assert_str_eq(out, "paced 600\n");
    ck_assert_int_eq(tu_count_lines(err, "opprof: OPPROF_DELAY is not a number of seconds, ignored: soon"), 1);
    ck_assert_int_eq(tu_count_lines(err, "opprof: OPPROF_DURATION is not a number of seconds, ignored: -1"), 1);
    m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 600);
    opp_model_free(m);
    free(out), free(err);
}
END_TEST

/* Only the calls from cudaProfilerStart to cudaProfilerStop (the Start
 * included, the Stop not), like nsys -c cudaProfilerApi. Without a driver
 * the runtime answers 35 and the symbol fallback records the calls. */
START_TEST(cuda_profiler_api)
{
    const char *prog = tu_build("tests/cuda/profiler_range");
    if (access(prog, X_OK) != 0) {
        fprintf(stderr, "SKIP cuda_profiler_api: no CUDA toolkit at build time\n");
        return;
    }
    char *argv[] = {(char *)prog, NULL};
    const char *want = "before 35\nstart 35\ninside 35\ninside 35\nstop 35\nafter 35\n";
    char *out, *err;
    run(argv, "OPPROF_CAPTURE=cudaProfilerApi", NULL, &out, &err);
    ck_assert_str_eq(out, want);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->events, 3);
    ck_assert_uint_eq(tu_count(m, "cudaProfilerStart", -1, 0, 0), 1);
    ck_assert_uint_eq(tu_count(m, "cudaGetDeviceCount", -1, 0, 0), 2);
    ck_assert_uint_eq(tu_count(m, "cudaProfilerStop", -1, 0, 0), 0);
    opp_model_free(m);
    free(out), free(err);
    /* the same program without the setting: every call */
    run(argv, NULL, NULL, &out, &err);
    ck_assert_str_eq(out, want);
    m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(tu_count(m, "cudaGetDeviceCount", -1, 0, 0), 4);
    ck_assert_uint_eq(tu_count(m, "cudaProfilerStop", -1, 0, 0), 1);
    opp_model_free(m);
    free(out), free(err);
    /* an unknown capture mode: one line, everything recorded */
    run(argv, "OPPROF_CAPTURE=nvtx", NULL, &out, &err);
    ck_assert_int_eq(tu_count_lines(err, "opprof: OPPROF_CAPTURE must be cudaProfilerApi, ignored: nvtx"), 1);
    free(out), free(err);
}
END_TEST

Suite *suite_capture(void)
{
    Suite *s = suite_create("capture");
    TCase *tc = tcase_create("windows");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, delay_and_duration);
    tcase_add_test(tc, cuda_profiler_api);
    suite_add_tcase(s, tc);
    return s;
}
