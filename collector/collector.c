/* The collector's serving loop: accepts profiled processes (same user only),
 * has their messages handled (messages.c) and their rings drained into the
 * trace as it goes (drain.c), drops the clients that went (clients.c), and
 * finishes the trace. A ring's tail only moves after its records are in
 * the file, so a record is always in exactly one of the two places. Its
 * state is state.h's. */
#include "collector.h"
#include "gpu.h"
#include "info.h"
#include "state.h"
#include "summary.h"
#include "top_agg.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_signal(int sig)
{
    collector.stop = sig;
}

static int listen_on(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path) {
        opp_coll_logmsg("socket path too long: %s", path);
        return -1;
    }
    /* The socket is bound and listening under a temporary name, then
     * linked into place: whoever sees the path can connect at once (a
     * path that exists before listen() answers ECONNREFUSED), and link(),
     * unlike rename(), never takes over a path another collector holds. */
    int n = snprintf(a.sun_path, sizeof a.sun_path, "%s.%d.tmp", path, (int)getpid());
    int staged = n > 0 && (size_t)n < sizeof a.sun_path;
    if (!staged)
        strcpy(a.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        opp_coll_logmsg("socket: %s", strerror(errno));
        return -1;
    }
    if (staged)
        unlink(a.sun_path); /* a leftover of a killed collector with our pid */
    mode_t old = umask(0177); /* the socket itself: owner only */
    int rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    umask(old);
    if (rc < 0 || listen(fd, SOMAXCONN) < 0 || (staged && link(a.sun_path, path) < 0)) {
        int e = errno;
        opp_coll_logmsg("cannot listen on %s: %s", path, strerror(e == EEXIST ? EADDRINUSE : e));
        if (rc == 0 && staged)
            unlink(a.sun_path);
        close(fd);
        return -1;
    }
    if (staged)
        unlink(a.sun_path);
    return fd;
}

/* The `opprof run` that started it is gone (killed before it asked to
 * finish: we have another parent) and nobody has been connected for a
 * while (an exec, or a daemon's child yet to connect, leaves a moment with
 * nobody). */
static int parent_gone(int procs, uint64_t now)
{
    if (procs || getppid() == collector.o->parent) {
        collector.parent_gone_idle = 0;
        return 0;
    }
    if (!collector.parent_gone_idle)
        collector.parent_gone_idle = now;
    return now - collector.parent_gone_idle > 300000000ull;
}

/* No process is connected, the starting process was: whether it is gone
 * for good. Once the kernel says it is gone, whatever connection of its
 * was left. While it runs, not as long as a connection of its pid is
 * open (a reconnection not yet said). An exec keeps its pid,
 * and the new image connects once its libraries' constructors, which run
 * before ours, are done, however long they take: waited for while it runs
 * with our socket in its environment. Any other is given 300 ms: the
 * first image itself, about to exec once it closed our socket (its /proc
 * environment is the one it started with, without our socket, which it
 * set), one whose environment /proc does not show, or an image that will
 * not connect (no preload, or a run of its own). Looked at every 100 ms. */
static int root_gone_for_good(uint64_t now)
{
    if (now - collector.root_checked < 100000000ull)
        return 0;
    collector.root_checked = now;
    pid_t root = collector.o->root_pid;
    if (!opp_coll_process_runs(root))
        return 1;
    if (!collector.root_gone) /* it runs, a connection of its pid still open */
        return 0;
    return opp_coll_exec_connects(root) != 1 && now - collector.root_gone_at > 300000000ull;
}

/* Whether a process connects to a run whose connected processes are all
 * gone: one accepted in this pass, or waiting, has its hello to come (read
 * in the next pass). When none, the socket's name is removed before the
 * trace is ended (its last writes, their sync to disk): a process that
 * connects from then on is told the trace was finished, not left unread
 * in the listener's queue; one that came in before is read, and its run
 * goes on without the name. */
static int connecting(void)
{
    if (opp_coll_others_running(NULL))
        return 1;
    opp_coll_unname();
    return opp_coll_others_running(NULL) > 0;
}

/* The clients that pfd[0..nc) found readable (or hung up), read in the
 * order they connected (a forked child that execs at once must get its
 * number before its new image does). A dropped client shifts the later
 * ones down by one: `gone`. */
static void read_clients(const struct pollfd *pfd, int nc)
{
    for (int i = 0, gone = 0; i < nc && !collector_finished; i++) {
        if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        const char *why = NULL;
        if (opp_coll_on_readable(i - gone, &why) < 0 &&
            (why || !opp_coll_orphan(collector.c[i - gone], 0))) {
            opp_coll_drop_client(i - gone, why);
            gone++;
        }
    }
}

/* What the clients sent before a stop signal was seen (goodbyes queued
 * while the collector was stopped: the kernel hangs up and continues an
 * orphaned process group with a stopped member), read before the trace is
 * finished, so that each process ends as it said rather than as still
 * running. A bounded number of reads: the signal asks for an end. */
static void read_pending(void)
{
    static struct pollfd pfd[MAX_CLIENTS];
    for (int round = 0; round < 64 && !collector_finished; round++) {
        int nc = collector.nc;
        for (int i = 0; i < nc; i++)
            pfd[i] = (struct pollfd){.fd = collector.c[i]->fd, .events = POLLIN};
        if (poll(pfd, (nfds_t)nc, 0) <= 0)
            return;
        read_clients(pfd, nc);
    }
}

/* Client i, found gone: what its socket still holds is read (a closed
 * peer's to its end; one a raw-fork child holds open, what is there now:
 * a thread's ring comes in a read of its own, as each carries a
 * descriptor), then it is dropped. */
static void drop_gone(int i)
{
    struct client *c = collector.c[i];
    const char *why = NULL;
    for (int k = 0; k < 65536 && c->fd >= 0 && !collector_finished; k++) {
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        if (poll(&p, 1, 0) != 1 || opp_coll_on_readable(i, &why) < 0)
            break;
    }
    if (c->into) { /* a connection another client resumed: the loop's */
        c->gone = 0;
        return;
    }
    if (!collector_finished)
        opp_coll_drop_client(i, why);
}

int opp_collector_run(const struct opp_collector_opts *o)
{
    memset(&collector, 0, sizeof collector);
    collector_finished = 0;
    collector.o = o;
    collector.paused = o->paused;
    char err[512];
    collector.enc = malloc(ENC_BYTES);
    if (o->summary && !(collector.sum = opp_sum_new(o->max_nodes))) {
        free(collector.enc);
        collector.enc = NULL;
    }
    if (!collector.enc) {
        opp_coll_logmsg("out of memory");
        return 1;
    }
    collector.live = opp_top_agg_new(); /* NULL: `opprof top` shows counts, no rows */
    collector.live_on = o->top && collector.live;
    signal(SIGXFSZ, SIG_IGN); /* a file size limit: the write fails and is said */
    /* A trace already there is replaced only when a process says hello:
     * a run that records nothing (its command never ran, or died before
     * connecting) leaves it as it was. The lock is taken now. */
    if (opp_tw_open_held(&collector.tw, o->output, err, sizeof err)) {
        opp_coll_logmsg("%s", err);
        return 1;
    }
    /* Two samples a few ms apart, so even a trace cut right away has a
     * usable TSC calibration; more follow while it runs. */
    opp_coll_write_clock();
    uint64_t t0 = opp_mono_ns();
    while (opp_mono_ns() - t0 < 5000000ull)
        ;
    opp_coll_write_clock();
    /* Into the background before listening: the socket's peer credentials
     * (SO_PEERCRED, which `opprof ctl list` reads) are the listener's, so
     * they name this process, not a parent gone at once. Whoever waits
     * for us reads the ready fd, which a failure below closes unwritten. */
    if (o->daemon) {
        pid_t pid = fork();
        if (pid < 0) {
            opp_coll_logmsg("fork: %s", strerror(errno));
            return 1;
        }
        if (pid > 0)
            _exit(0); /* the parent only waits for this */
    }
    collector.lfd = listen_on(o->socket_path);
    if (collector.lfd < 0) {
        if (!collector.tw.held) /* made by us, empty */
            unlink(o->output);
        opp_tw_close(&collector.tw);
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    if (o->ready_fd >= 0) {
        char ready[24]; /* "1" and our pid: a process that waits for us can tell our state */
        int n = snprintf(ready, sizeof ready, "1%d", (int)getpid());
        ssize_t w = write(o->ready_fd, ready, (size_t)n);
        (void)w;
        close(o->ready_fd);
    }
    collector.started = opp_mono_ns();
    int busy = 0;
    struct pollfd pfd[MAX_CLIENTS + 1];
    while (!collector_finished) {
        pfd[0] = (struct pollfd){.fd = collector.lfd, .events = POLLIN};
        for (int i = 0; i < collector.nc; i++)
            pfd[i + 1] =
                (struct pollfd){.fd = collector.c[i]->fd, .events = POLLIN}; /* -1: skipped */
        int nc = collector.nc;
        int pr = poll(pfd, (nfds_t)nc + 1, busy ? BUSY_POLL_MS : IDLE_POLL_MS);
        if (pr < 0 && errno != EINTR) {
            opp_coll_logmsg("poll: %s", strerror(errno));
            break;
        }
        /* Clients first, then those who connect. */
        if (pr > 0) {
            read_clients(pfd + 1, nc);
            if (!collector_finished && (pfd[0].revents & POLLIN))
                for (int k = 0; k < 16 && opp_coll_on_accept(); k++)
                    ;
        }
        if (collector_finished)
            break;
        uint64_t moved = 0;
        for (int i = 0; i < collector.nc; i++)
            if (collector.c[i]->kind == C_PROCESS)
                moved += opp_coll_drain_client(collector.c[i]);
        /* A client that damaged its rings goes; the others go on. An
         * orphan goes when its process exits or execs, and so does one
         * that said goodbye once its process is gone, should another
         * process hold its connection open (a child forked by the system
         * call itself, which runs no atfork handler, keeps a copy until
         * its first call); so does the first process of a plain
         * LD_PRELOAD run once gone, and after it, or once opprof run asks
         * to finish, any whose process is gone. */
        uint64_t t = opp_mono_ns();
        int gone = 0, ending = collector.finishing || collector.root_gone;
        for (int i = 0; i < collector.nc; i++) {
            struct client *c = collector.c[i];
            int watched = c->orphan || c->bye || ending ||
                          (collector.o->root_pid > 0 && c->pid == collector.o->root_pid);
            if (!c->bad && c->kind == C_PROCESS && (c->orphan || !c->ended) && watched &&
                t - c->orphan_checked > 100000000ull) {
                c->orphan_checked = t;
                c->gone = c->ended ||
                          (c->orphan ? !opp_coll_rings_mapped(c) : !opp_coll_process_runs(c->pid));
                gone += c->gone;
            }
        }
        /* What a process sent before it went (a late thread's ring) is
         * read before it is ended: the poll above may have come first. */
        if (gone)
            read_pending();
        if (collector_finished)
            break;
        for (int i = collector.nc; i-- > 0 && !collector_finished;) {
            struct client *c = collector.c[i];
            if (c->bad)
                opp_coll_drop_client(i, c->bad);
            else if (c->gone)
                drop_gone(i);
        }
        /* A ring found half full: a thread is at its heels (a small
         * OPPROF_BUFFER, OPPROF_DROP=block), so look again at once for a
         * while rather than sleep the idle poll's 2 ms. */
        busy = moved > 1024 || collector.hot > 0;
        collector.hot -= collector.hot > 0;
        uint64_t now = opp_mono_ns();
        if (now - collector.last_clock > CLOCK_EVERY_NS &&
            !collector.sum) /* summary: constant size */
            opp_coll_write_clock();
        int procs = opp_coll_process_clients();
        if (collector.stop) {
            read_pending();
            if (!collector.tw.held)
                opp_coll_logmsg("stopped by signal %d; trace finished with what was recorded",
                                (int)collector.stop);
            else if (o->root_pid <= 0) /* else the finish says it */
                opp_coll_logmsg("stopped by signal %d; nothing was recorded: %s left as it was",
                                (int)collector.stop, o->output);
            opp_coll_finish();
            if (collector.tw.error)
                opp_coll_logmsg("writing %s failed: %s; it holds %llu of the %llu events read",
                                o->output, strerror(collector.tw.error),
                                (unsigned long long)collector.events_written,
                                (unsigned long long)collector.events);
        } else if (collector.finishing && (procs == 0 || now >= collector.linger_deadline)) {
            opp_coll_finish();
        } else if (o->root_pid > 0 && (collector.root_gone || collector.ever_connected) &&
                   procs == 0 && root_gone_for_good(now) && !connecting()) {
            opp_coll_finish();
        } else if (o->parent > 0 && parent_gone(procs, now)) {
            opp_coll_logmsg("the opprof run that started it (pid %d) is gone; trace finished "
                            "with what was recorded",
                            (int)o->parent);
            opp_coll_finish();
        } else if (o->idle_exit_ms > 0 && !collector.ever_connected &&
                   now - collector.started > (uint64_t)o->idle_exit_ms * 1000000ull) {
            if (!collector.tw.held)
                opp_coll_logmsg("no process connected within %d ms; finishing an empty trace",
                                o->idle_exit_ms);
            else if (o->root_pid <= 0) /* else the finish says it */
                opp_coll_logmsg("no process connected within %d ms; %s left as it was",
                                o->idle_exit_ms, o->output);
            opp_coll_finish();
        }
    }
    /* Tell whoever waits (controllers, a root that said goodbye) we are done. */
    struct opp_sum_stats st = {0};
    if (collector.sum)
        opp_sum_stats(collector.sum, &st);
    uint64_t done[OPP_DONE_FIELDS] = {
        [OPP_DONE_EVENTS] = collector.events,
        [OPP_DONE_DROPPED] = collector.dropped,
        [OPP_DONE_PROCS] = collector.next_proc,
        [OPP_DONE_CUT] = collector.cut,
        [OPP_DONE_WRITE_ERRNO] = (uint64_t)collector.tw.error,
        [OPP_DONE_WRITTEN] = collector.tw.error ? collector.events_written : collector.events,
        [OPP_DONE_SUM_DROPPED] = st.dropped,
        [OPP_DONE_SUM_LOST] = st.lost,
        [OPP_DONE_INTERRUPTED] = collector.interrupted,
    };
    for (int i = 0; i < collector.nc; i++) {
        const char *why;
        if (collector.c[i]->kind == C_CONTROL && collector.c[i]->top) /* the run's last numbers */
            opp_coll_on_top(collector.c[i], &why);
        if (collector.c[i]->kind == C_CONTROL)
            opp_send_msg(collector.c[i]->fd, OPP_MSG_DONE, done, sizeof done, -1);
    }
    while (collector.nc)
        opp_coll_drop_client(collector.nc - 1, NULL);
    close(collector.lfd);
    free(collector.enc);
    opp_sum_free(collector.sum);
    opp_top_agg_free(collector.live);
    return collector_finished && !collector.tw.error ? 0 : 1;
}

int opp_collector_mode(const char *s, int *summary)
{
    if (!strcmp(s, "full") || !strcmp(s, "summary")) {
        *summary = s[0] == 's';
        return 0;
    }
    return -1;
}
