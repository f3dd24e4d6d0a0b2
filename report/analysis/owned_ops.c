/* A full trace's GPU ops sorted by the calls that own them (owned_ops.h). */
#include "analysis/owned_ops.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/extsort.h"
#include "analysis/gpu_join.h"
#include "analysis/live_blocks.h"
#include "analysis/mem_records.h"
#include "analysis/stream_meta.h"
#include "gpu.h"
#include "ops.h"

#define SORT_MEM (16u << 20) /* bytes the sort by call keeps in memory */

/* A CPU MEMORY call's bytes, found in time order (mem_records.h), by the
 * call's number. */
struct mem_size {
    uint64_t at;
    int64_t bytes;
};

/* A call a process died inside: joined once the read is done, when
 * stream_meta knows where its process ended. */
struct open_call {
    struct opp_tr_event e;
    uint32_t thread, seq;
};

struct opp_owned_ops {
    struct opp_stream_meta meta;
    struct opp_gpu_join *join;
    struct opp_sum *sum;
    struct opp_extsort *sorted;
    const struct opp_owned_op *cur; /* the next one sorted, NULL at the end */
    struct opp_owned_op out;        /* the one handed out */
    struct opp_extsort *mems, *sizes;
    const struct mem_size *size; /* the next one sorted, NULL at the end */
    uint32_t *seq;                  /* by thread index: its calls so far */
    size_t nseq;
    uint64_t calls, ops;
    struct open_call *open;
    size_t nopen, open_cap;
    int failed; /* -errno */
};

static int cmp_owned(const void *pa, const void *pb)
{
    const struct opp_owned_op *a = pa, *b = pb;
    OPP_SORT_BY(a->at, b->at);
    OPP_SORT_BY(a->seq, b->seq);
    return 0;
}

struct open_place {
    uint32_t depth;
    size_t i;
};

static int cmp_open(const void *pa, const void *pb)
{
    const struct open_place *a = pa, *b = pb;
    OPP_SORT_BY(b->depth, a->depth);
    OPP_SORT_BY(a->i, b->i);
    return 0;
}

size_t *opp_owned_open_order(const uint32_t *depth, size_t n)
{
    struct open_place *p = malloc((n ? n : 1) * sizeof *p);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    if (p && order) {
        for (size_t i = 0; i < n; i++)
            p[i] = (struct open_place){depth[i], i};
        qsort(p, n, sizeof *p, cmp_open);
        for (size_t k = 0; k < n; k++)
            order[k] = p[k].i;
    } else {
        free(order);
        order = NULL;
    }
    free(p);
    return order;
}

static int cmp_size(const void *pa, const void *pb)
{
    const struct mem_size *a = pa, *b = pb;
    OPP_SORT_BY(a->at, b->at);
    return 0;
}

static int fail(struct opp_owned_ops *o, int rc)
{
    if (!o->failed)
        o->failed = rc;
    return 1;
}

static int join_call(struct opp_owned_ops *o, uint32_t ti, const struct opp_tr_event *e,
                     uint32_t seq, uint64_t at)
{
    int rc = opp_stream_meta_join(&o->meta, o->join, ti, e, seq, at);
    return rc ? fail(o, rc) : 0;
}

static int on_call(void *ctx, uint32_t ti, const struct opp_tr_event *e)
{
    struct opp_owned_ops *o = ctx;
    if (opp_loader_grow_zeroed((void **)&o->seq, &o->nseq, (size_t)ti + 1, sizeof *o->seq))
        return fail(o, -ENOMEM);
    uint32_t seq = o->seq[ti]++;
    if (!(e->flags & OPP_EV_OPEN)) {
        const struct opp_model *m = o->meta.ld.m;
        uint32_t pi = m->threads[ti].proc, kind = e->fn < m->procs[pi].nfuncs
                                                      ? m->procs[pi].funcs[e->fn].kind
                                                      : 0;
        const uint64_t *a;
        if (opp_mrec_cols(kind, e->args, e->nargs, &a)) {
            uint64_t b = a[OPP_COL_MEM_BYTES];
            struct opp_mrec r = {.time = e->begin_ns,
                                 .idx = (uint64_t)e->depth << 32 | seq,
                                 .addr = a[OPP_COL_MEM_ADDRESS],
                                 .at = o->calls,
                                 .bytes = (int64_t)(b > INT64_MAX ? INT64_MAX : b),
                                 .proc = pi,
                                 .thread = ti,
                                 .seq = seq,
                                 .op = (uint32_t)a[OPP_COL_MEM_OP]};
            int rc = opp_extsort_add(o->mems, &r);
            if (rc)
                return fail(o, rc);
        }
        return join_call(o, ti, e, seq, o->calls++);
    }
    if (opp_loader_grow((void **)&o->open, &o->open_cap, o->nopen + 1, sizeof *o->open))
        return fail(o, -ENOMEM);
    o->open[o->nopen++] = (struct open_call){*e, ti, seq};
    return 0;
}

static int on_gpu(void *ctx, uint32_t proc, const struct opp_gpu_rec *g)
{
    struct opp_owned_ops *o = ctx;
    const struct opp_process *p = opp_loader_proc(o->meta.ld.m, proc);
    if (!p)
        return fail(o, -EPROTO); /* the reader only passes declared processes */
    uint32_t pi = (uint32_t)(p - o->meta.ld.m->procs);
    int rc = 0;
    struct opp_owned_op x = {.seq = o->ops, .proc = proc};
    if (g->type == OPP_GPU_EXTCORR) {
        rc = opp_gpu_join_extcorr(o->join, pi, g);
    } else if (opp_sum_op_of(o->sum, proc, g, &x.op)) {
        o->ops++;
        rc = opp_gpu_join_op(o->join, pi, opp_corr_id(g->f[OPP_GF_CORRELATION]), &x);
    }
    return rc ? fail(o, rc) : 0;
}

static void owned(void *ctx, const struct opp_gpu_call *c, const void *op)
{
    struct opp_owned_ops *o = ctx;
    struct opp_owned_op x;
    memcpy(&x, op, sizeof x);
    /* overhead belongs to no call (summary_calls.c) */
    x.at = c && x.op.type != OPP_GPU_OVERHEAD ? c->at : UINT64_MAX;
    int rc = o->failed ? 0 : opp_extsort_add(o->sorted, &x);
    if (rc)
        fail(o, rc);
}

/* Each CPU free without a size takes its allocation's, found in time
 * order as cpu_memory.c finds it (not in the trace's order, where a
 * thread's free can come before another's allocation); the bytes by call
 * into o->sizes. 0 or -errno. */
static int mem_sizes(struct opp_owned_ops *o)
{
    int rc = opp_extsort_done(o->mems);
    struct opp_live live = {0};
    const struct opp_mrec *c;
    while (!rc && (c = opp_extsort_next(o->mems))) {
        struct opp_mrec r = *c;
        if (!(rc = opp_mrec_size(&live, &r, OPP_MEM_ALLOC, OPP_MEM_FREE)))
            rc = opp_extsort_add(o->sizes, &(struct mem_size){r.at, r.bytes});
    }
    opp_live_free(&live);
    if (!rc)
        rc = opp_extsort_error(o->mems);
    return rc ? rc : opp_extsort_done(o->sizes);
}

/* What stopped it, err said: 2 the temporary files, -1 memory or the
 * trace; 0 when nothing did. */
static int stopped(struct opp_owned_ops *o, char *err, size_t errlen)
{
    if (o->failed == -ENOMEM) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (o->failed == -EPROTO) {
        snprintf(err, errlen, "the trace's calls and GPU records do not match its processes");
        return -1;
    }
    if (o->failed) {
        opp_extsort_no_room(err, errlen, o->failed);
        return 2;
    }
    return 0;
}

/* The calls processes died inside, numbered in the order they are
 * summed in; 0 or -1 (out of memory). */
static int join_open(struct opp_owned_ops *o)
{
    uint32_t *depth = malloc(o->nopen * sizeof *depth);
    size_t *order = NULL, *rank = malloc(o->nopen * sizeof *rank);
    if (depth && rank) {
        for (size_t i = 0; i < o->nopen; i++)
            depth[i] = o->open[i].e.depth;
        order = opp_owned_open_order(depth, o->nopen);
    }
    if (order) {
        for (size_t k = 0; k < o->nopen; k++)
            rank[order[k]] = k;
        for (size_t i = 0; i < o->nopen && !o->failed; i++)
            join_call(o, o->open[i].thread, &o->open[i].e, o->open[i].seq,
                      OPP_OWNED_OPEN_AT + rank[i]);
    }
    free(depth), free(rank), free(order);
    return order ? 0 : -1;
}

static int read_join(struct opp_owned_ops *o, const char *path, char *err, size_t errlen)
{
    int rc = opp_stream_meta_read(&o->meta, path, on_call, on_gpu, o, err, errlen);
    if (o->failed)
        return stopped(o, err, errlen);
    if (rc)
        return -1; /* a summary trace: summarize.c says so before */
    if (o->nopen && join_open(o))
        fail(o, -ENOMEM);
    uint64_t unattached;
    if (!o->failed && (rc = opp_gpu_join_run(o->join, owned, o, &unattached)))
        fail(o, rc);
    if (!o->failed && (rc = opp_extsort_done(o->sorted)))
        fail(o, rc);
    if (!o->failed && (rc = mem_sizes(o)))
        fail(o, rc);
    return stopped(o, err, errlen);
}

int opp_owned_ops_read(struct opp_owned_ops **out, const char *path, struct opp_sum *sum, char *err,
                       size_t errlen)
{
    *out = NULL;
    struct opp_owned_ops *o = calloc(1, sizeof *o);
    if (o &&
        (!(o->join = opp_gpu_join_new(sizeof(struct opp_owned_op))) ||
         !(o->sorted = opp_extsort_new(sizeof(struct opp_owned_op), cmp_owned, SORT_MEM)) ||
         !(o->mems = opp_extsort_new(sizeof(struct opp_mrec), opp_mrec_cmp_time, SORT_MEM / 4)) ||
         !(o->sizes = opp_extsort_new(sizeof(struct mem_size), cmp_size, SORT_MEM / 4)))) {
        opp_owned_ops_free(o);
        o = NULL;
    }
    if (!o) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    o->sum = sum;
    int rc = read_join(o, path, err, errlen);
    /* what the join held goes before the calls are read again */
    opp_gpu_join_free(o->join);
    o->join = NULL;
    opp_stream_meta_free(&o->meta);
    opp_extsort_free(o->mems);
    o->mems = NULL;
    free(o->open);
    o->open = NULL;
    free(o->seq);
    o->seq = NULL;
    if (rc) {
        opp_owned_ops_free(o);
        return rc;
    }
    o->cur = opp_extsort_next(o->sorted);
    o->size = opp_extsort_next(o->sizes);
    *out = o;
    return rc;
}

int opp_owned_ops_mem(struct opp_owned_ops *o, uint64_t at, int64_t *bytes)
{
    if (!o->size || o->size->at != at)
        return 0;
    *bytes = o->size->bytes;
    o->size = opp_extsort_next(o->sizes);
    return 1;
}

const struct opp_owned_op *opp_owned_ops_next(struct opp_owned_ops *o, uint64_t at)
{
    if (!o->cur || o->cur->at > at)
        return NULL;
    o->out = *o->cur;
    o->cur = opp_extsort_next(o->sorted);
    return &o->out;
}

int opp_owned_ops_error(const struct opp_owned_ops *o)
{
    int rc = opp_extsort_error(o->sorted);
    return rc ? rc : opp_extsort_error(o->sizes);
}

void opp_owned_ops_free(struct opp_owned_ops *o)
{
    if (!o)
        return;
    opp_gpu_join_free(o->join);
    opp_stream_meta_free(&o->meta);
    opp_extsort_free(o->sorted);
    opp_extsort_free(o->mems);
    opp_extsort_free(o->sizes);
    free(o->open);
    free(o->seq);
    free(o);
}
