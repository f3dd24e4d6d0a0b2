/* Over 600 lines: one serving loop and its private state (clients, rings, the writer), which the drain and the message handlers share. */
/* The collector's serving loop: accepts profiled processes (same user only),
 * validates their messages, drains their rings into the trace as it goes,
 * and turns a vanished process's calls in flight into open events. A ring's
 * tail only moves after its records are in the file, so a record is always
 * in exactly one of the two places. */
#include "collector.h"
#include "info.h"
#include "gpu.h"
#include "top_agg.h"
#include "summary.h"

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

#include "ring.h"

#define MAX_CLIENTS 1024
#define MAX_FDS_QUEUED 4
#define ENC_BYTES (4u << 20)
#define IDLE_POLL_MS 2
#define BUSY_POLL_MS 0 /* a ring is filling fast: look again at once */
#define CLOCK_EVERY_NS 1000000000ull
#define CHUNK_EVENTS 16384 /* events per chunk before slots are handed back */

enum client_kind { C_NEW, C_PROCESS, C_CONTROL };

struct ring {
    struct opp_ring_hdr *hdr;
    uint64_t ino; /* its memfd's inode: is it still mapped by the process? */
    uint32_t tid, cap;
    uint64_t tail, last_end, dropped_seen;
    uint32_t name_seq;
    int dead; /* abandoned after damage */
};

struct client {
    int fd;
    enum client_kind kind;
    pid_t pid;
    uint32_t proc, clock, nfuncs;
    uint32_t funcs_total, funcs_got; /* the table while its parts arrive */
    struct opp_func_desc *fdesc;
    int bye, ended, info;
    int top; /* asked for snapshots: it gets the last one when the trace is finished */
    const char *bad; /* its shared memory was damaged: dropped by the loop */
    int orphan;      /* the program closed our connection but runs on: fd is -1,
                        its rings are still drained until it resumes or exits */
    uint64_t orphan_checked;
    struct client *into; /* a RESUME: this connection now serves that client */
    struct ring *rings;
    size_t nrings;
    int fds[MAX_FDS_QUEUED];
    int nfds;
    uint8_t rx[sizeof(struct opp_msg_header) + OPP_MSG_MAX];
    size_t rxlen;
    uint64_t events, dropped, gpu_records;
};

static int finished; /* the file is closed: nothing more is drained */

static struct {
    const struct opp_collector_opts *o;
    struct opp_tw tw;
    int lfd;
    struct client *c[MAX_CLIENTS];
    int nc;
    uint32_t next_proc;
    uint64_t events, dropped;
    uint64_t cut; /* processes still running when the trace was finished */
    int hot;      /* loops left to poll without sleeping (a ring was half full) */
    uint64_t events_written; /* when a write failed: the events before it */
    uint64_t events_summarized; /* summary mode: events of the processes written */
    int write_failed;
    struct {
        uint32_t proc;
        pid_t pid, ppid;
        int reaped;
    } past[4096]; /* pid -> proc, for parents and reaping */
    size_t npast;
    /* REAPED before the child's hello was read (another connection): kept
     * for that hello, the oldest replaced first */
    struct {
        pid_t pid, ppid;
        uint32_t how, code;
    } unborn[256];
    size_t nunborn;
    uint8_t *enc;
    int paused; /* `opprof ctl stop`: every ring told to record nothing */
    struct opp_sum *sum; /* summary mode: calls go here, not into EVENTS chunks */
    struct opp_top_agg *live; /* `opprof top`'s aggregate (NULL: out of memory) */
    int live_on; /* it adds up calls: from the start (--top) or since the first TOP */
    int finishing;
    uint64_t linger_deadline;
    int root_gone;
    uint64_t root_gone_at;
    int ever_connected;
    uint64_t started;
    uint64_t last_clock;
    volatile sig_atomic_t stop;
} collector;

__attribute__((format(printf, 1, 2))) static void logmsg(const char *fmt, ...)
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

/* The first failed write (disk full, file size limit): what the file
 * still holds is noted, and said by whoever waits for the trace (DONE,
 * the root's ACK) or, finished by a signal, by us. The rings are read on,
 * so no program waits; what is read from then on is lost. Summary mode
 * writes a process's calls when it ends: the file holds those of the
 * processes written before. */
static void write_failed(uint64_t pending)
{
    if (!collector.tw.error || collector.write_failed)
        return;
    collector.write_failed = 1;
    collector.events_written =
        collector.sum ? collector.events_summarized : collector.events - pending;
}

static void ev_write(struct opp_ev_enc *e)
{
    opp_ev_write(&collector.tw, e);
    write_failed(e->count);
}

static void write_clock(void)
{
    struct opp_clock_sample s;
    opp_clock_sample(&s);
    opp_tw_clock(&collector.tw, &s);
    if (collector.live)
        opp_top_agg_clock(collector.live, &s);
    collector.last_clock = s.mono_ns;
}

/* ---- draining ---- */

static void ring_abandon(struct client *c, struct ring *r, const char *why)
{
    uint64_t head = atomic_load_explicit(&r->hdr->head, memory_order_acquire);
    logmsg("pid %d thread %u: %s; its remaining records are dropped", (int)c->pid, r->tid, why);
    uint64_t lost = head > r->tail ? head - r->tail : 0;
    if (lost > r->cap)
        lost = r->cap;
    if (lost) {
        opp_tw_dropped(&collector.tw, c->proc, r->tid, lost);
        c->dropped += lost;
        collector.dropped += lost;
    }
    r->dead = 1;
    c->bad = "its shared memory was damaged";
}

static void sanitize_name(char *dst, const char *src, size_t cap)
{
    size_t i = 0;
    for (; i + 1 < cap && src[i]; i++)
        dst[i] = (unsigned char)src[i] < ' ' || (unsigned char)src[i] >= 0x7f ? '?' : src[i];
    dst[i] = 0;
}

static void ring_name(struct client *c, struct ring *r, int force)
{
    if (collector.sum)
        return; /* summary mode keeps no threads: a run's churn would grow the file */
    uint32_t seq = atomic_load_explicit(&r->hdr->name_seq, memory_order_acquire);
    if (seq == r->name_seq && !force)
        return;
    char raw[16], name[16];
    memcpy(raw, r->hdr->name, sizeof raw);
    raw[15] = 0;
    if (atomic_load_explicit(&r->hdr->name_seq, memory_order_acquire) != seq)
        return; /* renamed while we copied: next time */
    r->name_seq = seq;
    sanitize_name(name, raw, sizeof name);
    opp_tw_thread(&collector.tw, c->proc, r->tid, name);
}

/* Encoder helper: add, flushing the chunk when the buffer is full. */
struct enc {
    struct opp_ev_enc e;
    struct client *c;
    struct ring *r;
    /* The last 16 bytes of the slot of the call encoded last (function,
     * depth, argument count, flags, argument) when the next slot with the
     * same bytes is that call again but for its times (enc_repeats). */
    uint64_t rep[2];
    int rep_ok;
};

static void enc_start(struct enc *x, struct client *c, struct ring *r)
{
    x->c = c;
    x->r = r;
    x->rep_ok = 0;
    opp_ev_begin(&x->e, collector.enc, ENC_BYTES, c->proc, r->tid, r->last_end);
}

/* One thread's ends never go back; if the clock did (a signal handler's
 * call, a TSC hiccup) keep the order and shorten to zero. */
static inline __attribute__((always_inline)) void enc_clamp(uint64_t last_end, uint64_t *begin,
                                                            uint64_t *end)
{
    if (*end < last_end)
        *end = last_end;
    if (*begin > *end)
        *begin = *end;
}

/* n more events of this thread, the last ending at end. */
static inline void enc_added(struct enc *x, uint64_t end, uint64_t n)
{
    x->r->last_end = end;
    x->c->events += n;
    collector.events += n;
}

static void enc_add_stack(struct enc *x, uint32_t fn, uint32_t flags, uint64_t begin, uint64_t end,
                          uint32_t depth, uint32_t nargs, const uint64_t *args, uint32_t stack)
{
    enc_clamp(x->r->last_end, &begin, &end);
    if (opp_ev_add_stack(&x->e, fn, flags, begin, end, depth, nargs, args, stack) != 0) {
        ev_write(&x->e);
        opp_ev_begin(&x->e, collector.enc, ENC_BYTES, x->c->proc, x->r->tid, x->r->last_end);
        opp_ev_add_stack(&x->e, fn, flags, begin, end, depth, nargs, args, stack);
    }
    enc_added(x, end, 1);
}

/* After a call of one slot was encoded from slot rec (the caller's copy):
 * a next slot with rec's bytes after the times is that call again, which
 * enc_repeats encodes without reading the slot field by field. */
static void enc_note_slot(struct enc *x, const struct opp_rec *rec)
{
    _Static_assert(offsetof(struct opp_rec, fn) == 16 && sizeof x->rep == 16, "slot tail");
    memcpy(x->rep, &rec->fn, sizeof x->rep);
    x->rep_ok = !(rec->flags & ~OPP_REC_RANGE) && rec->nargs <= 1;
}

/* The slots from t on that are the call encoded last again but for their
 * times (most calls of a loop), up to head and the chunk's end: encoded as
 * SAME events; returns how many. Each slot's fields are read once, into
 * registers (the client's memory may change under us), and the encoder's
 * buffer and last end are kept in locals: a store through the buffer's
 * bytes would make the compiler reload them from memory at each. */
_Static_assert(offsetof(struct opp_rec, depth) == 20 && offsetof(struct opp_rec, nargs) == 22 &&
                   offsetof(struct opp_rec, flags) == 23,
               "enc_repeats reads them from the slot's tail");
static inline __attribute__((always_inline)) uint64_t
enc_repeats(struct enc *x, const struct opp_rec *base, uint64_t t, uint64_t head,
            struct opp_top_agg *live, uint32_t proc, uint32_t tid)
{
    struct opp_ev_enc *e = &x->e;
    if (!x->rep_ok || !e->count || e->count >= CHUNK_EVENTS)
        return 0;
    uint64_t n = head - t, room = (e->w.cap - e->w.len) / OPP_EV_MAX_BYTES;
    if (n > CHUNK_EVENTS - e->count)
        n = CHUNK_EVENTS - e->count;
    if (n > room)
        n = room;
    struct opp_wbuf w = e->w;
    uint64_t last = e->prev_end, k = 0, mask = x->r->cap - 1;
    for (; k < n; k++) {
        const struct opp_rec *s = base + ((t + k) & mask);
        uint64_t begin, end, tail[2];
        memcpy(&begin, &s->begin, 8);
        memcpy(&end, &s->end, 8);
        memcpy(&tail[0], &s->fn, 8);
        memcpy(&tail[1], &s->arg0, 8);
        if (tail[0] != x->rep[0] || tail[1] != x->rep[1])
            break;
        if (live) { /* `opprof top` watches: each call to its aggregate too
                       (the slot's fn, depth, nargs and flags, as read) */
            uint32_t fn = (uint32_t)tail[0], depth = (uint16_t)(tail[0] >> 32);
            uint32_t nargs = (uint8_t)(tail[0] >> 48), flags = (uint8_t)(tail[0] >> 56);
            opp_top_agg_call(live, proc, tid, fn, depth, begin, end, nargs, &tail[1],
                             (flags & OPP_REC_RANGE) != 0);
        }
        enc_clamp(last, &begin, &end);
        opp_ev_put_times(&w, last, OPP_EV_SAME, begin, end);
        last = end;
    }
    e->w = w;
    e->prev_end = last;
    e->count += (uint32_t)k;
    enc_added(x, last, k);
    return k;
}

static void enc_add(struct enc *x, uint32_t fn, uint32_t flags, uint64_t begin, uint64_t end,
                    uint32_t depth, uint32_t nargs, const uint64_t *args)
{
    enc_add_stack(x, fn, flags, begin, end, depth, nargs, args, 0);
}

/* Hand slots back in steps, not after the whole backlog: only records
 * already in the file may be reused, those before slot t. */
static void hand_back(struct enc *x, uint64_t t)
{
    ev_write(&x->e);
    atomic_store_explicit(&x->r->hdr->tail, t, memory_order_release);
    x->r->tail = t;
    enc_start(x, x->c, x->r);
}

/* Move what the thread published into the file; return records moved. */
static uint64_t ring_drain(struct client *c, struct ring *r)
{
    if (r->dead || finished)
        return 0;
    struct opp_ring_hdr *h = r->hdr;
    uint64_t head = atomic_load_explicit(&h->head, memory_order_acquire);
    uint64_t moved = 0;
    if (head - r->tail >= r->cap / 2 && head - r->tail <= r->cap)
        collector.hot = 256; /* half full or more: look again at once, for a while */
    if (head != r->tail) {
        if (head < r->tail || head - r->tail > r->cap) {
            ring_abandon(c, r, "ring indexes are damaged");
            return 0;
        }
        struct enc x;
        enc_start(&x, c, r);
        uint64_t t = r->tail;
        const struct opp_rec *base = opp_ring_slot(h, r->cap, 0);
        while (t < head) {
            /* two copies of the loop: the one nobody watches calls nothing */
            uint64_t k = collector.live_on
                             ? enc_repeats(&x, base, t, head, collector.live, c->proc, r->tid)
                             : enc_repeats(&x, base, t, head, NULL, 0, 0);
            if (k) { /* the call before again, k times */
                t += k;
                moved += k;
                if (x.e.count >= CHUNK_EVENTS && t < head)
                    hand_back(&x, t);
                continue;
            }
            struct opp_ring_rec rr;
            if (opp_ring_read(base, r->cap, t, head - t, c->nfuncs, &rr)) {
                ev_write(&x.e);
                atomic_store_explicit(&h->tail, t, memory_order_release);
                r->tail = t;
                ring_abandon(c, r, "ring holds a damaged record");
                return moved;
            }
            const struct opp_rec rec = rr.rec;
            unsigned slots = rr.slots;
            if (rec.flags & OPP_REC_REWIND) { /* the thread goes on at the next lap */
                t += slots;
                continue;
            }
            if (rec.flags & OPP_REC_WINDOW) { /* a window began on this thread */
                if (collector.sum)
                    opp_sum_window(collector.sum, c->proc, r->tid,
                                   rec.arg0 < UINT32_MAX ? (uint32_t)rec.arg0 : UINT32_MAX);
                t += slots;
                continue;
            }
            uint32_t nargs = rr.nargs, stack = rr.stack;
            const uint64_t *args = rr.args;
            if (collector.live_on)
                opp_top_agg_call(collector.live, c->proc, r->tid, rec.fn, rec.depth, rec.begin,
                                 rec.end, nargs, args, (rec.flags & OPP_REC_RANGE) != 0);
            if (collector.sum) {
                if (opp_sum_call(collector.sum, c->proc, r->tid, rec.fn, rec.depth, rec.begin,
                                 rec.end, nargs, args,
                                 rec.flags & OPP_REC_RANGE ? OPP_SUM_RANGE : 0))
                    logmsg("out of memory: a call of pid %d is not counted", (int)c->pid);
                c->events++;
                collector.events++;
            } else {
                enc_add_stack(&x, rec.fn, 0, rec.begin, rec.end, rec.depth, nargs, args, stack);
                enc_note_slot(&x, &rec);
            }
            t += slots;
            moved++;
            if ((x.e.count >= CHUNK_EVENTS || (collector.sum && moved % CHUNK_EVENTS == 0)) &&
                t < head)
                hand_back(&x, t);
        }
        ev_write(&x.e);
        /* Only now, with the records in the file, may the thread reuse them. */
        atomic_store_explicit(&h->tail, head, memory_order_release);
        r->tail = head;
    }
    uint64_t d = atomic_load_explicit(&h->dropped, memory_order_relaxed);
    if (d > r->dropped_seen) {
        if (!collector.sum) /* summary mode: one count per process, at its end */
            opp_tw_dropped(&collector.tw, c->proc, r->tid, d - r->dropped_seen);
        c->dropped += d - r->dropped_seen;
        collector.dropped += d - r->dropped_seen;
        r->dropped_seen = d;
    }
    ring_name(c, r, 0);
    return moved;
}

static void ring_release(struct ring *r)
{
    if (r->hdr)
        munmap(r->hdr, opp_ring_bytes(r->cap));
    r->hdr = NULL;
}

/* A process vanished without goodbye: what its threads were still inside
 * becomes open events ending now. */
static void emit_open_calls(struct client *c, struct ring *r, uint64_t now)
{
    if (r->dead || atomic_load(&r->hdr->state) == OPP_RING_CLOSED)
        return;
    uint32_t depth = r->hdr->depth;
    if (depth > OPP_OPEN_MAX)
        depth = OPP_OPEN_MAX;
    if (!depth)
        return;
    uint64_t end = now > r->last_end ? now : r->last_end;
    if (collector.sum) { /* innermost first: children before their parents */
        for (uint32_t d = depth; d-- > 0;) {
            struct opp_open o = r->hdr->open[d];
            if (o.fn < c->nfuncs && o.begin <= end)
                opp_sum_call(collector.sum, c->proc, r->tid, o.fn, d, o.begin, end, 0, NULL,
                             OPP_SUM_OPEN);
        }
        return;
    }
    struct enc x;
    enc_start(&x, c, r);
    for (uint32_t d = 0; d < depth; d++) {
        struct opp_open o = r->hdr->open[d];
        if (o.fn >= c->nfuncs || o.begin > end)
            continue;
        enc_add(&x, o.fn, OPP_EV_OPEN, o.begin, end, d, 0, NULL);
    }
    ev_write(&x.e);
}

static uint64_t drain_client(struct client *c)
{
    uint64_t moved = 0;
    for (size_t i = 0; i < c->nrings; i++) {
        struct ring *r = &c->rings[i];
        if (!r->hdr)
            continue;
        moved += ring_drain(c, r);
        /* A thread that exited: its ring is done once drained. */
        if (!r->dead && atomic_load_explicit(&r->hdr->state, memory_order_acquire) ==
                            OPP_RING_CLOSED) {
            moved += ring_drain(c, r);
            ring_release(r);
            if (collector.sum)
                opp_sum_thread_end(collector.sum, c->proc, r->tid);
            if (collector.live)
                opp_top_agg_thread_end(collector.live, c->proc, r->tid);
        }
    }
    return moved;
}

/* ---- clients ---- */

static void end_process(struct client *c, uint32_t how)
{
    if (c->kind != C_PROCESS || c->ended || finished)
        return;
    drain_client(c);
    uint64_t now = opp_ticks((int)c->clock);
    if (how == OPP_END_LOST)
        for (size_t i = 0; i < c->nrings; i++)
            if (c->rings[i].hdr)
                emit_open_calls(c, &c->rings[i], now);
    if (collector.sum && c->nfuncs) {
        /* always: the file's size does not depend on whether a ring overflowed */
        opp_tw_dropped(&collector.tw, c->proc, 0, c->dropped);
        int rc = opp_sum_write(collector.sum, c->proc, &collector.tw);
        if (rc == -ENOMEM)
            logmsg("out of memory: the summary of pid %d is lost", (int)c->pid);
        write_failed(0);
        if (!rc && !collector.tw.error)
            collector.events_summarized += c->events;
    }
    opp_tw_process_end(&collector.tw, c->proc, how, now);
    if (collector.live)
        opp_top_agg_proc_end(collector.live, c->proc);
    c->ended = 1;
}

static void free_fdesc(struct client *c)
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
        logmsg("pid %d: %s; disconnected", (int)c->pid, why);
    if (c->kind == C_PROCESS) {
        if (!c->ended)
            end_process(c, OPP_END_LOST);
        else
            drain_client(c); /* what it recorded after saying goodbye */
    }
    free_fdesc(c);
    for (size_t k = 0; k < c->nrings; k++)
        ring_release(&c->rings[k]);
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
    if (c->kind != C_PROCESS || c->bye || c->ended || finished || (!alive && !rings_mapped(c)))
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

static int on_readable(int i, const char **why);

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
                rc = on_readable(k, &w);
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

static int process_clients(void)
{
    int n = 0;
    for (int i = 0; i < collector.nc; i++)
        n += collector.c[i]->kind == C_PROCESS;
    return n;
}

static int finish(void);

static void reaped_unborn(uint32_t proc, pid_t pid, pid_t ppid);

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
    uint32_t parent = 0;
    for (size_t k = collector.npast; k-- > 0;)
        if ((uint32_t)collector.past[k].pid == h.ppid) {
            parent = collector.past[k].proc;
            break;
        }
    if (collector.npast < sizeof collector.past / sizeof *collector.past)
        collector.past[collector.npast++] =
            (typeof(collector.past[0])){c->proc, c->pid, (pid_t)h.ppid, 0};
    struct opp_tw_process tp = {
        .proc = c->proc, .pid = (uint32_t)c->pid, .ppid = h.ppid, .parent_proc = parent,
        .clock = h.clock, .start_ticks = h.start_ticks, .start_real_ns = h.start_real_ns,
        .exe = h.exe, .argc = h.argc, .argv = (const char *const *)h.argv};
    opp_tw_process(&collector.tw, &tp);
    reaped_unborn(c->proc, c->pid, (pid_t)h.ppid);
    opp_hello_free(&h);
    collector.ever_connected = 1;
    return 0;
}

/* REAPED: c's program reaped a child; when that child is in the trace
 * (the newest instance of its pid whose parent c is), how it ended is
 * written now, whenever its own connection's end is read; when its hello
 * is not read yet, once it is. */
static void on_reaped(struct client *c, const uint8_t *p)
{
    uint32_t pid, status, how, code;
    memcpy(&pid, p, 4);
    memcpy(&status, p + 4, 4);
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
        if ((uint32_t)collector.past[k].pid != pid || collector.past[k].ppid != c->pid)
            continue;
        if (!collector.past[k].reaped && !finished && opp_exit_valid(how, code)) {
            opp_tw_process_status(&collector.tw, collector.past[k].proc, how, code);
            write_failed(0);
        }
        collector.past[k].reaped = 1;
        return;
    }
    if (opp_exit_valid(how, code))
        collector
            .unborn[collector.nunborn++ % (sizeof collector.unborn / sizeof *collector.unborn)] =
            (typeof(collector.unborn[0])){(pid_t)pid, c->pid, how, code};
}

/* The status of a process reaped before its hello was read, written. */
static void reaped_unborn(uint32_t proc, pid_t pid, pid_t ppid)
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
        logmsg("out of memory: pid %d is not in `opprof top`", (int)c->pid);
    if (!rc && c->funcs_got == c->funcs_total) {
        c->nfuncs = c->funcs_total;
        opp_tw_funcs(&collector.tw, c->proc, c->nfuncs, c->fdesc);
        free_fdesc(c);
    }
    return rc;
}

/* Summary mode: the calls the records belong to are drained first (they
 * returned before CUPTI handed over their work), timed records are
 * aggregated, and the rest (names, devices, counts) written as they came. */
static int summarize_gpu(struct client *c, const uint8_t *p, uint32_t n, uint32_t count)
{
    drain_client(c);
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
        drain_client(c);
    struct opp_rbuf b;
    opp_rbuf_init(&b, p, n);
    opp_get_u32(&b);
    const char *why;
    struct opp_gpu_rec g;
    for (uint32_t i = 0; i < count && !opp_gpu_get(&b, &g, &why); i++)
        opp_top_agg_gpu(collector.live, c->proc, &g);
}

/* TOP: the live aggregate's snapshot, with what the collector counts. */
static int on_top(struct client *c, const char **why)
{
    struct opp_top_snap snap = {.now_ns = opp_mono_ns(),
                                .events = collector.events,
                                .from_start = (uint32_t)collector.o->top,
                                .dropped = collector.dropped,
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
    ring_name(c, r, 1);
    return 0;
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
        if (c->kind != C_PROCESS || !c->nfuncs || c->bye) {
            *why = "ring out of order";
            return -1;
        }
        return on_ring(c, p, mh->size, why);
    case OPP_MSG_BYE: {
        if (c->kind != C_PROCESS || mh->size) {
            *why = "goodbye out of order";
            return -1;
        }
        c->bye = 1;
        end_process(c, OPP_END_EXITED);
        int others = process_clients() - 1;
        uint64_t counts[OPP_ACK_FIELDS] = {[OPP_ACK_EVENTS] = c->events,
                                           [OPP_ACK_DROPPED] = c->dropped,
                                           [OPP_ACK_CONNECTED] = (uint64_t)others};
        if (collector.o->root_pid > 0 && c->pid == collector.o->root_pid && others == 0) {
            finish(); /* the whole trace is complete before the root exits */
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
        if (c->kind != C_PROCESS || mh->size != 8) {
            *why = "reaped child out of order";
            return -1;
        }
        on_reaped(c, p);
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
        return on_top(c, why);
    case OPP_MSG_FINISH: {
        uint32_t linger;
        if (c->kind != C_NEW || opp_parse_finish(p, mh->size, &linger, why)) {
            if (!*why)
                *why = "finish out of order";
            return -1;
        }
        c->kind = C_CONTROL;
        if (!collector.finishing) {
            collector.finishing = 1;
            collector.linger_deadline = opp_mono_ns() + (uint64_t)linger * 1000000ull;
        }
        return 0;
    }
    }
    *why = "unknown message type";
    return -1;
}

/* Read what is there; handle each whole message. -1: drop the client. */
static int on_readable(int i, const char **why)
{
    struct client *c = collector.c[i];
    union {
        char buf[CMSG_SPACE(sizeof(int) * MAX_FDS_QUEUED)];
        struct cmsghdr align;
    } u;
    struct iovec iov = {c->rx + c->rxlen, sizeof c->rx - c->rxlen};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
    ssize_t n = recvmsg(c->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
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
    if (n <= 0) {
        *why = n == 0 ? NULL : "read error";
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

static void on_accept(void)
{
    int fd = accept4(collector.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return;
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.uid != geteuid()) {
        logmsg("refused a connection from uid %d (only uid %d may connect)",
               len == sizeof cr ? (int)cr.uid : -1, (int)geteuid());
        close(fd);
        return;
    }
    if (collector.nc >= MAX_CLIENTS) {
        logmsg("refused pid %d: %d clients already", (int)cr.pid, MAX_CLIENTS);
        close(fd);
        return;
    }
    struct client *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        return;
    }
    c->fd = fd;
    c->pid = cr.pid;
    collector.c[collector.nc++] = c;
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

static int finish(void)
{
    if (finished)
        return 0;
    for (int i = 0; i < collector.nc; i++) {
        struct client *c = collector.c[i];
        if (c->kind == C_PROCESS && !c->ended) {
            end_process(c, OPP_END_RUNNING);
            collector.cut++;
        }
        else if (c->kind == C_PROCESS)
            drain_client(c);
    }
    write_clock();
    opp_tw_end(&collector.tw, collector.events, collector.dropped, collector.next_proc);
    write_failed(0);
    int rc = opp_tw_close(&collector.tw);
    if (rc && !collector.tw.error) { /* the last data reached the disk only now, or not */
        collector.tw.error = -rc;
        write_failed(0);
    }
    unlink(collector.o->socket_path);
    finished = 1;
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
        logmsg("socket path too long: %s", path);
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
        logmsg("socket: %s", strerror(errno));
        return -1;
    }
    if (staged)
        unlink(a.sun_path); /* a leftover of a killed collector with our pid */
    mode_t old = umask(0177); /* the socket itself: owner only */
    int rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    umask(old);
    if (rc < 0 || listen(fd, SOMAXCONN) < 0 || (staged && link(a.sun_path, path) < 0)) {
        int e = errno;
        logmsg("cannot listen on %s: %s", path, strerror(e == EEXIST ? EADDRINUSE : e));
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
    finished = 0;
    collector.o = o;
    collector.paused = o->paused;
    char err[512];
    collector.enc = malloc(ENC_BYTES);
    if (o->summary && !(collector.sum = opp_sum_new(o->max_nodes))) {
        free(collector.enc);
        collector.enc = NULL;
    }
    if (!collector.enc) {
        logmsg("out of memory");
        return 1;
    }
    collector.live = opp_top_agg_new(); /* NULL: `opprof top` shows counts, no rows */
    collector.live_on = o->top && collector.live;
    signal(SIGXFSZ, SIG_IGN); /* a file size limit: the write fails and is said */
    if (opp_tw_open(&collector.tw, o->output, err, sizeof err)) {
        logmsg("%s", err);
        return 1;
    }
    /* Two samples a few ms apart, so even a trace cut right away has a
     * usable TSC calibration; more follow while it runs. */
    write_clock();
    uint64_t t0 = opp_mono_ns();
    while (opp_mono_ns() - t0 < 5000000ull)
        ;
    write_clock();
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
            logmsg("fork: %s", strerror(errno));
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
    while (!finished) {
        pfd[0] = (struct pollfd){.fd = collector.lfd, .events = POLLIN};
        for (int i = 0; i < collector.nc; i++)
            pfd[i + 1] =
                (struct pollfd){.fd = collector.c[i]->fd, .events = POLLIN}; /* -1: skipped */
        int nc = collector.nc;
        int pr = poll(pfd, (nfds_t)nc + 1, busy ? BUSY_POLL_MS : IDLE_POLL_MS);
        if (pr < 0 && errno != EINTR) {
            logmsg("poll: %s", strerror(errno));
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
                if (on_readable(i - gone, &why) < 0 && (why || !orphan(collector.c[i - gone], 0))) {
                    drop_client(i - gone, why);
                    gone++;
                }
                if (finished)
                    break;
            }
            if (!finished && (pfd[0].revents & POLLIN))
                for (int k = 0; k < 16; k++) {
                    int before = collector.nc;
                    on_accept();
                    if (collector.nc == before)
                        break;
                }
        }
        if (finished)
            break;
        uint64_t moved = 0;
        for (int i = 0; i < collector.nc; i++)
            if (collector.c[i]->kind == C_PROCESS)
                moved += drain_client(collector.c[i]);
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
            write_clock();
        int procs = process_clients();
        if (collector.stop) {
            logmsg("stopped by signal %d; trace finished with what was recorded",
                   (int)collector.stop);
            finish();
            if (collector.tw.error)
                logmsg("writing %s failed: %s; it holds %llu of the %llu events read", o->output,
                       strerror(collector.tw.error), (unsigned long long)collector.events_written,
                       (unsigned long long)collector.events);
        } else if (collector.finishing && (procs == 0 || now >= collector.linger_deadline)) {
            finish();
        } else if (o->root_pid > 0 && collector.root_gone && procs == 0 &&
                   (kill(o->root_pid, 0) < 0 || now - collector.root_gone_at > 300000000ull)) {
            /* The starting process is gone (an exec keeps its pid and comes
             * back within moments) and nobody else is connected. */
            finish();
        } else if (o->idle_exit_ms > 0 && !collector.ever_connected &&
                   now - collector.started > (uint64_t)o->idle_exit_ms * 1000000ull) {
            logmsg("no process connected within %d ms; finishing an empty trace",
                   o->idle_exit_ms);
            finish();
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
            on_top(collector.c[i], &why);
        if (collector.c[i]->kind == C_CONTROL)
            opp_send_msg(collector.c[i]->fd, OPP_MSG_DONE, done, sizeof done, -1);
    }
    while (collector.nc)
        drop_client(collector.nc - 1, NULL);
    close(collector.lfd);
    free(collector.enc);
    opp_sum_free(collector.sum);
    opp_top_agg_free(collector.live);
    return finished && !collector.tw.error ? 0 : 1;
}

int opp_collector_mode(const char *s, int *summary)
{
    if (!strcmp(s, "full") || !strcmp(s, "summary")) {
        *summary = s[0] == 's';
        return 0;
    }
    return -1;
}
