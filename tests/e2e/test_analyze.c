/* `opprof analyze` end to end: 64 rank traces written here, one rank slowed,
 * analysed on Dask's local cluster and on a real dask-scheduler with two
 * dask-worker processes on 127.0.0.1, started once for the suite (the
 * same answer; the other cases use that cluster); its per-rank table
 * against `opprof report --by-rank`; a GPU run of the CUDA test double;
 * bad input. Without Debian's python3-dask, -distributed and -pandas the
 * suite is skipped, saying so. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "tracebuild.h"
#include "views/fmt.h"

#define RANKS 64
#define SLOW 17
#define ITERS 10

enum { F_FORWARD, F_BACKWARD, F_ALLREDUCE, F_STEP_END, NF };

static char *dir;

static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void)
{
    tu_rmdir(dir);
    free(dir);
}

/* The suite's cluster: a dask-scheduler and two dask-worker processes on
 * 127.0.0.1, started before the first case and stopped after the last
 * whatever happens; its address, "" when Dask is missing or it did not
 * start (the cases then fail saying so). */
static struct {
    char *dir;
    int pids[3];
    char address[256];
} cluster;

static void cluster_start(void)
{
    if (!tu_python_has("dask, distributed, pandas"))
        return;
    cluster.dir = tu_tmpdir();
    char *sf = tu_path(cluster.dir, "scheduler.json");
    char *sched[] = {"/usr/bin/dask-scheduler", "--host", "127.0.0.1", "--port", "0",
                     "--no-dashboard", "--scheduler-file", sf, NULL};
    char *worker[] = {"/usr/bin/dask-worker", "--scheduler-file", sf, "--nthreads", "1",
                      "--no-dashboard", "--host", "127.0.0.1", NULL};
    cluster.pids[0] = tu_spawn(sched, NULL, NULL, NULL);
    if (cluster.pids[0] > 0 && tu_wait_file(sf, 60000) == 0) {
        cluster.pids[1] = tu_spawn(worker, NULL, NULL, NULL);
        cluster.pids[2] = tu_spawn(worker, NULL, NULL, NULL);
    }
    for (int i = 0; i < 200 && !cluster.address[0]; i++) { /* the file is written, then filled */
        char *json = tu_slurp(sf);
        const char *a = json ? strstr(json, "\"address\": \"") : NULL;
        if (a)
            sscanf(a + 12, "%255[^\"]", cluster.address);
        else
            usleep(50000);
        free(json);
    }
    free(sf);
}

static void cluster_stop(void)
{
    for (int i = 0; i < 3; i++)
        if (cluster.pids[i] > 0) {
            kill(cluster.pids[i], SIGTERM);
            tu_wait(cluster.pids[i]);
        }
    if (cluster.dir) {
        tu_rmdir(cluster.dir);
        free(cluster.dir);
    }
    memset(&cluster, 0, sizeof cluster);
}

/* The cluster's address, for --scheduler. */
static const char *on_cluster(void)
{
    ck_assert_msg(!strncmp(cluster.address, "tcp://127.0.0.1:", 16),
                  "the suite's dask-scheduler did not start (address '%s')", cluster.address);
    return cluster.address;
}
#define SCHEDULER "--scheduler", (char *)on_cluster()

static int have_dask(void)
{
    if (tu_python_has("dask, distributed, pandas"))
        return 1;
    fprintf(stderr, "skipped: opprof analyze needs python3-dask, python3-distributed and "
                    "python3-pandas (make deps)\n");
    return 0;
}

/* Rank r's trace at path: ITERS iterations of forward (100 us; 300 us on
 * rank SLOW), backward (200 us), allreduce (50 us), step_end (1 us), then
 * 49 us between iterations. Unranked: of a process with no rank variable,
 * on host "h<r>". */
static void write_trace_at(const char *path, int r, int ranked)
{
    char rank[16], host[16];
    snprintf(rank, sizeof rank, "%d", r);
    snprintf(host, sizeof host, "h%d", r);
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 0, .pid = 1000 + (uint32_t)r, .ppid = 1, .parent = UINT32_MAX, .real = 1,
               .exe = "/usr/bin/train", .argv = {"train"});
    if (ranked)
        tb_info(&b, "RANK", rank, "WORLD_SIZE", "64");
    else
        tb_info(&b, "host", host);
    tb_funcs(&b, [F_FORWARD] = {OPP_OP_PLAIN, OPP_DT_NONE, "app", "forward"},
             [F_BACKWARD] = {OPP_OP_PLAIN, OPP_DT_NONE, "app", "backward"},
             [F_ALLREDUCE] = {OPP_OP_PLAIN, OPP_DT_NONE, "app", "allreduce"},
             [F_STEP_END] = {OPP_OP_PLAIN, OPP_DT_NONE, "app", "step_end"});
    tb_thread(&b, 1000 + (uint32_t)r, "train");
    struct tb_ev ev[4 * ITERS];
    memset(ev, 0, sizeof ev);
    uint64_t t = 1000, fwd = r == SLOW ? 300000 : 100000;
    for (int i = 0; i < ITERS; i++) {
        uint64_t a = t, bb = a + fwd, c = bb + 200000, d = c + 50000;
        ev[4 * i + 0] = (struct tb_ev){.fn = F_FORWARD, .begin = a, .end = bb};
        ev[4 * i + 1] = (struct tb_ev){.fn = F_BACKWARD, .begin = bb, .end = c};
        ev[4 * i + 2] = (struct tb_ev){.fn = F_ALLREDUCE, .begin = c, .end = d};
        ev[4 * i + 3] = (struct tb_ev){.fn = F_STEP_END, .begin = d, .end = d + 1000};
        t = d + 1000 + 49000;
    }
    tb_put_events(&b, 0, ev, 4 * ITERS);
    tb_process_end(&b, 0, OPP_END_EXITED, t);
    tb_end(&b);
}

/* Rank r's trace in "rank%02d.trace", or unranked in "one%02d.trace". */
static void write_trace(int r, int ranked)
{
    char path[4200];
    snprintf(path, sizeof path, ranked ? "%s/rank%02d.trace" : "%s/one%02d.trace", dir, r);
    write_trace_at(path, r, ranked);
}

/* A trace of one process (pid 2000, host "h") that made no call. */
static void write_no_call(const char *path)
{
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 0, .pid = 2000, .exe = "/usr/bin/true");
    tb_info(&b, "host", "h");
    tb_end(&b);
}

/* path cut 10 bytes short: inside its END chunk, after its calls. */
static void cut_short(const char *path)
{
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(truncate(path, st.st_size - 10), 0);
}

static void write_ranks(void)
{
    for (int r = 0; r < RANKS; r++)
        write_trace(r, 1);
}

/* opprof analyze ARGS... (NULL-terminated): its exit code, stdout, stderr. */
static int analyze(char **out, char **err, ...)
{
    char *argv[16] = {(char *)tu_tool("opprof"), "analyze"};
    int n = 2;
    va_list ap;
    va_start(ap, err);
    for (char *a; n < 15 && (a = va_arg(ap, char *));)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    char *o = tu_path(dir, "a.out"), *e = tu_path(dir, "a.err");
    int code = tu_code(tu_run(argv, NULL, o, e));
    *out = tu_slurp(o);
    *err = tu_slurp(e);
    free(o), free(e);
    return code;
}

/* The number after "key": in JSON text s, from p on. */
static double num_after(const char *s, const char *key)
{
    const char *p = strstr(s, key);
    ck_assert_msg(p != NULL, "no %s in %s", key, s);
    return strtod(p + strlen(key), NULL);
}

/* The slowed rank and the operator that slows it are found, by step time
 * and by CPU time; the operators summed over ranks are exact. */
START_TEST(straggler_and_its_operator)
{
    if (!have_dask())
        return;
    write_ranks();
    char *out, *err;
    ck_assert_int_eq(analyze(&out, &err, dir, "--workers", "2", "--step", "step_end",
                             "--format", "json", NULL), 0);
    ck_assert_msg(strstr(out, "\"ranks\": [") != NULL, "%s%s", out, err);
    ck_assert_int_eq((int)num_after(out, "\"traces\": "), RANKS);
    ck_assert_ptr_nonnull(strstr(out, "\"rank_time_basis\": \"mean step time\""));
    /* one straggler: rank 17, its steps 600 us against 400 us */
    const char *st = strstr(out, "\"stragglers\": [");
    ck_assert_ptr_nonnull(st);
    ck_assert_int_eq((int)num_after(st, "\"rank\": "), SLOW);
    ck_assert_double_eq_tol(num_after(st, "\"time_us\": "), 600.0, 0.001);
    ck_assert_double_eq_tol(num_after(st, "\"over_median\": "), 1.5, 0.0001);
    ck_assert_ptr_null(strstr(strstr(st, "\"operators\""), "\"rank\": ")); /* only one */
    /* its slow operator: forward, 3 ms there against the median 1 ms */
    const char *op = strstr(st, "\"operators\": [");
    ck_assert_ptr_nonnull(op);
    ck_assert_ptr_nonnull(strstr(op, "{\"key\": \"forward\", \"rank_us\": 3000.0, \"median_us\": 1000.0, "
                                     "\"over_us\": 2000.0}"));
    /* key_averages over all ranks: 64 x 10 calls; forward 63 ms + 3 ms */
    const char *ka = strstr(out, "\"key_averages\": [");
    ck_assert_ptr_nonnull(ka);
    ck_assert_ptr_nonnull(strstr(ka, "{\"key\": \"forward\", \"count\": 640, ")); /* not 640.0 */
    ck_assert_double_eq_tol(num_after(strstr(ka, "\"forward\""), "\"self_cpu_time_total\": "),
                            63 * 1000.0 + 3000.0, 0.01);
    free(out), free(err);
    /* without steps: the ranks' CPU time says the same */
    ck_assert_int_eq(analyze(&out, &err, dir, SCHEDULER, NULL), 0);
    ck_assert_ptr_nonnull(strstr(out, "64 traces, 64 ranks\n"));
    ck_assert_ptr_nonnull(strstr(out, "straggler: rank 17, 5.510ms (1.57x the median)\n"));
    ck_assert_ptr_nonnull(strstr(out, "    forward                                      3.000ms here, "
                                      "median 1.000ms (+2.000ms)\n"));
    ck_assert_int_eq(tu_count_lines(out, "straggler:"), 1);
    free(out), free(err);
}
END_TEST

/* Names from the traces shown as the report's text views show them: a
 * name's escape sequence and line break escaped, not acted on. */
START_TEST(names_shown_escaped)
{
    if (!have_dask())
        return;
    for (int r = 0; r < 2; r++) {
        char path[4200], rank[16];
        snprintf(path, sizeof path, "%s/rank%02d.trace", dir, r);
        snprintf(rank, sizeof rank, "%d", r);
        struct tb b;
        tb_open(&b, path);
        tb_process(&b, .proc = 0, .pid = 1000 + (uint32_t)r, .exe = "/usr/bin/train");
        tb_info(&b, "RANK", rank, "WORLD_SIZE", "2");
        tb_funcs(&b, {OPP_OP_PLAIN, OPP_DT_NONE, "app", "fwd\x1b]0;x\x07\nrow\xc2\x9b"});
        tb_thread(&b, 1000 + (uint32_t)r, "train");
        tb_events(&b, TB_CALL(0, 1000, 2000, 0));
        tb_end(&b);
    }
    char *out, *err;
    ck_assert_int_eq(analyze(&out, &err, dir, SCHEDULER, NULL), 0);
    /* 26 characters, padded to 48 like any other name */
    ck_assert_msg(strstr(out, "\nfwd\\x1b]0;x\\x07\\nrow\\u009b                      "
                              "          2        2.000us"),
                  "%s", out);
    ck_assert_ptr_null(strpbrk(out, "\x1b\x07"));
    ck_assert_ptr_null(strstr(out, "\xc2\x9b"));
    free(out), free(err);
}
END_TEST

/* analyze's JSON (its per-rank table) against `opprof report --by-rank -f
 * json` run as report (NULL-terminated), through Python's json: "ranks
 * equal, names equal, every value equal (to 0.0005 us), names, ranks". */
static char *vs_by_rank(const char *analyze_json, char **report)
{
    char *aj = tu_path(dir, "analyze.json"), *bj = tu_path(dir, "byrank.json");
    char *res = tu_path(dir, "cmp");
    FILE *f = fopen(aj, "w");
    fputs(analyze_json, f);
    fclose(f);
    ck_assert_int_eq(tu_code(tu_run(report, NULL, bj, NULL)), 0);
    char script[] =
        "import json, sys\n"
        "a = json.load(open(sys.argv[1]))['per_rank']\n"
        "b = json.load(open(sys.argv[2]))\n"
        "av = {r['key']: r['values'] for r in a['rows']}\n"
        "bv = {r['key']: r['values'] for r in b['rows']}\n"
        "print(a['ranks'] == b['ranks'], sorted(av) == sorted(bv),\n"
        "      all(abs(x - y) <= 0.0005 for k in av for x, y in zip(av[k], bv[k])),\n"
        "      len(av), len(a['ranks']))\n";
    char *py[] = {"/usr/bin/python3", "-c", script, aj, bj, NULL};
    ck_assert_int_eq(tu_code(tu_run(py, NULL, res, NULL)), 0);
    char *r = tu_slurp(res);
    free(aj), free(bj), free(res);
    return r;
}

/* analyze's table of operators by rank is `opprof report --by-rank`'s over
 * the same 64 traces, value for value. */
START_TEST(per_rank_equals_report_by_rank)
{
    if (!have_dask())
        return;
    write_ranks();
    char *out, *err;
    ck_assert_int_eq(analyze(&out, &err, dir, SCHEDULER, "--format", "json", NULL), 0);
    char *argv[8 + RANKS] = {(char *)tu_tool("opprof"), "report", "--by-rank", "-f", "json"};
    int n = 5;
    char paths[RANKS][4200];
    for (int r = 0; r < RANKS; r++) {
        snprintf(paths[r], sizeof paths[r], "%s/rank%02d.trace", dir, r);
        argv[n++] = paths[r];
    }
    argv[n] = NULL;
    char *r = vs_by_rank(out, argv);
    ck_assert_str_eq(r, "True True True 4 64\n");
    free(r), free(out), free(err);
}
END_TEST

/* Of an even number of ranks the median is the lower middle one, as
 * `opprof report --by-rank` takes it (README), not the mean of the two:
 * ranks 16 and 17, forward 1 ms and 3 ms. */
START_TEST(median_of_two_ranks_is_report_s)
{
    if (!have_dask())
        return;
    write_trace(16, 1);
    write_trace(SLOW, 1);
    char *out, *err;
    ck_assert_int_eq(analyze(&out, &err, dir, SCHEDULER, NULL), 0);
    ck_assert_msg(strstr(out, ": min 3.510ms, median 3.510ms, max 5.510ms\n") != NULL, "%s%s", out,
                  err);
    ck_assert_ptr_nonnull(strstr(out, "straggler: rank 17, 5.510ms (1.57x the median)\n"));
    ck_assert_ptr_nonnull(strstr(out,
                                 "    forward                                      3.000ms here, "
                                 "median 1.000ms (+2.000ms)\n"));
    free(out), free(err);
    char a[4200], b[4200];
    snprintf(a, sizeof a, "%s/rank16.trace", dir);
    snprintf(b, sizeof b, "%s/rank17.trace", dir);
    char *argv[] = {(char *)tu_tool("opprof"), "report", "--by-rank", a, b, NULL};
    char *o = tu_path(dir, "r.out");
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, o, NULL)), 0);
    char *rep = tu_slurp(o);
    const char *fwd = strstr(rep, "\nforward ");
    ck_assert_msg(fwd != NULL, "%s", rep);
    /* Rank 16, Rank 17, Min, Median, Max, Slowest */
    ck_assert_msg(strstr(fwd, "1.000ms       3.000ms       1.000ms       1.000ms       3.000ms") !=
                      NULL,
                  "%s", rep);
    free(rep), free(o);
}
END_TEST

/* One trace holding a whole job (3 ranks, and the shell that started them,
 * which has none): the task splits it by rank (--by-rank), so the per-rank
 * table is that trace's `opprof report --by-rank`, value for value. */
START_TEST(one_trace_many_ranks)
{
    if (!have_dask())
        return;
    char *trace = tu_path(dir, "job.trace"), cmd[4400];
    snprintf(cmd, sizeof cmd, "for r in 0 1 2; do RANK=$r %s $((r+2)) & done; wait",
             tu_build("tests/progs/blas_calls"));
    char *run[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", "/bin/sh", "-c", cmd,
                   NULL};
    ck_assert_int_eq(tu_code(tu_run(run, NULL, NULL, NULL)), 0);
    char *out, *err;
    ck_assert_int_eq(analyze(&out, &err, trace, SCHEDULER, "--format", "json", NULL), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"ranks\": [0, 1, 2]"));
    char *br[] = {(char *)tu_tool("opprof"), "report", trace, "--by-rank", "-f", "json", "--limit",
                  "1000", NULL};
    char *r = vs_by_rank(out, br);
    ck_assert_str_eq(r, "True True True 7 3\n");
    free(r), free(out), free(err), free(trace);
}
END_TEST

/* Two traces of one rank (a copy, or another run's trace of it) would add
 * up as one rank, twice its time, a straggler of its own making: refused,
 * one line, exit 2, naming both; so is a rank that a trace of several
 * ranks holds too. */
START_TEST(one_rank_in_two_traces)
{
    if (!have_dask())
        return;
    write_trace(0, 1);
    write_trace(1, 1);
    char *again = tu_path(dir, "rank00b.trace"), want[8800], *out, *err;
    write_trace_at(again, 0, 1);
    ck_assert_int_eq(analyze(&out, &err, dir, SCHEDULER, NULL), 2);
    snprintf(want, sizeof want,
             "opprof analyze: %s/rank00.trace and %s both hold rank 0: give each rank's trace "
             "once\n",
             dir, again);
    ck_assert_str_eq(err, want);
    ck_assert_str_eq(out, "");
    free(out), free(err);
    ck_assert_int_eq(unlink(again), 0);
    char *job = tu_path(dir, "job.trace"), cmd[4400];
    snprintf(cmd, sizeof cmd, "for r in 1 2; do RANK=$r %s 2 & done; wait",
             tu_build("tests/progs/blas_calls"));
    char *run[] = {
        (char *)tu_tool("opprof"), "run", "-q", "-o", job, "--", "/bin/sh", "-c", cmd, NULL};
    ck_assert_int_eq(tu_code(tu_run(run, NULL, NULL, NULL)), 0);
    ck_assert_int_eq(analyze(&out, &err, dir, "--workers", "1", NULL), 2);
    snprintf(want, sizeof want,
             "opprof analyze: %s and %s/rank01.trace both hold rank 1: give each rank's trace "
             "once\n",
             job, dir);
    ck_assert_str_eq(err, want);
    free(out), free(err), free(again), free(job);
}
END_TEST

/* Traces without a rank variable are numbered in file order: every rank
 * made up is shown with its file, host and pid, the straggler's too; the
 * rank variables are named where to find them. One trace is "1 trace". */
START_TEST(unranked_traces_named)
{
    if (!have_dask())
        return;
    for (int r = SLOW - 2; r <= SLOW; r++)
        write_trace(r, 0);
    char *out, *err, want[16384];
    ck_assert_int_eq(analyze(&out, &err, dir, SCHEDULER, NULL), 0);
    snprintf(want, sizeof want,
             "3 traces, 3 ranks\n"
             "3 ranks numbered in file order (no process of their traces had a rank variable; "
             "`opprof report --help` lists them under --by-rank):\n"
             "    rank 0: [%s/one15.trace, host h15, pid 1015]\n"
             "    rank 1: [%s/one16.trace, host h16, pid 1016]\n"
             "    rank 2: [%s/one17.trace, host h17, pid 1017]\n\n",
             dir, dir, dir);
    ck_assert_msg(!strncmp(out, want, strlen(want)), "%s%s", out, err);
    snprintf(want, sizeof want,
             "\nstraggler: rank 2 [%s/one17.trace, host h17, pid 1017], 5.510ms (1.57x the "
             "median)\n",
             dir);
    ck_assert_msg(strstr(out, want) != NULL, "%s", out);
    free(out), free(err);
    char one[4200];
    snprintf(one, sizeof one, "%s/one17.trace", dir);
    ck_assert_int_eq(analyze(&out, &err, one, SCHEDULER, "--format", "json", NULL), 0);
    ck_assert_msg(strstr(out, "\"traces\": 1, \"ranks\": [0], ") != NULL, "%s", out);
    snprintf(want, sizeof want,
             "\"unranked\": {\"0\": {\"trace\": \"%s\", \"host\": \"h17\", \"pid\": 1017}}}",
             one);
    ck_assert_msg(strstr(out, want) != NULL, "%s", out);
    free(out), free(err);
    ck_assert_int_eq(analyze(&out, &err, one, SCHEDULER, NULL), 0);
    const char *single = "1 trace, 1 rank\n1 rank numbered in file order (no process of its "
                         "trace had a rank variable; ";
    ck_assert_msg(!strncmp(out, single, strlen(single)), "%s", out);
    free(out), free(err);
}
END_TEST

/* The same analysis through the suite's dask-scheduler and its two
 * dask-worker processes: the same JSON as on the local cluster. */
START_TEST(same_answer_on_a_cluster)
{
    if (!have_dask())
        return;
    write_ranks();
    char *local, *remote, *err;
    ck_assert_int_eq(analyze(&local, &err, dir, "--workers", "2", "--format", "json", NULL), 0);
    free(err);
    int code = analyze(&remote, &err, dir, SCHEDULER, "--format", "json", NULL);
    ck_assert_msg(code == 0, "%s", err);
    ck_assert_str_eq(remote, local);
    free(remote), free(local), free(err);
}
END_TEST

/* A GPU run (the CUDA test double, RANK=0): compute and copy time exact,
 * no communication, a launch delay per kernel. */
START_TEST(gpu_time_per_rank)
{
    if (!have_dask())
        return;
    if (access(tu_build("tests/double/gpu_app"), X_OK) != 0) {
        fprintf(stderr, "skipped: no CUDA toolkit at build time, so no test double\n");
        return;
    }
#ifndef OPP_HAVE_SQLITE
    fprintf(stderr, "skipped: the GPU breakdown reads the SQLite export (no libsqlite3-dev)\n");
    return;
#endif
    char *trace = tu_path(dir, "g.trace"), cupti[4200];
    snprintf(cupti, sizeof cupti, "OPPROF_CUPTI=%s", tu_build("tests/double/libcudart.so.13"));
    struct tu_env te;
    const char *vars[] = {cupti, "RANK=0", NULL};
    char *argv[] = {(char *)tu_build("tests/double/gpu_app"), NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, tu_preload_env_list(&te, trace, vars), NULL, NULL)), 0);
    char *out, *err;
    ck_assert_int_eq(analyze(&out, &err, trace, SCHEDULER, "--format", "json", NULL), 0);
    const char *g = strstr(out, "\"gpu\": [{\"rank\": 0, ");
    ck_assert_msg(g != NULL, "%s%s", out, err);
    /* kernels 10 + 11 + 12 us and 3 x 2 us; two 65,536 ns copies */
    ck_assert_double_eq_tol(num_after(g, "\"compute_us\": "), 39.0, 1e-9);
    ck_assert_double_eq_tol(num_after(g, "\"communication_us\": "), 0.0, 1e-9);
    ck_assert_double_eq_tol(num_after(g, "\"memcpy_us\": "), 131.072, 1e-9);
    ck_assert(num_after(g, "\"idle_us\": ") >= 0);
    const char *d = strstr(out, "\"launch_delays_us\": [{\"rank\": 0, ");
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq((int)num_after(d, "\"kernels\": "), 6);
    ck_assert(num_after(d, "\"max\": ") >= num_after(d, "\"p50\": "));
    free(out), free(err), free(trace);
}
END_TEST

/* What `opprof report TRACE` says on stderr of a trace that it reads
 * (malloc'd). */
static char *report_says(const char *trace)
{
    char *argv[] = {(char *)tu_tool("opprof"), "report", (char *)trace, NULL};
    char *e = tu_path(dir, "r.err");
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, e)), 0);
    char *said = tu_slurp(e);
    free(e);
    return said;
}

/* A damaged trace's warnings are the report's, each said in one line that
 * names the trace; a trace of no call (cut before its first, or of a
 * program that made none: /bin/true) is left out, said on stderr and in
 * the output, and counted as a trace, not as a rank. */
START_TEST(damaged_and_empty_traces_said)
{
    if (!have_dask())
        return;
    write_trace(0, 1);
    write_trace(1, 1);
    char *cut = tu_path(dir, "rank01.trace"), *nothing = tu_path(dir, "rank02.trace");
    char *empty = tu_path(dir, "true.trace");
    cut_short(cut);
    write_no_call(nothing);
    cut_short(nothing);
    char *run[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", empty, "--", "/bin/true", NULL};
    ck_assert_int_eq(tu_code(tu_run(run, NULL, NULL, NULL)), 0);
    /* the report's warning, "opprof report: warning: trace cut at byte N:
     * ...", one each; then its line on the trace of no call, which analyze
     * says its own way */
    char *said = report_says(cut), *said2 = report_says(nothing), want[16384];
    const char *w = "opprof report: warning: ";
    ck_assert_msg(!strncmp(said, w, strlen(w)) && tu_count_lines(said, "opprof report:") == 1, "%s",
                  said);
    char *second = strchr(said2, '\n') + 1;
    snprintf(want, sizeof want,
             "opprof report: %s holds no call in what could be read of it (the warning above)\n",
             nothing);
    ck_assert_msg(!strncmp(said2, w, strlen(w)) && !strcmp(second, want), "%s", said2);
    *second = 0;
    snprintf(want, sizeof want,
             "opprof analyze: warning: %s: %s"
             "opprof analyze: warning: %s: %s"
             "opprof analyze: warning: %s holds no call in what could be read of it: left out\n"
             "opprof analyze: warning: %s holds no call: left out\n",
             cut, said + strlen(w), nothing, said2 + strlen(w), nothing, empty);
    char *out, *err;
    ck_assert_int_eq(analyze(&out, &err, dir, SCHEDULER, NULL), 0);
    ck_assert_str_eq(err, want);
    snprintf(want, sizeof want,
             "4 traces, 2 ranks\n"
             "2 traces left out:\n"
             "    %s: holds no call in what could be read of it\n"
             "    %s: holds no call\n\n"
             "Operators over all ranks",
             nothing, empty);
    ck_assert_msg(!strncmp(out, want, strlen(want)), "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "\nRanks by self CPU time of its operators: min 3.510ms, "
                                      "median 3.510ms, max 3.510ms\n"));
    free(out), free(err);
    ck_assert_int_eq(analyze(&out, &err, dir, "--workers", "1", "--format", "json", NULL), 0);
    ck_assert_msg(!strncmp(out, "{\"traces\": 4, \"ranks\": [0, 1], ", 31), "%s", out);
    snprintf(want, sizeof want,
             "\"left_out\": [{\"trace\": \"%s\", \"why\": \"holds no call in what could be read of "
             "it\"}, {\"trace\": \"%s\", \"why\": \"holds no call\"}]",
             nothing, empty);
    ck_assert_msg(strstr(out, want) != NULL, "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "\"rank_times_us\": {\"0\": 3510.0, \"1\": 3510.0}"));
    free(out), free(err);
    /* nothing left: the one line that says so after the warnings */
    ck_assert_int_eq(unlink(cut), 0);
    ck_assert_int_eq(unlink(tu_path(dir, "rank00.trace")), 0);
    ck_assert_int_eq(analyze(&out, &err, dir, SCHEDULER, NULL), 1);
    snprintf(want, sizeof want,
             "opprof analyze: warning: %s: %s"
             "opprof analyze: warning: %s holds no call in what could be read of it: left out\n"
             "opprof analyze: warning: %s holds no call: left out\n"
             "opprof analyze: no operator in these traces\n",
             nothing, said2 + strlen(w), nothing, empty);
    ck_assert_str_eq(err, want);
    ck_assert_str_eq(out, "");
    free(out), free(err), free(said), free(said2), free(cut), free(nothing), free(empty);
}
END_TEST

/* Trace paths shown as names are (a line break, an escape sequence, a
 * byte that is not UTF-8 escaped as the tool's messages escape them), in
 * the ranks made up, the traces left out and the warnings. */
START_TEST(paths_shown_escaped)
{
    if (!have_dask())
        return;
    char *odd = tu_path(dir, "a\nb\x1b[31m.trace"), *bad = tu_path(dir, "e\xff.trace");
    write_trace_at(odd, 0, 0);
    write_no_call(bad);
    char *out, *err, want[16384];
    ck_assert_int_eq(analyze(&out, &err, dir, SCHEDULER, NULL), 0);
    snprintf(want, sizeof want,
             "opprof analyze: warning: %s/e\\xff.trace holds no call: left out\n", dir);
    ck_assert_str_eq(err, want);
    snprintf(want, sizeof want,
             "1 trace left out:\n"
             "    %s/e\\xff.trace: holds no call\n"
             "1 rank numbered in file order (no process of its trace had a rank variable; "
             "`opprof report --help` lists them under --by-rank):\n"
             "    rank 0: [%s/a\\nb\\x1b[31m.trace, host h0, pid 1000]\n\n",
             dir, dir);
    ck_assert_msg(!strncmp(out, "2 traces, 1 rank\n", 17) && !strncmp(out + 17, want, strlen(want)),
                  "%s", out);
    ck_assert_ptr_null(strchr(out, '\x1b'));
    ck_assert_ptr_null(strchr(out, '\xff'));
    free(out), free(err);
    /* in the JSON, as the tool's JSON has such a byte: U+FFFD */
    ck_assert_int_eq(analyze(&out, &err, dir, SCHEDULER, "--format", "json", NULL), 0);
    snprintf(want, sizeof want,
             "\"left_out\": [{\"trace\": \"%s/e\\ufffd.trace\", \"why\": \"holds no call\"}]", dir);
    ck_assert_msg(strstr(out, want) != NULL, "%s", out);
    snprintf(want, sizeof want, "\"unranked\": {\"0\": {\"trace\": \"%s/a\\nb\\u001b[31m.trace\"",
             dir);
    ck_assert_msg(strstr(out, want) != NULL, "%s", out);
    free(out), free(err), free(odd), free(bad);
}
END_TEST

/* Dask's dashboard port (8787) taken: the local cluster still says
 * nothing on stderr (the port is its scheduler's HTTP server's default,
 * which warns when it moves). */
START_TEST(busy_dashboard_port_unsaid)
{
    if (!have_dask())
        return;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {
        .sin_family = AF_INET, .sin_port = htons(8787), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    /* already taken (by another cluster) does as well */
    ck_assert(s >= 0 && ((!bind(s, (struct sockaddr *)&a, sizeof a) && !listen(s, 1)) ||
                         errno == EADDRINUSE));
    write_trace(0, 1);
    char *out, *err;
    ck_assert_int_eq(analyze(&out, &err, dir, "--workers", "1", NULL), 0);
    ck_assert_str_eq(err, "");
    ck_assert_ptr_nonnull(strstr(out, "1 trace, 1 rank\n"));
    close(s);
    free(out), free(err);
}
END_TEST

/* Standard output that cannot be written (a full device, closed): one
 * line that says so, exit 1, as every command of the tool. */
START_TEST(output_unwritable_said)
{
    if (!have_dask())
        return;
    write_trace(0, 1);
    char *t = tu_path(dir, "rank00.trace"), *e = tu_path(dir, "a.err");
    char *full[] = {(char *)tu_tool("opprof"), "analyze", t, "--workers", "1", NULL};
    ck_assert_int_eq(tu_code(tu_run(full, NULL, "/dev/full", e)), 1);
    char *err = tu_slurp(e);
    ck_assert_str_eq(err, "opprof analyze: cannot write the output: No space left on device\n");
    free(err);
    char *shut = "exec \"$@\" >&-", *op = (char *)tu_tool("opprof");
    char *closed[] = {"/bin/sh", "-c", shut, "sh", op, "analyze", t, "--format", "json", NULL};
    ck_assert_int_eq(tu_code(tu_run(closed, NULL, NULL, e)), 1);
    err = tu_slurp(e);
    ck_assert_str_eq(err, "opprof analyze: cannot write the output: Bad file descriptor\n");
    free(err), free(e), free(t);
}
END_TEST

/* cp in UTF-8 at p; the bytes written. */
static size_t put_utf8(char *p, uint32_t cp)
{
    size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    static const unsigned char lead[] = {0, 0, 0xc0, 0xe0, 0xf0};
    for (size_t i = n - 1; i > 0; i--, cp >>= 6)
        p[i] = (char)(0x80 | (cp & 0x3f));
    p[0] = (char)(lead[n] | cp);
    return n;
}

/* analyze's text escaping (show.text, of a path as Python decodes it) is
 * the tool's (opp_text_fput), byte for byte: every character to U+3000, a
 * few past it, every byte that cannot start a character alone, and the
 * sequences that are not UTF-8 (cut short, overlong, a surrogate, past
 * U+10FFFF). */
START_TEST(text_escaped_as_the_tool)
{
    size_t cap = 0x3000 * 4 + 4096, n = 0;
    char *s = malloc(cap);
    for (uint32_t cp = 1; cp < 0x3000; cp++)
        n += put_utf8(s + n, cp);
    const uint32_t high[] = {0xd7ff, 0xe000, 0xfeff, 0xfffd, 0xffff, 0x10000, 0x1f600, 0x10ffff};
    for (size_t i = 0; i < sizeof high / sizeof *high; i++)
        n += put_utf8(s + n, high[i]);
    for (int b = 0x80; b <= 0xff; b++)
        s[n++] = (char)b, s[n++] = 'a';
    const char *bad = "\xe2\x80z\xc0\x80\xed\xa0\x80\xf4\x90\x80\x80\xf0\x90\x80z\xe0\x9f\xbf";
    memcpy(s + n, bad, strlen(bad) + 1);
    char *in = tu_path(dir, "in"), *got = tu_path(dir, "got"), path[4200];
    FILE *f = fopen(in, "w");
    fputs(s, f);
    fclose(f);
    snprintf(path, sizeof path, "PYTHONPATH=%s", tu_build("analyze"));
    char *env[] = {path, NULL};
    char *py[] = {"/usr/bin/python3", "-c",
                  "import os, sys\n"
                  "from opprof_analyze import show\n"
                  "s = os.fsdecode(open(sys.argv[1], 'rb').read())\n"
                  "sys.stdout.buffer.write(show.text(s).encode())\n",
                  in, NULL};
    ck_assert_int_eq(tu_code(tu_run(py, env, got, NULL)), 0);
    char *want;
    size_t len;
    f = open_memstream(&want, &len);
    opp_text_fput(f, s);
    fclose(f);
    char *shown = tu_slurp(got);
    ck_assert_uint_eq(strlen(shown), len);
    ck_assert_str_eq(shown, want);
    free(shown), free(want), free(in), free(got), free(s);
}
END_TEST

/* opprof analyze ARGS... (NULL-terminated): "CODE STDERR", its exit code
 * and all it said on stderr, for one exact comparison; stdout empty. */
static char *refused(const char *first, ...)
{
    char *argv[16] = {(char *)tu_tool("opprof"), "analyze"};
    int n = 2;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; n < 15 && a; a = va_arg(ap, const char *))
        argv[n++] = (char *)a;
    va_end(ap);
    argv[n] = NULL;
    char *o = tu_path(dir, "a.out"), *e = tu_path(dir, "a.err");
    int code = tu_code(tu_run(argv, NULL, o, e));
    char *out = tu_slurp(o), *err = tu_slurp(e);
    ck_assert_msg(out && !out[0], "stdout: %s", out);
    size_t len = strlen(err) + 16;
    char *r = malloc(len);
    snprintf(r, len, "%d %s", code, err);
    free(o), free(e), free(out), free(err);
    return r;
}

#define REFUSED(want, ...)                                                                         \
    do {                                                                                           \
        char *got_ = refused(__VA_ARGS__, NULL);                                                   \
        ck_assert_str_eq(got_, want);                                                              \
        free(got_);                                                                                \
    } while (0)

/* Wrong input: a clear line and a non-zero exit. */
START_TEST(bad_input)
{
    char *missing = tu_path(dir, "nope.trace"), want[4400];
    snprintf(want, sizeof want, "1 opprof analyze: %s: no such file or directory\n", missing);
    REFUSED(want, missing);
    char *junk = tu_path(dir, "junk.trace");
    FILE *f = fopen(junk, "w");
    fputs("not a trace\n", f);
    fclose(f);
    /* said before any task starts, on the local cluster too: one line,
     * no worker's failure printed */
    snprintf(want, sizeof want, "1 opprof analyze: %s is not an opprof trace (bad magic)\n", junk);
    REFUSED(want, junk);
    char *empty = tu_path(dir, "empty");
    ck_assert_int_eq(mkdir(empty, 0700), 0);
    snprintf(want, sizeof want, "1 opprof analyze: no *.trace file in %s\n", empty);
    REFUSED(want, empty);
    free(missing), free(junk), free(empty);
}
END_TEST

/* Wrong arguments: one line each, exit 2, said before Dask starts (a
 * trace's path, not a directory, so that nothing else is wrong). */
START_TEST(wrong_arguments)
{
    write_trace(0, 1);
    char *t = tu_path(dir, "rank00.trace");
    REFUSED("2 opprof analyze: --workers takes 1 to 1, one per trace at most, not 999999999\n", t,
            "--workers", "999999999");
    write_trace(1, 1);
    REFUSED("2 opprof analyze: --workers takes 1 to 2, one per trace at most, not 3\n", dir,
            "--workers", "3");
    REFUSED("2 opprof analyze: --workers wants a positive number, not '0'\n", t, "--workers", "0");
    REFUSED("2 opprof analyze: --workers wants a positive number, not '-4'\n", t, "--workers",
            "-4");
    REFUSED("2 opprof analyze: --workers wants a positive number, not '2x'\n", t, "--workers",
            "2x");
    REFUSED("2 opprof analyze: --top wants a positive number, not '-1'\n", t, "--top", "-1");
    REFUSED("2 opprof analyze: option '--workers' wants a value\n", t, "--workers");
    REFUSED("2 opprof analyze: option '--scheduler' wants a value\n", t, "--scheduler");
    REFUSED("2 opprof analyze: --scheduler wants a Dask scheduler's address (tcp://HOST:PORT)\n", t,
            "--scheduler=");
    REFUSED("2 opprof analyze: --step wants an operator name\n", t, "--step", "");
    REFUSED("2 opprof analyze: unknown format 'xml' (one of: text, json)\n", t, "--format", "xml");
    REFUSED("2 opprof analyze: unknown option '--bogus' (see 'opprof analyze --help')\n", t,
            "--bogus");
    REFUSED("2 opprof analyze: unknown option '-x' (see 'opprof analyze --help')\n", t, "-x");
    REFUSED("2 opprof analyze: which traces? (usage: opprof analyze TRACE_OR_DIR... [options])\n",
            "--top", "3");
    REFUSED("2 opprof analyze: --workers is for the local cluster; --scheduler's cluster has its "
            "own\n",
            t, "--scheduler", "tcp://127.0.0.1:8786", "--workers", "1");
    free(t);
}
END_TEST

/* The same trace twice (by its path again, a link, or its directory) is
 * a usage error, refused as the report refuses it, word for word: it
 * would count twice. */
START_TEST(same_trace_twice)
{
    write_trace(0, 1);
    write_trace(1, 1);
    char *t = tu_path(dir, "rank00.trace"), *link = tu_path(dir, "link.trace");
    ck_assert_int_eq(symlink(t, link), 0);
    char want[8800];
    snprintf(want, sizeof want, "2 opprof analyze: %s and %s are the same trace: give it once\n", t,
             t);
    REFUSED(want, t, t);
    /* the report's own words for it */
    char *report[] = {(char *)tu_tool("opprof"), "report", t, t, NULL};
    char *e = tu_path(dir, "r.err");
    ck_assert_int_eq(tu_code(tu_run(report, NULL, NULL, e)), 2);
    char *said = tu_slurp(e);
    ck_assert_str_eq(said + strlen("opprof report: "), want + strlen("2 opprof analyze: "));
    free(said), free(e);
    /* the directory holds the link, which is rank00.trace: after it by name */
    snprintf(want, sizeof want,
             "2 opprof analyze: %s/link.trace and %s/rank00.trace are the same trace: give it "
             "once\n",
             dir, dir);
    REFUSED(want, dir);
    ck_assert_int_eq(unlink(link), 0);
    snprintf(want, sizeof want,
             "2 opprof analyze: %s/rank01.trace and %s/rank01.trace are the same trace: give it "
             "once\n",
             dir, dir);
    char *t1 = tu_path(dir, "rank01.trace");
    REFUSED(want, dir, t1);
    free(t), free(t1), free(link);
}
END_TEST

/* What only Dask or a trace can answer, still one line and exit 2: an
 * address Dask cannot read, a --step NAME no call of the trace has (no
 * worker's log of a failed task). */
START_TEST(wrong_arguments_dask)
{
    if (!have_dask())
        return;
    write_trace(0, 1);
    char *t = tu_path(dir, "rank00.trace"), want[8800];
    REFUSED("2 opprof analyze: --scheduler wants a Dask scheduler's address, tcp://HOST:PORT, not "
            "'bogus' (missing port number in address 'bogus')\n",
            t, "--scheduler", "bogus");
    /* a NAME that begins as an option is a name all the way */
    const char *names[] = {"nope", "-x"};
    for (int i = 0; i < 2; i++) {
        snprintf(want, sizeof want,
                 "2 opprof analyze: opprof report: --step '%s': no call of that name in %s "
                 "(`opprof report %s` lists its operators and ranges)\n",
                 names[i], t, t);
        REFUSED(want, t, "--step", names[i], "--workers", "1");
    }
    free(t);
}
END_TEST

Suite *suite_analyze(void)
{
    Suite *s = suite_create("analyze");
    TCase *tc = tcase_create("dask");
    tcase_add_unchecked_fixture(tc, cluster_start, cluster_stop);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, straggler_and_its_operator);
    tcase_add_test(tc, per_rank_equals_report_by_rank);
    tcase_add_test(tc, median_of_two_ranks_is_report_s);
    tcase_add_test(tc, names_shown_escaped);
    tcase_add_test(tc, one_trace_many_ranks);
    tcase_add_test(tc, one_rank_in_two_traces);
    tcase_add_test(tc, unranked_traces_named);
    tcase_add_test(tc, same_answer_on_a_cluster);
    tcase_add_test(tc, gpu_time_per_rank);
    tcase_add_test(tc, damaged_and_empty_traces_said);
    tcase_add_test(tc, paths_shown_escaped);
    tcase_add_test(tc, output_unwritable_said);
    tcase_add_test(tc, busy_dashboard_port_unsaid);
    suite_add_tcase(s, tc);
    /* what is refused: nothing long runs, no cluster is needed */
    TCase *args = tcase_create("arguments");
    tcase_add_checked_fixture(args, setup, teardown);
    tcase_set_timeout(args, 60);
    tcase_add_test(args, bad_input);
    tcase_add_test(args, wrong_arguments);
    tcase_add_test(args, same_trace_twice);
    tcase_add_test(args, wrong_arguments_dask);
    tcase_add_test(args, text_escaped_as_the_tool);
    suite_add_tcase(s, args);
    return s;
}
