/* The table stream's join (table_internal.h): the first read of the
 * calls, once for every question asked of a stream, joins each kernel,
 * copy, set and device memory record to the call that owns it (the
 * pass's join, gpu_join.h) and sizes the CPU frees in time order; each
 * owning call's share is kept beyond memory by the call's place, each
 * kernel, copy and set with its owner's thread, for every question's
 * read to take. */
#include <stdlib.h>
#include <string.h>

#include "analysis/table_internal.h"
#include "analysis/table_stream.h"
#include "gpu.h"

/* A GPU record as the join keeps it: a kernel, copy or set (its row), or
 * device memory (its bytes, sized once every record is in). */
struct gop {
    uint64_t dur, bytes, time, idx, addr;
    uint32_t type, name, proc, op;
};

/* The first read: the CPU memory calls. */
static void first_begin(void *ctx)
{
    struct opp_table_stream *s = ctx;
    s->cpu_mem = 0;
    opp_extsort_free(s->cmem); /* an earlier read's (the pass reads again) */
    if (!(s->cmem = opp_extsort_new(sizeof(struct opp_mrec), opp_mrec_cmp_time, OWN_SORT_MEM)))
        tstream_fail(s, -ENOMEM);
}

static int first_call(void *ctx, const struct opp_pass_call *x)
{
    struct opp_table_stream *s = ctx;
    struct opp_mrec r;
    if (!opp_mrec_of_call(s->m, x, &r))
        return 0;
    s->cpu_mem = 1;
    if (s->failed)
        return s->failed;
    return tstream_fail(s, opp_extsort_add(s->cmem, &r));
}

/* What the join keeps of record r: 0, 1 (none of it), or -ENOMEM. */
static int keep_op(void *ctx, uint32_t pi, const struct opp_gpu_rec *r, void *op)
{
    struct opp_table_stream *s = ctx;
    struct gop g = {.type = r->type, .proc = pi, .idx = s->nrec++};
    if (r->type == OPP_GPU_KERNEL || r->type == OPP_GPU_MEMCPY || r->type == OPP_GPU_MEMSET) {
        struct opp_gpu_op o;
        struct opp_gpu_launch l;
        opp_gpu_op_decode(r, pi, &o, &l);
        g.time = o.start_ns;
        g.dur = opp_gpu_op_dur(&o);
        g.bytes = o.bytes;
        g.name = opp_loader_op_name(&opp_pass_meta(s->pass)->ld, &o, s->dem, s->ndem);
        if (g.name == UINT32_MAX)
            return -ENOMEM;
    } else if (r->type == OPP_GPU_MEMORY) {
        g.time = r->f[OPP_GF_START];
        g.addr = r->f[OPP_GF_M_ADDRESS];
        g.op = (uint32_t)r->f[OPP_GF_M_OP];
        g.bytes = r->f[OPP_GF_M_BYTES];
    } else if (r->type != OPP_GPU_SYNC && r->type != OPP_GPU_OVERHEAD) {
        return 1; /* syncs and overhead: joined for the count of those of no call */
    }
    memcpy(op, &g, sizeof g);
    return 0;
}

/* A joined record: a kernel's, copy's or set's row when the filters
 * select it, and its time (device memory: its record) for its owner. */
static void owned(void *ctx, const struct opp_gpu_call *c, const void *op)
{
    struct opp_table_stream *s = ctx;
    struct gop g;
    memcpy(&g, op, sizeof g);
    if (s->failed || g.type == OPP_GPU_SYNC || g.type == OPP_GPU_OVERHEAD)
        return;
    if (g.type == OPP_GPU_MEMORY) { /* every one: a free's size may be another's */
        if (!opp_loader_grow((void **)&s->gmem, &s->gmem_cap, s->ngmem + 1, sizeof *s->gmem))
            s->gmem[s->ngmem++] =
                (struct opp_mrec){.time = g.time,
                                  .idx = g.idx,
                                  .addr = g.addr,
                                  .bytes = g.bytes > INT64_MAX ? INT64_MAX : (int64_t)g.bytes,
                                  .proc = g.proc,
                                  .thread = c ? c->thread : UINT32_MAX,
                                  .at = c ? c->at : 0,
                                  .op = g.op};
        else
            tstream_fail(s, -ENOMEM);
        return;
    }
    /* its call's GPU time whatever the filters: the call is filtered */
    int rc = c ? opp_extsort_add(s->owns, &(struct own){.at = c->at, .cuda = g.dur}) : 0;
    if (!rc)
        rc = opp_extsort_add(s->gowns, &(struct gown){.idx = g.idx,
                                                      .time = g.time,
                                                      .dur = g.dur,
                                                      .bytes = g.bytes,
                                                      .call = c ? c->begin : UINT64_MAX,
                                                      .name = g.name,
                                                      .type = g.type,
                                                      .proc = g.proc,
                                                      .thread = c ? c->thread : OPP_GPU_NONE});
    if (rc)
        tstream_fail(s, rc);
}

/* Device memory records by time, then as read (gpu_memory.c). */
static int cmp_read(const void *pa, const void *pb)
{
    const struct opp_mrec *a = pa, *b = pb;
    OPP_SORT_BY(a->time, b->time);
    OPP_SORT_BY(a->idx, b->idx);
    return 0;
}

static int cmp_own(const void *pa, const void *pb)
{
    const struct own *a = pa, *b = pb;
    OPP_SORT_BY(a->at, b->at);
    return 0;
}

static int cmp_gown(const void *pa, const void *pb)
{
    const struct gown *a = pa, *b = pb;
    OPP_SORT_BY(a->idx, b->idx);
    return 0;
}

/* Each owning call's device memory, and each CPU memory call's bytes,
 * sized in time order, into the sort by the calls' place with their GPU
 * time. 0 or -errno. */
static int settle_owned(struct opp_table_stream *s)
{
    struct opp_live live = {0};
    int rc = 0;
    if (s->ngmem)
        qsort(s->gmem, s->ngmem, sizeof *s->gmem, cmp_read);
    for (size_t i = 0; i < s->ngmem && !rc; i++)
        rc = opp_mrec_size(&live, &s->gmem[i], OPP_GPU_MEM_ALLOC, OPP_GPU_MEM_FREE);
    opp_live_free(&live);
    for (size_t i = 0; i < s->ngmem && !rc; i++)
        if (s->gmem[i].thread != UINT32_MAX) /* a call's */
            rc = opp_extsort_add(s->owns,
                                 &(struct own){.at = s->gmem[i].at, .mem = s->gmem[i].bytes});
    live = (struct opp_live){0};
    const struct opp_mrec *c;
    if (!rc && s->cmem && !(rc = opp_extsort_done(s->cmem)))
        while (!rc && (c = opp_extsort_next(s->cmem))) {
            struct opp_mrec r = *c;
            if (!(rc = opp_mrec_size(&live, &r, OPP_MEM_ALLOC, OPP_MEM_FREE)))
                rc = opp_extsort_add(s->owns, &(struct own){.at = r.at, .cpu = r.bytes});
        }
    opp_live_free(&live);
    if (!rc && s->cmem)
        rc = opp_extsort_error(s->cmem);
    opp_extsort_free(s->cmem);
    s->cmem = NULL;
    if (!rc)
        rc = opp_extsort_done(s->gowns);
    return rc ? rc : opp_extsort_done(s->owns);
}

/* The next of the sorted records, in s->cur. 0 or -errno. */
static int own_next(struct opp_table_stream *s)
{
    const struct own *r = opp_extsort_next(s->owns);
    s->have_cur = r != NULL;
    if (r)
        s->cur = *r;
    return r ? 0 : opp_extsort_error(s->owns);
}

/* Call at's GPU time and device memory into o (zero: none). The calls
 * come in the order of at but for those a pass keeps to its read's end
 * (a process died inside them, a thread kept whole): the records passed
 * before those come are kept aside. 0 or -errno. */
int opp_tstream_own_take(struct opp_table_stream *s, uint64_t at, struct own *o)
{
    *o = (struct own){.at = at};
    if (!s->owns)
        return 0;
    if (at < s->next_at) { /* passed: aside */
        size_t lo = OPP_PARTITION_POINT(s->nstash, k, s->stash[k].at < at);
        if (lo < s->nstash && s->stash[lo].at == at)
            *o = s->stash[lo];
        return 0;
    }
    s->next_at = at + 1;
    int rc = 0;
    while (!rc && s->have_cur && s->cur.at <= at) {
        struct own *into = o;
        if (s->cur.at < at) { /* a call still to come: aside, one record a call */
            if (!s->nstash || s->stash[s->nstash - 1].at != s->cur.at) {
                if (opp_loader_grow((void **)&s->stash, &s->stash_cap, s->nstash + 1,
                                    sizeof *s->stash))
                    return -ENOMEM;
                s->stash[s->nstash++] = (struct own){.at = s->cur.at};
            }
            into = &s->stash[s->nstash - 1];
        }
        into->cuda += s->cur.cuda;
        into->mem = opp_add_sat(into->mem, s->cur.mem);
        into->cpu = opp_add_sat(into->cpu, s->cur.cpu);
        rc = own_next(s);
    }
    return rc;
}

/* The join's results (owns, gowns): the next question joins again. */
void opp_tstream_unjoin(struct opp_table_stream *s)
{
    opp_extsort_free(s->owns);
    opp_extsort_free(s->gowns);
    free(s->gmem);
    opp_extsort_free(s->cmem);
    free(s->dem);
    s->owns = s->gowns = s->cmem = NULL;
    s->gmem = NULL;
    s->dem = NULL;
    s->ngmem = s->gmem_cap = 0;
    s->joined = 0;
}

/* Whether the trace has GPU work or CPU memory: questions then need the
 * join's read first. */
static int joins(const struct opp_table_stream *s)
{
    const struct opp_stream_meta *meta = opp_pass_meta(s->pass);
    if (s->m->summary) /* its nodes' GPU work and memory are given */
        return 0;
    return meta->gpu_ops || s->m->gpu.records || s->m->gpu.nmem || opp_mrec_any_calls(s->m);
}

/* The join's read (also's too), 0, 1 (cannot) or -1 (error), err saying why. */
static int join(struct opp_table_stream *s, const struct opp_pass_consumer *also, char *err,
                size_t errlen)
{
    s->nrec = 0;
    if (!(s->dem = opp_loader_dem_new(s->m, &s->ndem)) ||
        !(s->owns = opp_extsort_new(sizeof(struct own), cmp_own, OWN_SORT_MEM)) ||
        !(s->gowns = opp_extsort_new(sizeof(struct gown), cmp_gown, OWN_SORT_MEM))) {
        opp_tstream_unjoin(s);
        return opp_err_oom(err, errlen);
    }
    const struct opp_pass_consumer first = {.ctx = s,
                                            .begin = first_begin,
                                            .call = first_call,
                                            .op_bytes = sizeof(struct gop),
                                            .op = keep_op,
                                            .owned = owned,
                                            .also = also};
    int rc = tstream_said(s, opp_pass_run(s->pass, &first, err, errlen), err, errlen);
    if (!rc) {
        s->m->gpu.unattached = opp_pass_unattached(s->pass);
        rc = opp_pass_said(0, settle_owned(s), err, errlen); /* or its sorts' files */
    }
    if (rc) {
        opp_tstream_unjoin(s);
    } else { /* what only the join's read needed */
        free(s->gmem);
        free(s->dem);
        s->gmem = NULL;
        s->dem = NULL;
        s->ngmem = s->gmem_cap = 0;
    }
    s->joined = !rc;
    s->failed = 0;
    return rc;
}

int opp_table_stream_join_pending(const struct opp_table_stream *s)
{
    return !s->joined && joins(s);
}

int opp_table_stream_join_with(struct opp_table_stream *s, const struct opp_pass_consumer *also,
                               char *err, size_t errlen)
{
    return opp_table_stream_join_pending(s) ? join(s, also, err, errlen) : 0;
}

int opp_tstream_owns_rewind(struct opp_table_stream *s)
{
    s->next_at = 0;
    s->nstash = 0;
    int rc = opp_extsort_rewind(s->owns);
    return rc ? rc : own_next(s);
}
