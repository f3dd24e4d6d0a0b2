/* The agent's CUPTI client end to end, against the TEST DOUBLE of the CUDA
 * runtime and CUPTI (tests/double/cuda_double.c): the program's runtime
 * calls come through CUPTI callbacks, its GPU work through activity buffers
 * on our clock, and the report's hierarchy arithmetic is checked exactly
 * against the double's known device times. (No GPU here: the double is
 * what stands in for one; scripts/gpu-validate.sh is the real thing.) */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/aggregate.h"
#include "analysis/model.h"
#include "ops.h"
#include "oracle/loaded.h"
#include "testutil.h"
#include "tool/cmds.h"

static char *dir, *trace;
static char cupti_env[4200];

static void setup(void)
{
    dir = tu_tmpdir();
    trace = tu_path(dir, "t.trace");
    snprintf(cupti_env, sizeof cupti_env, "OPPROF_CUPTI=%s",
             tu_build("tests/double/libcudart.so.13"));
}
static void teardown(void)
{
    tu_rmdir(dir);
    free(dir);
    free(trace);
}

static int have_double(void)
{
    if (access(tu_build("tests/double/gpu_app"), X_OK) == 0)
        return 1;
    fprintf(stderr, "skipped: no CUDA toolkit at build time, so no test double\n");
    return 0;
}

/* Run gpu_app [mode] under the preload, with up to three more variables
 * (NULL-terminated); its stdout and stderr. */
static int run_app_vars(const char *mode, const char *const *more, char **out, char **err)
{
    struct tu_env te;
    const char *vars[5] = {cupti_env};
    for (int i = 0; i < 3 && more[i]; i++)
        vars[i + 1] = more[i];
    char **env = tu_preload_env_list(&te, trace, vars);
    char *o = tu_path(dir, "out"), *e = tu_path(dir, "err");
    char *argv[] = {(char *)tu_build("tests/double/gpu_app"), (char *)mode, NULL};
    int code = tu_code(tu_run(argv, env, o, e));
    *out = tu_slurp(o);
    *err = tu_slurp(e);
    free(o), free(e);
    return code;
}

/* The same with up to two more variables (the second may be NULL). */
static int run_app2(const char *mode, const char *extra, const char *extra2, char **out, char **err)
{
    return run_app_vars(mode, (const char *[]){extra, extra ? extra2 : NULL, NULL}, out, err);
}

static int run_app(const char *mode, const char *extra, char **out, char **err)
{
    return run_app2(mode, extra, NULL, out, err);
}

static const struct opp_row *row(const struct opp_agg *a, const char *key)
{
    for (size_t i = 0; i < a->nrows; i++)
        if (!strcmp(a->rows[i].key, key))
            return &a->rows[i];
    ck_abort_msg("no row %s", key);
    return NULL;
}

START_TEST(api_kernels_copies_exact)
{
    if (!have_double())
        return;
    char *out, *err;
    ck_assert_int_eq(run_app(NULL, NULL, &out, &err), 0);
    ck_assert_str_eq(out, "gpu_app rc=0 same=1\n");
    ck_assert_int_eq(tu_count_lines(err, "opprof: "), 1); /* where the trace is, nothing else */
    ck_assert_int_eq(tu_count_lines(err, "opprof: trace written to "), 1);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    struct opp_agg a;
    struct opp_agg_opts o = {0};
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    /* 6 runtime entry points, 2 kernels, 2 copy directions; cudaGetDevice
       is not subscribed to (a trivial query) */
    ck_assert_uint_eq(a.nrows, 6 + 2 + 2);
    ck_assert_uint_eq(tu_count(m, "cudaGetDevice", -1, 0, 0), 0);
    ck_assert_uint_eq(a.self_cuda_time_total_ns, 3 * 11000 + 3 * 2000 + 2 * 65536);

    const struct opp_row *r = row(&a, "cudaLaunchKernel");
    ck_assert_uint_eq(r->count, 3);
    ck_assert_uint_eq(r->device_type, OPP_DEVICE_CPU);
    ck_assert_uint_eq(r->self_cuda_time_total_ns, 10000 + 11000 + 12000);
    ck_assert_uint_eq(r->cuda_time_total_ns, 33000);
    ck_assert_uint_eq(r->self_cpu_time_total_ns, r->cpu_time_total_ns); /* no children */
    r = row(&a, "cudaGraphLaunch");
    ck_assert_uint_eq(r->count, 1);
    ck_assert_uint_eq(r->self_cuda_time_total_ns, 3 * 2000); /* three kernels, one correlation */
    r = row(&a, "cudaMemcpy");
    ck_assert_uint_eq(r->count, 2);
    ck_assert_uint_eq(r->self_cuda_time_total_ns, 2 * 65536);
    /* a synchronous copy's call lasts at least as long as the copy */
    ck_assert_uint_ge(r->cpu_time_total_ns, 2 * 65536);
    r = row(&a, "cudaMalloc");
    ck_assert_int_eq(r->self_cuda_memory_usage, 1 << 20);
    ck_assert_uint_eq(r->self_cuda_time_total_ns, 0);
    r = row(&a, "cudaFree");
    ck_assert_int_eq(r->self_cuda_memory_usage, -(1 << 20));
    r = row(&a, "cudaDeviceSynchronize");
    ck_assert_uint_eq(r->count, 1);
    ck_assert_uint_eq(r->cuda_time_total_ns, 0);

    r = row(&a, "step(float*, int)"); /* demangled */
    ck_assert_uint_eq(r->device_type, OPP_DEVICE_CUDA);
    ck_assert_uint_eq(r->count, 3);
    ck_assert_uint_eq(r->self_cuda_time_total_ns, 33000);
    ck_assert_uint_eq(r->cpu_time_total_ns, 0);
    r = row(&a, "graph_op()");
    ck_assert_uint_eq(r->count, 3);
    ck_assert_uint_eq(r->cuda_time_total_ns, 6000);
    r = row(&a, "Memcpy HtoD (Pageable -> Device)");
    ck_assert_uint_eq(r->count, 1);
    ck_assert_uint_eq(r->bytes, 1 << 20);
    ck_assert_uint_eq(r->cuda_time_total_ns, 65536);
    r = row(&a, "Memcpy DtoH (Device -> Pageable)");
    ck_assert_uint_eq(r->bytes, 1 << 20);
    opp_agg_free(&a);
    char tid[16];
    snprintf(tid, sizeof tid, "%u", (unsigned)m->threads[0].tid);
    opp_model_free(m);
    free(out), free(err);
    /* steps with GPU time, found as the trace streams: ops joined to
     * their calls by correlation id as the loaded model does */
    const char *names[] = {"cudaMemcpy", "cudaLaunchKernel", "cudaDeviceSynchronize",
                           "cudaMalloc", NULL};
    char *d = tu_steps_differ(cmd_report, dir, trace, names);
    ck_assert_msg(!d, "%s", d);
    /* and the GPU view: its kernels, streams, devices and gaps */
    const char *gv[][6] = {{"report", trace, "--gpu"},
                           {"report", trace, "--gpu", "--limit", "1"},
                           {"report", trace, "--gpu", "--tid", tid},
                           {"report", trace, "-f", "json"}};
    for (int i = 0; i < 4; i++) {
        d = tu_stream_differ(cmd_report, dir, gv[i]);
        ck_assert_msg(!d, "%s", d);
    }
    char *sv[] = {"report", trace, "--step", "cudaMemcpy", "--stream", NULL};
    ck_assert_int_eq(tu_call(cmd_report, sv, dir, &out, &err), 0);
    ck_assert_msg(strstr(out, "GPU (CUDA)"), "%s", out);
    free(out), free(err);
}
END_TEST

/* The program's own driver calls come through CUPTI's DRIVER_API domain:
 * a call is recorded, the hot query torch makes hundreds of times a step
 * (cuDevicePrimaryCtxGetState) is turned off in CUPTI, never recorded.
 * The driver call a runtime call makes (cudaDeviceSynchronize's
 * cuCtxSynchronize) is the runtime call's work, not the program's call. */
START_TEST(driver_queries_not_recorded)
{
    if (!have_double())
        return;
    char *out, *err;
    ck_assert_int_eq(run_app("driver", NULL, &out, &err), 0);
    ck_assert_str_eq(out, "gpu_app rc=0 active=1\n");
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(tu_count(m, "cuCtxSynchronize", -1, 0, 0), 1);
    ck_assert_uint_eq(tu_count(m, "cudaDeviceSynchronize", -1, 0, 0), 1);
    ck_assert_uint_eq(tu_count(m, "cuDevicePrimaryCtxGetState", -1, 0, 0), 0);
    ck_assert_uint_eq(tu_count(m, "cudaGetDevice", -1, 0, 0), 0);
    opp_model_free(m);
    free(out), free(err);
}
END_TEST

/* A runtime call that returns a string, not a cudaError_t: its status is
 * recorded as 0, never the returned pointer's bytes read as a status. */
START_TEST(no_status_calls_read_no_status)
{
    if (!have_double())
        return;
    char *out, *err;
    ck_assert_int_eq(run_app("errstr", NULL, &out, &err), 0);
    ck_assert_str_eq(out, "invalid argument, no error\n");
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    int seen = 0;
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        for (size_t i = 0; i < t->nevents; i++) {
            const struct opp_event *e = &t->events[i];
            if (strcmp(opp_model_str(m, e->name), "cudaGetErrorString"))
                continue;
            seen++;
            const uint64_t *a = opp_event_args(t, e);
            ck_assert_ptr_nonnull(a);
            ck_assert_uint_gt(e->nargs, OPP_COL_CUDA_STATUS);
            ck_assert_uint_eq(a[OPP_COL_CUDA_STATUS], 0);
        }
    }
    ck_assert_int_eq(seen, 2);
    opp_model_free(m);
    free(out), free(err);
}
END_TEST

/* The program's stderr once its collector, which outlives a program
 * killed by a signal, said where the trace went (the trace is whole then):
 * err as run_app left it, read again until then (at most 10 s). */
static char *err_when_written(char *err)
{
    char *path = tu_path(dir, "err");
    for (int i = 0; i < 1000 && !strstr(err, "opprof: trace written to "); i++) {
        usleep(10000);
        free(err);
        err = tu_slurp(path);
    }
    free(path);
    return err;
}

/* Killed by SIGTERM after its work: the GPU records CUPTI still held are
 * handed over by our handler, and the program still dies of SIGTERM. */
START_TEST(sigterm_hands_gpu_records_over)
{
    if (!have_double())
        return;
    char *out, *err;
    ck_assert_int_eq(run_app("term", NULL, &out, &err), 128 + 15);
    ck_assert_str_eq(out, "gpu_app rc=0 same=1\n");
    err = err_when_written(err); /* the trace whole */
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    struct opp_agg a;
    struct opp_agg_opts o = {0};
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    ck_assert_uint_eq(a.gpu_ops, 3 + 3 + 2);
    ck_assert_uint_eq(row(&a, "cudaLaunchKernel")->self_cuda_time_total_ns, 33000);
    opp_agg_free(&a);
    opp_model_free(m);
    free(out), free(err);
}
END_TEST

/* SIGTERM while CUPTI's forced flush hangs, in a program that blocks
 * SIGALRM: the handler waits 2 s for the flush, says in one line that it
 * did not end, and the program dies of SIGTERM; its calls are recorded.
 * (An alarm of ours would never have come: the program blocks it.) */
START_TEST(sigterm_with_a_hung_flush_still_dies)
{
    if (!have_double())
        return;
    char *out, *err;
    ck_assert_int_eq(run_app2("term_noalarm", "DOUBLE_CUPTI_FLUSH_HANG=1", NULL, &out, &err), 128 + 15);
    ck_assert_str_eq(out, "gpu_app rc=0 same=1\n");
    err = err_when_written(err);
    char want[4400];
    snprintf(want, sizeof want,
             "opprof: the GPU flush at a fatal signal did not end within 2 s: GPU work since the "
             "last flush is lost\nopprof: trace written to %s\n",
             trace);
    ck_assert_str_eq(err, want);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(tu_count(m, "cudaLaunchKernel", -1, 0, 0), 3);
    opp_model_free(m);
    free(out), free(err);
}
END_TEST

/* Synchronisation records (CUPTI's SYNCHRONIZATION kind, torch.profiler's
 * cuda_sync) only with OPPROF_GPU_SYNC=1: then the one context
 * synchronisation of the work, attached to its cudaDeviceSynchronize. */
START_TEST(sync_records_only_when_asked)
{
    if (!have_double())
        return;
    for (int on = 0; on < 2; on++) {
        char *out, *err;
        ck_assert_int_eq(run_app("", on ? "OPPROF_GPU_SYNC=1" : NULL, &out, &err), 0);
        struct opp_model *m = tu_load(trace);
        ck_assert_ptr_nonnull(m);
        size_t syncs = 0;
        for (size_t i = 0; i < m->gpu.nops; i++) {
            const struct opp_gpu_op *op = &m->gpu.ops[i];
            if (op->type != OPP_GPU_SYNC)
                continue;
            syncs++;
            ck_assert_uint_ne(op->thread, OPP_GPU_NONE);
            const struct opp_thread *t = &m->threads[op->thread];
            ck_assert_str_eq(opp_model_str(m, opp_event_func(m, t, &t->events[op->event])->name),
                             "cudaDeviceSynchronize");
        }
        ck_assert_uint_eq(syncs, (size_t)on);
        ck_assert_uint_eq(m->gpu.nops, 3 + 3 + 2 + (size_t)on);
        opp_model_free(m);
        free(out), free(err);
    }
}
END_TEST

/* GPU operations (kernels and copies) of a trace, and its aggregate. */
static uint64_t gpu_ops(struct opp_model *m, struct opp_agg *a)
{
    struct opp_agg_opts o = {0};
    ck_assert_int_eq(tu_aggregate(m, &o, a), 0);
    return a->gpu_ops;
}

/* A program that ends with _exit half a second after its work runs no exit
 * handler, so no forced flush: its GPU records are there because the flush
 * thread asked CUPTI for complete buffers (cuptiActivityFlushAll(0)) every
 * 100 ms. With the thread off, the double (like CUPTI) hands over nothing. */
START_TEST(exit_without_handlers_keeps_flushed_work)
{
    if (!have_double())
        return;
    static const char *const period[] = {"OPPROF_GPU_FLUSH_MS=100", "OPPROF_GPU_FLUSH_MS=0"};
    for (int k = 0; k < 2; k++) {
        char *out, *err;
        ck_assert_int_eq(run_app("_exit", period[k], &out, &err), 0);
        ck_assert_str_eq(out, "gpu_app rc=0 same=1\n");
        struct opp_model *m = tu_load(trace);
        ck_assert_ptr_nonnull(m);
        /* no exit handler, so nothing of the process's own: where the
         * trace is comes from the collector once the process is gone,
         * said before the trace is let go (tu_load waits for that) */
        char *path = tu_path(dir, "err"), *said = tu_slurp(path), want[4200];
        snprintf(want, sizeof want, "opprof: trace written to %s\n", trace);
        ck_assert(!strcmp(err, "") || !strcmp(err, want));
        ck_assert_str_eq(said, want);
        free(path), free(said);
        struct opp_agg a;
        ck_assert_uint_eq(gpu_ops(m, &a), k == 0 ? 3 + 3 + 2 : 0);
        if (k == 0)
            ck_assert_uint_eq(row(&a, "cudaLaunchKernel")->self_cuda_time_total_ns, 33000);
        ck_assert_uint_eq(tu_count(m, "cudaLaunchKernel", -1, 0, 0), 3);
        opp_agg_free(&a);
        opp_model_free(m);
        free(out), free(err);
    }
}
END_TEST

/* A child forked before any CUDA call, in a parent whose CUPTI already runs
 * (the runtime was loaded at start): the child's CUPTI is the parent's
 * copy, so the agent detaches it and subscribes again there at the child's
 * first CUDA call. Both processes' kernels and copies are recorded, each
 * under its pid, and nothing is said but the trace's line. */
START_TEST(forked_child_records_its_gpu_work)
{
    if (!have_double())
        return;
    char *out, *err;
    ck_assert_int_eq(run_app("fork", NULL, &out, &err), 0);
    ck_assert_str_eq(out, "gpu_app rc=0 same=1\ngpu_app rc=0 same=1\n");
    ck_assert_int_eq(tu_count_lines(err, "opprof: "), 1);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->nprocs, 2);
    struct opp_agg a;
    ck_assert_uint_eq(gpu_ops(m, &a), 2 * (3 + 3 + 2));
    const struct opp_row *r = row(&a, "cudaLaunchKernel");
    ck_assert_uint_eq(r->count, 6);
    ck_assert_uint_eq(r->self_cuda_time_total_ns, 2 * 33000);
    ck_assert_uint_eq(row(&a, "cudaMemcpy")->self_cuda_time_total_ns, 4 * 65536);
    ck_assert_uint_eq(row(&a, "step(float*, int)")->count, 6);
    opp_agg_free(&a);
    for (int p = 0; p < 2; p++) { /* each process its own three launches, on its own */
        struct opp_agg_opts o = {.filter_pid = 1, .pid = m->procs[p].pid};
        ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
        ck_assert_uint_eq(row(&a, "cudaLaunchKernel")->self_cuda_time_total_ns, 33000);
        opp_agg_free(&a);
    }
    opp_model_free(m);
    free(out), free(err);
}
END_TEST

/* OPPROF_CAPTURE=cudaProfilerApi: the kernels launched before
 * cudaProfilerStart and after cudaProfilerStop are not recorded, like the
 * calls that launched them; the three in between are, exactly. The second
 * run is of a process whose CUPTI has made 2^32 - 3 ids already (as after
 * an hour of calls): its 32-bit ids wrap inside the window (cudaProfilerStart
 * is 0xffffffff, the steps 1, 2 and 3: 0 is no call's), and the recorded
 * ids go on past 2^32, each kernel with its own launch. */
START_TEST(capture_window_gates_gpu_work)
{
    if (!have_double())
        return;
    for (int wrap = 0; wrap < 2; wrap++) {
        char *out, *err;
        ck_assert_int_eq(run_app2("window", "OPPROF_CAPTURE=cudaProfilerApi",
                                  wrap ? "DOUBLE_CUPTI_CORR=4294967293" : NULL, &out, &err), 0);
        ck_assert_str_eq(out, "gpu_app rc=0\n");
        struct opp_model *m = tu_load(trace);
        ck_assert_ptr_nonnull(m);
        ck_assert_uint_eq(tu_count(m, "cudaLaunchKernel", -1, 0, 0), 3);
        struct opp_agg a;
        ck_assert_uint_eq(gpu_ops(m, &a), 3);
        ck_assert_uint_eq(m->gpu.unattached, 0);
        ck_assert_uint_eq(row(&a, "step(float*, int)")->self_cuda_time_total_ns, 33000);
        ck_assert_uint_eq(row(&a, "cudaLaunchKernel")->self_cuda_time_total_ns, 33000);
        ck_assert_uint_eq(a.self_cuda_time_total_ns, 33000);
        for (size_t i = 0; i < m->gpu.nops; i++) /* the launches of 10, 11, 12 us */
            ck_assert_uint_eq(m->gpu.ops[i].corr, (wrap ? (1ull << 32) + 1 : 3) + i);
        opp_agg_free(&a);
        opp_model_free(m);
        free(out), free(err);
    }
}
END_TEST

/* opprof report on the trace succeeds and warns exactly this, on stderr. */
static void report_warns(const char *warning)
{
    char *e = tu_path(dir, "rep.err"), *o = tu_path(dir, "rep.out");
    char *argv[] = {(char *)tu_tool("opprof"), "report", trace, NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, o, e)), 0);
    char *got = tu_slurp(e), want[1024];
    snprintf(want, sizeof want, "opprof report: warning: %s\n", warning);
    ck_assert_str_eq(got, want);
    free(got), free(e), free(o);
}

/* The program's own CUPTI client asks after opprof subscribed, and opprof
 * cannot let go (a CUPTI without cuptiUnsubscribe, asked of the double):
 * CUPTI refuses it as it would, the program gets that answer unchanged,
 * and opprof says once that the other tool goes without GPU activity;
 * opprof's own records are whole. */
START_TEST(second_client_refused_is_said)
{
    if (!have_double())
        return;
    char *out, *err;
    ck_assert_int_eq(run_app("kineto", "DOUBLE_CUPTI_NO_UNSUBSCRIBE=1", &out, &err), 0);
    ck_assert_str_eq(out, "gpu_app rc=0 same=1\ncuptiSubscribe: 39\n");
    ck_assert_int_eq(tu_count_lines(err, "opprof: "), 2);
    ck_assert_int_eq(tu_count_lines(err, "opprof: another CUPTI client in this process "
                                         "(torch.profiler/Kineto, nsys, ncu or DCGM) was refused "
                                         "CUPTI, which opprof holds: that tool gets no GPU activity; "
                                         "opprof records it"),
                     1);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    struct opp_agg a;
    ck_assert_uint_eq(gpu_ops(m, &a), 3 + 3 + 2);
    ck_assert_uint_eq(m->gpu.clients_refused, 1);
    opp_agg_free(&a);
    opp_model_free(m);
    /* and the report says it, beside the table */
    report_warns("another CUPTI client (torch.profiler/Kineto, nsys, ncu or DCGM) was refused "
                 "CUPTI in the profiled program, which opprof held: its own output has no GPU "
                 "activity; this trace has it");
    free(out), free(err);
}
END_TEST

/* opprof's trace of gpu_app profiler or profiler_teardown: the app's
 * launches and kernels, and what opprof said. */
static void check_handed_over(int teardown)
{
    char *out, *err;
    ck_assert_int_eq(run_app(teardown ? "profiler_teardown" : "profiler", NULL, &out, &err), 0);
    /* its profiler got what it asked for: its two kernels, and the
       callbacks of the two launches and the sync, enter and exit */
    ck_assert_str_eq(out, teardown ? "gpu_app rc=0 same=1\n"
                                     "subscribe: 0, own records: 2, own callbacks: 6\n"
                                     "unsubscribe: 0, finalize: 0\ngpu_app rc=0\n"
                                   : "gpu_app rc=0 same=1\n"
                                     "subscribe: 0, own records: 2, own callbacks: 6\n"
                                     "gpu_app rc=0\n");
    ck_assert_int_eq(tu_count_lines(err, "opprof: another CUPTI client in this process "
                                         "(torch.profiler/Kineto, nsys, ncu or DCGM) asked for "
                                         "CUPTI: opprof handed it over; CUDA calls are still "
                                         "recorded, the GPU activity is that tool's until it lets "
                                         "go of CUPTI"),
                     1);
    ck_assert_int_eq(tu_count_lines(err, "opprof: another CUPTI client in this process "
                                         "(torch.profiler/Kineto, nsys, ncu or DCGM) let go of "
                                         "CUPTI: opprof records GPU activity again"),
                     teardown);
    ck_assert_int_eq(tu_count_lines(err, "opprof: "), 2 + teardown);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    /* every launch, the profiler's two by the symbol fallback */
    ck_assert_uint_eq(tu_count(m, "cudaLaunchKernel", -1, 0, 0), 3 + 2 + 1);
    ck_assert_uint_eq(tu_count(m, "cudaDeviceSynchronize", -1, 0, 0), 1 + 1 + 1);
    struct opp_agg a;
    /* the GPU work before it asked; after it let go, the kernel "after" */
    ck_assert_uint_eq(gpu_ops(m, &a), 3 + 3 + 2 + teardown);
    ck_assert_uint_eq(m->gpu.unattached, 0);
    ck_assert_uint_eq(m->gpu.yielded, 1);
    ck_assert_uint_eq(m->gpu.retaken, (uint64_t)teardown);
    ck_assert_uint_eq(m->gpu.clients_refused, 0);
    ck_assert_uint_eq(row(&a, "cudaLaunchKernel")->self_cuda_time_total_ns,
                      33000 + (teardown ? 4000 : 0));
    if (teardown)
        ck_assert_uint_eq(row(&a, "after()")->count, 1);
    opp_agg_free(&a);
    opp_model_free(m);
    char warn[512];
    snprintf(warn, sizeof warn,
             "opprof handed CUPTI over to another client (torch.profiler/Kineto, nsys, ncu or "
             "DCGM) 1 time and took it back %d time%s: the GPU activity while that tool held "
             "CUPTI is in its own output, not in this trace (the CUDA calls are)",
             teardown, teardown == 1 ? "" : "s");
    report_warns(warn);
    free(out), free(err);
}

/* The program starts a profiler of its own after opprof subscribed, as
 * torch.profiler's Kineto does, which CUPTI would refuse: opprof lets go
 * of CUPTI for it. The program's profiler gets its subscription, its
 * callbacks and its kernels; opprof flushed what was its own before, keeps
 * recording the CUDA calls, and says so once. With Kineto's teardown
 * (cuptiUnsubscribe, cuptiFinalize), CUPTI is opprof's again from the next
 * CUDA call: its kernel is in the trace, under its launch. */
START_TEST(other_client_is_handed_cupti)
{
    if (!have_double())
        return;
    check_handed_over(0);
    check_handed_over(1);
}
END_TEST

/* A child forked before any CUDA call whose first CUDA calls launch
 * kernels, in a parent whose CUPTI runs (the runtime was loaded at start):
 * CUPTI starts in the child at its first call's entry, so all three
 * kernels are recorded, each under its launch. */
START_TEST(forked_child_first_call_kernels_recorded)
{
    if (!have_double())
        return;
    char *out, *err;
    ck_assert_int_eq(run_app("fork_launch", NULL, &out, &err), 0);
    ck_assert_str_eq(out, "child rc=0\n");
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    struct opp_agg a;
    ck_assert_uint_eq(gpu_ops(m, &a), 3);
    ck_assert_uint_eq(m->gpu.unattached, 0);
    ck_assert_uint_eq(row(&a, "cudaLaunchKernel")->count, 3);
    ck_assert_uint_eq(row(&a, "cudaLaunchKernel")->self_cuda_time_total_ns, 33000);
    ck_assert_uint_eq(row(&a, "step(float*, int)")->count, 3);
    opp_agg_free(&a);
    opp_model_free(m);
    free(out), free(err);
}
END_TEST

/* The program registers CUPTI buffer callbacks of its own after opprof's
 * (Kineto does, even when refused the subscription): what was complete
 * before is opprof's, the kernel after is the program's, and both the
 * agent and the report say so once. */
START_TEST(buffers_taken_are_said)
{
    if (!have_double())
        return;
    char *out, *err;
    ck_assert_int_eq(run_app("buffers", NULL, &out, &err), 0);
    /* its own records: the kernel, its launch's and the sync's API records
       are not made (RUNTIME is off), so one */
    ck_assert_str_eq(out, "gpu_app rc=0 same=1\nregister: 0\nown records: 1\n");
    ck_assert_int_eq(tu_count_lines(err, "opprof: another CUPTI client in this process "
                                         "(torch.profiler/Kineto, nsys, ncu or DCGM) took CUPTI's "
                                         "activity buffers: GPU activity from now on is that "
                                         "tool's, not in opprof's trace"),
                     1);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    struct opp_agg a;
    ck_assert_uint_eq(gpu_ops(m, &a), 3 + 3 + 2);
    ck_assert_uint_eq(m->gpu.buffers_taken, 1);
    ck_assert_uint_eq(tu_count(m, "cudaLaunchKernel", -1, 0, 0), 4);
    opp_agg_free(&a);
    opp_model_free(m);
    report_warns("another CUPTI client (torch.profiler/Kineto, nsys, ncu or DCGM) took CUPTI's "
                 "activity buffers in the profiled program: GPU activity after that is not in "
                 "this trace");
    free(out), free(err);
}
END_TEST

/* A descendant that inherits CUDA_INJECTION64_PATH (which the preload sets
 * to itself) but not LD_PRELOAD, or that is told OPPROF_DISABLE=1, is left
 * untouched when its driver loads the library: no trace, no line, and
 * CUPTI free for the program's own client (0: subscribed). */
START_TEST(inherited_injection_leaves_the_process_alone)
{
    if (!have_double())
        return;
    char inj[4200], output[4200];
    snprintf(inj, sizeof inj, "CUDA_INJECTION64_PATH=%s", tu_build("libopprof.so"));
    snprintf(output, sizeof output, "OPPROF_OUTPUT=%s", trace);
    for (int k = 0; k < 2; k++) {
        char *o = tu_path(dir, "out"), *e = tu_path(dir, "err");
        char *argv[] = {(char *)tu_build("tests/double/gpu_app"), "kineto", NULL};
        int code;
        if (k == 0) { /* LD_PRELOAD gone, the rest inherited */
            char *env[] = {inj, output, cupti_env, "PATH=/usr/bin:/bin", NULL};
            code = tu_code(tu_run(argv, env, o, e));
        } else {
            struct tu_env te;
            const char *vars[] = {cupti_env, inj, "OPPROF_DISABLE=1", NULL};
            code = tu_code(tu_run(argv, tu_preload_env_list(&te, trace, vars), o, e));
        }
        ck_assert_int_eq(code, 0);
        char *out = tu_slurp(o), *err = tu_slurp(e);
        ck_assert_str_eq(out, "gpu_app rc=0 same=1\ncuptiSubscribe: 0\n");
        ck_assert_str_eq(err, "");
        ck_assert_int_eq(access(trace, F_OK), -1);
        free(out), free(err), free(o), free(e);
    }
}
END_TEST

/* A CUPTI that cannot stamp GPU work with our clock (the double's own
 * clock then runs 5 s ahead and 0.1% fast): its timestamps are mapped onto
 * ours through calibration points, drift included. The work starts 0.3 s
 * in, when a fixed offset would be 300 us off: each kernel starts after
 * its launch began, the first (on an idle device) before the launch
 * returned, both within CALIB_SLACK_NS, and each lasts its time within
 * the clock's 0.1% and as much again for the points' error. stall: NULL,
 * or the double's DOUBLE_CUPTI_TS_STALL_US (a busy host preempting four
 * reads of the clocks in six: every other point has no narrow read). */
/* How far a mapped time may be off: a point's clock reads preempted on a
 * loaded 2-core host put a kernel 2 to 7 us before its launch began (CI,
 * the suites running side by side); a fixed offset would be 300 us off. */
#define CALIB_SLACK_NS 20000

static void calibrated_kernels(const char *stall)
{
    char *out, *err;
    const char *vars[] = {"DOUBLE_CUPTI_NO_TS_CALLBACK=1", "OPPROF_GPU_FLUSH_MS=20", stall, NULL};
    ck_assert_int_eq(run_app_vars("late", vars, &out, &err), 0);
    ck_assert_str_eq(out, "gpu_app rc=0 same=1\n");
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->gpu.unattached, 0);
    int kernels = 0;
    for (size_t i = 0; i < m->gpu.nops; i++) {
        const struct opp_gpu_op *op = &m->gpu.ops[i];
        if (op->type != OPP_GPU_KERNEL || op->launch == OPP_GPU_NONE)
            continue;
        const struct opp_event *ev = &m->threads[op->thread].events[op->event];
        ck_assert_msg(op->start_ns + CALIB_SLACK_NS >= ev->begin_ns,
                      "kernel %d at %llu, launch at %llu", kernels,
                      (unsigned long long)op->start_ns, (unsigned long long)ev->begin_ns);
        if (kernels == 0) /* after a synchronous copy: the device is idle */
            ck_assert_msg(op->start_ns <= ev->end_ns + CALIB_SLACK_NS,
                          "kernel at %llu, launch ended %llu", (unsigned long long)op->start_ns,
                          (unsigned long long)ev->end_ns);
        uint64_t want = (uint64_t)m->gpu.launches[op->launch].grid[0] * 1000;
        uint64_t dur = opp_gpu_op_dur(op);
        /* its 0.1% fast clock (9,990 ns for 10,000), and the slope of
           points taken on a busy host: 0.5% (CI runs saw 10,001 and 9,970;
           the offset, 300 us without calibration, is what the starts check) */
        ck_assert_msg(dur <= want + want / 200 && dur + want / 200 >= want, "%llu ns for %llu",
                      (unsigned long long)dur, (unsigned long long)want);
        kernels++;
    }
    ck_assert_int_eq(kernels, 6);
    opp_model_free(m);
    free(out), free(err);
}

START_TEST(gpu_clock_calibrated_when_not_ours)
{
    if (!have_double())
        return;
    calibrated_kernels(NULL);
    /* 5 ms stalls: a point of one such read would be 2.5 ms off */
    calibrated_kernels("DOUBLE_CUPTI_TS_STALL_US=5000");
}
END_TEST

/* The program destroys its context after the work (the double drops what
 * a destroyed context had buffered): the records were handed over when
 * the destroy began (CONTEXT_DESTROY_STARTING), with no periodic flush. */
START_TEST(context_destroy_keeps_its_records)
{
    if (!have_double())
        return;
    char *out, *err;
    ck_assert_int_eq(run_app("ctxdestroy", "OPPROF_GPU_FLUSH_MS=0", &out, &err), 0);
    ck_assert_str_eq(out, "gpu_app rc=0 same=1\n");
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    struct opp_agg a;
    ck_assert_uint_eq(gpu_ops(m, &a), 3 + 3 + 2);
    opp_agg_free(&a);
    opp_model_free(m);
    free(out), free(err);
}
END_TEST

/* A program killed (SIGTERM) while its last kernel still runs: the forced
 * flush hands that kernel over without timestamps (as CUPTI does with an
 * incomplete record); it is counted and left out, the finished one kept,
 * and the report says so. */
START_TEST(unfinished_work_is_counted_not_shown)
{
    if (!have_double())
        return;
    char *out, *err;
    ck_assert_int_eq(run_app("running", "OPPROF_GPU_FLUSH_MS=0", &out, &err), 128 + 15);
    ck_assert_str_eq(out, "gpu_app rc=0\n");
    err = err_when_written(err); /* the trace whole */
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->gpu.nops, 1);
    ck_assert_uint_eq(opp_gpu_op_dur(&m->gpu.ops[0]), 10000);
    ck_assert_uint_eq(m->gpu.unfinished, 1);
    ck_assert_uint_eq(tu_count(m, "cudaLaunchKernel", -1, 0, 0), 2);
    opp_model_free(m);
    report_warns("1 GPU activity records came without their times (the work was still running "
                 "when CUPTI was last flushed) and are left out");
    free(out), free(err);
}
END_TEST

/* Another CUPTI client holds the process: one line naming the cause; the
 * program's calls are still recorded (symbol fallback), without GPU work. */
START_TEST(cupti_held_by_another_tool)
{
    if (!have_double())
        return;
    char *out, *err;
    ck_assert_int_eq(run_app(NULL, "DOUBLE_CUPTI_HELD=1", &out, &err), 0);
    ck_assert_str_eq(out, "gpu_app rc=0 same=1\n");
    ck_assert_int_eq(tu_count_lines(err, "opprof: "), 2);
    ck_assert_int_eq(
        tu_count_lines(err, "opprof: CUPTI cannot start (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED "
                            "39 in cuptiSubscribe): another CUPTI client holds the process (nsys, "
                            "ncu, Kineto/torch.profiler or DCGM); CUDA calls are recorded by symbol "
                            "interposition, without GPU activity"),
        1);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(tu_count(m, "cudaLaunchKernel", -1, 0, 0), 3);
    ck_assert_uint_eq(tu_count(m, "cudaMemcpy", -1, 0, 0), 2);
    ck_assert_uint_eq(tu_count(m, "cudaMalloc", -1, 0, 0), 1);
    struct opp_agg a;
    struct opp_agg_opts o = {0};
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    ck_assert_uint_eq(a.gpu_ops, 0);
    opp_agg_free(&a);
    opp_model_free(m);
    free(out), free(err);
}
END_TEST

/* blas_app under the preload, with one more variable (or NULL); its
 * model, or NULL when no cuBLAS header was there to build the double. */
static struct opp_model *run_blas(const char *extra)
{
    const char *exe = tu_build("tests/double/blas_app");
    if (access(exe, X_OK) != 0) {
        fprintf(stderr, "skipped: no cuBLAS header at build time, so no cuBLAS double\n");
        return NULL;
    }
    struct tu_env te;
    char **env = tu_preload_env(&te, trace, cupti_env);
    int k = 0;
    while (env[k])
        k++;
    env[k] = (char *)extra;
    env[k + (extra != NULL)] = NULL;
    char *o = tu_path(dir, "out"), *e = tu_path(dir, "err");
    char *argv[] = {(char *)exe, NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, env, o, e)), 0);
    char *out = tu_slurp(o), *err = tu_slurp(e);
    ck_assert_str_eq(out, "blas_app rc=0\n");
    char want[4300];
    snprintf(want, sizeof want, "opprof: trace written to %s\n", trace);
    ck_assert_str_eq(err, want);
    free(out), free(err), free(o), free(e);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    return m;
}

/* The kernel launched by a recorded cudaLaunchKernel inside cublasSgemm_v2
 * is the cuBLAS call's through the nesting of events, with no external
 * correlation (off by default: CUPTI would tie ids only to API activity
 * records, which are off); the split-K kernel, whose call the agent has no
 * event for (double_unseen_launch), is then no one's. */
START_TEST(library_kernels_by_nesting)
{
    struct opp_model *m = run_blas(NULL);
    if (!m)
        return;
    ck_assert_uint_eq(m->gpu.nextcorr, 0);
    ck_assert_uint_eq(m->gpu.unattached, 2);
    const struct opp_thread *t = &m->threads[0];
    for (size_t i = 0; i < t->nevents; i++) {
        const struct opp_event *ev = &t->events[i];
        const struct opp_func *f = opp_event_func(m, t, ev);
        ck_assert_uint_eq(opp_op_extid(f->kind, opp_event_args(t, ev), ev->nargs), 0);
    }
    struct opp_agg a;
    struct opp_agg_opts ao = {0};
    ck_assert_int_eq(tu_aggregate(m, &ao, &a), 0);
    /* main kernels 64/8 + 128/8 us, each under its cudaLaunchKernel */
    const struct opp_row *r = row(&a, "cublasSgemm_v2");
    ck_assert_uint_eq(r->count, 2);
    ck_assert_uint_eq(r->self_cuda_time_total_ns, 0);
    ck_assert_uint_eq(r->cuda_time_total_ns, 8000 + 16000);
    ck_assert_uint_eq(row(&a, "cudaLaunchKernel")->self_cuda_time_total_ns, 8000 + 16000);
    opp_agg_free(&a);
    opp_model_free(m);
}
END_TEST

/* OPPROF_GPU_EXTCORR=1: the preload's real cuBLAS wrapper pushes an id
 * (kind CUSTOM2) around cublasSgemm_v2 (the cuBLAS test double), CUPTI
 * (the double) ties each API activity record made inside it to that id,
 * and the report gives the kernel whose launch is no event
 * (double_unseen_launch) to the cuBLAS call; the other kernel stays with
 * its cudaLaunchKernel. */
START_TEST(extcorr_attributes_unseen_launch)
{
    struct opp_model *m = run_blas("OPPROF_GPU_EXTCORR=1");
    if (!m)
        return;
    /* 2 GEMMs x (cudaLaunchKernel + the unseen launch) made under an id */
    ck_assert_uint_eq(m->gpu.nextcorr, 4);
    ck_assert_uint_eq(m->gpu.unattached, 0);
    /* each cuBLAS call's id (thread << 32 | its count: create is 1) is the
       external id of the two correlation ids made inside it */
    const struct opp_thread *t = &m->threads[0];
    int sgemm = 0;
    for (size_t i = 0; i < t->nevents; i++) {
        const struct opp_event *ev = &t->events[i];
        const struct opp_func *f = opp_event_func(m, t, ev);
        uint64_t id = opp_op_extid(f->kind, opp_event_args(t, ev), ev->nargs);
        ck_assert_uint_eq(!!(f->kind & OPP_OPK_EXTID), !strncmp(opp_model_str(m, f->name), "cublas", 6));
        if (strcmp(opp_model_str(m, f->name), "cublasSgemm_v2"))
            continue;
        ck_assert_uint_eq(id, (uint64_t)t->tid << 32 | (uint64_t)(2 + sgemm));
        ck_assert_uint_eq(m->gpu.extcorr[2 * sgemm].external, id);
        ck_assert_uint_eq(m->gpu.extcorr[2 * sgemm + 1].external, id);
        ck_assert_uint_eq(m->gpu.extcorr[2 * sgemm].kind, 5); /* CUSTOM2, not Kineto's */
        sgemm++;
    }
    ck_assert_int_eq(sgemm, 2);
    struct opp_agg a;
    struct opp_agg_opts ao = {0};
    ck_assert_int_eq(tu_aggregate(m, &ao, &a), 0);
    /* main kernels 64/8 + 128/8 us, reductions 32/8 + 64/8 us */
    const struct opp_row *r = row(&a, "cublasSgemm_v2");
    ck_assert_uint_eq(r->count, 2);
    ck_assert_uint_eq(r->self_cuda_time_total_ns, 4000 + 8000);
    ck_assert_uint_eq(r->cuda_time_total_ns, 8000 + 16000 + 4000 + 8000);
    r = row(&a, "cudaLaunchKernel");
    ck_assert_uint_eq(r->self_cuda_time_total_ns, 8000 + 16000);
    r = row(&a, "splitk_reduce()");
    ck_assert_uint_eq(r->count, 2);
    ck_assert_uint_eq(r->self_cuda_time_total_ns, 12000);
    ck_assert_uint_eq(row(&a, "cublasCreate_v2")->cuda_time_total_ns, 0);
    opp_agg_free(&a);
    opp_model_free(m);
    /* found as the trace streams: the reductions reach their steps through
     * the external ids, as when it is loaded */
    char *d = tu_steps_differ(cmd_report, dir, trace,
                              (const char *[]){"cublasSgemm_v2", "cudaLaunchKernel", NULL});
    ck_assert_msg(!d, "%s", d);
    char *out, *err;
    char *sv[] = {"report", trace, "--step", "cublasSgemm_v2", "--stream", "-f", "json", NULL};
    ck_assert_int_eq(tu_call(cmd_report, sv, dir, &out, &err), 0);
    /* one step, from the first call's end to the second's: the second's
     * kernels (16 us) and reduction (8 us) */
    ck_assert_msg(strstr(out, "\"gpu_us\": [24.000]"), "%s", out);
    free(out), free(err);
    d = tu_stream_differ(cmd_report, dir, (const char *[]){"report", trace, "--gpu", NULL});
    ck_assert_msg(!d, "%s", d);
    d = tu_stream_differ(cmd_report, dir, (const char *[]){"report", trace, "-f", "json", NULL});
    ck_assert_msg(!d, "%s", d);
}
END_TEST

Suite *suite_gpu_double(void)
{
    Suite *s = suite_create("gpu_double");
    TCase *tc = tcase_create("cupti_client");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, api_kernels_copies_exact);
    tcase_add_test(tc, no_status_calls_read_no_status);
    tcase_add_test(tc, driver_queries_not_recorded);
    tcase_add_test(tc, sigterm_hands_gpu_records_over);
    tcase_add_test(tc, sync_records_only_when_asked);
    tcase_add_test(tc, sigterm_with_a_hung_flush_still_dies);
    tcase_add_test(tc, cupti_held_by_another_tool);
    tcase_add_test(tc, library_kernels_by_nesting);
    tcase_add_test(tc, extcorr_attributes_unseen_launch);
    tcase_add_test(tc, forked_child_records_its_gpu_work);
    tcase_add_test(tc, capture_window_gates_gpu_work);
    tcase_add_test(tc, second_client_refused_is_said);
    tcase_add_test(tc, other_client_is_handed_cupti);
    tcase_add_test(tc, forked_child_first_call_kernels_recorded);
    tcase_add_test(tc, buffers_taken_are_said);
    tcase_add_test(tc, inherited_injection_leaves_the_process_alone);
    tcase_add_test(tc, unfinished_work_is_counted_not_shown);
    tcase_add_test(tc, context_destroy_keeps_its_records);
    suite_add_tcase(s, tc);
    /* a flush thread that must run within half a second, clock reads
     * timed: run with nothing beside them (tests/tests.mk) */
    TCase *timed = tcase_create("timing");
    tcase_set_tags(timed, "timing");
    tcase_add_checked_fixture(timed, setup, teardown);
    tcase_set_timeout(timed, 60);
    tcase_add_test(timed, exit_without_handlers_keeps_flushed_work);
    tcase_add_test(timed, gpu_clock_calibrated_when_not_ours);
    suite_add_tcase(s, timed);
    return s;
}
