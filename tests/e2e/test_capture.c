/* Capture windows: OPPROF_DELAY/OPPROF_DURATION, OPPROF_CAPTURE=
 * cudaProfilerApi, schedules over steps, and `opprof ctl` from outside.
 * Nothing is recorded outside a window; the program's output does not
 * change. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tool/cmds.h"
#include "analysis/model.h"
#include "testutil.h"

TU_TRACE_FIXTURE

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

/* 2000 calls 1 ms apart, recorded from 200 ms to 400 ms after the start. */
START_TEST(delay_and_duration)
{
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "paced", "2000", "1000", NULL};
    char *out, *err;
    run(argv, "OPPROF_DELAY=0.2", "OPPROF_DURATION=0.2", &out, &err);
    ck_assert_str_eq(out, "paced 2000\n");
    ck_assert_int_eq(tu_count_lines(err, "opprof: "), 1); /* where the trace went */
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->nprocs, 1);
    const struct opp_process *p = &m->procs[0];
    unsigned long n = tu_count(m, "cblas_ddot", -1, 0, 0);
    ck_assert_uint_gt(n, 0);
    ck_assert_uint_lt(n, 2000);
    /* every recorded call began inside the window (the timer starts a
     * little after the hello that dates the process, and may wake late on
     * a busy machine: 1 s of slack after the end, the run 2 s long) */
    for (size_t ti = 0; ti < m->nthreads; ti++)
        for (size_t k = 0; k < m->threads[ti].nevents; k++) {
            uint64_t b = m->threads[ti].events[k].begin_ns;
            ck_assert_uint_ge(b, p->start_ns + 200000000ull);
            ck_assert_uint_le(b, p->start_ns + 1400000000ull);
        }
    opp_model_free(m);
    free(out), free(err);

    /* bad values: one line each, recorded throughout */
    argv[2] = "600";
    run(argv, "OPPROF_DELAY=soon", "OPPROF_DURATION=-1", &out, &err);
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

/* A fork child continues the window: it forks before the window opens, so
 * its timer starts at its first call, which is not recorded. */
START_TEST(window_in_fork_child)
{
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "forkpaced", "1000", "1000", NULL};
    char *out, *err;
    run(argv, "OPPROF_DELAY=0.2", "OPPROF_DURATION=0.2", &out, &err);
    ck_assert_str_eq(out, "forkpaced child 1000\nforkpaced 0\n");
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->nprocs, 2);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", 0, 0, 0), 0);
    unsigned long n = tu_count(m, "cblas_ddot", 1, 0, 0);
    ck_assert_uint_gt(n, 0);
    ck_assert_uint_lt(n, 1000);
    /* the window is the parent's: from 200 ms after its start (slack as
     * in delay_and_duration) */
    uint64_t start = m->procs[0].start_ns;
    for (size_t ti = 0; ti < m->nthreads; ti++)
        for (size_t k = 0; k < m->threads[ti].nevents; k++) {
            uint64_t b = m->threads[ti].events[k].begin_ns;
            ck_assert_uint_ge(b, start + 200000000ull);
            ck_assert_uint_le(b, start + 1400000000ull);
        }
    opp_model_free(m);
    free(out), free(err);
}
END_TEST

/* Outside a window nothing at all: the NVTX sample's ranges, start/end
 * ranges and marks (recorded through a path of their own) included. */
START_TEST(nvtx_outside_window)
{
    const char *prog = tu_build("tests/nvtx/nvtx_app");
    if (access(prog, X_OK) != 0) {
        fprintf(stderr, "SKIP nvtx_outside_window: no CUDA toolkit headers at build time\n");
        return;
    }
    char *p = strdup(prog);
    char *argv[] = {p, NULL};
    char *out, *err;
    run(argv, "OPPROF_DELAY=100", NULL, &out, &err);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->events, 0);
    opp_model_free(m);
    free(out), free(err), free(p);
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

/* The last step of a run ends where its range ended, not at the process's
 * exit: six steps of 6 sgemm, then 400 ms of other work, every step
 * active; ProfilerStep#5 lasts about as long as the others. */
START_TEST(schedule_last_step_ends_with_its_range)
{
    const char *prog = tu_build("tests/nvtx/train_loop");
    if (access(prog, X_OK) != 0) {
        fprintf(stderr, "SKIP schedule_last_step_ends_with_its_range: no CUDA toolkit headers\n");
        return;
    }
    char *argv[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--schedule", "active=1",
                    "--step", "nvtx:train_step", "--", (char *)prog, "6", "400", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, (char *[]){"OPENBLAS_NUM_THREADS=1", NULL}, NULL, NULL)),
                     0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    const struct opp_thread *t = &m->threads[0];
    uint64_t last = 0, step5_dur = 0, range5_end = 0;
    for (size_t k = 0; k < t->nevents; k++) {
        const struct opp_event *e = &t->events[k];
        const char *n = m->strs[e->name];
        if (!strcmp(n, "ProfilerStep#5"))
            step5_dur = e->end_ns - e->begin_ns;
        if (!strcmp(n, "train_step") && e->end_ns > range5_end)
            range5_end = e->end_ns;
        if (!strcmp(n, "ProfilerStep#5"))
            last = e->end_ns;
    }
    ck_assert_uint_gt(step5_dur, 0);
    /* at the last train_step's end (its clock read just before), not the exit */
    ck_assert_uint_le(last, range5_end);
    ck_assert_uint_lt(range5_end - last, 1000000u);
    ck_assert_uint_lt(step5_dur, 300000000u); /* far from the 400 ms that follow */
    opp_model_free(m);
}
END_TEST

/* torch's schedule over NVTX steps: skip 2, then cycles of wait 1, warmup
 * 1, active 2, twice: steps 4, 5, 8 and 9 of 14 are recorded, each as a
 * ProfilerStep#N around its train_step. */
START_TEST(schedule_nvtx_steps)
{
    const char *prog = tu_build("tests/nvtx/train_loop");
    if (access(prog, X_OK) != 0) {
        fprintf(stderr, "SKIP schedule_nvtx_steps: no CUDA toolkit headers at build time\n");
        return;
    }
    char *argv[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--schedule",
                    "skip_first=2,wait=1,warmup=1,active=2,repeat=2", "--step", "nvtx:train_step",
                    "--", (char *)prog, "14", NULL};
    char *o = tu_path(dir, "o"), *e = tu_path(dir, "e");
    ck_assert_int_eq(tu_code(tu_run(argv, (char *[]){"OPENBLAS_NUM_THREADS=1", NULL}, o, e)), 0);
    char *out = tu_slurp(o);
    ck_assert_str_eq(out, "w[1] 0.001000\n");
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->events, 4u * 12); /* 11 calls and ranges a step, and its ProfilerStep */
    ck_assert_uint_eq(tu_count(m, "train_step", -1, 0, 0), 4);
    ck_assert_uint_eq(tu_count(m, "cblas_sgemm", -1, 0, 0), 24);
    const char *steps[] = {"ProfilerStep#4", "ProfilerStep#5", "ProfilerStep#8", "ProfilerStep#9"};
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(tu_count(m, steps[i], -1, 0, 0), 1);
    /* the ProfilerStep#N ranges (recorded when each ended) found as it streams */
    char *d = tu_steps_differ(cmd_report, dir, trace,
                              (const char *[]){"ProfilerStep#5", "train_step", "cblas_sgemm", NULL});
    ck_assert_msg(!d, "%s", d);
    /* every train_step lies inside a ProfilerStep */
    const struct opp_thread *t = &m->threads[0];
    for (size_t k = 0; k < t->nevents; k++)
        if (!strcmp(m->strs[t->events[k].name], "train_step")) {
            ck_assert_uint_ne(t->events[k].parent, OPP_NO_PARENT);
            ck_assert(!strncmp(m->strs[t->events[t->events[k].parent].name], "ProfilerStep#", 13));
        }
    opp_model_free(m);
    free(out);

    /* each window on its own: steps 4-5, then 8-9; there is no third */
    char *ro, *re;
    char *w1[] = {"report", trace, "--window", "1", "--sort", "count", "--format", "csv", NULL};
    ck_assert_int_eq(tu_call(cmd_report, w1, dir, &ro, &re), 0);
    ck_assert_str_eq(re, "opprof report: window 1: steps 4 to 5\n");
    ck_assert_ptr_nonnull(strstr(ro, "\ncblas_sgemm,blas,12,"));
    /* torch's row of the steps, ProfilerStep*: this window's two */
    ck_assert_ptr_nonnull(strstr(ro, "\nProfilerStep*,nvtx,2,"));
    free(ro), free(re);
    /* a window the trace does not hold: a usage error (exit 2), in the
     * table and in each view that takes --window */
    char want[4400];
    snprintf(want, sizeof want,
             "opprof report: %s has 2 recorded windows (a schedule's runs of ProfilerStep#N), not 3\n",
             trace);
    const char *w3_views[] = {NULL, "--by-process", "--by-rank"};
    for (size_t i = 0; i < sizeof w3_views / sizeof *w3_views; i++) {
        char *w3[] = {"report", trace, "--window", "3", (char *)w3_views[i], NULL};
        ck_assert_int_eq(tu_call(cmd_report, w3, dir, &ro, &re), 2);
        ck_assert_str_eq(re, want);
        ck_assert_str_eq(ro, "");
        free(ro), free(re);
    }
    /* exported as tensorboard_trace_handler names files: HOST_PID.MS.pt.trace.json */
    char *tb = tu_path(dir, "tb");
    ck_assert_int_eq(mkdir(tb, 0700), 0);
    char *ex[] = {
        (char *)tu_tool("opprof"), "export", "chrome", trace, "--window", "3", "-o", tb, NULL};
    /* no window 3: exit 2, said in one line, nothing written */
    ck_assert_int_eq(tu_code(tu_run(ex, NULL, NULL, e)), 2);
    char *no3 = tu_slurp(e);
    snprintf(
        want, sizeof want,
        "opprof export: %s has 2 recorded windows (a schedule's runs of ProfilerStep#N), not 3\n",
        trace);
    ck_assert_str_eq(no3, want);
    free(no3);
    ck_assert_int_eq(tu_count_files(tb, ""), 2); /* "." and ".." */
    ex[5] = "2";
    ck_assert_int_eq(tu_code(tu_run(ex, NULL, NULL, e)), 0);
    ck_assert_int_eq(tu_count_files(tb, ".pt.trace.json"), 1);
    ck_assert_int_eq(tu_count_files(tb, ""), 3); /* ".", ".." and the file */
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cat '%s'/*.pt.trace.json > '%s/w2.json'", tb, dir);
    ck_assert_int_eq(system(cmd), 0);
    char *w2 = tu_path(dir, "w2.json"), *j = tu_slurp(w2);
    ck_assert_ptr_nonnull(strstr(j, "\"ProfilerStep#8\""));
    ck_assert_ptr_nonnull(strstr(j, "\"ProfilerStep#9\""));
    ck_assert_ptr_null(strstr(j, "\"ProfilerStep#4\""));
    /* a directory not there yet, named with a trailing '/': made, parents
     * too, as tensorboard_trace_handler makes its dir */
    char *made = tu_path(dir, "runs/w2/");
    ex[7] = made;
    ck_assert_int_eq(tu_code(tu_run(ex, NULL, NULL, e)), 0);
    ck_assert_int_eq(tu_count_files(made, ".pt.trace.json"), 1);
    ck_assert_int_eq(tu_count_files(made, ""), 3);
    /* the file it names is in the directory, without "runs/w2//" */
    char *said = tu_slurp(e);
    ck_assert_msg(!strncmp(said, "opprof export: window 2 -> ", 27), "%s", said);
    ck_assert_msg(strstr(said, "/runs/w2/") && !strstr(said, "//"), "%s", said);
    free(said);
    free(j), free(w2), free(tb), free(made);
    free(o), free(e);
}
END_TEST

/* Steps that begin at each call of a function: the odd ones of 10 ddot
 * calls are active (wait=1, active=1); the last ends at exit. */
START_TEST(schedule_call_steps)
{
    /* a copy: tu_build's buffers are reused after a few calls */
    char *prog = strdup(tu_build("tests/progs/scenarios"));
    char *argv[] = {prog, "loop", "10", NULL};
    char *out, *err;
    run(argv, "OPPROF_SCHEDULE=wait=1,active=1", "OPPROF_STEP=call:cblas_ddot", &out, &err);
    ck_assert_str_eq(out, "loop 10\n");
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 5);
    /* ProfilerStep events (NVTX-kind ranges, in every build) */
    const char *steps[] = {"ProfilerStep#1", "ProfilerStep#3", "ProfilerStep#5", "ProfilerStep#7",
                           "ProfilerStep#9"};
    for (int i = 0; i < 5; i++)
        ck_assert_uint_eq(tu_count(m, steps[i], -1, 0, 0), 1);
    ck_assert_uint_eq(m->events, 5 + 5);
    opp_model_free(m);
    free(out), free(err);
    /* what is wrong is said in one line, and everything is recorded */
    const char *bad[][3] = {
        {"OPPROF_SCHEDULE=wait=1,active=0", "OPPROF_STEP=call:cblas_ddot",
         "opprof: OPPROF_SCHEDULE ignored (active must be at least 1)"},
        {"OPPROF_SCHEDULE=wait=x", "OPPROF_STEP=call:cblas_ddot",
         "opprof: OPPROF_SCHEDULE ignored (values must be whole numbers from 0)"},
        {"OPPROF_SCHEDULE=pause=1", "OPPROF_STEP=call:cblas_ddot",
         "opprof: OPPROF_SCHEDULE ignored (keys are skip_first, wait, warmup, active, repeat)"},
        {"OPPROF_SCHEDULE=active=1", "OPPROF_STEP=call:no_such_fn",
         "opprof: OPPROF_SCHEDULE ignored: OPPROF_STEP names no function opprof intercepts: "
         "no_such_fn"},
        {"OPPROF_SCHEDULE=active=1", "OPPROF_STEP=epoch",
         "opprof: OPPROF_SCHEDULE ignored: OPPROF_STEP must be torch, torch:forward, nvtx:NAME, "
         "call:NAME or time:500ms, not epoch"},
        {"OPPROF_SCHEDULE=active=1", "OPPROF_STEP=time:5",
         "opprof: OPPROF_SCHEDULE ignored: OPPROF_STEP time wants 1ms to 10000s, e.g. time:500ms, "
         "not 5"},
        {"OPPROF_SCHEDULE=active=1", "OPPROF_STEP=call:",
         "opprof: OPPROF_SCHEDULE ignored: OPPROF_STEP must be torch, torch:forward, nvtx:NAME, "
         "call:NAME or time:500ms, not call:"},
        {"OPPROF_SCHEDULE=active=1", NULL,
         "opprof: OPPROF_SCHEDULE ignored: OPPROF_STEP does not say what a step is (torch, "
         "torch:forward, nvtx:NAME, call:NAME or time:500ms)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run(argv, bad[i][0], bad[i][1], &out, &err);
        ck_assert_str_eq(out, "loop 10\n");
        ck_assert_int_eq(tu_count_lines(err, bad[i][2]), 1);
        ck_assert_int_eq(tu_count_lines(err, "opprof: "), 2); /* and where the trace went */
        m = tu_load(trace);
        ck_assert_ptr_nonnull(m);
        ck_assert_uint_eq(m->events, 10);
        opp_model_free(m);
        free(out), free(err);
    }
    free(prog);
}
END_TEST

/* `opprof run` refuses a schedule or step the agent would ignore before
 * CMD starts: one line, exit 2, CMD not run, no trace. The option is named
 * when given, else the variable that came with the environment. */
/* A long run's steps each keep their name: a step's string takes no room
 * in the table of the strings that recur (49152 kept), which they would
 * fill, leaving the later steps, and every later string, unnamed. */
START_TEST(schedule_many_steps_named)
{
    char *prog = strdup(tu_build("tests/progs/scenarios"));
    char *argv[] = {prog, "loop", "50001", NULL};
    char *out, *err;
    run(argv, "OPPROF_SCHEDULE=active=100000", "OPPROF_STEP=call:cblas_ddot", &out, &err);
    ck_assert_str_eq(out, "loop 50001\n");
    ck_assert_ptr_null(strstr(err, "unnamed"));
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->events, 2 * 50001);
    uint64_t steps = 0;
    for (size_t t = 0; t < m->nthreads; t++)
        for (size_t k = 0; k < m->threads[t].nevents; k++)
            steps += !strncmp(opp_model_str(m, m->threads[t].events[k].name), "ProfilerStep#", 13);
    ck_assert_uint_eq(steps, 50001);
    ck_assert_uint_eq(tu_count(m, "ProfilerStep#50000", -1, 0, 0), 1);
    opp_model_free(m);
    free(out), free(err), free(prog);
}
END_TEST

START_TEST(run_refuses_bad_schedule)
{
    char *ran = tu_path(dir, "ran"), *e = tu_path(dir, "e");
    const char *cases[][4] = {
        {"bad", "call:cblas_ddot", NULL, "opprof run: --schedule 'bad': wants key=value pairs\n"},
        {"wait=1,active=0", "torch", NULL,
         "opprof run: --schedule 'wait=1,active=0': active must be at least 1\n"},
        {"wait=x", "torch", NULL,
         "opprof run: --schedule 'wait=x': values must be whole numbers from 0\n"},
        {"active=1", NULL, NULL,
         "opprof run: --schedule needs --step, which says what a step is (torch, torch:forward, "
         "nvtx:NAME, call:NAME or time:500ms)\n"},
        {"active=1", "", NULL,
         "opprof run: --step does not say what a step is (torch, torch:forward, nvtx:NAME, "
         "call:NAME or time:500ms)\n"},
        {"active=1", "epoch", NULL,
         "opprof run: --step must be torch, torch:forward, nvtx:NAME, call:NAME or time:500ms, "
         "not epoch\n"},
        {"active=1", "call:", NULL,
         "opprof run: --step must be torch, torch:forward, nvtx:NAME, call:NAME or time:500ms, "
         "not call:\n"},
        {"active=1", "time:5", NULL,
         "opprof run: --step time wants 1ms to 10000s, e.g. time:500ms, not 5\n"},
        {"active=1", NULL, "OPPROF_STEP=time:0ms",
         "opprof run: OPPROF_STEP time wants 1ms to 10000s, e.g. time:500ms, not 0ms\n"},
        {NULL, "torch", "OPPROF_SCHEDULE=repeat=-1",
         "opprof run: OPPROF_SCHEDULE 'repeat=-1': values must be whole numbers from 0\n"},
        /* given empty, either is refused, with a schedule or without */
        {"", "torch", NULL,
         "opprof run: --schedule wants S (as \"skip_first=10,wait=1,warmup=1,active=3,repeat=2\"), "
         "not ''\n"},
        {NULL, "", NULL,
         "opprof run: --step does not say what a step is (torch, torch:forward, nvtx:NAME, "
         "call:NAME or time:500ms)\n"},
        /* a step alone: the agent reads no step without a schedule */
        {NULL, "torch", NULL,
         "opprof run: --step says what a schedule's steps are: give --schedule too\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *argv[16];
        int k = 0;
        argv[k++] = (char *)tu_tool("opprof");
        argv[k++] = "run";
        argv[k++] = "-q";
        argv[k++] = "-o";
        argv[k++] = trace;
        if (cases[i][0]) {
            argv[k++] = "--schedule";
            argv[k++] = (char *)cases[i][0];
        }
        if (cases[i][1]) {
            argv[k++] = "--step";
            argv[k++] = (char *)cases[i][1];
        }
        argv[k++] = "--";
        argv[k++] = "touch";
        argv[k++] = ran;
        argv[k] = NULL;
        /* the variables only as the case sets them */
        char *env[] = {"OPPROF_SCHEDULE=", "OPPROF_STEP=", (char *)cases[i][2], NULL};
        ck_assert_int_eq(tu_code(tu_run(argv, env, NULL, e)), 2);
        char *err = tu_slurp(e);
        ck_assert_str_eq(err, cases[i][3]);
        ck_assert_msg(access(ran, F_OK) == -1, "CMD ran despite '%s'", cases[i][3]);
        ck_assert_int_eq(access(trace, F_OK), -1);
        free(err);
    }
    /* what the agent takes runs: OPPROF_STEP alone from the environment
     * (no schedule: the agent reads no step) */
    char *opprof = (char *)tu_tool("opprof");
    char *ok[] = {opprof, "run", "-q", "-o", trace, "--", "touch", ran, NULL};
    char *no_schedule[] = {"OPPROF_SCHEDULE=", "OPPROF_STEP=torch", NULL};
    ck_assert_int_eq(tu_code(tu_run(ok, no_schedule, NULL, e)), 0);
    ck_assert_int_eq(access(ran, F_OK), 0);
    free(ran), free(e);
}
END_TEST

/* -q leaves the report out: a --limit of its rows with it is refused
 * (exit 2, one line), before CMD runs or a trace is made. */
START_TEST(run_quiet_refuses_limit)
{
    char *ran = tu_path(dir, "ran"), *e = tu_path(dir, "e");
    char *argv[] = {(char *)tu_tool("opprof"),
                    "run",
                    "-q",
                    "--limit",
                    "5",
                    "-o",
                    trace,
                    "--",
                    "touch",
                    ran,
                    NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, e)), 2);
    char *err = tu_slurp(e);
    ck_assert_str_eq(err, "opprof run: --limit is the report's rows, which -q leaves out: give "
                          "one of them\n");
    ck_assert_int_eq(access(ran, F_OK), -1);
    ck_assert_int_eq(access(trace, F_OK), -1);
    free(err), free(ran), free(e);
}
END_TEST

/* `opprof ctl` on a job paused from the start: nothing until start; then,
 * in a second job, everything until stop. The program (scenarios pause)
 * makes 100 calls, waits at "halfway" for "go", and makes 100 more. */
static void ctl_round(int paused, const char *action, unsigned want_calls, const char *want_status)
{
    char *sock = tu_path(dir, "c.sock"), *half = tu_path(dir, "halfway"), *go = tu_path(dir, "go");
    unlink(half), unlink(go);
    int cpid = tu_collector_start(sock, trace, paused ? "--paused" : NULL);
    ck_assert_int_gt(cpid, 0);
    char se[4200], pre[4200];
    snprintf(se, sizeof se, "OPPROF_SOCKET=%s", sock);
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", tu_build("libopprof.so"));
    char *env[] = {pre, se, paused ? "OPPROF_PAUSED=1" : "OPPROF_PAUSED=", NULL};
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "pause", "100", dir, NULL};
    int pid = tu_spawn(argv, env, NULL, NULL);
    ck_assert_int_eq(tu_wait_file(half, 10000), 0);
    /* Recording, its 100 calls before halfway are in the status once the
     * collector has taken them: a ring is read from the socket in a pass
     * of its own, which may come after the status's. */
    if (!paused)
        ck_assert_int_eq(tu_collector_events(sock, 100, 10000), 0);
    char *o = tu_path(dir, "ctl.out"), *e = tu_path(dir, "ctl.err");
    char *st[] = {(char *)tu_tool("opprof"), "ctl", "status", "--socket", sock, NULL};
    ck_assert_int_eq(tu_code(tu_run(st, NULL, o, e)), 0);
    char *out = tu_slurp(o);
    ck_assert_str_eq(out, want_status);
    free(out);
    char *ac[] = {(char *)tu_tool("opprof"), "ctl", (char *)action, "--socket", sock, NULL};
    ck_assert_int_eq(tu_code(tu_run(ac, NULL, o, e)), 0);
    out = tu_slurp(o);
    ck_assert(!strncmp(out, paused ? "recording: 1 process, " : "stopped: 1 process, ", 20));
    free(out);
    close(open(go, O_CREAT | O_WRONLY, 0600));
    ck_assert_int_eq(tu_code(tu_wait(pid)), 3);
    ck_assert_int_eq(tu_collector_finish(cpid, sock), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), want_calls);
    opp_model_free(m);
    free(sock), free(half), free(go), free(o), free(e);
}

START_TEST(ctl_start_stop)
{
    ctl_round(1, "start", 100, "stopped: 1 process, 0 events so far\n");
    ctl_round(0, "stop", 100, "recording: 1 process, 100 events so far\n");
    /* no collector, or a wrong action: a line and a non-zero exit */
    char *e = tu_path(dir, "e"), *nosock = tu_path(dir, "none.sock");
    char *a1[] = {(char *)tu_tool("opprof"), "ctl", "status", "--socket", nosock, NULL};
    ck_assert_int_eq(tu_code(tu_run(a1, NULL, NULL, e)), 1);
    char *es = tu_slurp(e), want[4400];
    snprintf(want, sizeof want,
             "opprof ctl: cannot reach the collector at %s: No such file or directory\n", nosock);
    ck_assert_str_eq(es, want);
    free(es);
    char *a2[] = {(char *)tu_tool("opprof"), "ctl", "pause", NULL};
    ck_assert_int_eq(tu_code(tu_run(a2, NULL, NULL, e)), 2);
    es = tu_slurp(e);
    ck_assert_str_eq(es, "opprof ctl: unknown action 'pause' (start, stop, status or list)\n");
    free(es);
    char *a3[] = {(char *)tu_tool("opprof"), "ctl", "list", "--socket", nosock, NULL};
    ck_assert_int_eq(tu_code(tu_run(a3, NULL, NULL, e)), 2);
    es = tu_slurp(e);
    ck_assert_str_eq(
        es, "opprof ctl: list lists every collector: --socket goes with start, stop and status\n");
    free(es);
    /* twice: which one was meant? (as every command's string option) */
    char *a4[] = {
        (char *)tu_tool("opprof"), "ctl", "stop", "--socket", nosock, "-s", "b.sock", NULL};
    ck_assert_int_eq(tu_code(tu_run(a4, NULL, NULL, e)), 2);
    es = tu_slurp(e);
    snprintf(want, sizeof want,
             "opprof ctl: --socket given twice ('%s' and 'b.sock'): give it once\n", nosock);
    ck_assert_str_eq(es, want);
    free(es), free(e), free(nosock);
}
END_TEST

/* A unix socket bound at path; listening (its fd returned) or closed
 * at once (-1), as a killed collector leaves it. */
static int bound_socket(const char *path, int listening)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    if (listening) {
        ck_assert_int_eq(listen(fd, 4), 0);
        return fd;
    }
    close(fd);
    return -1;
}

/* Two jobs under `opprof run` of one user: `opprof ctl` without --socket
 * lists both (socket, pid, start, command) instead of picking one; `run
 * -v` says its socket, which --socket then takes; the socket a dead run
 * left is removed; one another user owns is not counted; --socket '' is
 * refused. */
START_TEST(ctl_lists_collectors)
{
    char *xdg = tu_path(dir, "xdg"), *sdir = tu_path(dir, "xdg/opprof"), dead[4400];
    ck_assert_int_eq(mkdir(xdg, 0700), 0);
    ck_assert_int_eq(mkdir(sdir, 0700), 0);
    pid_t gone = fork(); /* a pid that is no more */
    if (!gone)
        _exit(0);
    waitpid(gone, NULL, 0);
    snprintf(dead, sizeof dead, "%s/run-%d-1.sock", sdir, (int)gone);
    bound_socket(dead, 0);
    /* root can give a listening socket to another user (nobody) */
    char *other = tu_path(dir, "xdg/opprof/other.sock");
    int ofd = getuid() == 0 ? bound_socket(other, 1) : -1;
    if (ofd >= 0)
        ck_assert_int_eq(chown(other, 65534, 65534), 0);
    else
        fprintf(stderr, "ctl_lists_collectors: not root: no socket of another user\n");
    char xe[4400];
    snprintf(xe, sizeof xe, "XDG_RUNTIME_DIR=%s", xdg);
    char *env[] = {xe, "OPPROF_SOCKET=", NULL};
    int jobs[2];
    char *e1 = tu_path(dir, "run1.err");
    for (int j = 0; j < 2; j++) {
        char sub[16], tr[16];
        snprintf(sub, sizeof sub, "j%d", j + 1);
        /* the second's trace named with a line break: listed as one line */
        snprintf(tr, sizeof tr, j ? "j%d\n.trace" : "j%d.trace", j + 1);
        char *d = tu_path(dir, sub), *t = tu_path(dir, tr), *half = tu_path(d, "halfway");
        ck_assert_int_eq(mkdir(d, 0700), 0);
        char *argv[] = {(char *)tu_tool("opprof"), "run", j ? "-q" : "-v", "-q", "--paused", "-o", t,
                        "--", (char *)tu_build("tests/progs/scenarios"), "pause", "10", d, NULL};
        jobs[j] = tu_spawn(argv, env, NULL, j ? NULL : e1);
        ck_assert_int_eq(tu_wait_file(half, 10000), 0);
        free(d), free(t), free(half);
    }
    char *o = tu_path(dir, "ctl.out"), *e = tu_path(dir, "ctl.err");
    char *st[] = {(char *)tu_tool("opprof"), "ctl", "status", NULL};
    ck_assert_int_eq(tu_code(tu_run(st, env, o, e)), 1);
    char *err = tu_slurp(e), want[4400];
    const char *head = "opprof ctl: 2 collectors are running: say which with --socket (or "
                       "OPPROF_SOCKET)\n";
    ck_assert_msg(!strncmp(err, head, strlen(head)), "%s", err);
    snprintf(want, sizeof want, "  %s/run-", sdir);
    ck_assert_int_eq(tu_count_lines(err, want), 2);
    ck_assert_int_eq(tu_count_lines(err, ""), 3);
    for (int j = 1; j <= 2; j++) {
        snprintf(want, sizeof want, "-q --paused -o %s/j%d%s.trace -- %s pause 10 %s/j%d\n", dir, j,
                 j == 2 ? "\\n" : "", tu_build("tests/progs/scenarios"), dir, j);
        ck_assert_msg(strstr(err, want) != NULL, "%s", err);
    }
    ck_assert_int_eq(access(dead, F_OK), -1); /* the dead run's, removed */
    ck_assert_int_eq(access(other, F_OK), ofd >= 0 ? 0 : -1);
    /* `run -v` named its socket: --socket takes it */
    char *said = tu_slurp(e1), sock[4000];
    ck_assert_msg(sscanf(said, "opprof run: collector pid %*d on %3999s", sock) == 1, "%s", said);
    snprintf(want, sizeof want, "  %s  pid ", sock);
    ck_assert_msg(strstr(err, want) != NULL, "%s in %s", want, err);
    char *st1[] = {(char *)tu_tool("opprof"), "ctl", "status", "--socket", sock, NULL};
    ck_assert_int_eq(tu_code(tu_run(st1, env, o, e)), 0);
    char *out = tu_slurp(o);
    ck_assert_str_eq(out, "stopped: 1 process, 0 events so far\n");
    free(out), free(err);
    char *ls[] = {(char *)tu_tool("opprof"), "ctl", "list", NULL};
    ck_assert_int_eq(tu_code(tu_run(ls, env, o, e)), 0);
    out = tu_slurp(o);
    ck_assert_int_eq(tu_count_lines(out, ""), 2);
    snprintf(want, sizeof want, "-q --paused -o %s/j2\\n.trace -- %s pause 10 %s/j2\n", dir,
             tu_build("tests/progs/scenarios"), dir);
    ck_assert_msg(strstr(out, want) != NULL, "%s", out);
    free(out);
    char *empty[] = {(char *)tu_tool("opprof"), "ctl", "status", "--socket", "", NULL};
    ck_assert_int_eq(tu_code(tu_run(empty, env, o, e)), 2);
    err = tu_slurp(e);
    ck_assert_str_eq(err, "opprof ctl: --socket wants PATH, not ''\n");
    free(err);
    for (int j = 0; j < 2; j++) {
        char sub[16];
        snprintf(sub, sizeof sub, "j%d/go", j + 1);
        char *go = tu_path(dir, sub);
        close(open(go, O_CREAT | O_WRONLY, 0600));
        ck_assert_int_eq(tu_code(tu_wait(jobs[j])), 3); /* scenarios pause exits 3 */
        free(go);
    }
    if (ofd >= 0)
        close(ofd);
    free(xdg), free(sdir), free(other), free(e1), free(said), free(o), free(e);
}
END_TEST

/* A plain LD_PRELOAD run starts its own collector, which goes into the
 * background: `opprof ctl list` names that collector, its pid alive with
 * the collector's command line and its start time, not the pid of the
 * parent it left at once ("pid N, started ?: ?"). */
START_TEST(ctl_lists_a_preloaded_run)
{
    char *xdg = tu_path(dir, "xdg"), *half = tu_path(dir, "halfway"), *go = tu_path(dir, "go");
    ck_assert_int_eq(mkdir(xdg, 0700), 0);
    char xe[4400];
    snprintf(xe, sizeof xe, "XDG_RUNTIME_DIR=%s", xdg);
    struct tu_env env;
    const char *extra[] = {xe, NULL};
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "pause", "10", dir, NULL};
    int pid = tu_spawn(argv, tu_preload_env_list(&env, trace, extra), NULL, NULL);
    ck_assert_int_eq(tu_wait_file(half, 10000), 0);
    char *o = tu_path(dir, "ctl.out"), *e = tu_path(dir, "ctl.err");
    char *ls[] = {(char *)tu_tool("opprof"), "ctl", "list", NULL};
    char *lenv[] = {xe, "OPPROF_SOCKET=", NULL};
    ck_assert_int_eq(tu_code(tu_run(ls, lenv, o, e)), 0);
    char *out = tu_slurp(o), sock[4000], started[64];
    int cpid = 0;
    ck_assert_int_eq(tu_count_lines(out, ""), 1);
    ck_assert_msg(sscanf(out, "  %3999s  pid %d, started %63[^:]", sock, &cpid, started) == 3, "%s",
                  out);
    char cmdline[4096], proc[64];
    snprintf(proc, sizeof proc, "/proc/%d/cmdline", cpid);
    int fd = open(proc, O_RDONLY);
    ck_assert_msg(fd >= 0, "pid %d listed is not running: %s", cpid, out);
    ssize_t n = read(fd, cmdline, sizeof cmdline - 1);
    close(fd);
    ck_assert_int_gt(n, 0);
    cmdline[n] = 0;
    ck_assert_msg(strstr(cmdline, "opprof-collector") != NULL, "pid %d is %s", cpid, cmdline);
    ck_assert_msg(strcmp(started, "?") != 0, "%s", out);
    ck_assert_msg(strstr(out, "opprof-collector --socket ") != NULL, "%s", out);
    close(open(go, O_CREAT | O_WRONLY, 0600));
    ck_assert_int_eq(tu_code(tu_wait(pid)), 3); /* scenarios pause exits 3 */
    free(out), free(o), free(e), free(xdg), free(half), free(go);
}
END_TEST

Suite *suite_capture(void)
{
    Suite *s = suite_create("capture");
    TCase *tc = tcase_create("windows");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, cuda_profiler_api);
    tcase_add_test(tc, nvtx_outside_window);
    tcase_add_test(tc, schedule_nvtx_steps);
    tcase_add_test(tc, schedule_call_steps);
    tcase_add_test(tc, schedule_many_steps_named);
    tcase_add_test(tc, run_refuses_bad_schedule);
    tcase_add_test(tc, run_quiet_refuses_limit);
    tcase_add_test(tc, ctl_start_stop);
    tcase_add_test(tc, ctl_lists_collectors);
    tcase_add_test(tc, ctl_lists_a_preloaded_run);
    suite_add_tcase(s, tc);
    /* windows in time, and a step timed: run with nothing beside them (tests/tests.mk) */
    TCase *timed = tcase_create("timing");
    tcase_set_tags(timed, "timing");
    tcase_add_checked_fixture(timed, setup, teardown);
    tcase_set_timeout(timed, 60);
    tcase_add_test(timed, delay_and_duration);
    tcase_add_test(timed, schedule_last_step_ends_with_its_range);
    tcase_add_test(timed, window_in_fork_child);
    suite_add_tcase(s, timed);
    return s;
}
