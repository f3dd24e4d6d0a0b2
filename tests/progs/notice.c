/* Ways a program could notice a profiler, each with a known number of
 * BLAS calls and a printed result to compare with a run without one:
 * notice MODE [ARGS].
 *   loop N             N x cblas_ddot(n=1), prints the sum
 *   vfork N            N calls, vfork, the child execs "notice loop N+1"; prints its status
 *   spawn N [vfork]    N calls, posix_spawn "notice loop N+1" (POSIX_SPAWN_USEVFORK with vfork)
 *   clonevm N          N calls, clone(CLONE_VM|CLONE_VFORK) whose child execs "notice loop N+1"
 *   clone3 N           N calls, clone3(CLONE_VFORK) by the system call (no atfork handler
 *                      runs), whose child execs "notice loop N+1" by the system call
 *   system N K         a thread makes N calls while main runs system() and popen() K times each
 *   execenv N HOW      N calls, then fork: the child execs "notice envcheck" with an empty
 *                      environment (HOW empty) or this one less LD_PRELOAD (HOW nopreload)
 *   envcheck           prints whether LD_PRELOAD, OPPROF_SOCKET are set, 3 calls
 *   limit RES V MODE.. sets RLIMIT_RES (as, data, nofile) to V, closes every descriptor
 *                      above 2, then execs "notice MODE.."
 *   closeexec MS MODE.. closes every descriptor above 2, sleeps MS milliseconds, then
 *                      execs "notice MODE.."
 *   openn K            opens /dev/null K times, prints how many it could, 3 calls; a thread
 *                      3 calls; a child 2 calls
 *   fds N              prints the descriptors above 2 open at start, N calls, the same after
 *   closerange N       N calls, close_range(3, ~0U, 0), N calls, fork: the child N+1 calls;
 *                      prints the sums
 *   quickexit N        N calls, quick_exit(5) (an at_quick_exit handler makes one call)
 *   _Exit N            N calls, _Exit(6)
 *   atexit N           N calls; an atexit handler makes N+1 calls and prints the sum
 *   sigpipe N DIR      N calls, creates DIR/halfway, waits for DIR/go, N on a new thread,
 *                      N more; SIGPIPE left at its default (kill the process)
 *   blockall N T       all signals blocked, T threads of N calls each; exits 7
 *   altstack N [autodisarm [aliased]]
 *                      measures the stack a SIGUSR1 handler's call takes on a thread that
 *                      called before; a new thread's first call is in that handler on an
 *                      alternate stack 256 bytes larger, then N calls; prints their sum,
 *                      whether the handler's stack overflowed and what sigaltstack said in
 *                      the handler (autodisarm: the stacks set with SS_AUTODISARM, which
 *                      the kernel disarms while a handler runs on one; aliased: each set
 *                      with the stack_t that also takes the old stack, as the kernel allows)
 *   altreuse N         a new thread sets an alternate stack (no flags) in memory it then
 *                      takes down by the system call (as a runtime may, past libc), and
 *                      makes N calls running on that memory as its stack (a ucontext);
 *                      prints their sum
 *   cancel N           N calls; a thread with a cancel pending (deferred) before its first
 *                      call makes N calls, then reaches pthread_testcancel; a new thread N
 *                      calls, main N more; prints the cancelled thread's sum and whether it
 *                      ended cancelled
 *   nostd N FILE       started with descriptors 0, 1 and 2 closed (a daemon): N calls,
 *                      opens /dev/null twice and FILE, sets RLIMIT_NOFILE to 3 (a new
 *                      thread's buffer then finds no room), a thread N calls; writes the
 *                      descriptors' numbers and the sum to FILE
 *   longjmp N K [deep] N calls; K times a cblas_dgemm with a bad argument, whose xerbla_
 *                      (this program's) siglongjmps out of it; N calls (deep: from a frame
 *                      8 KiB deeper than the dgemm's); a thread N calls; one more left the
 *                      same way, no call after it; prints the sum and how often xerbla_ ran
 *   cancelin N         a thread with a cancel pending makes N calls, then a cblas_dgemm
 *                      with a bad argument whose xerbla_ reaches pthread_testcancel (a
 *                      cleanup handler prints); a new thread N calls, main N; prints the sums
 *   sendperm N         N calls; a seccomp filter makes sendmsg and sendto fail with EPERM
 *                      (its own writes go on); a thread N calls; main N more; prints the sum
 *   fd2file N FILE [append]  N calls; closes 2 and opens FILE there (for appending: a log),
 *                      writes "data 1" to it; then as sendperm (our sends refused: a line
 *                      of ours is due); writes "data 2"; prints the sum
 *   fd2dev N DEV       N calls; closes 2 and opens the device DEV there ("pty": a terminal's
 *                      slave side); then as sendperm, each write(2, ...) its process makes
 *                      trapped (SIGSYS) and counted; prints the sum and the count
 *   exitinside N       N calls; a thread's cblas_dgemm with a bad argument, whose xerbla_
 *                      waits there for ever; main prints the sum and returns
 *   exitreturn N PLUGIN  N calls; a child makes one call and loads PLUGIN
 *                      (tests/plugin/late_plugin.c, whose destructor runs at exit after the
 *                      preload's goodbye, makes one call and calls a hook of ours); its thread's cblas_dgemm with a bad
 *                      argument, whose xerbla_ waits for that hook, makes N+1 calls and
 *                      returns; the thread then makes N+2 more and stays, the hook waiting
 *                      for those, then for a new thread's N+3; the child exits (status 0);
 *                      prints the sum and its status
 *   slowbye N PLUGIN DIR  N calls; loads PLUGIN (as exitreturn), whose destructor's hook
 *                      starts a thread of N+3 calls and waits for it; makes DIR/halfway,
 *                      waits for DIR/go, exits 0 (a test stops the collector between)
 *   leaderexit N       N calls; a child makes N calls, its main thread leaves by pthread_exit (its
 *                      process runs on, /proc says its leader is a zombie) while another
 *                      thread calls exit(0); the exit's last flush (a stream of the child's,
 *                      written after every exit handler) starts a thread of N+1 calls (of
 *                      n = 0: OpenBLAS is finalized then) and waits for it; prints the sum
 *                      and the child's status
 *   sigsys N           N calls; a seccomp filter makes sendmsg raise SIGSYS, whose handler
 *                      prints and calls exit(7); a thread N calls (without a profiler
 *                      nothing calls sendmsg: prints its sum, exits 0)
 *   sigsysjmp N        N calls; a seccomp filter makes sendmsg raise SIGSYS, whose handler
 *                      counts it and, on a thread that armed it, siglongjmps back to where
 *                      the thread set its jump (sigsetjmp without the signal mask); a thread
 *                      makes N calls from there, then (SIGSYS, blocked by the handler, let
 *                      through again) N more; main N more; prints main's sum, the thread's
 *                      calls that returned, whether SIGUSR1 was blocked on the thread after
 *                      the jump, the SIGSYS count, and how far the lowest free descriptor
 *                      moved meanwhile (without a profiler nothing calls sendmsg: "thread
 *                      10, usr1 open, sigsys 0, new fds 0")
 *   sigsysret N        N calls; a seccomp filter makes sendmsg raise SIGSYS, whose handler
 *                      counts it, opens /dev/null the first time and returns; a thread makes
 *                      N calls, main N more; prints main's sum, the thread's calls, the
 *                      SIGSYS count and whether the handler's descriptor is still open
 *                      (without a profiler nothing calls sendmsg: "thread 5, sigsys 0, fd
 *                      none")
 *   sigsysalt N        the same, the handler running on the thread's alternate stack,
 *                      which lies just above the thread's own stack, and jumping within
 *                      itself (sigsetjmp, siglongjmp) before it opens and returns
 *   sigsysmask N       N calls; a seccomp filter makes sigprocmask(SIG_BLOCK, ...) raise SIGSYS
 *                      (a handler that counts it and, armed, jumps: sigsysjmp's), then a
 *                      thread as sigsysjmp's, the jump made from inside our first attempt to
 *                      hold its signals back; main N more; prints main's sum, the thread's
 *                      calls that returned, and whether cancellation was on in the thread
 *                      after the jump (without a profiler: "thread 10, cancel on")
 *   forkjmp N [raw [ret]]  N calls; a seccomp filter makes close() of a descriptor from 256
 *                      on raise SIGSYS, whose handler, in a fork child, siglongjmps back to
 *                      before the fork (sigsetjmp without the mask), or returns (ret); fork
 *                      (raw: by the system call, no atfork handler runs): the child (from
 *                      fork or the jump) makes N+1 calls and exits 0, 4 when cancellation
 *                      is off, 5 when its sum is wrong; prints the child's status, then
 *                      main's sum after N more (nothing of its own closes such a number)
 *   stackjmp N         N calls; a seccomp filter makes sendmsg raise SIGSYS, whose handler
 *                      siglongjmps back (sigsetjmp without the mask) out of N calls from
 *                      another frame; N calls from a third place; prints their sum (of the
 *                      calls that returned) and the SIGSYS count (without a profiler:
 *                      "stackjmp 15, sigsys 0"); under OPPROF_STACKS each place's calls have
 *                      a code stack not seen before, whose id is sent
 *   sigsysreconn N     N calls; closes every descriptor above 2 (our connection: the next
 *                      send connects again), then as sigsysjmp, the jump made from inside
 *                      that new connection's first message; prints main's sum, the thread's
 *                      calls that returned, the SIGSYS count and how many more descriptors
 *                      are open after than before the thread (without a profiler: "thread 10,
 *                      sigsys 0, new fds 0")
 *   sayjmp N           N calls; a seccomp filter makes write(2, ...) raise SIGSYS, whose
 *                      handler counts it and siglongjmps back (sigsetjmp without the mask) out
 *                      of a call of xnn_run_operator, which this program does not link (a weak
 *                      reference: not called without a profiler); N calls; prints the sum,
 *                      the SIGSYS count, whether cancellation is on and whether the signal
 *                      mask (SIGSYS aside) is the one before (without a profiler: "sigsys 0,
 *                      cancel on, mask kept")
 *   waitjmp N          N calls; stops the collector of this process (SIGSTOP) when there is
 *                      one; a seccomp filter makes sched_yield raise SIGSYS, whose handler
 *                      counts it and siglongjmps back (sigsetjmp without the mask) out of a
 *                      loop of up to 100000 calls; the collector continued; N calls; prints
 *                      the sum, the loop's calls that returned, whether cancellation is on
 *                      and whether the mask (SIGSYS aside) is the one before (without a
 *                      profiler: "loop 100000, cancel on, mask kept"); under
 *                      OPPROF_DROP=block the loop's calls fill the ring, whose wait for room
 *                      yields
 *   waitcall N         as waitjmp, but the SIGSYS handler, the first time, makes one call,
 *                      continues the collector and returns; the loop ends once it ran; N
 *                      calls; prints the sum of the calls but the handler's, the loop's
 *                      calls and the handler's calls (without a profiler: "loop 100000,
 *                      handler 0"); under OPPROF_DROP=block the loop's calls fill the ring,
 *                      whose wait for room yields: the handler's call comes inside our
 *                      publishing of a loop's call
 *   memfdret N         N calls; a seccomp filter makes memfd_create raise SIGSYS, whose
 *                      handler counts it and returns (the call not made, its number, 319,
 *                      left where its descriptor goes); descriptor 319 made /dev/null's; a
 *                      thread N calls; prints main's sum, the thread's, the SIGSYS count and
 *                      whether 319 is still open (without a profiler: "sigsys 0, fd open")
 *   altraise N         N calls; a thread whose alternate signal stack lies just above its own
 *                      stack makes a cblas_dgemm with a bad argument, whose xerbla_ raises
 *                      SIGUSR1, whose handler, on that stack, jumps within itself (sigsetjmp,
 *                      siglongjmp) and returns; then N calls; prints main's sum, the
 *                      thread's, and how often the handler and xerbla_ ran
 *   pubjmp N           N calls; a SIGSEGV handler that makes this process's one ring
 *                      writable again and siglongjmps back; the ring's slots made read-only
 *                      (when there is one: the preload's), one call, whose record's write
 *                      faults; N calls; prints the calls that returned and how often the
 *                      handler ran (without a profiler: 2N+1, 0)
 *   nodumpexec N K [EXE]  makes itself not dumpable, N calls; K > 0: execs EXE (this
 *                      program, or a copy of it that its user may run but not read: then not
 *                      dumpable from the exec on) as "nodumpexec N K-1 EXE", else waits
 *                      300 ms and prints the sum
 *   timerjmp K N       a SIGALRM every 20 us whose handler siglongjmps back to the loop
 *                      of calls it interrupted (the first of them attaches the thread),
 *                      K times; then N calls; prints K, the calls that returned and the
 *                      calls entered
 *   nodump N           makes itself not dumpable (PR_SET_DUMPABLE 0: its /proc/PID/maps
 *                      kept from processes of its user), N calls, close_range(3, ~0U, 0),
 *                      300 ms, a thread N calls, main N; prints the sum
 *   errno N            N calls, dgemm, dgemv, daxpy, idamax, a new thread's first call and
 *                      a fork child's first call, each with errno set before: prints each
 *                      errno after (the child's: 0 when kept)
 */
#define _GNU_SOURCE
#include <cblas.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

extern char **environ;
static double x[4] = {1, 2, 3, 4};

static double calls(long n)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        s += cblas_ddot(1, x, 1, x, 1);
    return s;
}

static long arg(int argc, char **argv, int i)
{
    if (i >= argc) {
        fprintf(stderr, "notice: missing argument\n");
        exit(2);
    }
    return atol(argv[i]);
}

/* The seccomp filter f[0..n) installed (said when it cannot be): 0 or -1. */
static int seccomp_filter(struct sock_filter *f, unsigned short n)
{
    struct sock_fprog prog = {n, f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
        perror("seccomp");
        return -1;
    }
    return 0;
}

/* A filter that makes system call nr raise SIGSYS (not made), every other
 * one allowed. */
static int trap_call(int nr)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    return seccomp_filter(f, sizeof f / sizeof *f);
}

/* A filter that makes system call nr raise SIGSYS when its first argument
 * compares (BPF_JEQ or BPF_JGE) with k, every other call allowed. */
static int trap_call_arg0(int nr, unsigned cmp, unsigned k)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | cmp | BPF_K, k, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    return seccomp_filter(f, sizeof f / sizeof *f);
}

static char self[4096];

/* fd2dev: the writes to descriptor 2 a filter trapped */
static atomic_int writes_to_2;

static void count_write(int sig)
{
    (void)sig;
    atomic_fetch_add(&writes_to_2, 1);
}

/* Closes 2 and opens DEV there ("pty": a new terminal's slave side, its
 * master kept open): 0, or -1. */
static int device_at_2(const char *dev)
{
    int fd = -1;
    if (!strcmp(dev, "pty")) {
        int m = posix_openpt(O_RDWR | O_NOCTTY);
        char *name = m >= 0 && !grantpt(m) && !unlockpt(m) ? ptsname(m) : NULL;
        close(2);
        if (name)
            fd = open(name, O_RDWR | O_NOCTTY);
    } else {
        close(2);
        fd = open(dev, O_WRONLY);
    }
    return fd == 2 ? 0 : -1;
}

static void find_self(void)
{
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
}

static char child_n[32];
static char *child_argv[] = {self, "loop", child_n, NULL};

static void print_status(const char *what, int st)
{
    if (WIFEXITED(st))
        printf("%s exited %d\n", what, WEXITSTATUS(st));
    else
        printf("%s signal %d\n", what, WIFSIGNALED(st) ? WTERMSIG(st) : -1);
}

static int clone_child(void *p)
{
    (void)p;
    execve(self, child_argv, environ);
    _exit(127);
}

/* The descriptors above 2 open now, on one line. */
static void print_fds(const char *what)
{
    char line[4096];
    int n = snprintf(line, sizeof line, "%s:", what);
    DIR *d = opendir("/proc/self/fd");
    int fds[256], nfd = 0;
    for (struct dirent *e; d && (e = readdir(d)) && nfd < 256;) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] != '.' && fd > 2 && fd != dirfd(d))
            fds[nfd++] = fd;
    }
    if (d)
        closedir(d);
    for (int i = 0; i < nfd; i++)
        for (int j = i + 1; j < nfd; j++)
            if (fds[j] < fds[i]) {
                int t = fds[i];
                fds[i] = fds[j];
                fds[j] = t;
            }
    for (int i = 0; i < nfd && n < (int)sizeof line - 16; i++)
        n += snprintf(line + n, sizeof line - (size_t)n, " %d", fds[i]);
    printf("%s\n", line);
}

static void *n_calls(void *p)
{
    long n = (long)p;
    calls(n);
    return NULL;
}

/* After a thread was cancelled: a new thread's n calls, then main's n,
 * whose sum is printed. */
static void then_calls(long n)
{
    pthread_t t;
    pthread_create(&t, NULL, n_calls, (void *)n);
    pthread_join(t, NULL);
    printf("then %g\n", calls(n));
}

static atomic_int cancel_sent;
static volatile double cancel_sum;

/* Its cancel is pending (deferred) before its first call: no call of
 * BLAS is a cancellation point, so the calls all run, and the thread
 * ends at pthread_testcancel. */
static void *cancelled_thread(void *p)
{
    while (!atomic_load(&cancel_sent))
        ;
    cancel_sum = calls((long)p);
    pthread_testcancel();
    return NULL;
}

/* What this program's xerbla_ (OpenBLAS's error handler, called from
 * inside a BLAS call given a bad argument) does: nothing, siglongjmp to
 * xerbla_jmp, or reach a cancellation point. */
static enum {
    XERBLA_RETURN,
    XERBLA_LONGJMP,
    XERBLA_TESTCANCEL,
    XERBLA_STAY,
    XERBLA_UNTIL_EXIT,
    XERBLA_RAISE
} xerbla_how;
static atomic_int exit_began; /* exitreturn: the plugin's destructor runs */
static long late_n;           /* exitreturn's N */
static sigjmp_buf xerbla_jmp;
static atomic_int xerbla_seen;
void xerbla_(const char *name, const int *info, int len);
void xerbla_(const char *name, const int *info, int len)
{
    (void)name, (void)info, (void)len;
    atomic_fetch_add(&xerbla_seen, 1);
    if (xerbla_how == XERBLA_LONGJMP)
        siglongjmp(xerbla_jmp, 1);
    if (xerbla_how == XERBLA_TESTCANCEL)
        pthread_testcancel();
    while (xerbla_how == XERBLA_STAY)
        pause();
    while (xerbla_how == XERBLA_UNTIL_EXIT && !atomic_load(&exit_began))
        sched_yield();
    if (xerbla_how == XERBLA_UNTIL_EXIT)
        calls(late_n + 1);
    if (xerbla_how == XERBLA_RAISE)
        raise(SIGUSR1);
}

/* A cblas_dgemm whose lda is too small: it calls xerbla_. */
static void bad_dgemm(void)
{
    double a[4] = {1, 0, 0, 1}, b[4] = {1, 2, 3, 4}, c[4] = {0};
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1, a, 1, b, 2, 0, c, 2);
}

static void *bad_dgemm_thread(void *p)
{
    (void)p;
    bad_dgemm();
    return NULL;
}

/* exitreturn: the thread's cblas_dgemm returns once the plugin's
 * destructor runs (calls made inside it first), the thread makes its
 * calls after it, then stays; the destructor's hook waits for those,
 * then makes a thread whose first call comes after the goodbye. */
static atomic_int dgemm_returned;
static void *late_dgemm_thread(void *p)
{
    (void)p;
    bad_dgemm();
    calls(late_n + 2);
    atomic_store(&dgemm_returned, 1);
    for (;;)
        pause();
    return NULL;
}
static void exit_hook(void)
{
    atomic_store(&exit_began, 1);
    while (!atomic_load(&dgemm_returned))
        sched_yield();
    pthread_t t;
    if (pthread_create(&t, NULL, n_calls, (void *)(late_n + 3)) == 0)
        pthread_join(t, NULL);
}

/* slowbye: the plugin's destructor's hook, after our goodbye: a new
 * thread's N+3 calls. */
static void thread_hook(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, n_calls, (void *)(late_n + 3)) == 0)
        pthread_join(t, NULL);
}

/* leaderexit: the stream exit flushes last, after every exit handler
 * (our goodbye too): a new thread's calls then. */
static void *empty_calls(void *p)
{
    for (long i = 0; i < (long)p; i++)
        cblas_ddot(0, x, 1, x, 1); /* OpenBLAS is finalized by then: n = 0 leaves at once */
    return NULL;
}
static ssize_t late_write(void *cookie, const char *buf, size_t len)
{
    (void)cookie, (void)buf;
    pthread_t t;
    if (pthread_create(&t, NULL, empty_calls, (void *)(late_n + 1)) == 0)
        pthread_join(t, NULL);
    return (ssize_t)len;
}

/* leaderexit: exit(0) once the main thread is gone (its process's
 * leader a zombie in /proc). */
static void *exit_after_leader(void *p)
{
    (void)p;
    char path[64], stat[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)getpid());
    for (;;) {
        int fd = open(path, O_RDONLY);
        ssize_t n = fd >= 0 ? read(fd, stat, sizeof stat - 1) : -1;
        if (fd >= 0)
            close(fd);
        stat[n > 0 ? n : 0] = 0;
        const char *end = strrchr(stat, ')');
        if (end && end[1] == ' ' && end[2] == 'Z')
            exit(0);
        sched_yield();
    }
    return NULL;
}

/* calls(n) from a frame 8 KiB below its caller's */
static __attribute__((noinline)) double deep_calls(long n)
{
    volatile char pad[8192];
    pad[0] = 0;
    return calls(n) + pad[0];
}

static void cleanup_line(void *what)
{
    printf("cleanup %s\n", (const char *)what);
}

/* Its cancel pending, N calls, then a call whose xerbla_ acts on it. */
static void *cancelled_inside(void *p)
{
    while (!atomic_load(&cancel_sent))
        ;
    pthread_cleanup_push(cleanup_line, "inside");
    cancel_sum = calls((long)p);
    bad_dgemm();
    pthread_cleanup_pop(0);
    return NULL;
}

/* exit() from a handler is not async-signal-safe: that is the point */
static void sigsys_exit(int sig)
{
    (void)sig;
    ssize_t w = write(1, "sigsys\n", 7);
    (void)w;
    exit(7);
}

/* sigsysjmp: a thread's SIGSYS handler jumps back to where the thread
 * armed it */
static __thread sigjmp_buf sys_jmp;
static __thread volatile sig_atomic_t sys_armed;
static atomic_int sys_seen;
static void sigsys_jump(int sig)
{
    (void)sig;
    atomic_fetch_add(&sys_seen, 1);
    if (sys_armed) {
        sys_armed = 0;
        siglongjmp(sys_jmp, 1);
    }
}

static volatile long sys_thread_done;
static volatile int sys_usr1_blocked, sys_cancel_off;
static void *sigsys_jump_thread(void *p)
{
    long n = (long)p;
    static volatile long done; /* the calls that returned, across the jump */
    done = 0;
    if (!sigsetjmp(sys_jmp, 0)) { /* the mask stays the handler's after the jump */
        sys_armed = 1;
        for (long i = 0; i < n; i++) {
            cblas_ddot(1, x, 1, x, 1);
            done++;
        }
    }
    sys_armed = 0;
    sigset_t now;
    pthread_sigmask(SIG_SETMASK, NULL, &now); /* only read: SIG_BLOCK may be trapped */
    sys_usr1_blocked = sigismember(&now, SIGUSR1);
    int cancel;
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &cancel);
    pthread_setcancelstate(cancel, NULL);
    sys_cancel_off = cancel != PTHREAD_CANCEL_ENABLE;
    sigset_t sys; /* blocked since the handler ran: a trap of it now would kill */
    sigemptyset(&sys);
    sigaddset(&sys, SIGSYS);
    pthread_sigmask(SIG_UNBLOCK, &sys, NULL);
    calls(n);
    sys_thread_done = done + n;
    return NULL;
}

/* sigsysjmp, sigsysreconn: a SIGSYS handler that jumps, sendmsg trapped,
 * and sigsys_jump_thread run to its end. 0, or -1 (no filter). */
static int jump_from_send_thread(long n)
{
    struct sigaction sa = {.sa_handler = sigsys_jump};
    sigaction(SIGSYS, &sa, NULL);
    if (trap_call(SYS_sendmsg))
        return -1;
    pthread_t t;
    pthread_create(&t, NULL, sigsys_jump_thread, (void *)n);
    pthread_join(t, NULL);
    return 0;
}

/* sigsysret, sigsysalt: the handler returns, having opened a descriptor
 * the first time; sigsysalt's runs on an alternate stack above the
 * thread's and jumps within itself first */
static volatile int ret_fd = -1, ret_alt;
static void sigsys_return(int sig)
{
    (void)sig;
    static __thread sigjmp_buf inner;
    atomic_fetch_add(&sys_seen, 1);
    if (ret_alt && !sigsetjmp(inner, 0))
        siglongjmp(inner, 1);
    if (ret_fd < 0)
        ret_fd = open("/dev/null", O_RDONLY);
}

/* On a thread run by on_stack_below_alt: its alternate signal stack,
 * in the same mapping as its stack, above it (a page between). */
static void alt_stack_above(void)
{
    size_t pagesz = (size_t)sysconf(_SC_PAGESIZE);
    pthread_attr_t a;
    void *lo;
    size_t sz;
    pthread_getattr_np(pthread_self(), &a);
    pthread_attr_getstack(&a, &lo, &sz);
    pthread_attr_destroy(&a);
    stack_t alt = {.ss_sp = (char *)lo + sz + pagesz, .ss_size = 16 * pagesz};
    sigaltstack(&alt, NULL);
}

/* fn(arg) on a thread whose stack (1 MiB) lies at the bottom of a
 * mapping with room above it for alt_stack_above; joined. 0, or -1. */
static int on_stack_below_alt(void *(*fn)(void *), void *arg)
{
    size_t pagesz = (size_t)sysconf(_SC_PAGESIZE), ssz = 1 << 20;
    char *m = mmap(NULL, ssz + 17 * pagesz, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstack(&a, m, ssz);
    pthread_t t;
    int rc = pthread_create(&t, &a, fn, arg);
    if (!rc)
        pthread_join(t, NULL);
    pthread_attr_destroy(&a);
    return rc ? -1 : 0;
}

static void *sigsys_return_thread(void *p)
{
    long n = (long)p;
    if (ret_alt)
        alt_stack_above();
    sys_thread_done = (long)calls(n);
    return NULL;
}

/* altraise: a SIGUSR1 raised inside a call, its handler on the thread's
 * alternate stack above the thread's, jumping within itself */
static atomic_int usr1_seen;
static void usr1_within(int sig)
{
    (void)sig;
    static __thread sigjmp_buf inner;
    atomic_fetch_add(&usr1_seen, 1);
    if (!sigsetjmp(inner, 0))
        siglongjmp(inner, 1);
}

static void *alt_raise_thread(void *p)
{
    long n = (long)p;
    alt_stack_above();
    bad_dgemm(); /* its xerbla_ raises SIGUSR1 and returns */
    sys_thread_done = (long)calls(n);
    return NULL;
}

/* waitcall: the handler, armed, makes one call and lets the collector go
 * on (stopped by the program), then returns */
static volatile pid_t call_collector = -1;
static volatile sig_atomic_t call_made;
static void sigsys_call(int sig)
{
    (void)sig;
    atomic_fetch_add(&sys_seen, 1);
    if (sys_armed) {
        sys_armed = 0;
        cblas_ddot(1, x, 1, x, 1);
        call_made++;
        if (call_collector > 0)
            kill(call_collector, SIGCONT);
    }
}

/* memfdret: the handler returns, the trapped call not made */
static void sigsys_count(int sig)
{
    (void)sig;
    atomic_fetch_add(&sys_seen, 1);
}

/* The lowest descriptor free now. */
static int lowest_free_fd(void)
{
    int fd = open("/dev/null", O_RDONLY);
    if (fd >= 0)
        close(fd);
    return fd;
}

/* forkjmp: the child's SIGSYS handler jumps back to before the fork */
static sigjmp_buf fork_jmp;
static pid_t fork_parent;
static int fork_ret; /* the handler returns instead */
static void sigsys_fork_jump(int sig)
{
    (void)sig;
    if (getpid() != fork_parent && !fork_ret)
        siglongjmp(fork_jmp, 1);
}

/* The descriptors open now. */
static __attribute__((noinline)) int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d);
    if (d)
        closedir(d);
    return n;
}

/* sayjmp: not linked; with a profiler, its wrapper finds no real one */
__attribute__((weak)) int xnn_run_operator(void *op, void *threadpool);

/* The collector started for this process (its --root-pid), -1: none. */
static __attribute__((noinline)) pid_t collector_pid(void)
{
    char want[32];
    int wn = snprintf(want, sizeof want, "--root-pid%c%d", 0, (int)getpid()) + 1;
    DIR *d = opendir("/proc");
    pid_t found = -1;
    for (struct dirent *e; d && found < 0 && (e = readdir(d));) {
        char path[300], cmd[8192];
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(cmd, 1, sizeof cmd, f);
        fclose(f);
        if (!memmem(cmd, n, "opprof-collector", 16))
            continue;
        if (memmem(cmd, n, want, (size_t)wn))
            found = atoi(e->d_name);
    }
    if (d)
        closedir(d);
    return found;
}

/* After a jump out of something of ours: "cancel on|off, mask kept|changed"
 * against the mask before (SIGSYS, the handler's, aside), then SIGSYS let
 * through again. */
static void state_after(char *buf, size_t cap, const sigset_t *before)
{
    int cancel;
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &cancel);
    pthread_setcancelstate(cancel, NULL);
    sigset_t now;
    pthread_sigmask(SIG_SETMASK, NULL, &now);
    int changed = 0;
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGSYS && sigismember(before, sig) != sigismember(&now, sig))
            changed = 1;
    sigset_t sys;
    sigemptyset(&sys);
    sigaddset(&sys, SIGSYS);
    pthread_sigmask(SIG_UNBLOCK, &sys, NULL);
    snprintf(buf, cap, "cancel %s, mask %s", cancel == PTHREAD_CANCEL_ENABLE ? "on" : "off",
             changed ? "changed" : "kept");
}

/* pubjmp: the slots of this process's ring (past its 4096-byte header,
 * common/ring.h's OPP_RING_HDR_SIZE), made read-only; the SIGSEGV
 * handler makes them writable again and jumps back. */
static sigjmp_buf segv_jmp;
static char *ring_slots;
static size_t ring_slots_len;
static atomic_int segv_seen;
static void segv_jump(int sig)
{
    (void)sig;
    atomic_fetch_add(&segv_seen, 1);
    mprotect(ring_slots, ring_slots_len, PROT_READ | PROT_WRITE);
    siglongjmp(segv_jmp, 1);
}

/* Finds the one mapping named opprof-ring: 1 when found. */
static int find_ring(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    unsigned long lo, hi;
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        if (strstr(line, "opprof-ring") && sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
            ring_slots = (char *)lo + 4096;
            ring_slots_len = hi - lo - 4096;
            found = 1;
        }
    if (f)
        fclose(f);
    return found;
}

static sigjmp_buf alarm_jmp;
static volatile sig_atomic_t alarm_jumps, alarm_max;
static void alarm_jump(int sig)
{
    (void)sig;
    if (alarm_jumps < alarm_max) { /* later ones, before the timer is off, return */
        alarm_jumps++;
        siglongjmp(alarm_jmp, 1);
    }
}

static long atexit_n;
static void at_exit_calls(void)
{
    printf("atexit %g\n", calls(atexit_n));
}

static void at_quick(void)
{
    printf("at_quick_exit %g\n", calls(1));
    fflush(stdout);
}

#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31) /* Linux 4.7's: in <linux/signal.h>, not glibc's headers */
#endif

static volatile double handler_sum;
static volatile int handler_flags; /* sigaltstack's ss_flags in the handler, -1: failed */
static void on_usr1(int sig)
{
    (void)sig;
    handler_sum += cblas_ddot(1, x, 1, x, 1);
    stack_t now;
    handler_flags = sigaltstack(NULL, &now) ? -1 : now.ss_flags;
}

/* The stacks are set with the stack_t that takes the old one
 * (sigaltstack(&ss, &ss)): the kernel reads the new stack before it
 * writes the old over it. */
static int set_aliased;

/* The bytes of an alternate stack of size bytes set with flags (in a
 * buffer with 4 KiB more below it, filled with a pattern) that a SIGUSR1
 * handler's call took on this thread, counting any below the stack's
 * bottom. */
static long handler_depth(long size, int flags)
{
    long below = 4096;
    unsigned char *buf = malloc((size_t)(below + size));
    if (!buf)
        exit(2);
    memset(buf, 0xa5, (size_t)(below + size));
    stack_t ss = {.ss_sp = buf + below, .ss_flags = flags, .ss_size = (size_t)size},
            off = {.ss_flags = SS_DISABLE};
    if (sigaltstack(&ss, set_aliased ? &ss : NULL)) {
        perror("sigaltstack");
        exit(2);
    }
    raise(SIGUSR1);
    sigaltstack(&off, NULL);
    long i = 0;
    while (i < below + size && buf[i] == 0xa5)
        i++;
    free(buf);
    return below + size - i;
}

struct alt {
    long n, size, depth;
    int flags;
    double sum;
};

static void *alt_thread(void *p)
{
    struct alt *a = p;
    a->depth = handler_depth(a->size, a->flags); /* this thread's first call, on the small stack */
    a->sum = handler_sum + calls(a->n);
    return NULL;
}

static ucontext_t reuse_thread, reuse_calls;
static double reuse_sum;
static long reuse_n;
static void reuse_run(void)
{
    reuse_sum = calls(reuse_n);
}

static void *reuse_thread_main(void *p)
{
    (void)p;
    size_t size = 65536;
    char *m = malloc(size);
    if (!m)
        exit(2);
    stack_t ss = {.ss_sp = m, .ss_size = size}, off = {.ss_flags = SS_DISABLE};
    if (sigaltstack(&ss, NULL) || syscall(SYS_sigaltstack, &off, NULL)) {
        perror("sigaltstack");
        exit(2);
    }
    getcontext(&reuse_calls);
    reuse_calls.uc_stack = (stack_t){.ss_sp = m, .ss_size = size};
    reuse_calls.uc_link = &reuse_thread;
    makecontext(&reuse_calls, reuse_run, 0);
    swapcontext(&reuse_thread, &reuse_calls);
    free(m);
    return NULL;
}

static void *errno_thread(void *p)
{
    errno = 4321;
    cblas_ddot(1, x, 1, x, 1);
    *(int *)p = errno;
    return NULL;
}

static int wait_file(const char *path)
{
    for (int i = 0; i < 20000; i++) {
        if (access(path, F_OK) == 0)
            return 0;
        usleep(1000);
    }
    return -1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: notice MODE [ARGS]\n");
        return 2;
    }
    find_self();
    const char *mode = argv[1];
    if (!strcmp(mode, "loop")) {
        printf("loop %g\n", calls(arg(argc, argv, 2)));
    } else if (!strcmp(mode, "vfork")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        snprintf(child_n, sizeof child_n, "%ld", n + 1);
        fflush(stdout);
        pid_t pid = vfork();
        if (pid == 0) {
            execve(self, child_argv, environ);
            _exit(127);
        }
        int st;
        waitpid(pid, &st, 0);
        print_status("vfork child", st);
        printf("vfork %g\n", s + calls(n));
    } else if (!strcmp(mode, "spawn")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        snprintf(child_n, sizeof child_n, "%ld", n + 1);
        posix_spawnattr_t at;
        posix_spawnattr_init(&at);
        if (argc > 3 && !strcmp(argv[3], "vfork"))
            posix_spawnattr_setflags(&at, POSIX_SPAWN_USEVFORK);
        fflush(stdout);
        pid_t pid;
        int rc = posix_spawn(&pid, self, NULL, &at, child_argv, environ);
        int st = 0;
        if (rc == 0)
            waitpid(pid, &st, 0);
        print_status(rc ? "spawn failed" : "spawn child", st);
        printf("spawn %g\n", s + calls(n));
    } else if (!strcmp(mode, "clonevm") || !strcmp(mode, "clone3")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        snprintf(child_n, sizeof child_n, "%ld", n + 1);
        fflush(stdout);
        size_t sz = 1 << 20;
        char *stack = malloc(sz);
        pid_t pid;
        if (!strcmp(mode, "clonevm")) {
            pid = clone(clone_child, stack + sz, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
        } else {
            struct clone_args ca = {
                .flags = CLONE_VFORK,
                .exit_signal = SIGCHLD,

            };
            pid = (pid_t)syscall(SYS_clone3, &ca, sizeof ca);
            if (pid == 0) { /* on the new stack, sharing memory: exec at once */
                syscall(SYS_execve, self, child_argv, environ);
                syscall(SYS_exit, 127);
            }
        }
        int st = 0;
        if (pid > 0)
            waitpid(pid, &st, 0);
        print_status(pid > 0 ? "clone child" : "clone failed", st);
        printf("%s %g\n", mode, s + calls(n));
    } else if (!strcmp(mode, "system")) {
        long n = arg(argc, argv, 2), k = arg(argc, argv, 3);
        pthread_t t;
        pthread_create(&t, NULL, n_calls, (void *)n);
        int ok = 0;
        for (long i = 0; i < k; i++) {
            int st = system("exit 3");
            ok += WIFEXITED(st) && WEXITSTATUS(st) == 3;
            FILE *p = popen("echo hi", "r");
            char buf[16] = "";
            if (p && fgets(buf, sizeof buf, p) && !strcmp(buf, "hi\n"))
                ok++;
            if (p)
                ok += pclose(p) == 0;
        }
        pthread_join(t, NULL);
        printf("system %d of %ld\n", ok, 3 * k);
    } else if (!strcmp(mode, "execenv")) {
        long n = arg(argc, argv, 2);
        const char *how = argc > 3 ? argv[3] : "empty";
        double s = calls(n);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            char *av[] = {self, "envcheck", NULL};
            char *none[] = {NULL};
            if (!strcmp(how, "empty"))
                execve(self, av, none);
            unsetenv("LD_PRELOAD");
            execve(self, av, environ);
            _exit(127);
        }
        int st;
        waitpid(pid, &st, 0);
        print_status("execenv child", st);
        printf("execenv %g\n", s + calls(n));
    } else if (!strcmp(mode, "envcheck")) {
        printf("envcheck LD_PRELOAD %s OPPROF_SOCKET %s %g\n",
               getenv("LD_PRELOAD") ? "set" : "unset", getenv("OPPROF_SOCKET") ? "set" : "unset",
               calls(3));
    } else if (!strcmp(mode, "closeexec")) {
        if (argc < 4)
            return 2;
        syscall(SYS_close_range, 3, ~0U, 0);
        usleep((useconds_t)(atoi(argv[2]) * 1000));
        argv[2] = self;
        execv(self, argv + 2);
        perror("execv");
        return 127;
    } else if (!strcmp(mode, "limit")) {
        if (argc < 5)
            return 2;
        int res = !strcmp(argv[2], "as")     ? RLIMIT_AS
                  : !strcmp(argv[2], "data") ? RLIMIT_DATA
                                             : RLIMIT_NOFILE;
        struct rlimit rl;
        getrlimit(res, &rl);
        rl.rlim_cur = (rlim_t)strtoull(argv[3], NULL, 10);
        if (setrlimit(res, &rl)) {
            perror("setrlimit");
            return 2;
        }
        syscall(SYS_close_range, 3, ~0U,
                0); /* what the runner left open: the limit is all MODE's */
        argv[3] = self;
        execv(self, argv + 3);
        perror("execv");
        return 127;
    } else if (!strcmp(mode, "openn")) {
        long k = arg(argc, argv, 2);
        int got = 0;
        for (long i = 0; i < k; i++)
            got += open("/dev/null", O_RDONLY) >= 0;
        printf("openn %d of %ld, %g\n", got, k, calls(3));
        pthread_t t;
        pthread_create(&t, NULL, n_calls, (void *)3L);
        pthread_join(t, NULL);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0)
            exit(calls(2) == 2 ? 0 : 1);
        int st;
        waitpid(pid, &st, 0);
        print_status("openn child", st);
    } else if (!strcmp(mode, "fds")) {
        print_fds("fds at start");
        printf("fds %g\n", calls(arg(argc, argv, 2)));
        print_fds("fds after");
    } else if (!strcmp(mode, "closerange")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        if (syscall(SYS_close_range, 3, ~0U, 0)) {
            perror("close_range");
            return 2;
        }
        s += calls(n);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            printf("child %g\n", calls(n + 1));
            exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        print_status("closerange child", st);
        printf("closerange %g\n", s);
    } else if (!strcmp(mode, "quickexit")) {
        at_quick_exit(at_quick);
        printf("quickexit %g\n", calls(arg(argc, argv, 2)));
        fflush(stdout);
        quick_exit(5);
    } else if (!strcmp(mode, "_Exit")) {
        printf("_Exit %g\n", calls(arg(argc, argv, 2)));
        fflush(stdout);
        _Exit(6);
    } else if (!strcmp(mode, "atexit")) {
        long n = arg(argc, argv, 2);
        atexit_n = n + 1;
        atexit(at_exit_calls);
        printf("main %g\n", calls(n));
    } else if (!strcmp(mode, "sigpipe")) {
        long n = arg(argc, argv, 2);
        if (argc < 4)
            return 2;
        char path[4200];
        double s = calls(n);
        snprintf(path, sizeof path, "%s/halfway", argv[3]);
        close(open(path, O_CREAT | O_WRONLY, 0600));
        snprintf(path, sizeof path, "%s/go", argv[3]);
        if (wait_file(path))
            return 2;
        pthread_t t;
        pthread_create(&t, NULL, n_calls, (void *)n); /* a new thread: a new ring to send */
        pthread_join(t, NULL);
        printf("sigpipe %g\n", s + calls(n));
    } else if (!strcmp(mode, "blockall")) {
        long n = arg(argc, argv, 2), k = arg(argc, argv, 3);
        sigset_t all;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, NULL);
        pthread_t t[16];
        for (long i = 0; i < k && i < 16; i++)
            pthread_create(&t[i], NULL, n_calls, (void *)n);
        for (long i = 0; i < k && i < 16; i++)
            pthread_join(t[i], NULL);
        printf("blockall %g\n", calls(n));
        return 7;
    } else if (!strcmp(mode, "altstack")) {
        struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_ONSTACK};
        sigaction(SIGUSR1, &sa, NULL);
        int flags = argc > 3 && !strcmp(argv[3], "autodisarm") ? (int)SS_AUTODISARM : 0;
        set_aliased = argc > 4 && !strcmp(argv[4], "aliased");
        calls(1); /* bound, this thread recording: what a handler's call takes */
        long call = handler_depth(65536, flags);
        handler_sum = 0;
        struct alt a = {arg(argc, argv, 2), call + 256, 0, flags, 0};
        pthread_t t;
        pthread_create(&t, NULL, alt_thread, &a);
        pthread_join(t, NULL);
        int f = handler_flags;
        printf("altstack %g, %s, in the handler %s\n", a.sum,
               a.depth > a.size ? "overflowed" : "fits",
               f == -1           ? "sigaltstack failed"
               : f & SS_ONSTACK  ? "SS_ONSTACK"
               : f == SS_DISABLE ? "SS_DISABLE"
                                 : "other");
    } else if (!strcmp(mode, "altreuse")) {
        reuse_n = arg(argc, argv, 2);
        pthread_t t;
        pthread_create(&t, NULL, reuse_thread_main, NULL);
        pthread_join(t, NULL);
        printf("altreuse %g\n", reuse_sum);
    } else if (!strcmp(mode, "cancel")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        pthread_t t;
        void *ret;
        pthread_create(&t, NULL, cancelled_thread, (void *)n);
        pthread_cancel(t);
        atomic_store(&cancel_sent, 1);
        pthread_join(t, &ret);
        printf("cancel %g %g %s\n", s, cancel_sum, ret == PTHREAD_CANCELED ? "cancelled" : "ran");
        then_calls(n);
    } else if (!strcmp(mode, "nostd")) {
        long n = arg(argc, argv, 2);
        if (argc < 4)
            return 2;
        double s = calls(n);
        int in = open("/dev/null", O_RDONLY), out = open("/dev/null", O_WRONLY);
        int f = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0600);
        struct rlimit rl;
        if (f < 0 || getrlimit(RLIMIT_NOFILE, &rl))
            return 3;
        rl.rlim_cur = 3;
        setrlimit(RLIMIT_NOFILE, &rl);
        pthread_t t;
        pthread_create(&t, NULL, n_calls, (void *)n);
        pthread_join(t, NULL);
        dprintf(f, "nostd %d %d %d, %g\n", in, out, f, s);
    } else if (!strcmp(mode, "longjmp")) {
        long n = arg(argc, argv, 2), k = arg(argc, argv, 3);
        double s = calls(n);
        xerbla_how = XERBLA_LONGJMP;
        volatile long jumps = 0;
        while (jumps < k) {
            if (!sigsetjmp(xerbla_jmp, 1))
                bad_dgemm();
            jumps++;
        }
        s += argc > 4 && !strcmp(argv[4], "deep") ? deep_calls(n) : calls(n);
        pthread_t t;
        pthread_create(&t, NULL, n_calls, (void *)n);
        pthread_join(t, NULL);
        if (!sigsetjmp(xerbla_jmp, 1))
            bad_dgemm();
        printf("longjmp %g, xerbla %d\n", s, atomic_load(&xerbla_seen));
    } else if (!strcmp(mode, "cancelin")) {
        long n = arg(argc, argv, 2);
        xerbla_how = XERBLA_TESTCANCEL;
        pthread_t t;
        void *ret;
        pthread_create(&t, NULL, cancelled_inside, (void *)n);
        pthread_cancel(t);
        atomic_store(&cancel_sent, 1);
        pthread_join(t, &ret);
        printf("cancelin %g %s, xerbla %d\n", cancel_sum,
               ret == PTHREAD_CANCELED ? "cancelled" : "ran", atomic_load(&xerbla_seen));
        then_calls(n);
    } else if (!strcmp(mode, "sendperm") || !strcmp(mode, "fd2file") || !strcmp(mode, "fd2dev")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        int file = !strcmp(mode, "fd2file"), dev = !strcmp(mode, "fd2dev");
        if (file) {
            if (argc < 4)
                return 2;
            int append = argc > 4 && !strcmp(argv[4], "append") ? O_APPEND : 0;
            close(2);
            if (open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | append, 0600) != 2)
                return 3;
            dprintf(2, "data 1\n");
        }
        struct sock_filter f[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sendmsg, 1, 0),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sendto, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        if (seccomp_filter(f, sizeof f / sizeof *f))
            return 3;
        if (dev) { /* a second filter: write(2, ...) raises SIGSYS, counted */
            struct sigaction sa = {.sa_handler = count_write};
            if (argc < 4 || device_at_2(argv[3]) || sigaction(SIGSYS, &sa, NULL) ||
                trap_call_arg0(SYS_write, BPF_JEQ, 2))
                return 3;
        }
        pthread_t t;
        pthread_create(&t, NULL, n_calls, (void *)n);
        pthread_join(t, NULL);
        s += calls(n);
        if (file)
            dprintf(2, "data 2\n");
        if (dev)
            printf("%s %g, %d writes to 2\n", mode, s, atomic_load(&writes_to_2));
        else
            printf("%s %g\n", mode, s);
    } else if (!strcmp(mode, "exitinside")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        xerbla_how = XERBLA_STAY;
        pthread_t t;
        pthread_create(&t, NULL, bad_dgemm_thread, NULL);
        while (!atomic_load(&xerbla_seen))
            ;
        printf("exitinside %g\n", s);
    } else if (!strcmp(mode, "exitreturn")) {
        long n = arg(argc, argv, 2);
        arg(argc, argv, 3); /* PLUGIN given */
        double s = calls(n);
        late_n = n;
        fflush(stdout);
        pid_t child = fork();
        if (child == 0) { /* not the first process: the trace goes on after its goodbye */
            void *h = dlopen(argv[3], RTLD_NOW);
            void (*set)(void (*)(void)) =
                h ? (void (*)(void (*)(void)))dlsym(h, "late_plugin_hook") : NULL;
            if (!set)
                _exit(3);
            set(exit_hook);
            calls(1); /* the destructor's call: on a thread that recorded before */
            xerbla_how = XERBLA_UNTIL_EXIT;
            pthread_t t;
            pthread_create(&t, NULL, late_dgemm_thread, NULL);
            while (!atomic_load(&xerbla_seen))
                ;
            return 0;
        }
        int st = 0;
        waitpid(child, &st, 0);
        printf("exitreturn %g, child %d\n", s, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    } else if (!strcmp(mode, "slowbye")) {
        late_n = arg(argc, argv, 2);
        double s = calls(late_n);
        arg(argc, argv, 4); /* PLUGIN and DIR given */
        void *h = dlopen(argv[3], RTLD_NOW);
        void (*set)(void (*)(void)) =
            h ? (void (*)(void (*)(void)))dlsym(h, "late_plugin_hook") : NULL;
        if (!set)
            return 3;
        set(thread_hook);
        char path[4200];
        snprintf(path, sizeof path, "%s/halfway", argv[4]);
        close(open(path, O_WRONLY | O_CREAT, 0600));
        snprintf(path, sizeof path, "%s/go", argv[4]);
        for (int i = 0; i < 3000 && access(path, F_OK) != 0; i++)
            usleep(10000);
        printf("slowbye %g\n", s);
    } else if (!strcmp(mode, "leaderexit")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        late_n = n;
        fflush(stdout);
        pid_t child = fork();
        if (child == 0) {
            calls(n);
            FILE *f = fopencookie(NULL, "w", (cookie_io_functions_t){.write = late_write});
            if (!f)
                _exit(3);
            fputc('x', f); /* written at exit */
            pthread_t t;
            pthread_create(&t, NULL, exit_after_leader, NULL);
            pthread_exit(NULL);
        }
        int st = 0;
        waitpid(child, &st, 0);
        printf("leaderexit %g, child %d\n", s, WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
    } else if (!strcmp(mode, "sigsys")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        signal(SIGSYS, sigsys_exit);
        if (trap_call(SYS_sendmsg))
            return 3;
        pthread_t t;
        pthread_create(&t, NULL, n_calls, (void *)n);
        pthread_join(t, NULL);
        printf("sigsys %g\n", s);
    } else if (!strcmp(mode, "sigsysjmp")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        int fd0 = lowest_free_fd();
        if (jump_from_send_thread(n))
            return 3;
        s += calls(n);
        printf("sigsysjmp %g, thread %ld, usr1 %s, sigsys %d, new fds %d\n", s, sys_thread_done,
               sys_usr1_blocked ? "blocked" : "open", atomic_load(&sys_seen),
               lowest_free_fd() - fd0);
    } else if (!strcmp(mode, "sigsysmask")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        struct sigaction sa = {.sa_handler = sigsys_jump};
        sigaction(SIGSYS, &sa, NULL);
        if (trap_call_arg0(SYS_rt_sigprocmask, BPF_JEQ, SIG_BLOCK))
            return 3;
        pthread_t t;
        pthread_create(&t, NULL, sigsys_jump_thread, (void *)n);
        pthread_join(t, NULL);
        s += calls(n);
        printf("sigsysmask %g, thread %ld, cancel %s\n", s, sys_thread_done,
               sys_cancel_off ? "off" : "on");
    } else if (!strcmp(mode, "forkjmp")) {
        long n = arg(argc, argv, 2);
        volatile double s = calls(n); /* kept across the jump */
        fork_parent = getpid();
        struct sigaction sa = {.sa_handler = sigsys_fork_jump};
        sigaction(SIGSYS, &sa, NULL);
        if (trap_call_arg0(SYS_close, BPF_JGE, 256))
            return 3;
        volatile int raw = argc > 3 && !strcmp(argv[3], "raw");
        fork_ret = argc > 4 && !strcmp(argv[4], "ret");
        fflush(stdout);
        volatile pid_t pid = 0;
        if (!sigsetjmp(fork_jmp, 0))
            pid = raw ? (pid_t)syscall(SYS_fork) : fork();
        if (pid == 0) { /* the child, returned from fork or jumped out of it */
            sigset_t sys;
            sigemptyset(&sys);
            sigaddset(&sys, SIGSYS);
            pthread_sigmask(SIG_UNBLOCK, &sys, NULL);
            int cancel;
            pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &cancel);
            pthread_setcancelstate(cancel, NULL);
            double c = calls(n + 1);
            exit(cancel != PTHREAD_CANCEL_ENABLE ? 4 : c == (double)(n + 1) ? 0 : 5);
        }
        int st = 0;
        if (pid > 0)
            waitpid(pid, &st, 0);
        print_status("forkjmp child", st);
        printf("forkjmp %g\n", s + calls(n));
    } else if (!strcmp(mode, "stackjmp")) {
        long n = arg(argc, argv, 2);
        volatile double s = calls(n); /* kept across the jump */
        struct sigaction sa = {.sa_handler = sigsys_jump};
        sigaction(SIGSYS, &sa, NULL);
        if (trap_call(SYS_sendmsg))
            return 3;
        if (!sigsetjmp(sys_jmp, 0)) {
            sys_armed = 1;
            s += deep_calls(n); /* code stacks not seen before */
        }
        sys_armed = 0;
        sigset_t sys;
        sigemptyset(&sys);
        sigaddset(&sys, SIGSYS);
        pthread_sigmask(SIG_UNBLOCK, &sys, NULL);
        for (long i = 0; i < n; i++) /* and others again */
            s += cblas_ddot(1, x, 1, x, 1);
        printf("stackjmp %g, sigsys %d\n", s, atomic_load(&sys_seen));
    } else if (!strcmp(mode, "sigsysreconn")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        syscall(SYS_close_range, 3, ~0U, 0);
        int fds0 = open_fds();
        if (jump_from_send_thread(n))
            return 3;
        s += calls(n);
        printf("sigsysreconn %g, thread %ld, sigsys %d, new fds %d\n", s, sys_thread_done,
               atomic_load(&sys_seen), open_fds() - fds0);
    } else if (!strcmp(mode, "sayjmp") || !strcmp(mode, "waitjmp")) {
        long n = arg(argc, argv, 2);
        int wait = !strcmp(mode, "waitjmp");
        volatile double s = calls(n); /* kept across the jump */
        volatile pid_t collector = wait ? collector_pid() : -1;
        struct sigaction sa = {.sa_handler = sigsys_jump};
        sigaction(SIGSYS, &sa, NULL);
        if (wait ? trap_call(SYS_sched_yield) : trap_call_arg0(SYS_write, BPF_JEQ, 2))
            return 3;
        if (collector > 0)
            kill(collector, SIGSTOP);
        sigset_t before;
        pthread_sigmask(SIG_SETMASK, NULL, &before);
        static volatile long loop;    /* the loop's calls that returned, across the jump */
        if (!sigsetjmp(sys_jmp, 0)) { /* the mask stays the handler's after the jump */
            sys_armed = 1;
            if (wait)
                for (long i = 0; i < 100000 && sys_armed; i++) {
                    cblas_ddot(1, x, 1, x, 1);
                    loop++;
                }
            else if (xnn_run_operator)
                xnn_run_operator(NULL, NULL);
        }
        sys_armed = 0;
        if (collector > 0)
            kill(collector, SIGCONT);
        char state[64];
        state_after(state, sizeof state, &before);
        s += calls(n);
        if (wait) /* its SIGSYS count: the yields trapped until the collector makes room */
            printf("%s %g, loop %ld, %s\n", mode, s, loop, state);
        else
            printf("%s %g, sigsys %d, %s\n", mode, s, atomic_load(&sys_seen), state);
    } else if (!strcmp(mode, "waitcall")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        call_collector = collector_pid();
        struct sigaction sa = {.sa_handler = sigsys_call};
        sigaction(SIGSYS, &sa, NULL);
        if (trap_call(SYS_sched_yield))
            return 3;
        if (call_collector > 0)
            kill(call_collector, SIGSTOP);
        long loop = 0;
        sys_armed = 1;
        for (; loop < 100000 && sys_armed; loop++)
            s += cblas_ddot(1, x, 1, x, 1);
        sys_armed = 0;
        if (call_collector > 0)
            kill(call_collector, SIGCONT);
        s += calls(n);
        printf("waitcall %g, loop %ld, handler %d\n", s, loop, (int)call_made);
    } else if (!strcmp(mode, "sigsysret") || !strcmp(mode, "sigsysalt")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        ret_alt = !strcmp(mode, "sigsysalt");
        struct sigaction sa = {.sa_handler = sigsys_return, .sa_flags = SA_ONSTACK};
        sigaction(SIGSYS, &sa, NULL);
        if (trap_call(SYS_sendmsg))
            return 3;
        if (on_stack_below_alt(sigsys_return_thread, (void *)n))
            return 3;
        s += calls(n);
        printf("%s %g, thread %ld, sigsys %d, fd %s\n", mode, s, sys_thread_done,
               atomic_load(&sys_seen),
               ret_fd < 0                    ? "none"
               : fcntl(ret_fd, F_GETFD) >= 0 ? "open"
                                             : "closed");
    } else if (!strcmp(mode, "memfdret")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        struct sigaction sa = {.sa_handler = sigsys_count};
        sigaction(SIGSYS, &sa, NULL);
        int fd = open("/dev/null", O_RDONLY);
        if (fd < 0 || dup2(fd, SYS_memfd_create) != SYS_memfd_create)
            return 3;
        close(fd);
        if (trap_call(SYS_memfd_create))
            return 3;
        pthread_t t;
        pthread_create(&t, NULL, n_calls, (void *)n);
        pthread_join(t, NULL);
        printf("memfdret %g, sigsys %d, fd %s\n", s, atomic_load(&sys_seen),
               fcntl(SYS_memfd_create, F_GETFD) >= 0 ? "open" : "closed");
    } else if (!strcmp(mode, "altraise")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        struct sigaction sa = {.sa_handler = usr1_within, .sa_flags = SA_ONSTACK};
        sigaction(SIGUSR1, &sa, NULL);
        xerbla_how = XERBLA_RAISE;
        if (on_stack_below_alt(alt_raise_thread, (void *)n))
            return 3;
        printf("altraise %g, thread %ld, usr1 %d, xerbla %d\n", s, sys_thread_done,
               atomic_load(&usr1_seen), atomic_load(&xerbla_seen));
    } else if (!strcmp(mode, "pubjmp")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        struct sigaction sa = {.sa_handler = segv_jump};
        sigaction(SIGSEGV, &sa, NULL);
        volatile long done = 0;
        if (!sigsetjmp(segv_jmp, 1)) {
            if (find_ring())
                mprotect(ring_slots, ring_slots_len, PROT_READ);
            cblas_ddot(1, x, 1, x, 1);
            done++;
        }
        s += calls(n);
        printf("pubjmp %ld, segv %d\n", (long)s + done, atomic_load(&segv_seen));
    } else if (!strcmp(mode, "nodumpexec")) {
        long n = arg(argc, argv, 2), k = arg(argc, argv, 3);
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        double s = calls(n);
        if (k > 0) {
            char kk[32];
            snprintf(kk, sizeof kk, "%ld", k - 1);
            char *exe = argc > 4 ? argv[4] : self;
            char *av[] = {exe, "nodumpexec", argv[2], kk, exe, NULL};
            execv(exe, av);
            perror("execv");
            return 127;
        }
        usleep(300000);
        printf("nodumpexec %g\n", s);
    } else if (!strcmp(mode, "timerjmp")) {
        long n = arg(argc, argv, 3);
        volatile long done = 0, entered = 0;
        alarm_max = (sig_atomic_t)arg(argc, argv, 2);
        signal(SIGALRM, alarm_jump);
        struct itimerval every = {{0, 20}, {0, 20}}, off = {{0, 0}, {0, 0}};
        if (!sigsetjmp(alarm_jmp, 1)) /* each jump comes back here, once it is set */
            setitimer(ITIMER_REAL, &every, NULL);
        while (alarm_jumps < alarm_max) {
            entered++;
            cblas_ddot(1, x, 1, x, 1);
            done++;
        }
        setitimer(ITIMER_REAL, &off, NULL);
        calls(n);
        int cancel; /* as it was: the jumps left no state of ours behind */
        pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &cancel);
        printf("timerjmp %ld %ld %ld, cancel %s\n", (long)alarm_jumps, (long)done + n,
               (long)entered + n, cancel == PTHREAD_CANCEL_ENABLE ? "on" : "off");
    } else if (!strcmp(mode, "nodump")) {
        long n = arg(argc, argv, 2);
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        double s = calls(n);
        syscall(SYS_close_range, 3, ~0U, 0);
        usleep(300000); /* the collector sees our connection close first */
        pthread_t t;
        pthread_create(&t, NULL, n_calls, (void *)n);
        pthread_join(t, NULL);
        printf("nodump %g\n", s + calls(n));
    } else if (!strcmp(mode, "errno")) {
        long n = arg(argc, argv, 2);
        double a[4] = {1, 0, 0, 1}, b[4] = {1, 2, 3, 4}, c[4] = {0};
        int e[8];
        errno = 1001;
        double s = calls(n);
        e[0] = errno;
        errno = 1002;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2);
        e[1] = errno;
        errno = 1003;
        cblas_dgemv(CblasRowMajor, CblasNoTrans, 2, 2, 1, a, 2, b, 1, 0, c, 1);
        e[2] = errno;
        errno = 1004;
        cblas_daxpy(2, 1, a, 1, c, 1);
        e[3] = errno;
        errno = 1005;
        e[4] = (int)cblas_idamax(4, b, 1);
        e[4] = errno;
        pthread_t t;
        pthread_create(&t, NULL, errno_thread, &e[5]);
        pthread_join(t, NULL);
        errno = 1006;
        pid_t pid = fork();
        if (pid == 0) {
            errno = 1007;
            cblas_ddot(1, x, 1, x, 1);
            _exit(errno == 1007 ? 0 : 1);
        }
        e[6] = errno;
        int st;
        waitpid(pid, &st, 0);
        e[7] = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        printf("errno %g: %d %d %d %d %d thread %d fork %d child %d\n", s, e[0], e[1], e[2], e[3],
               e[4], e[5], e[6], e[7]);
    } else {
        fprintf(stderr, "notice: unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
