/* End to end through a process's life: threads, fork, exec, and every way
 * of dying. Each scenario's calls are known exactly (tests/progs/scenarios.c). */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "analysis/model.h"
#include "testutil.h"
#include "tool/cmds.h"
#include "util.h"

TU_TRACE_FIXTURE

/* `opprof run -o trace -- scenarios ARGS...` with the environment entries
 * env (tu_run's; NULL: none): the exit code, and the model; its stdout and
 * stderr into the files out and err when not NULL. */
static int run_scenario_io(struct opp_model **m, char *const env[], const char *out,
                           const char *err, const char *a1, const char *a2, const char *a3)
{
    char *argv[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--",
                    (char *)tu_build("tests/progs/scenarios"), (char *)a1, (char *)a2, (char *)a3, NULL};
    int code = tu_code(tu_run(argv, env, out, err));
    *m = tu_load(trace);
    ck_assert_ptr_nonnull(*m);
    ck_assert_msg((*m)->sum.complete, "trace incomplete: %s", (*m)->sum.warning);
    return code;
}

static int run_scenario_out(struct opp_model **m, const char *out, const char *a1, const char *a2,
                            const char *a3)
{
    return run_scenario_io(m, NULL, out, NULL, a1, a2, a3);
}

static int run_scenario(struct opp_model **m, const char *a1, const char *a2, const char *a3)
{
    return run_scenario_out(m, NULL, a1, a2, a3);
}

static const struct opp_thread *thread_named(const struct opp_model *m, const char *name)
{
    for (size_t i = 0; i < m->nthreads; i++)
        if (!strcmp(m->threads[i].name, name))
            return &m->threads[i];
    return NULL;
}

/* A thread made with the smallest stack (16 KiB) that uses 3,000 bytes
 * of it, as it can without us (8,000): the preload's static TLS, which
 * comes out of every thread's stack, leaves it room (9,840 bytes of TLS
 * left it less than 1,000). */
START_TEST(small_stack_thread)
{
    char *out = tu_path(dir, "out");
    char *argv[] = {(char *)tu_build("tests/progs/smallstack"), "3000", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, out, NULL)), 0);
    char *plain = tu_slurp(out);
    ck_assert_str_eq(plain, "smallstack 3000 ok\n");
    struct tu_env te;
    ck_assert_int_eq(tu_code(tu_run(argv, tu_preload_env(&te, trace, NULL), out, NULL)), 0);
    char *got = tu_slurp(out);
    ck_assert_str_eq(got, plain);
    free(plain), free(got), free(out);
}
END_TEST

START_TEST(eight_threads)
{
    struct opp_model *m;
    ck_assert_int_eq(run_scenario(&m, "threads", "8", "100"), 0);
    ck_assert_uint_eq(m->nprocs, 1);
    ck_assert_uint_eq(m->nthreads, 8);
    ck_assert_uint_eq(m->events, 8 * 100 + 28);
    for (int i = 0; i < 8; i++) {
        char name[16];
        snprintf(name, sizeof name, "worker-%d", i);
        const struct opp_thread *t = thread_named(m, name);
        ck_assert_msg(t != NULL, "no thread %s", name);
        ck_assert_uint_eq(t->nevents, 100 + (size_t)i);
        ck_assert_uint_eq(t->dropped, 0);
    }
    opp_model_free(m);
}
END_TEST

/* A thread that names itself with prctl(PR_SET_NAME) after its first
 * recorded call has the name the kernel kept (15 bytes) in the trace; the
 * program sees what prctl returns, with its errno, as it does without us:
 * errno untouched on success, EINVAL for an option that is none. */
START_TEST(prctl_renames_a_recording_thread)
{
    char *out = tu_path(dir, "out");
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "renamed", "5",
                    "prctl-renamed-thread", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, out, NULL)), 0);
    char *plain = tu_slurp(out);
    ck_assert_str_eq(plain,
                     "renamed set 0 errno 1234, bad option -1 errno 22, name prctl-renamed-t\n");
    struct opp_model *m;
    ck_assert_int_eq(run_scenario_out(&m, out, "renamed", "5", "prctl-renamed-thread"), 0);
    char *got = tu_slurp(out);
    ck_assert_str_eq(got, plain);
    ck_assert_uint_eq(m->nthreads, 1);
    ck_assert_str_eq(m->threads[0].name, "prctl-renamed-t");
    ck_assert_uint_eq(m->threads[0].nevents, 5 + 6);
    ck_assert_uint_eq(m->events, 5 + 6);
    opp_model_free(m);
    free(plain), free(got), free(out);
}
END_TEST

START_TEST(fork_without_exec)
{
    struct opp_model *m;
    ck_assert_int_eq(run_scenario(&m, "fork", "10", NULL), 0);
    ck_assert_uint_eq(m->nprocs, 2);
    const struct opp_process *parent = &m->procs[0], *child = &m->procs[1];
    ck_assert_uint_eq(child->ppid, parent->pid);
    ck_assert_uint_eq(child->parent_proc, parent->proc);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", 0, 0, 0), 21);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", 1, 0, 0), 12);
    ck_assert_uint_eq(parent->end_how, OPP_END_EXITED);
    ck_assert_uint_eq(child->end_how, OPP_END_EXITED);
    opp_model_free(m);
}
END_TEST

/* A fork child that records its first call 300 ms after the fork, its
 * own child (which calls at once) gone by then: the grandchild connects
 * before its parent (a fork child connects at its first record). The
 * child started at the fork, not at its first record, and is the
 * grandchild's parent. */
static void fork_child_late(const char *how)
{
    struct opp_model *m;
    ck_assert_int_eq(run_scenario(&m, "forklate", "300000", how), 0);
    ck_assert_uint_eq(m->nprocs, 3);
    const struct opp_process *main = &m->procs[0], *grand = &m->procs[1], *child = &m->procs[2];
    ck_assert_uint_eq(child->ppid, main->pid);
    ck_assert_uint_eq(child->parent_proc, main->proc);
    ck_assert_uint_eq(grand->ppid, child->pid);
    ck_assert_uint_eq(grand->parent_proc, child->proc);
    const struct opp_thread *t = NULL;
    for (size_t i = 0; i < m->nthreads; i++)
        if (m->threads[i].proc == 2) /* the child's: an index in procs */
            t = &m->threads[i];
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(t->nevents, 1);
    ck_assert_uint_ge(t->events[0].begin_ns, child->start_ns + 250 * 1000000ull);
    ck_assert_uint_le(child->start_ns, grand->start_ns);
    ck_assert_uint_ge(child->start_ns, main->start_ns);
    /* each ended when it exited: the grandchild before the child that
     * waited for it, the child before its parent */
    ck_assert_uint_le(grand->end_ns, child->start_ns + 250 * 1000000ull);
    ck_assert_uint_ge(child->end_ns, t->events[0].end_ns);
    ck_assert_uint_le(child->end_ns, main->end_ns);
    opp_model_free(m);
}

START_TEST(fork_child_recording_late)
{
    fork_child_late(NULL);
}
END_TEST

/* The same, each child leaving by _exit: no goodbye says when it ended,
 * its connection's close does, and its parent's reaping bounds it (the
 * collector reads the close when it comes to it). */
START_TEST(fork_child_recording_late_leaving_by__exit)
{
    fork_child_late("_exit");
}
END_TEST

/* A fork by the system call itself (Chromium's zygote and sandboxes fork
 * so) runs no atfork handler: the child finds the parent's ring, socket
 * and locks. Nothing of the parent's is touched: its calls are all there,
 * and the child is a process of its own with all of its calls, as after
 * fork(), however it leaves (exit, _exit), whether it forked by SYS_fork
 * or SYS_clone, when a thread of its records before it does, and while
 * the parent records too (each in its own ring, not both in one). The
 * program's output is what it is without us, and stderr holds only the
 * trace's line. */
static void raw_fork(const char *how, unsigned long n, unsigned long child_thread_calls)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err"), arg[32];
    snprintf(arg, sizeof arg, "%lu", n);
    /* OpenBLAS's pool has threads the child lacks: its exit would wait for them */
    char *env[] = {"OPENBLAS_NUM_THREADS=1", NULL};
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "rawfork", arg, (char *)how, NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, env, out, NULL)), 0);
    char *plain = tu_slurp(out), want[4200];
    snprintf(want, sizeof want, "rawfork child %lu\nrawfork %lu child 0\n",
             n + 2 + child_thread_calls, 2 * n + 1);
    ck_assert_str_eq(plain, want);
    struct opp_model *m;
    ck_assert_int_eq(run_scenario_io(&m, env, out, err, "rawfork", arg, how), 0);
    char *o = tu_slurp(out), *e = tu_slurp(err);
    ck_assert_str_eq(o, plain);
    snprintf(want, sizeof want, "opprof: trace written to %s (%lu events)\n", trace,
             3 * n + 3 + child_thread_calls);
    ck_assert_str_eq(e, want);
    ck_assert_uint_eq(m->nprocs, 2);
    ck_assert_uint_eq(m->dropped, 0);
    const struct opp_process *parent = &m->procs[0], *child = &m->procs[1];
    ck_assert_uint_eq(child->ppid, parent->pid);
    ck_assert_uint_eq(child->parent_proc, parent->proc);
    ck_assert_uint_eq(tu_count(m, "", 0, 0, -1), 2 * n + 1);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", 0, 0, 0), 2 * n + 1);
    ck_assert_uint_eq(tu_count(m, "", 1, 0, -1), n + 2 + child_thread_calls);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", 1, 0, 0), n + 2 + child_thread_calls);
    /* the parent's thread, the child's and, when it made one, its thread's */
    ck_assert_uint_eq(m->nthreads, child_thread_calls ? 3 : 2);
    for (size_t i = 0; i < m->nthreads; i++) {
        const struct opp_thread *t = &m->threads[i];
        ck_assert_uint_eq(t->nevents, t->proc == 0           ? 2 * n + 1
                                      : t->tid == child->pid ? n + 2
                                                             : child_thread_calls);
    }
    char buf[64];
    ck_assert_str_eq(opp_process_end_text(parent, buf, sizeof buf), "exited with status 0");
    ck_assert_str_eq(opp_process_end_text(child, buf, sizeof buf), "exited with status 0");
    opp_model_free(m);
    free(plain), free(o), free(e), free(out), free(err);
}

/* A child forked by the system call itself, which runs no atfork
 * handler, keeps a copy of its parent's connection: one that makes no
 * call and outlives its parent (10 s) holds it open. The parent is ended
 * once it is gone, whether it said goodbye (HOW stay) or left by _exit
 * (stay_exit), so `opprof run` waits neither for the child nor its
 * linger for leftover processes (2 s); the parent exited with status 0,
 * said by its goodbye or by opprof run, its reaper. */
static void raw_fork_child_holding(const char *how)
{
    char *out = tu_path(dir, "out"), said[64];
    char *env[] = {"OPENBLAS_NUM_THREADS=1", NULL};
    struct opp_model *m;
    uint64_t t0 = opp_mono_ns();
    ck_assert_int_eq(run_scenario_io(&m, env, out, NULL, "rawfork", "10", how), 0);
    uint64_t took = opp_mono_ns() - t0;
    char *o = tu_slurp(out);
    snprintf(said, sizeof said, "rawfork 10 %s ", how);
    ck_assert_int_eq(strncmp(o, said, strlen(said)), 0);
    int pid = atoi(o + strlen(said));
    ck_assert_int_gt(pid, 0);
    kill(pid, SIGKILL);
    ck_assert_msg(took < 1500000000ull, "opprof run took %.2f s", (double)took / 1e9);
    ck_assert_uint_eq(m->nprocs, 1);
    ck_assert_str_eq(opp_process_end_text(&m->procs[0], said, sizeof said), "exited with status 0");
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", 0, 0, 0), 10);
    opp_model_free(m);
    free(o), free(out);
}

/* The same child of a plain LD_PRELOAD run's first process, which leaves
 * by _exit (no goodbye, so no wait for the trace): the collector finishes
 * the trace once that process is gone, not when the child exits (10 s),
 * and says where it is. */
START_TEST(raw_fork_child_holding_the_connection_of_the_first_process)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    struct tu_env te;
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "rawfork", "10", "stay_exit", NULL};
    ck_assert_int_eq(
        tu_code(tu_run(argv, tu_preload_env(&te, trace, "OPENBLAS_NUM_THREADS=1"), out, err)), 0);
    uint64_t t0 = opp_mono_ns();
    struct opp_model *m = tu_load(trace);
    uint64_t took = opp_mono_ns() - t0;
    ck_assert_ptr_nonnull(m);
    char *o = tu_slurp(out), *e = tu_slurp(err), want[4200];
    int pid = atoi(o + strlen("rawfork 10 stay_exit "));
    ck_assert_int_gt(pid, 0);
    kill(pid, SIGKILL);
    ck_assert_msg(took < 1500000000ull, "the trace took %.2f s", (double)took / 1e9);
    snprintf(want, sizeof want, "opprof: trace written to %s\n", trace);
    ck_assert_str_eq(e, want);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(m->nprocs, 1);
    ck_assert_uint_eq(m->procs[0].end_how, OPP_END_LOST);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", 0, 0, 0), 10);
    opp_model_free(m);
    free(o), free(e), free(out), free(err);
}
END_TEST

/* A connection to the socket that never says hello (a stray client: socat,
 * a script) held by a child of a plain LD_PRELOAD run's first process
 * holds no trace open: made 1.5 s before that process's goodbye, it is no
 * other process still connected, and the goodbye finishes the trace (wait
 * 0); made just before the process leaves by _exit (wait 1), the trace
 * is finished once the process is gone and HELLO_WAIT_MS (1 s) have gone
 * by since the connection was accepted, not when the child closes it (10
 * s). The collector says so in one line. */
START_TEST(silent_connection_does_not_hold_the_trace)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    struct tu_env te;
    char *ms = _i ? "0" : "1500", *how = _i ? "_exit" : "";
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "silent", "10", ms, how, NULL};
    ck_assert_int_eq(
        tu_code(tu_run(argv, tu_preload_env(&te, trace, "OPENBLAS_NUM_THREADS=1"), out, err)), 0);
    struct opp_model *m = tu_load(trace);
    char *o = tu_slurp(out), *e = tu_slurp(err), want[4200];
    ck_assert_int_eq(strncmp(o, "silent 10 ", 10), 0);
    int pid = atoi(o + strlen("silent 10 "));
    ck_assert_int_gt(pid, 0);
    int held = kill(pid, 0) == 0; /* still holding the connection when the trace was read */
    kill(pid, SIGKILL);
    ck_assert(held);
    ck_assert_ptr_nonnull(m);
    snprintf(want, sizeof want,
             "opprof-collector: 1 connection to the socket said nothing (no hello within 1000 "
             "ms); the trace was finished without waiting for it\n"
             "opprof: trace written to %s\n",
             trace);
    ck_assert_str_eq(e, want);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(m->nprocs, 1);
    ck_assert_uint_eq(m->procs[0].end_how, _i ? OPP_END_LOST : OPP_END_EXITED);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", 0, 0, 0), 10);
    opp_model_free(m);
    free(o), free(e), free(out), free(err);
}
END_TEST

/* A process stopped between its connect and its hello (SIGSTOP, a
 * debugger) is not a silent connection however long it stays stopped: it
 * will say hello once continued, so the first process's goodbye 1.5 s on
 * leaves the trace open (no "said nothing" line), and it is finished when
 * that connection closes. */
START_TEST(stopped_before_hello_holds_the_trace)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err");
    struct tu_env te;
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "stopped", "10", "1500", NULL};
    ck_assert_int_eq(
        tu_code(tu_run(argv, tu_preload_env(&te, trace, "OPENBLAS_NUM_THREADS=1"), out, err)), 0);
    char *o = tu_slurp(out);
    ck_assert_int_eq(strncmp(o, "stopped 10 ", 11), 0);
    int pid = atoi(o + strlen("stopped 10 "));
    ck_assert_int_gt(pid, 0);
    char state = opp_proc_state(pid);
    /* still open: its collector holds the writer's lock */
    int fd = open(trace, O_RDONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    int open_still = flock(fd, LOCK_SH | LOCK_NB) < 0;
    close(fd);
    kill(pid, SIGKILL);
    ck_assert_int_eq(state, 'T');
    ck_assert_msg(open_still, "the trace was finished with a stopped process connecting");
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(m->nprocs, 1);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", 0, 0, 0), 10);
    char *e = tu_slurp(err), want[8400];
    snprintf(want, sizeof want,
             "opprof: trace is being written to %s (other processes still run)\n"
             "opprof: trace written to %s\n",
             trace, trace);
    ck_assert_str_eq(e, want);
    opp_model_free(m);
    free(o), free(e), free(out), free(err);
}
END_TEST

/* The first process of a plain LD_PRELOAD run that execs (sh -c 'exec
 * CMD', env CMD) is still that run's first process: its new image's
 * goodbye finishes the trace and waits for it, so once it has exited the
 * trace is complete, let go, and said where (it was let go later, racing
 * whoever read it next). Without /proc (a mount namespace with none, or
 * one that hides processes) the collector takes the kernel's word on
 * whether the process runs: it took the process for gone and finished
 * an empty trace while the program ran (when root may make one). */
static void exec_of_the_first_process(int no_proc)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err"), cmd[9000];
    struct tu_env te;
    char **env = tu_preload_env(&te, trace, "OPENBLAS_NUM_THREADS=1");
    const char *prog = tu_build("tests/progs/scenarios");
    snprintf(cmd, sizeof cmd, "exec '%s' paced 20 20000", prog); /* 0.4 s: the collector looks */
    char *plain[] = {"/bin/sh", "-c", cmd, NULL};
    char *unshared[] = {"unshare", "-m", "/bin/sh", "-c", cmd, NULL};
    if (no_proc) { /* the shell mounts an empty /proc, then execs the program under us */
        const char *lib = NULL;
        for (int i = 0; env[i]; i++)
            if (!strncmp(env[i], "LD_PRELOAD=", 11))
                lib = env[i] + 11;
        ck_assert_ptr_nonnull(lib);
        snprintf(cmd, sizeof cmd,
                 "mount -t tmpfs none /proc && exec env LD_PRELOAD='%s' OPPROF_OUTPUT='%s' '%s' "
                 "paced 20 20000",
                 lib, trace, prog);
        char *probe[] = {"unshare", "-m", "true", NULL};
        if (geteuid() != 0 || tu_code(tu_run(probe, NULL, NULL, NULL)) != 0) {
            fprintf(stderr, "life: without /proc not checked: unshare -m is not allowed here\n");
            free(out), free(err);
            return;
        }
        char *nopre[] = {"OPENBLAS_NUM_THREADS=1", NULL};
        env = nopre;
    }
    ck_assert_int_eq(tu_code(tu_run(no_proc ? unshared : plain, env, out, err)), 0);
    int fd = open(trace, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(flock(fd, LOCK_SH | LOCK_NB), 0); /* the collector let it go */
    close(fd);
    char *o = tu_slurp(out), *e = tu_slurp(err), want[4300];
    ck_assert_str_eq(o, "paced 20\n");
    snprintf(want, sizeof want, "opprof: trace written to %s\n", trace);
    if (no_proc) { /* an ASan collector warns of no /proc in lines of its own */
        ck_assert_int_eq(tu_count_lines(e, "opprof"), 1);
        ck_assert_ptr_nonnull(strstr(e, want));
    } else {
        ck_assert_str_eq(e, want);
    }
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 20);
    opp_model_free(m);
    free(o), free(e), free(out), free(err);
}

START_TEST(exec_of_the_first_process_finishes_the_trace)
{
    exec_of_the_first_process(0);
}
END_TEST
START_TEST(first_process_without_proc)
{
    exec_of_the_first_process(1);
}
END_TEST

/* A child of a plain LD_PRELOAD run's first process that first calls
 * after that process exited (a daemon): the trace was finished then, so
 * the child runs unprofiled, its output its own, and says why in one line
 * (it said the collector could not be reached). */
START_TEST(fork_child_calling_after_the_first_process_finished_the_trace)
{
    char *out = tu_path(dir, "out"), *err = tu_path(dir, "err"), *go = tu_path(dir, "go");
    char *done = tu_path(dir, "done"), *child = tu_path(dir, "child");
    struct tu_env te;
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "daemonlate", "10", dir, NULL};
    ck_assert_int_eq(
        tu_code(tu_run(argv, tu_preload_env(&te, trace, "OPENBLAS_NUM_THREADS=1"), out, err)), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->nprocs, 1);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 10);
    opp_model_free(m);
    close(open(go, O_CREAT | O_WRONLY, 0600));
    ck_assert_int_eq(tu_wait_file(done, 10000), 0);
    char *o = tu_slurp(out), *c = tu_slurp(child), *e = tu_slurp(err), want[4800];
    ck_assert_str_eq(o, "daemonlate 10\n");
    ck_assert_str_eq(c, "daemonlate child 11\n");
    snprintf(want, sizeof want,
             "opprof: trace written to %s\n"
             "opprof: the trace was finished before this process's first call (no process of "
             "the run was connected then), profiling off\n",
             trace);
    ck_assert_str_eq(e, want);
    free(o), free(c), free(e), free(out), free(err), free(go), free(done), free(child);
}
END_TEST

START_TEST(raw_fork_child_holding_the_parent_s_connection)
{
    raw_fork_child_holding("stay");
}
END_TEST
START_TEST(raw_fork_child_holding_the_connection_of_a_parent_that_left_by_exit_)
{
    raw_fork_child_holding("stay_exit");
}
END_TEST

START_TEST(raw_fork_child_exits) { raw_fork("exit", 10, 0); }
END_TEST
START_TEST(raw_fork_child_leaves_by_exit_) { raw_fork("_exit", 10, 0); }
END_TEST
START_TEST(raw_clone_child) { raw_fork("clone", 10, 0); }
END_TEST
START_TEST(raw_fork_child_thread_records_first) { raw_fork("thread", 10, 10 + 3); }
END_TEST
/* the parent and the child each 100,000 calls at the same time */
START_TEST(raw_fork_both_record_at_once) { raw_fork("both", 100000, 0); }
END_TEST

START_TEST(fork_and_exec)
{
    struct opp_model *m;
    ck_assert_int_eq(run_scenario(&m, "exec", "10", NULL), 0);
    /* the parent and the new image: the forked child, which records nothing
     * before exec, never connects */
    ck_assert_uint_eq(m->nprocs, 2);
    /* Numbered in connect order (see robust/processes_in_connect_order). */
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", 0, 0, 0), 10);
    const struct opp_process *img = &m->procs[1];
    ck_assert_uint_ne(img->pid, m->procs[0].pid);
    ck_assert_uint_eq(img->ppid, m->procs[0].pid);
    ck_assert_uint_eq(img->argc, 3);
    ck_assert_str_eq(img->argv[1], "loop");
    ck_assert_str_eq(img->argv[2], "14");
    ck_assert_uint_eq(img->parent_proc, m->procs[0].proc);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", 1, 0, 0), 14);
    opp_model_free(m);
}
END_TEST

/* Children that exec at once cost no connection: the trace holds the parent
 * and the K images of /bin/true (which the preload profiles too), none of
 * the forked copies of the parent in between. */
START_TEST(fork_then_exec_connects_only_the_image)
{
    enum { K = 6 };
    struct opp_model *m;
    ck_assert_int_eq(run_scenario(&m, "forkexec", "3", "6"), 0);
    ck_assert_uint_eq(m->nprocs, 1 + K);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", 0, 0, 0), 3);
    for (size_t i = 1; i < m->nprocs; i++) {
        const struct opp_process *p = &m->procs[i];
        ck_assert_uint_eq(p->argc, 1);
        ck_assert_str_eq(p->argv[0], "/bin/true");
        ck_assert_uint_eq(p->ppid, m->procs[0].pid);
        ck_assert_uint_eq(p->end_how, OPP_END_EXITED);
    }
    opp_model_free(m);
}
END_TEST

START_TEST(exec_in_place)
{
    struct opp_model *m;
    ck_assert_int_eq(run_scenario(&m, "selfexec", "10", NULL), 0);
    ck_assert_uint_eq(m->nprocs, 2);
    ck_assert_uint_eq(m->procs[0].pid, m->procs[1].pid);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", 0, 0, 0), 10);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", 1, 0, 0), 11);
    ck_assert_uint_eq(m->procs[0].end_how, OPP_END_LOST); /* no goodbye across exec */
    ck_assert_uint_eq(m->procs[1].end_how, OPP_END_EXITED);
    opp_model_free(m);
}
END_TEST

/* Children that end without goodbye say how they ended when their parent
 * reaps them: one left by _exit(3), one killed (SIGKILL) while it ran;
 * every call of theirs is there, and the report warns of nothing. */
START_TEST(children_say_how_they_ended)
{
    struct opp_model *m;
    ck_assert_int_eq(run_scenario(&m, "children", "10", NULL), 0);
    ck_assert_uint_eq(m->nprocs, 3);
    /* the children in the order they connected: either first */
    long q = tu_count(m, "cblas_ddot", 1, 0, 0) == 12 ? 1 : 2;
    const struct opp_process *parent = &m->procs[0], *quits = &m->procs[q],
                             *killed = &m->procs[3 - q];
    ck_assert_uint_eq(quits->ppid, parent->pid);
    ck_assert_uint_eq(killed->ppid, parent->pid);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", 0, 0, 0), 21);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", q, 0, 0), 12);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", 3 - q, 0, 0), 13);
    char buf[64];
    ck_assert_str_eq(opp_process_end_text(parent, buf, sizeof buf), "exited with status 0");
    ck_assert_str_eq(opp_process_end_text(quits, buf, sizeof buf), "exited with status 3");
    ck_assert_str_eq(opp_process_end_text(killed, buf, sizeof buf), "killed by signal 9 (SIGKILL)");
    opp_model_free(m);

    char *out = NULL, *err = NULL;
    char *argv[] = {"report", trace, "-f", "json", NULL};
    ck_assert_int_eq(tu_call(cmd_report, argv, dir, &out, &err), 0);
    ck_assert_str_eq(err, "");
    ck_assert_int_eq(tu_occurrences(out, "\"end\": \"exited\", \"exit_status\": 0,"), 1);
    ck_assert_int_eq(tu_occurrences(out, "\"end\": \"exited\", \"exit_status\": 3,"), 1);
    ck_assert_int_eq(tu_occurrences(out, "\"end\": \"killed\", \"signal\": 9,"), 1);
    free(out);
    free(err);
}
END_TEST

/* A SIGCHLD handler that reaps (waitpid in the handler, as servers and
 * shells do) while the program forks: the handler lands inside fork() and
 * inside our own sends, and the program runs on as it would unprofiled;
 * every child's end, told from the handler, is in the trace. */
START_TEST(children_reaped_by_a_handler)
{
    enum { K = 50 };
    struct opp_model *m;
    char *out = tu_path(dir, "out");
    ck_assert_int_eq(run_scenario_out(&m, out, "reaper", "3", "50"), 0);
    char *o = tu_slurp(out);
    ck_assert_str_eq(o, "reaper 3 reaped 50 exited 0 50\n");
    free(o), free(out);
    ck_assert_uint_eq(m->nprocs, 1 + K);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", 0, 0, 0), 3);
    char buf[64];
    for (size_t i = 1; i < m->nprocs; i++) {
        ck_assert_uint_eq(m->procs[i].ppid, m->procs[0].pid);
        ck_assert_uint_eq(tu_count(m, "cblas_ddot", (long)i, 0, 0), 1);
        ck_assert_str_eq(opp_process_end_text(&m->procs[i], buf, sizeof buf),
                         "exited with status 0");
    }
    opp_model_free(m);
}
END_TEST

/* Deaths: exit code as the shell reports it, exactly the calls made, and
 * the signal as opprof run saw it end CMD (no profiled parent reaps it). */
static void death(const char *mode, const char *n, int code, unsigned long calls)
{
    struct opp_model *m;
    ck_assert_int_eq(run_scenario(&m, mode, n, NULL), code);
    ck_assert_uint_eq(m->nprocs, 1);
    ck_assert_uint_eq(m->procs[0].end_how, OPP_END_LOST);
    ck_assert_uint_eq(m->procs[0].exit_how, OPP_EXIT_SIGNAL);
    ck_assert_uint_eq(m->procs[0].exit_code, (uint32_t)(code - 128));
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), calls);
    ck_assert_uint_eq(tu_count(m, "", -1, 0, 1), 0); /* died between calls */
    opp_model_free(m);
}

START_TEST(sigkill_mid_loop) { death("kill", "77", 137, 77); }
END_TEST
START_TEST(sigsegv_mid_loop) { death("segv", "5", 139, 5); }
END_TEST
START_TEST(abort_mid_loop) { death("abort", "6", 134, 6); }
END_TEST

/* A death at the instant a call's record is in and the ring's depth not
 * lowered yet (the program leaves its ring so, then SIGKILLs itself): the
 * call is counted once, closed, not also open. */
START_TEST(sigkill_between_a_call_s_record_and_its_leave)
{
    struct opp_model *m;
    ck_assert_int_eq(run_scenario(&m, "kill-published", "5", NULL), 137);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 6);
    ck_assert_uint_eq(tu_count(m, "", -1, 0, 1), 0);
    ck_assert_uint_eq(m->open_events, 0);
    opp_model_free(m);
}
END_TEST

/* A fault inside OpenBLAS: the call that crashed is in the trace, open. */
START_TEST(crash_inside_a_call)
{
    struct opp_model *m;
    ck_assert_int_eq(run_scenario(&m, "crash-in-call", "3", NULL), 139);
    ck_assert_uint_eq(tu_count(m, "cblas_ddot", -1, 0, 0), 3);
    ck_assert_uint_eq(tu_count(m, "cblas_dgemm", -1, 0, 1), 1);
    ck_assert_uint_eq(m->open_events, 1);
    opp_model_free(m);
    /* its steps as the trace streams: the open call ends where the process did */
    char *d = tu_steps_differ(cmd_report, dir, trace,
                              (const char *[]){"cblas_ddot", "cblas_dgemm", NULL});
    ck_assert_msg(!d, "%s", d);
}
END_TEST

/* Killed from outside at a random moment: the trace agrees with the
 * program's own counters (started before each call, done after). Every
 * call kept (OPPROF_DROP=block): a collector starved of CPU (under ASan,
 * beside the other suites) lets a ring fill, which is not what this
 * checks. */
START_TEST(sigkill_from_outside)
{
    char *cnt = tu_path(dir, "counters");
    struct tu_env te;
    char **env = tu_preload_env(&te, trace, "OPPROF_DROP=block");
    char *argv[] = {(char *)tu_build("tests/progs/scenarios"), "counted", cnt, NULL};
    int pid = tu_spawn(argv, env, NULL, NULL);
    ck_assert_int_gt(pid, 0);
    ck_assert_int_eq(tu_wait_file(cnt, 5000), 0);
    volatile long *c = NULL;
    for (int i = 0; i < 500; i++) {
        char *s = tu_slurp(cnt);
        long done = s ? ((long *)s)[1] : 0;
        free(s);
        if (done > 200000)
            break;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    ck_assert_int_eq(tu_code(tu_wait(pid)), 137);
    char *s = tu_slurp(cnt);
    c = (long *)s;
    long started = c[0], done = c[1];
    ck_assert_int_gt(done, 200000);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(m->dropped, 0);
    unsigned long completed = tu_count(m, "cblas_ddot", -1, 0, 0);
    unsigned long open = tu_count(m, "cblas_ddot", -1, 0, 1);
    ck_assert_int_le(started - done, 1);
    ck_assert_msg(completed == (unsigned long)done || completed == (unsigned long)done + 1,
                  "trace has %lu calls, program counted %ld done, %ld started", completed, done,
                  started);
    ck_assert_uint_le(completed + open, (unsigned long)started);
    opp_model_free(m);
    free(s);
    free(cnt);
}
END_TEST

/* A plain LD_PRELOAD run names its trace on stderr in one line whatever
 * the process that started the collector does at its end: coreutils'
 * timeout closes its stderr first, dash leaves with _exit, env and `sh -c
 * CMD` exec. */
START_TEST(trace_path_said_under_wrappers)
{
    char *err = tu_path(dir, "err"), cmd[4400], want[4400];
    snprintf(cmd, sizeof cmd, "%s 1; true", tu_build("tests/progs/blas_calls"));
    char *prog = (char *)tu_build("tests/progs/blas_calls");
    char *const runs[][6] = {
        {"/usr/bin/timeout", "60", prog, "1", NULL},
        {"/bin/sh", "-c", cmd, NULL},
        {"/usr/bin/env", prog, "1", NULL},
        {prog, "1", NULL},
    };
    snprintf(want, sizeof want, "opprof: trace written to %s\n", trace);
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        struct tu_env te;
        unlink(trace);
        ck_assert_int_eq(tu_code(tu_run(runs[i], tu_preload_env(&te, trace, NULL), NULL, err)), 0);
        /* dash's collector finishes once it sees the shell gone: moments */
        char *e = tu_slurp(err);
        for (int k = 0; k < 100 && !strstr(e, want); k++) {
            usleep(50000);
            free(e);
            e = tu_slurp(err);
        }
        ck_assert_msg(!strcmp(e, want), "%s: %s", runs[i][0], e);
        free(e);
        struct opp_model *m = tu_load(trace);
        ck_assert_ptr_nonnull(m);
        ck_assert_uint_eq(tu_count(m, "cblas_dgemm", -1, 0, 0), 5);
        opp_model_free(m);
    }
    free(err);
}
END_TEST

/* A plain LD_PRELOAD run whose first process execs a program that takes
 * long to reach the preload's constructor (its libraries' constructors run
 * first: here one of 400 ms): the collector waits for the new image, whose
 * environment names the run's socket, while it runs, rather than finish
 * the trace without it. Every call is there, and stderr holds only where
 * the trace went. */
START_TEST(exec_of_a_slow_starter)
{
    char *err = tu_path(dir, "err"), want[4400];
    struct tu_env te;
    char **env = tu_preload_env(&te, trace, NULL);
    snprintf(te.pre, sizeof te.pre, "LD_PRELOAD=%s %s", tu_build("libopprof.so"),
             tu_build("tests/progs/libslow_start.so"));
    char *argv[] = {"/usr/bin/env", (char *)tu_build("tests/progs/blas_calls"), "1", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, env, NULL, err)), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    char *e = tu_slurp(err);
    snprintf(want, sizeof want, "opprof: trace written to %s\n", trace);
    ck_assert_str_eq(e, want);
    ck_assert_uint_eq(m->nprocs, 2); /* env, then blas_calls with its pid */
    ck_assert_uint_eq(m->procs[0].pid, m->procs[1].pid);
    ck_assert_uint_eq(tu_count(m, "cblas_dgemm", 1, 0, 0), 5);
    ck_assert_uint_eq(m->procs[1].end_how, OPP_END_EXITED);
    opp_model_free(m);
    free(e), free(err);
}
END_TEST

Suite *suite_life(void)
{
    Suite *s = suite_create("life");
    TCase *tc = tcase_create("processes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, eight_threads);
    tcase_add_test(tc, small_stack_thread);
    tcase_add_test(tc, prctl_renames_a_recording_thread);
    tcase_add_test(tc, fork_without_exec);
    tcase_add_test(tc, fork_child_recording_late);
    tcase_add_test(tc, fork_child_recording_late_leaving_by__exit);
    tcase_add_test(tc, fork_child_calling_after_the_first_process_finished_the_trace);
    tcase_add_test(tc, exec_of_the_first_process_finishes_the_trace);
    tcase_add_test(tc, first_process_without_proc);
    tcase_add_test(tc, raw_fork_child_exits);
    tcase_add_test(tc, raw_fork_child_leaves_by_exit_);
    tcase_add_test(tc, raw_clone_child);
    tcase_add_test(tc, raw_fork_child_thread_records_first);
    tcase_add_test(tc, raw_fork_both_record_at_once);
    tcase_add_test(tc, fork_and_exec);
    tcase_add_test(tc, fork_then_exec_connects_only_the_image);
    tcase_add_test(tc, exec_in_place);
    tcase_add_test(tc, children_say_how_they_ended);
    tcase_add_test(tc, children_reaped_by_a_handler);
    tcase_add_test(tc, sigkill_mid_loop);
    tcase_add_test(tc, sigkill_between_a_call_s_record_and_its_leave);
    tcase_add_test(tc, sigsegv_mid_loop);
    tcase_add_test(tc, abort_mid_loop);
    tcase_add_test(tc, crash_inside_a_call);
    tcase_add_test(tc, sigkill_from_outside);
    tcase_add_test(tc, trace_path_said_under_wrappers);
    tcase_add_test(tc, exec_of_a_slow_starter);
    suite_add_tcase(s, tc);
    TCase *timed = tcase_create("timing");
    tcase_set_tags(timed, "timing");
    tcase_add_checked_fixture(timed, setup, teardown);
    tcase_add_test(timed, raw_fork_child_holding_the_parent_s_connection);
    tcase_add_test(timed, raw_fork_child_holding_the_connection_of_a_parent_that_left_by_exit_);
    tcase_add_test(timed, raw_fork_child_holding_the_connection_of_the_first_process);
    tcase_add_loop_test(timed, silent_connection_does_not_hold_the_trace, 0, 2);
    tcase_add_test(timed, stopped_before_hello_holds_the_trace);
    suite_add_tcase(s, timed);
    return s;
}
