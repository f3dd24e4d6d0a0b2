/* The rings drained into the trace (state.h): each record checked, encoded
 * and written; a ring's tail moves only once its records are in the file. */
#include "parse.h"
#include "gpu.h"
#include "info.h"
#include "state.h"
#include "summary.h"
#include "top_agg.h"
#include "utf8.h"

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

/* The first failed write (disk full, file size limit): what the file
 * still holds is noted, and said by whoever waits for the trace (DONE,
 * the root's ACK) or, collector_finished by a signal, by us. The rings are read on,
 * so no program waits; what is read from then on is lost. Summary mode
 * writes a process's calls when it ends: the file holds those of the
 * processes written before. */
void opp_coll_write_failed(uint64_t pending)
{
    if (!collector.tw.error || collector.opp_coll_write_failed)
        return;
    collector.opp_coll_write_failed = 1;
    collector.events_written =
        collector.sum ? collector.events_summarized : collector.events - pending;
}

static void ev_write(struct opp_ev_enc *e)
{
    opp_ev_write(&collector.tw, e);
    opp_coll_write_failed(e->count);
}

void opp_coll_write_clock(void)
{
    struct opp_clock_sample s;
    opp_clock_sample(&s);
    if (collector.tw.held) {
        collector.early[collector.nearly ? 1 : 0] = s;
        collector.nearly = collector.nearly ? 2 : 1;
    } else {
        opp_tw_clock(&collector.tw, &s);
    }
    if (collector.live)
        opp_top_agg_clock(collector.live, &s);
    collector.last_clock = s.mono_ns;
}

void opp_coll_write_early(void)
{
    for (int k = 0; k < collector.nearly; k++)
        opp_tw_clock(&collector.tw, &collector.early[k]);
    collector.nearly = 0;
}

/* ---- draining ---- */

static void ring_abandon(struct client *c, struct ring *r, const char *why)
{
    uint64_t head = atomic_load_explicit(&r->hdr->head, memory_order_acquire);
    opp_coll_logmsg("pid %d thread %u: %s; its remaining records are dropped", (int)c->pid, r->tid,
                    why);
    uint64_t lost = head > r->tail ? head - r->tail : 0;
    if (lost > r->cap)
        lost = r->cap;
    if (lost) {
        if (!collector.sum) /* summary mode: one count per process, at its end */
            opp_tw_dropped(&collector.tw, c->proc, r->tid, lost, OPP_DROP_FULL);
        c->dropped += lost;
        collector.dropped += lost;
    }
    r->dead = 1;
    c->bad = "its shared memory was damaged";
}

void opp_coll_ring_name(struct client *c, struct ring *r, int force)
{
    if (collector.sum)
        return; /* summary mode keeps no threads: a run's churn would grow the file */
    uint32_t seq = atomic_load_explicit(&r->hdr->name_seq, memory_order_acquire);
    if (seq == r->name_seq && !force)
        return;
    /* The name's bytes as they are (the outputs escape them, each as its
     * reader needs), to a NUL; one that fills the field may be the
     * kernel's cut of a longer one (PR_SET_NAME keeps 15 bytes), which
     * ends before the character it cut. */
    char name[sizeof r->hdr->name];
    memcpy(name, r->hdr->name, sizeof name);
    name[sizeof name - 1] = 0;
    if (atomic_load_explicit(&r->hdr->name_seq, memory_order_acquire) != seq)
        return; /* renamed while we copied: next time */
    r->name_seq = seq;
    size_t n = strlen(name);
    if (n == sizeof name - 1)
        name[opp_utf8_whole(name, n)] = 0;
    opp_tw_thread(&collector.tw, c->proc, r->tid, name);
}

/* Encoder helper: add, flushing the chunk when the buffer is full. */
struct enc {
    struct opp_ev_enc e;
    struct client *c;
    struct ring *r;
    /* The last 16 bytes of the slot of the call encoded (or in summary
     * mode counted) last (function, depth, argument count, flags,
     * argument) when the next slot with the same bytes is that call again
     * but for its times (enc_repeats). */
    uint64_t rep[2];
    int rep_ok;
    uint32_t counted; /* summary mode: calls counted since the slots were handed back */
};

static void enc_start(struct enc *x, struct client *c, struct ring *r)
{
    x->c = c;
    x->r = r;
    x->rep_ok = 0;
    x->counted = 0;
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

/* Summary mode: n more calls of this thread counted. */
static inline void enc_counted(struct enc *x, uint64_t n)
{
    x->counted += (uint32_t)n;
    x->c->events += n;
    collector.events += n;
}

/* Whether this chunk's slots are to be handed back: the records after
 * them wait (hand_back). */
static inline int enc_chunk_full(const struct enc *x)
{
    return x->e.count >= CHUNK_EVENTS || x->counted >= CHUNK_EVENTS;
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

/* After a call of one slot was encoded (or counted) from slot rec (the
 * caller's copy): a next slot with rec's bytes after the times is that
 * call again, which enc_repeats takes without reading the slot field by
 * field. */
static void enc_note_slot(struct enc *x, const struct opp_rec *rec)
{
    _Static_assert(offsetof(struct opp_rec, fn) == 16 && sizeof x->rep == 16, "slot tail");
    memcpy(x->rep, &rec->fn, sizeof x->rep);
    x->rep_ok = !(rec->flags & ~OPP_REC_RANGE) && rec->nargs <= 1;
}

/* The slots from t on that are the call taken last again but for their
 * times (most calls of a loop), up to head and the chunk's end: encoded as
 * SAME events, or in summary mode (sum) counted by opp_sum_again, which
 * may refuse them; returns how many. Each slot's fields are read once,
 * into registers (the client's memory may change under us), and the
 * encoder's buffer and last end are kept in locals: a store through the
 * buffer's bytes would make the compiler reload them from memory at each. */
_Static_assert(offsetof(struct opp_rec, depth) == 20 && offsetof(struct opp_rec, nargs) == 22 &&
                   offsetof(struct opp_rec, flags) == 23,
               "enc_repeats reads them from the slot's tail");
static inline __attribute__((always_inline)) uint64_t enc_repeats(
    struct enc *x, const struct opp_rec *base, uint64_t t, uint64_t head, struct opp_top_agg *live,
    struct opp_sum *sum, uint32_t proc, uint32_t tid)
{
    struct opp_ev_enc *e = &x->e;
    if (!x->rep_ok)
        return 0;
    uint64_t n = head - t;
    if (sum) {
        if (n > CHUNK_EVENTS - x->counted)
            n = CHUNK_EVENTS - x->counted;
    } else {
        if (!e->count || e->count >= CHUNK_EVENTS)
            return 0;
        uint64_t room = (e->w.cap - e->w.len) / OPP_EV_MAX_BYTES;
        if (n > CHUNK_EVENTS - e->count)
            n = CHUNK_EVENTS - e->count;
        if (n > room)
            n = room;
    }
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
        if (sum && !opp_sum_again(sum, begin, end))
            break;
        if (live) { /* `opprof top` watches: each call to its aggregate too
                       (the slot's fn, depth, nargs and flags, as read) */
            uint32_t fn = (uint32_t)tail[0], depth = (uint16_t)(tail[0] >> 32);
            uint32_t nargs = (uint8_t)(tail[0] >> 48), flags = (uint8_t)(tail[0] >> 56);
            opp_top_agg_call(live, proc, tid, fn, depth, begin, end, nargs, &tail[1],
                             (flags & OPP_REC_RANGE) != 0);
        }
        if (!sum) {
            enc_clamp(last, &begin, &end);
            opp_ev_put_times(&w, last, OPP_EV_SAME, begin, end);
            last = end;
        }
    }
    if (sum) {
        enc_counted(x, k);
        return k;
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

/* Whether rec is a call made an open event when its process ended (the
 * thread returned from it since): then seen. */
static int left_again(struct ring *r, const struct opp_rec *rec)
{
    uint32_t d = rec->depth;
    if (d >= OPP_OPEN_MAX || !(r->left_mask >> d & 1) || rec->fn != r->left_fn[d] ||
        rec->begin != r->left_begin[d] || (rec->flags & OPP_REC_WINDOW))
        return 0;
    r->left_mask &= ~(1u << d);
    return 1;
}

/* Move what the thread published into the file; return records moved. */
/* The ring's count of records lost for reason why (enum opp_drop_why)
 * now at total, *seen of them counted before: the rest counted, in the
 * trace as a DROPPED chunk (summary mode: one count per process, at its
 * end) and in the client's and the collector's totals. */
static void count_drops(struct client *c, const struct ring *r, uint64_t total, uint64_t *seen,
                        uint32_t why)
{
    if (total <= *seen)
        return;
    uint64_t n = total - *seen;
    if (!collector.sum)
        opp_tw_dropped(&collector.tw, c->proc, r->tid, n, why);
    c->dropped += n;
    collector.dropped += n;
    if (why == OPP_DROP_INTERRUPTED) {
        c->interrupted += n;
        collector.interrupted += n;
    }
    *seen = total;
}

static uint64_t ring_drain(struct client *c, struct ring *r)
{
    if (r->dead || collector_finished)
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
        const int left = r->left_mask != 0; /* each record looked at alone */
        while (t < head) {
            /* two copies of the loop: the one of a full trace nobody
               watches calls nothing */
            uint64_t k =
                left ? 0
                : collector.live_on || collector.sum
                    ? enc_repeats(&x, base, t, head, collector.live_on ? collector.live : NULL,
                                  collector.sum, c->proc, r->tid)
                    : enc_repeats(&x, base, t, head, NULL, NULL, 0, 0);
            if (k) { /* the call before again, k times */
                t += k;
                moved += k;
                if (enc_chunk_full(&x) && t < head)
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
            if (left && left_again(r, &rec)) { /* made an open event already */
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
                    opp_coll_logmsg("out of memory: a call of pid %d is not counted", (int)c->pid);
                enc_counted(&x, 1);
            } else {
                enc_add_stack(&x, rec.fn, 0, rec.begin, rec.end, rec.depth, nargs, args, stack);
            }
            enc_note_slot(&x, &rec);
            t += slots;
            moved++;
            if (enc_chunk_full(&x) && t < head)
                hand_back(&x, t);
        }
        ev_write(&x.e);
        /* Only now, with the records in the file, may the thread reuse them. */
        atomic_store_explicit(&h->tail, head, memory_order_release);
        r->tail = head;
    }
    count_drops(c, r, atomic_load_explicit(&h->dropped, memory_order_relaxed), &r->dropped_seen,
                OPP_DROP_FULL);
    count_drops(c, r, atomic_load_explicit(&h->interrupted, memory_order_relaxed),
                &r->interrupted_seen, OPP_DROP_INTERRUPTED);
    opp_coll_ring_name(c, r, 0);
    return moved;
}

void opp_coll_ring_release(struct ring *r)
{
    if (r->hdr)
        munmap(r->hdr, opp_ring_bytes(r->cap));
    r->hdr = NULL;
}

/* A call in flight's arguments: a range's name (its two columns), or none. */
static uint32_t open_nargs(const struct opp_open *o)
{
    return o->arg[0] ? 2 : 0;
}

/* Call o at depth d made an open event: its record, if it comes, is
 * that call again (left_again). */
static void left_open(struct ring *r, const struct opp_open *o, uint32_t d)
{
    r->left_mask |= 1u << d;
    r->left_fn[d] = o->fn;
    r->left_begin[d] = o->begin;
}

/* A process ended (vanished without goodbye, or exited while other
 * threads were inside calls): what its threads were still inside becomes
 * open events ending now (its end). */
void opp_coll_emit_open_calls(struct client *c, struct ring *r, uint64_t now)
{
    if (r->dead || atomic_load(&r->hdr->state) == OPP_RING_CLOSED)
        return;
    uint32_t depth = r->hdr->depth;
    if (depth > OPP_OPEN_MAX)
        depth = OPP_OPEN_MAX;
    if (depth && opp_ring_last_is(r->hdr, r->cap, r->tail, &r->hdr->open[depth - 1], depth - 1))
        depth--; /* drained already: the thread was leaving it */
    if (!depth)
        return;
    uint64_t end = now > r->last_end ? now : r->last_end;
    if (collector.sum) { /* innermost first: children before their parents */
        for (uint32_t d = depth; d-- > 0;) {
            struct opp_open o = r->hdr->open[d];
            if (o.fn >= c->nfuncs || o.begin > end)
                continue;
            left_open(r, &o, d);
            if (opp_sum_call(collector.sum, c->proc, r->tid, o.fn, d, o.begin, end, open_nargs(&o),
                             o.arg, OPP_SUM_OPEN))
                opp_coll_logmsg("out of memory: a call of pid %d is not counted", (int)c->pid);
            c->events++; /* counted as a full trace's open event is */
            collector.events++;
        }
        return;
    }
    struct enc x;
    enc_start(&x, c, r);
    for (uint32_t d = 0; d < depth; d++) {
        struct opp_open o = r->hdr->open[d];
        if (o.fn >= c->nfuncs || o.begin > end)
            continue;
        left_open(r, &o, d);
        enc_add(&x, o.fn, OPP_EV_OPEN, o.begin, end, d, open_nargs(&o), o.arg);
    }
    ev_write(&x.e);
}

uint64_t opp_coll_drain_client(struct client *c)
{
    uint64_t moved = 0;
    for (size_t i = 0; i < c->nrings; i++) {
        struct ring *r = &c->rings[i];
        if (!r->hdr)
            continue;
        moved += ring_drain(c, r);
        /* A thread that exited: its ring is done once drained. */
        if (!r->dead &&
            atomic_load_explicit(&r->hdr->state, memory_order_acquire) == OPP_RING_CLOSED) {
            moved += ring_drain(c, r);
            opp_coll_ring_release(r);
            if (collector.sum)
                opp_sum_thread_end(collector.sum, c->proc, r->tid);
            if (collector.live)
                opp_top_agg_thread_end(collector.live, c->proc, r->tid);
        }
    }
    return moved;
}
