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
#include "torch_rules.h"

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

/* The calls of one depth of a thread since the last call above them:
 * torch's folding (torch_rules.h: opp_torch_folds) removes a call, and
 * lifts the GPU work of its external id to the parent. */
struct fold_slot {
    uint32_t count; /* counted (opp_fold_counts) */
    uint32_t kind;  /* the last one's kind */
    uint64_t name;  /* and its opp_torch_call_name */
    /* the last one's external id and those lifted into it, kept until its
     * parent shows whether it folds */
    struct call_rec *pending;
    size_t npending, cap;
};

struct fold_thread {
    struct fold_slot *s;
    size_t n;
    uint64_t open_name; /* the last call the process died inside: its name, kind, */
    uint32_t open_kind;
    uint32_t open_depth, open_kids; /* depth and completed children; */
    int open_last;                  /* the previous call was it; */
    struct opp_gpu_call open_owner; /* what owns its external id */
    /* the external ids of the only child so far of a call the process died
     * inside at depth defer_depth, of its name: whether the child folds
     * into it (the ids then defer_owner's) waits for the thread's next
     * call, which is its second child when one it died inside one deeper */
    struct call_rec *defer;
    size_t ndefer, defer_cap;
    uint32_t defer_depth;
    struct opp_gpu_call defer_owner;
};

struct opp_gpu_join {
    size_t op_bytes, op_rec;
    struct opp_extsort *cuda, *ext, *ops, *xcorr;
    char *scratch; /* an op record being built */
    struct fold_thread *th;
    size_t nth;
};

/* By process and key; the outermost call first (a runtime call before
 * the driver calls inside it), then thread, then tree order (thread_tree.c:
 * begin, the longer first, arrival), as gpu_attach.c picks among them. */
static int cmp_call(const void *pa, const void *pb)
{
    const struct call_rec *a = pa, *b = pb;
    OPP_SORT_BY(a->proc, b->proc);
    OPP_SORT_BY(a->key, b->key);
    OPP_SORT_BY(a->c.depth, b->c.depth);
    OPP_SORT_BY(a->c.thread, b->c.thread);
    OPP_SORT_BY(a->c.begin, b->c.begin);
    OPP_SORT_BY(b->c.end, a->c.end);
    OPP_SORT_BY(a->c.seq, b->c.seq);
    return 0;
}

static int cmp_op(const void *pa, const void *pb)
{
    const struct op_rec *a = pa, *b = pb;
    OPP_SORT_BY(a->proc, b->proc);
    OPP_SORT_BY(a->key, b->key);
    return 0;
}

static int cmp_ext(const void *pa, const void *pb)
{
    const struct ext_rec *a = pa, *b = pb;
    OPP_SORT_BY(a->proc, b->proc);
    OPP_SORT_BY(a->corr, b->corr);
    OPP_SORT_BY(a->ext, b->ext);
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

static int flush(struct opp_gpu_join *j, struct fold_slot *s)
{
    int rc = 0;
    for (size_t i = 0; i < s->npending && !rc; i++)
        rc = opp_extsort_add(j->ext, &s->pending[i]);
    s->npending = 0;
    return rc;
}

/* r kept in s until the call it belongs to shows whether it folds
 * (pending), else sorted. */
static int keep(struct opp_gpu_join *j, struct fold_slot *s, int pending,
                const struct call_rec *r)
{
    if (!pending)
        return opp_extsort_add(j->ext, r);
    if (opp_loader_grow((void **)&s->pending, &s->cap, s->npending + 1, sizeof *s->pending))
        return -ENOMEM;
    s->pending[s->npending++] = *r;
    return 0;
}

/* The deferred child's ids sorted: its own (second: a second child came),
 * else its parent's. */
static int settle(struct opp_gpu_join *j, struct fold_thread *t, int second)
{
    int rc = 0;
    for (size_t i = 0; i < t->ndefer && !rc; i++) {
        if (!second)
            t->defer[i].c = t->defer_owner;
        rc = opp_extsort_add(j->ext, &t->defer[i]);
    }
    t->ndefer = 0;
    return rc;
}

static struct fold_thread *fold_thread(struct opp_gpu_join *j, uint32_t ti, uint32_t depth)
{
    if (opp_loader_grow_zeroed((void **)&j->th, &j->nth, (size_t)ti + 1, sizeof *j->th))
        return NULL;
    struct fold_thread *t = &j->th[ti];
    if (opp_loader_grow_zeroed((void **)&t->s, &t->n, (size_t)depth + 2, sizeof *t->s))
        return NULL;
    return t;
}

int opp_gpu_join_call(struct opp_gpu_join *j, uint32_t proc, uint32_t fn, uint32_t kind,
                      const uint64_t *args, uint32_t nargs, const struct opp_gpu_call *c)
{
    int rc = 0;
    uint64_t corr = kind == OPP_OP_CUDA_API && nargs > OPP_COL_CUDA_CORR
                        ? opp_corr_id(args[OPP_COL_CUDA_CORR])
                        : 0;
    if (corr)
        rc = opp_extsort_add(j->cuda, &(struct call_rec){proc, 0, corr, *c});
    struct fold_thread *t = rc ? NULL : fold_thread(j, c->thread, c->depth);
    if (!t)
        return rc ? rc : -ENOMEM;
    if (t->ndefer && (rc = settle(j, t, c->open && c->depth == t->defer_depth + 1)))
        return rc;
    uint64_t name = opp_torch_call_name(kind, fn, args, nargs);
    uint64_t ext = opp_op_extid(kind, args, nargs);
    struct fold_slot *kids = &t->s[c->depth + 1], *here = &t->s[c->depth];
    int folds = opp_torch_folds(kids->count, kind, name, kids->kind, kids->name); /* its child */
    int folded = 0; /* this one, into the call it died inside above it */
    struct opp_gpu_call owner = *c; /* of its external id and those lifted into it */
    if (c->open) {
        folded = t->open_last && t->open_depth + 1 == c->depth &&
                 opp_torch_folds(t->open_kids + 1, t->open_kind, t->open_name, kind, name);
        if (folded)
            owner = t->open_owner;
        t->open_name = name, t->open_kind = kind, t->open_depth = c->depth;
        t->open_kids = kids->count;
        t->open_owner = owner;
        if (folds && kids->npending) {
            /* its completed child may be joined by one it died inside,
             * which comes next: decided then (settle) */
            if (opp_loader_grow((void **)&t->defer, &t->defer_cap, kids->npending,
                                sizeof *t->defer))
                return -ENOMEM;
            memcpy(t->defer, kids->pending, kids->npending * sizeof *t->defer);
            t->ndefer = kids->npending;
            t->defer_depth = c->depth;
            t->defer_owner = owner;
            kids->npending = 0;
        }
        folds = 0;
    }
    t->open_last = c->open;
    if (!folds && (rc = flush(j, kids)))
        return rc;
    kids->count = 0, kids->kind = 0, kids->name = 0;
    if (!opp_fold_counts(kind)) /* torch sums it into the call around it */
        return 0;
    if (++here->count > 1 && (rc = flush(j, here))) /* a second child: none folds */
        return rc;
    here->kind = kind, here->name = name;
    /* it may fold into the call above (not one the process died inside:
     * those come outermost first, their folding known as they come) */
    int pending = name && here->count == 1 && !c->open;
    for (size_t i = 0; i < kids->npending && !rc; i++) { /* the folded child's, lifted */
        kids->pending[i].c = owner;
        rc = keep(j, here, pending, &kids->pending[i]);
    }
    kids->npending = 0;
    if (!rc && ext)
        rc = keep(j, here, pending, &(struct call_rec){proc, 0, ext, owner});
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
    int rc = 0;
    for (size_t i = 0; i < j->nth && !rc; i++) { /* the calls no parent came for */
        rc = settle(j, &j->th[i], 0);            /* no second child came */
        for (size_t d = 0; d < j->th[i].n && !rc; d++)
            rc = flush(j, &j->th[i].s[d]);
    }
    if (!rc)
        rc = opp_extsort_done(j->cuda);
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
    for (size_t i = 0; i < j->nth; i++) {
        for (size_t d = 0; d < j->th[i].n; d++)
            free(j->th[i].s[d].pending);
        free(j->th[i].s);
        free(j->th[i].defer);
    }
    free(j->th);
    free(j->scratch);
    free(j);
}
