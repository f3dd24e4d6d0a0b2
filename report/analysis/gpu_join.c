/* GPU work joined to the calls that caused it while a trace streams
 * (gpu_join.h). */
#include "analysis/gpu_join.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* An op by (proc, key): its correlation id, then its external id; the
 * caller's bytes follow. */
struct op_rec {
    uint32_t proc, pad;
    uint64_t key;
};

/* An external correlation: (proc, correlation id) -> external id. */
struct ext_rec {
    uint32_t proc, pad;
    uint64_t corr, ext;
};

struct opp_gpu_join {
    size_t op_bytes, op_rec;
    struct opp_extsort *cuda, *ext, *ops, *xcorr;
    char *scratch; /* an op record being built */
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

static int cmp_op(const void *pa, const void *pb)
{
    const struct op_rec *a = pa, *b = pb;
    CMP(a->proc, b->proc);
    CMP(a->key, b->key);
    return 0;
}

static int cmp_ext(const void *pa, const void *pb)
{
    const struct ext_rec *a = pa, *b = pb;
    CMP(a->proc, b->proc);
    CMP(a->corr, b->corr);
    CMP(a->ext, b->ext);
    return 0;
}

/* Whether (proc, key) a comes before (proc, key) b. */
static int key_before(uint32_t pa, uint64_t ka, uint32_t pb, uint64_t kb)
{
    return pa < pb || (pa == pb && ka < kb);
}

struct opp_gpu_join *opp_gpu_join_new(size_t op_bytes)
{
    struct opp_gpu_join *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->op_bytes = op_bytes;
    j->op_rec = (sizeof(struct op_rec) + op_bytes + 7) / 8 * 8;
    if (!(j->scratch = calloc(1, j->op_rec)) ||
        !(j->cuda = opp_extsort_new(sizeof(struct call_rec), cmp_call, SORT_MEM)) ||
        !(j->ext = opp_extsort_new(sizeof(struct call_rec), cmp_call, SORT_MEM / 4)) ||
        !(j->ops = opp_extsort_new(j->op_rec, cmp_op, SORT_MEM)) ||
        !(j->xcorr = opp_extsort_new(sizeof(struct ext_rec), cmp_ext, SORT_MEM / 4))) {
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

int opp_gpu_join_op(struct opp_gpu_join *j, uint32_t proc, uint64_t corr, const void *op)
{
    *(struct op_rec *)j->scratch = (struct op_rec){proc, 0, corr};
    memcpy(j->scratch + sizeof(struct op_rec), op, j->op_bytes);
    return opp_extsort_add(j->ops, j->scratch);
}

int opp_gpu_join_extcorr(struct opp_gpu_join *j, uint32_t proc, const struct opp_gpu_rec *g)
{
    uint64_t corr = opp_corr_id(g->f[OPP_GF_X_CORRELATION]);
    if (g->f[OPP_GF_X_KIND] != OPP_EXTCORR_KIND || !corr)
        return 0;
    return opp_extsort_add(j->xcorr, &(struct ext_rec){proc, 0, corr, g->f[OPP_GF_X_EXTERNAL]});
}

/* The calls sorted in s, walked along with ops of ascending (proc, key). */
struct walk {
    struct opp_extsort *s;
    const struct call_rec *at;
};

/* The first call of (proc, key), or NULL. */
static const struct opp_gpu_call *walk_to(struct walk *w, uint32_t proc, uint64_t key)
{
    while (w->at && key_before(w->at->proc, w->at->key, proc, key))
        w->at = opp_extsort_next(w->s);
    return w->at && w->at->proc == proc && w->at->key == key ? &w->at->c : NULL;
}

static int sort_error(struct opp_extsort *a, struct opp_extsort *b)
{
    return opp_extsort_error(a) ? opp_extsort_error(a) : opp_extsort_error(b);
}

int opp_gpu_join_run(struct opp_gpu_join *j,
                     void (*each)(void *ctx, const struct opp_gpu_call *c, const void *op),
                     void *ctx, uint64_t *unattached)
{
    *unattached = 0;
    int rc = opp_extsort_done(j->cuda);
    if (!rc)
        rc = opp_extsort_done(j->ops);
    /* ops without a CUDA call of theirs, when external ids may place them */
    int by_ext = opp_extsort_count(j->ext) && opp_extsort_count(j->xcorr);
    struct opp_extsort *left = NULL;
    if (!rc && by_ext && !(left = opp_extsort_new(j->op_rec, cmp_op, SORT_MEM / 4)))
        rc = -ENOMEM;
    struct walk w = {j->cuda, rc ? NULL : opp_extsort_next(j->cuda)};
    const struct op_rec *op;
    while (!rc && (op = opp_extsort_next(j->ops))) {
        const struct opp_gpu_call *c = op->key ? walk_to(&w, op->proc, op->key) : NULL;
        if (c || !op->key || !by_ext) {
            *unattached += !c && op->key;
            each(ctx, c, op + 1);
        } else {
            rc = opp_extsort_add(left, op);
        }
    }
    if (!rc)
        rc = sort_error(j->ops, j->cuda);
    if (!rc && by_ext) { /* correlation id -> external id, then -> the call */
        struct opp_extsort *moved = opp_extsort_new(j->op_rec, cmp_op, SORT_MEM / 4);
        rc = moved ? opp_extsort_done(left) : -ENOMEM;
        if (!rc)
            rc = opp_extsort_done(j->xcorr);
        const struct ext_rec *x = rc ? NULL : opp_extsort_next(j->xcorr);
        while (!rc && (op = opp_extsort_next(left))) {
            while (x && key_before(x->proc, x->corr, op->proc, op->key))
                x = opp_extsort_next(j->xcorr);
            if (x && x->proc == op->proc && x->corr == op->key) {
                memcpy(j->scratch, op, j->op_rec);
                ((struct op_rec *)j->scratch)->key = x->ext;
                rc = opp_extsort_add(moved, j->scratch);
            } else {
                (*unattached)++;
                each(ctx, NULL, op + 1);
            }
        }
        if (!rc)
            rc = sort_error(left, j->xcorr);
        if (!rc)
            rc = opp_extsort_done(moved);
        if (!rc)
            rc = opp_extsort_done(j->ext);
        struct walk we = {j->ext, rc ? NULL : opp_extsort_next(j->ext)};
        while (!rc && (op = opp_extsort_next(moved))) {
            const struct opp_gpu_call *c = walk_to(&we, op->proc, op->key);
            *unattached += !c;
            each(ctx, c, op + 1);
        }
        if (!rc)
            rc = sort_error(moved, j->ext);
        opp_extsort_free(moved);
    }
    opp_extsort_free(left);
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
    free(j->scratch);
    free(j);
}
