/* The table added up as a full trace is read, a consumer of the pass
 * (table_stream.h): the questions, and the read that adds each call up
 * into their rows, call paths and code frames (table_internal.h). */
#include "analysis/table_stream.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/step_times.h"
#include "analysis/table_internal.h"

struct opp_table_stream *opp_table_stream_over(struct opp_pass *p, char *err, size_t errlen)
{
    struct opp_table_stream *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->pass = p;
    s->m = opp_pass_model(p);
    s->cpu_mem = s->m->summary && opp_model_has_cpu_mem(s->m); /* a full trace's: the join's */
    return s;
}

/* Name id of a call or GPU op tried against question q's --match
 * (opp_table_stream_matched). */
static void try_name(struct opp_table_stream *s, struct tq *q, uint32_t id)
{
    if (!q->o->match || q->matched || id >= s->m->nstrs)
        return;
    if (opp_loader_grow_zeroed((void **)&q->tried, &q->ntried, s->m->nstrs, 1)) {
        tstream_fail(s, -ENOMEM);
        return;
    }
    if (q->tried[id])
        return;
    q->tried[id] = 1;
    q->matched = regexec(q->o->match, s->m->strs[id], 0, NULL, 0) == 0;
}

const uint64_t *opp_table_stream_thread_calls(const struct opp_table_stream *s)
{
    return s->calls;
}

int opp_table_stream_matched(const struct opp_table_stream *s)
{
    return s->matched;
}

/* What the calls of t's stack keep: their subtrees, their calls waiting
 * on a key. */
static void drop_kept(struct tthread *t)
{
    for (size_t i = t->base; i < t->n; i++) {
        opp_tpaths_free(t->e[i].pt);
        t->e[i].pt = NULL;
        OPP_HASH_FREE(t->e[i].sk);
    }
}

/* A kernel, copy or set of the join in question q's CUDA row when its
 * filters select it. 0 or -ENOMEM. */
static int gpu_row(struct opp_table_stream *s, struct tq *q, const struct gown *g)
{
    try_name(s, q, g->name);
    int32_t ka = g->thread != OPP_GPU_NONE ? q->thread_acc[g->thread] : q->proc_acc[g->proc];
    if (ka < 0 || !tstream_gpu_in_window(s, &q->o[ka], g))
        return 0;
    struct gkey k = {g->name, g->type, g->proc, (uint32_t)ka};
    struct grow_ *r;
    HASH_FIND(hh, q->gpu, &k, sizeof k, r);
    if (!r) {
        if (!(r = calloc(1, sizeof *r)))
            return -ENOMEM;
        r->k = k;
        if (OPP_HASH_ADD(q->gpu, k, sizeof k, r)) {
            free(r);
            return -ENOMEM;
        }
    }
    r->dur += g->dur;
    r->bytes += g->bytes;
    r->calls++;
    return 0;
}

/* The questions' CUDA rows from the join's records: 0 or -errno. */
static int gpu_rows(struct opp_table_stream *s)
{
    const struct gown *g;
    int rc = opp_extsort_rewind(s->gowns);
    while (!rc && (g = opp_extsort_next(s->gowns)))
        for (size_t i = 0; i < s->nq && !rc; i++)
            rc = gpu_row(s, &s->q[i], g);
    return rc ? rc : opp_extsort_error(s->gowns);
}

/* A summary's kernels, copies and sets (the model's, counted) in
 * question q's CUDA rows when its filters select them. 0 or -ENOMEM. */
static int summary_gpu_rows(struct opp_table_stream *s, struct tq *q)
{
    const struct opp_gpu *gt = &s->m->gpu;
    for (size_t i = 0; i < gt->nops; i++) {
        const struct opp_gpu_op *g = &gt->ops[i];
        if (!opp_gpu_op_timed(g))
            continue;
        try_name(s, q, g->name);
        int32_t ka = g->thread != OPP_GPU_NONE ? q->thread_acc[g->thread] : q->proc_acc[g->proc];
        if (ka < 0 || (q->o[ka].sched_window &&
                       (i >= gt->nsum || gt->sum[i].window != q->o[ka].sched_window)))
            continue;
        struct opp_agg_gpu a = {.name = g->name,
                                .type = g->type,
                                .proc = g->proc,
                                .dur_ns = opp_gpu_op_dur(g),
                                .bytes = g->bytes,
                                .calls = opp_gpu_op_count(gt, i)};
        if (opp_agg_acc_gpu(q->acc[ka], &a))
            return -ENOMEM;
    }
    return 0;
}

/* Question q's reading starts again: what an earlier read kept (the
 * pass reads again) gone, its CUDA rows in its aggregates. */
static void q_begin(struct opp_table_stream *s, struct tq *q)
{
    for (size_t i = 0; i < s->m->nthreads; i++) {
        drop_kept(&q->th[i]);
        q->th[i].base = q->th[i].n = 0;
    }
    if (q->tree) {
        opp_tpaths_clear(q->tree);
        return;
    }
    if (q->code) {
        opp_codetree_acc_drop(q->cacc);
        if (!(q->cacc = opp_codetree_acc_new(q->code)))
            tstream_fail(s, -ENOMEM);
        return;
    }
    for (size_t k = 0; k < q->nacc; k++) {
        opp_agg_acc_drop(q->acc[k]);
        if (!(q->acc[k] = opp_agg_acc_new(s->m, &q->o[k], &q->out[k]))) {
            tstream_fail(s, -ENOMEM);
            return;
        }
    }
    for (struct grow_ *r = q->gpu; r; r = r->hh.next) {
        struct opp_agg_gpu a = {.name = r->k.name,
                                .type = r->k.type,
                                .proc = r->k.proc,
                                .dur_ns = r->dur,
                                .bytes = r->bytes,
                                .calls = r->calls};
        if (opp_agg_acc_gpu(q->acc[r->k.acc], &a)) {
            tstream_fail(s, -ENOMEM);
            return;
        }
    }
    if (s->m->summary)
        tstream_fail(s, summary_gpu_rows(s, q));
}

/* The second read: each call added to each question's rows once its
 * parent has come (or it is top-level), with its children's GPU work and
 * CPU memory. */
static void second_begin(void *ctx)
{
    struct opp_table_stream *s = ctx;
    for (size_t i = 0; i < s->m->nthreads; i++)
        s->calls[i] = 0;
    /* the GPU records sorted by call: read once, in this read; the pass
     * reads again only when a thread turns out to need keeping whole,
     * which the join's read found already */
    if (s->owns && s->reads++) {
        tstream_fail(s, -ESTALE);
    } else if (s->owns) {
        tstream_fail(s, opp_tstream_owns_rewind(s));
    }
    for (size_t i = 0; i < s->nq; i++)
        q_begin(s, &s->q[i]);
}

/* Calls k of process index proc added to their row, their stack as it is:
 * 0 or -ENOMEM. */
static int skeep_done(struct tq *q, uint32_t proc, const struct skeep *k)
{
    struct opp_agg_vals v = {.kind = k->k.kind, .status = k->k.status};
    if (opp_agg_acc_stacked(q->acc[k->k.acc], k->k.row, k->k.nstack, k->k.stack, &v.row))
        return -ENOMEM;
    return opp_agg_acc_add_sum(q->acc[k->k.acc], proc, &v, &k->sum);
}

/* Calls k (malloc'd, taken) of process index proc, now that the call
 * around them has come: at, whose name their stack takes (folded: at
 * took in the call whose name it took last, of the same name), or NULL
 * when they are top-level. Added to their row once their stack is whole,
 * else kept with at's. 0 or -ENOMEM. */
static int skeep_up(struct tq *q, uint32_t proc, struct skeep *k, struct ent *at, int folded)
{
    if (at && !folded)
        k->k.stack[k->k.nstack++] = at->name;
    if (!at || k->k.nstack == opp_agg_stack_depth(&q->o[k->k.acc])) {
        int rc = skeep_done(q, proc, k);
        free(k);
        return rc;
    }
    struct skeep *x;
    HASH_FIND(hh, at->sk, &k->k, sizeof k->k, x);
    if (x) {
        opp_agg_sum_merge(&x->sum, &k->sum);
        free(k);
        return 0;
    }
    if (OPP_HASH_ADD(at->sk, k, sizeof k->k, k)) {
        free(k);
        return -ENOMEM;
    }
    return 0;
}

/* The calls under c waiting on a key, now that the call around them
 * has come (skeep_up's at and folded). 0 or -ENOMEM. */
static int skeep_lift(struct tq *q, uint32_t proc, struct ent *c, struct ent *at, int folded)
{
    struct skeep *k, *tmp;
    int rc = 0;
    HASH_ITER(hh, c->sk, k, tmp)
    {
        HASH_DEL(c->sk, k);
        if (!rc)
            rc = skeep_up(q, proc, k, at, folded);
        else
            free(k);
    }
    return rc;
}

/* Call e of thread index thread (of process index proc) at its code
 * frames' path, now that it is known not folded. 0 or -ENOMEM. */
static int code_add(struct opp_table_stream *s, struct tq *q, uint32_t thread, uint32_t proc,
                    const struct ent *e)
{
    if (!e->sel)
        return 0;
    const struct opp_codetree_call c = {.proc = proc,
                                        .stack = e->stack,
                                        .name = opp_model_str(s->m, e->name),
                                        .self_ns = e->self_ns,
                                        .total_ns = e->span,
                                        .self_cuda_ns = e->gpu.self_cuda_ns,
                                        .cuda_total_ns = e->gpu.cuda_ns,
                                        .thread = thread,
                                        .depth = e->depth,
                                        .seq = e->seq,
                                        .begin = e->begin,
                                        .end = e->begin + e->span};
    return opp_codetree_acc_add(q->cacc, s->m->code, &c);
}

/* Call e of process index proc added to its row, now that parent, the
 * call around it, has come (NULL: it is top-level); grouped by stack, a
 * call whose key takes the names around it waits for them. */
static int add(struct tq *q, uint32_t proc, const struct ent *e, struct ent *parent)
{
    if (!e->sel || (e->mem && parent))
        return 0; /* a memory call inside an operator is summed into it */
    struct opp_event_cpumem cm = {e->self, e->total};
    if (e->mem)
        cm.total = cm.self; /* its own bytes */
    struct opp_agg_part p = {
        .calls = e->calls, .self_ns = e->self_ns, .dur_ns = e->dur, .gpu = &e->gpu, .cpumem = &cm};
    if (e->keyed || !parent || e->v.row == OPP_AGG_NO_ROW)
        return opp_agg_acc_add(q->acc[e->acc], proc, &e->v, &p);
    struct skeep *k = calloc(1, sizeof *k);
    if (!k)
        return -ENOMEM;
    k->k = (struct skey){.row = e->v.row, .status = e->v.status, .kind = e->v.kind, .acc = e->acc};
    opp_agg_sum_add(&k->sum, &e->v, &p);
    return skeep_up(q, proc, k, parent, 0);
}

/* Call x's own numbers into e, field by field: an initializer (or a
 * copy of an entry just made) would cost a call the most here. o: its GPU
 * work and CPU memory; mem: it is a CPU memory call. */
static void ent_init(struct ent *e, const struct opp_pass_call *x, const struct own *o, uint8_t mem)
{
    uint64_t dur = x->end > x->begin ? x->end - x->begin : 0;
    e->calls = x->stat ? x->stat->count : 1;
    e->self_ns = dur > x->kids_ns ? dur - x->kids_ns : 0;
    e->dur = dur;
    e->pt = NULL;
    e->sk = NULL;
    e->begin = x->begin;
    e->stack = x->stack;
    e->depth = x->depth;
    e->acc = 0;
    e->span = x->end - x->begin;
    e->name = x->name;
    e->v.row = 0;
    e->v.kind = 0;
    e->v.flops = e->v.coll = 0;
    e->v.bus = 0;
    e->v.status = 0;
    e->gpu.self_cuda_ns = e->gpu.cuda_ns = o->cuda;
    e->gpu.self_mem = e->gpu.mem = o->mem;
    e->mem = mem;
    e->self = mem ? o->cpu : 0;
    e->total = 0;
    e->seq = x->seq;
    e->sel = 0;
    e->keyed = 0;
}

/* Call x of process index proc as question q takes it (o and mem as
 * ent_init takes them): the children on q's stack of its thread added up
 * into it and to their rows, then it on that stack in their place (made
 * above them). 0 or -errno. */
static int q_call(struct opp_table_stream *s, struct tq *q, const struct opp_pass_call *x,
                  const struct own *o, uint8_t mem, const struct opp_func *f, uint32_t proc)
{
    struct tthread *t = &q->th[x->thread];
    if (x->nkids > t->n - t->base)
        return -EPROTO; /* the pass hands over each child before its parent */
    if (opp_loader_grow((void **)&t->e, &t->cap, t->n + 1, sizeof *t->e))
        return -ENOMEM;
    struct ent *kids = &t->e[t->n - x->nkids], *e = &t->e[t->n];
    ent_init(e, x, o, mem);
    for (uint32_t k = 0; k < x->nkids; k++) {
        struct ent *c = &kids[k];
        e->gpu.cuda_ns += c->gpu.cuda_ns;
        e->gpu.mem = opp_add_sat(e->gpu.mem, c->gpu.mem);
        if (c->mem) { /* its bytes (and those of memory inside it) are this call's own */
            e->self = opp_add_sat(e->self, c->self);
            e->total = opp_add_sat(e->total, c->total);
        } else if (c->seq == x->folded) { /* its children are this call's */
            e->self = opp_add_sat(e->self, c->self);
            e->total = opp_add_sat(e->total, c->total - c->self);
        } else {
            e->total = opp_add_sat(e->total, c->total);
        }
        int rc = c->seq == x->folded || q->tree ? 0
                 : q->code                      ? code_add(s, q, x->thread, proc, c)
                                                : add(q, proc, c, e);
        if (!rc && c->sk)
            rc = skeep_lift(q, proc, c, e, c->seq == x->folded);
        if (rc) {
            OPP_HASH_FREE(e->sk);
            return rc;
        }
    }
    if (q->tree) {
        int rc = opp_tpaths_subtree(e, x->nkids ? kids : NULL, x->nkids, x->folded);
        for (uint32_t k = 0; k < x->nkids; k++) {
            opp_tpaths_free(kids[k].pt);
            kids[k].pt = NULL; /* a later failure leaves them on the stack */
        }
        if (rc) {
            t->n -= x->nkids;
            return rc;
        }
    }
    if (!e->mem)
        e->total = opp_add_sat(e->total, e->self);
    try_name(s, q, x->name);
    int rc = s->failed;
    int32_t ka = q->thread_acc[x->thread];
    if (ka >= 0 && !tstream_call_in_window(s, &q->o[ka], x->thread, x->begin))
        ka = -1;
    if (ka >= 0 && x->stat && q->o[ka].sched_window && x->stat->window != q->o[ka].sched_window)
        ka = -1; /* a summary's node of another schedule window */
    if (!rc && ka >= 0 && !q->tree && !q->code) {
        e->acc = (uint32_t)ka;
        uint32_t frames[OPP_STACK_MAX];
        struct opp_agg_call c = {
            .name = x->name, .f = f, .args = x->args, .nargs = x->nargs, .stack = frames};
        c.nstack = opp_agg_code_frames(s->m, &q->o[ka], proc, x->stack, frames);
        e->keyed = c.nstack || !opp_agg_stack_depth(&q->o[ka]);
        rc = opp_agg_acc_row(q->acc[ka], &c, &e->v);
        e->sel = 1;
    }
    if (rc) {
        opp_tpaths_free(e->pt);
        OPP_HASH_FREE(e->sk);
        return rc;
    }
    e->sel = e->sel || ((q->tree || q->code) && ka >= 0);
    if (x->nkids)
        *kids = *e;
    t->n = t->n - x->nkids + 1;
    return 0;
}

static int second_call(void *ctx, const struct opp_pass_call *x)
{
    struct opp_table_stream *s = ctx;
    if (s->failed)
        return s->failed;
    s->calls[x->thread] += 1 - (x->folded != OPP_PASS_NONE);
    uint32_t proc = s->m->threads[x->thread].proc;
    const uint64_t *cols;
    struct own o;
    int rc = opp_tstream_own_take(s, x->at, &o);
    if (rc)
        return rc;
    if (x->stat) /* a summary node's own, given */
        o = (struct own){.at = x->at,
                         .cuda = x->stat->self_cuda_ns,
                         .mem = x->stat->self_mem,
                         .cpu = x->stat->cpu_mem};
    uint8_t mem = (uint8_t)opp_mrec_cols(x->kind, x->args, x->nargs, &cols);
    const struct opp_func *f = &s->m->procs[proc].funcs[x->fn];
    for (size_t i = 0; i < s->nq && !rc; i++)
        rc = q_call(s, &s->q[i], x, &o, mem, f, proc);
    return rc;
}

/* Call x, now known to be top-level, as question q takes it: the first
 * of q's stack of its thread. 0 or -errno. */
static int q_top(struct opp_table_stream *s, struct tq *q, const struct opp_pass_call *x)
{
    struct tthread *t = &q->th[x->thread];
    struct ent *e = OPP_PASS_STACK_TAKE(t->e, t->base, t->n, x->seq);
    if (!e)
        return -EPROTO;
    uint32_t proc = s->m->threads[x->thread].proc;
    int rc = q->tree   ? e->sel ? opp_tpaths_merge(q->tree, OPP_CT_ROOT, e, 0) : 0
             : q->code ? code_add(s, q, x->thread, proc, e)
                       : add(q, proc, e, NULL);
    if (!rc && e->sk) /* the calls under it: their stacks end here */
        rc = skeep_lift(q, proc, e, NULL, 0);
    OPP_HASH_FREE(e->sk);
    opp_tpaths_free(e->pt);
    e->pt = NULL;
    opp_pass_stack_settled(t->e, sizeof *t->e, &t->base, &t->n);
    return rc;
}

static int second_top(void *ctx, const struct opp_pass_call *x)
{
    struct opp_table_stream *s = ctx;
    int rc = 0;
    for (size_t i = 0; i < s->nq && !rc; i++)
        rc = q_top(s, &s->q[i], x);
    return rc;
}

/* What question q kept for a read. */
static void q_forget(struct opp_table_stream *s, struct tq *q)
{
    OPP_HASH_FREE(q->gpu);
    free(q->thread_acc);
    free(q->proc_acc);
    q->thread_acc = q->proc_acc = NULL;
    for (size_t i = 0; q->th && i < s->m->nthreads; i++) {
        drop_kept(&q->th[i]);
        free(q->th[i].e);
    }
    free(q->th);
    q->th = NULL;
    free(q->tried);
    q->tried = NULL;
    q->ntried = 0;
}

/* What a read kept. */
static void forget(struct opp_table_stream *s)
{
    free(s->stash);
    s->stash = NULL;
    s->nstash = s->stash_cap = 0;
    for (size_t i = 0; i < s->nq; i++)
        q_forget(s, &s->q[i]);
}

/* Question q set up for a read: its aggregates (out zeroed), which of
 * them each thread's calls and each process's ops of no call go to, its
 * stacks. 0 or -ENOMEM. */
static int q_open(struct opp_table_stream *s, struct tq *q)
{
    const struct opp_model *m = s->m;
    if (!(q->acc = calloc(q->nacc, sizeof *q->acc)) ||
        !(q->thread_acc = malloc((m->nthreads ? m->nthreads : 1) * sizeof *q->thread_acc)) ||
        !(q->proc_acc = malloc((m->nprocs ? m->nprocs : 1) * sizeof *q->proc_acc)) ||
        !(q->th = calloc(m->nthreads ? m->nthreads : 1, sizeof *q->th)))
        return -ENOMEM;
    for (size_t i = 0; i < m->nthreads; i++) { /* the first that selects it */
        q->thread_acc[i] = -1;
        for (size_t k = 0; k < q->nacc && q->thread_acc[i] < 0; k++)
            if (opp_agg_selects(m, &q->o[k], m->threads[i].proc, (uint32_t)i))
                q->thread_acc[i] = (int32_t)k;
    }
    for (size_t i = 0; i < m->nprocs; i++) {
        q->proc_acc[i] = -1;
        for (size_t k = 0; k < q->nacc && q->proc_acc[i] < 0; k++)
            if (opp_agg_selects(m, &q->o[k], (uint32_t)i, OPP_GPU_NONE))
                q->proc_acc[i] = (int32_t)k;
    }
    return 0;
}

/* Question q's aggregates finished after its read (rc: the read's), or
 * dropped; its code-frame tree's too. rc, or -1 (out of memory, said in
 * err). */
static int q_close(struct opp_table_stream *s, struct tq *q, int rc, char *err, size_t errlen)
{
    for (size_t k = 0; q->acc && k < q->nacc; k++) {
        int frc = rc || q->tree || q->code ? (opp_agg_acc_drop(q->acc[k]), 0)
                                           : opp_agg_acc_finish(q->acc[k], s->cpu_mem);
        if (frc && !rc)
            rc = opp_err_oom(err, errlen);
    }
    free(q->acc);
    q->acc = NULL;
    if (!rc && q->cacc && opp_codetree_acc_finish(q->cacc)) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    } else if (rc) {
        opp_codetree_acc_drop(q->cacc);
    }
    q->cacc = NULL;
    return rc;
}

/* One read of the calls answering questions q[0..nq) (the join's read
 * first, once for them all). 0, 1 (cannot) or -1 (error), err saying
 * why; then no question's aggregates are left to free. */
static int read_calls(struct opp_table_stream *s, struct tq *q, size_t nq, char *err, size_t errlen)
{
    const struct opp_model *m = s->m;
    for (size_t i = 0; i < nq; i++) /* before anything can fail: freed on failure */
        memset(q[i].out, 0, q[i].nacc * sizeof *q[i].out);
    s->q = q;
    s->nq = nq;
    s->failed = 0;
    int rc = !s->calls && !(s->calls = calloc(m->nthreads ? m->nthreads : 1, sizeof *s->calls))
                 ? -ENOMEM
                 : 0;
    for (size_t i = 0; i < nq && !rc; i++)
        rc = q_open(s, &q[i]);
    if (rc)
        rc = opp_err_oom(err, errlen);
    if (!rc)
        rc = opp_table_stream_join_with(s, NULL, err, errlen);
    if (!rc && s->gowns) /* its temporary file read back */
        rc = opp_pass_said(0, gpu_rows(s), err, errlen);
    s->reads = 0;
    if (!rc) {
        const struct opp_pass_consumer second = {
            .ctx = s, .begin = second_begin, .call = second_call, .top = second_top};
        rc = tstream_said(s, opp_pass_run(s->pass, &second, err, errlen), err, errlen);
    }
    forget(s);
    if (rc) /* its temporary files may be what failed: the next question joins anew */
        opp_tstream_unjoin(s);
    for (size_t i = 0; i < nq; i++)
        rc = q_close(s, &q[i], rc, err, errlen);
    for (size_t i = 0; rc && i < nq; i++)
        for (size_t k = 0; !q[i].tree && !q[i].code && k < q[i].nacc; k++)
            opp_agg_free(&q[i].out[k]);
    s->matched = nq ? q[nq - 1].matched : 0;
    s->q = NULL;
    s->nq = 0;
    return rc;
}

int opp_table_stream_aggregate(struct opp_table_stream *s, const struct opp_agg_opts *o,
                               struct opp_agg *out, char *err, size_t errlen)
{
    return opp_table_stream_aggregates(s, o, 1, out, err, errlen);
}

int opp_table_stream_aggregates(struct opp_table_stream *s, const struct opp_agg_opts *o, size_t n,
                                struct opp_agg *out, char *err, size_t errlen)
{
    struct tq q = {.o = o, .nacc = n, .out = out};
    return read_calls(s, &q, 1, err, errlen);
}

int opp_table_stream_ask(struct opp_table_stream *s, const struct opp_table_q *qs, size_t n,
                         char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) { /* before anything can fail: freed on failure */
        if (qs[i].agg)
            memset(qs[i].agg, 0, sizeof *qs[i].agg);
        if (qs[i].ct)
            memset(qs[i].ct, 0, sizeof *qs[i].ct);
    }
    struct tq *q = calloc(n ? n : 1, sizeof *q);
    struct opp_agg *none = calloc(n ? n : 1, sizeof *none);
    int rc = q && none ? 0 : -1;
    for (size_t i = 0; i < n && !rc; i++) {
        q[i] = (struct tq){.o = qs[i].o, .nacc = 1, .out = qs[i].agg ? qs[i].agg : &none[i]};
        if (qs[i].ct && !(q[i].tree = opp_tpaths_new()))
            rc = -1;
    }
    if (rc)
        snprintf(err, errlen, "out of memory");
    else
        rc = read_calls(s, q, n, err, errlen);
    for (size_t i = 0; q && i < n; i++)
        if (qs[i].ct) {
            if (q[i].tree)
                rc = opp_tpaths_calltree(q[i].tree, qs[i].ct, rc, err, errlen);
            else
                memset(qs[i].ct, 0, sizeof *qs[i].ct);
        }
    for (size_t i = 0; rc && q && i < n; i++) { /* opp_agg_free: again, harmless */
        if (qs[i].ct)
            opp_calltree_free(qs[i].ct);
        if (qs[i].agg)
            opp_agg_free(qs[i].agg);
    }
    for (size_t i = 0; none && i < n; i++) /* a question with neither: its rows */
        opp_agg_free(&none[i]);
    free(q);
    free(none);
    return rc;
}

int opp_table_stream_calltree(struct opp_table_stream *s, const struct opp_agg_opts *o,
                              struct opp_calltree *ct, char *err, size_t errlen)
{
    const struct opp_table_q q = {.o = o, .ct = ct};
    return opp_table_stream_ask(s, &q, 1, err, errlen);
}

int opp_table_stream_codetree(struct opp_table_stream *s, struct opp_codetree *t, char *err,
                              size_t errlen)
{
    memset(t, 0, sizeof *t);
    struct opp_agg none;
    const struct opp_agg_opts all = {0};
    struct tq q = {.o = &all, .nacc = 1, .out = &none, .code = t};
    return read_calls(s, &q, 1, err, errlen);
}

/* The ProfilerStep#N calls, as a read finds them: those folded into a
 * same-named parent forgotten. */
struct psteps {
    struct opp_table_stream *s;
    struct opp_pstep *v;
    uint32_t *thread, *seq;
    size_t n, cap, tcap, scap;
};

static void steps_begin(void *ctx)
{
    ((struct psteps *)ctx)->n = 0;
}

static int step_call(void *ctx, const struct opp_pass_call *x)
{
    struct psteps *p = ctx;
    if (x->folded != OPP_PASS_NONE)
        for (size_t i = p->n; i-- > 0;)
            if (p->thread[i] == x->thread && p->seq[i] == x->folded) {
                p->n--;
                memmove(&p->v[i], &p->v[i + 1], (p->n - i) * sizeof *p->v);
                memmove(&p->thread[i], &p->thread[i + 1], (p->n - i) * sizeof *p->thread);
                memmove(&p->seq[i], &p->seq[i + 1], (p->n - i) * sizeof *p->seq);
                break;
            }
    uint64_t num;
    if (!opp_profiler_step_number(opp_model_str(p->s->m, x->name), &num))
        return 0;
    if (opp_loader_grow((void **)&p->v, &p->cap, p->n + 1, sizeof *p->v) ||
        opp_loader_grow((void **)&p->thread, &p->tcap, p->n + 1, sizeof *p->thread) ||
        opp_loader_grow((void **)&p->seq, &p->scap, p->n + 1, sizeof *p->seq))
        return -ENOMEM;
    p->v[p->n] = (struct opp_pstep){num, x->begin, x->end};
    p->thread[p->n] = x->thread;
    p->seq[p->n++] = x->seq;
    return 0;
}

int opp_table_stream_windows(struct opp_table_stream *s, struct opp_window **w, size_t *nw,
                             char *err, size_t errlen)
{
    struct psteps p = {.s = s};
    const struct opp_pass_consumer c = {.ctx = &p, .begin = steps_begin, .call = step_call};
    int rc = opp_pass_run(s->pass, &c, err, errlen);
    if (!rc && opp_profiler_windows_of(p.v, p.n, w, nw))
        rc = opp_err_oom(err, errlen);
    free(p.v);
    free(p.thread);
    free(p.seq);
    return rc;
}

void opp_table_stream_free(struct opp_table_stream *s)
{
    if (!s)
        return;
    opp_tstream_unjoin(s);
    free(s->calls);
    free(s);
}
