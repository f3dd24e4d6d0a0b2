/* One program, many ways to live and die, each with a known number of BLAS
 * calls, for the end-to-end tests: scenarios MODE [ARGS].
 *   loop N             N x cblas_ddot(n=1), prints the sum
 *   threads T N        T named threads ("worker-I"), thread I makes N+I ddot calls
 *   fork N             N calls, fork; child N+2 calls, exit 0; parent N+1 more
 *   forklate US [_exit] fork; the child forks a grandchild (one call), waits for
 *                      it, sleeps US, makes one call; the parent waits, one call;
 *                      each child leaves by exit (by _exit with _exit)
 *   exec N             N calls, fork, child execs "scenarios loop N+4"; parent waits
 *   selfexec N         N calls, then execs "scenarios loop N+1" in the same process
 *   forkexec N K       N calls, then K children one after another, each execs
 *                      /bin/true at once; prints how many exited 0
 *   children N         N calls; a child makes N+2 calls and leaves by _exit(3); another
 *                      makes N+3 calls and waits until the parent kills it (SIGKILL);
 *                      the parent reaps both and makes N+1 more
 *   kill N             N calls, then SIGKILL to itself
 *   kill-published N   N calls; then its ring (the preload's, found in its maps) left as
 *                      the preload leaves it for an instant when a call ends: one more
 *                      call's record in (a copy of the last one, later), the ring's depth
 *                      not lowered yet; then SIGKILL to itself
 *   segv N             N calls, then a NULL write (SIGSEGV)
 *   abort N            N calls, then abort()
 *   crash-in-call N    N calls, then a dgemm that faults inside OpenBLAS
 *   counted FILE       ddot until killed; FILE holds (started, done) counters (it appears
 *                      whole: made as FILE.new, renamed)
 *   pause N DIR [thread]  N calls (on a thread that exits, with "thread"), creates
 *                      DIR/halfway, waits for DIR/go, N more calls
 *   paced N US         N calls, sleeping US microseconds after each
 *   daemonlate N DIR   N calls, fork; the parent prints its sum and exits 0 at once; the
 *                      child (a daemon) waits for DIR/go, makes N+1 calls, writes its sum
 *                      to DIR/child, creates DIR/done and exits 0
 *   lateconnect N DIR  N calls; a child makes one call and forks a grandchild, then
 *                      waits for DIR/go and leaves by _exit(0) (no goodbye); the
 *                      grandchild, once its parent is gone, makes N+1 calls, creates
 *                      DIR/connected, waits for DIR/end and exits 0; the first process
 *                      exits 0 once the child made its call
 *   forkpaced N US     fork at once; the child does as paced N US, the parent waits
 *   sigblas N          N calls while another thread signals this one as fast as it
 *                      can (more, 1000 at a time, until the handler has run 200
 *                      times or for 10 s); the handler makes one call; prints how
 *                      many in all
 *   daemon N           N calls, fork: the child closes every descriptor above 2, makes
 *                      N+1 calls and exits; the parent N+2 more
 *   closefds N         N calls; closes every descriptor above 2, as a daemon does,
 *                      and puts a socket of its own at each of those numbers;
 *                      N calls on a new thread, N more here; prints the sum and
 *                      how many bytes arrived on its socket ("foreign K")
 *   reaper N K         N calls; a SIGCHLD handler reaps (waitpid WNOHANG) while the
 *                      program forks K children in a row, each one call then _exit(0);
 *                      prints how many the handler reaped, and how many exited 0
 *   rawfork N HOW      N calls, then a fork by the system call itself, which runs no
 *                      atfork handler (syscall(SYS_fork); HOW clone: SYS_clone with
 *                      SIGCHLD, as Chromium's zygote does): the child makes N+2 calls,
 *                      prints their sum and leaves by exit(0) (HOW exit, clone) or
 *                      _exit(0) (_exit); with HOW thread, a thread of the child's makes
 *                      N+3 calls before it makes any; the parent waits, makes N+1 more
 *                      (HOW both: makes them first, while the child makes its own).
 *                      HOW stay: the child makes no call and sleeps 10 s, holding the
 *                      parent's connection, which no atfork handler closed; the parent
 *                      prints its sum and the child's pid ("rawfork S stay PID"), exits 0
 *                      (HOW stay_exit: by _exit(0), no goodbye said)
 *                      Run with OPENBLAS_NUM_THREADS=1: the child lacks the threads of
 *                      OpenBLAS's pool, which its exit would wait for
 *   silent N MS [_exit]  N calls; a socket of its own connected to $OPPROF_SOCKET, which
 *                      says nothing (no hello: a stray client), held by a child that
 *                      makes no call and sleeps 10 s; the parent sleeps MS milliseconds,
 *                      prints its sum and the child's pid ("silent S PID"), exits 0 (by
 *                      _exit(0) with _exit: no goodbye said)
 *   stopped N MS       N calls; a child that makes no call connects to $OPPROF_SOCKET and
 *                      stops itself (SIGSTOP) before it says anything, as a process stopped
 *                      between its connect and its hello; the parent waits for it to stop,
 *                      sleeps MS milliseconds, prints its sum and the child's pid ("stopped S
 *                      PID") and exits 0; the child, continued, exits 0 at once
 *   named N NAME...    a thread for each NAME, one after another: thread I names
 *                      itself NAME with prctl(PR_SET_NAME) (the kernel keeps its
 *                      first 15 bytes), then makes N+I calls
 *   renamed N NAME     a thread makes N calls, names itself NAME with prctl(PR_SET_NAME)
 *                      (errno set to 1234 before), makes N+1 calls, then calls prctl
 *                      with option -1; prints what each prctl returned with its errno
 *                      and the name the kernel kept (PR_GET_NAME)
 */
#define _GNU_SOURCE
#include <cblas.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "../../common/ring.h"

static double x[4] = {1, 2, 3, 4};

static double calls(long n)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        s += cblas_ddot(1, x, 1, x, 1);
    return s;
}

/* n calls, sleeping us microseconds after each. */
static double paced(long n, long us)
{
    double s = 0;
    for (long i = 0; i < n; i++) {
        s += calls(1);
        usleep((useconds_t)us);
    }
    return s;
}

static long arg(int argc, char **argv, int i)
{
    if (i >= argc) {
        fprintf(stderr, "scenarios: missing argument\n");
        exit(2);
    }
    return atol(argv[i]);
}

struct worker {
    int id;
    long n;
    double sum;
};

static void *work(void *p)
{
    struct worker *w = p;
    char name[16];
    snprintf(name, sizeof name, "worker-%d", w->id);
    pthread_setname_np(pthread_self(), name);
    w->sum = calls(w->n);
    return NULL;
}

struct named {
    const char *name;
    long n;
};

static void *work_named(void *p)
{
    struct named *w = p;
    prctl(PR_SET_NAME, w->name, 0, 0, 0);
    calls(w->n);
    return NULL;
}

static void *work_renamed(void *p)
{
    struct named *w = p;
    calls(w->n);
    errno = 1234; /* a successful prctl leaves errno alone */
    int set = prctl(PR_SET_NAME, w->name, 0, 0, 0), set_errno = errno;
    calls(w->n + 1);
    errno = 0;
    int bad = prctl(-1, 0, 0, 0, 0), bad_errno = errno;
    char kept[16] = "";
    prctl(PR_GET_NAME, kept, 0, 0, 0);
    printf("renamed set %d errno %d, bad option %d errno %d, name %s\n", set, set_errno, bad,
           bad_errno, kept);
    return NULL;
}

static void *work_n(void *p)
{
    *(double *)p = calls((long)*(double *)p);
    return NULL;
}

static volatile sig_atomic_t handled; /* the main thread's, and its handler's */
static _Atomic int main_done;         /* the signaller thread reads it */
static pthread_t main_thread;

static void on_usr1(int sig)
{
    (void)sig;
    cblas_ddot(1, x, 1, x, 1);
    handled++;
}

static _Atomic long reaped, reaped_ok; /* by on_chld */

static void on_chld(int sig)
{
    (void)sig;
    int saved_errno = errno, st;
    while (waitpid(-1, &st, WNOHANG) > 0) {
        reaped++;
        reaped_ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    errno = saved_errno;
}

static void *signaller(void *p)
{
    (void)p;
    while (!main_done)
        pthread_kill(main_thread, SIGUSR1);
    return NULL;
}

/* The descriptors above 2 this process has open (at most 256). */
static int open_fds(int *fds)
{
    int nfd = 0;
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent *e; d && (e = readdir(d)) && nfd < 256;) {
        int fd = atoi(e->d_name);
        if (fd > 2 && fd != dirfd(d))
            fds[nfd++] = fd;
    }
    if (d)
        closedir(d);
    return nfd;
}

static void self_path(char *buf, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    buf[n > 0 ? n : 0] = 0;
}

/* kill-published: this process's one ring, as the preload leaves it
 * between the two stores that end a call (publish.h's opp_publish_f):
 * the call in flight at depth 0, its record in (the head past it), the
 * depth not lowered yet. The call is a copy of the ring's last record,
 * 1000 ticks later. */
static void published_unleft(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    unsigned long lo = 0, hi;
    while (f && !lo && fgets(line, sizeof line, f))
        if (!strstr(line, "opprof-ring") || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
            lo = 0;
    if (f)
        fclose(f);
    if (!lo)
        return; /* not profiled */
    struct opp_ring_hdr *r = (struct opp_ring_hdr *)lo;
    uint64_t h = atomic_load(&r->head);
    for (unsigned k = 1; k <= 8 && k <= h; k++) {
        struct opp_rec *last = opp_ring_slot(r, r->capacity, h - k);
        if (opp_rec_slots(last->nargs) != k)
            continue;
        struct opp_rec *rec = opp_ring_slot(r, r->capacity, h);
        memcpy(rec, last, k * sizeof *rec);
        rec->begin = last->end + 1000;
        rec->end = rec->begin + 1000;
        r->open[0].begin = rec->begin;
        r->open[0].fn = rec->fn;
        r->open[0].sp = 0;
        r->open[0].arg[0] = 0;
        r->depth = 1;
        atomic_store(&r->head, h + k);
        return;
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: scenarios MODE [ARGS]\n");
        return 2;
    }
    const char *mode = argv[1];
    char self[4096], num[32];
    if (!strcmp(mode, "loop")) {
        printf("loop %.0f\n", calls(arg(argc, argv, 2)));
    } else if (!strcmp(mode, "threads")) {
        int t = (int)arg(argc, argv, 2);
        long n = arg(argc, argv, 3);
        pthread_t th[64];
        struct worker w[64];
        for (int i = 0; i < t && i < 64; i++) {
            w[i] = (struct worker){i, n + i, 0};
            pthread_create(&th[i], NULL, work, &w[i]);
        }
        double s = 0;
        for (int i = 0; i < t && i < 64; i++) {
            pthread_join(th[i], NULL);
            s += w[i].sum;
        }
        printf("threads %.0f\n", s);
    } else if (!strcmp(mode, "fork")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        pid_t pid = fork();
        if (pid == 0) {
            calls(n + 2);
            exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        s += calls(n + 1);
        printf("fork %.0f child %d\n", s, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    } else if (!strcmp(mode, "forklate")) {
        /* a child that forks a grandchild, which calls at once, and makes
         * its own first call US after the grandchild is gone; each leaves
         * by exit (its goodbye says when), or with _exit by _exit (the
         * collector sees its connection close) */
        long us = arg(argc, argv, 2);
        int quick = argc > 3 && !strcmp(argv[3], "_exit"); /* _exit: no goodbye */
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            pid_t g = fork();
            if (g == 0) {
                calls(1);
                if (quick)
                    _exit(0);
                exit(0);
            }
            int gst;
            waitpid(g, &gst, 0);
            usleep((useconds_t)us);
            calls(1);
            int code = WIFEXITED(gst) ? WEXITSTATUS(gst) : 1;
            if (quick)
                _exit(code);
            exit(code);
        }
        int st;
        waitpid(pid, &st, 0);
        printf("forklate %.0f child %d\n", calls(1), WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    } else if (!strcmp(mode, "exec")) {
        long n = arg(argc, argv, 2);
        calls(n);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            self_path(self, sizeof self);
            snprintf(num, sizeof num, "%ld", n + 4);
            execl(self, self, "loop", num, (char *)NULL);
            _exit(127);
        }
        int st;
        waitpid(pid, &st, 0);
        printf("exec child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    } else if (!strcmp(mode, "forkexec")) {
        calls(arg(argc, argv, 2));
        long k = arg(argc, argv, 3), ok = 0;
        fflush(stdout);
        for (long i = 0; i < k; i++) {
            pid_t pid = fork();
            if (pid == 0) {
                execl("/bin/true", "/bin/true", (char *)NULL);
                _exit(127);
            }
            int st;
            ok += waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
        }
        printf("forkexec %ld\n", ok);
    } else if (!strcmp(mode, "children")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        int ready[2];
        if (pipe(ready))
            return 2;
        pid_t quits = fork();
        if (quits == 0) {
            calls(n + 2);
            _exit(3); /* no atexit, no destructors: no goodbye */
        }
        pid_t killed = fork();
        if (killed == 0) {
            calls(n + 3);
            if (write(ready[1], "r", 1) != 1)
                _exit(2);
            for (;;)
                pause();
        }
        char r;
        if (read(ready[0], &r, 1) != 1)
            return 2;
        kill(killed, SIGKILL);
        int st1, st2;
        waitpid(quits, &st1, 0);
        waitpid(killed, &st2, 0);
        s += calls(n + 1);
        printf("children %.0f exit %d signal %d\n", s, WIFEXITED(st1) ? WEXITSTATUS(st1) : -1,
               WIFSIGNALED(st2) ? WTERMSIG(st2) : -1);
    } else if (!strcmp(mode, "selfexec")) {
        long n = arg(argc, argv, 2);
        calls(n);
        self_path(self, sizeof self);
        snprintf(num, sizeof num, "%ld", n + 1);
        fflush(stdout);
        execl(self, self, "loop", num, (char *)NULL);
        return 127;
    } else if (!strcmp(mode, "kill")) {
        calls(arg(argc, argv, 2));
        kill(getpid(), SIGKILL);
    } else if (!strcmp(mode, "kill-published")) {
        calls(arg(argc, argv, 2));
        published_unleft();
        kill(getpid(), SIGKILL);
    } else if (!strcmp(mode, "segv")) {
        calls(arg(argc, argv, 2));
        *(volatile int *)(uintptr_t)8 = 1;
    } else if (!strcmp(mode, "abort")) {
        calls(arg(argc, argv, 2));
        abort();
    } else if (!strcmp(mode, "crash-in-call")) {
        calls(arg(argc, argv, 2));
        double *a = malloc(64 * 64 * sizeof *a);
        for (int i = 0; i < 64 * 64; i++)
            a[i] = 1;
        /* C points at unmapped memory: OpenBLAS faults while writing it. */
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 64, 64, 64, 1.0, a, 64, a, 64,
                    0.0, (double *)(uintptr_t)4096, 64);
    } else if (!strcmp(mode, "counted")) {
        /* made under another name and renamed once it has its size: a
         * reader that waits for FILE never reads it short */
        char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s.new", argv[2]);
        int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || ftruncate(fd, 4096) < 0)
            return 2;
        volatile long *cnt = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (cnt == MAP_FAILED || rename(tmp, argv[2]) < 0)
            return 2;
        for (;;) {
            cnt[0]++; /* started */
            cblas_ddot(1, x, 1, x, 1);
            cnt[1]++; /* done */
        }
    } else if (!strcmp(mode, "paced")) {
        printf("paced %.0f\n", paced(arg(argc, argv, 2), arg(argc, argv, 3)));
    } else if (!strcmp(mode, "forkpaced")) {
        long n = arg(argc, argv, 2), us = arg(argc, argv, 3);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            printf("forkpaced child %.0f\n", paced(n, us));
            fflush(stdout);
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        printf("forkpaced %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    } else if (!strcmp(mode, "daemonlate")) {
        long n = arg(argc, argv, 2);
        const char *dir = argc > 3 ? argv[3] : ".";
        char path[4200];
        double s = calls(n);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            snprintf(path, sizeof path, "%s/go", dir);
            for (int i = 0; i < 3000 && access(path, F_OK) != 0; i++)
                usleep(10000);
            s = calls(n + 1);
            snprintf(path, sizeof path, "%s/child", dir);
            FILE *f = fopen(path, "w");
            if (f)
                fprintf(f, "daemonlate child %.0f\n", s), fclose(f);
            snprintf(path, sizeof path, "%s/done", dir);
            close(open(path, O_WRONLY | O_CREAT, 0600));
            return 0;
        }
        printf("daemonlate %.0f\n", s);
    } else if (!strcmp(mode, "lateconnect")) {
        long n = arg(argc, argv, 2);
        const char *dir = argc > 3 ? argv[3] : ".";
        char path[4200];
        int made[2];
        if (pipe(made) < 0)
            return 2;
        double s = calls(n);
        fflush(stdout);
        if (fork() == 0) {
            calls(1);
            pid_t child = getpid();
            if (fork() == 0) {
                while (getppid() == child) /* its socket is closed before we are handed on */
                    usleep(1000);
                calls(n + 1);
                snprintf(path, sizeof path, "%s/connected", dir);
                close(open(path, O_WRONLY | O_CREAT, 0600));
                snprintf(path, sizeof path, "%s/end", dir);
                for (int i = 0; i < 3000 && access(path, F_OK) != 0; i++)
                    usleep(10000);
                return 0;
            }
            ssize_t w = write(made[1], "x", 1);
            (void)w;
            snprintf(path, sizeof path, "%s/go", dir);
            for (int i = 0; i < 3000 && access(path, F_OK) != 0; i++)
                usleep(10000);
            _exit(0);
        }
        char c;
        ssize_t r = read(made[0], &c, 1);
        (void)r;
        printf("lateconnect %.0f\n", s);
    } else if (!strcmp(mode, "pause")) {
        long n = arg(argc, argv, 2);
        const char *dir = argc > 3 ? argv[3] : ".";
        char path[4200];
        double s;
        if (argc > 4 && !strcmp(argv[4], "thread")) { /* the first half on a thread gone since */
            double t = (double)n;
            pthread_t th;
            pthread_create(&th, NULL, work_n, &t);
            pthread_join(th, NULL);
            s = t;
        } else {
            s = calls(n);
        }
        snprintf(path, sizeof path, "%s/halfway", dir);
        close(open(path, O_WRONLY | O_CREAT, 0600));
        snprintf(path, sizeof path, "%s/go", dir);
        for (int i = 0; i < 3000 && access(path, F_OK) != 0; i++)
            usleep(10000);
        s += calls(n);
        printf("pause %.0f\n", s);
        return 3; /* a distinctive exit code */
    } else if (!strcmp(mode, "pausefork")) {
        /* n calls, then, once DIR/go is there, k children that make one
         * call each and exit, all reaped */
        long n = arg(argc, argv, 2), k = arg(argc, argv, 3);
        const char *dir = argc > 4 ? argv[4] : ".";
        char path[4200];
        double s = calls(n);
        snprintf(path, sizeof path, "%s/halfway", dir);
        close(open(path, O_WRONLY | O_CREAT, 0600));
        snprintf(path, sizeof path, "%s/go", dir);
        for (int i = 0; i < 3000 && access(path, F_OK) != 0; i++)
            usleep(10000);
        fflush(stdout);
        for (long i = 0; i < k; i++)
            if (fork() == 0) {
                calls(1);
                exit(0);
            }
        int st, ok = 0;
        while (wait(&st) > 0)
            ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
        printf("pausefork %.0f children %d\n", s, ok);
        return 3;
    } else if (!strcmp(mode, "sigblas")) {
        long n = arg(argc, argv, 2);
        struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_RESTART};
        sigaction(SIGUSR1, &sa, NULL);
        main_thread = pthread_self();
        calls(1); /* OpenBLAS sets itself up: not from a handler */
        pthread_t th;
        pthread_create(&th, NULL, signaller, NULL);
        calls(n - 1);
        /* where the two threads share a CPU the handler runs about once a
         * time slice: more calls until it has run often enough */
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (t = t0; handled < 200 && t.tv_sec - t0.tv_sec < 10;
             clock_gettime(CLOCK_MONOTONIC, &t)) {
            calls(1000);
            n += 1000;
        }
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGUSR1);
        pthread_sigmask(SIG_BLOCK, &set, NULL); /* counted from here on: none pending lost */
        main_done = 1;
        pthread_join(th, NULL);
        printf("sigblas %ld handled %ld\n", n + (long)handled, (long)handled);
    } else if (!strcmp(mode, "daemon")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) { /* a daemon's child: every descriptor above 2 closed first */
            int fds[256];
            int nfd = open_fds(fds);
            for (int i = 0; i < nfd; i++)
                close(fds[i]);
            printf("daemon child %.0f\n", calls(n + 1));
            fflush(stdout);
            _exit(0);
        }
        waitpid(pid, NULL, 0);
        printf("daemon %.0f\n", s + calls(n + 2));
    } else if (!strcmp(mode, "closefds")) {
        long n = arg(argc, argv, 2);
        double s = calls(n);
        int fds[256];
        int nfd = open_fds(fds);
        for (int i = 0; i < nfd; i++)
            close(fds[i]);
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) < 0)
            return 2;
        for (int i = 0; i < nfd; i++)
            if (fds[i] != sp[0] && fds[i] != sp[1])
                dup2(sp[0], fds[i]);
        double t = (double)n;
        pthread_t th;
        pthread_create(&th, NULL, work_n, &t);
        pthread_join(th, NULL);
        s += t + calls(n);
        char buf[256];
        ssize_t got = 0, k;
        while ((k = recv(sp[1], buf, sizeof buf, MSG_DONTWAIT)) > 0)
            got += k;
        printf("closefds %.0f foreign %zd\n", s, got);
    } else if (!strcmp(mode, "reaper")) {
        double s = calls(arg(argc, argv, 2));
        long k = arg(argc, argv, 3);
        struct sigaction sa = {.sa_handler = on_chld, .sa_flags = SA_RESTART};
        sigaction(SIGCHLD, &sa, NULL);
        fflush(stdout);
        for (long i = 0; i < k; i++)
            if (fork() == 0) {
                calls(1);
                _exit(0);
            }
        for (int i = 0; i < 1000 && reaped < k; i++)
            usleep(10000);
        printf("reaper %.0f reaped %ld exited 0 %ld\n", s, (long)reaped, (long)reaped_ok);
    } else if (!strcmp(mode, "rawfork")) {
        long n = arg(argc, argv, 2);
        const char *how = argc > 3 ? argv[3] : "";
        int stay = !strcmp(how, "stay") || !strcmp(how, "stay_exit");
        if (strcmp(how, "exit") && strcmp(how, "_exit") && strcmp(how, "clone") &&
            strcmp(how, "thread") && strcmp(how, "both") && !stay) {
            fprintf(stderr, "scenarios: rawfork HOW is exit, _exit, clone, thread, both, stay or "
                            "stay_exit\n");
            return 2;
        }
        double s = calls(n);
        fflush(stdout);
        pid_t pid = !strcmp(how, "clone") ? (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0)
                                          : (pid_t)syscall(SYS_fork);
        if (pid == 0 && stay) {
            sleep(10);
            _exit(0);
        }
        if (pid > 0 && stay) {
            printf("rawfork %.0f %s %d\n", s, how, (int)pid);
            fflush(stdout);
            if (!strcmp(how, "stay_exit"))
                _exit(0);
            return 0;
        }
        if (pid == 0) {
            double c = 0;
            if (!strcmp(how, "thread")) {
                double t = (double)(n + 3);
                pthread_t th;
                pthread_create(&th, NULL, work_n, &t);
                pthread_join(th, NULL);
                c += t;
            }
            c += calls(n + 2);
            printf("rawfork child %.0f\n", c);
            fflush(stdout);
            if (!strcmp(how, "_exit"))
                _exit(0);
            exit(0);
        }
        int st;
        if (!strcmp(how, "both"))
            s += calls(n + 1);
        waitpid(pid, &st, 0);
        if (strcmp(how, "both"))
            s += calls(n + 1);
        printf("rawfork %.0f child %d\n", s, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    } else if (!strcmp(mode, "silent")) {
        double s = calls(arg(argc, argv, 2));
        const char *path = getenv("OPPROF_SOCKET");
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (!path || strlen(path) >= sizeof a.sun_path || fd < 0) {
            fprintf(stderr, "scenarios: silent wants OPPROF_SOCKET\n");
            return 2;
        }
        strcpy(a.sun_path, path);
        if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
            perror("scenarios: connect");
            return 1;
        }
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            sleep(10);
            _exit(0);
        }
        close(fd);
        struct timespec ts = {arg(argc, argv, 3) / 1000, arg(argc, argv, 3) % 1000 * 1000000};
        nanosleep(&ts, NULL);
        printf("silent %.0f %d\n", s, (int)pid);
        fflush(stdout);
        if (argc > 4 && !strcmp(argv[4], "_exit"))
            _exit(0);
    } else if (!strcmp(mode, "stopped")) {
        double s = calls(arg(argc, argv, 2));
        const char *path = getenv("OPPROF_SOCKET");
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        if (!path || strlen(path) >= sizeof a.sun_path) {
            fprintf(stderr, "scenarios: stopped wants OPPROF_SOCKET\n");
            return 2;
        }
        strcpy(a.sun_path, path);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            /* a session of its own: its parent's exit would otherwise
             * orphan its process group, and the kernel continues a
             * stopped member of one (SIGHUP, SIGCONT) */
            setsid();
            int fd = socket(AF_UNIX, SOCK_STREAM, 0);
            if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0)
                _exit(1);
            raise(SIGSTOP);
            _exit(0);
        }
        int st = 0;
        if (pid < 0 || waitpid(pid, &st, WUNTRACED) != pid || !WIFSTOPPED(st)) {
            fprintf(stderr, "scenarios: the child did not stop\n");
            return 1;
        }
        struct timespec ts = {arg(argc, argv, 3) / 1000, arg(argc, argv, 3) % 1000 * 1000000};
        nanosleep(&ts, NULL);
        printf("stopped %.0f %d\n", s, (int)pid);
        fflush(stdout);
    } else if (!strcmp(mode, "named")) {
        long n = arg(argc, argv, 2);
        for (int i = 3; i < argc; i++) {
            struct named w = {argv[i], n + i - 3};
            pthread_t th;
            pthread_create(&th, NULL, work_named, &w);
            pthread_join(th, NULL);
        }
        printf("named %d\n", argc - 3);
    } else if (!strcmp(mode, "renamed")) {
        long n = arg(argc, argv, 2);
        arg(argc, argv, 3); /* NAME given */
        struct named w = {argv[3], n};
        pthread_t th;
        pthread_create(&th, NULL, work_renamed, &w);
        pthread_join(th, NULL);
    } else {
        fprintf(stderr, "scenarios: unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
