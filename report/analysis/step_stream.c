/* Steps found as a full trace is read (step_stream.h). */
#include "analysis/step_stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/extsort.h"
#include "analysis/gpu_join.h"
#include "analysis/loader.h"
#include "analysis/stream_meta.h"
#include "ops.h"

#define LATE_MAX (1u << 20) /* NVTX ranges kept, over all threads */
#define PROFILER_STEP OPP_PROFILER_STEP
#define OPTIMIZER_STEP OPP_OPTIMIZER_STEP
#define NO_CAND UINT32_MAX

enum { I_TORCH = 1, I_MEMORY = 2, I_LABEL = 4, I_OPEN = 8 };

/* A call no later one has enclosed yet. */
struct item {
    uint64_t begin, end;
    uint64_t kids_ns; /* its children's durations, after torch's folding */
    uint32_t name, seq;
    uint16_t depth;
    uint8_t flags;
};

/* A call that may be a step (or mark one), with what the step needs. */
struct cand {
    uint64_t begin, end, cpu, gpu;
    uint32_t name, seq;
    uint32_t parent; /* ranges: the nearest candidate around it, or NO_CAND */
    uint16_t depth;
    uint8_t range;
};

struct cands {
    struct cand *v;
    size_t n, cap;
};

struct sthread {
    struct item *s; /* s[base..n): the calls no later one has enclosed yet */
    size_t base, n, cap;
    uint64_t *late; /* NVTX ranges' begins in arrival order; then the minimum from each on */
    size_t nlate, late_cap, late_next;
    uint64_t last_end;    /* the end of the call that arrived last */
    uint64_t settled_end; /* the latest end of its top-level calls settled */
    /* the calls its process died inside: the collector writes them last,
     * outermost first, so they are taken in at the end, innermost first */
    struct open_call {
        struct item x;
        uint32_t kind;
        int scope;
    } *open;
    size_t nopen, open_cap;
    uint32_t seq;      /* calls arrived */
    struct cands named, pstep, opt, mod;
    int have_label;
    struct item label; /* its first top-level torch label or nn.Module forward */
    /* pass 2: the step k of boundaries b (k from k0) holds the top-level
     * calls after b[k-1] and up to b[k] in tree order that begin at or
     * after the end of b[k-1] (at first for k = 0); their time goes to
     * b[k].cpu */
    struct cands *b;
    size_t k0;
    uint64_t first;
    /* with GPU work: the top-level calls around a boundary, with their
     * step (NO_CAND: none), for the GPU work inside them */
    struct span {
        uint64_t begin, end;
        uint32_t step;
    } *span;
    size_t nspan, span_cap;
};

struct opp_step_stream {
    const char *path;
    struct opp_stream_meta meta;
    struct opp_name_cache *names;
    struct sthread *th;
    size_t nth;
    size_t nlate;
    int pass; /* 0: threads and ranges; 1: steps; 2: the calls in the windows */
    uint32_t name_id;
    int ranges;         /* the steps are candidates' own calls */
    struct opp_gpu_join *join;
    int failed;         /* errno */
    const char *cannot; /* why the loaded answer cannot be given this way */
    char why[256];
    uint64_t open;      /* calls the process died inside, folding done */
};

static int fail(struct opp_step_stream *z, int err)
{
    if (!z->failed)
        z->failed = err;
    return 1;
}

static int cannot(struct opp_step_stream *z, const char *why)
{
    if (!z->cannot)
        z->cannot = why;
    return 1;
}

/* A temporary file could not be made or written (rc: -errno). */
static int cannot_tmp(struct opp_step_stream *z, int rc)
{
    opp_extsort_no_room(z->why, sizeof z->why, rc);
    return cannot(z, z->why);
}

/* Thread index i's state, made on first sight. */
static struct sthread *thread_at(struct opp_step_stream *z, uint32_t i)
{
    if (opp_loader_grow_zeroed((void **)&z->th, &z->nth, (size_t)i + 1, sizeof *z->th))
        return NULL;
    return &z->th[i];
}

static struct sthread *thread_of(struct opp_step_stream *z, uint32_t proc, uint32_t tid,
                                 uint32_t *ti)
{
    int64_t i = opp_stream_meta_thread(&z->meta, proc, tid);
    if (i < 0)
        return NULL;
    *ti = (uint32_t)i;
    return thread_at(z, (uint32_t)i);
}

static int grow(void **arr, size_t *cap, size_t need, size_t sz)
{
    return opp_loader_grow(arr, cap, need, sz);
}

static int cand_push(struct cands *c, const struct item *x, int range)
{
    if (grow((void **)&c->v, &c->cap, c->n + 1, sizeof *c->v))
        return -1;
    uint64_t dur = x->end - x->begin;
    c->v[c->n++] = (struct cand){.begin = x->begin, .end = x->end,
                                 .cpu = x->kids_ns < dur ? x->kids_ns : dur, .name = x->name,
                                 .seq = x->seq, .parent = NO_CAND, .depth = x->depth,
                                 .range = (uint8_t)range};
    return 0;
}

/* Candidates inside x are not outermost: gone (they arrived last). */
static void cand_drop_inside(struct cands *c, const struct item *x)
{
    while (c->n && c->v[c->n - 1].begin >= x->begin && c->v[c->n - 1].end <= x->end)
        c->n--;
}

/* The candidate of arrival seq, folded into its parent: gone. */
static void cand_drop_seq(struct cands *c, uint32_t seq)
{
    for (size_t i = c->n; i-- > 0 && c->v[i].seq >= seq;) /* in arrival order */
        if (c->v[i].seq == seq) {
            memmove(&c->v[i], &c->v[i + 1], (c->n - i - 1) * sizeof *c->v);
            c->n--;
            return;
        }
}

/* Tree order (thread_tree.c): begin, longer first, shallower first, arrival. */
static int tree_before(uint64_t b1, uint64_t e1, uint16_t d1, uint32_t s1, uint64_t b2, uint64_t e2,
                       uint16_t d2, uint32_t s2)
{
    if (b1 != b2)
        return b1 < b2;
    if (e1 != e2)
        return e1 > e2;
    if (d1 != d2)
        return d1 < d2;
    return s1 < s2;
}

static int cmp_cand(const void *pa, const void *pb)
{
    const struct cand *a = pa, *b = pb;
    if (tree_before(a->begin, a->end, a->depth, a->seq, b->begin, b->end, b->depth, b->seq))
        return -1;
    return tree_before(b->begin, b->end, b->depth, b->seq, a->begin, a->end, a->depth, a->seq);
}

/* Boundaries (tree order) that end no later than the one kept before them
 * dropped: inside it in time, they mark no step (step_times.c). */
static void drop_nested(struct cands *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct cand *e = &c->v[i], *p = n ? &c->v[n - 1] : NULL;
        if (p && e->end <= p->end) /* step_times.c: inside the one before in time */
            continue;
        c->v[n++] = *e;
    }
    c->n = n;
}

/* Into tree order; they came in the order they returned, which is that
 * order already unless some enclose others. */
static void sort_cands(struct cands *c)
{
    for (size_t i = 1; i < c->n; i++)
        if (cmp_cand(&c->v[i - 1], &c->v[i]) > 0) {
            qsort(c->v, c->n, sizeof *c->v, cmp_cand);
            return;
        }
}

static int has_prefix(const struct opp_step_stream *z, uint32_t name, const char *p)
{
    return !strncmp(opp_model_str(z->meta.ld.m, name), p, strlen(p));
}

/* The first of boundaries b not before (begin, end, depth, seq) in tree order. */
static size_t first_not_before(const struct cands *b, uint64_t begin, uint64_t end,
                               uint32_t depth, uint32_t seq)
{
    size_t lo = 0, hi = b->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct cand *c = &b->v[mid];
        if (tree_before(c->begin, c->end, c->depth, c->seq, begin, end, (uint16_t)depth, seq))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The step of a top-level call that begins at begin, lo its first boundary
 * not before it: lo's, from the end of the boundary before; NO_CAND: none. */
static uint32_t window_of(const struct sthread *t, size_t lo, uint64_t begin)
{
    if (lo < t->k0 || lo == t->b->n || begin < (lo ? t->b->v[lo - 1].end : t->first))
        return NO_CAND;
    return (uint32_t)lo;
}

/* A call known to be top-level. */
static void top_level(struct opp_step_stream *z, struct sthread *t, const struct item *x)
{
    if (z->pass == 1) {
        if ((x->flags & I_LABEL) &&
            (!t->have_label || tree_before(x->begin, x->end, x->depth, x->seq, t->label.begin,
                                           t->label.end, t->label.depth, t->label.seq))) {
            t->label = *x;
            t->have_label = 1;
        }
        return;
    }
    if (!t->b || z->ranges)
        return;
    size_t lo = first_not_before(t->b, x->begin, x->end, x->depth, x->seq);
    uint32_t step = window_of(t, lo, x->begin);
    if (step != NO_CAND)
        t->b->v[step].cpu += x->end - x->begin;
    /* around a boundary (or one): the GPU work inside it is its step's */
    if (z->join && lo < t->b->n && t->b->v[lo].end <= x->end) {
        if (grow((void **)&t->span, &t->span_cap, t->nspan + 1, sizeof *t->span))
            fail(z, ENOMEM);
        else
            t->span[t->nspan++] = (struct span){x->begin, x->end, step};
    }
}

/* Nothing of ours runs on the thread: the calls no NVTX range still to
 * come can enclose are top-level. */
static void settle(struct opp_step_stream *z, struct sthread *t, int all)
{
    uint64_t m = !all && t->late_next < t->nlate ? t->late[t->late_next] : UINT64_MAX;
    while (t->base < t->n && (all || t->s[t->base].begin < m)) {
        const struct item *x = &t->s[t->base++];
        if (x->end > t->settled_end)
            t->settled_end = x->end;
        top_level(z, t, x);
    }
    if (t->base == t->n)
        t->base = t->n = 0;
    else if (t->base > 4096 && t->base > t->n / 2) {
        memmove(t->s, t->s + t->base, (t->n - t->base) * sizeof *t->s);
        t->n -= t->base;
        t->base = 0;
    }
}

/* The steps a call may be (pass 1). */
static int candidate(struct opp_step_stream *z, struct sthread *t, const struct item *x,
                     uint32_t kind, int scope)
{
    int user = scope == OPP_TORCH_SCOPE_USER, module = scope == OPP_TORCH_SCOPE_MODULE;
    int range = opp_kind_base(kind) == OPP_OP_NVTX || user || module;
    if (z->name_id != UINT32_MAX)
        return x->name == z->name_id ? cand_push(&t->named, x, range) : 0;
    if (has_prefix(z, x->name, PROFILER_STEP) && cand_push(&t->pstep, x, 1))
        return -1;
    if (has_prefix(z, x->name, OPTIMIZER_STEP)) {
        cand_drop_inside(&t->opt, x); /* an optimizer stepping another */
        if (user && cand_push(&t->opt, x, 0))
            return -1;
    }
    if (module) {
        cand_drop_inside(&t->mod, x);
        if (cand_push(&t->mod, x, 1))
            return -1;
    }
    return 0;
}

static int arrive(struct opp_step_stream *z, struct sthread *t, struct item *x, uint32_t kind,
                  int scope)
{
    if (x->end < t->last_end) /* what came before may be settled already */
        return cannot(z, "a thread's calls are not in the order they returned");
    if (x->begin < t->settled_end)
        return cannot(z, "calls of a thread overlap without nesting");
    t->last_end = x->end;
    uint64_t kids = 0;
    unsigned counted = 0;
    struct item only = {0};
    while (t->n > t->base && t->s[t->n - 1].begin >= x->begin) {
        const struct item *c = &t->s[--t->n];
        /* ties thread_tree.c decides by depth: the shallower encloses */
        if (c->depth <= x->depth &&
            (c->begin == x->end || (c->begin == x->begin && c->end == x->end)))
            return cannot(z, "calls of a thread end and begin at the same time");
        if (c->flags & I_MEMORY)
            continue; /* torch sums a memory instant into the call, no child */
        counted++;
        kids += c->end - c->begin;
        only = *c;
    }
    /* what is left began before x: it must have ended by then (a partial
     * overlap, or x inside it with the same end, nests otherwise in the
     * loaded tree) */
    if (t->n > t->base && t->s[t->n - 1].end > x->begin)
        return cannot(z, "calls of a thread overlap without nesting");
    x->kids_ns = kids;
    if (z->pass == 1) {
        if (counted == 1 && (x->flags & only.flags & I_TORCH) && only.name == x->name) {
            x->kids_ns = only.kids_ns; /* torch's folding: its children are x's */
            z->open -= (only.flags & I_OPEN) != 0;
            cand_drop_seq(&t->named, only.seq);
            cand_drop_seq(&t->pstep, only.seq);
            cand_drop_seq(&t->opt, only.seq);
            cand_drop_seq(&t->mod, only.seq);
        }
        z->open += (x->flags & I_OPEN) != 0;
        if (candidate(z, t, x, kind, scope))
            return fail(z, ENOMEM);
    }
    if (grow((void **)&t->s, &t->cap, t->n + 1, sizeof *t->s))
        return fail(z, ENOMEM);
    t->s[t->n++] = *x;
    if (x->depth == 0)
        settle(z, t, 0);
    return 0;
}

static int is_late(uint32_t kind, const struct opp_tr_event *e)
{
    return opp_kind_base(kind) == OPP_OP_NVTX && e->end_ns > e->begin_ns;
}

static int on_event(void *ctx, const struct opp_tr_event *e)
{
    struct opp_step_stream *z = ctx;
    uint32_t ti;
    struct sthread *t = thread_of(z, e->proc, e->tid, &ti);
    if (!t)
        return fail(z, ENOMEM);
    const struct opp_thread *mt = &z->meta.ld.m->threads[ti];
    const struct opp_process *p = &z->meta.ld.m->procs[mt->proc];
    if (e->fn >= p->nfuncs)
        return fail(z, EPROTO); /* the reader checks this: never happens */
    uint32_t kind = p->funcs[e->fn].kind;
    t->late_next += is_late(kind, e);
    struct item x = {.begin = e->begin_ns,
                     .end = opp_stream_meta_end(&z->meta, ti, e),
                     .seq = t->seq++,
                     .depth = (uint16_t)e->depth,
                     .flags = e->flags & OPP_EV_OPEN ? I_OPEN : 0};
    int scope = -1;
    if (z->pass == 2 && z->join) {
        int rc = opp_stream_meta_join(&z->meta, z->join, ti, e, x.seq, 0);
        if (rc > 0)
            return cannot(z, OPP_GPU_JOIN_UNTOLD);
        if (rc)
            return rc == -ENOMEM ? fail(z, ENOMEM) : cannot_tmp(z, rc);
    }
    if (z->pass == 1) {
        x.name = opp_loader_event_name(&z->meta.ld, &z->names, mt->proc, e->fn, e->args, e->nargs);
        if (x.name == UINT32_MAX)
            return fail(z, ENOMEM);
        const uint64_t *a = e->args;
        uint32_t na = opp_op_args(kind, &a, e->nargs);
        if (opp_kind_base(kind) == OPP_OP_TORCH) {
            x.flags |= I_TORCH;
            scope = na > OPP_COL_TORCH_SCOPE ? (int)a[OPP_COL_TORCH_SCOPE] : -1;
            if (scope == OPP_TORCH_SCOPE_USER || scope == OPP_TORCH_SCOPE_MODULE)
                x.flags |= I_LABEL;
        }
        if (opp_kind_base(kind) == OPP_OP_MEMORY)
            x.flags |= I_MEMORY;
    }
    if (x.flags & I_OPEN) {
        if (grow((void **)&t->open, &t->open_cap, t->nopen + 1, sizeof *t->open))
            return fail(z, ENOMEM);
        t->open[t->nopen++] = (struct open_call){x, kind, scope};
        return 0;
    }
    if (t->nopen)
        return cannot(z, "a thread's calls come after the ones its process died inside");
    return arrive(z, t, &x, kind, scope);
}

/* The first read: each thread's NVTX ranges' begins (thread ti). */
static int each_late(void *ctx, uint32_t ti, const struct opp_tr_event *e)
{
    struct opp_step_stream *z = ctx;
    struct sthread *t = thread_at(z, ti);
    if (!t)
        return fail(z, ENOMEM);
    const struct opp_model *m = z->meta.ld.m;
    const struct opp_process *p = &m->procs[m->threads[ti].proc];
    if (e->fn >= p->nfuncs || !is_late(p->funcs[e->fn].kind, e))
        return 0;
    if (++z->nlate > LATE_MAX)
        return cannot(z, "more than 2^20 NVTX ranges");
    if (grow((void **)&t->late, &t->late_cap, t->nlate + 1, sizeof *t->late))
        return fail(z, ENOMEM);
    t->late[t->nlate++] = e->begin_ns;
    return 0;
}

/* GPU records: what the join needs, the ops' durations (as
 * opp_gpu_op_decode reads them) and external correlations. */
static int on_gpu(void *ctx, uint32_t proc, const struct opp_gpu_rec *g)
{
    struct opp_step_stream *z = ctx;
    const struct opp_process *p = opp_loader_proc(z->meta.ld.m, proc);
    if (!p)
        return fail(z, EPROTO); /* the reader only passes declared processes */
    uint32_t pi = (uint32_t)(p - z->meta.ld.m->procs);
    const uint64_t *f = g->f;
    int rc = 0;
    if (g->type == OPP_GPU_KERNEL || g->type == OPP_GPU_MEMCPY || g->type == OPP_GPU_MEMSET) {
        uint64_t dur = f[OPP_GF_END] > f[OPP_GF_START] ? f[OPP_GF_END] - f[OPP_GF_START] : 0;
        rc = opp_gpu_join_op(z->join, pi, opp_corr_id(f[OPP_GF_CORRELATION]), &dur);
    } else if (g->type == OPP_GPU_EXTCORR) {
        rc = opp_gpu_join_extcorr(z->join, pi, g);
    }
    return rc ? (rc == -ENOMEM ? fail(z, ENOMEM) : cannot_tmp(z, rc)) : 0;
}

/* One read of the file; 0, 1 (cannot: z->cannot) or -1 (err). */
static int read_pass(struct opp_step_stream *z, int pass, char *err, size_t errlen)
{
    static const struct opp_tr_visitor later = {.event = on_event},
                                       with_gpu = {.event = on_event, .gpu = on_gpu};
    z->pass = pass;
    for (size_t i = 0; i < z->nth; i++) {
        struct sthread *t = &z->th[i];
        t->base = t->n = t->late_next = 0;
        t->seq = 0;
        t->last_end = t->settled_end = 0;
        t->nopen = 0;
    }
    struct opp_tr_summary sum;
    int rc = pass ? opp_trace_read(z->path, z->join ? &with_gpu : &later, z, &sum, err, errlen)
                  : opp_stream_meta_read(&z->meta, z->path, each_late, NULL, z, err, errlen);
    if (!pass && rc > 0 && !z->cannot)
        z->cannot = "it is a summary trace";
    if (z->cannot) {
        snprintf(err, errlen, "%s", z->cannot);
        return 1;
    }
    if (z->failed || z->meta.ld.failed) {
        snprintf(err, errlen, "cannot read %s: %s", z->path,
                 strerror(z->failed ? z->failed : z->meta.ld.failed));
        return -1;
    }
    if (rc < 0)
        return -1;
    size_t nth = z->meta.ld.m->nthreads; /* those with no calls have a place too */
    if (nth && !thread_at(z, (uint32_t)(nth - 1))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; pass && i < z->nth; i++) {
        struct sthread *t = &z->th[i];
        while (t->nopen && !z->cannot && !z->failed) { /* innermost first */
            struct open_call *c = &t->open[--t->nopen];
            arrive(z, t, &c->x, c->kind, c->scope);
        }
        if (z->cannot || z->failed)
            break;
        settle(z, t, 1); /* the thread is over: what is left is top-level */
    }
    if (z->cannot) {
        snprintf(err, errlen, "%s", z->cannot);
        return 1;
    }
    if (z->failed) {
        snprintf(err, errlen, "cannot read %s: %s", z->path, strerror(z->failed));
        return -1;
    }
    return 0;
}

struct opp_step_stream *opp_step_stream_open(const char *path, int *cannot_, char *err,
                                             size_t errlen)
{
    *cannot_ = 0;
    struct opp_step_stream *z = calloc(1, sizeof *z);
    if (!z) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    z->path = path;
    int rc = read_pass(z, 0, err, errlen);
    if (rc) {
        *cannot_ = rc < 0 ? 0 : z->meta.summary ? 2 : 1;
        opp_step_stream_free(z);
        return NULL;
    }
    /* each thread's ranges: the earliest begin from each arrival on */
    for (size_t i = 0; i < z->nth; i++) {
        struct sthread *t = &z->th[i];
        for (size_t k = t->nlate; k-- > 1;)
            if (t->late[k] < t->late[k - 1])
                t->late[k - 1] = t->late[k];
    }
    return z;
}

const struct opp_model *opp_step_stream_model(const struct opp_step_stream *s)
{
    return s->meta.ld.m;
}

/* Whether candidate c encloses call (begin, end, depth) that comes after
 * it in tree order (thread_tree.c's nests_in). */
static int encloses(const struct cand *c, uint64_t begin, uint64_t end, uint32_t depth)
{
    return end <= c->end && (begin < c->end || (begin == c->end && depth > c->depth));
}

/* Ranges (tree order) may nest: each one's nearest enclosing one. */
static void parents(struct cands *b)
{
    uint32_t top = NO_CAND; /* the innermost open one; its parents below it */
    for (size_t i = 0; i < b->n; i++) {
        struct cand *c = &b->v[i];
        while (top != NO_CAND && !encloses(&b->v[top], c->begin, c->end, c->depth))
            top = b->v[top].parent;
        c->parent = top;
        top = (uint32_t)i;
    }
}

/* GPU work of dur owned by call c: its step's (its top-level call's step
 * for boundaries; each range around it, itself included). */
static void owned(void *ctx, const struct opp_gpu_call *c, const void *op)
{
    struct opp_step_stream *z = ctx;
    if (!c)
        return; /* no call's: no step's */
    uint64_t dur = *(const uint64_t *)op;
    struct sthread *t = &z->th[c->thread];
    if (!t->b || !t->b->n)
        return;
    size_t lo = first_not_before(t->b, c->begin, c->end, c->depth, c->seq);
    if (z->ranges) {
        uint32_t j = lo < t->b->n && t->b->v[lo].seq == c->seq ? (uint32_t)lo
                     : lo                                       ? (uint32_t)(lo - 1)
                                                                : NO_CAND;
        while (j != NO_CAND && j != lo && !encloses(&t->b->v[j], c->begin, c->end, c->depth))
            j = t->b->v[j].parent;
        for (; j != NO_CAND; j = t->b->v[j].parent)
            t->b->v[j].gpu += dur;
        return;
    }
    size_t sl = 0, sh = t->nspan; /* the last top-level call around a boundary before it */
    while (sl < sh) {
        size_t mid = sl + (sh - sl) / 2;
        if (t->span[mid].begin <= c->begin)
            sl = mid + 1;
        else
            sh = mid;
    }
    uint32_t step;
    if (sl && c->end <= t->span[sl - 1].end)
        step = t->span[sl - 1].step;
    else
        step = window_of(t, lo, c->begin);
    if (step != NO_CAND)
        t->b->v[step].gpu += dur;
}

int opp_step_stream_steps(struct opp_step_stream *z, const struct opp_agg_opts *o, const char *name,
                          struct opp_steps *out, char *what, size_t cap_what, char *err,
                          size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct opp_model *m = z->meta.ld.m;
    z->name_id = name ? opp_loader_intern(&z->meta.ld, name) : UINT32_MAX;
    if (name && z->name_id == UINT32_MAX) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = read_pass(z, 1, err, errlen);
    if (rc)
        return rc;
    m->open_events = z->open;
    for (size_t i = 0; i < z->nth; i++) {
        struct sthread *t = &z->th[i];
        sort_cands(&t->named);
        sort_cands(&t->pstep);
        sort_cands(&t->opt);
        sort_cands(&t->mod);
    }
    /* which: opp_steps_find's and opp_steps_default's choices */
    enum { NAMED, PSTEP, TRAIN, MODULE, NONE } pick = NONE;
    const struct cand *first = NULL;
    if (name) {
        pick = NAMED;
        for (size_t i = 0; i < z->nth && !first; i++)
            first = z->th[i].named.n ? &z->th[i].named.v[0] : NULL;
        out->ranges = first && first->range;
        out->named = first != NULL;
    } else {
        for (int k = PSTEP; k <= MODULE && pick == NONE; k++)
            for (size_t i = 0; i < z->nth && pick == NONE; i++) {
                struct sthread *t = &z->th[i];
                const struct cands *c = k == PSTEP ? &t->pstep : k == TRAIN ? &t->opt : &t->mod;
                if (c->n && opp_agg_selects(m, o, m->threads[i].proc, (uint32_t)i)) {
                    pick = k;
                    first = &c->v[0];
                }
            }
        if (pick == PSTEP)
            snprintf(what, cap_what, PROFILER_STEP "N");
        else if (pick == TRAIN)
            snprintf(what, cap_what, "training iterations (to each %s)",
                     opp_model_str(m, first->name));
        else if (pick == MODULE)
            snprintf(what, cap_what, "inferences (outermost nn.Module forwards: %s)",
                     opp_model_str(m, first->name));
        else
            snprintf(what, cap_what, "none (no ProfilerStep#N, optimizer step or nn.Module)");
        out->ranges = pick == PSTEP || pick == MODULE;
    }
    if (pick == NONE)
        return 0;
    int need_calls = 0;
    for (size_t i = 0; i < z->nth; i++) {
        struct sthread *t = &z->th[i];
        t->b = pick == NAMED   ? &t->named
               : pick == PSTEP ? &t->pstep
               : pick == TRAIN ? &t->opt
                               : &t->mod;
        if (!opp_agg_selects(m, o, m->threads[i].proc, (uint32_t)i))
            t->b = NULL;
        if (t->b && out->ranges)
            parents(t->b);
        if (!t->b || out->ranges)
            continue;
        t->k0 = pick != TRAIN; /* a boundary ends a step; a training step is from the first */
        drop_nested(t->b);
        if (pick == TRAIN && t->b->n) /* the first label, if before */
            t->first = t->have_label && t->label.begin < t->b->v[0].begin ? t->label.begin
                                                                          : t->b->v[0].begin;
        for (size_t k = 0; k < t->b->n; k++)
            t->b->v[k].cpu = 0;
        need_calls |= t->b->n > t->k0;
    }
    z->ranges = out->ranges;
    if (z->meta.gpu_ops && !(z->join = opp_gpu_join_new(sizeof(uint64_t)))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if ((need_calls || z->join) && (rc = read_pass(z, 2, err, errlen)))
        return rc;
    uint64_t unattached;
    if (z->join && (rc = opp_gpu_join_run(z->join, owned, z, &unattached))) {
        if (rc == -ENOMEM) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        cannot_tmp(z, rc);
        snprintf(err, errlen, "%s", z->cannot);
        return 1;
    }
    size_t n = 0; /* the steps, allocated once: they are many */
    for (size_t i = 0; i < z->nth; i++)
        n += z->th[i].b && z->th[i].b->n > z->th[i].k0 ? z->th[i].b->n - z->th[i].k0 : 0;
    out->steps = malloc((n ? n : 1) * sizeof *out->steps);
    if (!out->steps) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < z->nth; i++) {
        struct sthread *t = &z->th[i];
        for (size_t k = t->k0; t->b && k < t->b->n; k++) {
            const struct cand *c = &t->b->v[k];
            struct opp_step st = {c->begin, c->end, c->cpu, c->gpu, (uint32_t)i};
            if (!out->ranges) {
                st.begin_ns = k ? t->b->v[k - 1].end : t->first;
                if (pick == TRAIN && !st.cpu_ns) /* a step nested in a label */
                    st.cpu_ns = c->end - c->begin;
            }
            out->steps[out->n++] = st;
        }
        free(t->b ? t->b->v : NULL); /* the steps have what they had */
        if (t->b)
            *t->b = (struct cands){0};
    }
    return 0;
}

void opp_step_stream_free(struct opp_step_stream *z)
{
    if (!z)
        return;
    opp_gpu_join_free(z->join);
    for (size_t i = 0; i < z->nth; i++) {
        struct sthread *t = &z->th[i];
        free(t->s);
        free(t->late);
        free(t->named.v);
        free(t->pstep.v);
        free(t->opt.v);
        free(t->mod.v);
        free(t->span);
        free(t->open);
    }
    free(z->th);
    opp_loader_name_cache_free(z->names);
    opp_stream_meta_free(&z->meta);
    free(z);
}
