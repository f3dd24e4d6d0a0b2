/* End to end when things go wrong: the collector dies or is unreachable,
 * buffers overflow, hostile clients connect, arguments are wrong. The
 * profiled program must never notice. */
#include <check.h>
#include <inttypes.h>
#include <sys/un.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <grp.h>
#include <unistd.h>

#include "analysis/model.h"
#include "ring.h"
#include "testutil.h"
#include "trace.h"
#include "util.h"

static char *dir, *trace, *sock;
static void setup(void)
{
    dir = tu_tmpdir();
    trace = tu_path(dir, "t.trace");
    sock = tu_path(dir, "s.sock");
}
static void teardown(void)
{
    tu_rmdir(dir);
    free(dir);
    free(trace);
    free(sock);
}

/* Our collector on sock writing trace, its stderr into err (NULL: the
 * tests'), listening. */
static int start_collector_said(const char *err)
{
    int pid = tu_collector_start_said(sock, trace, NULL, err);
    ck_assert_int_gt(pid, 0);
    return pid;
}

static int start_collector(void)
{
    return start_collector_said(NULL);
}

/* The preload's environment for a collector we started. */
#define PRELOAD_ENV(env)                                                                           \
    char pre_[4200], sock_[4200];                                                                  \
    snprintf(pre_, sizeof pre_, "LD_PRELOAD=%s", tu_build("libopprof.so"));                       \
    snprintf(sock_, sizeof sock_, "OPPROF_SOCKET=%s", sock);                                       \
    char *env[] = {pre_, sock_, NULL}

static int finish_collector(int pid)
{
    return tu_collector_finish(pid, sock);
}

/* The collector is SIGKILLed halfway: same output, same exit code, one
 * warning line, and the trace holds the first half. */
START_TEST(collector_killed_mid_run)
{
    int cpid = start_collector();
    PRELOAD_ENV(env);
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err"), *half = tu_path(dir, "halfway");
    char *go = tu_path(dir, "go");
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "pause", "1000", dir, NULL};
    int pid = tu_spawn(argv, env, out, err);
    ck_assert_int_eq(tu_wait_file(half, 10000), 0);
    ck_assert_int_eq(tu_collector_events(sock, 1000, 10000), 0); /* the first half drained */
    kill(cpid, SIGKILL);
    tu_wait(cpid);
    close(open(go, O_CREAT | O_WRONLY, 0600));
    ck_assert_int_eq(tu_code(tu_wait(pid)), 3);
    char *o = tu_slurp(out), *e = tu_slurp(err);
    ck_assert_str_eq(o, "pause 2000\n");
    ck_assert_int_eq(tu_count_lines(e, ""), 1);
    ck_assert_int_eq(tu_count_lines(e, "opprof: the collector is gone"), 1);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(!m->sum.complete);
    ck_assert_ptr_nonnull(strstr(m->sum.warning, "no end marker"));
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 1000);
    opp_model_free(m);
    free(o), free(e), free(out), free(err), free(half), free(go);
}
END_TEST

/* Nobody listening at OPPROF_SOCKET: runs unprofiled, one line says why. */
START_TEST(collector_unreachable)
{
    PRELOAD_ENV(env);
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "loop", "100", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, env, out, err)), 0);
    char *o = tu_slurp(out), *e = tu_slurp(err);
    ck_assert_str_eq(o, "loop 100\n"); /* 100 x ddot(1) of x[0] = 1 */
    ck_assert_int_eq(tu_count_lines(e, ""), 1);
    ck_assert_ptr_nonnull(strstr(e, "opprof: cannot reach the collector, profiling off: No such file"));
    free(o), free(e), free(out), free(err);
}
END_TEST

/* The same with stderr a pipe nobody reads any more (a logger that died)
 * and SIGPIPE's default action: our line is lost, the program is not
 * killed by it. */
START_TEST(collector_unreachable_stderr_closed)
{
    char *out = tu_path(dir, "out");
    pid_t pid = fork();
    if (pid == 0) {
        int p[2];
        if (pipe(p) < 0 || dup2(p[1], 2) < 0)
            _exit(90);
        close(p[0]);
        signal(SIGPIPE, SIG_DFL);
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || dup2(o, 1) < 0)
            _exit(91);
        setenv("LD_PRELOAD", tu_build("libopprof.so"), 1);
        setenv("OPPROF_SOCKET", sock, 1);
        execl(tu_build("tests/progs/scenarios"), "scenarios", "loop", "100", (char *)NULL);
        _exit(92);
    }
    ck_assert_int_eq(tu_code(tu_wait(pid)), 0);
    char *o = tu_slurp(out);
    ck_assert_str_eq(o, "loop 100\n");
    free(o), free(out);
}
END_TEST

/* A command line of more arguments than a trace keeps (a shell glob of
 * many files): the process is profiled, its first OPP_MAX_ARGV arguments
 * kept, and nothing is said. */
START_TEST(long_command_line_kept)
{
    enum { N = OPP_MAX_ARGV + 1000 };
    int cpid = start_collector();
    PRELOAD_ENV(env);
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    char **argv = calloc(N + 1, sizeof *argv);
    char(*num)[8] = calloc(N, sizeof *num);
    argv[0] = (char *)tu_build("tests/progs/scenarios");
    argv[1] = "loop";
    argv[2] = "10";
    for (int i = 3; i < N; i++) { /* ignored by loop */
        snprintf(num[i], sizeof num[i], "%d", i);
        argv[i] = num[i];
    }
    ck_assert_int_eq(tu_code(tu_run(argv, env, out, err)), 0);
    char *o = tu_slurp(out), *e = tu_slurp(err);
    ck_assert_str_eq(o, "loop 10\n");
    ck_assert_str_eq(e, "");
    ck_assert_int_eq(finish_collector(cpid), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->nprocs, 1);
    ck_assert_uint_eq(m->procs[0].argc, OPP_MAX_ARGV);
    ck_assert_str_eq(m->procs[0].argv[1], "loop");
    ck_assert_str_eq(m->procs[0].argv[OPP_MAX_ARGV - 1], num[OPP_MAX_ARGV - 1]);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 10);
    opp_model_free(m);
    free(o), free(e), free(out), free(err), free(argv), free(num);
}
END_TEST

/* A collector that takes no one (stopped, or swamped: its backlog full):
 * the program does not wait on it for ever but runs on unprofiled after a
 * bounded wait, and says so in one line. Here a listener that never
 * accepts, its backlog filled first. */
START_TEST(collector_backlog_full)
{
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
    ck_assert_int_eq(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(listen(l, 0), 0);
    int filler[8], nf = 0;
    for (; nf < 8; nf++) { /* until one would wait */
        filler[nf] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (connect(filler[nf], (struct sockaddr *)&a, sizeof a) < 0) {
            ck_assert_int_eq(errno, EAGAIN);
            close(filler[nf]);
            break;
        }
    }
    ck_assert_int_lt(nf, 8);
    PRELOAD_ENV(env);
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "loop", "100", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, env, out, err)), 0);
    char *o = tu_slurp(out), *e = tu_slurp(err);
    ck_assert_str_eq(o, "loop 100\n");
    ck_assert_str_eq(e, "opprof: the collector did not take us within 2 s (stopped or swamped), "
                        "profiling off\n");
    free(o), free(e), free(out), free(err);
    for (int i = 0; i < nf; i++)
        close(filler[i]);
    close(l);
}
END_TEST

/* A small ring (16384 slots) and a thread that writes slowly (20000 calls,
 * about 50,000 a second): it rewinds to a lap's start a quarter into each
 * lap once the collector has read that quarter, skipping the rest of the
 * lap, several times over; every call is in the trace, none dropped. */
START_TEST(rewinding_ring_keeps_every_call)
{
    struct tu_env te;
    char **env = tu_preload_env(&te, trace, "OPPROF_BUFFER=16384");
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "paced", "20000", "20", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, env, NULL, NULL)), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->dropped, 0);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 20000);
    opp_model_free(m);
}
END_TEST

/* A tiny buffer and a fast loop: what does not fit is dropped and counted,
 * never waited for; recorded + dropped is every call. */
START_TEST(drops_are_counted)
{
    struct tu_env te;
    char **env = tu_preload_env(&te, trace, "OPPROF_BUFFER=1024");
    char *err = tu_path(dir, "err");
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "loop", "2000000", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, env, NULL, err)), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_gt(m->dropped, 0);
    ck_assert_uint_eq(m->events + m->dropped, 2000000);
    char *e = tu_slurp(err);
    ck_assert_int_eq(tu_count_lines(e, "opprof: "), 2); /* where, and how many dropped */
    char want[200];
    snprintf(want, sizeof want,
             "\nopprof: %" PRIu64 " records dropped (buffers were full); trace has %" PRIu64
             "; a larger OPPROF_BUFFER (slots per thread) makes room; OPPROF_DROP=block waits "
             "instead of dropping\n",
             m->dropped, m->events);
    ck_assert_msg(strstr(e, want) != NULL, "%s", e);
    opp_model_free(m);
    free(e);
    /* `opprof run -q` (no report to warn) says it too */
    char *run[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", argv[0], argv[1],
                   argv[2], NULL};
    ck_assert_int_eq(tu_code(tu_run(run, (char *[]){"OPPROF_BUFFER=1024", NULL}, NULL, err)), 0);
    e = tu_slurp(err);
    ck_assert_msg(strstr(e, "\nopprof run: records were dropped (buffers full): a larger "
                            "OPPROF_BUFFER (slots per thread) makes room; OPPROF_DROP=block waits "
                            "instead of dropping\n") != NULL,
                  "%s", e);
    free(e), free(err);
}
END_TEST

/* The same with OPPROF_DROP=block: every call is recorded, the program
 * waiting for room; with the collector stopped it waits at most 1 s, says
 * so once, and drops (and counts) from then on. */
START_TEST(drop_block_records_every_call)
{
    struct tu_env te;
    char **env = tu_preload_env_list(&te, trace,
                                     (const char *[]){"OPPROF_BUFFER=1024", "OPPROF_DROP=block", NULL});
    char *err = tu_path(dir, "err");
    /* 200 times the ring: the program waits for room about 200 times */
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "loop", "200000", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, env, NULL, err)), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->dropped, 0);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 200000);
    char *e = tu_slurp(err);
    ck_assert_int_eq(tu_count_lines(e, ""), 1); /* where the trace is */
    opp_model_free(m);
    free(e);

    int cpid = start_collector();
    char sk[4200];
    snprintf(sk, sizeof sk, "OPPROF_SOCKET=%s", sock);
    char *env2[] = {te.pre, sk, "OPPROF_BUFFER=1024", "OPPROF_DROP=block", NULL};
    char *half = tu_path(dir, "halfway"), *go = tu_path(dir, "go");
    char *argv2[] = {(char *)tu_build("tests/progs/scenarios"), "pause", "3000", dir, NULL};
    int pid = tu_spawn(argv2, env2, NULL, err);
    ck_assert_int_eq(tu_wait_file(half, 10000), 0);
    usleep(100000);
    kill(cpid, SIGSTOP);
    uint64_t t0 = opp_mono_ns();
    close(open(go, O_CREAT | O_WRONLY, 0600));
    ck_assert_int_eq(tu_code(tu_wait(pid)), 3);
    /* 1 s for room, nothing at exit; a hang would be forever */
    ck_assert_uint_lt(opp_mono_ns() - t0, 8000000000ull);
    kill(cpid, SIGCONT);
    ck_assert_int_eq(finish_collector(cpid), 0);
    e = tu_slurp(err);
    ck_assert_str_eq(e, "opprof: the collector read nothing for 1 s (OPPROF_DROP=block): "
                        "records that do not fit are dropped and counted from now on\n");
    m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_gt(m->dropped, 0);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0) + m->dropped, 6000);
    opp_model_free(m);
    free(e), free(err), free(half), free(go);
}
END_TEST

/* Wait until the collector closes fd (it disconnects bad clients). */
static int closed_by_peer(int fd)
{
    char b;
    for (int i = 0; i < 400; i++) {
        ssize_t n = recv(fd, &b, 1, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno == ECONNRESET))
            return 1;
        usleep(5000);
    }
    return 0;
}

/* A HELLO as the preload sends it: pid, ppid, clock, argc, ticks, realtime, exe. */
static void put_hello_ppid(uint8_t *buf, uint32_t *n, uint32_t argc_claimed, uint32_t ppid)
{
    uint32_t f[4] = {1, ppid, 0, argc_claimed};
    uint64_t t[2] = {0, 0};
    uint32_t z = 0;
    memcpy(buf, f, 16);
    memcpy(buf + 16, t, 16);
    memcpy(buf + 32, &z, 4); /* empty exe */
    *n = 36;
}

static void put_hello(uint8_t *buf, uint32_t *n, uint32_t argc_claimed)
{
    put_hello_ppid(buf, n, argc_claimed, 1);
}

/* A whole, valid function table on fd: one entry point, foo of "blas". */
static void send_funcs_foo(int fd)
{
    uint32_t head[5] = {1, 0, 1, 0, 0}; /* total, first, count; kind, dtype */
    uint32_t ll = 4, nl = 3;
    uint8_t msg[64];
    memcpy(msg, head, 20), memcpy(msg + 20, &ll, 4), memcpy(msg + 24, "blas", 4);
    memcpy(msg + 28, &nl, 4), memcpy(msg + 32, "foo", 3);
    ck_assert_int_eq(opp_send_msg(fd, OPP_MSG_FUNCS, msg, 35, -1), 0);
}

/* Processes are numbered in the order they connected, even when many wait
 * at once (a forked child that execs at once, then its new image): the
 * collector is stopped while 20 clients connect and say hello in turn. */
START_TEST(processes_in_connect_order)
{
    int cpid = start_collector();
    ck_assert_int_eq(kill(cpid, SIGSTOP), 0);
    enum { N = 20 };
    int fd[N];
    uint8_t buf[64];
    uint32_t n;
    for (int i = 0; i < N; i++) {
        ck_assert_int_ge(fd[i] = opp_connect(sock), 0);
        put_hello_ppid(buf, &n, 0, 5000 + (uint32_t)i);
        ck_assert_int_eq(opp_send_msg(fd[i], OPP_MSG_HELLO, buf, n, -1), 0);
    }
    ck_assert_int_eq(kill(cpid, SIGCONT), 0);
    for (int i = 0; i < N; i++)
        close(fd[i]);
    ck_assert_int_eq(finish_collector(cpid), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->nprocs, N);
    for (int i = 0; i < N; i++)
        ck_assert_uint_eq(m->procs[i].ppid, 5000 + (uint32_t)i);
    opp_model_free(m);
}
END_TEST

/* A goodbye's end is the process's own word, within its start and the
 * collector's own clock: before its start, its start; in the future,
 * when the collector read it. */
START_TEST(goodbye_end_within_start_and_now)
{
    int cpid = start_collector();
    const uint64_t start = 1000000000ull, ends[] = {start + 1000, 5, UINT64_MAX};
    for (int i = 0; i < 3; i++) {
        int fd = opp_connect(sock);
        ck_assert_int_ge(fd, 0);
        uint8_t buf[64];
        uint32_t n;
        put_hello_ppid(buf, &n, 0, 7000 + (uint32_t)i);
        memcpy(buf + 16, &start, 8); /* its start ticks (clock 0: monotonic ns) */
        ck_assert_int_eq(opp_send_msg(fd, OPP_MSG_HELLO, buf, n, -1), 0);
        ck_assert_int_eq(opp_send_msg(fd, OPP_MSG_BYE, &ends[i], 8, -1), 0);
        uint32_t mode = 7; /* the hello's answer first: the collector's mode */
        ck_assert_int_eq(opp_wait_msg(fd, OPP_MSG_MODE, &mode, sizeof mode, NULL, 5000), 0);
        ck_assert_uint_eq(mode, OPP_MODE_FULL);
        uint8_t ack[128];
        struct opp_msg_header h;
        ck_assert_int_eq(recv(fd, &h, sizeof h, MSG_WAITALL), (ssize_t)sizeof h);
        ck_assert_int_eq(h.type, OPP_MSG_ACK);
        ck_assert_int_le(h.size, sizeof ack);
        ck_assert_int_eq(recv(fd, ack, h.size, MSG_WAITALL), (ssize_t)h.size);
        close(fd);
    }
    uint64_t now = opp_mono_ns();
    ck_assert_int_eq(finish_collector(cpid), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->nprocs, 3);
    ck_assert_uint_eq(m->procs[0].start_ns, start);
    ck_assert_uint_eq(m->procs[0].end_ns, start + 1000);
    ck_assert_uint_eq(m->procs[1].end_ns, start);
    ck_assert_uint_gt(m->procs[2].end_ns, start);
    ck_assert_uint_le(m->procs[2].end_ns, now);
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq(m->procs[i].end_how, OPP_END_EXITED);
    opp_model_free(m);
}
END_TEST

/* A process whose connection closes without goodbye (_exit, a signal)
 * ended no later than its parent reaped it (REAPED's clock), whichever
 * the collector reads first, the close or the parent's word; without the
 * parent's word, when the collector read the close. Clients of this test
 * process: each one's pid, as the collector sees it, is ours. */
START_TEST(reaped_bounds_an_end_without_goodbye)
{
    int cpid = start_collector();
    const uint64_t start = 1000000000ull, reap = start + 500;
    uint8_t buf[64];
    uint32_t n;
    int parent = opp_connect(sock);
    ck_assert_int_ge(parent, 0);
    put_hello_ppid(buf, &n, 0, 1);
    memcpy(buf + 16, &start, 8);
    ck_assert_int_eq(opp_send_msg(parent, OPP_MSG_HELLO, buf, n, -1), 0);
    usleep(50000);                            /* the parent's hello read first: it is process 1 */
    for (int order = 0; order < 3; order++) { /* close first; reaped first; never reaped */
        int child = opp_connect(sock);
        ck_assert_int_ge(child, 0);
        put_hello_ppid(buf, &n, 0, (uint32_t)getpid());
        memcpy(buf + 16, &start, 8);
        ck_assert_int_eq(opp_send_msg(child, OPP_MSG_HELLO, buf, n, -1), 0);
        usleep(50000);
        uint32_t r[4] = {(uint32_t)getpid(), 0, (uint32_t)reap, (uint32_t)(reap >> 32)};
        if (order == 1)
            ck_assert_int_eq(opp_send_msg(parent, OPP_MSG_REAPED, r, sizeof r, -1), 0);
        close(child);
        usleep(50000);
        if (order == 0)
            ck_assert_int_eq(opp_send_msg(parent, OPP_MSG_REAPED, r, sizeof r, -1), 0);
        usleep(50000);
    }
    uint64_t end = start + 1000;
    ck_assert_int_eq(opp_send_msg(parent, OPP_MSG_BYE, &end, 8, -1), 0);
    uint32_t mode;
    ck_assert_int_eq(opp_wait_msg(parent, OPP_MSG_MODE, &mode, sizeof mode, NULL, 5000), 0);
    struct opp_msg_header h; /* the goodbye's answer: it is read */
    ck_assert_int_eq(recv(parent, &h, sizeof h, MSG_WAITALL), (ssize_t)sizeof h);
    ck_assert_int_eq(h.type, OPP_MSG_ACK);
    close(parent);
    ck_assert_int_eq(finish_collector(cpid), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->nprocs, 4);
    ck_assert_uint_eq(m->procs[0].end_ns, end);
    ck_assert_uint_eq(m->procs[1].end_ns, reap);
    ck_assert_uint_eq(m->procs[2].end_ns, reap);
    ck_assert_uint_gt(m->procs[3].end_ns, reap); /* the collector's clock: now */
    for (int i = 1; i < 4; i++)
        ck_assert_uint_eq(m->procs[i].end_how, OPP_END_LOST);
    opp_model_free(m);
}
END_TEST

/* The socket path appears only once the collector listens, so a client
 * that sees it can connect at once (CI once saw ECONNREFUSED here); a
 * second collector on the same path is refused and the first keeps it. */
START_TEST(socket_ready_when_visible)
{
    struct stat st;
    for (int round = 0; round < 10; round++) {
        char *argv[] = {(char *)tu_tool("opprof-collector"), "--socket", sock, "--output", trace,
                        "--idle-exit-ms", "0", NULL};
        int cpid = tu_spawn(argv, NULL, NULL, NULL);
        ck_assert_int_gt(cpid, 0);
        uint64_t t0 = opp_mono_ns();
        while (stat(sock, &st) != 0)
            ck_assert_uint_lt(opp_mono_ns() - t0, 5000000000ull);
        int fd = opp_connect(sock);
        ck_assert_int_ge(fd, 0);
        close(fd);
        if (round == 9) {
            char *t2 = tu_path(dir, "second.trace"), *err = tu_path(dir, "second.err");
            char *argv2[] = {(char *)tu_tool("opprof-collector"), "--socket", sock, "--output", t2,
                             "--idle-exit-ms", "0", NULL};
            ck_assert_int_eq(tu_code(tu_run(argv2, NULL, NULL, err)), 1);
            char *e = tu_slurp(err);
            ck_assert_ptr_nonnull(strstr(e, "Address already in use"));
            ck_assert_int_eq(tu_count_lines(e, ""), 1);
            free(e), free(t2), free(err);
        }
        ck_assert_int_eq(finish_collector(cpid), 0);
        ck_assert_int_ne(stat(sock, &st), 0); /* removed at the end */
    }
    /* no temporary names left behind */
    ck_assert_int_eq(tu_count_files(dir, ".tmp"), 0);
}
END_TEST

/* Garbage, oversize, lying and out-of-order clients (bad labels too) are
 * each cut off; a real program profiled through the same collector at the
 * same time is whole. */
START_TEST(hostile_clients)
{
    char *log = tu_path(dir, "collector.err");
    int cpid = start_collector_said(log);
    int bad[9];
    for (int i = 0; i < 9; i++)
        ck_assert_int_ge(bad[i] = opp_connect(sock), 0);
    uint8_t buf[256];
    uint32_t n;
    memset(buf, 0x41, sizeof buf);
    ck_assert_int_eq(opp_send_all(bad[0], buf, 64), 0); /* not our protocol */
    struct opp_msg_header h = {OPP_PROTO_MAGIC, OPP_MSG_HELLO, OPP_PROTO_VERSION, OPP_MSG_MAX + 1, 0};
    ck_assert_int_eq(opp_send_all(bad[1], &h, sizeof h), 0); /* oversize */
    put_hello(buf, &n, 1000000);
    ck_assert_int_eq(opp_send_msg(bad[2], OPP_MSG_HELLO, buf, n, -1), 0); /* argc lies */
    uint32_t ring[2] = {123, 1024};
    ck_assert_int_eq(opp_send_msg(bad[3], OPP_MSG_RING, ring, 8, -1), 0); /* before hello */
    /* A ring whose memory is not sealed: could be shrunk under the collector. */
    put_hello(buf, &n, 0);
    ck_assert_int_eq(opp_send_msg(bad[4], OPP_MSG_HELLO, buf, n, -1), 0);
    send_funcs_foo(bad[4]);
    int mfd = (int)syscall(SYS_memfd_create, "x", 0);
    ck_assert_int_eq(ftruncate(mfd, (off_t)opp_ring_bytes(1024)), 0);
    ck_assert_int_eq(opp_send_msg(bad[4], OPP_MSG_RING, ring, 8, mfd), 0);
    close(mfd);
    ck_assert_int_eq(opp_send_msg(bad[5], 99, NULL, 0, -1), 0); /* unknown type */
    /* labels with a key that is not a name; labels twice */
    put_hello(buf, &n, 0);
    ck_assert_int_eq(opp_send_msg(bad[6], OPP_MSG_HELLO, buf, n, -1), 0);
    uint8_t lb[64];
    uint32_t one_pair = 1, kl = 3, vl = 1;
    memcpy(lb, &one_pair, 4), memcpy(lb + 4, &kl, 4), memcpy(lb + 8, "a b", 3);
    memcpy(lb + 11, &vl, 4), memcpy(lb + 15, "1", 1);
    ck_assert_int_eq(opp_send_msg(bad[6], OPP_MSG_INFO, lb, 16, -1), 0);
    put_hello(buf, &n, 0);
    ck_assert_int_eq(opp_send_msg(bad[7], OPP_MSG_HELLO, buf, n, -1), 0);
    memcpy(lb + 8, "a_b", 3);
    ck_assert_int_eq(opp_send_msg(bad[7], OPP_MSG_INFO, lb, 16, -1), 0);
    ck_assert_int_eq(opp_send_msg(bad[7], OPP_MSG_INFO, lb, 16, -1), 0);
    /* a process asking to finish the trace, as only a controller may */
    put_hello(buf, &n, 0);
    ck_assert_int_eq(opp_send_msg(bad[8], OPP_MSG_HELLO, buf, n, -1), 0);
    uint32_t linger = 0;
    ck_assert_int_eq(opp_send_msg(bad[8], OPP_MSG_FINISH, &linger, 4, -1), 0);
    PRELOAD_ENV(env);
    char *out = tu_path(dir, "out");
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "loop", "1000", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, env, out, NULL)), 0);
    for (int i = 0; i < 9; i++) {
        ck_assert_msg(closed_by_peer(bad[i]), "hostile client %d was not disconnected", i);
        close(bad[i]);
    }
    ck_assert_int_eq(finish_collector(cpid), 0);
    /* each one cut off for its own fault, and only for it */
    char *said = tu_slurp(log);
    const char *reasons[] = {"bad message magic",
                             "message too large",
                             "hello has an impossible argument count",
                             "ring out of order",
                             "ring memory is not sealed against shrinking",
                             "unknown message type",
                             "bad process labels",
                             "process labels out of order",
                             ": finish out of order;"};
    for (size_t i = 0; i < sizeof reasons / sizeof *reasons; i++)
        ck_assert_msg(strstr(said, reasons[i]), "no \"%s\" in: %s", reasons[i], said);
    ck_assert_int_eq(tu_occurrences(said, "; disconnected"), 9);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 1000);
    ck_assert_uint_eq(m->events, 1000);
    opp_model_free(m);
    free(out), free(said), free(log);
}
END_TEST

/* A client that rewrites its ring's header after the collector mapped it
 * (capacity, head and tail far beyond the memory) and publishes damaged
 * records: the collector reads only within what it validated at mapping
 * time, disconnects that client, and a real program profiled beside it at
 * the same time is whole. Loop 1: in summary mode, whose process's end
 * counts the damaged records once, as END does. */
START_TEST(ring_header_rewritten)
{
    int summary = _i == 1;
    int cpid = tu_collector_start(sock, trace, summary ? "--mode=summary" : NULL);
    ck_assert_int_gt(cpid, 0);
    int bad = opp_connect(sock);
    ck_assert_int_ge(bad, 0);
    uint8_t buf[64];
    uint32_t n;
    put_hello(buf, &n, 0);
    ck_assert_int_eq(opp_send_msg(bad, OPP_MSG_HELLO, buf, n, -1), 0);
    send_funcs_foo(bad);
    int mfd = (int)syscall(SYS_memfd_create, "r", MFD_ALLOW_SEALING | MFD_CLOEXEC);
    ck_assert_int_ge(mfd, 0);
    ck_assert_int_eq(ftruncate(mfd, (off_t)opp_ring_bytes(1024)), 0);
    ck_assert_int_eq(fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
    struct opp_ring_hdr *h =
        mmap(NULL, opp_ring_bytes(1024), PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    ck_assert_ptr_ne(h, MAP_FAILED);
    h->magic = OPP_RING_MAGIC, h->version = OPP_RING_VERSION, h->capacity = 1024, h->tid = 77;
    uint64_t far = 1ull << 30; /* slot far beyond the mapping unless masked by 1023 */
    atomic_store(&h->tail, far);
    struct opp_rec *slots = (struct opp_rec *)((char *)h + OPP_RING_HDR_SIZE);
    slots[0] = (struct opp_rec){.begin = 1, .end = 2}; /* one honest call of foo */
    atomic_store(&h->head, far + 1);
    uint32_t ring[2] = {77, 1024};
    ck_assert_int_eq(opp_send_msg(bad, OPP_MSG_RING, ring, 8, mfd), 0);
    close(mfd);
    for (int i = 0; i < 1000 && atomic_load(&h->tail) != far + 1; i++)
        usleep(10000); /* until mapped and drained once: then lie */
    ck_assert_uint_eq(atomic_load(&h->tail), far + 1);
    for (int i = 0; i < 1024; i++)
        slots[i].fn = 999; /* no such function */
    h->capacity = 1u << 31;
    atomic_store(&h->head, far + 1 + 16);
    PRELOAD_ENV(env);
    char *out = tu_path(dir, "out");
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "loop", "1000", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, env, out, NULL)), 0);
    ck_assert_msg(closed_by_peer(bad), "the client with the damaged ring was not disconnected");
    close(bad);
    munmap(h, opp_ring_bytes(1024));
    ck_assert_int_eq(finish_collector(cpid), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(m->nprocs, 2);
    ck_assert_uint_eq(m->events, 1000 + 1); /* the program's, foo's */
    if (!summary) {                         /* a summary's count is its call paths' */
        ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 1000);
        ck_assert_uint_eq(tu_count(m, "foo", -1, 0, 0), 1);
    }
    ck_assert_uint_eq(m->dropped, 16); /* the damaged records, counted once */
    ck_assert_uint_eq(m->sum.end_dropped, 16);
    ck_assert_uint_eq(m->summary, summary);
    opp_model_free(m);
    free(out);
}
END_TEST

/* The calls a client's ring holds, each as the trace gives it back. */
struct calls_seen {
    struct opp_tr_event ev[32];
    int n;
};

static int seen_event(void *ctx, const struct opp_tr_event *e)
{
    struct calls_seen *s = ctx;
    if (s->n < 32)
        s->ev[s->n] = *e;
    s->n++;
    return 0;
}

/* The collector encodes a slot whose bytes after the times repeat the
 * call before's without reading it field by field: each call comes back
 * as written, whatever field differs from the one before, with the
 * clock's steps back kept in order as any call's (end never before the
 * previous end, begin never after its end). */
START_TEST(repeated_calls_read_as_written)
{
    int cpid = start_collector();
    int cl = opp_connect(sock);
    ck_assert_int_ge(cl, 0);
    uint8_t buf[64];
    uint32_t n;
    put_hello(buf, &n, 0);
    ck_assert_int_eq(opp_send_msg(cl, OPP_MSG_HELLO, buf, n, -1), 0);
    /* functions 0 "foo" and 1 "bar" of kind 0 */
    uint8_t msg[64];
    uint32_t f[] = {2, 0, 2, 0, 0, 1}, n3 = 3;
    memcpy(msg, f, 24), memcpy(msg + 24, "b", 1), memcpy(msg + 25, &n3, 4);
    memcpy(msg + 29, "foo", 3);
    uint32_t g[] = {0, 0, 1};
    memcpy(msg + 32, g, 12), memcpy(msg + 44, "b", 1), memcpy(msg + 45, &n3, 4);
    memcpy(msg + 49, "bar", 3);
    ck_assert_int_eq(opp_send_msg(cl, OPP_MSG_FUNCS, msg, 52, -1), 0);
    int mfd = (int)syscall(SYS_memfd_create, "r", MFD_ALLOW_SEALING | MFD_CLOEXEC);
    ck_assert_int_ge(mfd, 0);
    ck_assert_int_eq(ftruncate(mfd, (off_t)opp_ring_bytes(1024)), 0);
    ck_assert_int_eq(fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
    struct opp_ring_hdr *h =
        mmap(NULL, opp_ring_bytes(1024), PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    ck_assert_ptr_ne(h, MAP_FAILED);
    h->magic = OPP_RING_MAGIC, h->version = OPP_RING_VERSION, h->capacity = 1024, h->tid = 77;
    struct opp_rec *slots = (struct opp_rec *)((char *)h + OPP_RING_HDR_SIZE);
    /* begin, end, fn, depth, nargs, flags, arg0 */
    const struct opp_rec in[] = {
        {10, 20, 0, 0, 1, 0, 5},
        {30, 40, 0, 0, 1, 0, 5},   /* again */
        {50, 45, 0, 0, 1, 0, 5},   /* again, begun after its end */
        {35, 38, 0, 0, 1, 0, 5},   /* again, ended before the one before */
        {60, 70, 0, 0, 1, 0, 6},   /* another argument */
        {80, 90, 0, 1, 1, 0, 6},   /* another depth */
        {100, 110, 1, 1, 1, 0, 6}, /* another function */
        {120, 130, 1, 1, 1, OPP_REC_RANGE, 6},
        {140, 150, 1, 1, 1, OPP_REC_RANGE, 6},
        {160, 170, 1, 1, 0, 0, 77}, /* no argument: arg0 holds anything */
        {180, 190, 1, 1, 0, 0, 78},
        {200, 210, 1, 1, 0, 0, 78},
        {220, 230, 1, 1, 1, OPP_REC_STACK, 9}, /* a code stack id, no argument */
        {240, 250, 1, 1, 1, OPP_REC_STACK, 9},
        {260, 270, 1, 1, 2, 0, 5}, /* two arguments: a second slot */
        {280, 290, 1, 1, 2, 0, 5},
    };
    int nin = (int)(sizeof in / sizeof *in), k = 0;
    for (int i = 0; i < nin; i++) {
        slots[k++] = in[i];
        if (in[i].nargs == 2)
            memcpy(&slots[k++], &(struct opp_rec_ext){{6, 0, 0, 0}}, 32);
    }
    atomic_store(&h->head, (uint64_t)k);
    uint32_t ring[2] = {77, 1024};
    ck_assert_int_eq(opp_send_msg(cl, OPP_MSG_RING, ring, 8, mfd), 0);
    close(mfd);
    for (int i = 0; i < 1000 && atomic_load(&h->tail) != (uint64_t)k; i++)
        usleep(10000);
    ck_assert_uint_eq(atomic_load(&h->tail), (uint64_t)k);
    close(cl);
    munmap(h, opp_ring_bytes(1024));
    ck_assert_int_eq(finish_collector(cpid), 0);
    struct calls_seen seen = {.n = 0};
    struct opp_tr_visitor v = {.event = seen_event};
    struct opp_tr_summary sum;
    char err[256];
    ck_assert_int_eq(opp_trace_read(trace, &v, &seen, &sum, err, sizeof err), 0);
    ck_assert_int_eq(seen.n, nin);
    /* begin, end, fn, depth, nargs, arg0, stack */
    const uint64_t want[][7] = {
        {10, 20, 0, 0, 1, 5, 0},   {30, 40, 0, 0, 1, 5, 0},   {45, 45, 0, 0, 1, 5, 0},
        {35, 45, 0, 0, 1, 5, 0},   {60, 70, 0, 0, 1, 6, 0},   {80, 90, 0, 1, 1, 6, 0},
        {100, 110, 1, 1, 1, 6, 0}, {120, 130, 1, 1, 1, 6, 0}, {140, 150, 1, 1, 1, 6, 0},
        {160, 170, 1, 1, 0, 0, 0}, {180, 190, 1, 1, 0, 0, 0}, {200, 210, 1, 1, 0, 0, 0},
        {220, 230, 1, 1, 0, 0, 9}, {240, 250, 1, 1, 0, 0, 9}, {260, 270, 1, 1, 2, 5, 0},
        {280, 290, 1, 1, 2, 5, 0},
    };
    for (int i = 0; i < nin; i++) {
        const struct opp_tr_event *e = &seen.ev[i];
        uint64_t got[7] = {
            e->begin_ns, e->end_ns, e->fn, e->depth, e->nargs, e->nargs ? e->args[0] : 0, e->stack};
        for (int j = 0; j < 7; j++)
            ck_assert_msg(got[j] == want[i][j], "call %d field %d: %" PRIu64 ", want %" PRIu64, i,
                          j, got[j], want[i][j]);
        if (e->nargs == 2)
            ck_assert_uint_eq(e->args[1], 6);
    }
}
END_TEST

/* The trace: whole, one process that exited, calls cblas_ddot, nothing
 * dropped. */
static void whole_one_process(unsigned long calls)
{
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(m->nprocs, 1);
    ck_assert_uint_eq(m->procs[0].end_how, OPP_END_EXITED);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), calls);
    ck_assert_uint_eq(m->dropped, 0);
    opp_model_free(m);
}

/* A program that closes every descriptor (a daemon) and gets the numbers
 * back for a socket of its own: nothing of ours arrives on it, every call
 * is recorded (the collector reads the rings meanwhile, the agent comes
 * back on a new connection as the same process), and exit is not held up. */
START_TEST(program_closes_our_descriptor)
{
    int cpid = start_collector();
    PRELOAD_ENV(env);
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "closefds", "1000", NULL};
    uint64_t t0 = opp_mono_ns();
    ck_assert_int_eq(tu_code(tu_run(argv, env, out, err)), 0);
    uint64_t took = opp_mono_ns() - t0;
    char *o = tu_slurp(out), *e = tu_slurp(err);
    ck_assert_str_eq(o, "closefds 3000 foreign 0\n");
    ck_assert_str_eq(e, "");
    ck_assert_msg(took < 3000000000ull, "exit held up: %llu ms", (unsigned long long)(took / 1000000));
    ck_assert_int_eq(finish_collector(cpid), 0);
    whole_one_process(3000);
    free(o), free(e), free(out), free(err);
}
END_TEST

/* `opprof run -q -o trace -- notice MODE N K EXE` (K, EXE NULL: none) run as
 * nobody when the tests run as root, who reads any process's maps, its
 * output in out and err: its exit code, 122 when that user cannot reach
 * the build (said: the test is skipped). */
static int run_as_nobody(const char *test, const char *out, const char *err, char *mode, char *n,
                         char *k, char *exe)
{
    ck_assert_int_eq(chmod(dir, 0777), 0);
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(120);
        if (geteuid() == 0 && (setgroups(0, NULL) || setgid(65534) || setuid(65534)))
            _exit(121);
        if (access(tu_tool("opprof"), X_OK) || access(tu_build("tests/progs/notice"), X_OK))
            _exit(122); /* the build not reachable by that user */
        char *argv[] = {(char *)tu_tool("opprof"),
                        "run",
                        "-q",
                        "-o",
                        trace,
                        "--",
                        (char *)tu_build("tests/progs/notice"),
                        mode,
                        n,
                        k,
                        exe,
                        NULL};
        setenv("OPENBLAS_NUM_THREADS", "1", 1); /* the rest as the tests run (OPPROF_LIB...) */
        execv(argv[0], argv);
        _exit(127);
    }
    int code = tu_code(tu_wait(pid));
    if (code == 122)
        fprintf(stderr, "robust: %s skipped: cannot run %s as user nobody\n", test,
                tu_tool("opprof"));
    return code;
}

/* The same by a program that made itself not dumpable (PR_SET_DUMPABLE
 * 0: its /proc/PID/maps kept from processes of its user, the collector
 * among them): while it runs, its rings are taken as still mapped, and
 * every call is recorded, nothing said. */
START_TEST(undumpable_program_closes_our_descriptor)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    int code = run_as_nobody("undumpable_program_closes_our_descriptor", out, err, "nodump", "100",
                             NULL, NULL);
    if (code == 122) {
        free(out), free(err);
        return;
    }
    ck_assert_int_eq(code, 0);
    char *o = tu_slurp(out), *e = tu_slurp(err);
    ck_assert_str_eq(o, "nodump 200\n");
    char said[4200];
    snprintf(said, sizeof said, "opprof: trace written to %s (300 events)\n", trace);
    ck_assert_str_eq(e, said);
    whole_one_process(300);
    free(o), free(e), free(out), free(err);
}
END_TEST

/* A program that is not dumpable execs a copy of itself that its user
 * may run but not read, and so is not dumpable from the exec on: its
 * maps say nothing of the exec, but the new image's hello from the same
 * pid does. The old image ends (cut, as an exec's old image does) no
 * later than the new one started, not when the process exits; each
 * image's 5 calls recorded. The copy is execute-only for its owner too:
 * when the tests do not run as root, the user that runs it owns it. */
START_TEST(undumpable_program_execs)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err"), *exe = tu_path(dir, "notice");
    char *cp[] = {"/bin/cp", (char *)tu_build("tests/progs/notice"), exe, NULL};
    ck_assert_int_eq(tu_code(tu_run(cp, NULL, NULL, NULL)), 0);
    ck_assert_int_eq(chmod(exe, 0111), 0);
    int code = run_as_nobody("undumpable_program_execs", out, err, "nodumpexec", "5", "1", exe);
    if (code == 122) {
        free(out), free(err), free(exe);
        return;
    }
    ck_assert_int_eq(code, 0);
    char *o = tu_slurp(out);
    ck_assert_str_eq(o, "nodumpexec 5\n");
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(m->nprocs, 2);
    ck_assert_uint_eq(m->procs[0].pid, m->procs[1].pid);
    ck_assert_uint_eq(m->procs[0].end_how, OPP_END_LOST);
    ck_assert_uint_le(m->procs[0].end_ns, m->procs[1].start_ns);
    ck_assert_uint_eq(m->procs[1].end_how, OPP_END_EXITED);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", 0, 0, 0), 5);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", 1, 0, 0), 5);
    ck_assert_uint_eq(m->dropped, 0);
    opp_model_free(m);
    free(o), free(out), free(err), free(exe);
}
END_TEST

/* A daemon's child that closes every descriptor before its first call
 * (no ring yet: nothing for the collector to keep reading) comes back as a
 * new instance of the same process: every call recorded, nothing said. */
START_TEST(daemon_child_closes_descriptors)
{
    int cpid = start_collector();
    PRELOAD_ENV(env);
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "daemon", "100", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, env, out, err)), 0);
    char *o = tu_slurp(out), *e = tu_slurp(err);
    ck_assert_str_eq(o, "daemon child 101\ndaemon 202\n");
    ck_assert_str_eq(e, "");
    ck_assert_int_eq(finish_collector(cpid), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 100 + 101 + 102);
    ck_assert_uint_eq(m->dropped, 0);
    opp_model_free(m);
    free(o), free(e), free(out), free(err);
}
END_TEST

/* A program (argv: scenarios pause 1000 DIR) whose collector is stopped
 * (SIGSTOP) halfway: it exits within max_ms of being let go, with exit
 * code 3 and want_err among the lines on stderr (lines of them; -N: 1 to
 * N). Once the collector
 * continues it finishes the trace with every call. */
static void collector_stopped(char **argv, char **env, int cpid, const char *want_err,
                              int lines, unsigned max_ms)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err"), *half = tu_path(dir, "halfway");
    char *go = tu_path(dir, "go");
    int pid = tu_spawn(argv, env, out, err);
    ck_assert_int_eq(tu_wait_file(half, 10000), 0);
    char at[4200];
    if (cpid <= 0)
        cpid = tu_collector_of(trace, at, sizeof at);
    else
        snprintf(at, sizeof at, "%s", sock);
    ck_assert_int_gt(cpid, 0);
    ck_assert_int_eq(tu_collector_events(at, 1000, 10000), 0); /* the first half drained */
    ck_assert_int_eq(kill(cpid, SIGSTOP), 0);
    uint64_t t0 = opp_mono_ns();
    close(open(go, O_CREAT | O_WRONLY, 0600));
    ck_assert_int_eq(tu_code(tu_wait(pid)), 3);
    uint64_t took = (opp_mono_ns() - t0) / 1000000;
    char *e = tu_slurp(err);
    ck_assert_msg(took < max_ms, "exit held up %llu ms by a stopped collector",
                  (unsigned long long)took);
    int n = tu_count_lines(e, "");
    ck_assert_msg(lines >= 0 ? n == lines : n >= 1 && n <= -lines, "stderr: %s", e);
    ck_assert_msg(strstr(e, want_err), "stderr: %s", e);
    ck_assert_int_eq(kill(cpid, SIGCONT), 0);
    free(e), free(out), free(err), free(half), free(go);
}

static void trace_whole(unsigned calls)
{
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), calls);
    opp_model_free(m);
}

/* A process whose collector is stopped does not wait at exit (it waited
 * a second, its goodbye unanswered): silently, its records stay in shared
 * memory and are written once the collector continues. */
START_TEST(collector_stopped_process_exit)
{
    int cpid = start_collector();
    PRELOAD_ENV(env);
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "pause", "1000", dir, NULL};
    collector_stopped(argv, env, cpid, "", 0, 900); /* nothing lost: nothing said */
    ck_assert_int_eq(finish_collector(cpid), 0);
    trace_whole(2000);
}
END_TEST

/* A stopped collector hung up and continued (what the kernel does to an
 * orphaned process group with a stopped member, as when the `opprof run`
 * that started it exits) reads the goodbye its process sent meanwhile
 * before it finishes: the process exited, not still running. */
START_TEST(collector_hung_up_while_stopped)
{
    char *log = tu_path(dir, "collector.err");
    int cpid = start_collector_said(log);
    PRELOAD_ENV(env);
    char *half = tu_path(dir, "halfway"), *go = tu_path(dir, "go");
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "pause", "1000", dir, NULL};
    int pid = tu_spawn(argv, env, NULL, NULL);
    ck_assert_int_eq(tu_wait_file(half, 10000), 0);
    ck_assert_int_eq(tu_collector_events(sock, 1000, 10000), 0);
    ck_assert_int_eq(kill(cpid, SIGSTOP), 0);
    close(open(go, O_CREAT | O_WRONLY, 0600));
    ck_assert_int_eq(tu_code(tu_wait(pid)), 3);
    ck_assert_int_eq(kill(cpid, SIGHUP), 0);
    ck_assert_int_eq(kill(cpid, SIGCONT), 0);
    ck_assert_int_eq(tu_code(tu_wait(cpid)), 0);
    char *e = tu_slurp(log);
    ck_assert_str_eq(e, "opprof-collector: stopped by signal 1; trace finished with what was "
                        "recorded\n");
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 2000);
    ck_assert_uint_eq(m->nprocs, 1);
    ck_assert_uint_eq(m->procs[0].end_how, OPP_END_EXITED);
    ck_assert_uint_eq(m->procs_cut, 0);
    opp_model_free(m);
    free(e), free(log), free(half), free(go);
}
END_TEST

/* A collector that does not answer a goodbye within its second is slow,
 * not gone: a thread the process starts after it (a library's destructor
 * that runs after ours) hands its buffer over and its calls are in the
 * trace, 5 + 1 + 8 (its 8 were lost, unsaid, when the process took the
 * silence for a collector gone). */
START_TEST(collector_slow_at_a_goodbye)
{
    int cpid = start_collector();
    PRELOAD_ENV(env);
    char *half = tu_path(dir, "halfway"), *go = tu_path(dir, "go"), *err = tu_path(dir, "err");
    char *argv[] = {(char *)tu_build("tests/progs/notice"),
                    "slowbye",
                    "5",
                    (char *)tu_build("tests/progs/liblate_plugin.so"),
                    dir,
                    NULL};
    int pid = tu_spawn(argv, env, NULL, err);
    ck_assert_int_eq(tu_wait_file(half, 10000), 0);
    ck_assert_int_eq(tu_collector_events(sock, 5, 10000), 0);
    ck_assert_int_eq(kill(cpid, SIGSTOP), 0);
    close(open(go, O_CREAT | O_WRONLY, 0600));
    ck_assert_int_eq(tu_code(tu_wait(pid)), 0); /* its goodbye unanswered for 1 s */
    ck_assert_int_eq(kill(cpid, SIGCONT), 0);
    ck_assert_int_eq(tu_collector_events(sock, 5 + 1 + 8, 10000), 0);
    ck_assert_int_eq(finish_collector(cpid), 0);
    char *e = tu_slurp(err);
    ck_assert_str_eq(e, "");
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 5 + 1 + 8);
    ck_assert_uint_eq(m->procs[0].end_how, OPP_END_EXITED);
    opp_model_free(m);
    free(e), free(err), free(half), free(go);
}
END_TEST

/* The process that started the collector itself (plain LD_PRELOAD), which
 * otherwise waits for the finished trace, leaves once it sees the
 * collector stopped (it waited a second), and says so. */
START_TEST(collector_stopped_root_exit)
{
    struct tu_env te;
    char **env = tu_preload_env(&te, trace, NULL);
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "pause", "1000", dir, NULL};
    char want[4400];
    snprintf(want, sizeof want,
             "opprof: the collector is stopped (SIGSTOP): %s is finished once it continues\n",
             trace);
    collector_stopped(argv, env, 0, want, 1, 900);
    trace_whole(2000);
}
END_TEST

/* Children that connected, said goodbye and were reaped while the
 * collector read nothing (40, more than it accepts at once) are in the
 * trace: the first process's goodbye, read first, finds them all. */
START_TEST(collector_stopped_children_reaped_before_the_root_s_goodbye)
{
    struct tu_env te;
    char **env = tu_preload_env(&te, trace, "OPENBLAS_NUM_THREADS=1");
    char *argv[] = {
        (char *)tu_build("tests/progs/scenarios"), "pausefork", "1000", "40", dir, NULL};
    char want[4400];
    snprintf(want, sizeof want,
             "opprof: the collector is stopped (SIGSTOP): %s is finished once it continues\n",
             trace);
    collector_stopped(argv, env, 0, want, 1, 60000); /* not timed: the count */
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(m->nprocs, 1 + 40);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 1000 + 40);
    opp_model_free(m);
}
END_TEST

/* The last connected process of a plain LD_PRELOAD run, whose first
 * process has exited, leaves without a goodbye while the collector is
 * stopped, and a process connects and makes its calls meanwhile: the
 * collector that continues reads the newcomer before it takes the run as
 * over (it finished the trace with the newcomer's hello unread: its 11
 * calls lost, and it said the collector was gone). */
START_TEST(collector_stopped_while_the_last_leaves_and_another_connects)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err"), *go = tu_path(dir, "go");
    char *connected = tu_path(dir, "connected"), *end = tu_path(dir, "end");
    struct tu_env te;
    char **env = tu_preload_env(&te, trace, "OPENBLAS_NUM_THREADS=1");
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "lateconnect", "10", dir, NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, env, out, err)), 0);
    char at[4200];
    int cpid = tu_collector_of(trace, at, sizeof at);
    ck_assert_int_gt(cpid, 0);
    ck_assert_int_eq(kill(cpid, SIGSTOP), 0);
    close(open(go, O_CREAT | O_WRONLY, 0600));
    ck_assert_int_eq(tu_wait_file(connected, 10000), 0);
    ck_assert_int_eq(kill(cpid, SIGCONT), 0);
    close(open(end, O_CREAT | O_WRONLY, 0600));
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(m->nprocs, 3);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 10 + 1 + 11);
    opp_model_free(m);
    free(out), free(err), free(go), free(connected), free(end);
}
END_TEST

/* `opprof run` does not wait on a stopped collector (it waited 3 s): it
 * says so, with the pid to continue, and returns the command's exit code. */
START_TEST(collector_stopped_run)
{
    char *argv[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--",
                    (char *)tu_build("tests/progs/scenarios"), "pause", "1000", dir, NULL};
    /* opprof run's line, and the collector's own where the kernel hangs up
     * its process group, left orphaned while stopped (then it finishes). */
    collector_stopped(argv, NULL, 0, "is not finished; it will be once the collector continues", -2,
                      900);
    trace_whole(2000);
}
END_TEST

/* A collector ended by SIGTERM finishes the trace with what it read and
 * says so in one line. */
START_TEST(collector_terminated_says_so)
{
    char *err = tu_path(dir, "collector.err");
    int cpid = start_collector_said(err);
    PRELOAD_ENV(env);
    char *prog[] = {(char *)tu_build("tests/progs/scenarios"), "loop", "100", NULL};
    ck_assert_int_eq(tu_code(tu_run(prog, env, NULL, NULL)), 0);
    ck_assert_int_eq(tu_collector_events(sock, 100, 10000), 0);
    ck_assert_int_eq(kill(cpid, SIGTERM), 0);
    ck_assert_int_eq(tu_code(tu_wait(cpid)), 0);
    char *e = tu_slurp(err);
    ck_assert_str_eq(e, "opprof-collector: stopped by signal 15; trace finished with what was "
                        "recorded\n");
    trace_whole(100);
    free(e), free(err);
}
END_TEST

/* A termination request sent to `opprof run` alone (as a container's
 * stop, a Python parent's terminate() or a plain kill send it) reaches
 * CMD, which ends as it chooses; opprof run exits with CMD's status and
 * the trace is finished. */
START_TEST(run_forwards_termination)
{
    char *err = tu_path(dir, "err"), *ready = tu_path(dir, "ready"), script[4400];
    /* ready once sleep runs: a child still in the shell's fork can take
     * the trap's kill as the shell's own trap, and go on to exec sleep
     * after the run is over */
    snprintf(script, sizeof script,
             "trap 'kill $p; exit 9' TERM; sleep 30 & p=$!; "
             "until read c < /proc/$p/comm && [ \"$c\" = sleep ]; do :; done; : > %s; wait",
             ready);
    char *argv[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", "sh", "-c", script,
                    NULL};
    int pid = tu_spawn(argv, NULL, NULL, err);
    ck_assert_int_gt(pid, 0);
    ck_assert_int_eq(tu_wait_file(ready, 10000), 0);
    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    ck_assert_int_eq(tu_code(tu_wait(pid)), 9);
    char *e = tu_slurp(err), want[4400];
    snprintf(want, sizeof want, "opprof: trace written to %s (0 events)\n", trace);
    ck_assert_str_eq(e, want);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    opp_model_free(m);
    free(e), free(err), free(ready);
}
END_TEST

/* As system() leaves them: SIGINT and SIGQUIT that `opprof run` was
 * started ignoring (a script's background job) are ignored by CMD too,
 * which lives through them as it would without us. */
START_TEST(run_keeps_ignored_signals)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err"), script[9000];
    snprintf(script, sizeof script,
             "trap '' INT QUIT; exec %s run -q -o %s -- sh -c 'kill -INT $$; kill -QUIT $$; "
             "echo survived'",
             tu_tool("opprof"), trace);
    char *argv[] = {"sh", "-c", script, NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, out, err)), 0);
    char *o = tu_slurp(out), *e = tu_slurp(err), want[4400];
    ck_assert_str_eq(o, "survived\n");
    snprintf(want, sizeof want, "opprof: trace written to %s (0 events)\n", trace);
    ck_assert_str_eq(e, want);
    free(o), free(e), free(out), free(err);
}
END_TEST

/* `opprof run` killed (SIGKILL) while its command runs on: its collector
 * finishes the trace once the command is gone, with every call, and says
 * why in one line; it does not wait for ever for a run that cannot ask. */
START_TEST(run_killed_trace_finished)
{
    char *err = tu_path(dir, "err"), *ready = tu_path(dir, "ready"), *go = tu_path(dir, "go");
    char script[13000];
    snprintf(script, sizeof script,
             ": > %s; while [ ! -e %s ]; do sleep 0.05; done; %s loop 10 >/dev/null", ready, go,
             tu_build("tests/progs/scenarios"));
    char *argv[] = {
        (char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", "sh", "-c", script, NULL};
    int pid = tu_spawn(argv, NULL, NULL, err);
    ck_assert_int_gt(pid, 0);
    ck_assert_int_eq(tu_wait_file(ready, 10000), 0);
    int cpid = tu_collector_of(trace, NULL, 0);
    ck_assert_int_gt(cpid, 0);
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    ck_assert_int_eq(tu_code(tu_wait(pid)), 128 + SIGKILL);
    close(open(go, O_CREAT | O_WRONLY, 0600)); /* the command goes on, then ends */
    int complete = 0;
    for (int i = 0; i < 200 && !complete; i++) {
        struct opp_model *m = tu_load(trace);
        complete = m && m->sum.complete;
        opp_model_free(m);
        if (!complete)
            usleep(50000);
    }
    if (!complete)
        kill(cpid, SIGKILL); /* not left behind by a failing run */
    ck_assert_msg(complete, "the trace is not finished 10 s after the command ended");
    trace_whole(10);
    char *e = tu_slurp(err), want[200];
    snprintf(want, sizeof want,
             "opprof-collector: the opprof run that started it (pid %d) is gone; trace finished "
             "with what was recorded\n",
             pid);
    ck_assert_str_eq(e, want);
    free(e), free(err), free(ready), free(go);
}
END_TEST

/* `opprof run` whose command leaves a process running: it waits a bounded
 * time for it, then says it was cut, and the report and its JSON say the
 * trace is partial. */
START_TEST(run_cuts_background_child)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    char script[4400];
    /* the background child marked by this test's folder (an argument paced
     * ignores), so that killing it kills no other run's */
    snprintf(script, sizeof script, "%s paced 100000 1000 %s >/dev/null & sleep 0.5; %s loop 10",
             tu_build("tests/progs/scenarios"), dir, tu_build("tests/progs/scenarios"));
    char *argv[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", "sh", "-c", script,
                    NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, out, err)), 0);
    char *e = tu_slurp(err);
    ck_assert_msg(strstr(e, "opprof run: 1 process was still running 2.0 s after sh exited; "
                            "the trace ends there for it\n"),
                  "%s", e);
    char *rep[] = {(char *)tu_tool("opprof"), "report", "--format", "json", trace, NULL};
    ck_assert_int_eq(tu_code(tu_run(rep, NULL, out, err)), 0);
    char *j = tu_slurp(out), *e2 = tu_slurp(err);
    ck_assert_ptr_nonnull(strstr(j, "\"complete\": false,\n  \"processes_cut\": 1,"));
    ck_assert_ptr_nonnull(strstr(e2, "warning: 1 process was still running when the trace was "
                                     "finished: what it did after that is not in it"));
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->procs_cut, 1);
    opp_model_free(m);
    char kill_it[4400];
    snprintf(kill_it, sizeof kill_it, "pkill -f 'scenarios paced 100000 1000 %s' 2>/dev/null", dir);
    system(kill_it);
    free(e), free(j), free(e2), free(out), free(err);
}
END_TEST

/* The trace cannot be written whole (here a file size limit on the
 * collector, as a full disk does it): the program runs on unchanged,
 * `opprof run` says how much the file holds and exits non-zero, the
 * process that started its own collector says the same, and the file
 * reads as what was written. */
START_TEST(trace_write_fails)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    char *wrap = tu_path(dir, "limited-collector");
    FILE *f = fopen(wrap, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "#!/bin/sh\nulimit -f 512 && exec %s \"$@\"\n", tu_tool("opprof-collector"));
    fclose(f);
    chmod(wrap, 0755);
    const char *prog = tu_build("tests/progs/scenarios");
    for (int root = 0; root < 2; root++) {
        char coll[4200];
        snprintf(coll, sizeof coll, "OPPROF_COLLECTOR=%s", wrap);
        struct tu_env te;
        char **env = tu_preload_env(&te, trace, coll);
        char *run_env[] = {coll, "OPPROF_SOCKET=", NULL}; /* opprof run sets the rest */
        char *run[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", (char *)prog,
                       "loop", "300000", NULL};
        char *plain[] = {(char *)prog, "loop", "300000", NULL};
        int code = tu_code(tu_run(root ? plain : run, root ? env : run_env, out, err));
        ck_assert_int_eq(code, root ? 0 : 1);
        char *o = tu_slurp(out), *e = tu_slurp(err);
        ck_assert_str_eq(o, "loop 300000\n");
        unsigned long long held = 0, all = 0;
        const char *at =
            strstr(e, root ? "opprof: writing the trace failed: " : "opprof run: writing ");
        ck_assert_msg(at, "%s", e);
        at = strstr(at, "(File too large): it holds the first ");
        ck_assert_msg(at && sscanf(at, "(File too large): it holds the first %llu events of %llu",
                                   &held, &all) == 2,
                      "%s", e);
        ck_assert_uint_eq(all, 300000);
        ck_assert_uint_gt(held, 0);
        ck_assert_uint_lt(held, all);
        struct opp_model *m = tu_load(trace);
        ck_assert_ptr_nonnull(m);
        ck_assert(!m->sum.complete);
        ck_assert_uint_eq(m->events, held);
        opp_model_free(m);
        free(o), free(e);
        unlink(trace);
    }
    /* The program itself under the limit: its buffers are sized to fit,
     * where one of the default size would have raised SIGXFSZ. */
    char *limited[] = {"sh", "-c", "ulimit -f 128 && exec \"$@\"", "sh", (char *)prog, "loop",
                       "1000", NULL};
    PRELOAD_ENV(penv);
    int cpid = start_collector();
    ck_assert_int_eq(tu_code(tu_run(limited, penv, out, err)), 0);
    char *o = tu_slurp(out), *e = tu_slurp(err);
    ck_assert_str_eq(o, "loop 1000\n");
    ck_assert_str_eq(e, "");
    ck_assert_int_eq(finish_collector(cpid), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0) + m->dropped, 1000);
    opp_model_free(m);
    free(o), free(e), free(out), free(err), free(wrap);
}
END_TEST

/* BLAS calls from a signal handler that interrupts the program's own BLAS
 * calls (here another thread signals it as fast as it can): each is
 * recorded or counted as dropped, never written over; the handler lands
 * inside a publish often enough here that a silent loss shows. */
START_TEST(signal_handler_calls_counted)
{
    int cpid = start_collector();
    PRELOAD_ENV(env);
    char *out = tu_path(dir, "out");
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "sigblas", "1000000", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, env, out, NULL)), 0);
    char *o = tu_slurp(out);
    unsigned long total = 0, handled = 0;
    ck_assert_int_eq(sscanf(o, "sigblas %lu handled %lu", &total, &handled), 2);
    ck_assert_uint_ge(handled, 200); /* the program calls on until it has */
    ck_assert_int_eq(finish_collector(cpid), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0) + m->dropped, total);
    opp_model_free(m);
    free(o), free(out);
}
END_TEST

/* `opprof ctl stop` and `start` while a process runs whose first thread
 * has exited (its ring released): the collector pauses the others and
 * goes on; the calls after the stop are not recorded. */
START_TEST(ctl_after_a_thread_exited)
{
    int cpid = start_collector();
    PRELOAD_ENV(env);
    char *half = tu_path(dir, "halfway"), *go = tu_path(dir, "go");
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "pause", "100", dir, "thread",
                    NULL};
    int pid = tu_spawn(argv, env, NULL, NULL);
    ck_assert_int_eq(tu_wait_file(half, 10000), 0);
    /* the thread's ring drained, and so released */
    ck_assert_int_eq(tu_collector_events(sock, 100, 10000), 0);
    for (uint32_t op = 2; op >= 1; op--) { /* stop, then start */
        int c = opp_connect(sock);
        ck_assert_int_ge(c, 0);
        struct opp_ctl_ack ack;
        ck_assert_int_eq(opp_ctl_ask(c, op, &ack, 5000), 0);
        ck_assert_uint_eq(ack.recording, op == 1);
        close(c);
    }
    close(open(go, O_CREAT | O_WRONLY, 0600));
    ck_assert_int_eq(tu_code(tu_wait(pid)), 3);
    ck_assert_int_eq(finish_collector(cpid), 0);
    trace_whole(200);
    free(half), free(go);
}
END_TEST

/* Descriptors sent in one message with /dev/null's, k of them. */
static int send_fds(int to, int k)
{
    int fds[8];
    for (int i = 0; i < k; i++)
        fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
    union {
        char buf[CMSG_SPACE(sizeof fds)];
        struct cmsghdr align;
    } u;
    char byte = 0;
    struct iovec iov = {&byte, 1};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                        .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)k)};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)k);
    memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)k);
    ssize_t n = sendmsg(to, &mh, MSG_NOSIGNAL);
    for (int i = 0; i < k; i++)
        close(fds[i]);
    return n == 1 ? 0 : -1;
}

static int open_fds(int pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", pid);
    return tu_count_files(path, "");
}

/* A client that sends more descriptors than ring messages claim is
 * dropped, and every descriptor it sent is closed: none stays open in the
 * collector (the ones received with the one too many included). */
START_TEST(excess_descriptors_closed)
{
    int cpid = start_collector();
    int probe = opp_connect(sock); /* the collector has accepted a client once */
    ck_assert_int_ge(probe, 0);
    struct opp_ctl_ack ack; /* a status answered: accepted, and kept open */
    ck_assert_int_eq(opp_ctl_ask(probe, 0, &ack, 5000), 0);
    int before = open_fds(cpid);
    int c = opp_connect(sock);
    ck_assert_int_ge(c, 0);
    ck_assert_int_eq(send_fds(c, 3), 0); /* queued: three of four */
    ck_assert_int_eq(send_fds(c, 3), 0); /* one fits, two too many */
    ck_assert_msg(closed_by_peer(c), "the client was not disconnected");
    close(c);
    int after = open_fds(cpid); /* a leak stays: 5 s of looking */
    for (int i = 0; i < 500 && after != before; i++) {
        usleep(10000);
        after = open_fds(cpid);
    }
    ck_assert_int_eq(after, before);
    close(probe);
    ck_assert_int_eq(finish_collector(cpid), 0);
}
END_TEST

/* A client of another user is refused: checked here by the uid test's
 * other half, SO_PEERCRED, only when we can change uid (root). */
START_TEST(other_user_refused)
{
    if (geteuid() != 0) {
        fprintf(stderr, "SKIP other_user_refused: needs root to connect as another uid\n");
        return;
    }
    int cpid = start_collector();
    ck_assert_int_eq(chmod(dir, 0755), 0);
    ck_assert_int_eq(chmod(sock, 0777), 0); /* only SO_PEERCRED stands in the way now */
    pid_t pid = fork();
    if (pid == 0) {
        if (setgid(65534) || setuid(65534))
            _exit(3);
        int fd = opp_connect(sock);
        if (fd < 0)
            _exit(4);
        _exit(closed_by_peer(fd) ? 0 : 5);
    }
    ck_assert_int_eq(tu_code(tu_wait(pid)), 0);
    ck_assert_int_eq(finish_collector(cpid), 0);
}
END_TEST

START_TEST(cli_errors)
{
    char *err = tu_path(dir, "err");
    char *a1[] = {(char *)tu_tool("opprof"), "run", NULL};
    ck_assert_int_eq(tu_code(tu_run(a1, NULL, NULL, err)), 2);
    char *e = tu_slurp(err);
    ck_assert_str_eq(e, "opprof run: no command given (usage: opprof run [OPTIONS] -- CMD "
                        "[ARG...])\n");
    free(e);
    char *a0[] = {(char *)tu_tool("opprof"), "run", "--bogus", "--", "true", NULL};
    ck_assert_int_eq(tu_code(tu_run(a0, NULL, NULL, err)), 2);
    e = tu_slurp(err);
    ck_assert_str_eq(e, "opprof run: unknown option '--bogus' (see 'opprof run --help')\n");
    free(e);
    char *a2[] = {(char *)tu_tool("opprof"), "run", "-o", trace, "--", "/nonexistent/prog", NULL};
    ck_assert_int_eq(tu_code(tu_run(a2, NULL, NULL, err)), 127);
    e = tu_slurp(err);
    /* as a shell says it, and no trace of a program that never ran */
    ck_assert_str_eq(e, "opprof run: cannot run /nonexistent/prog: No such file or directory\n");
    ck_assert_int_eq(access(trace, F_OK), -1);
    free(e);
    char *a2b[] = {(char *)tu_tool("opprof"), "run", "-o", trace, "--", "no-such-command-xyz", NULL};
    ck_assert_int_eq(tu_code(tu_run(a2b, NULL, NULL, err)), 127);
    ck_assert_int_eq(access(trace, F_OK), -1);
    /* found but not runnable: 126, with the reason; none written either */
    const char *bodies[] = {"\x7f" "ELF garbage", "plain text"};
    const int modes[] = {0755, 0644};
    const char *why[] = {"Exec format error", "Permission denied"};
    for (int i = 0; i < 2; i++) {
        char *bad = tu_path(dir, i ? "noexec" : "badelf");
        FILE *bf = fopen(bad, "w");
        fputs(bodies[i], bf);
        fclose(bf);
        chmod(bad, (mode_t)modes[i]);
        char *a2c[] = {(char *)tu_tool("opprof"), "run", "-o", trace, "--", bad, NULL};
        ck_assert_int_eq(tu_code(tu_run(a2c, NULL, NULL, err)), 126);
        e = tu_slurp(err);
        ck_assert_msg(strstr(e, why[i]) && tu_count_lines(e, "opprof") == 1, "%s", e);
        ck_assert_int_eq(access(trace, F_OK), -1);
        free(e);
        free(bad);
    }
    char *a3[] = {(char *)tu_tool("opprof"), "frobnicate", NULL};
    ck_assert_int_eq(tu_code(tu_run(a3, NULL, NULL, err)), 2);
    /* a file that is not a trace: a clear error, not a crash */
    char *junk = tu_path(dir, "junk");
    FILE *f = fopen(junk, "w");
    fputs("hello, not a trace\n", f);
    fclose(f);
    char *a4[] = {(char *)tu_tool("opprof"), "report", junk, NULL};
    ck_assert_int_eq(tu_code(tu_run(a4, NULL, NULL, err)), 1);
    e = tu_slurp(err);
    ck_assert_ptr_nonnull(strstr(e, "not an opprof trace"));
    free(e);
    /* a FIFO (or any file that is not regular) is refused at once, not
     * opened and waited on: by every reader and by the writer */
    char *fifo = tu_path(dir, "fifo");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    const char *readers[][6] = {{"report", fifo, NULL},
                                {"export", "chrome", fifo, "-o", "/dev/null", NULL},
                                {"summarize", fifo, "-o", "/dev/null", NULL}};
    for (int i = 0; i < 3; i++) {
        char *a[8] = {(char *)tu_tool("opprof")};
        for (int k = 0; readers[i][k]; k++)
            a[k + 1] = (char *)readers[i][k];
        ck_assert_int_eq(tu_code(tu_run(a, NULL, NULL, err)), 1); /* the trace cannot be read */
        e = tu_slurp(err);
        ck_assert_msg(strstr(e, "is not a regular file"), "%s: %s", readers[i][0], e);
        free(e);
    }
    char *a6[] = {(char *)tu_tool("opprof"), "run", "-o", fifo, "--", "true", NULL};
    ck_assert_int_eq(tu_code(tu_run(a6, NULL, NULL, err)), 2); /* refused before CMD */
    e = tu_slurp(err);
    ck_assert_ptr_nonnull(strstr(e, "refusing to write the trace to"));
    free(e);
    free(fifo);
    /* and `opprof run -o` never overwrites it */
    char *a5[] = {(char *)tu_tool("opprof"), "run", "-o", junk, "--", "true", NULL};
    ck_assert_int_eq(tu_code(tu_run(a5, NULL, NULL, err)), 2);
    e = tu_slurp(junk);
    ck_assert_str_eq(e, "hello, not a trace\n");
    free(e);
    free(junk), free(err);
}
END_TEST

/* A call whose real function no loaded library defines never ran: the
 * program gets its library's own "not initialised" status, not 0 (success
 * for every GPU library), with one line on stderr per entry point however
 * often it is called, and nothing is recorded (tests/progs/unresolved.c). */
START_TEST(missing_real_function_fails_the_call)
{
    static const struct {
        const char *name, *got, *said;
        int gpu; /* wrapped only where the toolkit's header was at build time */
    } calls[] = {
        {"cublasCreate_v2", "1 1",
         "cublas: cannot find the real cublasCreate_v2; returning CUBLAS_STATUS_NOT_INITIALIZED "
         "(1)",
         1},
        {"cublasLtCreate", "1 1",
         "cublaslt: cannot find the real cublasLtCreate; returning CUBLAS_STATUS_NOT_INITIALIZED "
         "(1)",
         1},
        {"cudnnCreate", "1001 1001",
         "cudnn: cannot find the real cudnnCreate; returning CUDNN_STATUS_NOT_INITIALIZED (1001)",
         1},
        {"ncclGetUniqueId", "2 2",
         "nccl: cannot find the real ncclGetUniqueId; returning ncclSystemError (2)", 1},
        {"cufftPlan1d", "7 7",
         "cufft: cannot find the real cufftPlan1d; returning CUFFT_SETUP_FAILED (7)", 1},
        {"cudaMalloc", "3 3",
         "cudart: cannot find the real cudaMalloc; returning cudaErrorInitializationError (3)", 1},
        {"cuInit", "3 3",
         "cuda: cannot find the real cuInit; returning CUDA_ERROR_NOT_INITIALIZED (3)", 1},
        {"xnn_run_operator", "1 1",
         "xnnpack: cannot find the real xnn_run_operator; returning xnn_status_uninitialized (1)",
         0},
        {"dnnl_primitive_destroy", "5 5",
         "onednn: cannot find the real dnnl_primitive_destroy; returning dnnl_runtime_error (5)",
         0},
        {"cblas_sdot", "0 0", "blas: cannot find the real cblas_sdot; returning 0", 0},
        {"cblas_sscal", "x = 1 2", "blas: cannot find the real cblas_sscal; the call did nothing",
         0},
    };
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    struct tu_env te;
    char *argv[] = {(char *)tu_build("tests/progs/unresolved"), NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, tu_preload_env(&te, trace, NULL), out, err)), 0);
    char *o = tu_slurp(out), *e = tu_slurp(err);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    int absent = 0;
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
        char line[256];
        snprintf(line, sizeof line, "%s absent\n", calls[i].name);
        if (calls[i].gpu && strstr(o, line)) { /* built without the library's header */
            absent++;
            continue;
        }
        snprintf(line, sizeof line, "%s %s\n", calls[i].name, calls[i].got);
        ck_assert_msg(strstr(o, line), "want %s in:\n%s", line, o);
        snprintf(line, sizeof line, "opprof: %s\n", calls[i].said);
        ck_assert_msg(strstr(e, line), "want %s in:\n%s", line, e);
        snprintf(line, sizeof line, "opprof: %.*s", (int)strcspn(calls[i].said, ";") + 1,
                 calls[i].said);
        ck_assert_int_eq(tu_count_lines(e, line), 1); /* said once for two calls */
        ck_assert_uint_eq(tu_count(m, calls[i].name, -1, 0, -1), 0);
    }
    if (absent)
        fprintf(stderr, "robust: %d GPU library calls not checked: built without their headers\n",
                absent);
    int said = 0; /* and nothing else missing */
    for (const char *p = e; (p = strstr(p, "cannot find the real")); p++)
        said++;
    ck_assert_int_eq(said, (int)(sizeof calls / sizeof *calls) - absent);
    opp_model_free(m);
    free(o), free(e), free(out), free(err);
}
END_TEST

/* A trace cut in the middle of a chunk still reports what came before. */
START_TEST(truncated_trace_report)
{
    char *argv[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--",
                    (char *)tu_build("tests/progs/blas_calls"), "1", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, NULL)), 0);
    char *data = tu_slurp(trace);
    ck_assert_ptr_nonnull(data);
    struct opp_model *m = tu_load(trace);
    uint64_t all = m->events;
    opp_model_free(m);
    ck_assert_uint_eq(all, 19);
    /* cut 10 bytes into the end chunk's header: everything else is whole */
    off_t size = lseek(open(trace, O_RDONLY), 0, SEEK_END);
    ck_assert_int_eq(truncate(trace, size - 30), 0);
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    char *rep[] = {(char *)tu_tool("opprof"), "report", trace, "--format", "csv", NULL};
    ck_assert_int_eq(tu_code(tu_run(rep, NULL, out, err)), 0);
    char *e = tu_slurp(err);
    ck_assert_ptr_nonnull(strstr(e, "opprof report: warning: trace cut at byte"));
    m = tu_load(trace);
    ck_assert_uint_eq(m->events, 19);
    ck_assert(!m->sum.complete);
    opp_model_free(m);
    free(e), free(out), free(err), free(data);
}
END_TEST

/* A setting the agent cannot take: one line saying what it must be, the
 * default taken, every call recorded; a good value says nothing. */
static const struct {
    const char *set, *said;
} settings[] = {
    {"OPPROF_BUFFER=abc", "OPPROF_BUFFER must be a power of two from 1024 to 16777216 (slots per "
                          "thread), ignored: abc"},
    {"OPPROF_BUFFER=3", "OPPROF_BUFFER must be a power of two from 1024 to 16777216 (slots per "
                        "thread), ignored: 3"},
    {"OPPROF_BUFFER=99999999999", "OPPROF_BUFFER must be a power of two from 1024 to 16777216 "
                                  "(slots per thread), ignored: 99999999999"},
    {"OPPROF_BUFFER=3000", "OPPROF_BUFFER must be a power of two from 1024 to 16777216 (slots "
                           "per thread), ignored: 3000"},
    {"OPPROF_BUFFER=-1024", "OPPROF_BUFFER must be a power of two from 1024 to 16777216 (slots "
                            "per thread), ignored: -1024"},
    {"OPPROF_CLOCK=x", "OPPROF_CLOCK must be monotonic (unset: the TSC), ignored: x"},
    /* a value's control bytes escaped: the message stays one line */
    {"OPPROF_CLOCK=x\nopprof: forged\x1b[2J", "OPPROF_CLOCK must be monotonic (unset: the TSC), "
                                              "ignored: x\\x0aopprof: forged\\x1b[2J"},
    {"OPPROF_PAUSED=yes", "OPPROF_PAUSED is 1 or 0, not 'yes': recording from the start"},
    {"OPPROF_PAUSED=0", NULL},
    {"OPPROF_BUFFER=1024", NULL},
    {"OPPROF_BUFFER=16777216", NULL},
    {"OPPROF_CLOCK=monotonic", NULL},
};

START_TEST(bad_setting_one_line)
{
    char *err = tu_path(dir, "err"), *prog = (char *)tu_build("tests/progs/scenarios");
    char *run[] = {
        (char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", prog, "loop", "1000", NULL};
    char *env[] = {(char *)settings[_i].set, NULL};
    ck_assert_int_eq(tu_code(tu_run(run, env, NULL, err)), 0);
    char want[600];
    snprintf(want, sizeof want, "%s%s%sopprof: trace written to %s (1000 events)\n",
             settings[_i].said ? "opprof: " : "", settings[_i].said ? settings[_i].said : "",
             settings[_i].said ? "\n" : "", trace);
    char *e = tu_slurp(err);
    ck_assert_str_eq(e, want);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->dropped, 0);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 1000);
    opp_model_free(m);
    free(e), free(err);
}
END_TEST

Suite *suite_robust(void)
{
    Suite *s = suite_create("robust");
    TCase *tc = tcase_create("failures");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, rewinding_ring_keeps_every_call);
    tcase_add_loop_test(tc, bad_setting_one_line, 0, sizeof settings / sizeof *settings);
    tcase_add_test(tc, collector_killed_mid_run);
    tcase_add_test(tc, collector_unreachable);
    tcase_add_test(tc, collector_unreachable_stderr_closed);
    tcase_add_test(tc, long_command_line_kept);
    tcase_add_test(tc, collector_backlog_full);
    tcase_add_test(tc, drops_are_counted);
    tcase_add_test(tc, hostile_clients);
    tcase_add_loop_test(tc, ring_header_rewritten, 0, 2);
    tcase_add_test(tc, repeated_calls_read_as_written);
    tcase_add_test(tc, daemon_child_closes_descriptors);
    tcase_add_test(tc, undumpable_program_closes_our_descriptor);
    tcase_add_test(tc, undumpable_program_execs);
    tcase_add_test(tc, trace_write_fails);
    tcase_add_test(tc, signal_handler_calls_counted);
    tcase_add_test(tc, ctl_after_a_thread_exited);
    tcase_add_test(tc, excess_descriptors_closed);
    tcase_add_test(tc, socket_ready_when_visible);
    tcase_add_test(tc, collector_terminated_says_so);
    tcase_add_test(tc, collector_hung_up_while_stopped);
    tcase_add_test(tc, collector_stopped_children_reaped_before_the_root_s_goodbye);
    tcase_add_test(tc, collector_stopped_while_the_last_leaves_and_another_connects);
    tcase_add_test(tc, processes_in_connect_order);
    tcase_add_test(tc, goodbye_end_within_start_and_now);
    tcase_add_test(tc, reaped_bounds_an_end_without_goodbye);
    tcase_add_test(tc, other_user_refused);
    tcase_add_test(tc, cli_errors);
    tcase_add_test(tc, truncated_trace_report);
    tcase_add_test(tc, missing_real_function_fails_the_call);
    tcase_add_test(tc, run_killed_trace_finished);
    tcase_add_test(tc, run_keeps_ignored_signals);
    suite_add_tcase(s, tc);
    /* bounded waits, timed: run with nothing beside them (tests/tests.mk),
     * in two jobs ("apart": each about 6 s of waiting) */
    TCase *timed = tcase_create("timing");
    tcase_set_tags(timed, "timing");
    tcase_add_checked_fixture(timed, setup, teardown);
    tcase_set_timeout(timed, 60);
    tcase_add_test(timed, drop_block_records_every_call);
    tcase_add_test(timed, collector_slow_at_a_goodbye);
    tcase_add_test(timed, program_closes_our_descriptor);
    tcase_add_test(timed, run_cuts_background_child);
    tcase_add_test(timed, run_forwards_termination);
    suite_add_tcase(s, timed);
    TCase *stopped = tcase_create("timing-stopped");
    tcase_set_tags(stopped, "timing apart");
    tcase_add_checked_fixture(stopped, setup, teardown);
    tcase_set_timeout(stopped, 60);
    tcase_add_test(stopped, collector_stopped_process_exit);
    tcase_add_test(stopped, collector_stopped_root_exit);
    tcase_add_test(stopped, collector_stopped_run);
    suite_add_tcase(s, stopped);
    return s;
}
