/* GPU work joined to the calls that caused it while a trace streams
 * (gpu_join.h). */
#include "analysis/gpu_join.h"

#include <errno.h>
#include <stdlib.h>

#include "analysis/extsort.h"
#include "analysis/loader.h"
#include "gpu.h"
#include "ops.h"

#define SORT_MEM (16u << 20) /* bytes each sorter keeps in memory */

/* A call that can own GPU work: key is its correlation id (CUDA calls) or
 * its external id (library calls). */
struct call_rec {
    uint32_t proc, pad;
    uint64_t key;
    struct opp_gpu_call c;
};

/* (proc, key) -> val: an op (correlation id -> duration), an external
 * correlation (correlation id -> external id), an op by its external id. */
struct pair_rec {
    uint32_t proc, pad;
    uint64_t key, val;
};

struct opp_gpu_join {
    struct opp_extsort *cuda, *ext, *ops, *xcorr;
};

#define CMP(a, b)                                                                                  \
    if ((a) != (b))                                                                                \
    return (a) < (b) ? -1 : 1

/* By process and key; the outermost call first (a runtime call before
 * the driver calls inside it), then thread and arrival. */
static int cmp_call(const void *pa, const void *pb)
{
    const struct call_rec *a = pa, *b = pb;
    CMP(a->proc, b->proc);
    CMP(a->key, b->key);
    CMP(a->c.depth, b->c.depth);
    CMP(a->c.thread, b->c.thread);
    CMP(a->c.seq, b->c.seq);
    return 0;
}

static int cmp_pair(const void *pa, const void *pb)
{
    const struct pair_rec *a = pa, *b = pb;
    CMP(a->proc, b->proc);
    CMP(a->key, b->key);
    CMP(a->val, b->val);
    return 0;
}

/* Whether a call record's (proc, key) is before (proc, key). */
static int call_before(const struct call_rec *c, uint32_t proc, uint64_t key)
{
    return c->proc < proc || (c->proc == proc && c->key < key);
}

static int pair_before(const struct pair_rec *p, uint32_t proc, uint64_t key)
{
    return p->proc < proc || (p->proc == proc && p->key < key);
}

struct opp_gpu_join *opp_gpu_join_new(void)
{
    struct opp_gpu_join *j = calloc(1, sizeof *j);
    if (!j || !(j->cuda = opp_extsort_new(sizeof(struct call_rec), cmp_call, SORT_MEM)) ||
        !(j->ext = opp_extsort_new(sizeof(struct call_rec), cmp_call, SORT_MEM / 4)) ||
        !(j->ops = opp_extsort_new(sizeof(struct pair_rec), cmp_pair, SORT_MEM)) ||
        !(j->xcorr = opp_extsort_new(sizeof(struct pair_rec), cmp_pair, SORT_MEM / 4))) {
        opp_gpu_join_free(j);
        return NULL;
    }
    return j;
}

int opp_gpu_join_call(struct opp_gpu_join *j, uint32_t proc, uint32_t kind, const uint64_t *args,
                      uint32_t nargs, const struct opp_gpu_call *c)
{
    int rc = 0;
    uint64_t corr = kind == OPP_OP_CUDA_API && nargs > OPP_COL_CUDA_CORR
                        ? opp_corr_id(args[OPP_COL_CUDA_CORR])
                        : 0;
    if (corr)
        rc = opp_extsort_add(j->cuda, &(struct call_rec){proc, 0, corr, *c});
    uint64_t ext = opp_op_extid(kind, args, nargs);
    if (ext && !rc)
        rc = opp_extsort_add(j->ext, &(struct call_rec){proc, 0, ext, *c});
    return rc;
}

int opp_gpu_join_rec(struct opp_gpu_join *j, uint32_t proc, const struct opp_gpu_rec *g)
{
    const uint64_t *f = g->f;
    switch (g->type) {
    case OPP_GPU_KERNEL:
    case OPP_GPU_MEMCPY:
    case OPP_GPU_MEMSET: { /* as opp_gpu_op_decode reads them */
        uint64_t corr = opp_corr_id(f[OPP_GF_CORRELATION]);
        uint64_t dur = f[OPP_GF_END] > f[OPP_GF_START] ? f[OPP_GF_END] - f[OPP_GF_START] : 0;
        return corr ? opp_extsort_add(j->ops, &(struct pair_rec){proc, 0, corr, dur}) : 0;
    }
    case OPP_GPU_EXTCORR: {
        uint64_t corr = opp_corr_id(f[OPP_GF_X_CORRELATION]);
        if (f[OPP_GF_X_KIND] != OPP_EXTCORR_KIND || !corr)
            return 0;
        return opp_extsort_add(j->xcorr, &(struct pair_rec){proc, 0, corr, f[OPP_GF_X_EXTERNAL]});
    }
    default:
        return 0;
    }
}

int opp_gpu_join_run(struct opp_gpu_join *j,
                     void (*owned)(void *ctx, const struct opp_gpu_call *c, uint64_t dur_ns),
                     void *ctx)
{
    int rc = opp_extsort_done(j->cuda);
    if (!rc)
        rc = opp_extsort_done(j->ops);
    /* ops without a CUDA call of theirs, when external ids may place them */
    int by_ext = opp_extsort_count(j->ext) && opp_extsort_count(j->xcorr);
    struct opp_extsort *left = NULL, *moved = NULL;
    if (!rc && by_ext &&
        (!(left = opp_extsort_new(sizeof(struct pair_rec), cmp_pair, SORT_MEM / 4)) ||
         !(moved = opp_extsort_new(sizeof(struct pair_rec), cmp_pair, SORT_MEM / 4))))
        rc = -ENOMEM;
    const struct call_rec *c = rc ? NULL : opp_extsort_next(j->cuda);
    const struct pair_rec *op;
    while (!rc && (op = opp_extsort_next(j->ops))) {
        while (c && call_before(c, op->proc, op->key))
            c = opp_extsort_next(j->cuda);
        if (c && c->proc == op->proc && c->key == op->key)
            owned(ctx, &c->c, op->val);
        else if (by_ext)
            rc = opp_extsort_add(left, op);
    }
    if (!rc)
        rc = opp_extsort_error(j->ops) ? opp_extsort_error(j->ops) : opp_extsort_error(j->cuda);
    if (!rc && by_ext) { /* correlation id -> external id, then -> the call */
        rc = opp_extsort_done(left);
        if (!rc)
            rc = opp_extsort_done(j->xcorr);
        const struct pair_rec *x = rc ? NULL : opp_extsort_next(j->xcorr);
        while (!rc && (op = opp_extsort_next(left))) {
            while (x && pair_before(x, op->proc, op->key))
                x = opp_extsort_next(j->xcorr);
            if (x && x->proc == op->proc && x->key == op->key)
                rc = opp_extsort_add(moved, &(struct pair_rec){op->proc, 0, x->val, op->val});
        }
        if (!rc)
            rc = opp_extsort_error(left) ? opp_extsort_error(left) : opp_extsort_error(j->xcorr);
        if (!rc)
            rc = opp_extsort_done(moved);
        if (!rc)
            rc = opp_extsort_done(j->ext);
        c = rc ? NULL : opp_extsort_next(j->ext);
        while (!rc && (op = opp_extsort_next(moved))) {
            while (c && call_before(c, op->proc, op->key))
                c = opp_extsort_next(j->ext);
            if (c && c->proc == op->proc && c->key == op->key)
                owned(ctx, &c->c, op->val);
        }
        if (!rc)
            rc = opp_extsort_error(moved) ? opp_extsort_error(moved) : opp_extsort_error(j->ext);
    }
    opp_extsort_free(left);
    opp_extsort_free(moved);
    return rc;
}

void opp_gpu_join_free(struct opp_gpu_join *j)
{
    if (!j)
        return;
    opp_extsort_free(j->cuda);
    opp_extsort_free(j->ext);
    opp_extsort_free(j->ops);
    opp_extsort_free(j->xcorr);
    free(j);
}
