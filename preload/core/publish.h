/* The core's second layer: this thread's state and publishing a finished
 * call into its ring (the hot path's last half), with what a full ring
 * does. Below: forkgate.h, base.h. */
#ifndef OPP_CORE_PUBLISH_H
#define OPP_CORE_PUBLISH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base.h"
#include "core/forkgate.h"

/* NEW: not attached yet; ON: recording; OFF: never (and our reentrancy guard). */
enum opp_thread_state { OPP_T_NEW = 0, OPP_T_ON = 1, OPP_T_OFF = 2 };

/* What opp_publish_f is publishing: a call the thread leaves, still in
 * flight in the ring's header until its record is in (a jump out of the
 * publish leaves it recorded as left: thread.h), or another record (a
 * jump out of it before it is in counts it as dropped); the latter once
 * the slot it takes is known (opp_tls.at). */
enum opp_pub { OPP_PUB_NONE = 0, OPP_PUB_RECORD, OPP_PUB_LEAVE, OPP_PUB_RECORD_AT };

struct opp_tls {
    struct opp_ring_hdr *ring; /* NULL: not attached, attaching, or off */
    uint8_t state;             /* enum opp_thread_state */
    uint8_t publishing;        /* enum opp_pub, inside opp_publish_f: a signal handler's
                                  call then is counted as dropped, not written over (a
                                  handler that jumps out of it: opp_publish_left) */
    uint8_t jumping;           /* a jump records the calls it leaves: a full ring never waits
                                  (opp_ring_wait), the jump is made inside a handler */
    uint64_t at;               /* OPP_PUB_RECORD_AT: the head the record is written at */
    uintptr_t frame;           /* OPP_PUB_RECORD(_AT): the frame of ours publishing it */
};
extern __thread struct opp_tls opp_tls;

/* Whether a jump to stack pointer sp, made from cur (the jump's own
 * frame, in the handler), leaves frame, one of ours that the handler
 * interrupted: frame below sp on one stack (within 1 GiB), and cur not
 * between them (a jump within a handler's alternate stack lying above
 * frame leaves nothing of ours). */
static inline int opp_jump_leaves(uintptr_t frame, uintptr_t sp, uintptr_t cur)
{
    return sp - frame - 1 < (1u << 30) && !(frame < cur && cur < sp);
}

/* A call being recorded, from its entry (thread.h) to its publishing. */
struct opp_frame {
    struct opp_ring_hdr *r;
    uint64_t begin;
    uint32_t fn, depth;
    uint32_t stack; /* code stack id, 0 when none */
};

/* Count one record of this thread as dropped, its ring full: one
 * instruction, so a signal handler's count and the thread's never
 * overwrite each other. */
static inline void opp_ring_drop(struct opp_ring_hdr *r)
{
    atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
}

/* The same for a record lost because a signal handler interrupted this
 * thread's publishing (a call of the handler's, or its jump out of it):
 * counted apart, so that the user is not told to enlarge a ring that had
 * room. */
static inline void opp_ring_drop_interrupted(struct opp_ring_hdr *r)
{
    atomic_fetch_add_explicit(&r->interrupted, 1, memory_order_relaxed);
}

/* A quarter of the ring into a lap (ring.h): when the collector has read
 * that quarter, an OPP_REC_REWIND record at h and the ring goes on at the
 * next lap's start; the head to write at. Out of line: once every
 * OPP_RING_REWIND_EVERY slots. */
uint64_t opp_ring_rewind(struct opp_ring_hdr *r, uint64_t h);

/* OPPROF_DROP=block: wait (bounded) for the collector to make room for
 * need slots; 1 when there is room, 0 at once while a jump records
 * (opp_tls.jumping). A jump out of the wait puts the thread's cancel
 * state back (opp_guard; it holds no signal back: it may last seconds). */
extern int opp_drop_block;
int opp_ring_wait(struct opp_ring_hdr *r, uint64_t h, unsigned need);

/* Append one finished event to ring r (this thread's): no wait, a full
 * ring drops and counts it (unless OPPROF_DROP=block). nargs and kind are
 * constants at every call site, so the slot arithmetic folds away. A call
 * made by a signal handler that interrupted this very function on this
 * thread would claim the same slot: it is counted as dropped instead.
 * kind OPP_PUB_LEAVE: the call in flight at depth, which the thread
 * leaves once its record is in (the ring's depth lowered to depth then,
 * not before: a handler that jumps out before that leaves the call in
 * flight, recorded as left, never lost). */
OPP_HOT void opp_publish_f(struct opp_ring_hdr *r, uint32_t fn, uint32_t depth, uint64_t begin,
                           uint64_t end, const uint64_t *args, unsigned nargs, uint8_t flags,
                           enum opp_pub kind)
{
    if (OPP_UNLIKELY(opp_tls.publishing)) {
        opp_ring_drop_interrupted(r);
        if (kind == OPP_PUB_LEAVE)
            r->depth = depth;
        return;
    }
    if (kind == OPP_PUB_RECORD)
        opp_tls.frame = (uintptr_t)__builtin_frame_address(0);
    opp_tls.publishing = (uint8_t)kind;
    OPP_BARRIER();
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    unsigned need = opp_rec_slots(nargs);
    if (OPP_UNLIKELY(((h + need) & (OPP_RING_REWIND_EVERY - 1)) < need) &&
        (h & (r->capacity - 1)) >= opp_ring_hot(r->capacity))
        h = opp_ring_rewind(r, h);
    if (OPP_UNLIKELY(h + need - r->cached_tail > r->capacity)) {
        r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (h + need - r->cached_tail > r->capacity &&
            !(opp_drop_block && opp_ring_wait(r, h, need))) {
            opp_ring_drop(r); /* full: drop and count, never wait */
            OPP_BARRIER();
            if (kind == OPP_PUB_LEAVE)
                r->depth = depth;
            OPP_BARRIER();
            opp_tls.publishing = 0;
            return;
        }
    }
    if (kind == OPP_PUB_RECORD) {
        opp_tls.at = h;
        OPP_BARRIER();
        opp_tls.publishing = OPP_PUB_RECORD_AT;
        OPP_BARRIER();
    }
    struct opp_rec *s = opp_ring_slot(r, r->capacity, h);
    s->begin = begin;
    s->end = end;
    s->fn = fn;
    s->depth = (uint16_t)depth;
    s->nargs = (uint8_t)nargs;
    s->flags = flags;
    s->arg0 = nargs ? args[0] : 0;
    for (unsigned i = 1; i < need; i++) {
        struct opp_rec_ext *e = (struct opp_rec_ext *)opp_ring_slot(r, r->capacity, h + i);
        for (unsigned k = 0; k < 4; k++) {
            unsigned a = 1 + (i - 1) * 4 + k;
            e->arg[k] = a < nargs ? args[a] : 0;
        }
    }
    atomic_store_explicit(&r->head, h + need, memory_order_release);
    OPP_BARRIER();
    if (kind == OPP_PUB_LEAVE) {
        r->depth = depth;
        OPP_BARRIER();
    }
    opp_tls.publishing = 0;
}

/* A record that is no call in flight (a range, a call published out of
 * order). */
OPP_HOT void opp_publish(struct opp_ring_hdr *r, uint32_t fn, uint32_t depth, uint64_t begin,
                         uint64_t end, const uint64_t *args, unsigned nargs)
{
    opp_publish_f(r, fn, depth, begin, end, args, nargs, 0, OPP_PUB_RECORD);
}

/* The same with the frame's code stack id appended (OPP_REC_STACK); a
 * call with all OPP_MAX_ARGS values goes without its stack. kind: as
 * opp_publish_f's. */
void opp_publish_stack(struct opp_ring_hdr *r, const struct opp_frame *f, uint64_t end,
                       const uint64_t *args, unsigned nargs, enum opp_pub kind);

/* A signal handler jumps out of this thread's publish (opp_tls.publishing
 * set; our code jumps nowhere): a call it left is left in flight, its
 * record recorded as the jump leaves it (thread.h), unless its record
 * is in already (then the thread leaves it now); another record not in
 * yet is counted as dropped, unless the jump to sp (0: not known), made
 * from cur, stays within the handler (opp_jump_leaves): then that publish
 * goes on when the handler returns. Called by the jump (jump.c). */
void opp_publish_left(uintptr_t sp, uintptr_t cur);

#endif
