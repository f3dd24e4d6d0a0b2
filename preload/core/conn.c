/* The connection to the collector (conn.h): one socket per process, kept
 * at a high descriptor and checked by identity before each message, sends
 * bounded by a timeout, a fork child's connection made at its first
 * message. Failures of ours print one line and turn profiling off; the
 * program itself never notices (errno, signals and results untouched). */
#include "core/conn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "proto.h"

static struct {
    _Atomic int on; /* recording (connected, or a fork child to connect at its first record) */
    int sock;       /* connection to the collector */
    int hello_due;  /* a fork child that has not connected yet */
    int child_due;  /* a fork child just connected: on_child runs */
    int mode_due;   /* the collector's MODE, the answer to our hello on sock, is not read yet */
    _Atomic int mode; /* the collector's (enum opp_mode), -1 till it said; a fork child's
                         collector is its parent's */
    int env_summary;  /* OPPROF_MODE=summary here: what stands in till it said */
    void (*on_child)(void);
    dev_t sock_dev; /* what sock is: a program may close the number and reuse it */
    ino_t sock_ino;
    int root;          /* this process started the collector */
    int root_image;    /* an exec of that process (OPPROF_ROOT_PID is ours): it waits too */
    int collector_pid; /* when root: the collector's, as it said when ready */
    int clock;
    uint64_t born[2];     /* a fork child: its clock's ticks and realtime ns at the fork */
    pthread_mutex_t lock; /* the socket, fresh and msg */
    int fresh[2];         /* a connection being made, not sock yet, and its copy while it moves to a
                     high number: the program's descriptors until then (conn_left) */
    _Atomic int warned;
    char socket_path[108];
    char output[PATH_MAX];
    uint8_t msg[OPP_MSG_MAX];
} conn = {.sock = -1, .mode = -1, .lock = PTHREAD_MUTEX_INITIALIZER, .fresh = {-1, -1}};

/* This thread's side of conn.lock. A signal handler may send while the
 * thread it interrupted holds the lock (a SIGCHLD handler's waitpid, see
 * reap.c, landing inside fork() or inside one of our sends): locking again
 * would hang the program. Its small messages wait here instead and go out
 * when the thread lets the lock go; past DEFERRED_MAX they are lost (a
 * child's end then reads as lost in the trace). */
enum { DEFERRED_MAX = 32, DEFERRED_BYTES = 16 }; /* REAPED's 16 bytes: 640 of static TLS */
static __thread struct {
    volatile sig_atomic_t held; /* how often this thread holds conn.lock or is about to (a
                                   handler's fork() takes it inside a conn_lock) */
    volatile sig_atomic_t owns; /* holds it: between locking and unlocking */
    int n;                      /* messages in q (atomic: handlers append) */
    struct {
        uint16_t type;
        uint8_t size;
        uint8_t payload[DEFERRED_BYTES];
    } q[DEFERRED_MAX];
} mine;

static void conn_lock(void)
{
    mine.held++;
    atomic_signal_fence(memory_order_seq_cst);
    pthread_mutex_lock(&conn.lock);
    mine.owns++;
    atomic_signal_fence(memory_order_seq_cst);
}

/* The connection's lock let go by this thread (it holds it). */
static void conn_release(void)
{
    mine.owns--;
    atomic_signal_fence(memory_order_seq_cst);
    pthread_mutex_unlock(&conn.lock);
}

void opp_give_up(const char *what, int err)
{
    atomic_store(&conn.on, 0);
    if (atomic_exchange(&conn.warned, 1))
        return;
    opp_say_err(what, err);
}

int opp_agent_on(void)
{
    return atomic_load(&conn.on);
}

uint64_t opp_agent_ticks(void)
{
    return opp_ticks(conn.clock);
}

void opp_conn_on_child_connect(void (*fn)(void))
{
    conn.on_child = fn;
}

/* A copy of fd at the number the descriptor limit (soft) rl names, none
 * the program can open: the soft limit is raised by one for the copy and
 * put back (a descriptor stays past a limit lowered after it). Only under
 * a limit of at most 4096, which keeps the kernel's table small, below
 * the hard limit; -1 otherwise. */
static int past_limit(int fd, const struct rlimit *rl)
{
    if (rl->rlim_cur == RLIM_INFINITY || rl->rlim_cur > 4096 || rl->rlim_cur >= rl->rlim_max)
        return -1;
    int saved_errno = errno; /* a sandbox may refuse setrlimit */
    struct rlimit one_more = {rl->rlim_cur + 1, rl->rlim_max};
    int high = -1;
    if (!setrlimit(RLIMIT_NOFILE, &one_more)) {
        high = fcntl(fd, F_DUPFD_CLOEXEC, (int)rl->rlim_cur);
        setrlimit(RLIMIT_NOFILE, rl);
    }
    errno = saved_errno;
    return high;
}

/* Our socket moves to a high descriptor number, out of the way of the
 * program's own (at_start, the agent's start, before the program's own
 * threads: past its limit where it can, so that a program that opens
 * exactly as many as its limit allows gets them all), and is remembered
 * by identity: a program that closes every descriptor (a daemon) may get
 * the number back for a socket of its own, and nothing of ours may ever
 * be written there. */
static int adopt_socket(int fd, int at_start)
{
    struct rlimit rl;
    int low = 512, high = -1;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        if (at_start) /* later, a program thread may be changing the limit */
            high = past_limit(fd, &rl);
        if (rl.rlim_cur != RLIM_INFINITY)
            low = rl.rlim_cur / 2 < 4096 ? (int)(rl.rlim_cur / 2) : 4096;
    }
    if (high < 0 && low > fd)
        high = fcntl(fd, F_DUPFD_CLOEXEC, low);
    if (high >= 0) {
        conn.fresh[1] = high;
        close(fd);
        conn.fresh[0] = fd = high;
        conn.fresh[1] = -1;
    }
    /* A stopped collector: a send that cannot go within 2 s fails (and
     * we stop recording) rather than hold the program. */
    struct timeval tv = {.tv_sec = 2};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    struct stat st;
    if (fstat(fd, &st) == 0) {
        conn.sock_dev = st.st_dev;
        conn.sock_ino = st.st_ino;
    }
    return fd;
}

/* Whether conn.sock is still the socket we connected (async-signal-safe). */
static int socket_ours(void)
{
    struct stat st;
    return conn.sock >= 0 && fstat(conn.sock, &st) == 0 && S_ISSOCK(st.st_mode) &&
           st.st_dev == conn.sock_dev && st.st_ino == conn.sock_ino;
}

/* fd, conn.fresh's, closed. */
static void close_fresh(int fd)
{
    close(fd);
    conn.fresh[0] = -1;
}

/* With conn.lock held (or at our start): a new connection to the
 * collector, its socket in conn.fresh from the moment it exists, until it
 * is conn.sock or closed; the socket, or -errno. Bounded: a stopped or
 * swamped collector must not hold the program. */
static int connect_fresh(void)
{
    int fd = opp_connect_socket(2000);
    if (fd < 0)
        return fd;
    conn.fresh[0] = fd;
    int rc = opp_connect_on(fd, conn.socket_path, 2000);
    if (rc) {
        close_fresh(fd);
        return rc;
    }
    return fd;
}

static void connect_and_hello(int at_start)
{
    int fd = connect_fresh();
    if (fd == -ENOENT && !at_start) {
        /* A fork child whose parent's collector is gone by its first
         * call, its socket removed: the trace was finished, no process
         * of the run connected then (a child connects at its first call) */
        opp_give_up("the trace was finished before this process's first call (no process of the "
                    "run was connected then), profiling off",
                    0);
        return;
    }
    if (fd < 0) {
        opp_give_up(fd == -ETIMEDOUT ? "the collector did not take us within 2 s (stopped or "
                                       "swamped), profiling off"
                                     : "cannot reach the collector, profiling off",
                    fd == -ETIMEDOUT ? 0 : -fd);
        return;
    }
    conn.sock = adopt_socket(fd, at_start);
    conn.fresh[0] = -1; /* ours, as conn.sock */
    fd = conn.sock;
    int rc = opp_hello(conn.sock, conn.msg, conn.clock, conn.born[0] ? conn.born : NULL);
    if (rc) {
        opp_give_up("the collector refused us, profiling off", -rc);
        close(fd);
        conn.sock = -1;
        return;
    }
    conn.mode_due = 1;
    atomic_store(&conn.on, 1);
}

/* With conn.lock held, at a fork child's first message (its first
 * record): connect and say hello as a process of its own. The fork handler
 * left this here, so a child that only execs never connects. */
static int child_connect(void)
{
    conn.hello_due = 0;
    connect_and_hello(0); /* says why, and turns recording off, when it fails */
    if (conn.sock < 0)
        return -ENOTCONN;
    conn.child_due = 1;
    return 0;
}

/* With conn.lock held, before anything is sent: 0 when conn.sock is ours
 * (a fork child connects here first). If the program closed it, the number
 * is the program's now (never written to, never closed): connect again and
 * carry on as the same process (the collector kept draining our rings
 * meanwhile). */
static int socket_ready(void)
{
    if (conn.hello_due)
        return child_connect();
    if (socket_ours())
        return 0;
    conn.sock = -1;
    int fd = connect_fresh();
    if (fd < 0)
        return fd;
    fd = adopt_socket(fd, 0);
    conn.mode_due = 0; /* it was on the closed socket, if not read */
    uint32_t mode = 0, got = 0;
    int rc = opp_send_msg(fd, OPP_MSG_RESUME, NULL, 0, -1);
    if (!rc)
        rc = opp_wait_msg(fd, OPP_MSG_RESUMED, &mode, sizeof mode, &got, 2000);
    if (!rc && got == sizeof mode)
        atomic_store(&conn.mode, mode == OPP_MODE_SUMMARY);
    if (rc == -ECONNRESET) {
        /* Refused: the collector saw no ring of ours (none made yet, as
         * in a daemon's child that closed every descriptor first) and
         * ended us. Carry on as a new instance of this process. */
        close_fresh(fd);
        if ((fd = connect_fresh()) < 0)
            return fd;
        fd = adopt_socket(fd, 0);
        rc = opp_hello(fd, conn.msg, conn.clock, NULL);
        conn.mode_due = !rc;
    }
    if (rc) {
        close_fresh(fd);
        return rc;
    }
    conn.sock = fd;
    conn.fresh[0] = -1;
    return 0;
}

/* With conn.lock held: the connection failed (a send that could not go
 * within its timeout, a resume refused). Say so once and record nothing
 * more; the socket is closed when it is still ours. */
static void connection_lost(const char *why, int err)
{
    if (socket_ours())
        close(conn.sock);
    conn.sock = -1;
    conn.mode_due = 0;
    opp_give_up(why, err);
}

/* Whether a send's error says the collector is stopped or gone (what
 * lost says), not that something refused the send itself (a seccomp
 * filter's EPERM, no memory, no descriptor left). */
static int collector_lost(int err)
{
    return err == EAGAIN || err == EWOULDBLOCK || err == ETIMEDOUT || err == EPIPE ||
           err == ECONNRESET || err == ECONNREFUSED || err == ENOTCONN || err == ENOENT;
}

/* With conn.lock held: one message, the connection made ready first; a
 * failure says lost (or why the send itself failed) and turns recording
 * off. */
static int send_locked(unsigned type, const void *payload, unsigned size, int fd, const char *lost)
{
    int rc = -ENOTCONN;
    if (atomic_load(&conn.on)) {
        rc = socket_ready();
        if (!rc)
            rc = opp_send_msg(conn.sock, (uint16_t)type, payload, size, fd);
        if (rc && atomic_load(&conn.on))
            connection_lost(
                collector_lost(-rc) ? lost : "cannot send to the collector, profiling off", -rc);
    }
    return rc;
}

static const char lost_msg[] = "the collector took no message within 2 s (stopped, or gone), "
                               "profiling off";

/* With conn.lock held: what this thread's signal handlers left to send,
 * in order; one that lands meanwhile is sent too. */
static void send_deferred(void)
{
    for (int i = 0;;) {
        int n = __atomic_load_n(&mine.n, __ATOMIC_SEQ_CST);
        if (i == n) {
            if (__atomic_compare_exchange_n(&mine.n, &n, 0, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
                return;
            continue;
        }
        send_locked(mine.q[i].type, mine.q[i].payload, mine.q[i].size, -1, lost_msg);
        i++;
    }
}

/* Sends what this thread deferred and releases conn.lock; then runs what a
 * fork child's first connection left to run (it starts threads: never with
 * the lock held). A handler's message that lands after the last look is
 * sent at once. */
static void conn_unlock(void)
{
    for (;;) {
        send_deferred();
        int child = conn.child_due;
        conn.child_due = 0;
        conn_release();
        atomic_signal_fence(memory_order_seq_cst);
        mine.held--;
        atomic_signal_fence(memory_order_seq_cst);
        if (child && conn.on_child)
            conn.on_child();
        if (!__atomic_load_n(&mine.n, __ATOMIC_SEQ_CST))
            return;
        conn_lock();
    }
}

/* A signal handler's message while its thread holds conn.lock: kept for
 * conn_unlock when small, else -EWOULDBLOCK (the caller tries again at
 * its next call). */
static int defer(unsigned type, const void *payload, unsigned size, int fd)
{
    if (fd >= 0 || size > DEFERRED_BYTES)
        return -EWOULDBLOCK;
    sigset_t all, old; /* a handler of another signal landing here would take the same slot */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int n = __atomic_load_n(&mine.n, __ATOMIC_SEQ_CST), rc = -EWOULDBLOCK;
    if (n < DEFERRED_MAX) {
        mine.q[n].type = (uint16_t)type;
        mine.q[n].size = (uint8_t)size;
        memcpy(mine.q[n].payload, payload, size);
        __atomic_store_n(&mine.n, n + 1, __ATOMIC_SEQ_CST);
        rc = 0;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* Around a use of the connection with its lock (a send, a look for the
 * collector's answer): the program's asynchronous signals wait, and a
 * jump out of it (a handler of a synchronous signal: a seccomp filter's
 * SIGSYS for our system call) leaves nothing held. */
struct conn_guard {
    struct opp_guard g;
    sig_atomic_t held, owns; /* mine's before */
};

/* A handler jumped out of a use of the connection, on this thread: a
 * connection it was making closed (the program's descriptors), the lock
 * let go (every other thread would hang on it), and profiling off, said:
 * the next system call of ours would be trapped again, and what that
 * send carried is lost. */
static void conn_left(struct opp_unwind *u)
{
    struct conn_guard *g = (struct conn_guard *)u;
    for (int i = 0; i < 2 && mine.owns > g->owns; i++)
        if (conn.fresh[i] >= 0) {
            close(conn.fresh[i]);
            conn.fresh[i] = -1;
        }
    while (mine.owns > g->owns)
        conn_release();
    mine.held = g->held;
    opp_give_up("a signal handler jumped out of our send to the collector (a seccomp filter's "
                "SIGSYS?), profiling off",
                0);
    opp_guard_left(&g->g);
}

static void guard_on(struct conn_guard *g)
{
    g->held = mine.held;
    g->owns = mine.owns;
    opp_guard_on(&g->g, conn_left);
}

int opp_conn_send(unsigned type, const void *payload, unsigned size, int fd, const char *lost)
{
    opp_fork_check(); /* a child whose fork ran no atfork handler holds the parent's socket */
    int saved_errno = errno; /* program threads send too (a new string inside an op) */
    int rc;
    if (mine.held) {
        int cancel = opp_cancel_off();
        rc = defer(type, payload, size, fd);
        opp_cancel_restore(cancel);
    } else {
        struct conn_guard g;
        guard_on(&g);
        conn_lock();
        rc = send_locked(type, payload, size, fd, lost);
        conn_unlock();
        opp_guard_off(&g.g);
    }
    errno = saved_errno;
    return rc;
}

/* With conn.lock held: the collector's MODE, when it has come, never
 * waiting for it. It is the first thing the collector sends on a
 * connection, whole (20 bytes there, or none yet): the bytes are looked
 * at first and taken only when they are all there, so nothing is left
 * half read for the goodbye's answer. */
static void read_mode(void)
{
    if (!conn.mode_due || !socket_ours())
        return;
    struct {
        struct opp_msg_header h;
        uint32_t mode;
    } m;
    _Static_assert(sizeof m == sizeof m.h + 4, "a MODE message, unpadded");
    if (recv(conn.sock, &m, sizeof m, MSG_PEEK | MSG_DONTWAIT) != (ssize_t)sizeof m)
        return; /* not yet: the collector has not read our hello (busy, stopped), or is gone */
    conn.mode_due = 0;
    if (m.h.magic != OPP_PROTO_MAGIC || m.h.type != OPP_MSG_MODE || m.h.size != sizeof m.mode)
        return; /* not what we wait for: left there, the goodbye says so */
    if (recv(conn.sock, &m, sizeof m, MSG_DONTWAIT) == (ssize_t)sizeof m)
        atomic_store(&conn.mode, m.mode == OPP_MODE_SUMMARY ? OPP_MODE_SUMMARY : OPP_MODE_FULL);
}

int opp_conn_summary(void)
{
    int mode = atomic_load(&conn.mode);
    if (mode >= 0)
        return mode == OPP_MODE_SUMMARY;
    opp_fork_check(); /* a child whose fork ran no atfork handler holds the parent's socket */
    if (mine.held)    /* a signal handler inside our send: at a later call */
        return conn.env_summary;
    int saved_errno = errno;
    struct conn_guard g;
    guard_on(&g);
    conn_lock();
    read_mode();
    conn_unlock();
    opp_guard_off(&g.g);
    errno = saved_errno;
    mode = atomic_load(&conn.mode);
    return mode >= 0 ? mode == OPP_MODE_SUMMARY : conn.env_summary;
}

int opp_agent_send(unsigned type, const void *payload, unsigned size)
{
    return opp_conn_send(type, payload, size, -1, lost_msg);
}

int opp_conn_start(const char *socket, int clock)
{
    conn.clock = clock;
    const char *mode = getenv("OPPROF_MODE");
    conn.env_summary = mode && !strcmp(mode, "summary");
    if (socket) {
        if (strlen(socket) >= sizeof conn.socket_path) {
            opp_give_up("OPPROF_SOCKET is too long, profiling off", 0);
            return -ENAMETOOLONG;
        }
        strcpy(conn.socket_path, socket);
        const char *root_pid = getenv("OPPROF_ROOT_PID");
        conn.root_image = root_pid && atoi(root_pid) == (int)getpid();
    } else {
        int rc = opp_launch_collector(conn.socket_path, sizeof conn.socket_path, conn.output,
                                      sizeof conn.output, &conn.collector_pid);
        if (rc) {
            atomic_store(&conn.warned, 1); /* said */
            return rc;
        }
        conn.root = 1;
        /* Every process this one starts joins the same trace; its own
         * exec (sh -c 'exec CMD', env) knows itself by its pid. */
        setenv("OPPROF_SOCKET", conn.socket_path, 1);
        char pid[16];
        snprintf(pid, sizeof pid, "%d", (int)getpid());
        setenv("OPPROF_ROOT_PID", pid, 1);
    }
    connect_and_hello(1);
    return atomic_load(&conn.on) ? 0 : -ENOTCONN;
}

void opp_conn_atfork_prepare(void)
{
    conn_lock();
}
void opp_conn_atfork_parent(void)
{
    conn_unlock();
}

/* In a fork child: the parent's socket closed (our copy of it), the
 * child's connection made at its first message. The parent's is
 * forgotten before the close: a signal handler that jumps out of it (a
 * seccomp filter's SIGSYS) leaves a child that connects as itself (our
 * copy then stays open), never one that speaks on its parent's
 * connection, and the child's cancel state as it was (opp_guard). */
static void forget_parent(void)
{
    struct opp_guard g; /* a close: the forking thread's pending cancel is the child's */
    opp_guard_hold(&g, NULL, opp_guard_undo);
    conn.born[0] = opp_ticks(conn.clock); /* when it started, not when it first records */
    conn.born[1] = opp_real_ns();
    conn.root = 0;
    int parent_sock = socket_ours() ? conn.sock : -1; /* else the number is the program's */
    conn.sock = -1;
    conn.hello_due = 1;
    conn.mode_due = 0; /* the parent's to read; the child's own hello is answered again */
    if (parent_sock >= 0)
        close(parent_sock);
    opp_guard_off(&g);
}

/* What this thread deferred is the parent's to send. */
void opp_conn_forked(void)
{
    conn_release();
    mine.n = 0;
    mine.held--; /* the prepare's; a conn_lock a handler's fork() interrupted still counts */
    forget_parent();
}

void opp_conn_raw_forked(void)
{
    pthread_mutex_init(&conn.lock, NULL);
    forget_parent();
}

int opp_conn_interrupted(void)
{
    return mine.held != 0;
}

int opp_conn_idle(void)
{
    opp_fork_check(); /* a child whose fork ran no atfork handler: idle once it forgot */
    conn_lock();
    int idle = conn.hello_due || conn.sock < 0;
    conn_unlock();
    return idle;
}

void opp_conn_goodbye(void)
{
    int cancel = opp_cancel_off();
    conn_lock();
    send_deferred();
    int rc = socket_ready();
    uint64_t end = opp_ticks(conn.clock); /* its end, not when the collector reads the goodbye */
    if (!rc)
        rc = opp_send_msg(conn.sock, OPP_MSG_BYE, &end, sizeof end, -1);
    uint64_t counts[OPP_ACK_FIELDS] = {0};
    uint32_t got = 0;
    /* Only the process that started the collector waits: for the finished
     * trace, to name it, as long as the collector makes progress, never on
     * one that is stopped or stuck; an exec of it (whose collector says
     * where the trace is) at most a second, as its goodbye finishes the
     * trace. Any other process's records are in shared memory and outlive
     * it: it leaves at once, its goodbye read whenever the collector reads
     * (a busy or stopped one later). */
    struct opp_patience pat = {.pid = conn.root ? conn.collector_pid : 0,
                               .trace = conn.root ? conn.output : NULL,
                               .quiet_ms = 1000,
                               .max_ms = conn.root ? 600000 : 1000};
    int waits = conn.root || conn.root_image;
    uint32_t mode;
    if (!rc && waits && conn.mode_due) { /* the hello's answer comes first, never read yet */
        rc = opp_wait_answer(conn.sock, OPP_MSG_MODE, &mode, sizeof mode, &got, &pat);
        conn.mode_due = 0;
    }
    if (!rc && waits)
        rc = opp_wait_answer(conn.sock, OPP_MSG_ACK, counts, sizeof counts, &got, &pat);
    mine.n = 0; /* after the goodbye: nothing more is read */
    /* The process is not gone yet: its other threads, and the destructors
     * that run after ours, may still record, a thread's first call too,
     * while the collector reads on (it ends the process once it is gone).
     * Not when this goodbye finished the trace, or the collector is gone:
     * then nothing more is sent, decided before a sender waiting on the
     * lock can send. */
    int reads_on = !rc;
    if (waits && rc == -ETIMEDOUT)
        reads_on = !conn.root; /* slow, not gone: the first process has stopped waiting */
    else if (waits)
        reads_on = !rc && got == sizeof counts && counts[OPP_ACK_CONNECTED];
    if (!reads_on)
        atomic_store(&conn.on, 0);
    conn_release();
    mine.held--;
    if (rc == -ETIMEDOUT && !conn.root) {
        /* an exec of the first process: the collector says where */
    } else if (rc == -ETIMEDOUT && pat.state == 'T') {
        opp_agent_say("the collector is stopped (SIGSTOP): ", conn.output,
                      " is finished once it continues");
    } else if (rc == -ETIMEDOUT) {
        opp_agent_say("the collector did not answer for 1 s: ", conn.output,
                      " may not be finished yet");
    } else if (rc) {
        if (!atomic_exchange(&conn.warned, 1))
            opp_agent_say("the collector is gone (killed or crashed): the trace misses what this "
                          "process recorded after that",
                          conn.root ? "; what it holds is in " : "", conn.root ? conn.output : "");
    } else if (conn.root && got == sizeof counts && counts[OPP_ACK_CONNECTED]) {
        /* the collector says where the trace went once it is finished
         * (collector.c's say_where), as it does when it is finished now */
        opp_agent_say("trace is being written to ", conn.output, " (other processes still run)");
    }
    opp_cancel_restore(cancel);
}
