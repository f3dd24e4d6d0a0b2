/* End to end: ways a program could notice the preload that test_life.c
 * and test_robust.c do not take (vfork, posix_spawn, clone with a shared
 * memory, system() beside a recording thread, an exec without our
 * environment, a small address space, close_range, quick_exit and _Exit,
 * atexit, every signal blocked, a first call on a signal's alternate
 * stack, errno). Each runs tests/progs/notice.c without us, then
 * preloaded: the same output and exit code, our one line on stderr, and
 * every call in the trace. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/model.h"
#include "testutil.h"
#include "tool/cmds.h"

TU_TRACE_FIXTURE

/* notice ARGS without us, then preloaded: both print want and exit with
 * code; the preloaded run says want_err (NULL: only where its trace went)
 * and its trace holds calls calls of cblas_ddot. */
static void same_run(const char *want, int code, const char *want_err, unsigned long calls,
                     char *a1, char *a2, char *a3, char *a4, char *a5)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    char *argv[] = {(char *)tu_build("tests/progs/notice"), a1, a2, a3, a4, a5, NULL};
    char *plain_env[] = {"OPENBLAS_NUM_THREADS=1", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, plain_env, out, err)), code);
    char *o = tu_slurp(out), *e = tu_slurp(err);
    ck_assert_str_eq(o, want);
    ck_assert_str_eq(e, "");
    free(o), free(e);

    struct tu_env te;
    char **env = tu_preload_env(&te, trace, "OPENBLAS_NUM_THREADS=1");
    ck_assert_int_eq(tu_code(tu_run(argv, env, out, err)), code);
    struct opp_model *m = tu_load(trace); /* the collector's line is written by then */
    ck_assert_ptr_nonnull(m);
    o = tu_slurp(out), e = tu_slurp(err);
    ck_assert_str_eq(o, want);
    char said[4400];
    snprintf(said, sizeof said, "%sopprof: trace written to %s\n", want_err ? want_err : "", trace);
    ck_assert_str_eq(e, said);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), calls);
    ck_assert_uint_eq(m->dropped, 0);
    opp_model_free(m);
    free(o), free(e), free(out), free(err);
}

/* A vfork child shares its parent's memory until it execs: the exec'd
 * image records as a process of its own, the parent carries on. */
START_TEST(vfork_then_exec)
{
    same_run("loop 6\nvfork child exited 0\nvfork 10\n", 0, NULL, 5 + 6 + 5, "vfork", "5", NULL,
             NULL, NULL);
}
END_TEST

START_TEST(posix_spawn_child)
{
    same_run("loop 6\nspawn child exited 0\nspawn 10\n", 0, NULL, 16, "spawn", "5", NULL, NULL,
             NULL);
}
END_TEST

START_TEST(posix_spawn_usevfork_child)
{
    same_run("loop 6\nspawn child exited 0\nspawn 10\n", 0, NULL, 16, "spawn", "5", "vfork", NULL,
             NULL);
}
END_TEST

/* clone(CLONE_VM | CLONE_VFORK): a child in the parent's memory, no
 * atfork handler run, that execs at once. */
START_TEST(clone_vm_vfork_then_exec)
{
    same_run("loop 6\nclone child exited 0\nclonevm 10\n", 0, NULL, 16, "clonevm", "5", NULL, NULL,
             NULL);
}
END_TEST

/* clone3(CLONE_VFORK) by the system call: a copy that ran no atfork
 * handler and execs by the system call. */
START_TEST(clone3_vfork_then_exec)
{
    same_run("loop 6\nclone child exited 0\nclone3 10\n", 0, NULL, 16, "clone3", "5", NULL, NULL,
             NULL);
}
END_TEST

/* system() and popen() from main while another thread records: every
 * shell's status and output as without us, every call of the thread kept. */
START_TEST(system_and_popen_beside_a_recording_thread)
{
    same_run("system 15 of 15\n", 0, NULL, 2000, "system", "2000", "5", NULL, NULL);
}
END_TEST

/* A child exec'd with an empty environment, or with ours less
 * LD_PRELOAD, runs unprofiled and unharmed. */
START_TEST(exec_with_empty_environment)
{
    same_run(
        "envcheck LD_PRELOAD unset OPPROF_SOCKET unset 3\nexecenv child exited 0\nexecenv 10\n", 0,
        NULL, 10, "execenv", "5", "empty", NULL, NULL);
}
END_TEST

/* A program whose address space is too small for our buffer (OpenBLAS
 * alone takes about 45 MB here, a ring 16 MiB more) runs as without us,
 * with one line of ours. */
START_TEST(address_space_too_small_for_a_ring)
{
    same_run("loop 5\n", 0, "opprof: cannot map a trace buffer: Cannot allocate memory\n", 0,
             "limit", "as", "56000000", "loop", "5");
}
END_TEST

/* The first process closes every descriptor above 2, our connection
 * among them, before it makes a call, and execs 150 ms later: its new
 * image is the run's, recorded, the trace finished after it (it was
 * finished as the first image's /proc environment, the one it started
 * with, lacks the socket it set). */
START_TEST(first_process_closes_our_socket_then_execs)
{
    same_run("loop 5\n", 0, NULL, 5, "closeexec", "150", "loop", "5", NULL);
}
END_TEST

/* RLIMIT_NOFILE at exactly what the program opens (3 descriptors above
 * 2): every one of its numbers is its own, our socket is past the limit.
 * A thread's buffer (a memfd) then finds no room: one line, profiling
 * off, the program unharmed. */
START_TEST(descriptor_limit_at_the_program_s_need)
{
    same_run("openn 3 of 3, 3\nopenn child exited 0\n", 0,
             "opprof: cannot create a trace buffer (memfd_create): Too many open files\n", 0,
             "limit", "nofile", "6", "openn", "3");
}
END_TEST

/* close_range(3, ~0U, 0) closes our socket too: later calls, and a fork
 * child's, are recorded on a new connection. */
START_TEST(close_range_then_calls_and_fork)
{
    same_run("child 6\ncloserange child exited 0\ncloserange 10\n", 0, NULL, 16, "closerange", "5",
             NULL, NULL, NULL);
}
END_TEST

/* quick_exit runs no destructor of ours: its exit code and its handler's
 * call are the program's, every call recorded. */
START_TEST(quick_exit_code_kept)
{
    same_run("quickexit 5\nat_quick_exit 1\n", 5, NULL, 6, "quickexit", "5", NULL, NULL, NULL);
}
END_TEST

START_TEST(_Exit_code_kept)
{
    same_run("_Exit 5\n", 6, NULL, 5, "_Exit", "5", NULL, NULL, NULL);
}
END_TEST

/* An atexit handler's calls run before our destructor: recorded too. */
START_TEST(atexit_handler_calls_recorded)
{
    same_run("main 5\natexit 6\n", 0, NULL, 11, "atexit", "5", NULL, NULL, NULL);
}
END_TEST

/* Every signal blocked in every thread: nothing of ours waits on one. */
START_TEST(all_signals_blocked)
{
    same_run("blockall 100\n", 7, NULL, 500, "blockall", "100", "4", NULL, NULL);
}
END_TEST

/* A thread whose first call is in a handler on an alternate stack 256
 * bytes larger than a handler's call takes: attaching the thread there
 * would overflow it (about 1 KiB more), so that call goes unrecorded and
 * the thread's next call attaches it. */
START_TEST(first_call_on_a_small_alternate_stack)
{
    /* main: one call, one in the handler; the thread: one in the handler
     * (not recorded), then 10 */
    same_run("altstack 11, fits, in the handler SS_ONSTACK\n", 0, NULL, 1 + 1 + 10, "altstack",
             "10", NULL, NULL, NULL);
}
END_TEST

/* The same with SS_AUTODISARM stacks: the kernel disarms the stack while
 * the handler runs on it, so sigaltstack then says SS_DISABLE, as for a
 * thread that never set one; the thread still does not attach there. */
START_TEST(first_call_on_a_small_autodisarm_alternate_stack)
{
    same_run("altstack 11, fits, in the handler SS_DISABLE\n", 0, NULL, 1 + 1 + 10, "altstack",
             "10", "autodisarm", NULL, NULL);
}
END_TEST

/* The same with each stack set by sigaltstack(&ss, &ss), the old stack
 * written over the new one's stack_t once the kernel has read it: the
 * stack set is still the one known. */
START_TEST(first_call_on_an_autodisarm_alternate_stack_set_aliased)
{
    same_run("altstack 11, fits, in the handler SS_DISABLE\n", 0, NULL, 1 + 1 + 10, "altstack",
             "10", "autodisarm", "aliased", NULL);
}
END_TEST

/* errno set before each CBLAS class, a new thread's first call and a fork
 * child's first call (its connection) is what the program left there. */
/* An alternate stack taken down past the wrapper (by the system call)
 * leaves no trace: a thread running its calls on that memory later
 * records them all. */
START_TEST(calls_on_a_taken_down_alternate_stack_recorded)
{
    same_run("altreuse 10\n", 0, NULL, 10, "altreuse", "10", NULL, NULL, NULL);
}
END_TEST

/* A thread whose cancel is pending (deferred) at its first call: our
 * sends (cancellation points) must not act on it, holding our lock: its
 * calls all run, it ends at its own pthread_testcancel, and the next
 * thread and the exit go on. */
START_TEST(cancel_pending_at_a_thread_s_first_call)
{
    same_run("cancel 5 5 cancelled\nthen 5\n", 0, NULL, 5 * 4, "cancel", "5", NULL, NULL, NULL);
}
END_TEST

/* argv run with env exits code; file then holds want, and the trace is
 * whole, with calls cblas_ddot. */
static void run_whole(char *const argv[], char *const env[], int code, const char *out,
                      const char *err, const char *file, const char *want, unsigned long calls)
{
    ck_assert_int_eq(tu_code(tu_run(argv, env, out, err)), code);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    char *o = tu_slurp(file);
    ck_assert_str_eq(o, want);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), calls);
    opp_model_free(m);
    free(o);
}

/* A program started with descriptors 0, 1 and 2 closed (a daemon) whose
 * first process starts the collector: its own opens get 0, 1 and 2, and
 * nothing of ours (the collector's ready pipe, its messages, our line
 * when a thread's buffer finds no room) takes their place or is written
 * to its file at 2: main's calls are in a whole trace. */
START_TEST(started_with_standard_descriptors_closed)
{
    char *file = tu_path(dir, "nostd.out"), *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    char pre[4200], output[4200];
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", tu_build("libopprof.so"));
    snprintf(output, sizeof output, "OPPROF_OUTPUT=%s", trace);
    char *argv[] = {"/bin/sh", "-c", "export \"$1\"; exec \"$2\" nostd 5 \"$3\" <&- >&- 2>&-",
                    "sh",      pre,  (char *)tu_build("tests/progs/notice"),
                    file,      NULL};
    char *env[] = {output, "OPPROF_SOCKET=", "OPENBLAS_NUM_THREADS=1", NULL};
    run_whole(argv, env, 0, out, err, file, "nostd 0 1 2, 5\n", 5);
    free(file), free(out), free(err);
}
END_TEST

/* The trace's calls nested in another (depth above 0), and its calls of
 * name that returned and that were open at the end. */
static void depths(unsigned long *nested, unsigned long *closed, unsigned long *open,
                   const char *name)
{
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    *nested = 0;
    for (size_t i = 0; i < m->nthreads; i++)
        for (size_t k = 0; k < m->threads[i].nevents; k++)
            *nested += m->threads[i].events[k].depth > 0;
    *closed = tu_count(m, name, -1, 0, 0);
    *open = tu_count(m, name, -1, 0, 1);
    opp_model_free(m);
}

/* A call left by siglongjmp (from the program's xerbla_, inside it) is
 * recorded, ending at the thread's next call (or at the exit, for the
 * last one), and the calls after it are not its children: every call at
 * depth 0. */
START_TEST(longjmp_out_of_calls)
{
    same_run("longjmp 10, xerbla 4\n", 0, NULL, 5 * 3, "longjmp", "5", "3", NULL, NULL);
    unsigned long nested, closed, open;
    depths(&nested, &closed, &open, "cblas_dgemm");
    ck_assert_uint_eq(closed, 4);
    ck_assert_uint_eq(open, 0);
    ck_assert_uint_eq(nested, 0);
}
END_TEST

/* The same with the calls after the jumps made from a frame deeper than
 * the one left: the jump's own stack pointer says which calls it left
 * (read where the C library's layout is known: glibc on x86-64). */
START_TEST(longjmp_out_of_calls_then_deeper_calls)
{
#if defined(__x86_64__) && defined(__GLIBC__)
    same_run("longjmp 10, xerbla 4\n", 0, NULL, 5 * 3, "longjmp", "5", "3", "deep", NULL);
    unsigned long nested, closed, open;
    depths(&nested, &closed, &open, "cblas_dgemm");
    ck_assert_uint_eq(closed, 4);
    ck_assert_uint_eq(open, 0);
    ck_assert_uint_eq(nested, 0);
#endif
}
END_TEST

/* A thread cancelled inside a call (its xerbla_ reaches
 * pthread_testcancel), its cleanup handler run: the call is recorded,
 * ending with the thread; the next thread and main go on at depth 0. */
START_TEST(cancelled_inside_a_call)
{
    same_run("cleanup inside\ncancelin 5 cancelled, xerbla 1\nthen 5\n", 0, NULL, 5 * 3, "cancelin",
             "5", NULL, NULL, NULL);
    unsigned long nested, closed, open;
    depths(&nested, &closed, &open, "cblas_dgemm");
    ck_assert_uint_eq(closed, 1);
    ck_assert_uint_eq(open, 0);
    ck_assert_uint_eq(nested, 0);
}
END_TEST

/* A seccomp filter the program sets makes our sends fail (EPERM): one
 * line says so, the new thread's calls are lost, main's all kept. */
START_TEST(seccomp_refuses_our_sends)
{
    same_run("sendperm 10\n", 0,
             "opprof: cannot send to the collector, profiling off: Operation not permitted\n",
             5 * 2, "sendperm", "5", NULL, NULL, NULL);
}
END_TEST

/* The program closes descriptor 2 and opens a file of its own there (a
 * daemon's data file), then a line of ours is due (its sends refused):
 * the line stays out of that file. A file opened for appending is a log
 * the program moved its stderr to: the line goes there. The collector's
 * line goes to the stderr the run began with. */
START_TEST(program_reuses_descriptor_2)
{
    char *data = tu_path(dir, "data");
    same_run("fd2file 10\n", 0, NULL, 5 * 2, "fd2file", "5", data, NULL, NULL);
    char *d = tu_slurp(data);
    ck_assert_str_eq(d, "data 1\ndata 2\n");
    free(d);
    same_run("fd2file 10\n", 0, NULL, 5 * 2, "fd2file", "5", data, "append", NULL);
    d = tu_slurp(data);
    ck_assert_str_eq(
        d, "data 1\nopprof: cannot send to the collector, profiling off: Operation not permitted\n"
           "data 2\n");
    free(d), free(data);
}
END_TEST

/* The program closes descriptor 2 and opens a device there, then a line
 * of ours is due (its sends refused; each write to 2 is trapped and
 * counted). A terminal takes the line; another device (a tun, an input
 * device, a watchdog: here /dev/zero) never gets it. */
START_TEST(program_puts_a_device_at_2)
{
    same_run("fd2dev 10, 0 writes to 2\n", 0, NULL, 5 * 2, "fd2dev", "5", "/dev/zero", NULL, NULL);
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    char *argv[] = {(char *)tu_build("tests/progs/notice"), "fd2dev", "5", "pty", NULL};
    struct tu_env te;
    char **env = tu_preload_env(&te, trace, "OPENBLAS_NUM_THREADS=1");
    ck_assert_int_eq(tu_code(tu_run(argv, env, out, err)), 0);
    struct opp_model *m = tu_load(trace); /* the collector is done */
    ck_assert_ptr_nonnull(m);
    opp_model_free(m);
    char *o = tu_slurp(out);
    ck_assert_str_eq(o, "fd2dev 10, 1 writes to 2\n");
    free(o), free(out), free(err);
}
END_TEST

/* The collector's line is said before the trace can be read: a reader
 * that waits for the trace (its writer's lock) finds the line said, even
 * when the program could not say goodbye (its sends refused) and so did
 * not wait for the collector. The run's stderr is a full pipe, so the
 * collector, its socket gone, is held in the write of its line: the
 * trace's lock is still held then, and the line comes once the pipe is
 * read. */
/* A run of `notice fd2dev 5` (its sends refused) whose stderr is a FIFO
 * made full (filled bytes); *rd its read end, here only. Returns once the
 * collector has finished (its socket gone). */
static void run_into_full_pipe(const char *fifo, const char *out, int *rd, size_t *filled)
{
    char sock[4200];
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    *rd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    int wr = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    ck_assert_int_ge(*rd, 0);
    ck_assert_int_ge(wr, 0);
    char fill[4096] = {0};
    *filled = 0;
    for (size_t chunk = sizeof fill; chunk; chunk = chunk > 1 ? chunk / 2 : 0) {
        ssize_t n;
        while ((n = write(wr, fill, chunk)) > 0)
            *filled += (size_t)n;
        ck_assert_int_eq(errno, EAGAIN);
    }
    close(wr);
    char *argv[] = {(char *)tu_build("tests/progs/notice"), "fd2dev", "5", "/dev/zero", NULL};
    struct tu_env te;
    char **env = tu_preload_env(&te, trace, "OPENBLAS_NUM_THREADS=1");
    int pid = tu_spawn(argv, env, out, fifo);
    ck_assert_int_gt(pid, 0);
    ck_assert_int_eq(tu_code(tu_wait(pid)), 0);
    ck_assert_int_gt(tu_collector_of(trace, sock, sizeof sock), 0);
    for (int ms = 0; access(sock, F_OK) == 0 && ms < 20000; ms += 5)
        nanosleep(&(struct timespec){0, 5000000}, NULL);
    ck_assert_msg(access(sock, F_OK) < 0, "the collector did not finish");
}

START_TEST(collector_s_line_said_before_the_trace_is_read)
{
    char *fifo = tu_path(dir, "fifo"), *out = tu_path(dir, "out");
    int rd;
    size_t filled;
    run_into_full_pipe(fifo, out, &rd, &filled);
    int t = open(trace, O_RDONLY);
    ck_assert_int_ge(t, 0);
    ck_assert_msg(flock(t, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK,
                  "the trace can be read before the collector's line is said");
    close(t);
    ck_assert_int_eq(fcntl(rd, F_SETFL, 0), 0);
    char said[4400], got[4400] = "";
    snprintf(said, sizeof said, "opprof: trace written to %s\n", trace);
    size_t have = 0;
    for (ssize_t n = 1; n > 0 && have < filled + strlen(said);) {
        char buf[4096];
        size_t want = have < filled ? filled - have : filled + strlen(said) - have;
        n = read(rd, buf, want < sizeof buf ? want : sizeof buf);
        if (n > 0 && have >= filled)
            memcpy(got + (have - filled), buf, (size_t)n);
        have += n > 0 ? (size_t)n : 0;
    }
    close(rd);
    ck_assert_str_eq(got, said);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 5 * 2);
    opp_model_free(m);
    char *o = tu_slurp(out);
    ck_assert_str_eq(o, "fd2dev 10, 0 writes to 2\n");
    free(o), free(out), free(fifo);
}
END_TEST

/* A stderr nobody reads (a full pipe, its reader alive) does not hold the
 * collector: past OPP_COLL_SAY_MS (5 s) it leaves its line unsaid, lets
 * the trace go and exits; the pipe holds only what was in it. */
START_TEST(collector_not_held_by_a_stderr_nobody_reads)
{
    char *fifo = tu_path(dir, "fifo"), *out = tu_path(dir, "out");
    int rd;
    size_t filled;
    run_into_full_pipe(fifo, out, &rd, &filled);
    int t = open(trace, O_RDONLY);
    ck_assert_int_ge(t, 0);
    int locked = 1;
    for (int ms = 0; (locked = flock(t, LOCK_SH | LOCK_NB) < 0) && ms < 20000; ms += 10)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    ck_assert_msg(!locked, "the collector held the trace 20 s on an unread stderr");
    close(t);
    size_t have = 0;
    char buf[4096];
    for (ssize_t n; (n = read(rd, buf, sizeof buf)) > 0;)
        have += (size_t)n;
    close(rd);
    ck_assert_uint_eq(have, filled);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 5 * 2);
    opp_model_free(m);
    free(out), free(fifo);
}
END_TEST

/* main returns while another thread is inside a call (its xerbla_
 * waits): that call is in the trace, open, ending with the process. */
START_TEST(exit_while_a_thread_is_inside_a_call)
{
    same_run("exitinside 5\n", 0, NULL, 5, "exitinside", "5", NULL, NULL, NULL);
    unsigned long nested, closed, open;
    depths(&nested, &closed, &open, "cblas_dgemm");
    ck_assert_uint_eq(closed, 0);
    ck_assert_uint_eq(open, 1);
    ck_assert_uint_eq(nested, 0);
}
END_TEST

/* The calls of name at indent (its depth, in spaces) on --tree's lines
 * out, -1 when no line has them. */
static long tree_calls(const char *out, const char *name, int indent)
{
    size_t n = strlen(name);
    for (const char *l = out; l && *l;) {
        int sp = 0;
        while (l[sp] == ' ')
            sp++;
        if (sp == indent && !strncmp(l + sp, name, n) && l[sp + n] == ' ')
            return strtol(l + sp + n, NULL, 10);
        l = strchr(l, '\n');
        l = l ? l + 1 : NULL;
    }
    return -1;
}

/* exitreturn 5's calls in the pass's tree, with nothing said: the
 * dgemm's 6 calls its children, the calls after it not. */
static void late_calls_tree(void)
{
    char *out, *err;
    char *tv[] = {"report", trace, "--tree", NULL};
    ck_assert_int_eq(tu_call(cmd_report, tv, dir, &out, &err), 0);
    ck_assert_str_eq(err, "");
    ck_assert_int_eq(tree_calls(out, "cblas_dgemm", 0), 1);
    ck_assert_int_eq(tree_calls(out, "cblas_ddot", 2), 6);
    ck_assert_int_eq(tree_calls(out, "cblas_ddot", 0), 5 + 1 + 1 + 7 + 8);
    free(out), free(err);
}

/* The same call returns after the goodbye, before the process is gone
 * (a child: a library's destructor that runs after the preload's waits
 * for it), with 6 calls made inside it first and 7 after it, one call of
 * that destructor's and 8 of a thread it starts: every call is kept as
 * its thread made it,
 * the dgemm returned (not open), and the child ended when it was last
 * seen doing anything, its last call's end: no call ends after its
 * process (the trace goes on: the first process is still there). */
START_TEST(calls_after_the_goodbye_end_before_the_process)
{
    same_run("exitreturn 5, child 0\n", 0, NULL, 5 + 1 + 1 + 6 + 7 + 8, "exitreturn", "5",
             (char *)tu_build("tests/progs/liblate_plugin.so"), NULL, NULL);
    unsigned long nested, closed, open;
    depths(&nested, &closed, &open, "cblas_dgemm");
    ck_assert_uint_eq(closed, 1);
    ck_assert_uint_eq(open, 0);
    ck_assert_uint_eq(nested, 6);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->nprocs, 2);
    ck_assert_uint_eq(m->open_events, 0);
    uint64_t last[2] = {0, 0};
    unsigned long calls[2] = {0, 0};
    for (size_t i = 0; i < m->nthreads; i++)
        for (size_t k = 0; k < m->threads[i].nevents; k++) {
            uint32_t p = m->threads[i].proc;
            uint64_t end = m->threads[i].events[k].end_ns;
            last[p] = end > last[p] ? end : last[p];
            calls[p]++;
        }
    ck_assert_uint_eq(calls[0], 5);
    ck_assert_uint_eq(calls[1], 1 + 1 + 1 + 6 + 7 + 8);
    for (int p = 0; p < 2; p++) {
        ck_assert_uint_eq(m->procs[p].end_how, OPP_END_EXITED);
        ck_assert_uint_le(last[p], m->procs[p].end_ns);
    }
    ck_assert_uint_eq(m->procs[1].end_ns, last[1]);
    opp_model_free(m);
    late_calls_tree();
}
END_TEST

/* The same in summary mode: the child's calls are added up when it is
 * gone, those after its goodbye with them. */
START_TEST(calls_after_the_goodbye_summed)
{
    char *out = tu_path(dir, "out");
    char *argv[] = {(char *)tu_build("tests/progs/notice"), "exitreturn", "5",
                    (char *)tu_build("tests/progs/liblate_plugin.so"), NULL};
    const char *extra[] = {"OPENBLAS_NUM_THREADS=1", "OPPROF_MODE=summary", NULL};
    struct tu_env te;
    ck_assert_int_eq(tu_code(tu_run(argv, tu_preload_env_list(&te, trace, extra), out, NULL)), 0);
    char *o = tu_slurp(out);
    ck_assert_str_eq(o, "exitreturn 5, child 0\n");
    late_calls_tree();
    free(o), free(out);
}
END_TEST

/* A process whose main thread left by pthread_exit runs on (its other
 * threads) while /proc says its leader is a zombie: a thread's exit(0),
 * then, after its goodbye, a new thread's 6 calls (from exit's last
 * flush). The collector took the zombie leader for the process gone and
 * ended it at its goodbye: those calls were lost. All 5 + 5 + 6 in, the
 * child exited no earlier than its last call. */
START_TEST(calls_after_the_goodbye_of_a_process_whose_main_thread_left)
{
    same_run("leaderexit 5, child 0\n", 0, NULL, 5 + 5 + 6, "leaderexit", "5", NULL, NULL, NULL);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->nprocs, 2);
    uint64_t last = 0;
    for (size_t i = 0; i < m->nthreads; i++)
        for (size_t k = 0; k < m->threads[i].nevents; k++)
            if (m->threads[i].proc == 1 && m->threads[i].events[k].end_ns > last)
                last = m->threads[i].events[k].end_ns;
    ck_assert_uint_eq(m->procs[1].end_how, OPP_END_EXITED);
    ck_assert_uint_le(last, m->procs[1].end_ns);
    opp_model_free(m);
}
END_TEST

/* A seccomp filter that traps sendmsg (SIGSYS) whose handler calls
 * exit(): the program sees our send (nothing can hide a trapped system
 * call: without us it prints "sigsys 5" and exits 0), but its exit runs
 * inside our send and must not wait on the lock that send holds: exit
 * code 7, main's calls in the trace. */
START_TEST(exit_from_a_handler_inside_our_send)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    char *argv[] = {(char *)tu_build("tests/progs/notice"), "sigsys", "5", NULL};
    struct tu_env te;
    char **env = tu_preload_env(&te, trace, "OPENBLAS_NUM_THREADS=1");
    run_whole(argv, env, 7, out, err, out, "sigsys\n", 5);
    free(out), free(err);
}
END_TEST

/* notice MODE 5 under the preload: its own output want, calls of
 * cblas_ddot in the whole trace, and on stderr our line, then the
 * trace's. */
static void run_said(const char *mode, const char *want, unsigned long calls, const char *line)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    char *argv[] = {(char *)tu_build("tests/progs/notice"), (char *)mode, "5", NULL};
    struct tu_env te;
    char **env = tu_preload_env(&te, trace, "OPENBLAS_NUM_THREADS=1");
    run_whole(argv, env, 0, out, err, out, want, calls);
    char *e = tu_slurp(err), said[4400];
    snprintf(said, sizeof said, "%s\nopprof: trace written to %s\n", line, trace);
    ck_assert_str_eq(e, said);
    free(e), free(out), free(err);
}

/* The same filter's SIGSYS handler siglongjmps instead (sigsetjmp
 * without the mask) out of a thread's first call, from inside our send of
 * its buffer: our lock is let go (else the exit hangs on it), the buffer's
 * descriptor closed, the signals we kept waiting let through again, and
 * profiling is off, said (our next send would trap again). Without us:
 * "thread 10, usr1 open, sigsys 0, new fds 0"; the program sees the one trapped
 * call, nothing else: main's calls are in the trace. */
START_TEST(jump_from_a_handler_out_of_our_send)
{
    run_said("sigsysjmp", "sigsysjmp 10, thread 5, usr1 open, sigsys 1, new fds 0\n", 10,
             "opprof: a signal handler jumped out of our send to the collector (a seccomp "
             "filter's SIGSYS?), profiling off");
}
END_TEST

/* The same jump, made from inside our connecting again: the program
 * closed every descriptor above 2, our connection among them, so the
 * thread's first send connects anew, and its first message there is
 * trapped. The new connection's socket is closed with the rest, not left
 * open in the program. Without us: "thread 10, sigsys 0, new fds 0". */
START_TEST(jump_from_a_handler_out_of_our_reconnect)
{
    run_said("sigsysreconn", "sigsysreconn 10, thread 5, sigsys 1, new fds 0\n", 10,
             "opprof: a signal handler jumped out of our send to the collector (a seccomp "
             "filter's SIGSYS?), profiling off");
}
END_TEST

/* The same filter's SIGSYS handler returns instead: the trapped send,
 * never made, gives back the system call's number where its count goes,
 * which is no count: profiling is off, said, and nothing else is sent
 * (before, the "rest" of a message was sent from past its end: the
 * collector read garbage). The thread's first call hands its buffer
 * over, so its calls are not recorded; main's are. Without us:
 * "thread 5, sigsys 0, fd none". */
START_TEST(handler_returns_from_our_trapped_send)
{
    run_said("sigsysret", "sigsysret 10, thread 5, sigsys 1, fd open\n", 10,
             "opprof: cannot send to the collector, profiling off: Function not implemented");
}
END_TEST

/* The same, the handler running on the thread's alternate stack, which
 * lies just above the thread's own stack, and jumping within itself
 * before it opens its descriptor and returns: that jump leaves nothing of
 * ours, which is then not undone under the thread's setup (before: the
 * buffer's descriptor closed at the jump, then again as the setup ended,
 * by then the handler's). */
START_TEST(jump_within_a_handler_above_our_send)
{
    run_said("sigsysalt", "sigsysalt 10, thread 5, sigsys 1, fd open\n", 10,
             "opprof: cannot send to the collector, profiling off: Function not implemented");
}
END_TEST

/* A signal raised inside a call (its xerbla_ raises SIGUSR1) whose
 * handler, on the thread's alternate stack lying above the thread's own,
 * jumps within itself and returns: the call was not left, and is
 * recorded once, when it returns. */
START_TEST(jump_within_a_handler_above_a_call)
{
    same_run("altraise 5, thread 5, usr1 1, xerbla 1\n", 0, NULL, 10, "altraise", "5", NULL, NULL,
             NULL);
    unsigned long nested, closed, open;
    depths(&nested, &closed, &open, "cblas_dgemm");
    ck_assert_uint_eq(closed, 1);
    ck_assert_uint_eq(open, 0);
    ck_assert_uint_eq(nested, 0);
}
END_TEST

/* A filter that traps memfd_create, whose SIGSYS handler returns: the
 * call, not made, leaves its number (319) where the descriptor goes, and
 * the program's descriptor 319 is neither sized nor closed by us; the
 * thread is not recorded, said. Without us: "sigsys 0, fd open". */
START_TEST(handler_returns_from_our_trapped_memfd)
{
    run_said("memfdret", "memfdret 5, sigsys 1, fd open\n", 5,
             "opprof: cannot create a trace buffer (memfd_create): Function not implemented");
}
END_TEST

/* notice MODE 5 under the preload: its own output want, calls of
 * cblas_ddot in the whole trace, and on stderr only the trace's line. */
static void run_quiet(const char *mode, const char *want, unsigned long calls,
                      const char *const *extra)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    char *argv[] = {(char *)tu_build("tests/progs/notice"), (char *)mode, "5", NULL};
    struct tu_env te;
    const char *plain[] = {"OPENBLAS_NUM_THREADS=1", NULL};
    char **env = tu_preload_env_list(&te, trace, extra ? extra : plain);
    run_whole(argv, env, 0, out, err, out, want, calls);
    char *e = tu_slurp(err), said[4400];
    snprintf(said, sizeof said, "opprof: trace written to %s\n", trace);
    ck_assert_str_eq(e, said);
    free(e), free(out), free(err);
}

/* A filter that traps sigprocmask(SIG_BLOCK, ...), whose SIGSYS handler
 * siglongjmps out of a thread's first call from inside our first system
 * call there, the one that holds its signals back: cancellation was not
 * turned off yet (it was, and stayed off for good), so the thread's is
 * on. Our later tries, trapped, their handler returning, hold nothing:
 * the thread attaches then, every call is recorded. Without us:
 * "thread 10, cancel on". */
START_TEST(jump_from_a_handler_out_of_our_signal_hold)
{
    run_quiet("sigsysmask", "sigsysmask 10, thread 5, cancel on\n", 15, NULL);
}
END_TEST

/* A filter that traps write(2, ...), whose SIGSYS handler siglongjmps
 * (sigsetjmp without the mask) out of our line on stderr (a call of an
 * entry point no loaded library defines: xnn_run_operator): the thread's
 * cancellation is on again and its mask as it was (SIGPIPE, which the
 * line holds, let through again); the line is lost, profiling goes on.
 * Without us nothing calls xnn_run_operator: "sigsys 0, cancel on, mask
 * kept". */
START_TEST(jump_from_a_handler_out_of_our_line)
{
    run_quiet("sayjmp", "sayjmp 10, sigsys 1, cancel on, mask kept\n", 10, NULL);
}
END_TEST

/* OPPROF_DROP=block with the collector stopped (the program stops it):
 * a loop's calls fill the thread's ring, and the next one waits for room,
 * where a filter traps its sched_yield, whose SIGSYS handler siglongjmps
 * out of the loop (sigsetjmp without the mask). The wait put cancellation
 * back (it stayed off), and the jump, made inside the handler, records the
 * call it leaves without waiting again (it waited there, its trapped
 * yield killing the program: SIGSYS is blocked in its handler): that
 * record, finding the ring full, is counted as dropped. Every other call
 * is in the trace. Without us: "loop 100000, cancel on, mask kept". */
START_TEST(jump_from_a_handler_out_of_our_wait_for_room)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    char *argv[] = {(char *)tu_build("tests/progs/notice"), "waitjmp", "5", NULL};
    struct tu_env te;
    const char *extra[] = {"OPENBLAS_NUM_THREADS=1", "OPPROF_DROP=block", "OPPROF_BUFFER=1024",
                           NULL};
    char **env = tu_preload_env_list(&te, trace, extra);
    int code = tu_code(tu_run(argv, env, out, err));
    int collector = code ? tu_collector_of(trace, NULL, 0) : -1;
    if (collector > 0) /* the program died with it stopped */
        kill(collector, SIGCONT);
    ck_assert_int_eq(code, 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    char *o = tu_slurp(out), want[200];
    long loop = 0;
    ck_assert_int_eq(sscanf(o, "waitjmp 10, loop %ld,", &loop), 1);
    ck_assert_int_gt(loop, 0);
    ck_assert_int_lt(loop, 100000); /* the ring's 1024 slots filled */
    snprintf(want, sizeof want, "waitjmp 10, loop %ld, cancel on, mask kept\n", loop);
    ck_assert_str_eq(o, want);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 10 + (unsigned long)loop);
    ck_assert_uint_eq(m->dropped, 1);
    opp_model_free(m);
    free(o), free(out), free(err);
}
END_TEST

/* The same wait for room, whose trapped yield's SIGSYS handler makes a call
 * of its own (and lets the collector go on) and returns: that call came
 * inside our publishing of the loop's call, and is dropped, for that reason
 * and none other. The run and the report say so: not "buffers full", whose
 * advice, a larger OPPROF_BUFFER, would not keep it. Every other call is
 * in the trace. Without us: "loop 100000, handler 0". */
START_TEST(call_from_a_handler_inside_our_publishing_dropped_as_interrupted)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err"), *rerr = tu_path(dir, "rerr");
    char *argv[] = {(char *)tu_build("tests/progs/notice"), "waitcall", "5", NULL};
    struct tu_env te;
    const char *extra[] = {"OPENBLAS_NUM_THREADS=1", "OPPROF_DROP=block", "OPPROF_BUFFER=1024",
                           NULL};
    char **env = tu_preload_env_list(&te, trace, extra);
    int code = tu_code(tu_run(argv, env, out, err));
    int collector = code ? tu_collector_of(trace, NULL, 0) : -1;
    if (collector > 0) /* the program died with it stopped */
        kill(collector, SIGCONT);
    ck_assert_int_eq(code, 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    char *o = tu_slurp(out), *e = tu_slurp(err), want[1000];
    long loop = 0;
    ck_assert_int_eq(sscanf(o, "waitcall %*g, loop %ld,", &loop), 1);
    ck_assert_int_gt(loop, 0);
    ck_assert_int_lt(loop, 100000); /* the ring's 1024 slots filled */
    snprintf(want, sizeof want, "waitcall %ld, loop %ld, handler 1\n", 10 + loop, loop);
    ck_assert_str_eq(o, want);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 10 + (unsigned long)loop);
    ck_assert_uint_eq(m->dropped, 1);
    ck_assert_uint_eq(m->interrupted, 1);
    snprintf(want, sizeof want,
             "opprof: trace written to %s\n"
             "opprof: 1 records dropped (a signal handler interrupted opprof recording a call); "
             "trace has %ld; not for want of room: a larger OPPROF_BUFFER would not keep them\n",
             trace, 10 + loop);
    ck_assert_str_eq(e, want);
    char *report[] = {(char *)tu_tool("opprof"), "report", trace, NULL};
    ck_assert_int_eq(tu_code(tu_run(report, NULL, NULL, rerr)), 0);
    char *r = tu_slurp(rerr);
    ck_assert_str_eq(r, "opprof report: warning: 1 record was dropped (a signal handler "
                        "interrupted opprof recording a call): not for want of room: a larger "
                        "OPPROF_BUFFER would not keep them\n");
    opp_model_free(m);
    free(r), free(o), free(e), free(out), free(err), free(rerr);
}
END_TEST

/* A filter that traps close() of a high descriptor, whose SIGSYS handler,
 * in a fork child, siglongjmps out of fork() from inside our close of the
 * parent's socket there (the child's atfork handler): the child's
 * cancellation is on (it stayed off), and the child records as a process
 * of its own (it spoke on its parent's connection, whose goodbye then
 * ended the parent's: "the collector is gone"). Without us nothing
 * closes such a number: the same output. */
START_TEST(jump_from_a_handler_out_of_our_close_after_fork)
{
    same_run("forkjmp child exited 0\nforkjmp 10\n", 0, NULL, 16, "forkjmp", "5", NULL, NULL, NULL);
}
END_TEST

/* The same filter in the child of a fork made by the system call (no
 * atfork handler runs: the child's first call runs our hook, which closes
 * the parent's socket), whose SIGSYS handler returns: the hook held every
 * signal, SIGSYS too, and the kernel killed the child with it. */
START_TEST(handler_returns_from_our_close_after_a_raw_fork)
{
    same_run("forkjmp child exited 0\nforkjmp 10\n", 0, NULL, 16, "forkjmp", "5", "raw", "ret",
             NULL);
}
END_TEST

/* The same, the handler jumping out of fork() from inside our hook: the
 * child's next look runs the hook again (its gate, left busy, held every
 * later call of the child for ever), and it records as itself. */
START_TEST(jump_from_a_handler_out_of_our_close_after_a_raw_fork)
{
    same_run("forkjmp child exited 0\nforkjmp 10\n", 0, NULL, 16, "forkjmp", "5", "raw", "jmp",
             NULL);
}
END_TEST

/* With code stacks (OPPROF_STACKS), a filter that traps sendmsg, whose
 * SIGSYS handler siglongjmps out of a call from inside our send of its
 * new code stack's id, which holds the stacks' table locked: the lock is
 * let go (the next new stack, the calls after the jump, waited on it for
 * ever), profiling off, said. Without us: "stackjmp 15, sigsys 0". */
START_TEST(jump_from_a_handler_out_of_our_new_stack_id)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    char *argv[] = {(char *)tu_build("tests/progs/notice"), "stackjmp", "5", NULL};
    struct tu_env te;
    const char *extra[] = {"OPENBLAS_NUM_THREADS=1", "OPPROF_STACKS=4", NULL};
    char **env = tu_preload_env_list(&te, trace, extra);
    run_whole(argv, env, 0, out, err, out, "stackjmp 10, sigsys 1\n", 10);
    char *e = tu_slurp(err), said[4400];
    snprintf(said, sizeof said,
             "opprof: a signal handler jumped out of our send to the collector (a seccomp "
             "filter's SIGSYS?), profiling off\nopprof: trace written to %s\n",
             trace);
    ck_assert_str_eq(e, said);
    free(e), free(out), free(err);
}
END_TEST

/* A handler that jumps out of our publishing of a call's record (a
 * SIGSEGV here, at a known instant: the program made our ring's slots
 * read-only, so the record's first write faults; its handler makes them
 * writable and siglongjmps back): the call stays in flight and is
 * recorded as left, ending at the jump; nothing lost, nothing dropped,
 * every call at depth 0. Without us: "pubjmp 11, segv 0". */
START_TEST(jump_from_a_handler_out_of_our_record)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    char *argv[] = {(char *)tu_build("tests/progs/notice"), "pubjmp", "5", NULL};
    struct tu_env te;
    char **env = tu_preload_env(&te, trace, "OPENBLAS_NUM_THREADS=1");
    run_whole(argv, env, 0, out, err, out, "pubjmp 10, segv 1\n", 11);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->dropped, 0);
    opp_model_free(m);
    unsigned long nested, closed, open;
    depths(&nested, &closed, &open, "cblas_ddot");
    ck_assert_uint_eq(closed, 11);
    ck_assert_uint_eq(open, 0);
    ck_assert_uint_eq(nested, 0);
    free(out), free(err);
}
END_TEST

/* A SIGALRM every 20 us whose handler siglongjmps out of whatever it
 * interrupts, 2000 times, from the thread's first call on: attaching the
 * thread and our sends wait for it (else the thread never records, or
 * our lock stays held), and a jump out of a record being published leaves
 * nothing behind (else every later call is dropped). Every call that
 * returned is in the trace, and at most the calls entered (those jumped
 * out of are recorded, ending at the next call); nothing dropped; and
 * the thread can still be cancelled (a jump as our send let the signals
 * through again left cancellation off for good). */
START_TEST(timer_siglongjmps_out_of_calls)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    char *argv[] = {(char *)tu_build("tests/progs/notice"), "timerjmp", "2000", "1000", NULL};
    struct tu_env te;
    /* every call kept: a collector starved of CPU beside the other suites
     * lets a ring fill, which is not what this checks */
    const char *extra[] = {"OPENBLAS_NUM_THREADS=1", "OPPROF_DROP=block", NULL};
    char **env = tu_preload_env_list(&te, trace, extra);
    ck_assert_int_eq(tu_code(tu_run(argv, env, out, err)), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    char *o = tu_slurp(out);
    long jumps = 0, done = 0, entered = 0;
    char cancel[4] = "";
    ck_assert_int_eq(sscanf(o, "timerjmp %ld %ld %ld, cancel %3s", &jumps, &done, &entered, cancel),
                     4);
    ck_assert_int_eq(jumps, 2000);
    ck_assert_str_eq(cancel, "on"); /* our sends put it back before a signal could jump */
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(m->dropped, 0);
    unsigned long n = tu_count(m, "cblas_ddot", -1, 0, 0);
    ck_assert_uint_ge(n, (unsigned long)done);
    ck_assert_uint_le(n, (unsigned long)entered);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 1), 0);
    opp_model_free(m);
    free(o), free(out), free(err);
}
END_TEST

START_TEST(errno_across_calls)
{
    same_run("errno 5: 1001 1002 1003 1004 1005 thread 4321 fork 1006 child 0\n", 0, NULL, 7,
             "errno", "5", NULL, NULL, NULL);
}
END_TEST

Suite *suite_notice(void)
{
    Suite *s = suite_create("notice");
    TCase *tc = tcase_create("notice");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, vfork_then_exec);
    tcase_add_test(tc, posix_spawn_child);
    tcase_add_test(tc, posix_spawn_usevfork_child);
    tcase_add_test(tc, clone_vm_vfork_then_exec);
    tcase_add_test(tc, clone3_vfork_then_exec);
    tcase_add_test(tc, system_and_popen_beside_a_recording_thread);
    tcase_add_test(tc, exec_with_empty_environment);
    tcase_add_test(tc, address_space_too_small_for_a_ring);
    tcase_add_test(tc, descriptor_limit_at_the_program_s_need);
    tcase_add_test(tc, first_process_closes_our_socket_then_execs);
    tcase_add_test(tc, close_range_then_calls_and_fork);
    tcase_add_test(tc, quick_exit_code_kept);
    tcase_add_test(tc, _Exit_code_kept);
    tcase_add_test(tc, atexit_handler_calls_recorded);
    tcase_add_test(tc, all_signals_blocked);
    tcase_add_test(tc, first_call_on_a_small_alternate_stack);
    tcase_add_test(tc, first_call_on_a_small_autodisarm_alternate_stack);
    tcase_add_test(tc, first_call_on_an_autodisarm_alternate_stack_set_aliased);
    tcase_add_test(tc, calls_on_a_taken_down_alternate_stack_recorded);
    tcase_add_test(tc, errno_across_calls);
    tcase_add_test(tc, cancel_pending_at_a_thread_s_first_call);
    tcase_add_test(tc, started_with_standard_descriptors_closed);
    tcase_add_test(tc, longjmp_out_of_calls);
    tcase_add_test(tc, longjmp_out_of_calls_then_deeper_calls);
    tcase_add_test(tc, cancelled_inside_a_call);
    tcase_add_test(tc, seccomp_refuses_our_sends);
    tcase_add_test(tc, program_reuses_descriptor_2);
    tcase_add_test(tc, program_puts_a_device_at_2);
    tcase_add_test(tc, collector_s_line_said_before_the_trace_is_read);
    tcase_add_test(tc, collector_not_held_by_a_stderr_nobody_reads);
    tcase_add_test(tc, exit_while_a_thread_is_inside_a_call);
    tcase_add_test(tc, calls_after_the_goodbye_end_before_the_process);
    tcase_add_test(tc, calls_after_the_goodbye_summed);
    tcase_add_test(tc, calls_after_the_goodbye_of_a_process_whose_main_thread_left);
    tcase_add_test(tc, exit_from_a_handler_inside_our_send);
    tcase_add_test(tc, jump_from_a_handler_out_of_our_send);
    tcase_add_test(tc, jump_from_a_handler_out_of_our_reconnect);
    tcase_add_test(tc, handler_returns_from_our_trapped_send);
    tcase_add_test(tc, jump_within_a_handler_above_our_send);
    tcase_add_test(tc, jump_from_a_handler_out_of_our_record);
    tcase_add_test(tc, jump_within_a_handler_above_a_call);
    tcase_add_test(tc, handler_returns_from_our_trapped_memfd);
    tcase_add_test(tc, jump_from_a_handler_out_of_our_signal_hold);
    tcase_add_test(tc, jump_from_a_handler_out_of_our_line);
    tcase_add_test(tc, jump_from_a_handler_out_of_our_wait_for_room);
    tcase_add_test(tc, call_from_a_handler_inside_our_publishing_dropped_as_interrupted);
    tcase_add_test(tc, jump_from_a_handler_out_of_our_close_after_fork);
    tcase_add_test(tc, handler_returns_from_our_close_after_a_raw_fork);
    tcase_add_test(tc, jump_from_a_handler_out_of_our_close_after_a_raw_fork);
    tcase_add_test(tc, jump_from_a_handler_out_of_our_new_stack_id);
    tcase_add_test(tc, timer_siglongjmps_out_of_calls);
    suite_add_tcase(s, tc);
    return s;
}
