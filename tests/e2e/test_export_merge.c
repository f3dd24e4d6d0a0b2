/* `opprof export FORMAT A.trace B.trace`: two hosts' traces, written by hand
 * with a known clock offset and the same pid, exported as one by the real
 * opprof: times on the first trace's clock as `opprof report A B` puts them
 * (opp_model_load_many), colliding pids and GPUs renumbered and named, the
 * JSON parsed by Python, event counts the sum of the single exports. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/model.h"
#include "ops.h"
#include "testutil.h"
#include "tracebuild.h"
#include "oracle/loaded.h"

TU_TRACE_FIXTURE

/* One host's trace: process serial 1, pid 10 (both hosts), started at mono
 * ns `start` with realtime `real`, labels RANK and host; one cblas_ddot
 * [begin, end] on thread 10; one kernel "k1" on device 0, stream 7, [kb, ke]. */
static void write_host(const char *path, uint64_t start, uint64_t real, uint64_t begin,
                       uint64_t end, uint64_t kb, uint64_t ke, const char *rank, const char *host)
{
    struct tb t;
    tb_open(&t, path);
    tb_process(&t, .proc = 1, .pid = 10, .start = start, .real = real, .exe = "/usr/bin/train");
    tb_funcs(&t, {OPP_OP_DOT, OPP_DT_F64, "blas", "cblas_ddot"});
    tb_info(&t, "RANK", rank, "host", host);
    tb_thread(&t, 10, NULL);
    tb_events(&t, TB_CALL(0, begin, end, 0, 100));
    tb_string(&t, 1, "k1");
    tb_kernel(&t, .name = 1, .start = kb, .end = ke, .stream = 7, .grid = {1}, .block = {1});
    tb_process_end(&t, 1, OPP_END_EXITED, end + 10);
    tb_end(&t);
}

/* host A: realtime = mono + 5 s; host B: realtime = mono + 5 s + 7001 ns,
 * so B's mono t is A's mono t + 7001. */
static char *a, *b;
static void write_hosts(void)
{
    a = tu_path(dir, "a.trace");
    b = tu_path(dir, "b.trace");
    write_host(a, 100000, 5000000000 + 100000, 2000000, 4000000, 2100000, 2600000, "0", "host-a");
    write_host(b, 500000, 5000000000 + 7001 + 500000, 1500000, 4500000, 1600000, 1700000, "1",
               "host-b");
}

/* opprof ARGS... (NULL-terminated, at most 12): exit code; stdout and
 * stderr into *out and *err (malloc'd) when given. */
static int opprof(char **out, char **err, char *const *args)
{
    char *argv[16] = {(char *)tu_tool("opprof")};
    for (int i = 0; args[i]; i++)
        argv[i + 1] = args[i];
    char *o = tu_path(dir, "opprof.out"), *e = tu_path(dir, "opprof.err");
    int code = tu_code(tu_run(argv, NULL, o, e));
    if (out)
        *out = tu_slurp(o);
    if (err)
        *err = tu_slurp(e);
    free(o), free(e);
    return code;
}

/* Every trace event of json, one line each in file order: ph name pid tid
 * ts dur (Python's json parsing them: the file must be valid JSON), then
 * distributedInfo or "-". */
static char *events(const char *json)
{
    char *o = tu_path(dir, "events");
    char *argv[] = {
        access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3", "-c",
        "import json, sys\n"
        "d = json.load(open(sys.argv[1]))\n"
        "for e in d['traceEvents']:\n"
        "    n = e['args']['name'] if e['ph'] == 'M' else e['name']\n"
        "    print(e['ph'], repr(n), e['pid'], e['tid'], e.get('ts', '-'), e.get('dur', '-'))\n"
        "print(json.dumps(d.get('distributedInfo', '-')))\n",
        (char *)json, NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, o, NULL)), 0);
    char *s = tu_slurp(o);
    free(o);
    return s;
}

static void free_hosts(void)
{
    free(a), free(b);
}

START_TEST(chrome_two_hosts_one_clock)
{
    write_hosts();
    char *jab = tu_path(dir, "ab.json");
    char *err;
    ck_assert_int_eq(opprof(NULL, &err, (char *[]){"export", "chrome", a, b, "-o", jab, NULL}), 0);
    ck_assert_str_eq(err, "");
    free(err);
    /* ts in us from the earliest event, as the report's --from 0: B's call
     * at its mono 1500000 is A's 1507001 (A's process started at 100000,
     * its call at 2000000: 492.999 us after B's); its pid 10 and GPU 0 are
     * A's already, so shown as 10 + 2^22 and 0 + 2^22 */
    char *ev = events(jab);
    ck_assert_str_eq(
        ev, "M 'train (pid 10, host-a)' 10 0 - -\n"
            "X 'cblas_ddot' 10 10 492.999 2000.0\n"
            "M 'GPU 0 (host-a)' 0 0 - -\n"
            "M 'stream 7' 0 7 - -\n"
            "X 'k1' 0 7 592.999 500.0\n"
            "M 'train (pid 10, host-b, renumbered: an earlier trace has this pid)' 4194314 0 - -\n"
            "X 'cblas_ddot' 4194314 10 0.0 3000.0\n"
            "M 'GPU 0 (host-b)' 4194304 0 - -\n"
            "M 'stream 7' 4194304 7 - -\n"
            "X 'k1' 4194304 7 100.0 100.0\n"
            "\"-\"\n"); /* two ranks: no distributedInfo, as one file per rank has it */
    free(ev);
    /* a time read off the export is the report's: A's call at 0.492999 ms */
    char *out;
    ck_assert_int_eq(opprof(&out, NULL,
                            (char *[]){"report", a, b, "--from", "0.49", "--to", "0.5", "--pid",
                                       "10", "-f", "csv", NULL}),
                     0);
    ck_assert_int_eq(tu_count_lines(out, "cblas_ddot,"), 1);
    ck_assert_msg(strstr(out, "\ncblas_ddot,blas,1,") != NULL, "%s", out); /* one call: A's */
    free(out);
    free(jab);
    free_hosts();
}
END_TEST

START_TEST(merged_model_same_times)
{
    write_hosts();
    /* the same times as the merged model (`opprof report A B`) has them */
    const char *paths[] = {a, b};
    char merr[512];
    struct opp_model *m = tu_model_load_many(paths, 2, merr, sizeof merr);
    ck_assert_msg(m != NULL, "%s", merr);
    ck_assert_uint_eq(m->procs[0].start_ns, 100000);
    ck_assert_uint_eq(m->threads[1].events[0].begin_ns, 100000 + 1407001);
    ck_assert_uint_eq(m->gpu.ops[1].start_ns, 100000 + 1507001);
    opp_model_free(m);
    free_hosts();
}
END_TEST

/* B recorded before A's host booted: its times, on A's clock, are before
 * A's zero and clamp to 0, the time unknown (model.h). ts 0 is still the
 * earliest time known, A's call at 2000000 (baseTimeNanoseconds: A's
 * realtime then), A's events at their own offsets; B's at ts 0. */
START_TEST(chrome_host_before_first_clock)
{
    a = tu_path(dir, "a.trace");
    b = tu_path(dir, "b.trace");
    write_host(a, 100000, 5000000000 + 100000, 2000000, 4000000, 2100000, 2600000, "0", "host-a");
    /* B's mono t is A's t - 1 s */
    write_host(b, 500000, 4000000000 + 500000, 1500000, 4500000, 1600000, 1700000, "1", "host-b");
    char *jab = tu_path(dir, "ab.json");
    char *err;
    ck_assert_int_eq(opprof(NULL, &err, (char *[]){"export", "chrome", a, b, "-o", jab, NULL}), 0);
    ck_assert_str_eq(err, "");
    free(err);
    char *ev = events(jab);
    ck_assert_str_eq(
        ev, "M 'train (pid 10, host-a)' 10 0 - -\n"
            "X 'cblas_ddot' 10 10 0.0 2000.0\n"
            "M 'GPU 0 (host-a)' 0 0 - -\n"
            "M 'stream 7' 0 7 - -\n"
            "X 'k1' 0 7 100.0 500.0\n"
            "M 'train (pid 10, host-b, renumbered: an earlier trace has this pid)' 4194314 0 - -\n"
            "X 'cblas_ddot' 4194314 10 0.0 0.0\n"
            "M 'GPU 0 (host-b)' 4194304 0 - -\n"
            "M 'stream 7' 4194304 7 - -\n"
            "X 'k1' 4194304 7 0.0 0.0\n"
            "\"-\"\n");
    free(ev);
    char *json = tu_slurp(jab);
    ck_assert_ptr_nonnull(strstr(json, "\"baseTimeNanoseconds\": 5002000000,\n"));
    free(json), free(jab);
    free_hosts();
}
END_TEST

START_TEST(chrome_single_exports_sum)
{
    write_hosts();
    char *ja = tu_path(dir, "a.json"), *jb = tu_path(dir, "b.json"), *jab = tu_path(dir, "ab.json");
    ck_assert_int_eq(opprof(NULL, NULL, (char *[]){"export", "chrome", a, b, "-o", jab, NULL}), 0);
    char *ev = events(jab);
    /* the single exports: the same events, one file each, pids as they are */
    ck_assert_int_eq(opprof(NULL, NULL, (char *[]){"export", "chrome", a, "-o", ja, NULL}), 0);
    ck_assert_int_eq(opprof(NULL, NULL, (char *[]){"export", "chrome", b, "-o", jb, NULL}), 0);
    char *ea = events(ja), *eb = events(jb);
    ck_assert_int_eq(tu_count_lines(ea, "M ") + tu_count_lines(ea, "X "), 5);
    ck_assert_int_eq(tu_count_lines(eb, "M ") + tu_count_lines(eb, "X "), 5);
    ck_assert_int_eq(tu_count_lines(ev, "M ") + tu_count_lines(ev, "X "), 10);
    ck_assert_ptr_nonnull(strstr(ea, "X 'cblas_ddot' 10 10 0.0 2000.0\n"));
    ck_assert_ptr_nonnull(strstr(eb, "M 'train (pid 10)' 10 0 - -\n"));
    ck_assert_ptr_nonnull(strstr(eb, "X 'cblas_ddot' 10 10 0.0 3000.0\n"));
    ck_assert_ptr_nonnull(strstr(eb, "{\"rank\": 1}\n"));
    free(ea), free(eb), free(ev);
    free(ja), free(jb), free(jab);
    free_hosts();
}
END_TEST

START_TEST(chrome_rank_filter)
{
    write_hosts();
    char *jab = tu_path(dir, "ab.json");
    /* --rank 1 across both: B's process and its GPU, with distributedInfo */
    ck_assert_int_eq(
        opprof(NULL, NULL, (char *[]){"export", "chrome", a, b, "--rank", "1", "-o", jab, NULL}),
        0);
    char *ev = events(jab);
    ck_assert_str_eq(
        ev, "M 'train (pid 10, host-b, renumbered: an earlier trace has this pid)' 4194314 0 - -\n"
            "X 'cblas_ddot' 4194314 10 0.0 3000.0\n"
            "M 'GPU 0 (host-b)' 4194304 0 - -\n"
            "M 'stream 7' 4194304 7 - -\n"
            "X 'k1' 4194304 7 100.0 100.0\n"
            "{\"rank\": 1}\n");
    free(ev);
    free(jab);
    free_hosts();
}
END_TEST

START_TEST(chrome_rank_absent)
{
    write_hosts();
    char *err;
    ck_assert_int_eq(opprof(NULL, &err, (char *[]){"export", "chrome", a, b, "--rank", "7", NULL}),
                     2);
    ck_assert_str_eq(err, "opprof export: no process of the 2 traces has rank 7\n");
    free(err);
    free_hosts();
}
END_TEST

/* Two traces of one rank (a copy, another run's) are refused by --rank,
 * naming both, as report --by-rank does: merged they were one rank with
 * two processes, twice its work. Nothing is written. */
START_TEST(chrome_rank_in_two_traces)
{
    write_hosts();
    char *c = tu_path(dir, "c.trace"), *out = tu_path(dir, "ac.json"), *err, want[9000];
    write_host(c, 500000, 5000000000 + 500000, 1500000, 4500000, 1600000, 1700000, "0", "host-c");
    ck_assert_int_eq(
        opprof(NULL, &err, (char *[]){"export", "chrome", a, b, c, "--rank", "0", "-o", out, NULL}),
        2);
    snprintf(want, sizeof want,
             "opprof export: %s and %s both hold rank 0: give each rank's trace once\n", a, c);
    ck_assert_str_eq(err, want);
    ck_assert_int_ne(access(out, F_OK), 0);
    free(err);
    /* the other rank, held once, is exported */
    ck_assert_int_eq(
        opprof(NULL, NULL, (char *[]){"export", "chrome", a, b, c, "--rank", "1", "-o", out, NULL}),
        0);
    ck_assert_int_eq(access(out, F_OK), 0);
    free(c), free(out);
    free_hosts();
}
END_TEST

/* Folded stacks of both traces: the call path's self times summed. */
START_TEST(stacks_two_hosts)
{
    write_hosts();
    char *out, *err;
    ck_assert_int_eq(opprof(&out, &err, (char *[]){"export", "stacks", a, b, NULL}), 0);
    ck_assert_str_eq(out, "cblas_ddot 5000\n"); /* 2000 us on A + 3000 us on B */
    ck_assert_str_eq(err, "");
    free(out), free(err);
    ck_assert_int_eq(opprof(&out, NULL, (char *[]){"export", "stacks", b, NULL}), 0);
    ck_assert_str_eq(out, "cblas_ddot 3000\n");
    free(out);
    free_hosts();
}
END_TEST

/* No trace: the usage line, exit 2. */
START_TEST(export_needs_a_trace)
{
    char *err;
    ck_assert_int_eq(opprof(NULL, &err, (char *[]){"export", "chrome", NULL}), 2);
    ck_assert_str_eq(err, "opprof export: which trace? (usage: opprof export "
                          "chrome|stacks|flamegraph|memory|html|sqlite TRACE... [-o OUT])\n");
    free(err);
}
END_TEST

/* An unreadable second trace: a clear line, exit 1, no output file and no
 * temporary left. */
START_TEST(export_missing_second_trace)
{
    write_hosts();
    char *err, *json = tu_path(dir, "x.json"), *missing = tu_path(dir, "missing.trace");
    char want[4400];
    snprintf(want, sizeof want,
             "opprof export: cannot open %s: No such file or directory\n", missing);
    ck_assert_int_eq(opprof(NULL, &err, (char *[]){"export", "chrome", a, missing, "-o", json, NULL}),
                     1);
    ck_assert_str_eq(err, want);
    free(err);
    ck_assert_int_eq(access(json, F_OK), -1);
    ck_assert_int_eq(tu_count_files(dir, ".tmp"), 0);
    ck_assert_int_eq(opprof(NULL, &err, (char *[]){"export", "stacks", a, missing, "-o", json, NULL}),
                     1);
    ck_assert_str_eq(err, want);
    free(err);
    ck_assert_int_eq(access(json, F_OK), -1);
    free(json), free(missing);
    free_hosts();
}
END_TEST

START_TEST(export_window_over_hosts)
{
    write_hosts();
    char *err;
    /* --window over both traces' steps: they have none */
    ck_assert_int_eq(
        opprof(NULL, &err, (char *[]){"export", "chrome", a, b, "--window", "1", NULL}), 2);
    ck_assert_str_eq(err, "opprof export: a.trace, b.trace have 0 recorded windows (a schedule's "
                          "runs of ProfilerStep#N), not 1\n");
    free(err);
    free_hosts();
}
END_TEST

START_TEST(export_output_is_a_trace)
{
    write_hosts();
    char *err;
    char want[4400];
    /* the second trace as the output: refused */
    ck_assert_int_eq(opprof(NULL, &err, (char *[]){"export", "chrome", a, b, "-o", b, NULL}), 2);
    snprintf(want, sizeof want, "opprof export: '%s' is the trace itself: choose another output\n",
             b);
    ck_assert_str_eq(err, want);
    free(err);
    free_hosts();
}
END_TEST

Suite *suite_export_merge(void)
{
    Suite *s = suite_create("export_merge");
    TCase *tc = tcase_create("hosts");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, chrome_two_hosts_one_clock);
    tcase_add_test(tc, merged_model_same_times);
    tcase_add_test(tc, chrome_host_before_first_clock);
    tcase_add_test(tc, chrome_single_exports_sum);
    tcase_add_test(tc, chrome_rank_filter);
    tcase_add_test(tc, chrome_rank_absent);
    tcase_add_test(tc, chrome_rank_in_two_traces);
    tcase_add_test(tc, stacks_two_hosts);
    tcase_add_test(tc, export_needs_a_trace);
    tcase_add_test(tc, export_missing_second_trace);
    tcase_add_test(tc, export_window_over_hosts);
    tcase_add_test(tc, export_output_is_a_trace);
    suite_add_tcase(s, tc);
    return s;
}
