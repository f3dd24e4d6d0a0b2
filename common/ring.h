/* The per-thread record ring: memory shared between one profiled thread (the
 * only producer) and the collector (the only consumer). It lives in a sealed
 * memfd handed over the socket, so every record the thread published is still
 * readable by the collector after the process dies, however it dies. */
#ifndef OPP_RING_H
#define OPP_RING_H

#include <stdatomic.h>
#include <stdint.h>

#include "format.h" /* OPP_MAX_ARGS */

#define OPP_RING_MAGIC 0x474e4952504f5031ull /* "1POPRING" */
#define OPP_RING_VERSION 3u
#define OPP_RING_HDR_SIZE 4096u
#define OPP_OPEN_MAX 32u /* calls in flight remembered per thread */
#define OPP_RING_MIN_RECS 1024u
#define OPP_RING_MAX_RECS (1u << 24)
#define OPP_RING_DEFAULT_RECS (1u << 19) /* 16 MiB of 32-byte slots: about 12 ms of a
                                                 thread calling flat out */

enum opp_ring_state { OPP_RING_ACTIVE = 0, OPP_RING_CLOSED = 1 };

/* One 32-byte slot. A record is one slot, followed by ext slots holding
 * arg[1..] four at a time when nargs > 1. */
struct opp_rec {
    uint64_t begin, end; /* ticks */
    uint32_t fn;         /* index into the process's entry-point table */
    uint16_t depth;      /* calls of ours this thread was inside */
    uint8_t nargs;
    uint8_t flags;
    uint64_t arg0;
};

/* opp_rec.flags */
#define OPP_REC_STACK 0x1u /* the last argument is a code stack id (OPPROF_STACKS) */
#define OPP_REC_RANGE 0x4u /* a range recorded when it ended (NVTX start/end, ProfilerStep#N),
                              not entered: the calls inside it are its siblings in depth */
#define OPP_REC_WINDOW 0x2u /* not a call: this thread's later calls belong to schedule
                               window arg0 (OPPROF_MODE=summary with a schedule) */
#define OPP_REC_REWIND 0x8u /* not a call: the ring goes on at the start of its next lap;
                               this record and the arg0 - 1 slots after it hold nothing */

/* Where a ring rewinds: a thread whose records went a quarter of the ring
 * into a lap, once the collector has read that quarter, goes on at the
 * start of the next lap (the rest of this lap held nothing), so that the
 * memory it writes stays a quarter of the ring, which the caches keep,
 * not all of it (16 MiB by default), whose lines would push the program's
 * own data out; the rest of the ring is there for a burst, and a thread
 * the collector lags behind goes round the whole of it. Looked at every
 * OPP_RING_REWIND_EVERY slots past the quarter. */
static inline uint64_t opp_ring_hot(uint32_t capacity) { return capacity >> 2; }
#define OPP_RING_REWIND_EVERY 2048u /* slots: 64 KiB */

struct opp_rec_ext {
    uint64_t arg[4];
};

_Static_assert(sizeof(struct opp_rec) == 32, "slot size");
_Static_assert(sizeof(struct opp_rec_ext) == 32, "slot size");

static inline unsigned opp_rec_slots(unsigned nargs)
{
    return nargs <= 1 ? 1u : 1u + (nargs - 1 + 3) / 4;
}

struct opp_open {
    uint64_t begin;
    uint32_t fn;
    uint32_t sp;     /* the producer's own: the low 32 bits of the wrapper's frame address (0: a
                      feature's range, no C frame); a later call entered at or above it on the
                      same stack means the thread left this one without returning (longjmp) */
    uint64_t arg[2]; /* a range's name, its record's first two columns (a torch op's
                        string id and 0, where its external correlation id would be; an
                        NVTX range's message and domain); arg[0] 0: none */
};

/* Producer and consumer fields sit on separate cache lines. */
struct opp_ring_hdr {
    /* line 0: fixed at creation */
    uint64_t magic;
    uint32_t version;
    uint32_t capacity; /* slots, a power of two */
    uint32_t tid;
    uint32_t pad0[11];
    /* line 1: producer */
    _Atomic uint64_t head; /* slots published */
    uint64_t cached_tail;  /* producer's last look at tail */
    _Atomic uint64_t dropped; /* records lost because the ring was full */
    _Atomic uint32_t state;
    uint32_t depth;        /* calls in flight on this thread */
    _Atomic uint32_t name_seq;
    char name[16];
    _Atomic uint32_t paused; /* 1: record nothing (`opprof ctl stop`); written by the
                                collector, read by the producer at each call */
    _Atomic uint64_t interrupted; /* records lost because a signal handler interrupted
                                     the thread's own publishing (a call it made then, or
                                     a jump out of it), not in dropped; was padding */
    /* line 2: consumer */
    _Atomic uint64_t tail; /* slots consumed */
    uint64_t pad2[7];
    /* lines 3..: the calls in flight (open[depth-1] is innermost) */
    struct opp_open open[OPP_OPEN_MAX];
};

_Static_assert(sizeof(struct opp_ring_hdr) <= OPP_RING_HDR_SIZE, "ring header");
_Static_assert(__builtin_offsetof(struct opp_ring_hdr, head) == 64, "line 1");
_Static_assert(__builtin_offsetof(struct opp_ring_hdr, interrupted) == 120, "line 1's end");
_Static_assert(__builtin_offsetof(struct opp_ring_hdr, tail) == 128, "line 2");

static inline uint64_t opp_ring_bytes(uint32_t capacity)
{
    return OPP_RING_HDR_SIZE + (uint64_t)capacity * sizeof(struct opp_rec);
}

/* Slot i of a ring of cap slots. The capacity is the caller's own copy:
 * the collector never takes it from the shared header, which the client
 * can rewrite at any moment. */
static inline struct opp_rec *opp_ring_slot(struct opp_ring_hdr *r, uint32_t cap, uint64_t i)
{
    return (struct opp_rec *)((char *)r + OPP_RING_HDR_SIZE) + (i & (cap - 1));
}

/* Whether the record that ends at slot end (the head, or what the
 * collector drained: the tail) is call in flight o at depth d. A thread
 * publishes a call's record before it leaves the call (the depth stored
 * after the head): a look between the two stores finds it both in the
 * ring and in flight. Slots copied first: the thread may be writing over
 * those before the tail. */
static inline int opp_ring_last_is(struct opp_ring_hdr *r, uint32_t cap, uint64_t end,
                                   const struct opp_open *o, uint32_t d)
{
    for (unsigned k = 1; k <= opp_rec_slots(OPP_MAX_ARGS) && k <= end; k++) {
        struct opp_rec s;
        __builtin_memcpy(&s, opp_ring_slot(r, cap, end - k), sizeof s);
        if (!(s.flags & (OPP_REC_REWIND | OPP_REC_WINDOW)) && opp_rec_slots(s.nargs) == k &&
            s.fn == o->fn && s.begin == o->begin && s.depth == d)
            return 1;
    }
    return 0;
}

#endif
