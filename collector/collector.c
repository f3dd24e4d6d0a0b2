/* The collector's serving loop: accepts profiled processes (same user only),
 * has their messages handled (messages.c) and their rings drained into the
 * trace as it goes (drain.c), turns a vanished process's calls in flight
 * into open events, and finishes the trace. A ring's tail only moves after
 * its records are in the file, so a record is always in exactly one of the
 * two places. Its state is state.h's. */
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
#include <stdarg.h>
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

struct collector_state collector;
int collector_finished;

void opp_coll_logmsg(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = sizeof line - 2;
    line[n++] = '\n';
    ssize_t w = write(2, "opprof-collector: ", 18);
    w = write(2, line, (size_t)n);
    (void)w;
}

/* ---- clients ---- */

void opp_coll_end_process(struct client *c, uint32_t how)
{
    if (c->kind != C_PROCESS || c->ended || collector_finished)
        return;
    opp_coll_drain_client(c);
    uint64_t now = opp_ticks((int)c->clock);
    if (how == OPP_END_LOST)
        for (size_t i = 0; i < c->nrings; i++)
            if (c->rings[i].hdr)
                opp_coll_emit_open_calls(c, &c->rings[i], now);
    if (collector.sum && c->nfuncs) {
        /* always: the file's size does not depend on whether a ring overflowed */
        opp_tw_dropped(&collector.tw, c->proc, 0, c->dropped);
        int rc = opp_sum_write(collector.sum, c->proc, &collector.tw);
        if (rc == -ENOMEM)
            opp_coll_logmsg("out of memory: the summary of pid %d is lost", (int)c->pid);
        opp_coll_write_failed(0);
        if (!rc && !collector.tw.error)
            collector.events_summarized += c->events;
    }
    opp_tw_process_end(&collector.tw, c->proc, how, now);
    if (collector.live)
        opp_top_agg_proc_end(collector.live, c->proc);
    c->ended = 1;
}

void opp_coll_free_fdesc(struct client *c)
{
    for (uint32_t i = 0; c->fdesc && i < c->funcs_got; i++) {
        free((char *)c->fdesc[i].lib);
        free((char *)c->fdesc[i].name);
    }
    free(c->fdesc);
    c->fdesc = NULL;
}

static void drop_client(int i, const char *why)
{
    struct client *c = collector.c[i];
    if (why)
        opp_coll_logmsg("pid %d: %s; disconnected", (int)c->pid, why);
    if (c->kind == C_PROCESS) {
        if (!c->ended)
            opp_coll_end_process(c, OPP_END_LOST);
        else
            opp_coll_drain_client(c); /* what it recorded after saying goodbye */
    }
    opp_coll_free_fdesc(c);
    for (size_t k = 0; k < c->nrings; k++)
        opp_coll_ring_release(&c->rings[k]);
    free(c->rings);
    for (int k = 0; k < c->nfds; k++)
        close(c->fds[k]);
    if (c->fd >= 0)
        close(c->fd);
    if (collector.o->root_pid > 0 && c->pid == collector.o->root_pid && c->kind == C_PROCESS) {
        collector.root_gone = 1;
        collector.root_gone_at = opp_mono_ns();
    }
    free(c);
    /* Keep the others in accept order: processes are numbered in the order
     * their hellos are read, and that must be the order they connected. */
    memmove(&collector.c[i], &collector.c[i + 1],
            (size_t)(collector.nc - i - 1) * sizeof collector.c[0]);
    collector.nc--;
}

/* Whether process c still maps one of its rings: it runs on as the same
 * image (an exec or a death unmaps them all). */
static int rings_mapped(struct client *c)
{
    char path[40], line[512];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)c->pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long long ino;
        if (!strstr(line, "opprof-ring") || sscanf(line, "%*s %*s %*s %*s %llu", &ino) != 1)
            continue;
        for (size_t i = 0; i < c->nrings && !found; i++)
            found = c->rings[i].hdr && !c->rings[i].dead && c->rings[i].ino == ino;
    }
    fclose(f);
    return found;
}

/* The connection of a process closed without goodbye. When the process
 * still maps its rings, the program closed our descriptor (a daemon
 * closing every fd): keep draining its rings and wait for it to resume
 * on a new connection, or to end. 1 when kept. */
static int orphan(struct client *c, int alive)
{
    if (c->kind != C_PROCESS || c->bye || c->ended || collector_finished ||
        (!alive && !rings_mapped(c)))
        return 0;
    close(c->fd);
    c->fd = -1;
    c->orphan = 1;
    c->rxlen = 0;
    for (int k = 0; k < c->nfds; k++)
        close(c->fds[k]);
    c->nfds = 0;
    c->orphan_checked = opp_mono_ns();
    return 1;
}

/* RESUME: the connection of client c now serves the process of its pid
 * whose connection the program closed: an orphan, or one whose closed
 * connection we have not read to its end yet (read now: the process is
 * alive, it is asking). The newest of that pid: an exec's old image ended. */
int opp_coll_on_resume(struct client *c, const char **why)
{
    for (int k = collector.nc; k-- > 0;) {
        struct client *o = collector.c[k];
        if (o == c || o->pid != c->pid || o->kind != C_PROCESS || o->bye || o->ended)
            continue;
        if (!o->orphan) {
            const char *w = NULL;
            int rc = 0;
            for (int n = 0; n < 256 && rc == 0; n++)
                rc = opp_coll_on_readable(k, &w);
            if (rc == 0)
                continue; /* still open: not the one */
            if (w || !orphan(o, 1)) {
                o->bad = w ? w : "closed";
                continue;
            }
        }
        o->fd = c->fd;
        o->orphan = 0;
        c->fd = -1;
        c->into = o;
        opp_send_msg(o->fd, OPP_MSG_RESUMED, NULL, 0, -1);
        return 0;
    }
    *why = "nothing of this process to resume";
    return -1;
}

int opp_coll_process_clients(void)
{
    int n = 0;
    for (int i = 0; i < collector.nc; i++)
        n += collector.c[i]->kind == C_PROCESS;
    return n;
}

/* ---- finishing ---- */

/* One line to the person who ran the program, as the preload's own. */
static void say(const char *a, const char *b, const char *c)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "opprof: %s%s%s\n", a, b, c);
    if (n > 0) {
        ssize_t w = write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        (void)w;
    }
}

/* Where the trace went, said by the preload's collector: it holds the
 * stderr the run began with, which the process that started it may have
 * closed (coreutils' timeout closes its own at exit), may leave without
 * running its destructors (dash's _exit) or may have replaced (exec, as
 * `sh -c CMD` and env do). */
static void say_where(void)
{
    if (collector.o->root_pid <= 0)
        return;
    char what[200];
    if (collector.tw.error) {
        opp_write_failure(what, sizeof what, collector.tw.error, collector.events_written,
                          collector.events);
        say("writing the trace failed: ", collector.o->output, what);
        return;
    }
    say("trace written to ", collector.o->output, "");
    if (collector.dropped) {
        snprintf(what, sizeof what, "%llu records dropped (buffers were full); trace has %llu; ",
                 (unsigned long long)collector.dropped, (unsigned long long)collector.events);
        say(what, OPP_DROP_ADVICE, "");
    }
}

int opp_coll_finish(void)
{
    if (collector_finished)
        return 0;
    for (int i = 0; i < collector.nc; i++) {
        struct client *c = collector.c[i];
        if (c->kind == C_PROCESS && !c->ended) {
            opp_coll_end_process(c, OPP_END_RUNNING);
            collector.cut++;
        }
        else if (c->kind == C_PROCESS)
            opp_coll_drain_client(c);
    }
    opp_coll_write_clock();
    opp_tw_end(&collector.tw, collector.events, collector.dropped, collector.next_proc);
    opp_coll_write_failed(0);
    int rc = opp_tw_close(&collector.tw);
    if (rc && !collector.tw.error) { /* the last data reached the disk only now, or not */
        collector.tw.error = -rc;
        opp_coll_write_failed(0);
    }
    unlink(collector.o->socket_path);
    collector_finished = 1;
    say_where();
    return rc;
}

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
    if (opp_tw_open(&collector.tw, o->output, err, sizeof err)) {
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
    collector.lfd = listen_on(o->socket_path);
    if (collector.lfd < 0) {
        opp_tw_close(&collector.tw);
        unlink(o->output);
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    if (o->daemon) {
        pid_t pid = fork();
        if (pid < 0) {
            opp_coll_logmsg("fork: %s", strerror(errno));
            return 1;
        }
        if (pid > 0)
            _exit(0); /* the parent only waits for this */
    }
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
        /* Clients first, in the order they connected (a forked child that
         * execs at once must get its number before its new image does).
         * A dropped client shifts the later ones down by one: `gone`. */
        if (pr > 0) {
            for (int i = 0, gone = 0; i < nc; i++) {
                if (!(pfd[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                const char *why = NULL;
                if (opp_coll_on_readable(i - gone, &why) < 0 &&
                    (why || !orphan(collector.c[i - gone], 0))) {
                    drop_client(i - gone, why);
                    gone++;
                }
                if (collector_finished)
                    break;
            }
            if (!collector_finished && (pfd[0].revents & POLLIN))
                for (int k = 0; k < 16; k++) {
                    int before = collector.nc;
                    opp_coll_on_accept();
                    if (collector.nc == before)
                        break;
                }
        }
        if (collector_finished)
            break;
        uint64_t moved = 0;
        for (int i = 0; i < collector.nc; i++)
            if (collector.c[i]->kind == C_PROCESS)
                moved += opp_coll_drain_client(collector.c[i]);
        /* A client that damaged its rings goes; the others go on. An
         * orphan goes when its process exits or execs. */
        uint64_t t = opp_mono_ns();
        for (int i = collector.nc; i-- > 0;) {
            struct client *c = collector.c[i];
            if (c->bad)
                drop_client(i, c->bad);
            else if (c->orphan && t - c->orphan_checked > 100000000ull) {
                c->orphan_checked = t;
                if (!rings_mapped(c))
                    drop_client(i, NULL);
            }
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
            opp_coll_logmsg("stopped by signal %d; trace collector_finished with what was recorded",
                            (int)collector.stop);
            opp_coll_finish();
            if (collector.tw.error)
                opp_coll_logmsg("writing %s failed: %s; it holds %llu of the %llu events read",
                                o->output, strerror(collector.tw.error),
                                (unsigned long long)collector.events_written,
                                (unsigned long long)collector.events);
        } else if (collector.finishing && (procs == 0 || now >= collector.linger_deadline)) {
            opp_coll_finish();
        } else if (o->root_pid > 0 && collector.root_gone && procs == 0 &&
                   (kill(o->root_pid, 0) < 0 || now - collector.root_gone_at > 300000000ull)) {
            /* The starting process is gone (an exec keeps its pid and comes
             * back within moments) and nobody else is connected. */
            opp_coll_finish();
        } else if (o->idle_exit_ms > 0 && !collector.ever_connected &&
                   now - collector.started > (uint64_t)o->idle_exit_ms * 1000000ull) {
            opp_coll_logmsg("no process connected within %d ms; finishing an empty trace",
                            o->idle_exit_ms);
            opp_coll_finish();
        }
    }
    /* Tell whoever waits (controllers, a root that said goodbye) we are done. */
    uint64_t done[OPP_DONE_FIELDS] = {collector.events,
                                      collector.dropped,
                                      collector.next_proc,
                                      collector.cut,
                                      (uint64_t)collector.tw.error,
                                      collector.tw.error ? collector.events_written
                                                         : collector.events};
    for (int i = 0; i < collector.nc; i++) {
        const char *why;
        if (collector.c[i]->kind == C_CONTROL && collector.c[i]->top) /* the run's last numbers */
            opp_coll_on_top(collector.c[i], &why);
        if (collector.c[i]->kind == C_CONTROL)
            opp_send_msg(collector.c[i]->fd, OPP_MSG_DONE, done, sizeof done, -1);
    }
    while (collector.nc)
        drop_client(collector.nc - 1, NULL);
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
