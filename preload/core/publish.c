/* Publishing's slow paths (publish.h): a ring's rewind, the wait of
 * OPPROF_DROP=block, a call with its code stack; and this thread's state. */
#include "core/publish.h"

#include <errno.h>
#include <sched.h>
#include <time.h>

__thread struct opp_tls opp_tls __attribute__((tls_model("initial-exec")));

int opp_drop_block; /* OPPROF_DROP=block */
/* This thread's production, measured between looks: the head and the time
 * of the last mark. A rewind leaves a quarter of the ring free until the
 * collector reads past it, so it is made only for a thread that wrote at
 * most a quarter of the ring in REWIND_PACE_NS: the quarter then lasts
 * that long, many times the collector's 2 ms between looks. A thread
 * calling flat out goes round the whole ring, as it always did. */
#define REWIND_PACE_NS 10000000ull
static __thread uint64_t rewind_mark_h, rewind_mark_ns;
static __thread int rewind_paced; /* the last pace measured allows a rewind */

uint64_t opp_ring_rewind(struct opp_ring_hdr *r, uint64_t h)
{
    uint64_t now = opp_mono_ns();
    if (!rewind_mark_ns || h < rewind_mark_h) {
        rewind_mark_h = h, rewind_mark_ns = now;
    } else if (now - rewind_mark_ns >= REWIND_PACE_NS) {
        rewind_paced = h - rewind_mark_h <= opp_ring_hot(r->capacity);
        rewind_mark_h = h, rewind_mark_ns = now;
    }
    uint64_t lap = h - (h & (r->capacity - 1)); /* where this lap began */
    if (!rewind_paced)
        return h;
    r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (r->cached_tail < lap + opp_ring_hot(r->capacity))
        return h; /* the collector has not read this lap's first quarter */
    struct opp_rec *s = opp_ring_slot(r, r->capacity, h);
    uint64_t next = lap + r->capacity;
    s->begin = s->end = 0;
    s->fn = 0;
    s->depth = 0;
    s->nargs = 0;
    s->flags = OPP_REC_REWIND;
    s->arg0 = next - h;
    atomic_store_explicit(&r->head, next, memory_order_release);
    rewind_mark_h = next; /* the skipped slots are not production */
    return next;
}

int opp_ring_wait(struct opp_ring_hdr *r, uint64_t h, unsigned need)
{
    if (opp_tls.jumping)
        return 0;
    int saved_errno = errno;
    struct opp_guard g;
    opp_guard_hold(&g, NULL, opp_guard_undo);
    /* Bounded by progress: 1 s in which the collector reads nothing of
     * this ring (stopped, stuck); 10 s before it first reads it at all
     * (a collector still starting, slow under the sanitizers). */
    uint64_t last = atomic_load_explicit(&r->tail, memory_order_acquire);
    uint64_t deadline = opp_mono_ns() + (last ? 1000000000ull : 10000000000ull);
    int room = 0;
    for (unsigned spin = 0;; spin++) {
        r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (h + need - r->cached_tail <= r->capacity) {
            room = 1;
            break;
        }
        if (r->cached_tail != last) {
            last = r->cached_tail;
            deadline = opp_mono_ns() + 1000000000ull;
        }
        if (!__atomic_load_n(&opp_drop_block, __ATOMIC_RELAXED))
            break; /* another thread gave up waiting */
        if (opp_mono_ns() >= deadline) {
            if (__atomic_exchange_n(&opp_drop_block, 0, __ATOMIC_RELAXED))
                opp_agent_say(
                    "the collector read nothing for 1 s (OPPROF_DROP=block): records that "
                    "do not fit are dropped and counted from now on",
                    "", "");
            break;
        }
        if (spin < 4096) { /* the collector frees a ring in microseconds */
            sched_yield();
        } else {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
    opp_guard_off(&g);
    errno = saved_errno;
    return room;
}

void opp_publish_stack(struct opp_ring_hdr *r, const struct opp_frame *f, uint64_t end,
                       const uint64_t *args, unsigned nargs, enum opp_pub kind)
{
    if (nargs >= OPP_MAX_ARGS) {
        opp_publish_f(r, f->fn, f->depth, f->begin, end, args, nargs, 0, kind);
        return;
    }
    uint64_t a[OPP_MAX_ARGS];
    for (unsigned i = 0; i < nargs; i++)
        a[i] = args[i];
    a[nargs] = f->stack;
    opp_publish_f(r, f->fn, f->depth, f->begin, end, a, nargs + 1, OPP_REC_STACK, kind);
}

/* Whether the last record in ring r is that of the innermost call in
 * flight (its leave's record is in; the depth not lowered yet). */
static int innermost_published(struct opp_ring_hdr *r)
{
    uint32_t d = r->depth;
    if (!d || d > OPP_OPEN_MAX)
        return d > OPP_OPEN_MAX; /* no such call, or one not kept in the header */
    return opp_ring_last_is(r, r->capacity, atomic_load_explicit(&r->head, memory_order_relaxed),
                            &r->open[d - 1], d - 1);
}

void opp_publish_left(uintptr_t sp, uintptr_t cur)
{
    uint8_t kind = opp_tls.publishing;
    if (kind != OPP_PUB_NONE && kind != OPP_PUB_LEAVE && sp &&
        !opp_jump_leaves(opp_tls.frame, sp, cur))
        return;
    struct opp_ring_hdr *r = opp_tls.ring;
    opp_tls.publishing = OPP_PUB_NONE;
    if (kind == OPP_PUB_NONE || !r || !opp_ring_gate(r))
        return;
    if (kind == OPP_PUB_LEAVE) {
        if (innermost_published(r))
            r->depth--;
    } else if (kind == OPP_PUB_RECORD ||
               atomic_load_explicit(&r->head, memory_order_relaxed) == opp_tls.at) {
        opp_ring_drop_interrupted(r);
    }
}
