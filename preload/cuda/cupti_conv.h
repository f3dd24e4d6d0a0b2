/* CUPTI activity buffers -> opprof GPU records (common/gpu.h). Used by the
 * agent's buffer-completed callback, and by unit tests that fill buffers
 * with CUPTI's own record structs. Not on the hot path: it runs on CUPTI's
 * thread a few times a second. */
#ifndef OPP_CUPTI_CONV_H
#define OPP_CUPTI_CONV_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "buf.h"
#include "gpu.h"
#include "proto.h"

/* Where a full message goes: 0 when handed over, -1 when not. */
typedef int (*opp_conv_emit_fn)(void *ctx, const void *payload, uint32_t size);
/* cuptiActivityGetNextRecord, passed in (the agent dlopens CUPTI). */
typedef CUptiResult (*opp_conv_next_fn)(uint8_t *, size_t, CUpti_Activity **);

struct opp_conv {
    opp_conv_emit_fn emit;
    /* when set: CUPTI's 32-bit correlation id as the process's 64-bit one
     * (past CUPTI's wrap); not: as it is */
    uint64_t (*corr)(uint32_t correlation);
    /* when set: a CUPTI timestamp on our clock; not: it is ours already */
    uint64_t (*time)(uint64_t timestamp);
    /* when set: whether the GPU work of a correlation id is kept (the call
     * that caused it was made inside a capture window); not: all is */
    int (*keep)(uint64_t correlation);
    void *ctx;
    opp_conv_next_fn next;
    /* names already sent: content hash -> string id (open addressing) */
    struct opp_conv_name { uint64_t hash; uint32_t id; } *names;
    uint32_t names_cap, names_len, next_id;
    /* the message being filled: u32 count, then records */
    uint8_t msg[OPP_MSG_MAX];
    struct opp_wbuf w;
    uint32_t count;
    /* totals */
    uint64_t records;  /* records handed over */
    uint64_t lost;     /* records whose message could not be handed over */
    uint64_t skipped;  /* CUPTI records of kinds we do not keep */
    uint64_t outside;  /* records of work caused outside the capture windows */
    uint64_t unfinished; /* records without timestamps, and buffers cut short by one */
};

void opp_conv_init(struct opp_conv *c, opp_conv_next_fn next, opp_conv_emit_fn emit, void *ctx);
void opp_conv_free(struct opp_conv *c);
/* Convert every record of one completed buffer (records are queued; call
 * opp_conv_flush to hand over what is queued). Returns records converted. */
uint64_t opp_conv_buffer(struct opp_conv *c, uint8_t *buffer, size_t valid);
/* Queue one converted record (also used for DROPPED and DEVICE notes). */
void opp_conv_put(struct opp_conv *c, const struct opp_gpu_rec *r);
void opp_conv_flush(struct opp_conv *c);

#endif
