/* CUPTI activity records -> opprof GPU records (cupti_conv.h). Each CUPTI
 * struct version is read in one place; everything downstream sees gpu.h. */
#ifdef OPP_HAVE_CUDA
#include "cuda/cupti_conv.h"
#include "util.h" /* opp_fnv1a */

#include <stdlib.h>
#include <string.h>

void opp_conv_init(struct opp_conv *c, opp_conv_next_fn next, opp_conv_emit_fn emit, void *ctx)
{
    memset(c, 0, sizeof *c);
    c->next = next;
    c->emit = emit;
    c->ctx = ctx;
    c->next_id = 1; /* 0: no name */
}

void opp_conv_free(struct opp_conv *c)
{
    free(c->names);
    c->names = NULL;
    c->names_cap = c->names_len = 0;
}

static void start_msg(struct opp_conv *c)
{
    opp_wbuf_init(&c->w, c->msg, sizeof c->msg);
    opp_put_u32(&c->w, 0);
    c->count = 0;
}

void opp_conv_flush(struct opp_conv *c)
{
    if (c->count) {
        memcpy(c->msg, &c->count, 4);
        if (c->emit(c->ctx, c->msg, (uint32_t)c->w.len) == 0)
            c->records += c->count;
        else
            c->lost += c->count;
    }
    start_msg(c);
}

void opp_conv_put(struct opp_conv *c, const struct opp_gpu_rec *r)
{
    if (!c->w.p)
        start_msg(c);
    if (opp_gpu_put(&c->w, r) < 0) {
        opp_conv_flush(c);
        if (opp_gpu_put(&c->w, r) < 0) /* cannot happen: a record is far below a message */
            return;
    }
    c->count++;
}

/* The id of a name, sending a STRING record the first time it is seen.
 * The hash stands for the name: a 64-bit collision would merge two names. */
static uint32_t name_id(struct opp_conv *c, const char *s)
{
    if (!s || !*s)
        return 0;
    size_t n = strnlen(s, OPP_NAME_STR_MAX);
    uint64_t h = opp_fnv1a(s, n);
    if (c->names_len * 2 >= c->names_cap) {
        uint32_t cap = c->names_cap ? c->names_cap * 2 : 1024;
        struct opp_conv_name *t = calloc(cap, sizeof *t);
        if (!t)
            return 0;
        for (uint32_t i = 0; i < c->names_cap; i++)
            if (c->names[i].hash)
                for (uint32_t k = (uint32_t)c->names[i].hash & (cap - 1);; k = (k + 1) & (cap - 1))
                    if (!t[k].hash) {
                        t[k] = c->names[i];
                        break;
                    }
        free(c->names);
        c->names = t;
        c->names_cap = cap;
    }
    uint32_t k = (uint32_t)h & (c->names_cap - 1);
    for (; c->names[k].hash; k = (k + 1) & (c->names_cap - 1))
        if (c->names[k].hash == h)
            return c->names[k].id;
    c->names[k].hash = h;
    c->names[k].id = c->next_id++;
    c->names_len++;
    struct opp_gpu_rec r = {.type = OPP_GPU_STRING, .nfields = 1, .str = s, .slen = (uint32_t)n};
    r.f[0] = c->names[k].id;
    opp_conv_put(c, &r);
    return c->names[k].id;
}

/* 0 (CUPTI_CORRELATION_ID_UNKNOWN) stays 0: the extension keeps it. */
static uint64_t corr_of(const struct opp_conv *c, uint32_t correlation)
{
    return c->corr ? c->corr(correlation) : correlation;
}

static void timed(const struct opp_conv *c, struct opp_gpu_rec *r, uint32_t type, uint32_t nfields,
                  uint64_t start, uint64_t end, uint32_t device, uint32_t context, uint32_t stream,
                  uint32_t correlation)
{
    memset(r, 0, sizeof *r);
    r->type = type;
    r->nfields = nfields;
    r->f[OPP_GF_START] = c->time ? c->time(start) : start;
    r->f[OPP_GF_END] = c->time ? c->time(end) : end;
    r->f[OPP_GF_DEVICE] = device;
    r->f[OPP_GF_CONTEXT] = context;
    r->f[OPP_GF_STREAM] = stream;
    r->f[OPP_GF_CORRELATION] = corr_of(c, correlation);
}

static int convert(struct opp_conv *c, const CUpti_Activity *a)
{
    struct opp_gpu_rec r;
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const void *)a;
        uint32_t name = name_id(c, k->name);
        timed(c, &r, OPP_GPU_KERNEL, OPP_GF_K_COUNT, k->start, k->end, k->deviceId, k->contextId,
              k->streamId, k->correlationId);
        r.f[OPP_GF_K_NAME] = name;
        r.f[OPP_GF_K_GRID_X] = (uint32_t)k->gridX;
        r.f[OPP_GF_K_GRID_Y] = (uint32_t)k->gridY;
        r.f[OPP_GF_K_GRID_Z] = (uint32_t)k->gridZ;
        r.f[OPP_GF_K_BLOCK_X] = (uint32_t)k->blockX;
        r.f[OPP_GF_K_BLOCK_Y] = (uint32_t)k->blockY;
        r.f[OPP_GF_K_BLOCK_Z] = (uint32_t)k->blockZ;
        r.f[OPP_GF_K_REGS] = k->registersPerThread;
        r.f[OPP_GF_K_STATIC_SMEM] = (uint32_t)k->staticSharedMemory;
        r.f[OPP_GF_K_DYNAMIC_SMEM] = (uint32_t)k->dynamicSharedMemory;
        r.f[OPP_GF_K_GRAPH] = k->graphId;
        r.f[OPP_GF_K_GRAPH_NODE] = k->graphNodeId;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const void *)a;
        timed(c, &r, OPP_GPU_MEMCPY, OPP_GF_C_COUNT, m->start, m->end, m->deviceId, m->contextId,
              m->streamId, m->correlationId);
        r.f[OPP_GF_C_BYTES] = m->bytes;
        r.f[OPP_GF_C_KIND] = m->copyKind;
        r.f[OPP_GF_C_SRC_KIND] = m->srcKind;
        r.f[OPP_GF_C_DST_KIND] = m->dstKind;
        r.f[OPP_GF_C_GRAPH] = m->graphId;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const void *)a;
        timed(c, &r, OPP_GPU_MEMSET, OPP_GF_S_COUNT, m->start, m->end, m->deviceId, m->contextId,
              m->streamId, m->correlationId);
        r.f[OPP_GF_S_BYTES] = m->bytes;
        r.f[OPP_GF_S_VALUE] = m->value;
        r.f[OPP_GF_S_MEM_KIND] = m->memoryKind;
        r.f[OPP_GF_S_GRAPH] = m->graphId;
        break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const CUpti_ActivitySynchronization2 *s = (const void *)a;
        /* CUPTI gives no device here; the context identifies it. The
         * stream is CUPTI_SYNCHRONIZATION_INVALID_VALUE (all ones) for
         * context synchronisation. */
        timed(c, &r, OPP_GPU_SYNC, OPP_GF_Y_COUNT, s->start, s->end, 0, s->contextId, s->streamId,
              s->correlationId);
        r.f[OPP_GF_Y_TYPE] = s->type;
        r.f[OPP_GF_Y_EVENT] = s->cudaEventId;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
        const CUpti_ActivityMemory4 *m = (const void *)a;
        timed(c, &r, OPP_GPU_MEMORY, OPP_GF_M_COUNT, m->timestamp, m->timestamp, m->deviceId,
              m->contextId, m->streamId, m->correlationId);
        r.f[OPP_GF_M_OP] = m->memoryOperationType;
        r.f[OPP_GF_M_MEM_KIND] = m->memoryKind;
        r.f[OPP_GF_M_ADDRESS] = m->address;
        r.f[OPP_GF_M_BYTES] = m->bytes;
        r.f[OPP_GF_M_ASYNC] = m->isAsync;
        break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
        const CUpti_ActivityOverhead3 *o = (const void *)a;
        timed(c, &r, OPP_GPU_OVERHEAD, OPP_GF_O_COUNT, o->start, o->end, 0, 0, 0, o->correlationId);
        /* "Client is responsible for freeing this memory" (cupti_activity.h) */
        free(o->overheadData);
        r.f[OPP_GF_O_KIND] = o->overheadKind;
        break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const CUpti_ActivityExternalCorrelation *x = (const void *)a;
        memset(&r, 0, sizeof r);
        r.type = OPP_GPU_EXTCORR;
        r.nfields = OPP_GF_X_COUNT;
        r.f[OPP_GF_X_KIND] = x->externalKind;
        r.f[OPP_GF_X_EXTERNAL] = x->externalId;
        r.f[OPP_GF_X_CORRELATION] = corr_of(c, x->correlationId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
        const CUpti_ActivityDevice5 *d = (const void *)a;
        uint32_t name = name_id(c, d->name);
        memset(&r, 0, sizeof r);
        r.type = OPP_GPU_DEVICE;
        r.nfields = OPP_GF_V_COUNT;
        r.f[OPP_GF_V_ID] = d->id;
        r.f[OPP_GF_V_NAME] = name;
        r.f[OPP_GF_V_CC_MAJOR] = d->computeCapabilityMajor;
        r.f[OPP_GF_V_CC_MINOR] = d->computeCapabilityMinor;
        r.f[OPP_GF_V_SMS] = d->numMultiprocessors;
        r.f[OPP_GF_V_THREADS_PER_SM] =
            (uint64_t)d->maxWarpsPerMultiprocessor * d->numThreadsPerWarp;
        r.f[OPP_GF_V_REGS_PER_SM] = d->maxRegistersPerMultiprocessor;
        r.f[OPP_GF_V_SMEM_PER_SM] = d->maxSharedMemoryPerMultiprocessor;
        r.f[OPP_GF_V_BLOCKS_PER_SM] = d->maxBlocksPerMultiprocessor;
        r.f[OPP_GF_V_WARPS_PER_SM] = d->maxWarpsPerMultiprocessor;
        r.f[OPP_GF_V_THREADS_PER_BLOCK] = d->maxThreadsPerBlock;
        r.f[OPP_GF_V_GLOBAL_MEM] = d->globalMemorySize;
        break;
    }
    default:
        c->skipped++;
        return 0;
    }
    /* Work without timestamps (cut off by a forced flush, or untimed for
     * lack of device memory) says nothing of when it ran: counted, left out. */
    if (r.type >= OPP_GPU_KERNEL && r.type <= OPP_GPU_SYNC && (!r.f[OPP_GF_START] || !r.f[OPP_GF_END])) {
        c->unfinished++;
        return 0;
    }
    uint64_t corr = r.type == OPP_GPU_EXTCORR ? r.f[OPP_GF_X_CORRELATION]
                    : r.type == OPP_GPU_DEVICE ? 0 : r.f[OPP_GF_CORRELATION];
    if (corr && c->keep && !c->keep(corr)) {
        c->outside++;
        return 0;
    }
    opp_conv_put(c, &r);
    return 1;
}

uint64_t opp_conv_buffer(struct opp_conv *c, uint8_t *buffer, size_t valid)
{
    uint64_t n = 0;
    CUpti_Activity *a = NULL;
    CUptiResult rc = CUPTI_ERROR_MAX_LIMIT_REACHED;
    if (!c->w.p)
        start_msg(c);
    while (valid && (rc = c->next(buffer, valid, &a)) == CUPTI_SUCCESS && a)
        n += (uint64_t)convert(c, a);
    /* INVALID_KIND: an incomplete record, past which nothing can be read */
    if (valid && rc != CUPTI_SUCCESS && rc != CUPTI_ERROR_MAX_LIMIT_REACHED)
        c->unfinished++;
    return n;
}

#endif /* OPP_HAVE_CUDA */
