/* `opprof top` on real programs: plain snapshots (not a terminal, --count,
 * --once) whose rows are the program's known calls, a run watched through
 * its socket or its trace, bad input, and the full screen in a real
 * terminal (tmux: keys sent, the screen read back). */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/model.h"
#include "testutil.h"

TU_TRACE_FIXTURE

/* The last table of text (from its last "opprof top:" line). */
static const char *last_table(const char *text)
{
    const char *last = NULL;
    for (const char *p = text; (p = strstr(p, "opprof top: ")); p++)
        last = p;
    return last;
}

/* In table (from its start), the row of name: the number after its "|"
 * (calls since the start), -1 when there is no such row. */
static long since_calls(const char *table, const char *name)
{
    size_t n = strlen(name);
    for (const char *line = table; line && *line;) {
        const char *p = line;
        while (*p == ' ')
            p++;
        if (!strncmp(p, name, n) && p[n] == ' ' && p[n + 1] == ' ') {
            const char *bar = strchr(p, '|');
            const char *eol = strchr(p, '\n');
            if (bar && (!eol || bar < eol))
                return strtol(bar + 1, NULL, 10);
        }
        if (!strncmp(line, "opprof top: ", 12) && line != table)
            break; /* the next table */
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    return -1;
}

/* In table, the k-th field after the "|" of name's row (0: calls since
 * the start, then self CPU, CPU total, GPU time) into buf; "" none. */
static const char *since_field(const char *table, const char *name, int k, char *buf, size_t cap)
{
    buf[0] = 0;
    size_t n = strlen(name);
    for (const char *line = table; line && *line;) {
        const char *p = line;
        while (*p == ' ')
            p++;
        const char *bar = strchr(p, '|'), *eol = strchr(p, '\n');
        if (!strncmp(p, name, n) && p[n] == ' ' && bar && (!eol || bar < eol)) {
            const char *f = bar + 1;
            for (int i = 0; i <= k; i++) {
                while (*f == ' ')
                    f++;
                size_t len = strcspn(f, " \n");
                if (i == k)
                    snprintf(buf, cap, "%.*s", (int)len, f);
                f += len;
            }
            return buf;
        }
        line = eol ? eol + 1 : NULL;
    }
    return buf;
}

static int starts(const char *s, const char *with)
{
    return !strncmp(s, with, strlen(with));
}

static char *scenarios(void)
{
    return (char *)tu_build("tests/progs/scenarios");
}

static void refused(char **argv, int code, const char *want)
{
    char *e = tu_path(dir, "err");
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, e)), code);
    char *err = tu_slurp(e);
    ck_assert_str_eq(err, want); /* that one line, nothing after it */
    free(err), free(e);
}

/* blas_calls 40: each repeat 5 dgemm, 1 zgemm, 4 sgemm_, 5 ddot, 2 dgemv_,
 * 1 daxpy, 1 dscal; the last table (the run over) has them all, and so
 * does the trace written as opprof run writes it. */
START_TEST(plain_snapshots_count_known_calls)
{
    char *o = tu_path(dir, "out"), *e = tu_path(dir, "err");
    char *argv[] = {(char *)tu_tool("opprof"),
                    "top",
                    "--interval",
                    "0.2",
                    "-o",
                    trace,
                    "--",
                    (char *)tu_build("tests/progs/blas_calls"),
                    "40",
                    NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, o, e)), 0);
    char *out = tu_slurp(o);
    const char *t = last_table(out);
    ck_assert_ptr_nonnull(t);
    ck_assert_msg(starts(t, "opprof top: run ended, last "), "%s", t);
    ck_assert_int_eq(since_calls(t, "cblas_dgemm"), 200);
    ck_assert_int_eq(since_calls(t, "cblas_zgemm"), 40);
    ck_assert_int_eq(since_calls(t, "sgemm_"), 160);
    ck_assert_int_eq(since_calls(t, "cblas_ddot"), 200);
    ck_assert_int_eq(since_calls(t, "dgemv_"), 80);
    ck_assert_int_eq(since_calls(t, "cblas_daxpy"), 40);
    ck_assert_int_eq(since_calls(t, "cblas_dscal"), 40);
    ck_assert_ptr_nonnull(strstr(t, "records: 760 "));
    ck_assert_ptr_nonnull(strstr(out, "checksum ")); /* the program's own output */
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(tu_count(m, "cblas_dgemm", -1, 0, 0), 200);
    opp_model_free(m);
    free(out), free(o), free(e);
}
END_TEST

/* A torch training script: the last table's calls of every operator are
 * the report's of the same trace (its key_averages: torch's fold, memory
 * inside operators, names from strings), and its steps the iterations. */
START_TEST(torch_rows_are_the_reports)
{
    if (!tu_python_has("torch")) {
        fprintf(stderr, "SKIP torch_rows_are_the_reports: %s has no torch\n", TU_PYTHON);
        return;
    }
    char script[4200];
    const char *src = getenv("OPPROF_SRC");
    snprintf(script, sizeof script, "%s/tests/py/torch_train.py", src ? src : ".");
    char *o = tu_path(dir, "out"), *e = tu_path(dir, "err"), *csv = tu_path(dir, "csv");
    char *argv[] = {(char *)tu_tool("opprof"),
                    "top",
                    "--interval",
                    "10",
                    "-o",
                    trace,
                    "--",
                    TU_PYTHON,
                    script,
                    "8",
                    NULL};
    /* every record kept, even by a collector slowed by ASan on a busy host */
    char *block[] = {"OPPROF_DROP=block", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, block, o, e)), 0);
    char *rep[] = {
        (char *)tu_tool("opprof"), "report", trace, "--format", "csv", "--limit", "100000", NULL};
    ck_assert_int_eq(tu_code(tu_run(rep, NULL, csv, e)), 0);
    char *out = tu_slurp(o), *c = tu_slurp(csv);
    const char *t = last_table(out);
    ck_assert_ptr_nonnull(t);
    ck_assert_msg(strstr(t, ", dropped: 0\n") && strstr(t, "steps (Optimizer.step#N): 8,"), "%.400s",
                  t);
    int rows = 0;
    for (char *line = strchr(c, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        char name[256];
        long count;
        /* key,lib,count,...: names of torch and BLAS have no comma or quote */
        if (sscanf(line + 1, "%255[^,],%*[^,],%ld,", name, &count) != 2 || strlen(name) > 50)
            continue;
        ck_assert_msg(since_calls(t, name) == count, "%s: top %ld, report %ld", name,
                      since_calls(t, name), count);
        rows++;
    }
    ck_assert_int_gt(rows, 80);
    free(out), free(c), free(o), free(e), free(csv);
}
END_TEST

/* The CUDA test double's known device times: each runtime call's GPU
 * time is its kernels', copies' (by correlation id), as the report's. */
START_TEST(gpu_time_of_the_double)
{
    if (access(tu_build("tests/double/gpu_app"), X_OK)) {
        fprintf(stderr, "SKIP gpu_time_of_the_double: no CUDA toolkit at build time\n");
        return;
    }
    char cupti[4200];
    snprintf(cupti, sizeof cupti, "OPPROF_CUPTI=%s", tu_build("tests/double/libcudart.so.13"));
    char *env[] = {cupti, NULL};
    char *o = tu_path(dir, "out"), *e = tu_path(dir, "err");
    char *argv[] = {(char *)tu_tool("opprof"),
                    "top",
                    "--interval",
                    "0.2",
                    "-o",
                    trace,
                    "--",
                    (char *)tu_build("tests/double/gpu_app"),
                    NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, env, o, e)), 0);
    char *out = tu_slurp(o), buf[64];
    const char *t = last_table(out);
    ck_assert_ptr_nonnull(t);
    ck_assert_str_eq(since_field(t, "cudaLaunchKernel", 3, buf, sizeof buf), "33.000us");
    ck_assert_str_eq(since_field(t, "cudaGraphLaunch", 3, buf, sizeof buf), "6.000us");
    ck_assert_str_eq(since_field(t, "cudaMemcpy", 3, buf, sizeof buf), "131.072us");
    ck_assert_str_eq(since_field(t, "cudaMalloc", 3, buf, sizeof buf), "0.000us");
    ck_assert_int_eq(since_calls(t, "cudaLaunchKernel"), 3);
    free(out), free(o), free(e);
}
END_TEST

/* fork 100: the parent's 201 calls and its child's 102, one row, the
 * child's kept after it ended. */
START_TEST(processes_add_up)
{
    char *o = tu_path(dir, "out"), *e = tu_path(dir, "err");
    char *argv[] = {(char *)tu_tool("opprof"),
                    "top",
                    "--interval",
                    "0.2",
                    "-o",
                    trace,
                    "--",
                    scenarios(),
                    "fork",
                    "100",
                    NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, o, e)), 0);
    char *out = tu_slurp(o);
    const char *t = last_table(out);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(since_calls(t, "cblas_ddot"), 303);
    free(out), free(o), free(e);
}
END_TEST

/* --count 2: two tables, then CMD runs on to its end: its status, its trace. */
START_TEST(count_stops_the_tables_not_the_run)
{
    char *o = tu_path(dir, "out"), *e = tu_path(dir, "err");
    char *argv[] = {(char *)tu_tool("opprof"),
                    "top",
                    "--interval",
                    "0.2",
                    "--count",
                    "2",
                    "-o",
                    trace,
                    "--",
                    scenarios(),
                    "paced",
                    "1200",
                    "1000",
                    NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, o, e)), 0);
    char *out = tu_slurp(o);
    ck_assert_int_eq(tu_occurrences(out, "opprof top: "), 2);
    ck_assert_int_eq(tu_occurrences(out, "opprof top: recording, 1 process, 1 thread, last 0."), 2);
    long first = since_calls(strstr(out, "opprof top: "), "cblas_ddot");
    long second = since_calls(last_table(out), "cblas_ddot");
    ck_assert_int_gt(first, 0);
    ck_assert_int_gt(second, first);
    ck_assert_int_lt(second, 1200);
    ck_assert_ptr_nonnull(strstr(out, "paced 1200\n"));
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 1200);
    opp_model_free(m);
    free(out), free(o), free(e);
}
END_TEST

/* A run of its own collector, watched by --socket and by its trace:
 * --once, one table each, the threads' calls so far. */
START_TEST(attach_by_socket_and_by_trace)
{
    char *sock = tu_path(dir, "c.sock"), *half = tu_path(dir, "halfway"), *go = tu_path(dir, "go");
    int cpid = tu_collector_start(sock, trace, "--top"); /* adds up from the start */
    ck_assert_int_gt(cpid, 0);
    char se[4200], pre[4200];
    snprintf(se, sizeof se, "OPPROF_SOCKET=%s", sock);
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", tu_build("libopprof.so"));
    char *env[] = {pre, se, NULL};
    char *argv[] = {scenarios(), "pause", "300", dir, NULL};
    int pid = tu_spawn(argv, env, NULL, NULL);
    ck_assert_int_eq(tu_wait_file(half, 10000), 0);
    ck_assert_int_eq(tu_collector_events(sock, 300, 10000), 0);
    char *o = tu_path(dir, "out"), *e = tu_path(dir, "err");
    char *a1[] = {
        (char *)tu_tool("opprof"), "top", "--once", "--interval", "0.1", "--socket", sock, NULL};
    ck_assert_int_eq(tu_code(tu_run(a1, NULL, o, e)), 0);
    char *out = tu_slurp(o);
    ck_assert_int_eq(tu_occurrences(out, "opprof top: "), 1);
    /* the interval the collector's two answers span: at least the 0.1 s asked */
    const char *head = "opprof top: recording, 1 process, 1 thread, last ";
    double last = 0;
    int used = 0;
    ck_assert_msg(starts(out, head) && sscanf(out + strlen(head), "%lf s\n%n", &last, &used) == 1 &&
                      used > 0 && last >= 0.1 &&
                      starts(out + strlen(head) + used, "records: 300 (0/s), dropped: 0\n"),
                  "%s", out);
    ck_assert_int_eq(since_calls(out, "cblas_ddot"), 300);
    free(out);
    char *a2[] = {(char *)tu_tool("opprof"),
                  "top",
                  "--once",
                  "--interval",
                  "0.1",
                  "--sort",
                  "calls",
                  trace,
                  NULL};
    ck_assert_int_eq(tu_code(tu_run(a2, NULL, o, e)), 0);
    out = tu_slurp(o);
    ck_assert_int_eq(since_calls(out, "cblas_ddot"), 300);
    ck_assert_ptr_nonnull(strstr(out, "*Calls/s"));
    free(out);
    close(open(go, O_CREAT | O_WRONLY, 0600));
    ck_assert_int_eq(tu_code(tu_wait(pid)), 3);
    ck_assert_int_eq(tu_collector_finish(cpid, sock), 0);
    /* the trace of a run that is over: watched by no one any more */
    char *a3[] = {(char *)tu_tool("opprof"), "top", "--once", trace, NULL};
    char want[4400];
    snprintf(want, sizeof want, "opprof top: no running collector writes %s (is its run over?)\n",
             trace);
    refused(a3, 1, want);
    free(sock), free(half), free(go), free(o), free(e);
}
END_TEST

START_TEST(bad_input_is_one_line)
{
    char *op = (char *)tu_tool("opprof");
    char *a1[] = {op, "top", NULL};
    refused(a1, 2,
            "opprof top: say what to watch: -- CMD, --attach or a trace being written (see "
            "'opprof top --help')\n");
    char *a2[] = {op, "top", "--sort", "speed", "--attach", NULL};
    refused(a2, 2, "opprof top: --sort takes total, self, calls, gpu, mem or name, not 'speed'\n");
    char *a3[] = {op, "top", "--interval", "0", "--attach", NULL};
    refused(a3, 2, "opprof top: --interval wants seconds from 0.05 to 3600, not '0'\n");
    char *a3n[] = {op, "top", "--count", "0", "--attach", NULL};
    refused(a3n, 2, "opprof top: --count wants a positive number, not '0'\n");
    char *missing = tu_path(dir, "missing.trace");
    char *a4[] = {op, "top", missing, NULL};
    char want[4400];
    snprintf(want, sizeof want, "opprof top: cannot read %s: No such file or directory\n", missing);
    refused(a4, 1, want);
    /* a file that is not a trace: said as the report says it, not as a run that is over */
    char *junk = tu_path(dir, "junk.trace");
    FILE *jf = fopen(junk, "w");
    ck_assert_ptr_nonnull(jf);
    fputs("junk\n", jf);
    fclose(jf);
    char *a4j[] = {op, "top", junk, NULL};
    snprintf(want, sizeof want, "opprof top: %s is not an opprof trace (bad magic)\n", junk);
    refused(a4j, 1, want);
    char *a4d[] = {op, "top", dir, NULL};
    snprintf(want, sizeof want, "opprof top: %s is not a regular file\n", dir);
    refused(a4d, 1, want);
    free(junk);
    char *nosock = tu_path(dir, "none.sock");
    char *a5[] = {op, "top", "--socket", nosock, NULL};
    snprintf(want, sizeof want,
             "opprof top: cannot reach the collector at %s: No such file or directory\n", nosock);
    refused(a5, 1, want);
    /* options after the trace, as other commands take them */
    char *a6[] = {op, "top", missing, "--once", NULL};
    snprintf(want, sizeof want, "opprof top: cannot read %s: No such file or directory\n", missing);
    refused(a6, 1, want);
    char *a7[] = {op, "top", "--attach", "--", "true", NULL};
    refused(a7, 2,
            "opprof top: --attach and -- CMD exclude each other (see 'opprof top --help')\n");
    char *a8[] = {op, "top", "--socket", nosock, missing, NULL};
    refused(a8, 2,
            "opprof top: --socket and a trace exclude each other (see 'opprof top --help')\n");
    char *a9[] = {op, "top", missing, missing, NULL};
    refused(a9, 2, "opprof top: one trace at a time, or -- CMD (see 'opprof top --help')\n");
    /* a trace and -- CMD: not the trace run as CMD (getopt moves "--"
     * before what it skipped) */
    char *a9b[] = {op, "top", missing, "--", "true", NULL};
    refused(a9b, 2, "opprof top: one trace at a time, or -- CMD (see 'opprof top --help')\n");
    char *a9d[] = {op, "top", "--by-lib", "--by-layer", "--attach", NULL};
    refused(a9d, 2,
            "opprof top: --by-lib and --by-layer exclude each other (g switches on the screen)\n");
    /* where CMD's trace and output go, without CMD: nothing would be written there */
    char *a9o[] = {op, "top", "--attach", "-o", missing, NULL};
    refused(a9o, 2, "opprof top: --output goes with -- CMD (see 'opprof top --help')\n");
    char *a9l[] = {op, "top", "--log", missing, missing, NULL};
    refused(a9l, 2, "opprof top: --log goes with -- CMD (see 'opprof top --help')\n");
    /* --log with plain tables, whose CMD's output is never put there */
    char *a9lo[] = {op, "top", "--once", "--log", missing, "--", "true", NULL};
    refused(a9lo, 2,
            "opprof top: --log goes with the full screen, which --once leaves out (see 'opprof "
            "top --help')\n");
    char *a9lc[] = {op, "top", "--count", "2", "--log", missing, "--", "true", NULL};
    refused(a9lc, 2,
            "opprof top: --log goes with the full screen, which --count leaves out (see 'opprof "
            "top --help')\n");
    char *a9c[] = {op, "top", "--once", "--", NULL};
    refused(a9c, 2,
            "opprof top: say what to watch: -- CMD, --attach or a trace being written (see "
            "'opprof top --help')\n");
    /* what the run under it says, said as top's */
    char *a10[] = {op, "top", "--once", "--", "/nonexistent", NULL};
    refused(a10, 127, "opprof top: cannot run /nonexistent: No such file or directory\n");
    char *e = tu_path(dir, "err"), *bad[] = {"OPPROF_SCHEDULE=bad", NULL};
    char *a11[] = {op, "top", "--once", "--", "true", NULL};
    ck_assert_int_eq(tu_code(tu_run(a11, bad, NULL, e)), 2);
    char *err = tu_slurp(e);
    ck_assert_str_eq(err, "opprof top: OPPROF_SCHEDULE 'bad': wants key=value pairs\n");
    free(err), free(e);
    free(missing), free(nosock);
}
END_TEST

/* A collector that stops answering (SIGSTOP) or goes (SIGKILL) before its
 * run ends: top says which in one line and exits 1, never as a run that
 * ended well, never silently. */
START_TEST(lost_collector_is_said)
{
    char *sock = tu_path(dir, "c.sock"), *half = tu_path(dir, "halfway"), *go = tu_path(dir, "go");
    int cpid = tu_collector_start(sock, trace, "--top");
    ck_assert_int_gt(cpid, 0);
    char se[4200], pre[4200], want[4400];
    snprintf(se, sizeof se, "OPPROF_SOCKET=%s", sock);
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", tu_build("libopprof.so"));
    char *env[] = {pre, se, NULL};
    char *prog[] = {scenarios(), "pause", "300", dir, NULL};
    int pid = tu_spawn(prog, env, NULL, NULL);
    ck_assert_int_eq(tu_wait_file(half, 10000), 0);
    ck_assert_int_eq(tu_collector_events(sock, 300, 10000), 0);
    char *o = tu_path(dir, "out"), *e = tu_path(dir, "err");
    /* stopped: no table, the line, exit 1 */
    ck_assert_int_eq(kill(cpid, SIGSTOP), 0);
    char *once[] = {
        (char *)tu_tool("opprof"), "top", "--once", "--interval", "0.1", "--socket", sock, NULL};
    ck_assert_int_eq(tu_code(tu_run(once, NULL, o, e)), 1);
    char *out = tu_slurp(o), *err = tu_slurp(e);
    ck_assert_str_eq(out, "");
    snprintf(want, sizeof want,
             "opprof top: the collector at %s did not answer for 5 s (is it stopped?)\n", sock);
    ck_assert_str_eq(err, want);
    free(out), free(err);
    ck_assert_int_eq(kill(cpid, SIGCONT), 0);
    /* killed while watched: the tables before it, all recording, then the line */
    char *watch[] = {(char *)tu_tool("opprof"), "top", "--interval", "0.1", "--socket", sock, NULL};
    int top = tu_spawn(watch, NULL, o, e);
    for (int i = 0; i < 100 && !strstr(out = tu_slurp(o), "Self CPU time total"); i++) {
        free(out);
        usleep(50000);
    }
    free(out);
    ck_assert_int_eq(kill(cpid, SIGKILL), 0);
    ck_assert_int_eq(tu_code(tu_wait(top)), 1);
    out = tu_slurp(o), err = tu_slurp(e);
    ck_assert_int_gt(tu_occurrences(out, "opprof top: "), 0);
    ck_assert_int_eq(tu_occurrences(out, "opprof top: "),
                     tu_occurrences(out, "opprof top: recording, 1 process, 1 thread, "));
    snprintf(want, sizeof want,
             "opprof top: the collector at %s went away before the run ended (Connection reset "
             "by peer)\n",
             sock);
    ck_assert_str_eq(err, want);
    free(out), free(err);
    tu_wait(cpid);
    close(open(go, O_CREAT | O_WRONLY, 0600));
    ck_assert_int_eq(tu_code(tu_wait(pid)), 3); /* the program never noticed */
    free(sock), free(half), free(go), free(o), free(e);
}
END_TEST

/* ---- the full screen, in tmux ---- */

static char *tmux_sock;

/* tmux ARGS... on the tests' own server; its stdout (malloc'd) */
static char *tmux(const char *a1, const char *a2, const char *a3, const char *a4)
{
    char *o = tu_path(dir, "tmux.out");
    char *argv[] = {"tmux", "-S", tmux_sock, (char *)a1, (char *)a2, (char *)a3, (char *)a4, NULL};
    tu_run(argv, NULL, o, NULL);
    char *out = tu_slurp(o);
    free(o);
    return out;
}

static char *screen(void)
{
    return tmux("capture-pane", "-p", "-t", "top");
}

/* Whether tmux is installed; else what test is skipped, said. */
static int have_tmux(const char *test)
{
    if (!access("/usr/bin/tmux", X_OK))
        return 1;
    fprintf(stderr, "top: tmux not installed: %s skipped\n", test);
    return 0;
}

/* q to the session's top, and its server gone. */
static void tmux_quit(void)
{
    free(tmux("send-keys", "-t", "top", "q"));
    free(tmux("kill-server", NULL, NULL, NULL));
    free(tmux_sock);
}

/* A tmux server of its own (tmux_sock) running cmd in a session "top" of
 * cols x rows, TERM xterm (term 0: the environment's). */
static void tmux_session(const char *cols, const char *rows, const char *cmd, int term)
{
    char *argv[] = {"tmux", "-S", tmux_sock,    "-f", "/dev/null",  "new-session", "-d", "-s",
                    "top",  "-x", (char *)cols, "-y", (char *)rows, (char *)cmd,   NULL};
    char *env[] = {"TERM=xterm", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, term ? env : NULL, NULL, NULL)), 0);
}

/* The screen once it shows what (up to ms), else the last one. */
static char *screen_with(const char *what, int ms)
{
    char *s = NULL;
    for (int waited = 0; waited <= ms; waited += 50) {
        free(s);
        s = screen();
        if (s && strstr(s, what))
            return s;
        usleep(50000);
    }
    return s;
}

START_TEST(full_screen_keys_in_tmux)
{
    if (!have_tmux("full screen test"))
        return;
    tmux_sock = tu_path(dir, "tmux.sock");
    char *rc = tu_path(dir, "rc"), *log = tu_path(dir, "cmd.log"), cmd[16384];
    snprintf(cmd, sizeof cmd,
             /* timeout: a failed test leaves no top waiting for its q */
             "timeout --foreground 60 %s top --interval 0.2 -o %s --log %s -- %s paced 2500 1000; "
             "echo $? > %s",
             tu_tool("opprof"), trace, log, scenarios(), rc);
    tmux_session("160", "40", cmd, 1);
    char *s = screen_with("cblas_ddot", 10000);
    ck_assert_msg(strstr(s, "opprof top: recording, 1 process, 1 thread"), "screen:\n%s", s);
    ck_assert_ptr_nonnull(strstr(s, "*CPU total"));
    ck_assert_ptr_nonnull(strstr(s, "keys: s sort (total)  g group (name)  p pause  q quit"));
    free(s);
    free(tmux("send-keys", "-t", "top", "s")); /* total -> self */
    free(tmux("send-keys", "-t", "top", "s")); /* self -> calls */
    s = screen_with("sort (calls)", 5000);
    ck_assert_msg(strstr(s, "*Calls/s"), "screen:\n%s", s);
    free(s);
    free(tmux("send-keys", "-t", "top", "g")); /* by library */
    s = screen_with("group (library)", 5000);
    ck_assert_msg(strstr(s, "Library"), "screen:\n%s", s);
    ck_assert_msg(since_calls(strstr(s, "opprof top: "), "blas") > 0, "screen:\n%s", s);
    free(s);
    free(tmux("send-keys", "-t", "top", "g")); /* by layer: no nn.Module here */
    s = screen_with("group (layer)", 5000);
    ck_assert_msg(strstr(s, "Layer") && since_calls(strstr(s, "opprof top: "), "blas") == -1,
                  "screen:\n%s", s);
    free(s);
    free(tmux("send-keys", "-t", "top", "g")); /* by name again */
    /* the run over, the screen stays on its last numbers: exactly its calls */
    s = screen_with("the run is over", 15000);
    ck_assert_msg(strstr(s, "opprof top: run ended"), "screen:\n%s", s);
    ck_assert_msg(since_calls(strstr(s, "opprof top: "), "cblas_ddot") == 2500, "screen:\n%s", s);
    free(s);
    free(tmux("send-keys", "-t", "top", "q"));
    ck_assert_int_eq(tu_wait_file(rc, 10000), 0);
    usleep(100000);
    char *code = tu_slurp(rc);
    ck_assert_str_eq(code, "0\n");
    char *l = tu_slurp(log);
    ck_assert_ptr_nonnull(strstr(l, "paced 2500\n")); /* the program's output went to --log */
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 2500);
    opp_model_free(m);
    free(tmux("kill-server", NULL, NULL, NULL));
    free(code), free(l), free(rc), free(log), free(tmux_sock);
}
END_TEST

/* Started in the background on a terminal (`timeout` without
 * --foreground runs it so): the plain tables, not the full screen, which
 * would stop top and CMD, its process group's, at its first setting of
 * the terminal; CMD runs to its end, every call recorded. */
START_TEST(background_takes_plain_tables)
{
    if (!have_tmux("background test"))
        return;
    tmux_sock = tu_path(dir, "tmux.sock");
    char *rc = tu_path(dir, "rc"), cmd[16384];
    snprintf(cmd, sizeof cmd,
             "timeout 60 %s top --interval 0.2 -o %s -- %s paced 300 1000; echo $? > %s; sleep 60",
             tu_tool("opprof"), trace, scenarios(), rc);
    tmux_session("160", "40", cmd, 1);
    ck_assert_int_eq(tu_wait_file(rc, 20000), 0);
    usleep(100000);
    char *code = tu_slurp(rc);
    ck_assert_str_eq(code, "0\n");
    char *s = screen();
    ck_assert_msg(strstr(s, "opprof top: run ended") && !strstr(s, "keys: "), "screen:\n%s", s);
    ck_assert_msg(strstr(s, "paced 300\n"), "screen:\n%s", s); /* CMD's own output, no --log */
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 300);
    opp_model_free(m);
    free(tmux("kill-server", NULL, NULL, NULL));
    free(s), free(code), free(rc), free(tmux_sock);
}
END_TEST

/* A screen of 12 lines and 7 operators (blas_calls): the table cut to
 * what fits, so that the keys and, the run over, the line saying so are
 * on it. */
START_TEST(full_screen_fits_its_lines)
{
    if (!have_tmux("screen height test"))
        return;
    tmux_sock = tu_path(dir, "tmux.sock");
    char cmd[16384];
    snprintf(cmd, sizeof cmd,
             "timeout --foreground 60 %s top --interval 0.2 -o %s --log %s/log -- %s 40; sleep 60",
             tu_tool("opprof"), trace, dir, tu_build("tests/progs/blas_calls"));
    tmux_session("160", "12", cmd, 1);
    char *s = screen_with("the run is over: q quits", 15000);
    ck_assert_msg(starts(s, "opprof top: run ended"), "screen:\n%s", s);
    /* a '|' a line: the spans, the headings, three rules and the rows */
    ck_assert_msg(tu_occurrences(s, "|") == 5 + 2, "screen:\n%s", s);
    ck_assert_msg(strstr(s, "; 5 more rows\nkeys: s sort (total)  g group (name)  p pause  q quit\n"
                            "the run is over: q quits\n"),
                  "screen:\n%s", s);
    free(s);
    tmux_quit();
}
END_TEST

/* Hung up (or Ctrl-backslash, SIGQUIT) on the full screen: the terminal
 * as it was, its own screen and the cursor back, as ncurses leaves it on
 * SIGINT and SIGTERM; top ends by the signal. */
START_TEST(full_screen_restored_on_hangup)
{
    if (!have_tmux("hangup test"))
        return;
    tmux_sock = tu_path(dir, "tmux.sock");
    char *pidf = tu_path(dir, "pid"), *rc = tu_path(dir, "rc"), cmd[16384];
    snprintf(cmd, sizeof cmd,
             "sh -c 'echo $$ > %s; exec timeout --foreground 60 %s top --interval 0.2 -o %s --log "
             "%s/log -- %s paced 3000 1000'; echo $? > %s; sleep 60",
             pidf, tu_tool("opprof"), trace, dir, scenarios(), rc);
    tmux_session("160", "40", cmd, 1);
    char *s = screen_with("cblas_ddot", 10000);
    ck_assert_msg(strstr(s, "opprof top: recording"), "screen:\n%s", s);
    free(s);
    char *state = tmux("display", "-pt", "top", "#{alternate_on} #{cursor_flag}");
    ck_assert_str_eq(state, "1 0\n"); /* its screen, no cursor */
    free(state);
    char *pid = tu_slurp(pidf);
    /* timeout runs top as its child: the hangup goes to top itself */
    char pgrep[64];
    snprintf(pgrep, sizeof pgrep, "%ld", strtol(pid, NULL, 10));
    char *o = tu_path(dir, "pgrep.out");
    char *pg[] = {"pgrep", "-P", pgrep, NULL};
    ck_assert_int_eq(tu_code(tu_run(pg, NULL, o, NULL)), 0);
    char *top = tu_slurp(o);
    ck_assert_int_eq(kill((pid_t)strtol(top, NULL, 10), SIGHUP), 0);
    ck_assert_int_eq(tu_wait_file(rc, 10000), 0);
    usleep(200000);
    char *code = tu_slurp(rc);
    ck_assert_str_eq(code, "129\n"); /* 128 + SIGHUP, as timeout says it */
    state = tmux("display", "-pt", "top", "#{alternate_on} #{cursor_flag}");
    ck_assert_str_eq(state, "0 1\n");
    free(state), free(code), free(top), free(o), free(pid);
    free(tmux("kill-server", NULL, NULL, NULL));
    free(tmux_sock), free(pidf), free(rc);
}
END_TEST

/* The column of the first '|' on the line of text that holds what (its
 * characters, UTF-8 counted as one), -1 none. */
static int bar_column(const char *text, const char *what)
{
    const char *at = strstr(text, what);
    if (!at)
        return -1;
    const char *line = at;
    while (line > text && line[-1] != '\n')
        line--;
    int col = 0;
    for (const char *p = line; *p && *p != '\n'; p++) {
        if (*p == '|')
            return col;
        col += ((unsigned char)*p & 0xc0) != 0x80;
    }
    return -1;
}

/* A name in UTF-8 (nvtx_app's L"wide-ränge") on the full screen: its
 * characters, in its column, in a UTF-8 locale; '?' for each, still in its
 * column, in the C locale (not its bytes, which a narrow ncurses draws as
 * "~C~$", pushing the row out of line). */
START_TEST(full_screen_draws_utf8_names)
{
    const char *app = tu_build("tests/nvtx/nvtx_app");
    if (access("/usr/bin/tmux", X_OK) || access(app, X_OK)) {
        fprintf(stderr, "top: no tmux or no nvtx_app (CUDA headers): UTF-8 screen test skipped\n");
        return;
    }
    static const char *const locales[] = {"C.UTF-8", "C"}, *const want[] = {"wide-ränge",
                                                                            "wide-r?nge"};
    for (int i = 0; i < 2; i++) {
        tmux_sock = tu_path(dir, i ? "tmux-c.sock" : "tmux.sock");
        char cmd[16384];
        snprintf(cmd, sizeof cmd,
                 "LC_ALL=%s timeout --foreground 60 %s top --interval 0.2 -o %s --log %s/log -- "
                 "%s; sleep 60",
                 locales[i], tu_tool("opprof"), trace, dir, app);
        tmux_session("120", "40", cmd, 1);
        char *s = screen_with("the run is over", 15000);
        ck_assert_msg(strstr(s, want[i]), "%s: screen:\n%s", locales[i], s);
        ck_assert_int_gt(bar_column(s, "    Name  "), 0);
        ck_assert_msg(bar_column(s, want[i]) == bar_column(s, "    Name  "), "%s: screen:\n%s",
                      locales[i], s);
        free(s);
        tmux_quit();
    }
}
END_TEST

/* `opprof run` on a terminal: one progress line while CMD runs, gone
 * when it ends; none with -q. The two runs side by side, each in a tmux
 * server of its own. */
START_TEST(run_progress_line_in_tmux)
{
    if (!have_tmux("progress line test"))
        return;
    char *socks[2], *rcs[2], *outs[2], *traces[2], cmd[16384];
    for (int quiet = 0; quiet < 2; quiet++) {
        socks[quiet] = tu_path(dir, quiet ? "tmux-q.sock" : "tmux.sock");
        rcs[quiet] = tu_path(dir, quiet ? "rc-q" : "rc");
        outs[quiet] = tu_path(dir, quiet ? "out-q" : "out");
        traces[quiet] = quiet ? tu_path(dir, "q.trace") : trace;
        /* the program's output elsewhere: on the terminal it would write over the line */
        snprintf(cmd, sizeof cmd,
                 "%s run %s-o %s -- %s paced 2000 1000 > %s; echo $? > %s; sleep 20",
                 tu_tool("opprof"), quiet ? "-q " : "", traces[quiet], scenarios(), outs[quiet],
                 rcs[quiet]);
        tmux_sock = socks[quiet];
        tmux_session("160", "40", cmd, 0);
    }
    usleep(1500000); /* the line comes each second */
    for (int quiet = 0; quiet < 2; quiet++) {
        tmux_sock = socks[quiet];
        char *s = screen();
        if (quiet) {
            ck_assert_msg(!strstr(s, " records ("), "screen:\n%s", s);
        } else {
            const char *line = strstr(s, "opprof: ");
            ck_assert_msg(line && strstr(line, " records (") && strstr(line, "/s), 0 dropped"),
                          "screen:\n%s", s);
        }
        free(s);
    }
    for (int quiet = 0; quiet < 2; quiet++) {
        tmux_sock = socks[quiet];
        ck_assert_int_eq(tu_wait_file(rcs[quiet], 15000), 0);
        usleep(100000);
        char *s = screen();
        ck_assert_msg(!strstr(s, " records ("), "screen:\n%s", s); /* erased */
        ck_assert_msg(strstr(s, "opprof: trace written to "), "screen:\n%s", s);
        free(s);
        s = tu_slurp(rcs[quiet]);
        ck_assert_str_eq(s, "0\n");
        free(s);
        s = tu_slurp(outs[quiet]);
        ck_assert_str_eq(s, "paced 2000\n");
        free(s);
        free(tmux("kill-server", NULL, NULL, NULL));
        free(socks[quiet]), free(rcs[quiet]), free(outs[quiet]);
    }
    free(traces[1]);
}
END_TEST

Suite *suite_top(void)
{
    Suite *s = suite_create("top");
    TCase *tc = tcase_create("top");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, plain_snapshots_count_known_calls);
    tcase_add_test(tc, count_stops_the_tables_not_the_run);
    tcase_add_test(tc, torch_rows_are_the_reports);
    tcase_add_test(tc, gpu_time_of_the_double);
    tcase_add_test(tc, processes_add_up);
    tcase_add_test(tc, attach_by_socket_and_by_trace);
    tcase_add_test(tc, bad_input_is_one_line);
    tcase_add_test(tc, background_takes_plain_tables);
    suite_add_tcase(s, tc);
    /* the screen while the program runs: with nothing beside it (tests/tests.mk),
     * in two jobs ("apart": each about 6 s of waiting) */
    TCase *timed = tcase_create("timing");
    tcase_set_tags(timed, "timing");
    tcase_add_checked_fixture(timed, setup, teardown);
    tcase_set_timeout(timed, 90);
    tcase_add_test(timed, lost_collector_is_said);
    tcase_add_test(timed, full_screen_draws_utf8_names);
    tcase_add_test(timed, full_screen_fits_its_lines);
    tcase_add_test(timed, full_screen_restored_on_hangup);
    suite_add_tcase(s, timed);
    TCase *keys = tcase_create("timing-keys");
    tcase_set_tags(keys, "timing apart");
    tcase_add_checked_fixture(keys, setup, teardown);
    tcase_set_timeout(keys, 90);
    tcase_add_test(keys, full_screen_keys_in_tmux);
    tcase_add_test(keys, run_progress_line_in_tmux);
    suite_add_tcase(s, keys);
    return s;
}
