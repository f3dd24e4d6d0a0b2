/* The messages of profiled processes and tools (state.h): each checked
 * and handled; a client whose message is wrong is dropped, said why.
 * At a goodbye, what the other clients sent is read before whether they
 * still run is answered. */
#include "options.h"
#include "parse.h"
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

/* A message whose payload is our mode (MODE, RESUMED): the agent names
 * steps and marks windows by it. */
static void send_mode(int fd, uint16_t type)
{
    uint32_t mode = collector.o->summary ? OPP_MODE_SUMMARY : OPP_MODE_FULL;
    opp_send_msg(fd, type, &mode, sizeof mode, -1);
}

/* A hello from client c, started at its clock's start: an older instance
 * of the same pid that has not ended exec'd (a pid is another process's
 * only once its own ended), whatever /proc/PID/maps, which a process that
 * is not dumpable keeps from us, would say: it ended no later than start
 * (now, on another clock), what its closed connection still held read
 * first. */
static void exec_ended(const struct client *c, uint64_t start)
{
    for (int k = collector.nc; k-- > 0;) {
        struct client *o = collector.c[k];
        if (o == c || o->pid != c->pid || o->kind != C_PROCESS || o->bye || o->ended)
            continue;
        const char *w = NULL;
        int rc = o->fd < 0 ? -1 : 0; /* an orphan's connection is closed already */
        for (int n = 0; n < 256 && rc == 0; n++)
            rc = opp_coll_on_readable(k, &w);
        if (rc == 0)
            continue; /* still open: not its old image */
        if (w) {
            o->bad = w;
            continue;
        }
        opp_coll_end_process(o, OPP_END_LOST, o->clock == c->clock ? start : 0);
        o->orphan_checked = 0; /* an orphan: let go at the loop's next look */
    }
}

static int on_hello(struct client *c, const uint8_t *p, uint32_t n, const char **why)
{
    struct opp_hello h;
    if (opp_parse_hello(p, n, &h, why)) {
        opp_hello_free(&h);
        return -1;
    }
    c->kind = C_PROCESS;
    c->proc = ++collector.next_proc;
    c->clock = h.clock;
    c->start = h.start_ticks;
    uint32_t parent = 0;
    for (size_t k = collector.npast; k-- > 0;)
        if ((uint32_t)collector.past[k].pid == h.ppid) {
            parent = collector.past[k].proc;
            break;
        }
    if (collector.npast < sizeof collector.past / sizeof *collector.past)
        collector.past[collector.npast++] = (typeof(collector.past[0])){.proc = c->proc,
                                                                        .pid = c->pid,
                                                                        .ppid = (pid_t)h.ppid,
                                                                        .clock = h.clock,
                                                                        .start = h.start_ticks};
    struct opp_tw_process tp = {.proc = c->proc,
                                .pid = (uint32_t)c->pid,
                                .ppid = h.ppid,
                                .parent_proc = parent,
                                .clock = h.clock,
                                .start_ticks = h.start_ticks,
                                .start_real_ns = h.start_real_ns,
                                .exe = h.exe,
                                .argc = h.argc,
                                .argv = (const char *const *)h.argv};
    opp_coll_write_early();
    opp_tw_process(&collector.tw, &tp);
    opp_coll_reaped_unborn(c->proc, c->pid, (pid_t)h.ppid);
    opp_hello_free(&h);
    exec_ended(c, c->start);
    collector.ever_connected = 1;
    /* The answer to the hello: the agent names steps and marks windows by
     * it, whatever its own environment says. It never waits for it, and
     * it is the first thing sent on the connection: its buffer has room. */
    send_mode(c->fd, OPP_MSG_MODE);
    return 0;
}

/* Process parent reaped its child pid (wait status) at its clock's ticks
 * at (0: not said): when that child is in the trace (the newest instance
 * of its pid whose parent is parent), how it ended is written now,
 * whenever its own connection's end is read; when its hello is not read
 * yet, once it is. Its end, when its connection closed without goodbye,
 * is no later than at (on the same clock). */
static void reaped(pid_t parent, uint32_t parent_clock, uint32_t pid, uint32_t status, uint64_t at)
{
    uint32_t how, code;
    if (WIFEXITED(status)) {
        how = OPP_EXIT_STATUS;
        code = (uint32_t)WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        how = OPP_EXIT_SIGNAL;
        code = (uint32_t)WTERMSIG(status);
    } else {
        return; /* stopped or continued: not an end */
    }
    for (size_t k = collector.npast; k-- > 0;) {
        if ((uint32_t)collector.past[k].pid != pid || collector.past[k].ppid != parent)
            continue;
        if (!collector.past[k].reaped && !collector_finished && opp_exit_valid(how, code)) {
            opp_tw_process_status(&collector.tw, collector.past[k].proc, how, code);
            opp_coll_write_failed(0);
        }
        collector.past[k].reaped = 1;
        if (at && parent_clock == collector.past[k].clock && !collector_finished)
            opp_coll_reaped_at(k, at);
        return;
    }
    if (opp_exit_valid(how, code))
        collector
            .unborn[collector.nunborn++ % (sizeof collector.unborn / sizeof *collector.unborn)] =
            (typeof(collector.unborn[0])){(pid_t)pid, parent, how, code};
}

/* REAPED (n bytes): c's program reaped a child. */
static void on_reaped(struct client *c, const uint8_t *p, uint32_t n)
{
    uint32_t pid, status;
    uint64_t at = 0;
    memcpy(&pid, p, 4);
    memcpy(&status, p + 4, 4);
    if (n == 16)
        memcpy(&at, p + 8, 8);
    reaped(c->pid, c->clock, pid, status, at);
}

/* The status of a process reaped before its hello was read, written. */
void opp_coll_reaped_unborn(uint32_t proc, pid_t pid, pid_t ppid)
{
    size_t n = collector.nunborn < sizeof collector.unborn / sizeof *collector.unborn
                   ? collector.nunborn
                   : sizeof collector.unborn / sizeof *collector.unborn;
    for (size_t k = 0; k < n; k++)
        if (collector.unborn[k].pid == pid && collector.unborn[k].ppid == ppid) {
            opp_tw_process_status(&collector.tw, proc, collector.unborn[k].how,
                                  collector.unborn[k].code);
            collector.unborn[k].pid = 0;
            if (collector.npast && collector.past[collector.npast - 1].proc == proc)
                collector.past[collector.npast - 1].reaped = 1;
            return;
        }
}

/* The function table comes in parts, in order; it is written once whole. */
static int on_funcs(struct client *c, const uint8_t *p, uint32_t n, const char **why)
{
    struct opp_funcs_msg f;
    int rc = opp_parse_funcs(p, n, &f, why);
    if (!rc && (f.first != c->funcs_got || (c->funcs_got && f.total != c->funcs_total))) {
        *why = "function table parts out of order";
        rc = -1;
    }
    if (!rc && !c->fdesc) {
        c->funcs_total = f.total;
        c->fdesc = calloc(f.total, sizeof *c->fdesc);
        if (!c->fdesc) {
            *why = "out of memory";
            rc = -1;
        }
    }
    for (uint32_t i = 0; !rc && i < f.count; i++) {
        struct opp_func_desc *d = &c->fdesc[f.first + i];
        d->kind = f.f[i].kind;
        d->dtype = f.f[i].dtype;
        d->lib = strdup(f.f[i].lib);
        d->name = strdup(f.f[i].name);
        c->funcs_got++;
        if (!d->lib || !d->name) {
            *why = "out of memory";
            rc = -1;
        }
    }
    opp_funcs_free(&f);
    if (!rc && c->funcs_got == c->funcs_total && collector.sum &&
        opp_sum_proc(collector.sum, c->proc, c->funcs_total, c->fdesc)) {
        *why = "out of memory";
        rc = -1;
    }
    if (!rc && c->funcs_got == c->funcs_total && collector.live &&
        opp_top_agg_proc(collector.live, c->proc, (int)c->clock, c->funcs_total, c->fdesc))
        opp_coll_logmsg("out of memory: pid %d is not in `opprof top`", (int)c->pid);
    if (!rc && c->funcs_got == c->funcs_total) {
        c->nfuncs = c->funcs_total;
        opp_tw_funcs(&collector.tw, c->proc, c->nfuncs, c->fdesc);
        opp_coll_free_fdesc(c);
    }
    return rc;
}

/* Summary mode: the calls the records belong to are drained first (they
 * returned before CUPTI handed over their work), timed records are
 * aggregated, and the rest (names, devices, counts) written as they came. */
static int summarize_gpu(struct client *c, const uint8_t *p, uint32_t n, uint32_t count)
{
    opp_coll_drain_client(c);
    uint8_t *keep = malloc(n);
    if (!keep)
        return 0; /* checked already: only what it adds is lost */
    struct opp_rbuf b;
    struct opp_wbuf w;
    opp_rbuf_init(&b, p, n);
    opp_wbuf_init(&w, keep, n);
    opp_get_u32(&b);
    opp_put_u32(&w, 0);
    uint32_t kept = 0;
    const char *why;
    for (uint32_t i = 0; i < count; i++) {
        struct opp_gpu_rec g;
        if (opp_gpu_get(&b, &g, &why))
            break;
        if (opp_sum_gpu(collector.sum, c->proc, &g) == 0 && opp_gpu_put(&w, &g) == 0)
            kept++;
    }
    if (kept) {
        memcpy(keep, &kept, 4);
        opp_tw_gpu(&collector.tw, c->proc, keep, (uint32_t)w.len);
    }
    free(keep);
    return 0;
}

/* The names and GPU time `opprof top` shows. The calls the records belong
 * to are drained first (they returned before CUPTI handed over their
 * work), so that their correlation ids are known. */
static void live_gpu(struct client *c, const uint8_t *p, uint32_t n, uint32_t count)
{
    if (collector.live_on)
        opp_coll_drain_client(c);
    struct opp_rbuf b;
    opp_rbuf_init(&b, p, n);
    opp_get_u32(&b);
    const char *why;
    struct opp_gpu_rec g;
    for (uint32_t i = 0; i < count && !opp_gpu_get(&b, &g, &why); i++)
        opp_top_agg_gpu(collector.live, c->proc, &g);
}

/* TOP: the live aggregate's snapshot, with what the collector counts. */
int opp_coll_on_top(struct client *c, const char **why)
{
    struct opp_top_snap snap = {.now_ns = opp_mono_ns(),
                                .events = collector.events,
                                .from_start = (uint32_t)collector.o->top,
                                .dropped = collector.dropped,
                                .interrupted = collector.interrupted,
                                .recording = !collector.paused,
                                .step_name = ""};
    for (int k = 0; k < collector.nc; k++) {
        struct client *o = collector.c[k];
        if (o->kind != C_PROCESS || o->ended)
            continue;
        snap.procs++;
        for (size_t j = 0; j < o->nrings; j++)
            snap.threads += o->rings[j].hdr != NULL && !o->rings[j].dead;
    }
    collector.live_on = collector.live != NULL; /* nothing is added up until someone watches */
    if (collector.live && opp_top_agg_snapshot(collector.live, &snap)) {
        *why = "out of memory";
        return -1;
    }
    struct opp_wbuf w;
    opp_wbuf_init(&w, collector.enc, OPP_MSG_MAX);
    opp_top_put(&w, &snap);
    c->kind = C_CONTROL;
    c->top = 1;
    opp_send_msg(c->fd, OPP_MSG_TOP_SNAP, w.p, (uint32_t)w.len, -1);
    return 0;
}

/* GPU activity: checked record by record, then written as it came. */
static int on_gpu(struct client *c, const uint8_t *p, uint32_t n, const char **why)
{
    uint32_t count;
    if (opp_gpu_check(p, n, &count, why))
        return -1;
    c->gpu_records += count;
    if (collector.live)
        live_gpu(c, p, n, count);
    if (collector.sum && count)
        return summarize_gpu(c, p, n, count);
    if (count)
        opp_tw_gpu(&collector.tw, c->proc, p, n);
    return 0;
}

static int on_info(struct client *c, const uint8_t *p, uint32_t n, const char **why)
{
    struct opp_rbuf b;
    struct opp_info_pair pr[OPP_INFO_MAX];
    opp_rbuf_init(&b, p, n);
    uint32_t count = opp_get_u32(&b);
    if (b.bad || opp_info_read(&b, count, pr) || opp_rbuf_left(&b)) {
        *why = "bad process labels";
        return -1;
    }
    c->info = 1;
    if (count)
        opp_tw_info(&collector.tw, c->proc, p, n);
    return 0;
}

static int on_ring(struct client *c, const uint8_t *p, uint32_t n, const char **why)
{
    struct opp_ring_msg m;
    if (opp_parse_ring(p, n, &m, why))
        return -1;
    if (!c->nfds) {
        *why = "ring message without its memory";
        return -1;
    }
    int fd = c->fds[0];
    memmove(c->fds, c->fds + 1, sizeof(int) * (size_t)--c->nfds);
    struct opp_ring_hdr *h = opp_ring_map(fd, &m, why);
    struct stat st;
    uint64_t ino = fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
    close(fd);
    if (!h)
        return -1;
    struct ring *nr = realloc(c->rings, (c->nrings + 1) * sizeof *nr);
    if (!nr) {
        munmap(h, opp_ring_bytes(m.capacity));
        *why = "out of memory";
        return -1;
    }
    c->rings = nr;
    struct ring *r = &c->rings[c->nrings++];
    memset(r, 0, sizeof *r);
    r->hdr = h;
    r->ino = ino;
    r->tid = m.tid;
    r->cap = m.capacity;
    r->tail = atomic_load(&h->tail);
    r->last_end = 0;
    atomic_store(&h->paused, (uint32_t)collector.paused);
    opp_coll_ring_name(c, r, 1);
    return 0;
}

/* RESUME: the connection of client c now serves the process of its pid
 * whose connection the program closed: an orphan, or one whose closed
 * connection we have not read to its end yet (read now: the process is
 * alive, it is asking). The newest of that pid: an exec's old image ended. */
static int on_resume(struct client *c, const char **why)
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
            if (w || !opp_coll_orphan(o, 1)) {
                o->bad = w ? w : "closed";
                continue;
            }
        }
        o->fd = c->fd;
        o->orphan = 0;
        c->fd = -1;
        c->into = o;
        send_mode(o->fd, OPP_MSG_RESUMED);
        return 0;
    }
    *why = "nothing of this process to resume";
    return -1;
}

static int on_message(int i, const struct opp_msg_header *mh, const uint8_t *p, const char **why)
{
    struct client *c = collector.c[i];
    switch (mh->type) {
    case OPP_MSG_HELLO:
        if (c->kind != C_NEW) {
            *why = "second hello";
            return -1;
        }
        return on_hello(c, p, mh->size, why);
    case OPP_MSG_FUNCS:
        if (c->kind != C_PROCESS || c->nfuncs) {
            *why = "function table out of order";
            return -1;
        }
        return on_funcs(c, p, mh->size, why);
    case OPP_MSG_GPU:
        if (c->kind != C_PROCESS || !c->nfuncs) {
            *why = "GPU records out of order";
            return -1;
        }
        return on_gpu(c, p, mh->size, why);
    case OPP_MSG_INFO:
        if (c->kind != C_PROCESS || c->info) {
            *why = "process labels out of order";
            return -1;
        }
        return on_info(c, p, mh->size, why);
    case OPP_MSG_RING:
        if (c->kind != C_PROCESS || !c->nfuncs || c->ended) { /* after a goodbye: taken */
            *why = "ring out of order";
            return -1;
        }
        return on_ring(c, p, mh->size, why);
    case OPP_MSG_BYE: {
        uint64_t end = 0;
        if (c->kind != C_PROCESS || (mh->size && mh->size != sizeof end)) {
            *why = "goodbye out of order";
            return -1;
        }
        if (mh->size)
            memcpy(&end, p, sizeof end);
        /* Its end is written once it is gone: its other threads, and
         * the destructors that run after ours, may still record. */
        c->bye = 1;
        c->bye_at = opp_coll_word_end(c, end);
        opp_coll_drain_client(c);
        int others = opp_coll_others_running(c);
        uint64_t counts[OPP_ACK_FIELDS] = {[OPP_ACK_EVENTS] = c->events,
                                           [OPP_ACK_DROPPED] = c->dropped,
                                           [OPP_ACK_CONNECTED] = (uint64_t)others};
        if (collector.o->root_pid > 0 && c->pid == collector.o->root_pid && others == 0) {
            opp_coll_finish(); /* the whole trace is complete before the root exits */
            counts[OPP_ACK_EVENTS] = collector.events;
            counts[OPP_ACK_DROPPED] = collector.dropped;
            counts[OPP_ACK_WRITE_ERRNO] = (uint64_t)collector.tw.error;
            counts[OPP_ACK_WRITTEN] =
                collector.tw.error ? collector.events_written : collector.events;
        }
        opp_send_msg(c->fd, OPP_MSG_ACK, counts, sizeof counts, -1);
        return 0;
    }
    case OPP_MSG_REAPED:
        if (c->kind != C_PROCESS || (mh->size != 8 && mh->size != 16)) {
            *why = "reaped child out of order";
            return -1;
        }
        on_reaped(c, p, mh->size);
        return 0;
    case OPP_MSG_RESUME:
        if (c->kind != C_NEW || mh->size) {
            *why = "resume out of order";
            return -1;
        }
        return on_resume(c, why);
    case OPP_MSG_CTL: {
        uint32_t op;
        if (c->kind != C_NEW || mh->size != 4) {
            *why = "control message out of order";
            return -1;
        }
        memcpy(&op, p, 4);
        if (op > 2) {
            *why = "unknown control operation";
            return -1;
        }
        if (op) {
            collector.paused = op == 2;
            for (int k = 0; k < collector.nc; k++)
                for (size_t j = 0; j < collector.c[k]->nrings; j++)
                    if (collector.c[k]->rings[j].hdr) /* NULL: its thread exited */
                        atomic_store(&collector.c[k]->rings[j].hdr->paused,
                                     (uint32_t)collector.paused);
        }
        uint32_t procs = 0;
        for (int k = 0; k < collector.nc; k++)
            procs += collector.c[k]->kind == C_PROCESS;
        uint8_t ack[24];
        uint32_t rec = !collector.paused;
        memcpy(ack, &rec, 4);
        memcpy(ack + 4, &procs, 4);
        memcpy(ack + 8, &collector.events, 8);
        memcpy(ack + 16, &collector.dropped, 8);
        c->kind = C_CONTROL;
        opp_send_msg(c->fd, OPP_MSG_CTL_ACK, ack, sizeof ack, -1);
        return 0;
    }
    case OPP_MSG_TOP:
        if ((c->kind != C_NEW && c->kind != C_CONTROL) || mh->size) {
            *why = "top request out of order";
            return -1;
        }
        return opp_coll_on_top(c, why);
    case OPP_MSG_FINISH: {
        struct opp_finish_msg fin;
        if (c->kind != C_NEW || opp_parse_finish(p, mh->size, &fin, why)) {
            if (!*why)
                *why = "finish out of order";
            return -1;
        }
        c->kind = C_CONTROL;
        if (fin.pid) /* the controller's CMD, which no profiled parent reaped */
            reaped((pid_t)fin.ppid, 0, fin.pid, fin.status, 0);
        if (!collector.finishing) {
            collector.finishing = 1;
            collector.linger_deadline = opp_mono_ns() + (uint64_t)fin.linger_ms * 1000000ull;
        }
        return 0;
    }
    }
    *why = "unknown message type";
    return -1;
}

/* Read what is there; handle each whole message. -1: drop the client. */
int opp_coll_on_readable(int i, const char **why)
{
    struct client *c = collector.c[i];
    union {
        char buf[CMSG_SPACE(sizeof(int) * MAX_FDS_QUEUED)];
        struct cmsghdr align;
    } u;
    struct iovec iov = {c->rx + c->rxlen, sizeof c->rx - c->rxlen};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
    ssize_t n = recvmsg(c->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n < 0) { /* no control data either: m's is as it was given */
        /* A peer that closed with something of ours unread (a process
         * killed before it read the hello's answer, MODE) resets the
         * connection once all it sent was read: its end all the same. */
        *why = errno == ECONNRESET ? NULL : "read error";
        return -1;
    }
    int too_many = 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        int nf = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int k = 0; k < nf; k++) {
            int fd;
            memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int), sizeof fd);
            /* Queued until a RING message claims it: the messages that
             * precede it may arrive in this same read. One too many: this
             * one and every other received with it are closed. */
            if (c->nfds < MAX_FDS_QUEUED && !too_many)
                c->fds[c->nfds++] = fd;
            else {
                close(fd);
                too_many = 1;
            }
        }
    }
    if (too_many) {
        *why = "sent more descriptors than ring messages";
        return -1;
    }
    if (m.msg_flags & MSG_CTRUNC) {
        *why = "sent too many descriptors";
        return -1;
    }
    if (n == 0) {
        *why = NULL;
        return -1;
    }
    c->rxlen += (size_t)n;
    size_t off = 0;
    while (c->rxlen - off >= sizeof(struct opp_msg_header)) {
        struct opp_msg_header mh;
        if (opp_parse_header(c->rx + off, c->rxlen - off, &mh, why))
            return -1;
        if (c->rxlen - off < sizeof mh + mh.size)
            break;
        *why = NULL;
        if (on_message(i, &mh, c->rx + off + sizeof mh, why))
            return -1;
        off += sizeof mh + mh.size;
        if (c->into) { /* what follows is the resumed process's */
            memcpy(c->into->rx, c->rx + off, c->rxlen - off);
            c->into->rxlen = c->rxlen - off;
            *why = NULL;
            return -1; /* this client is done; its connection lives on */
        }
    }
    memmove(c->rx, c->rx + off, c->rxlen - off);
    c->rxlen -= off;
    return 0;
}

int opp_coll_on_accept(void)
{
    int fd = accept4(collector.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return 0;
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.uid != geteuid()) {
        opp_coll_logmsg("refused a connection from uid %d (only uid %d may connect)",
                        len == sizeof cr ? (int)cr.uid : -1, (int)geteuid());
        close(fd);
        return 1;
    }
    if (collector.nc >= MAX_CLIENTS) {
        opp_coll_logmsg("refused pid %d: %d clients already", (int)cr.pid, MAX_CLIENTS);
        close(fd);
        return 1;
    }
    struct client *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        return 1;
    }
    c->fd = fd;
    c->pid = cr.pid;
    c->accepted = opp_mono_ns();
    collector.c[collector.nc++] = c;
    return 1;
}

/* Whether the peer of connection fd hung up: what it sent is all there. */
static int hung_up(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLRDHUP));
}

/* Client i, whose connection hung up: what it sent (its hello, when
 * new) is read to its end, then it is ended as the loop's reading would
 * end it (the loop drops it at its hang-up). 1 when it runs on (the
 * program closed our descriptor: the loop keeps it as an orphan). */
static int read_to_end(int i)
{
    struct client *c = collector.c[i];
    const char *why = NULL;
    for (int k = 0; k < 4096; k++) /* a closed peer's buffer: its end comes */
        if (opp_coll_on_readable(i, &why) < 0) {
            if (c->into) /* a connection resumed by another client: the loop's */
                return 1;
            if (why)
                opp_coll_logmsg("pid %d: %s", (int)c->pid, why);
            if (!why && c->kind == C_PROCESS && !c->bye && opp_coll_rings_mapped(c))
                return 1; /* it runs on: the loop keeps it as an orphan */
            opp_coll_end_process(c, OPP_END_LOST, 0);
            return 0;
        }
    return 1;
}

int opp_coll_others_running(const struct client *self)
{
    static int reading; /* a goodbye among what a gone client sent: counted, not read again */
    /* every connection waiting: children that connected, sent and left */
    for (int k = 0; k < 4 * MAX_CLIENTS && !reading && opp_coll_on_accept(); k++)
        ;
    int n = 0;
    uint64_t now = opp_mono_ns();
    for (int i = 0; i < collector.nc; i++) {
        struct client *c = collector.c[i];
        if (c == self || c->kind == C_CONTROL || c->ended || opp_coll_silent(c, now))
            continue;
        if (reading || c->fd < 0 || !hung_up(c->fd)) {
            n++; /* a process, or one whose hello is to come */
            continue;
        }
        reading = 1; /* its end not read yet (a child reaped before the goodbye): read now */
        n += read_to_end(i);
        reading = 0;
    }
    return n;
}
