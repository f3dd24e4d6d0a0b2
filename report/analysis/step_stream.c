/* Steps found as a full trace is read, a consumer of the pass (step_stream.h). */
#include "analysis/step_stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/loader.h"
#include "analysis/pass.h"
#include "analysis/stream_meta.h"
#include "ops.h"
#include "torch_rules.h"

#define NO_CAND UINT32_MAX

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
    struct cands named, pstep, opt, mod;
    int have_label;
    struct opp_pass_call label; /* its first top-level torch label or nn.Module forward */
    /* the second read: the step k of boundaries b (k from k0) holds the
     * top-level calls after b[k-1] and up to b[k] in tree order that begin
     * at or after the end of b[k-1] (at first for k = 0); their time goes
     * to b[k].cpu */
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
    struct opp_pass *pass;
    struct sthread *th; /* by thread index */
    size_t nth;
    int round; /* 1: the candidates; 2: the calls in the steps */
    uint32_t name_id;
    int ranges; /* the steps are candidates' own calls */
    int spans;  /* GPU ops to join: the top-level calls around boundaries kept */
    int tapped; /* the candidates are read by another's read (opp_step_stream_tap) */
};

static int cand_push(struct cands *c, const struct opp_pass_call *x, int range)
{
    if (opp_loader_grow((void **)&c->v, &c->cap, c->n + 1, sizeof *c->v))
        return -ENOMEM;
    uint64_t dur = x->end - x->begin;
    c->v[c->n++] = (struct cand){.begin = x->begin, .end = x->end,
                                 .cpu = x->kids_ns < dur ? x->kids_ns : dur, .name = x->name,
                                 .seq = x->seq, .parent = NO_CAND, .depth = x->depth,
                                 .range = (uint8_t)range};
    return 0;
}

/* Candidates inside x are not outermost: gone (they arrived last). */
static void cand_drop_inside(struct cands *c, const struct opp_pass_call *x)
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

/* The first of boundaries b not before (begin, end, depth, seq) in tree order. */
static size_t first_not_before(const struct cands *b, uint64_t begin, uint64_t end,
                               uint32_t depth, uint32_t seq)
{
    return OPP_PARTITION_POINT(b->n, k,
                               tree_before(b->v[k].begin, b->v[k].end, b->v[k].depth, b->v[k].seq,
                                           begin, end, (uint16_t)depth, seq));
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
static int top_level(void *ctx, const struct opp_pass_call *x)
{
    struct opp_step_stream *z = ctx;
    struct sthread *t = &z->th[x->thread];
    if (z->round == 1) {
        if ((x->flags & OPP_PASS_LABEL) &&
            (!t->have_label || tree_before(x->begin, x->end, x->depth, x->seq, t->label.begin,
                                           t->label.end, t->label.depth, t->label.seq))) {
            t->label = *x;
            t->have_label = 1;
        }
        return 0;
    }
    if (!t->b || z->ranges)
        return 0;
    size_t lo = first_not_before(t->b, x->begin, x->end, x->depth, x->seq);
    uint32_t step = window_of(t, lo, x->begin);
    if (step != NO_CAND)
        t->b->v[step].cpu += x->end - x->begin;
    /* around a boundary (or one): the GPU work inside it is its step's */
    if (z->spans && lo < t->b->n && t->b->v[lo].end <= x->end) {
        if (opp_loader_grow((void **)&t->span, &t->span_cap, t->nspan + 1, sizeof *t->span))
            return -ENOMEM;
        t->span[t->nspan++] = (struct span){x->begin, x->end, step};
    }
    return 0;
}

/* A read of the calls starts (again, when the pass keeps a thread whole
 * from then on): what an earlier one found is forgotten. */
static void restart(void *ctx)
{
    struct opp_step_stream *z = ctx;
    for (size_t i = 0; i < z->nth; i++) {
        struct sthread *t = &z->th[i];
        if (z->round == 1) {
            t->named.n = t->pstep.n = t->opt.n = t->mod.n = 0;
            t->have_label = 0;
            continue;
        }
        t->nspan = 0;
        for (size_t k = 0; t->b && k < t->b->n; k++) {
            t->b->v[k].gpu = 0;
            if (!z->ranges) /* a range's CPU is from the first read */
                t->b->v[k].cpu = 0;
        }
    }
}

/* The steps a call may be (the first read of the calls). */
static int candidate(void *ctx, const struct opp_pass_call *x)
{
    struct opp_step_stream *z = ctx;
    struct sthread *t = &z->th[x->thread];
    if (x->folded != OPP_PASS_NONE) {
        cand_drop_seq(&t->named, x->folded);
        cand_drop_seq(&t->pstep, x->folded);
        cand_drop_seq(&t->opt, x->folded);
        cand_drop_seq(&t->mod, x->folded);
    }
    int module = x->scope == OPP_TORCH_SCOPE_MODULE;
    int range = opp_call_is_range(x->kind, x->scope);
    if (z->name_id != UINT32_MAX)
        return x->name == z->name_id ? cand_push(&t->named, x, range) : 0;
    const char *name = opp_model_str(opp_pass_model(z->pass), x->name);
    if (opp_profiler_step(name) && cand_push(&t->pstep, x, 1))
        return -ENOMEM;
    if (opp_optimizer_step(x->scope, name)) {
        cand_drop_inside(&t->opt, x); /* an optimizer stepping another */
        if (cand_push(&t->opt, x, 0))
            return -ENOMEM;
    }
    if (module) {
        cand_drop_inside(&t->mod, x);
        if (cand_push(&t->mod, x, 1))
            return -ENOMEM;
    }
    return 0;
}

struct opp_step_stream *opp_step_stream_over(struct opp_pass *p, char *err, size_t errlen)
{
    struct opp_step_stream *z = calloc(1, sizeof *z);
    if (z) {
        z->pass = p;
        z->nth = opp_pass_model(p)->nthreads;
    }
    if (!z || !(z->th = calloc(z->nth ? z->nth : 1, sizeof *z->th))) {
        snprintf(err, errlen, "out of memory");
        free(z);
        return NULL;
    }
    return z;
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

/* What a step keeps of a kernel, copy or set: its duration (as
 * opp_gpu_op_decode reads it); of other records nothing. */
static int op_dur(void *ctx, uint32_t proc, const struct opp_gpu_rec *g, void *op)
{
    (void)ctx, (void)proc;
    if (g->type != OPP_GPU_KERNEL && g->type != OPP_GPU_MEMCPY && g->type != OPP_GPU_MEMSET)
        return 1;
    const uint64_t *f = g->f;
    uint64_t dur = f[OPP_GF_END] > f[OPP_GF_START] ? f[OPP_GF_END] - f[OPP_GF_START] : 0;
    memcpy(op, &dur, sizeof dur);
    return 0;
}

/* GPU work of dur owned by call c: its step's (its top-level call's step
 * for boundaries; each range around it, itself included). */
static void owned(void *ctx, const struct opp_gpu_call *c, const void *op)
{
    struct opp_step_stream *z = ctx;
    if (!c)
        return; /* no call's: no step's */
    uint64_t dur;
    memcpy(&dur, op, sizeof dur);
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

/* Which candidates are the steps (step_stream.h): the name's (NAMED), or
 * the program's own, said in what; first: the first of them. */
enum pick { NAMED, PSTEP, TRAIN, MODULE, NONE };

static enum pick pick_steps(struct opp_step_stream *z, const struct opp_agg_opts *o,
                            const char *name, struct opp_steps *out, char *what, size_t cap_what)
{
    const struct opp_model *m = opp_pass_model(z->pass);
    const struct cand *first = NULL;
    if (name) {
        for (size_t i = 0; i < z->nth; i++) {
            if (!z->th[i].named.n)
                continue;
            if (!first) {
                first = &z->th[i].named.v[0];
                out->found = (struct opp_step_name){.named = 1, .proc = m->threads[i].proc};
            }
            out->found.held |= opp_agg_selects(m, o, m->threads[i].proc, (uint32_t)i);
        }
        out->ranges = first && first->range;
        out->name = first ? first->name : 0;
        return NAMED;
    }
    enum pick pick = NONE;
    for (int k = PSTEP; k <= MODULE && pick == NONE; k++)
        for (size_t i = 0; i < z->nth && pick == NONE; i++) {
            struct sthread *t = &z->th[i];
            const struct cands *c = k == PSTEP ? &t->pstep : k == TRAIN ? &t->opt : &t->mod;
            if (c->n && opp_agg_selects(m, o, m->threads[i].proc, (uint32_t)i)) {
                pick = (enum pick)k;
                first = &c->v[0];
            }
        }
    opp_steps_default_what(pick == PSTEP    ? OPP_STEPS_PROFILER
                           : pick == TRAIN  ? OPP_STEPS_TRAINING
                           : pick == MODULE ? OPP_STEPS_INFERENCE
                                            : OPP_STEPS_NONE,
                           first ? opp_model_str(m, first->name) : NULL, what, cap_what);
    out->ranges = pick == PSTEP || pick == MODULE;
    out->name = first ? first->name : 0;
    return pick;
}

int opp_step_stream_tap(struct opp_step_stream *z, const char *name, struct opp_pass_consumer *c)
{
    z->name_id = name ? opp_pass_intern(z->pass, name) : UINT32_MAX;
    if (name && z->name_id == UINT32_MAX)
        return -1;
    *c =
        (struct opp_pass_consumer){.ctx = z, .begin = restart, .call = candidate, .top = top_level};
    z->round = 1;
    z->tapped = 1;
    return 0;
}

int opp_step_stream_steps(struct opp_step_stream *z, const struct opp_agg_opts *o, const char *name,
                          struct opp_steps *out, char *what, size_t cap_what, char *err,
                          size_t errlen)
{
    memset(out, 0, sizeof *out);
    const struct opp_model *m = opp_pass_model(z->pass);
    int rc = 0;
    if (z->tapped && (name ? opp_pass_intern(z->pass, name) : UINT32_MAX) != z->name_id)
        z->tapped = 0; /* tapped for another name */
    if (!z->tapped) {
        struct opp_pass_consumer cands;
        if (opp_step_stream_tap(z, name, &cands))
            return opp_err_oom(err, errlen);
        rc = opp_pass_run(z->pass, &cands, err, errlen);
    }
    z->tapped = 0;
    if (rc)
        return rc;
    for (size_t i = 0; i < z->nth; i++) {
        struct sthread *t = &z->th[i];
        sort_cands(&t->named);
        sort_cands(&t->pstep);
        sort_cands(&t->opt);
        sort_cands(&t->mod);
    }
    enum pick pick = pick_steps(z, o, name, out, what, cap_what);
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
        need_calls |= t->b->n > t->k0;
    }
    z->ranges = out->ranges;
    z->spans = opp_pass_meta(z->pass)->gpu_ops != 0;
    /* the second read: the top-level calls in each step, the GPU work */
    const struct opp_pass_consumer in_steps = {.ctx = z,
                                               .begin = restart,
                                               .top = top_level,
                                               .op_bytes = sizeof(uint64_t),
                                               .op = op_dur,
                                               .owned = owned};
    z->round = 2;
    if ((need_calls || m->gpu.records) && (rc = opp_pass_run(z->pass, &in_steps, err, errlen)))
        return rc;
    size_t n = 0; /* the steps, allocated once: they are many */
    for (size_t i = 0; i < z->nth; i++)
        n += z->th[i].b && z->th[i].b->n > z->th[i].k0 ? z->th[i].b->n - z->th[i].k0 : 0;
    out->steps = malloc((n ? n : 1) * sizeof *out->steps);
    if (!out->steps)
        return opp_err_oom(err, errlen);
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
    for (size_t i = 0; i < z->nth && z->th; i++) {
        struct sthread *t = &z->th[i];
        free(t->named.v);
        free(t->pstep.v);
        free(t->opt.v);
        free(t->mod.v);
        free(t->span);
    }
    free(z->th);
    free(z);
}
