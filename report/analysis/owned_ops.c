/* A full trace's GPU ops sorted by the calls that own them (owned_ops.h). */
#include "analysis/owned_ops.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/extsort.h"
#include "analysis/live_blocks.h"
#include "analysis/mem_records.h"
#include "analysis/pass.h"
#include "gpu.h"
#include "ops.h"

#define SORT_MEM (16u << 20) /* bytes the sort by call keeps in memory */

/* A CPU MEMORY call's bytes, found in time order (mem_records.h), by the
 * call's number. */
struct mem_size {
    uint64_t at;
    int64_t bytes;
};

struct opp_owned_ops {
    const struct opp_model *m;
    struct opp_sum *sum;
    struct opp_extsort *sorted;
    const struct opp_owned_op *cur; /* the next one sorted, NULL at the end */
    struct opp_owned_op out;        /* the one handed out */
    struct opp_extsort *mems, *sizes;
    const struct mem_size *size; /* the next one sorted, NULL at the end */
    uint64_t ops;
    /* the calls processes died inside, in the trace's order: their places,
     * depths, and (once the read is over) their numbers */
    uint64_t *open_at, *open_num;
    uint32_t *open_depth;
    size_t nopen, open_cap, depth_cap;
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
    return rc;
}

/* A call as read: a CPU MEMORY one to be sized in time order, one its
 * process died inside to be numbered once all are known. */
static int on_read(void *ctx, const struct opp_pass_call *x)
{
    struct opp_owned_ops *o = ctx;
    if (x->flags & OPP_PASS_OPEN) {
        if (opp_loader_grow((void **)&o->open_at, &o->open_cap, o->nopen + 1, sizeof *o->open_at) ||
            opp_loader_grow((void **)&o->open_depth, &o->depth_cap, o->nopen + 1,
                            sizeof *o->open_depth))
            return fail(o, -ENOMEM);
        o->open_depth[o->nopen] = x->depth;
        o->open_at[o->nopen++] = x->at;
        return 0;
    }
    const uint64_t *a;
    if (!opp_mrec_cols(x->kind, x->args, x->nargs, &a))
        return 0;
    uint64_t b = a[OPP_COL_MEM_BYTES];
    struct opp_mrec r = {.time = x->begin,
                         .idx = (uint64_t)x->depth << 32 | x->seq,
                         .addr = a[OPP_COL_MEM_ADDRESS],
                         .at = x->at,
                         .bytes = (int64_t)(b > INT64_MAX ? INT64_MAX : b),
                         .proc = o->m->threads[x->thread].proc,
                         .thread = x->thread,
                         .seq = x->seq,
                         .op = (uint32_t)a[OPP_COL_MEM_OP]};
    int rc = opp_extsort_add(o->mems, &r);
    return rc ? fail(o, rc) : 0;
}

/* An op of process index pi, taken out of its record; 1: not one. */
static int on_op(void *ctx, uint32_t pi, const struct opp_gpu_rec *g, void *op)
{
    struct opp_owned_ops *o = ctx;
    struct opp_owned_op *x = op;
    uint32_t proc = o->m->procs[pi].proc;
    if (!opp_sum_op_of(o->sum, proc, g, &x->op))
        return 1;
    x->seq = o->ops++;
    x->proc = proc;
    return 0;
}

/* The numbers of the calls processes died inside, in the order they are
 * summed in; 0 or -ENOMEM. */
static int number_open(struct opp_owned_ops *o)
{
    size_t *order = opp_owned_open_order(o->open_depth, o->nopen);
    if (!order || !(o->open_num = malloc((o->nopen ? o->nopen : 1) * sizeof *o->open_num))) {
        free(order);
        return -ENOMEM;
    }
    for (size_t k = 0; k < o->nopen; k++)
        o->open_num[order[k]] = OPP_OWNED_OPEN_AT + k;
    free(order);
    return 0;
}

/* The number of call c: its place, or for a call its process died
 * inside, its number among those. */
static uint64_t number(struct opp_owned_ops *o, const struct opp_gpu_call *c)
{
    if (!c->open)
        return c->at;
    if (!o->open_num && number_open(o)) {
        fail(o, -ENOMEM);
        return UINT64_MAX;
    }
    size_t lo = 0, hi = o->nopen;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->open_at[mid] < c->at)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == o->nopen || o->open_at[lo] != c->at) { /* the join hands back what it was given */
        fail(o, -EPROTO);
        return UINT64_MAX;
    }
    return o->open_num[lo];
}

static void owned(void *ctx, const struct opp_gpu_call *c, const void *op)
{
    struct opp_owned_ops *o = ctx;
    struct opp_owned_op x;
    memcpy(&x, op, sizeof x);
    /* overhead belongs to no call (summary_calls.c) */
    x.at = c && x.op.type != OPP_GPU_OVERHEAD ? number(o, c) : UINT64_MAX;
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

int opp_owned_ops_read(struct opp_owned_ops **out, struct opp_pass *pass, struct opp_sum *sum,
                       char *err, size_t errlen)
{
    *out = NULL;
    struct opp_owned_ops *o = calloc(1, sizeof *o);
    if (o &&
        (!(o->sorted = opp_extsort_new(sizeof(struct opp_owned_op), cmp_owned, SORT_MEM)) ||
         !(o->mems = opp_extsort_new(sizeof(struct opp_mrec), opp_mrec_cmp_time, SORT_MEM / 4)) ||
         !(o->sizes = opp_extsort_new(sizeof(struct mem_size), cmp_size, SORT_MEM / 4)))) {
        opp_owned_ops_free(o);
        o = NULL;
    }
    if (!o)
        return opp_err_oom(err, errlen);
    o->m = opp_pass_model(pass);
    o->sum = sum;
    const struct opp_pass_consumer c = {.ctx = o,
                                        .read = on_read,
                                        .op_bytes = sizeof(struct opp_owned_op),
                                        .op = on_op,
                                        .owned = owned};
    int rc = opp_pass_run(pass, &c, err, errlen);
    if (!rc && !o->failed && (rc = opp_extsort_done(o->sorted)))
        fail(o, rc);
    if (!rc && !o->failed && (rc = mem_sizes(o)))
        fail(o, rc);
    rc = opp_pass_said(rc, o->failed, err, errlen);
    /* what the join held goes before the calls are read again */
    opp_extsort_free(o->mems);
    o->mems = NULL;
    free(o->open_at), free(o->open_depth), free(o->open_num);
    o->open_at = o->open_num = NULL;
    o->open_depth = NULL;
    if (rc) {
        opp_owned_ops_free(o);
        return rc;
    }
    o->cur = opp_extsort_next(o->sorted);
    o->size = opp_extsort_next(o->sizes);
    *out = o;
    return 0;
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
    opp_extsort_free(o->sorted);
    opp_extsort_free(o->mems);
    opp_extsort_free(o->sizes);
    free(o->open_at);
    free(o->open_depth);
    free(o->open_num);
    free(o);
}
