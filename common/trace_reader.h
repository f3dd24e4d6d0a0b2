/* The trace reader's own (trace_read.c reads the file and its chunks'
 * frames, trace_chunks.c each chunk's payload): its state, and times in
 * CLOCK_MONOTONIC ns. */
#ifndef OPP_TRACE_READER_H
#define OPP_TRACE_READER_H

#include <stdint.h>
#include <stdio.h>

#include "format.h"
#include "trace.h"
#include "util.h"

struct proc_info {
    uint8_t known, clock;
    uint32_t nfuncs;
    uint32_t nodes; /* summary nodes read */
};

struct reader {
    FILE *f;
    const char *path;
    uint64_t off, size;
    /* TSC -> ns: ns = mono0 + ((tsc - tsc0) * mult) >> 32 */
    uint64_t tsc0, mono0, mult;
    int have_cal;
    struct proc_info *procs;
    uint32_t nprocs;
    uint8_t *buf;
    size_t bufcap;
    struct opp_tr_summary *sum;
    int damaged; /* the read stopped at a damaged chunk, not at a cut or the end */
};

static inline uint64_t opp_tr_to_ns(const struct reader *r, uint32_t clock, uint64_t t)
{
    if (clock != OPP_CLOCK_TSC)
        return t;
    if (t >= r->tsc0)
        return r->mono0 + (uint64_t)(((unsigned __int128)(t - r->tsc0) * r->mult) >> 32);
    uint64_t back = (uint64_t)(((unsigned __int128)(r->tsc0 - t) * r->mult) >> 32);
    return back < r->mono0 ? r->mono0 - back : 0;
}

/* A duration in ticks as ns. */
static inline uint64_t opp_tr_dur_ns(const struct reader *r, uint32_t clock, uint64_t t)
{
    if (clock != OPP_CLOCK_TSC)
        return t;
    unsigned __int128 v = ((unsigned __int128)t * r->mult) >> 32;
    return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

/* A chunk's payload b of type, validated and handed to v: 0; 1 when the
 * trace is damaged (r->sum->warning says how); -1 when the chunk is invalid;
 * 2 when v asked to stop. */
int opp_tr_chunk(struct reader *r, uint32_t type, struct opp_rbuf *b,
                 const struct opp_tr_visitor *v, void *ctx);
/* A chunk type's name, for a person. */
const char *opp_tr_chunk_name(uint32_t type);

#endif
