/* Summary mode (OPPROF_MODE=summary, common/summary_calls.c) on real processes:
 * the collector adds calls up by call path as they arrive; the trace has
 * the same table as a full trace of the same calls, a size that does not
 * grow with the run, and the collector's memory stays flat. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tool/cmds.h"
#include "analysis/model.h"
#include "testutil.h"
#include "tracebuild.h"
#include "oracle/loaded.h"

TU_TRACE_FIXTURE

/* Calls of name (summary nodes stand for their count), in window w (-1: any). */
static uint64_t calls(const struct opp_model *m, const char *name, long w)
{
    uint64_t n = 0;
    for (size_t i = 0; i < m->nthreads; i++) {
        const struct opp_thread *t = &m->threads[i];
        for (size_t k = 0; k < t->nevents; k++)
            if (!strcmp(opp_model_str(m, t->events[k].name), name) &&
                (w < 0 || (t->stat && t->stat[k].window == (uint32_t)w)))
                n += tu_event_calls(t, k);
    }
    return n;
}

static int run_scenario(const char *out, const char *mode, char *const *args)
{
    char *argv[8] = {(char *)tu_tool("opprof"), "run", "-q", "-o", (char *)out};
    int n = 5;
    char m[64];
    if (mode) {
        snprintf(m, sizeof m, "--mode=%s", mode);
        argv[n++] = m;
    }
    argv[n++] = "--";
    argv[n] = NULL;
    char *all[16];
    memcpy(all, argv, (size_t)(n + 1) * sizeof *all);
    for (int i = 0; args[i]; i++) {
        all[n++] = args[i];
        all[n] = NULL;
    }
    char *o = tu_path(dir, "run.out"), *e = tu_path(dir, "run.err");
    int rc = tu_code(tu_run(all, NULL, o, e));
    free(o);
    free(e);
    return rc;
}

static long file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

/* Threads: every call of every thread counted, no thread kept. */
START_TEST(threads_counted)
{
    char *args[] = {(char *)tu_build("tests/progs/scenarios"), "threads", "4", "2500", NULL};
    ck_assert_int_eq(run_scenario(trace, "summary", args), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->summary);
    /* thread I makes 2500 + I calls, the main thread 0 */
    ck_assert_uint_eq(calls(m, "cblas_ddot", -1), 4 * 2500 + 0 + 1 + 2 + 3);
    ck_assert_uint_eq(m->events, 4 * 2500 + 6);
    ck_assert_uint_eq(m->nthreads, 1); /* the process's call paths, tid 0 */
    ck_assert_uint_eq(m->threads[0].tid, 0);
    ck_assert_uint_eq(m->threads[0].nevents, 1); /* one call path */
    ck_assert_uint_eq(m->dropped, 0);
    opp_model_free(m);
}
END_TEST

/* The ddot row of `opprof report --format csv` of trace: its count and
 * FLOPs, its self and total CPU (us, as printed). */
struct ddot_row {
    unsigned long long count, flops;
    char self[32], total[32];
};

static void ddot_row(const char *path, struct ddot_row *r)
{
    char *argv[] = {"report", (char *)path, "--format", "csv", NULL};
    char *out, *err;
    ck_assert_int_eq(tu_call(cmd_report, argv, dir, &out, &err), 0);
    ck_assert_int_eq(tu_count_lines(out, ""), 2); /* the header, one row */
    const char *row = strchr(out, '\n') + 1;
    ck_assert_int_eq(sscanf(row, "cblas_ddot,blas,%llu,%31[^,],%31[^,],%*[^,],%llu", &r->count,
                            r->self, r->total, &r->flops),
                     4);
    free(out), free(err);
}

/* A ddot loop (200,000 calls: the ring holds them all, so none is
 * dropped however late the collector reads), almost every call the one
 * before again: the same count and FLOPs as a full trace of the same
 * loop, all its time self time, every call one node's. */
START_TEST(loop_counted_as_full)
{
    char *full = tu_path(dir, "full.trace");
    char *args[] = {(char *)tu_build("tests/progs/scenarios"), "loop", "200000", NULL};
    ck_assert_int_eq(run_scenario(trace, "summary", args), 0);
    ck_assert_int_eq(run_scenario(full, NULL, args), 0);
    struct ddot_row rs, rf;
    ddot_row(trace, &rs);
    ddot_row(full, &rf);
    ck_assert_uint_eq(rs.count, 200000);
    ck_assert_uint_eq(rf.count, 200000);
    ck_assert_uint_eq(rs.flops, 2 * 200000);
    ck_assert_uint_eq(rf.flops, 2 * 200000);
    ck_assert_str_eq(rs.self, rs.total);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->events, 200000);
    ck_assert_uint_eq(m->dropped, 0);
    ck_assert_uint_eq(m->threads[0].nevents, 1);
    const struct opp_event *e = &m->threads[0].events[0];
    ck_assert_uint_eq(tu_event_calls(&m->threads[0], 0), 200000);
    ck_assert_uint_eq(e->self_ns, opp_event_dur(e));
    opp_model_free(m);
    free(full);
}
END_TEST

/* A process killed mid-run: what it returned from is all there. */
START_TEST(killed_process)
{
    char *args[] = {(char *)tu_build("tests/progs/scenarios"), "kill", "777", NULL};
    ck_assert_int_eq(run_scenario(trace, "summary", args), 128 + 9);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(calls(m, "cblas_ddot", -1), 777);
    ck_assert_uint_eq(m->procs[0].end_how, OPP_END_LOST);
    opp_model_free(m);
}
END_TEST

/* fork: parent and child each have their own call paths. */
START_TEST(forked_processes)
{
    char *args[] = {(char *)tu_build("tests/progs/scenarios"), "fork", "10", NULL};
    ck_assert_int_eq(run_scenario(trace, "summary", args), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->nprocs, 2);
    ck_assert_uint_eq(calls(m, "cblas_ddot", -1), 10 + 11 + 12);
    opp_model_free(m);
}
END_TEST

/* The same program in both modes: every column that does not depend on
 * the run's own timing is the same (names, calls, shapes, FLOPs, order of
 * the call tree's paths). */
START_TEST(same_rows_as_full)
{
    char *full = tu_path(dir, "full.trace");
    char *args[] = {(char *)tu_build("tests/progs/blas_calls"), "4", NULL};
    ck_assert_int_eq(run_scenario(trace, "summary", args), 0);
    ck_assert_int_eq(run_scenario(full, NULL, args), 0);
    char *ra[] = {"report", trace, "--group-by-shape", "--sort", "count", "--flops",
                  "--format", "csv", NULL};
    char *rb[] = {"report", full, "--group-by-shape", "--sort", "count", "--flops",
                  "--format", "csv", NULL};
    char *oa, *ob, *ea, *eb;
    ck_assert_int_eq(tu_call(cmd_report, ra, dir, &oa, &ea), 0);
    ck_assert_int_eq(tu_call(cmd_report, rb, dir, &ob, &eb), 0);
    /* keep name, calls, shapes, FLOPs: drop the time columns */
    struct opp_model *ms = tu_load(trace), *mf = tu_load(full);
    ck_assert_ptr_nonnull(ms);
    ck_assert_ptr_nonnull(mf);
    const char *names[] = {"cblas_dgemm", "cblas_zgemm", "sgemm_", "cblas_ddot", "dgemv_",
                           "cblas_daxpy", "cblas_dscal"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        ck_assert_uint_gt(calls(mf, names[i], -1), 0);
        ck_assert_uint_eq(calls(ms, names[i], -1), calls(mf, names[i], -1));
    }
    ck_assert_int_eq(tu_count_lines(oa, ""), tu_count_lines(ob, ""));
    opp_model_free(ms);
    opp_model_free(mf);
    free(oa), free(ob), free(ea), free(eb), free(full);
}
END_TEST

/* A BLAS job of 3 ranks (2, 3 and 4 rounds) into the fixture's trace. */
static void three_ranks(void)
{
    char *sh[] = {"/bin/sh", "-c", NULL, NULL};
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "for r in 0 1 2; do RANK=$r %s $((r+2)) & done; wait",
             tu_build("tests/progs/blas_calls"));
    sh[2] = cmd;
    ck_assert_int_eq(run_scenario(trace, NULL, sh), 0);
}

/* A copy of the trace cut 100 bytes short (malloc'd path). */
static char *cut_short(void)
{
    char *cut = tu_path(dir, "cut.trace"), cmd[9000];
    snprintf(cmd, sizeof cmd, "head -c $(($(stat -c %%s %s) - 100)) %s > %s", trace, trace, cut);
    char *sh[] = {"/bin/sh", "-c", cmd, NULL};
    ck_assert_int_eq(tu_code(tu_run(sh, NULL, NULL, NULL)), 0);
    return cut;
}

/* `opprof report --stream` of a full trace: the table, --tree and
 * --by-rank byte for byte as when every call is loaded (a BLAS job of 3
 * ranks); the same of a summary trace taken as it is; streaming chosen by
 * the traces' size; a view that needs every call refused in one line. */
START_TEST(streamed_report_same_as_loaded)
{
    three_ranks();
    const char *views[][3] = {{NULL},         {"--tree"},     {"--by-rank"},
                              {"--group-by-shape", "--flops"}, {"-f", "csv"},
                              {"-f", "json"}};
    for (size_t v = 0; v < sizeof views / sizeof *views; v++) {
        char *a[8] = {"report", trace}, *b[8] = {"report", trace, "--stream"};
        int n = 2;
        for (int k = 0; k < 3 && views[v][k]; k++, n++)
            a[n] = b[n + 1] = (char *)views[v][k];
        char *oa, *ea, *eb, *d = tu_call_differ(cmd_report, a, b, dir, &oa, &ea, &eb);
        ck_assert_msg(!d, "%s", d);
        ck_assert_uint_gt(strlen(oa), 100);
        ck_assert_str_eq(eb, ea);
        free(oa), free(ea), free(eb);
    }
    /* a summary trace is read as it is */
    char *sum = tu_path(dir, "s.trace");
    char *mk[] = {"summarize", trace, "-o", sum, NULL}, *rs[] = {"report", sum, NULL},
         *rss[] = {"report", sum, "--stream", NULL};
    char *o, *e, *d;
    ck_assert_int_eq(tu_call(cmd_summarize, mk, dir, &o, &e), 0);
    free(o), free(e);
    d = tu_call_differ(cmd_report, rs, rss, dir, NULL, NULL, NULL);
    ck_assert_msg(!d, "%s", d);
    /* and not with a full trace: the summary is loaded, the full trace's
     * calls read in one pass, and the two are not one model */
    char *mixed[] = {"report", sum, trace, NULL}, *want;
    ck_assert_int_eq(tu_call(cmd_report, mixed, dir, &o, &e), 1);
    ck_assert_str_eq(o, "");
    ck_assert_int_gt(asprintf(&want,
                              "opprof report: cannot load %s: a full trace among summary traces "
                              "(read them apart)\n",
                              trace),
                     0);
    ck_assert_str_eq(e, want);
    free(o), free(e), free(want);
    free(sum);
    /* every view reads a full trace in one pass whatever its size: none
     * says so, --no-stream changes nothing; a trace cut short gives the
     * same rows and its warning */
    setenv("OPPROF_STREAM_MIB", "0", 1);
    const char *auto_views[][3] = {{NULL}, {"--tree"}, {"--by-rank", "-f", "json"}, {"-f", "json"}};
    for (size_t v = 0; v < sizeof auto_views / sizeof *auto_views; v++) {
        char *a[8] = {"report", trace}, *b[8] = {"report", trace, "--no-stream"};
        for (int k = 0; k < 3 && auto_views[v][k]; k++)
            a[2 + k] = b[3 + k] = (char *)auto_views[v][k];
        char *ea, *eb;
        d = tu_call_differ(cmd_report, a, b, dir, NULL, &ea, &eb);
        ck_assert_msg(!d, "%s", d);
        ck_assert_str_eq(eb, "");
        ck_assert_str_eq(ea, "");
        free(ea), free(eb);
    }
    char *cut = cut_short();
    char *ca[] = {"report", cut, NULL}, *cb[] = {"report", cut, "--no-stream", NULL};
    char *ea, *eb;
    d = tu_call_differ(cmd_report, ca, cb, dir, NULL, &ea, &eb);
    ck_assert_msg(!d, "%s", d);
    ck_assert_ptr_nonnull(strstr(eb, "opprof report: warning: trace cut at byte "));
    ck_assert_str_eq(ea, eb);
    free(ea), free(eb), free(cut);
    unsetenv("OPPROF_STREAM_MIB");
    /* --stream and --no-stream are accepted for old scripts and change
     * nothing, together or with the filters that read the loaded model */
    const char *plain[][8] = {{"report", trace, "--stream", "--no-stream", NULL},
                              {"report", trace, "--stream", "--from", "0", NULL}};
    for (int i = 0; i < 2; i++) {
        char *a[8] = {"report", trace}, *b[8] = {"report", trace};
        for (int k = 2, n = 2; plain[i][k]; k++)
            if (strcmp(plain[i][k], "--stream") && strcmp(plain[i][k], "--no-stream"))
                b[n++] = (char *)plain[i][k];
        for (int k = 2; plain[i][k]; k++)
            a[k] = (char *)plain[i][k];
        d = tu_call_differ(cmd_report, a, b, dir, NULL, &ea, &eb);
        ck_assert_msg(!d, "%s", d);
        ck_assert_str_eq(ea, "");
        ck_assert_str_eq(eb, "");
        free(ea), free(eb);
    }
    /* --gpu and --step read several traces in one pass, as one model (a
     * copy: one file given twice is refused) */
    char *copy = tu_path(dir, "copy.trace"), cp[1024];
    snprintf(cp, sizeof cp, "cp %s %s", trace, copy);
    ck_assert_int_eq(system(cp), 0);
    d = tu_stream_differ(cmd_report, dir, (const char *[]){"report", trace, copy, "--gpu", NULL});
    ck_assert_msg(!d, "%s", d);
    d = tu_stream_differ(cmd_report, dir,
                         (const char *[]){"report", trace, copy, "--step", "cblas_ddot", NULL});
    ck_assert_msg(!d, "%s", d);
    /* and the table's JSON (its threads and GPU statistics) */
    d = tu_stream_differ(cmd_report, dir,
                         (const char *[]){"report", trace, copy, "-f", "json", NULL});
    ck_assert_msg(!d, "%s", d);
    free(copy);
}
END_TEST

enum { F_WORK, F_STEP, F_RANGE, F_LAUNCH, F_CU_LAUNCH };

/* A process whose thread 7 makes calls: "work", "step", "range" (an NVTX
 * range, recorded when it ended), cudaLaunchKernel and cuLaunchKernel
 * (status, correlation id). */
static void open_trace(struct tb *b, const char *path)
{
    tb_open(b, path);
    tb_process(b, .proc = 1, .pid = 4242, .real = 1, .exe = "app");
    tb_funcs(b, [F_WORK] = {OPP_OP_PLAIN, OPP_DT_NONE, "app", "work"},
             [F_STEP] = {OPP_OP_PLAIN, OPP_DT_NONE, "app", "step"},
             [F_RANGE] = {OPP_OP_NVTX, OPP_DT_NONE, "nvtx", "range"},
             [F_LAUNCH] = {OPP_OP_CUDA_API, OPP_DT_NONE, "cudart", "cudaLaunchKernel"},
             [F_CU_LAUNCH] = {OPP_OP_CUDA_API, OPP_DT_NONE, "cuda", "cuLaunchKernel"});
    tb_thread(b, 7, NULL);
}

/* `opprof report --step` of a large trace finds its steps as it reads it:
 * the loaded answer, byte for byte (processes of three ranks, a trace cut
 * short); whatever its size, nothing said, even where a thread's calls
 * come out of the order they returned. */
START_TEST(streamed_steps_same_as_loaded)
{
    three_ranks();
    const char *names[] = {"cblas_dscal", "cblas_dgemm", "cblas_ddot", NULL};
    char *d = tu_steps_differ(cmd_report, dir, trace, names);
    ck_assert_msg(!d, "%s", d);
    char *cut = cut_short();
    d = tu_steps_differ(cmd_report, dir, cut, names);
    ck_assert_msg(!d, "%s", d);
    setenv("OPPROF_STREAM_MIB", "0", 1);
    char *ea, *eb, *out;
    d = tu_call_differ(cmd_report, (char *[]){"report", trace, "--step", "cblas_dscal", NULL},
                       (char *[]){"report", trace, "--step", "cblas_dscal", "--no-stream", NULL},
                       dir, &out, &ea, &eb);
    ck_assert_msg(!d, "%s", d);
    ck_assert_ptr_nonnull(strstr(out, ", 6 steps\n")); /* 2, 3, 4 rounds: 1 + 2 + 3 steps */
    ck_assert_str_eq(ea, ""); /* one pass whatever the size: nothing to say */
    ck_assert_str_eq(eb, "");
    free(out), free(ea), free(eb);
    /* an NVTX range recorded when it ended around calls of its depth
     * (settled only after it); a boundary inside another */
    char *odd = tu_path(dir, "odd.trace");
    struct tb b;
    open_trace(&b, odd);
    tb_events(&b, TB_CALL(F_WORK, 10, 20, 0), TB_CALL(F_STEP, 30, 40, 0),
              TB_CALL(F_WORK, 50, 60, 0), TB_CALL(F_WORK, 70, 80, 0), TB_CALL(F_RANGE, 45, 85, 0),
              TB_CALL(F_STEP, 90, 100, 0), TB_CALL(F_STEP, 150, 160, 1),
              TB_CALL(F_STEP, 110, 200, 0), TB_CALL(F_WORK, 210, 220, 0),
              TB_CALL(F_STEP, 230, 240, 0));
    tb_end(&b);
    d = tu_steps_differ(cmd_report, dir, odd, (const char *[]){"step", "work", "range", NULL});
    ck_assert_msg(!d, "%s", d);
    char *sv[] = {"report", odd, "--step", "step", "--format", "json", NULL};
    ck_assert_int_eq(tu_call(cmd_report, sv, dir, &out, &ea), 0);
    /* the steps end at 100, 200 and 240 (not at 160, inside the call
     * that ends at 200); each holds the top-level calls from the previous
     * end to its boundary's begin, the boundary included */
    ck_assert_ptr_nonnull(strstr(out, "\"count\": 3, \"wall_us\": [0.060, 0.100, 0.040], "
                                      "\"cpu_us\": [0.050, 0.090, 0.020]"));
    free(out), free(ea);
    /* calls the process died inside, nested: the collector writes them
     * last, outermost first, each ending where the process did */
    open_trace(&b, odd);
    tb_events(&b, TB_CALL(F_STEP, 10, 20, 0), TB_CALL(F_WORK, 31, 34, 1),
              TB_CALL(F_STEP, 30, 35, 0));
    tb_events(&b, TB_OPEN(F_STEP, 40, 50, 0), TB_OPEN(F_WORK, 42, 50, 1),
              TB_OPEN(F_STEP, 43, 50, 2));
    tb_process_end(&b, 1, OPP_END_LOST, 60);
    tb_end(&b);
    d = tu_steps_differ(cmd_report, dir, odd, (const char *[]){"step", "work", NULL});
    ck_assert_msg(!d, "%s", d);
    /* what the stack cannot nest as the loaded tree does, the pass builds
     * as the loaded tree is built (the thread kept whole), nothing said: a
     * call inside one that arrived before it (a chunk out of order); calls
     * that overlap without nesting; a call at the same ns and depth as
     * another's end */
    const struct tb_ev odd_calls[][4] = {
        {TB_CALL(F_STEP, 1000, 2000, 0), TB_CALL(F_WORK, 2100, 2900, 0),
         TB_CALL(F_WORK, 1200, 1500, 1), TB_CALL(F_STEP, 3000, 4000, 0)},
        {TB_CALL(F_WORK, 6, 8, 1), TB_CALL(F_STEP, 0, 10, 0), TB_CALL(F_RANGE, 5, 15, 0),
         TB_CALL(F_STEP, 20, 30, 0)},
        {TB_CALL(F_STEP, 10, 20, 0), TB_CALL(F_WORK, 20, 20, 1), TB_CALL(F_STEP, 20, 20, 1),
         TB_CALL(F_STEP, 30, 40, 0)},
    };
    /* each one step, ending at the second boundary of the outermost:
     * its wall and CPU in the calls that begin in it */
    const char *json[] = {"\"count\": 1, \"wall_us\": [2.000], \"cpu_us\": [1.800]",
                          "\"count\": 1, \"wall_us\": [0.020], \"cpu_us\": [0.010]",
                          "\"count\": 1, \"wall_us\": [0.020], \"cpu_us\": [0.010]"};
    for (int k = 0; k < 3; k++) {
        open_trace(&b, odd);
        tb_put_events(&b, 0, odd_calls[k], k ? 4 : 2);
        if (!k)
            tb_put_events(&b, 0, odd_calls[k] + 2, 2);
        tb_end(&b);
        d = tu_steps_differ(cmd_report, dir, odd, (const char *[]){"step", "work", NULL});
        ck_assert_msg(!d, "%d: %s", k, d);
        char *jv[] = {"report", odd, "--step", "step", "-f", "json", NULL};
        ck_assert_int_eq(tu_call(cmd_report, jv, dir, &out, &ea), 0);
        ck_assert_msg(strstr(out, json[k]), "%d: %s", k, out);
        ck_assert_str_eq(ea, "");
        free(out), free(ea);
    }
    unsetenv("OPPROF_STREAM_MIB");
    free(cut), free(odd);
}
END_TEST

/* Steps with GPU time found as a trace streams: each kernel or copy
 * joined to its launch by correlation id (the outermost call of the id:
 * cudaLaunchKernel, not the cuLaunchKernel inside it), whichever of the
 * two the file has first, and given to the step of the launch's top-level
 * call (a top-level call around a boundary belongs to the step it begins
 * in), or to every range around the launch. */
START_TEST(streamed_steps_gpu_same_as_loaded)
{
    struct tb b;
    open_trace(&b, trace);
    tb_string(&b, 1, "k");
    /* ops first in the file: corr 1, 2, 3 (a graph: two kernels), 99 (no launch) */
    tb_kernel(&b, .name = 1, .start = 140, .end = 1140, .corr = 1, .grid = {1}, .block = {1});
    tb_kernel(&b, .name = 1, .start = 330, .end = 2330, .corr = 2, .grid = {1}, .block = {1});
    tb_kernel(&b, .name = 1, .start = 660, .end = 2660, .corr = 3, .grid = {1}, .block = {1});
    tb_kernel(&b, .name = 1, .start = 2700, .end = 4700, .corr = 3, .grid = {1}, .block = {1});
    tb_kernel(&b, .name = 1, .start = 5000, .end = 9000, .corr = 99, .grid = {1}, .block = {1});
    tb_gpu_chunk(&b);
    tb_events(&b, TB_CALL(F_LAUNCH, 120, 130, 1, 0, 1), TB_CALL(F_STEP, 100, 200, 0),
              TB_CALL(F_LAUNCH, 310, 320, 1, 0, 2), TB_CALL(F_STEP, 350, 400, 1),
              TB_CALL(F_WORK, 300, 500, 0), TB_CALL(F_CU_LAUNCH, 620, 640, 2, 0, 3),
              TB_CALL(F_LAUNCH, 610, 650, 1, 0, 3), TB_CALL(F_STEP, 600, 700, 0),
              TB_CALL(F_LAUNCH, 850, 860, 0, 0, 4), TB_CALL(F_STEP, 900, 950, 0),
              TB_CALL(F_RANGE, 800, 1000, 0), TB_CALL(F_LAUNCH, 1110, 1120, 1, 0, 5),
              TB_CALL(F_STEP, 1100, 1200, 0), TB_CALL(F_LAUNCH, 1300, 1310, 0, 0, 6));
    /* ops after their launches: corr 4, 5 (a copy), 6 */
    tb_kernel(&b, .name = 1, .start = 870, .end = 8870, .corr = 4, .grid = {1}, .block = {1});
    tb_memcpy(&b, .start = 1130, .end = 17130, .corr = 5, .bytes = 64, .kind = 1);
    tb_kernel(&b, .name = 1, .start = 1320, .end = 33320, .corr = 6, .grid = {1}, .block = {1});
    /* thread 8: a range inside another, a launch inside both */
    tb_thread(&b, 8, NULL);
    tb_events(&b, TB_CALL(F_LAUNCH, 2200, 2210, 0, 0, 7), TB_CALL(F_RANGE, 2100, 2500, 0),
              TB_CALL(F_RANGE, 2000, 3000, 0));
    tb_kernel(&b, .name = 1, .start = 2300, .end = 66300, .corr = 7, .grid = {1}, .block = {1});
    /* work of no call on another device and streams, memory on a third */
    tb_string(&b, 2, "_Z4axpyPfS_f");
    tb_kernel(&b, .name = 2, .start = 100000, .end = 101000, .device = 1, .stream = 3,
              .grid = {4}, .block = {128});
    tb_memcpy(&b, .start = 103000, .end = 104000, .device = 1, .stream = 4, .bytes = 8, .kind = 2);
    tb_memory(&b, .start = 50, .device = 2, .op = 1, .bytes = 4096, .address = 0x1000);
    tb_end(&b);
    const char *names[] = {"step", "range", "work", "cudaLaunchKernel", "cuLaunchKernel", NULL};
    char *d = tu_steps_differ(cmd_report, dir, trace, names);
    ck_assert_msg(!d, "%s", d);
    char *out, *err;
    char *sv[] = {"report", trace, "--step", "step", "--stream", "-f", "json", NULL};
    ck_assert_int_eq(tu_call(cmd_report, sv, dir, &out, &err), 0);
    /* from 200: "work" around the boundary at 350 (its launch: 2 us); from
     * 400: the step at 600 (the graph's 2 + 2 us); from 700: the range
     * around the boundary at 900 (8 us); from 950: the step at 1100 (its
     * copy, 16 us). The launch at 1300 is after the last boundary. */
    ck_assert_msg(strstr(out, "\"count\": 4, \"wall_us\": [0.200, 0.300, 0.250, 0.250], "
                              "\"cpu_us\": [0.200, 0.100, 0.200, 0.100], "
                              "\"gpu_us\": [2.000, 4.000, 8.000, 16.000]"),
                  "%s", out);
    free(out), free(err);
    char *rv[] = {"report", trace, "--step", "range", "--stream", "-f", "json", NULL};
    ck_assert_int_eq(tu_call(cmd_report, rv, dir, &out, &err), 0);
    /* thread 7's range, then thread 8's two (tree order: the outer first) */
    ck_assert_msg(strstr(out, "\"gpu_us\": [8.000, 64.000, 64.000]"), "%s", out);
    free(out), free(err);
    /* the GPU view of the same trace as it streams */
    const char *gv[][6] = {{"report", trace, "--gpu"}, {"report", trace, "--gpu", "--tid", "8"}};
    for (int i = 0; i < 2; i++) {
        d = tu_stream_differ(cmd_report, dir, gv[i]);
        ck_assert_msg(!d, "%s", d);
    }
    /* the table and its JSON nest calls inside an NVTX range recorded when
     * it ended as the loaded tree does (one pass), and say nothing */
    setenv("OPPROF_STREAM_MIB", "0", 1);
    for (int json = 0; json < 2; json++) {
        char *ea, *eb;
        d = tu_call_differ(cmd_report, (char *[]){"report", trace, json ? "-fjson" : NULL, NULL},
                           (char *[]){"report", trace, "--no-stream", json ? "-fjson" : NULL, NULL},
                           dir, NULL, &ea, &eb);
        ck_assert_msg(!d, "%s", d);
        ck_assert_str_eq(ea, "");
        free(ea), free(eb);
    }
    unsetenv("OPPROF_STREAM_MIB");
    char *gs[] = {"report", trace, "--gpu", "--stream", NULL};
    ck_assert_int_eq(tu_call(cmd_report, gs, dir, &out, &err), 0);
    ck_assert_msg(strstr(out, "Kernel time total: 116.000us (9 launches of 2 kernels)\n"), "%s",
                  out);
    ck_assert_msg(strstr(out, "axpy(float*, float*, float)"), "%s", out);
    free(out), free(err);
}
END_TEST

/* Each of n commands (report argv, at most 6 words) streamed and loaded:
 * the same output. */
static void same_streamed(const char *const (*runs)[6], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *d = tu_stream_differ(cmd_report, dir, runs[i]);
        ck_assert_msg(!d, "%s", d);
    }
}

/* GPU work the loaded model gives to a call other than the one that
 * pushed its id, and the same as the trace streams: a kernel tied by
 * external correlation to a torch operator folded into its same-named
 * parent (the parent's: torch lifts a folded op's kernels); two library
 * calls that pushed the same external id (the outermost, then the first
 * thread's); a launch the process died inside. */
START_TEST(streamed_gpu_owners_as_loaded)
{
    enum { T_OP, T_LAUNCH, T_BLAS, T_WORK };
    struct tb b;
    tb_open(&b, trace);
    tb_process(&b, .proc = 1, .pid = 4242, .real = 1, .exe = "app");
    tb_funcs(&b, [T_OP] = {OPP_OP_TORCH | OPP_OPK_EXTID, OPP_DT_NONE, "torch", "op"},
             [T_LAUNCH] = {OPP_OP_CUDA_API, OPP_DT_NONE, "cudart", "cudaLaunchKernel"},
             [T_BLAS] = {OPP_OP_PLAIN | OPP_OPK_EXTID, OPP_DT_NONE, "cublas", "cublasSgemm"},
             [T_WORK] = {OPP_OP_PLAIN, OPP_DT_NONE, "app", "work"});
    tb_string(&b, 1, "k");
    tb_string(&b, 2, "aten::div_");
    tb_thread(&b, 7, NULL); /* torch args: name, scope, count, external id */
    tb_events(&b, TB_CALL(T_OP, 100, 900, 1, 2, 0, 0, 8), TB_CALL(T_OP, 0, 1000, 0, 2, 0, 0, 7),
              TB_CALL(T_BLAS, 1100, 1200, 0, 9), TB_CALL(T_WORK, 2000, 3000, 0));
    tb_thread(&b, 8, NULL);
    tb_events(&b, TB_CALL(T_BLAS, 1300, 1400, 0, 9), TB_OPEN(T_LAUNCH, 3100, 3150, 0, 0, 3));
    tb_kernel(&b, .name = 1, .start = 5000, .end = 6000, .corr = 55, .grid = {1}, .block = {1});
    tb_extcorr(&b, OPP_EXTCORR_KIND, 8, 55);
    tb_kernel(&b, .name = 1, .start = 6000, .end = 8000, .corr = 56, .grid = {1}, .block = {1});
    tb_extcorr(&b, OPP_EXTCORR_KIND, 9, 56);
    tb_kernel(&b, .name = 1, .start = 8000, .end = 12000, .corr = 3, .grid = {1}, .block = {1});
    /* thread 9: three of one name, the innermost's kernel lifted to the
     * outermost; thread 10: two the process died inside, the inner's
     * kernel the outer's */
    tb_thread(&b, 9, NULL);
    tb_events(&b, TB_CALL(T_OP, 1520, 1580, 2, 2, 0, 0, 20),
              TB_CALL(T_OP, 1510, 1590, 1, 2, 0, 0, 21), TB_CALL(T_OP, 1500, 1600, 0, 2, 0, 0, 22));
    tb_thread(&b, 10, NULL);
    tb_events(&b, TB_OPEN(T_OP, 3200, 3300, 0, 2, 0, 0, 30), TB_OPEN(T_OP, 3210, 3300, 1, 2, 0, 0, 31));
    tb_extcorr(&b, OPP_EXTCORR_KIND, 20, 60);
    tb_kernel(&b, .name = 1, .start = 12000, .end = 16000, .corr = 60, .grid = {1}, .block = {1});
    tb_extcorr(&b, OPP_EXTCORR_KIND, 31, 61);
    tb_kernel(&b, .name = 1, .start = 16000, .end = 24000, .corr = 61, .grid = {1}, .block = {1});
    tb_process_end(&b, 1, OPP_END_LOST, 4000);
    tb_end(&b);
    const char *runs[][6] = {{"report", trace, "--gpu"},
                             {"report", trace, "--gpu", "--tid", "7"},
                             {"report", trace, "--gpu", "--tid", "8"},
                             {"report", trace, "--gpu", "--tid", "9"},
                             {"report", trace, "--gpu", "--tid", "10"},
                             {"report", trace, "--step", "work"},
                             {"report", trace},
                             {"report", trace, "--tree"},
                             {"report", trace, "-f", "json"}};
    same_streamed(runs, sizeof runs / sizeof *runs);
    char *out, *err;
    char *tv[] = {"report", trace, "--gpu", "--tid", "7", "--stream", NULL};
    ck_assert_int_eq(tu_call(cmd_report, tv, dir, &out, &err), 0);
    /* thread 7: the cublas call's 2 us and the folded op's 1 us; the
     * launch and the outer op the process died inside (the inner folded) */
    ck_assert_msg(strstr(out, "Kernel time total: 3.000us (2 launches of 1 kernels)"), "%s", out);
    ck_assert_str_eq(err, "opprof report: warning: 2 calls were still running when their "
                          "process died: shown with the process's end time\n");
    free(out), free(err);
    /* the ops owned by each kind of fold: 1 + 4 + 8 us, and 3 calls */
    char *jv[] = {"report", trace, "--stream", "-f", "json", NULL};
    ck_assert_int_eq(tu_call(cmd_report, jv, dir, &out, &err), 0);
    ck_assert_msg(strstr(out, "{\"key\": \"aten::div_\", \"lib\": \"torch\", \"count\": 3, "),
                  "%s", out);
    ck_assert_msg(strstr(out, "\"self_cuda_time_total\": 13.000, \"cuda_time_total\": 13.000, "
                              "\"cuda_time\": 4.333, "),
                  "%s", out);
    ck_assert_msg(strstr(out, "\"unattached\": 0,"), "%s", out);
    free(out), free(err);
    /* a completed op that folds into the op its process died inside
     * unless another of those comes: the join knows at the thread's next
     * call, and the summary finds the owners the same; a free on
     * thread 9, read before thread 7's allocation, still has its size */
    enum { U_OP, U_ALLOC, U_FREE, U_WORK };
    char *t2 = tu_path(dir, "open.trace");
    tb_open(&b, t2);
    tb_process(&b, .proc = 1, .pid = 4242, .real = 1, .exe = "app");
    tb_funcs(&b, [U_OP] = {OPP_OP_TORCH | OPP_OPK_EXTID, OPP_DT_NONE, "torch", "op"},
             [U_ALLOC] = {OPP_OP_MEMORY, OPP_DT_NONE, "c10", "_ZN3c109alloc_cpuEm"},
             [U_FREE] = {OPP_OP_MEMORY, OPP_DT_NONE, "c10", "_ZN3c108free_cpuEPv"},
             [U_WORK] = {OPP_OP_PLAIN, OPP_DT_NONE, "app", "work"});
    tb_string(&b, 1, "k");
    tb_string(&b, 2, "aten::div_");
    tb_thread(&b, 9, NULL);
    tb_events(&b, TB_CALL(U_FREE, 2000, 2000, 1, OPP_MEM_FREE, 0x1000, 0),
              TB_CALL(U_WORK, 1900, 2100, 0));
    tb_thread(&b, 7, NULL);
    tb_events(&b, TB_CALL(U_ALLOC, 150, 150, 2, OPP_MEM_ALLOC, 0x1000, 512),
              TB_CALL(U_OP, 100, 200, 1, 2, 0, 0, 40), TB_OPEN(U_OP, 50, 300, 0, 2, 0, 0, 41));
    tb_extcorr(&b, OPP_EXTCORR_KIND, 40, 70);
    tb_kernel(&b, .name = 1, .start = 400, .end = 1400, .corr = 70, .grid = {1}, .block = {1});
    tb_process_end(&b, 1, OPP_END_LOST, 500);
    tb_end(&b);
    const char *tab[] = {"report", t2, NULL};
    char *d = tu_stream_differ(cmd_report, dir, tab);
    ck_assert_msg(!d, "%s", d);
    char *ov[] = {"report", t2, "--stream", NULL};
    ck_assert_int_eq(tu_call(cmd_report, ov, dir, &out, &err), 0);
    ck_assert_msg(strstr(out, "    aten::div_        69.23%       0.450us        69.23%       "
                              "0.450us       0.450us       1.000us       100.00%       1.000us  "),
                  "%s", out);
    ck_assert_msg(strstr(out, "          work        30.77%       0.200us        30.77%       0.200us"
                              "       0.200us       0.000us         0.00%       0.000us        "
                              "0.000us        -512 b        -512 b             1  \n"),
                  "%s", out);
    free(out), free(err);
    /* the JSON's GPU statistics join the same way, in the pass */
    const char *jo[] = {"report", t2, "-f", "json", NULL};
    d = tu_stream_differ(cmd_report, dir, jo);
    ck_assert_msg(!d, "%s", d);
    char *jargv[] = {"report", t2, "-f", "json", NULL};
    ck_assert_int_eq(tu_call(cmd_report, jargv, dir, &out, &err), 0);
    ck_assert_str_eq(err, "opprof report: warning: 1 call was still running when its process "
                          "died: shown with the process's end time\n");
    free(t2);
    free(out), free(err);
}
END_TEST

/* The table, tree and JSON add GPU work up by the calls that own it as the
 * trace streams (each op joined to its call beforehand, then taken after
 * it): the loaded answer, whatever the order of ops and calls in the file.
 * A kernel before its launch; a runtime call around a driver call of the
 * same correlation id (the outer owns); a device block freed on thread 7
 * whose allocation (thread 8's, later in the file) the GPU records give
 * first; a sync, overhead, a kernel of no call; a library call's kernel
 * through external correlation. */
START_TEST(streamed_table_gpu_as_loaded)
{
    enum { S_STEP, S_LAUNCH, S_CU, S_MALLOC, S_FREE, S_SYNC, S_BLAS };
    struct tb b;
    tb_open(&b, trace);
    tb_process(&b, .proc = 1, .pid = 4242, .real = 1, .exe = "app");
    tb_funcs(&b, [S_STEP] = {OPP_OP_PLAIN, OPP_DT_NONE, "app", "step"},
             [S_LAUNCH] = {OPP_OP_CUDA_API, OPP_DT_NONE, "cudart", "cudaLaunchKernel"},
             [S_CU] = {OPP_OP_CUDA_API, OPP_DT_NONE, "cuda", "cuLaunchKernel"},
             [S_MALLOC] = {OPP_OP_CUDA_API, OPP_DT_NONE, "cudart", "cudaMalloc"},
             [S_FREE] = {OPP_OP_CUDA_API, OPP_DT_NONE, "cudart", "cudaFree"},
             [S_SYNC] = {OPP_OP_CUDA_API, OPP_DT_NONE, "cudart", "cudaDeviceSynchronize"},
             [S_BLAS] = {OPP_OP_PLAIN | OPP_OPK_EXTID, OPP_DT_NONE, "cublas", "cublasSgemm"});
    tb_string(&b, 1, "k");
    tb_kernel(&b, .name = 1, .start = 130, .end = 1130, .corr = 1, .grid = {1}, .block = {1});
    tb_memory(&b, .start = 55, .op = 1, .bytes = 4096, .address = 0x1000, .corr = 10);
    tb_memory(&b, .start = 305, .op = 2, .bytes = 4096, .address = 0x1000, .corr = 11);
    tb_gpu_chunk(&b);
    tb_thread(&b, 7, NULL);
    tb_events(&b, TB_CALL(S_LAUNCH, 110, 120, 1, 0, 1), TB_CALL(S_CU, 210, 220, 2, 0, 2),
              TB_CALL(S_LAUNCH, 200, 230, 1, 0, 2), TB_CALL(S_FREE, 300, 310, 1, 0, 11),
              TB_CALL(S_SYNC, 400, 500, 1, 0, 12), TB_CALL(S_STEP, 100, 600, 0));
    tb_thread(&b, 8, NULL);
    tb_events(&b, TB_CALL(S_MALLOC, 50, 60, 0, 0, 10), TB_CALL(S_BLAS, 700, 800, 0, 9));
    tb_kernel(&b, .name = 1, .start = 240, .end = 2240, .corr = 2, .grid = {1}, .block = {1});
    tb_sync(&b, .start = 400, .end = 2240, .corr = 12, .type = 1);
    tb_sync(&b, .start = 2300, .end = 2400, .corr = 13, .type = 1); /* of no call */
    tb_overhead(&b, .start = 100, .end = 150, .kind = 1);
    tb_kernel(&b, .name = 1, .start = 3000, .end = 7000, .corr = 99, .grid = {1}, .block = {1});
    tb_extcorr(&b, OPP_EXTCORR_KIND, 9, 56);
    tb_kernel(&b, .name = 1, .start = 8000, .end = 16000, .corr = 56, .grid = {1}, .block = {1});
    tb_end(&b);
    const char *runs[][6] = {{"report", trace},
                             {"report", trace, "--tree"},
                             {"report", trace, "-f", "json"}};
    same_streamed(runs, sizeof runs / sizeof *runs);
    char *out, *err;
    char *tv[] = {"report", trace, "--stream", "-f", "json", NULL};
    ck_assert_int_eq(tu_call(cmd_report, tv, dir, &out, &err), 0);
    /* the outer launch owns its kernel (1 + 2 us), its driver call none */
    const char *want[] = {
        "\"key\": \"cublasSgemm\", \"lib\": \"cublas\", \"count\": 1, ",
        "\"self_cuda_time_total\": 8.000, \"cuda_time_total\": 8.000, \"cuda_time\": 8.000, "
        "\"self_cuda_memory_usage\": 0, \"cuda_memory_usage\": 0},\n    {\"key\": "
        "\"cudaDeviceSynchronize\"",
        "\"self_cuda_time_total\": 3.000, \"cuda_time_total\": 3.000, \"cuda_time\": 1.500, "
        "\"self_cuda_memory_usage\": 0, \"cuda_memory_usage\": 0},\n    {\"key\": "
        "\"cuLaunchKernel\"",
        "\"self_cuda_time_total\": 0.000, \"cuda_time_total\": 0.000, \"cuda_time\": 0.000, "
        "\"self_cuda_memory_usage\": 0, \"cuda_memory_usage\": 0},\n    {\"key\": \"cudaFree\"",
        "\"self_cuda_memory_usage\": -4096, \"cuda_memory_usage\": -4096},\n    {\"key\": "
        "\"cudaMalloc\"",
        "\"self_cuda_memory_usage\": 4096, \"cuda_memory_usage\": 4096},\n    {\"key\": \"k\"",
        "\"self_cuda_time_total\": 15.000,", "\"unattached\": 2,"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        ck_assert_msg(strstr(out, want[i]), "%s not in\n%s", want[i], out);
    free(out), free(err);
}
END_TEST

/* A schedule: the calls of each active window apart (--window K). */
START_TEST(schedule_windows)
{
    /* blas_calls 10: 10 rounds, each ending in one cblas_dscal (the step);
     * wait=1, warmup=1, active=2, repeat=2: steps 2-3 and 6-7 recorded */
    char *argv[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--mode", "summary",
                    "--schedule", "wait=1,warmup=1,active=2,repeat=2", "--step",
                    "call:cblas_dscal", "--", (char *)tu_build("tests/progs/blas_calls"), "10",
                    NULL};
    char *o = tu_path(dir, "o"), *e = tu_path(dir, "e");
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, o, e)), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(calls(m, "cblas_dgemm", 1), 10); /* 5 per round, 2 rounds */
    ck_assert_uint_eq(calls(m, "cblas_dgemm", 2), 10);
    ck_assert_uint_eq(calls(m, "cblas_dgemm", 0), 0);
    /* the steps one node a window, named as the table's one row
     * (ProfilerStep*), not a node a step */
    ck_assert_uint_eq(calls(m, "ProfilerStep*", 1), 2);
    ck_assert_uint_eq(calls(m, "ProfilerStep*", 2), 2);
    ck_assert_uint_eq(calls(m, "ProfilerStep#2", -1), 0);
    ck_assert_uint_eq(calls(m, "cblas_dgemm", -1), 20);
    opp_model_free(m);
    char *r3[] = {"report", trace, "--window", "3", NULL};
    char *out, *err;
    ck_assert_int_eq(tu_call(cmd_report, r3, dir, &out, &err), 2); /* a usage error */
    char want[4400];
    snprintf(
        want, sizeof want,
        "opprof report: %s has 2 recorded windows (a schedule's active runs of steps), not 3\n",
        trace);
    ck_assert_str_eq(err, want);
    ck_assert_str_eq(out, "");
    free(out), free(err), free(o), free(e);
}
END_TEST

/* Steps do not grow a summary: every step has the first's string id (no
 * string a step), so 50001 steps make the file 101 do, give or take the
 * counts' bytes; all counted in the one ProfilerStep* node. */
START_TEST(many_steps_constant)
{
    long size[2];
    const char *n[2] = {"101", "50001"};
    for (int i = 0; i < 2; i++) {
        char *argv[] = {(char *)tu_tool("opprof"),
                        "run",
                        "-q",
                        "-o",
                        trace,
                        "--mode",
                        "summary",
                        "--schedule",
                        "active=100000",
                        "--step",
                        "call:cblas_ddot",
                        "--",
                        (char *)tu_build("tests/progs/scenarios"),
                        "loop",
                        (char *)n[i],
                        NULL};
        char *o = tu_path(dir, "o"), *e = tu_path(dir, "e");
        ck_assert_int_eq(tu_code(tu_run(argv, NULL, o, e)), 0);
        char *err = tu_slurp(e);
        ck_assert_ptr_null(strstr(err, "unnamed"));
        struct opp_model *m = tu_load(trace);
        ck_assert_ptr_nonnull(m);
        ck_assert_uint_eq(calls(m, "ProfilerStep*", -1), strtoul(n[i], NULL, 10));
        ck_assert_uint_eq(calls(m, "cblas_ddot", -1), strtoul(n[i], NULL, 10));
        opp_model_free(m);
        size[i] = file_size(trace);
        free(o), free(e), free(err);
    }
    ck_assert_int_le(labs(size[1] - size[0]), 64);
}
END_TEST

/* A program whose own OPPROF_MODE is not its collector's (a launcher that
 * sets it for its program alone) under a collector of ours (mode: its
 * --mode, NULL: full): `scenarios pause N` makes N ddot calls, waits for
 * dir/go, and makes N more, each a step (call:cblas_ddot), the first half
 * skipped, so its N active steps ProfilerStep#N .. #2N-1 come once the
 * collector has read its hello (and answered it). The trace into out. */
static void steps_under(const char *mode, const char *env_mode, long n, const char *out)
{
    char *sock = tu_path(dir, "c.sock"), *half = tu_path(dir, "halfway"), *go = tu_path(dir, "go");
    unlink(half), unlink(go);
    int cpid = tu_collector_start(sock, out, mode);
    ck_assert_int_gt(cpid, 0);
    char se[4200], pre[4200], sched[128], num[32];
    snprintf(se, sizeof se, "OPPROF_SOCKET=%s", sock);
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", tu_build("libopprof.so"));
    snprintf(sched, sizeof sched, "OPPROF_SCHEDULE=skip_first=%ld,active=1000000", n);
    snprintf(num, sizeof num, "%ld", n);
    char *env[] = {pre, se, (char *)env_mode, sched, "OPPROF_STEP=call:cblas_ddot", NULL};
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "pause", num, dir, NULL};
    char *e = tu_path(dir, "e");
    int pid = tu_spawn(argv, env, NULL, e);
    ck_assert_int_gt(pid, 0);
    ck_assert_int_eq(tu_wait_file(half, 10000), 0);
    ck_assert_int_eq(tu_collector_procs(sock, 1, 10000), 0);
    close(open(go, O_CREAT | O_WRONLY, 0600));
    ck_assert_int_eq(tu_code(tu_wait(pid)), 3);
    ck_assert_int_eq(tu_collector_finish(cpid, sock), 0);
    char *err = tu_slurp(e);
    ck_assert_str_eq(err, "");
    free(err), free(e), free(sock), free(half), free(go);
}

/* The collector records every call, the program's environment says
 * summary: each step is named as itself, not as the first. */
START_TEST(steps_named_under_full_collector)
{
    const long n = 50;
    steps_under(NULL, "OPPROF_MODE=summary", n, trace);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(!m->summary);
    for (long k = n; k < 2 * n; k++) {
        char name[40];
        snprintf(name, sizeof name, "ProfilerStep#%ld", k);
        ck_assert_msg(calls(m, name, -1) == 1, "%s: %llu", name,
                      (unsigned long long)calls(m, name, -1));
    }
    ck_assert_uint_eq(calls(m, "cblas_ddot", -1), (uint64_t)n);
    opp_model_free(m);
}
END_TEST

/* The collector adds calls up, the program's environment says full: the
 * steps share the first's string, so 20001 steps make the file 101 do
 * (give or take the counts' bytes), all in the one ProfilerStep* node of
 * the schedule's window 1. */
START_TEST(steps_shared_under_summary_collector)
{
    long size[2];
    const long n[2] = {101, 20001};
    for (int i = 0; i < 2; i++) {
        steps_under("--mode=summary", "OPPROF_MODE=full", n[i], trace);
        struct opp_model *m = tu_load(trace);
        ck_assert_ptr_nonnull(m);
        ck_assert(m->summary);
        ck_assert_uint_eq(calls(m, "ProfilerStep*", 1), (uint64_t)n[i]);
        ck_assert_uint_eq(calls(m, "cblas_ddot", 1), (uint64_t)n[i]);
        ck_assert_uint_eq(calls(m, "cblas_ddot", -1), (uint64_t)n[i]);
        opp_model_free(m);
        size[i] = file_size(trace);
    }
    ck_assert_int_le(labs(size[1] - size[0]), 64);
}
END_TEST

/* What needs every call's time says so and fails. 100000 calls: their
 * stack's whole microseconds not 0 (10 took 0.3 to 4 us, and a stack of
 * 0 us is left out, as torch's export_stacks leaves it). */
START_TEST(views_refused)
{
    char *args[] = {(char *)tu_build("tests/progs/scenarios"), "loop", "100000", NULL};
    ck_assert_int_eq(run_scenario(trace, "summary", args), 0);
    const char *views[][3] = {{"--step", "cblas_ddot", NULL}, {"--gpu", NULL, NULL},
                              {"--tid", "1", NULL}, {"--from", "1", NULL}};
    for (size_t i = 0; i < sizeof views / sizeof *views; i++) {
        char *argv[] = {"report", trace, (char *)views[i][0], (char *)views[i][1], NULL};
        char *out, *err;
        ck_assert_int_eq(tu_call(cmd_report, argv, dir, &out, &err), 1);
        ck_assert_msg(strstr(err, "is a summary trace") && strstr(err, views[i][0]), "%s", err);
        ck_assert_str_eq(out, "");
        free(out), free(err);
    }
    const char *formats[] = {"chrome", "html", "memory"};
    for (size_t i = 0; i < 3; i++) {
        char *o = tu_path(dir, "x.out");
        char *argv[] = {"export", (char *)formats[i], trace, "-o", o, NULL};
        char *out, *err;
        ck_assert_int_ne(tu_call(cmd_export, argv, dir, &out, &err), 0);
        ck_assert_msg(strstr(err, "is a summary trace"), "%s: %s", formats[i], err);
        ck_assert_int_eq(access(o, F_OK), -1); /* nothing written */
        free(out), free(err), free(o);
    }
    /* call paths are what folded stacks are: those work */
    char *st[] = {"export", "stacks", trace, NULL};
    char *sout, *serr;
    ck_assert_int_eq(tu_call(cmd_export, st, dir, &sout, &serr), 0);
    ck_assert_int_eq(strncmp(sout, "cblas_ddot ", 11), 0);
    ck_assert_int_eq(tu_count_lines(sout, ""), 1);
    free(sout), free(serr);
    char *bad[] = {(char *)tu_tool("opprof"), "run", "--mode", "tiny", "--", "true", NULL};
    char *o = tu_path(dir, "o"), *e = tu_path(dir, "e");
    ck_assert_int_eq(tu_code(tu_run(bad, NULL, o, e)), 2);
    char *msg = tu_slurp(e);
    ck_assert_str_eq(msg, "opprof run: --mode takes full or summary, not 'tiny'\n");
    free(msg), free(o), free(e);
}
END_TEST

/* A summary run past its node bound (OPPROF_MAX_NODES): the run says
 * how many calls it dropped where no report follows, `opprof run -q` and
 * the collector a preloaded program started, each in its one line; the
 * trace counts the same calls as dropped. A bad bound: one line, exit 2,
 * nothing run. */
static void says_dropped(struct opp_model *m, uint64_t calls, const char *err, const char *first)
{
    ck_assert_uint_gt(m->dropped, 0);
    ck_assert_uint_eq(m->events + m->dropped, calls);
    char *want;
    ck_assert_int_gt(asprintf(&want,
                              "%s%llu calls on new call paths past the summary's bound of 2 "
                              "call paths (OPPROF_MAX_NODES, default 1048576) were dropped\n",
                              first, (unsigned long long)m->dropped),
                     0);
    ck_assert_str_eq(err, want);
    free(want);
}

START_TEST(run_says_calls_past_max_nodes)
{
    char *prog = (char *)tu_build("tests/progs/blas_calls");
    char *argv[] = {(char *)tu_tool("opprof"),
                    "run",
                    "-q",
                    "-o",
                    trace,
                    "--mode",
                    "summary",
                    "--max-nodes",
                    "2",
                    "--",
                    prog,
                    "4",
                    NULL};
    char *e = tu_path(dir, "e"), *err, *first;
    char *fargv[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", prog, "4", NULL};
    ck_assert_int_eq(tu_code(tu_run(fargv, NULL, NULL, e)), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    uint64_t all = m->events; /* a full trace's calls */
    opp_model_free(m);
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, e)), 0);
    m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_gt(asprintf(&first,
                              "opprof: trace written to %s (%llu events, %llu dropped)\n"
                              "opprof run: ",
                              trace, (unsigned long long)m->events, (unsigned long long)m->dropped),
                     0);
    says_dropped(m, all, err = tu_slurp(e), first);
    opp_model_free(m), free(err), free(first);
    /* the preload's own collector says it at the program's exit */
    struct tu_env env;
    const char *extra[] = {"OPPROF_MODE=summary", "OPPROF_MAX_NODES=2", NULL};
    char *pargv[] = {prog, "4", NULL};
    ck_assert_int_eq(tu_code(tu_run(pargv, tu_preload_env_list(&env, trace, extra), NULL, e)), 0);
    m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_gt(asprintf(&first, "opprof: trace written to %s\nopprof: ", trace), 0);
    says_dropped(m, all, err = tu_slurp(e), first);
    opp_model_free(m), free(err), free(first);
    extra[1] = "OPPROF_MAX_NODES=2x"; /* said, and the default kept: nothing dropped */
    ck_assert_int_eq(tu_code(tu_run(pargv, tu_preload_env_list(&env, trace, extra), NULL, e)), 0);
    m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->events, all);
    ck_assert_uint_eq(m->dropped, 0);
    ck_assert_int_gt(asprintf(&first,
                              "opprof-collector: OPPROF_MAX_NODES=2x is not a number from 1 to "
                              "268435456; keeping 1048576 call paths\n"
                              "opprof: trace written to %s\n",
                              trace),
                     0);
    ck_assert_str_eq(err = tu_slurp(e), first);
    opp_model_free(m), free(err), free(first);
    char *bad[] = {(char *)tu_tool("opprof"), "run", "--max-nodes", "0", "--", "true", NULL};
    ck_assert_int_eq(tu_code(tu_run(bad, NULL, NULL, e)), 2);
    err = tu_slurp(e);
    ck_assert_str_eq(err, "opprof run: --max-nodes wants a number from 1 to 268435456, not '0'\n");
    free(err);
    bad[3] = "2"; /* a full trace */
    ck_assert_int_eq(tu_code(tu_run(bad, NULL, NULL, e)), 2);
    err = tu_slurp(e);
    ck_assert_str_eq(err, "opprof run: --max-nodes bounds a summary: give --mode summary too\n");
    free(err), free(e);
}
END_TEST

/* ---- the long run ---- */

struct run_mem {
    long size;           /* trace bytes */
    long collector_kb;   /* the collector's peak RSS */
    long app_kb;         /* the program's */
    uint64_t calls, dropped;
};

static long vm_hwm_kb(int pid)
{
    char p[64], line[256];
    snprintf(p, sizeof p, "/proc/%d/status", pid);
    FILE *f = fopen(p, "r");
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6))
            kb = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kb;
}

static void long_run(long n, const char *name, struct run_mem *r)
{
    char *sock = tu_path(dir, "c.sock"), *out = tu_path(dir, name);
    int cpid = tu_collector_start(sock, out, "--mode=summary");
    ck_assert_int_gt(cpid, 0);
    char se[4200], pre[4200], num[32];
    snprintf(se, sizeof se, "OPPROF_SOCKET=%s", sock);
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", tu_build("libopprof.so"));
    snprintf(num, sizeof num, "%09ld", n); /* one width: the same argv length */
    /* A 2 MiB ring: how much of its ring a thread touches depends on its
     * pace (it rewinds to a quarter when the collector keeps up), so a
     * 16 MiB one would make either peak differ by up to 12 MiB with the
     * machine's load, not with the run's length. */
    char *env[] = {pre, se, "OPPROF_BUFFER=65536", NULL};
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "loop", num, NULL};
    int pid = tu_spawn(argv, env, "/dev/null", NULL);
    ck_assert_int_gt(pid, 0);
    int st;
    struct rusage ru;
    ck_assert_int_eq(wait4(pid, &st, 0, &ru), pid);
    ck_assert_int_eq(tu_code(st), 0);
    r->app_kb = ru.ru_maxrss;
    r->collector_kb = vm_hwm_kb(cpid);
    ck_assert_int_eq(tu_collector_finish(cpid, sock), 0);
    r->size = file_size(out);
    struct opp_model *m = tu_load(out);
    ck_assert_ptr_nonnull(m);
    r->calls = calls(m, "cblas_ddot", -1);
    r->dropped = m->dropped;
    opp_model_free(m);
    unlink(out);
    free(sock);
    free(out);
}

/* 10^8 calls (10^7 under the sanitizers) against 10^6: the same trace
 * size to the byte, every call counted or counted as dropped, and neither
 * the collector's nor the program's peak memory grows with the run.
 * Measured, not timed. */
START_TEST(long_run_constant)
{
    long big = getenv("OPPROF_TOOL_DIR") ? 10000000L : 100000000L;
    struct run_mem a, b;
    long_run(1000000L, "small.trace", &a);
    long_run(big, "big.trace", &b);
    fprintf(stderr, "summary long run: %ld calls (%llu dropped): %ld bytes, collector %ld kB, program %ld kB;"
                    " 1000000 calls: %ld bytes, collector %ld kB, program %ld kB\n",
            big, (unsigned long long)b.dropped, b.size, b.collector_kb, b.app_kb, a.size,
            a.collector_kb, a.app_kb);
    ck_assert_uint_eq(a.calls + a.dropped, 1000000);
    ck_assert_uint_eq(b.calls + b.dropped, (uint64_t)big);
    ck_assert_int_gt(a.size, 0);
    ck_assert_int_eq(b.size, a.size);
    ck_assert_int_gt(a.collector_kb, 0);
    ck_assert_int_le(b.collector_kb, a.collector_kb + 4096);
    ck_assert_int_le(b.app_kb, a.app_kb + 4096);
}
END_TEST

/* `opprof summarize -o -`: refused as export refuses a file format to
 * standard output (exit 2, one line), no file named "-" made. */
START_TEST(summarize_wants_a_file)
{
    char *args[] = {(char *)tu_build("tests/progs/blas_calls"), "1", NULL};
    ck_assert_int_eq(run_scenario(trace, NULL, args), 0);
    char *o, *e;
    char *argv[] = {"summarize", trace, "-o", "-", NULL};
    ck_assert_int_eq(tu_call(cmd_summarize, argv, dir, &o, &e), 2);
    ck_assert_str_eq(o, "");
    ck_assert_str_eq(e, "opprof summarize: a summary trace needs an output file: -o OUT (not -, "
                        "standard output)\n");
    ck_assert_int_eq(access("-", F_OK), -1); /* where the command runs */
    free(o), free(e);
}
END_TEST

/* `opprof summarize --max-nodes N`: the calls on new call paths past N are
 * left out of the summary, counted as dropped; the command says how many
 * in its one line, as it says how many calls it added up. */
START_TEST(summarize_says_calls_past_max_nodes)
{
    char *args[] = {(char *)tu_build("tests/progs/blas_calls"), "4", NULL};
    ck_assert_int_eq(run_scenario(trace, NULL, args), 0);
    struct opp_model *full = tu_load(trace);
    ck_assert_ptr_nonnull(full);
    ck_assert_uint_eq(full->dropped, 0);
    char *sum = tu_path(dir, "s.trace"), *o, *e, *want;
    char *bounded[] = {"summarize", trace, "-o", sum, "--max-nodes", "2", NULL};
    ck_assert_int_eq(tu_call(cmd_summarize, bounded, dir, &o, &e), 0);
    struct opp_model *m = tu_load(sum);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_gt(m->dropped, 0);
    ck_assert_uint_eq(m->events + m->dropped, full->events);
    ck_assert_int_gt(asprintf(&want,
                              "opprof summarize: %llu calls into %s, %llu of them dropped: on "
                              "new call paths past --max-nodes 2\n",
                              (unsigned long long)full->events, sum,
                              (unsigned long long)m->dropped),
                     0);
    ck_assert_str_eq(o, "");
    ck_assert_str_eq(e, want);
    free(o), free(e), free(want);
    /* the report's warning names the bound, not full buffers */
    ck_assert_uint_eq(m->sum_dropped, m->dropped);
    char *rs[] = {"report", sum, NULL};
    ck_assert_int_eq(tu_call(cmd_report, rs, dir, &o, &e), 0);
    ck_assert_int_gt(asprintf(&want,
                              "opprof report: warning: %llu calls on new call paths past the "
                              "summary's bound were dropped: OPPROF_MAX_NODES (opprof run "
                              "--max-nodes, opprof summarize --max-nodes) keeps more\n",
                              (unsigned long long)m->dropped),
                     0);
    ck_assert_str_eq(e, want);
    free(o), free(e), free(want);
    opp_model_free(m);
    /* without the bound nothing is dropped, and the line says no more */
    char *whole[] = {"summarize", trace, "-o", sum, NULL};
    ck_assert_int_eq(tu_call(cmd_summarize, whole, dir, &o, &e), 0);
    ck_assert_int_gt(asprintf(&want, "opprof summarize: %llu calls into %s\n",
                              (unsigned long long)full->events, sum),
                     0);
    ck_assert_str_eq(e, want);
    free(o), free(e), free(want);
    opp_model_free(full);
    free(sum);
}
END_TEST

Suite *suite_summary(void)
{
    Suite *s = suite_create("summary");
    TCase *tc = tcase_create("summary");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, threads_counted);
    tcase_add_test(tc, loop_counted_as_full);
    tcase_add_test(tc, killed_process);
    tcase_add_test(tc, forked_processes);
    tcase_add_test(tc, same_rows_as_full);
    tcase_add_test(tc, streamed_report_same_as_loaded);
    tcase_add_test(tc, streamed_steps_same_as_loaded);
    tcase_add_test(tc, streamed_steps_gpu_same_as_loaded);
    tcase_add_test(tc, streamed_gpu_owners_as_loaded);
    tcase_add_test(tc, streamed_table_gpu_as_loaded);
    tcase_add_test(tc, schedule_windows);
    tcase_add_test(tc, many_steps_constant);
    tcase_add_test(tc, steps_named_under_full_collector);
    tcase_add_test(tc, steps_shared_under_summary_collector);
    tcase_add_test(tc, views_refused);
    tcase_add_test(tc, long_run_constant);
    suite_add_tcase(s, tc);
    TCase *bound = tcase_create("max_nodes");
    tcase_add_checked_fixture(bound, setup, teardown);
    tcase_add_test(bound, summarize_says_calls_past_max_nodes);
    tcase_add_test(bound, summarize_wants_a_file);
    tcase_add_test(bound, run_says_calls_past_max_nodes);
    suite_add_tcase(s, bound);
    return s;
}
