/* The table added up as a full trace is read, a consumer of the pass
 * (table_stream.h). */
#ifndef _GNU_SOURCE /* qsort_r */
#define _GNU_SOURCE
#endif
#include "analysis/table_stream.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/codestack_tree.h"
#include "analysis/extsort.h"
#include "analysis/loader.h"
#include "analysis/mem_records.h"
#include "analysis/pass.h"
#include "analysis/step_times.h"
#include "gpu.h"
#include "ops.h"

#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(elt) (hash_oom = 1)
#include <uthash.h>

/* A GPU record as the join keeps it: a kernel, copy or set (its row), or
 * device memory (its bytes, sized once every record is in). */
struct gop {
    uint64_t dur, bytes, time, idx, addr;
    uint32_t type, name, proc, op;
};

/* A kernel, copy or set as the join leaves it: its owner's thread
 * (OPP_GPU_NONE: no call), kept beyond memory (sorted by its place among
 * the records, extsort.h) for each question's CUDA rows. */
struct gown {
    uint64_t idx, time, dur, bytes;
    uint32_t name, type, proc, thread;
};

/* The kernels, copies and sets the filters select, by name, type and
 * process: the table's CUDA rows, added to each read of the calls. */
struct gkey {
    uint32_t name, type, proc, acc;
};
struct grow_ {
    struct gkey k;
    uint64_t dur, bytes, calls;
    UT_hash_handle hh;
};

/* GPU time or device memory of a call (at: its place among the calls),
 * sorted by that place beyond memory (extsort.h): the second read takes
 * them as it hands the calls over, most in that order. */
struct own {
    uint64_t at, cuda;
    int64_t mem, cpu; /* device memory; a CPU memory call's bytes */
};

#define OWN_SORT_MEM (8u << 20) /* bytes the sort keeps in memory */

/* Call paths merged (--tree): a call's subtree (node 0 the call) until
 * its parent comes, and the whole tree's (roots' parent OPP_CT_ROOT),
 * nodes keyed by (parent node, name) as callpath_tree.c keys them. */
struct pnode {
    uint32_t parent, name;
    uint64_t calls, self, total, self_cuda, cuda;
};
struct pent {
    uint64_t key;
    uint32_t node;
    UT_hash_handle hh;
};
struct ptree {
    struct pnode *n;
    size_t nn, cap;
    struct pent *map;
};

/* --group-by-stack: calls whose key waits on the names of the calls
 * around them, which come after them, added up by what their row's
 * numbers take (the row without the stack, kind, status), the aggregate
 * they go to and the names so far, innermost first. */
struct skey {
    uint64_t row;
    int64_t status;
    uint32_t kind, acc, nstack;
    uint32_t stack[OPP_STACK_MAX];
};
struct skeep {
    struct skey k; /* zeroed before it is filled: hashed whole */
    struct opp_agg_sum sum;
    UT_hash_handle hh;
};

/* A call handed over whose parent has not arrived yet. */
struct ent {
    uint64_t self_ns, dur;
    struct ptree *pt; /* --tree: its subtree; NULL: a call with no children */
    struct skeep *sk; /* --group-by-stack: the calls under it whose key waits */
    uint64_t begin;   /* code frames: its place in tree order, its stack */
    uint32_t stack;
    uint16_t depth;
    uint32_t acc;     /* the aggregate it goes to */
    uint64_t span;    /* end - begin, as callpath_tree.c adds it */
    uint32_t name;
    struct opp_agg_vals v;
    struct opp_event_gpu gpu;
    /* CPU memory: a call's self and total; a memory call's bytes for the
     * operator around it (self) and what passes through it (total) */
    int64_t self, total;
    uint32_t seq;
    uint8_t sel, mem;
    uint8_t keyed; /* its row's key is whole (not grouped by stack, or by its Python frames) */
};

struct tthread {
    struct ent *e; /* e[base..n): as the pass's stack */
    size_t base, n, cap;
};

/* One question a read answers (several in one read: opp_table_stream_ask). */
struct tq {
    const struct opp_agg_opts *o;
    /* the aggregates made at once (o[k] into out[k]: their processes or
     * threads apart), and which one each thread's calls and each
     * process's ops of no call go to (-1: none) */
    size_t nacc;
    struct opp_agg_acc **acc;
    struct opp_agg *out;
    int32_t *thread_acc, *proc_acc;
    struct grow_ *gpu;  /* the CUDA rows */
    struct ptree *tree; /* --tree: the call paths; NULL: the table */
    struct opp_codetree *code;     /* code frames: the tree; NULL: the table */
    struct opp_codetree_acc *cacc; /* and what adds it up */
    struct tthread *th;            /* by thread: its calls whose parent is still to come */
    uint8_t *tried;                /* --match: names tried, by string id */
    size_t ntried;
    int matched; /* some call's or GPU op's name matched */
};

struct opp_table_stream {
    struct opp_pass *pass;
    struct opp_model *m;
    struct tq *q; /* the read's questions */
    size_t nq;
    uint64_t *calls; /* by thread: its calls, those folded into a parent apart */
    uint32_t *dem, ndem;
    uint64_t nrec;
    /* the join, made by the first question's first read and kept for the
     * others: each owning call's GPU time and memory (owns), each kernel,
     * copy and set with its owner (gowns) */
    int joined;
    struct opp_extsort *owns;  /* struct own by at */
    struct opp_extsort *gowns; /* struct gown by idx */
    struct own cur;           /* the next of owns, if have_cur */
    int have_cur, reads;
    uint64_t next_at;  /* the place after the last call taken in order */
    struct own *stash; /* owns' records passed before their calls came (by at) */
    size_t nstash, stash_cap;
    struct opp_mrec *gmem; /* device memory records */
    size_t ngmem, gmem_cap;
    struct opp_extsort *cmem; /* CPU memory calls by time (opp_mrec_cmp_time) */
    int matched;              /* the last read's (of one question): its matched */
    int cpu_mem; /* some CPU MEMORY call */
    int failed;  /* -errno */
};

static int fail(struct opp_table_stream *s, int rc)
{
    if (!s->failed)
        s->failed = rc;
    return rc;
}

static int grow(void **arr, size_t *cap, size_t need, size_t sz)
{
    return opp_loader_grow(arr, cap, need, sz) ? -ENOMEM : 0;
}

struct opp_table_stream *opp_table_stream_open(const char *const *paths, size_t npaths,
                                               enum opp_stream_refused *why, char *err,
                                               size_t errlen)
{
    struct opp_table_stream *s = calloc(1, sizeof *s);
    if (!s) {
        *why = OPP_STREAM_ERROR;
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (!(s->pass = opp_pass_open(paths, npaths, why, err, errlen))) {
        free(s);
        return NULL;
    }
    s->m = opp_pass_model(s->pass);
    return s;
}

const struct opp_model *opp_table_stream_model(const struct opp_table_stream *s)
{
    return s->m;
}

struct opp_pass *opp_table_stream_pass(struct opp_table_stream *s)
{
    return s->pass;
}

/* Whether time t is in o's --from/--to window (aggregate.h). */
static int in_window(const struct opp_table_stream *s, const struct opp_agg_opts *o, uint64_t t)
{
    if (!o->window)
        return 1;
    uint64_t rel = t - opp_pass_first_ns(s->pass); /* t >= first */
    return rel >= o->from_ns && rel < o->to_ns;
}

/* Name id of a call or GPU op tried against question q's --match
 * (opp_table_stream_matched). */
static void try_name(struct opp_table_stream *s, struct tq *q, uint32_t id)
{
    if (!q->o->match || q->matched || id >= s->m->nstrs)
        return;
    if (id >= q->ntried) {
        uint8_t *p = realloc(q->tried, s->m->nstrs);
        if (!p) {
            fail(s, -ENOMEM);
            return;
        }
        memset(p + q->ntried, 0, s->m->nstrs - q->ntried);
        q->tried = p;
        q->ntried = s->m->nstrs;
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

static const struct opp_func *func_of(const struct opp_model *m, const struct opp_pass_call *x)
{
    const struct opp_process *pr = &m->procs[m->threads[x->thread].proc];
    return &pr->funcs[x->fn];
}

/* The first read: the CPU memory calls. */
static void first_begin(void *ctx)
{
    struct opp_table_stream *s = ctx;
    s->cpu_mem = 0;
    opp_extsort_free(s->cmem); /* an earlier read's (the pass reads again) */
    if (!(s->cmem = opp_extsort_new(sizeof(struct opp_mrec), opp_mrec_cmp_time, OWN_SORT_MEM)))
        fail(s, -ENOMEM);
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
    return fail(s, opp_extsort_add(s->cmem, &r));
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
        if (!grow((void **)&s->gmem, &s->gmem_cap, s->ngmem + 1, sizeof *s->gmem))
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
            fail(s, -ENOMEM);
        return;
    }
    /* its call's GPU time whatever the filters: the call is filtered, as
     * opp_aggregate filters it */
    int rc = c ? opp_extsort_add(s->owns, &(struct own){.at = c->at, .cuda = g.dur}) : 0;
    if (!rc)
        rc = opp_extsort_add(s->gowns, &(struct gown){.idx = g.idx,
                                                      .time = g.time,
                                                      .dur = g.dur,
                                                      .bytes = g.bytes,
                                                      .name = g.name,
                                                      .type = g.type,
                                                      .proc = g.proc,
                                                      .thread = c ? c->thread : OPP_GPU_NONE});
    if (rc)
        fail(s, rc);
}

/* A kernel, copy or set of the join in question q's CUDA row when its
 * filters select it. 0 or -ENOMEM. */
static int gpu_row(struct opp_table_stream *s, struct tq *q, const struct gown *g)
{
    try_name(s, q, g->name);
    int32_t ka = g->thread != OPP_GPU_NONE ? q->thread_acc[g->thread] : q->proc_acc[g->proc];
    if (ka < 0 || !in_window(s, &q->o[ka], g->time))
        return 0;
    struct gkey k = {g->name, g->type, g->proc, (uint32_t)ka};
    struct grow_ *r;
    HASH_FIND(hh, q->gpu, &k, sizeof k, r);
    if (!r) {
        int hash_oom = 0;
        if (!(r = calloc(1, sizeof *r)))
            return -ENOMEM;
        r->k = k;
        HASH_ADD(hh, q->gpu, k, sizeof k, r);
        if (hash_oom) {
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

/* The node of name under parent in t, made on first sight: its index,
 * or -1 when out of memory. */
static int64_t ptree_at(struct ptree *t, uint32_t parent, uint32_t name)
{
    uint64_t key = (uint64_t)parent << 32 | name;
    struct pent *e;
    HASH_FIND(hh, t->map, &key, sizeof key, e);
    if (e)
        return e->node;
    if (grow((void **)&t->n, &t->cap, t->nn + 1, sizeof *t->n) || !(e = malloc(sizeof *e)))
        return -1;
    int hash_oom = 0;
    e->key = key;
    e->node = (uint32_t)t->nn;
    HASH_ADD(hh, t->map, key, sizeof e->key, e);
    if (hash_oom) {
        free(e);
        return -1;
    }
    t->n[t->nn] = (struct pnode){.parent = parent, .name = name};
    return (int64_t)t->nn++;
}

static void pnode_add(struct pnode *n, const struct pnode *x)
{
    n->calls += x->calls;
    n->self += x->self;
    n->total += x->total;
    n->self_cuda += x->self_cuda;
    n->cuda += x->cuda;
}

static void ptree_free(struct ptree *t)
{
    if (!t)
        return;
    OPP_HASH_FREE(t->map);
    free(t->n);
    free(t);
}

/* Call e as a node (its own numbers). */
static struct pnode ent_node(const struct ent *e)
{
    return (struct pnode){.parent = OPP_CT_ROOT,
                          .name = e->name,
                          .calls = 1,
                          .self = e->self_ns,
                          .total = e->span,
                          .self_cuda = e->gpu.self_cuda_ns,
                          .cuda = e->gpu.cuda_ns};
}

/* Call e's subtree merged into t under node at (OPP_CT_ROOT: as a root);
 * folded: e is gone, its children are at's. 0 or -ENOMEM. */
static int ptree_merge(struct ptree *t, uint32_t at, const struct ent *e, int folded)
{
    if (!e->pt) {
        if (folded)
            return 0;
        struct pnode x = ent_node(e);
        int64_t id = ptree_at(t, at, e->name);
        if (id < 0)
            return -ENOMEM;
        pnode_add(&t->n[id], &x);
        return 0;
    }
    const struct ptree *f = e->pt;
    uint32_t *map = malloc(f->nn * sizeof *map);
    if (!map)
        return -ENOMEM;
    for (size_t i = 0; i < f->nn; i++) {
        if (!i && folded) {
            map[0] = at;
            continue;
        }
        int64_t id = ptree_at(t, i ? map[f->n[i].parent] : at, f->n[i].name);
        if (id < 0) {
            free(map);
            return -ENOMEM;
        }
        pnode_add(&t->n[id], &f->n[i]);
        map[i] = (uint32_t)id;
    }
    free(map);
    return 0;
}

/* Call e's subtree: it and its children c[0..n) (folded: that one's
 * seq). 0 or -ENOMEM. */
static int subtree(struct ent *e, const struct ent *c, uint32_t n, uint32_t folded)
{
    if (!n)
        return 0;
    struct ptree *t = calloc(1, sizeof *t);
    struct pnode x = ent_node(e);
    int64_t root = t ? ptree_at(t, OPP_CT_ROOT, e->name) : -1;
    if (root < 0) {
        ptree_free(t);
        return -ENOMEM;
    }
    pnode_add(&t->n[root], &x);
    for (uint32_t k = 0; k < n; k++)
        if (ptree_merge(t, (uint32_t)root, &c[k], c[k].seq == folded)) {
            ptree_free(t);
            return -ENOMEM;
        }
    e->pt = t;
    return 0;
}

/* What the calls of t's stack keep: their subtrees, their calls waiting
 * on a key. */
static void drop_kept(struct tthread *t)
{
    for (size_t i = t->base; i < t->n; i++) {
        ptree_free(t->e[i].pt);
        t->e[i].pt = NULL;
        OPP_HASH_FREE(t->e[i].sk);
    }
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

/* Question q's reading starts again: what an earlier read kept (the
 * pass reads again) gone, its CUDA rows in its aggregates. */
static void q_begin(struct opp_table_stream *s, struct tq *q)
{
    for (size_t i = 0; i < s->m->nthreads; i++) {
        drop_kept(&q->th[i]);
        q->th[i].base = q->th[i].n = 0;
    }
    if (q->tree) {
        OPP_HASH_FREE(q->tree->map);
        q->tree->nn = 0;
        return;
    }
    if (q->code) {
        opp_codetree_acc_drop(q->cacc);
        if (!(q->cacc = opp_codetree_acc_new(q->code)))
            fail(s, -ENOMEM);
        return;
    }
    for (size_t k = 0; k < q->nacc; k++) {
        opp_agg_acc_drop(q->acc[k]);
        if (!(q->acc[k] = opp_agg_acc_new(s->m, &q->o[k], &q->out[k]))) {
            fail(s, -ENOMEM);
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
            fail(s, -ENOMEM);
            return;
        }
    }
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
        fail(s, -ESTALE);
    } else if (s->owns) {
        s->next_at = 0;
        s->nstash = 0;
        int rc = opp_extsort_rewind(s->owns);
        fail(s, rc ? rc : own_next(s));
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
    int hash_oom = 0;
    HASH_ADD(hh, at->sk, k, sizeof k->k, k);
    if (hash_oom) {
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
        .calls = 1, .self_ns = e->self_ns, .dur_ns = e->dur, .gpu = &e->gpu, .cpumem = &cm};
    if (e->keyed || !parent || e->v.row == OPP_AGG_NO_ROW)
        return opp_agg_acc_add(q->acc[e->acc], proc, &e->v, &p);
    struct skeep *k = calloc(1, sizeof *k);
    if (!k)
        return -ENOMEM;
    k->k = (struct skey){.row = e->v.row, .status = e->v.status, .kind = e->v.kind, .acc = e->acc};
    opp_agg_sum_add(&k->sum, &e->v, &p);
    return skeep_up(q, proc, k, parent, 0);
}

/* Call at's GPU time and device memory into o (zero: none). The calls
 * come in the order of at but for those a pass keeps to its read's end
 * (a process died inside them, a thread kept whole): the records passed
 * before those come are kept aside. 0 or -errno. */
static int own_take(struct opp_table_stream *s, uint64_t at, struct own *o)
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
                if (grow((void **)&s->stash, &s->stash_cap, s->nstash + 1, sizeof *s->stash))
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

/* Call x of process index proc as question q takes it (e0: its own
 * numbers, its GPU work and CPU memory): the children on q's stack of its
 * thread added up into it and to their rows, then it on that stack.
 * 0 or -errno. */
static int q_call(struct opp_table_stream *s, struct tq *q, const struct opp_pass_call *x,
                  const struct ent *e0, const struct opp_func *f, uint32_t proc)
{
    struct tthread *t = &q->th[x->thread];
    struct ent e = *e0;
    if (x->nkids > t->n - t->base)
        return -EPROTO; /* the pass hands over each child before its parent */
    for (uint32_t k = 0; k < x->nkids; k++) {
        struct ent *c = &t->e[t->n - x->nkids + k];
        e.gpu.cuda_ns += c->gpu.cuda_ns;
        e.gpu.mem = opp_add_sat(e.gpu.mem, c->gpu.mem);
        if (c->mem) { /* its bytes (and those of memory inside it) are this call's own */
            e.self = opp_add_sat(e.self, c->self);
            e.total = opp_add_sat(e.total, c->total);
        } else if (c->seq == x->folded) { /* its children are this call's */
            e.self = opp_add_sat(e.self, c->self);
            e.total = opp_add_sat(e.total, c->total - c->self);
        } else {
            e.total = opp_add_sat(e.total, c->total);
        }
        int rc = c->seq == x->folded || q->tree ? 0
                 : q->code                      ? code_add(s, q, x->thread, proc, c)
                                                : add(q, proc, c, &e);
        if (!rc && c->sk)
            rc = skeep_lift(q, proc, c, &e, c->seq == x->folded);
        if (rc) {
            OPP_HASH_FREE(e.sk);
            return rc;
        }
    }
    if (q->tree) {
        int rc = subtree(&e, x->nkids ? &t->e[t->n - x->nkids] : NULL, x->nkids, x->folded);
        for (uint32_t k = 0; k < x->nkids; k++)
            ptree_free(t->e[t->n - x->nkids + k].pt);
        t->n -= x->nkids;
        if (rc)
            return rc;
    } else {
        t->n -= x->nkids;
    }
    if (!e.mem)
        e.total = opp_add_sat(e.total, e.self);
    try_name(s, q, x->name);
    if (s->failed)
        return s->failed;
    int32_t ka = q->thread_acc[x->thread];
    if (ka >= 0 && !in_window(s, &q->o[ka], x->begin))
        ka = -1;
    if (ka >= 0 && !q->tree && !q->code) {
        e.acc = (uint32_t)ka;
        uint32_t frames[OPP_STACK_MAX];
        struct opp_agg_call c = {
            .name = x->name, .f = f, .args = x->args, .nargs = x->nargs, .stack = frames};
        c.nstack = opp_agg_code_frames(s->m, &q->o[ka], proc, x->stack, frames);
        e.keyed = c.nstack || !opp_agg_stack_depth(&q->o[ka]);
        int rc = opp_agg_acc_row(q->acc[ka], &c, &e.v);
        if (rc < 0) {
            OPP_HASH_FREE(e.sk);
            return rc;
        }
        e.sel = !rc;
    }
    e.sel = e.sel || ((q->tree || q->code) && ka >= 0);
    if (grow((void **)&t->e, &t->cap, t->n + 1, sizeof *t->e)) {
        ptree_free(e.pt);
        OPP_HASH_FREE(e.sk);
        return -ENOMEM;
    }
    t->e[t->n++] = e;
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
    uint64_t dur = x->end > x->begin ? x->end - x->begin : 0;
    struct ent e = {.dur = dur,
                    .self_ns = dur > x->kids_ns ? dur - x->kids_ns : 0,
                    .span = x->end - x->begin,
                    .name = x->name,
                    .seq = x->seq,
                    .begin = x->begin,
                    .stack = x->stack,
                    .depth = x->depth,
                    .mem = (uint8_t)opp_mrec_cols(x->kind, x->args, x->nargs, &cols)};
    struct own o;
    int rc = own_take(s, x->at, &o);
    if (rc)
        return rc;
    e.gpu.self_cuda_ns = e.gpu.cuda_ns = o.cuda;
    e.gpu.self_mem = e.gpu.mem = o.mem;
    if (e.mem)
        e.self = o.cpu;
    for (size_t i = 0; i < s->nq && !rc; i++)
        rc = q_call(s, &s->q[i], x, &e, func_of(s->m, x), proc);
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
    int rc = q->tree   ? e->sel ? ptree_merge(q->tree, OPP_CT_ROOT, e, 0) : 0
             : q->code ? code_add(s, q, x->thread, proc, e)
                       : add(q, proc, e, NULL);
    if (!rc && e->sk) /* the calls under it: their stacks end here */
        rc = skeep_lift(q, proc, e, NULL, 0);
    OPP_HASH_FREE(e->sk);
    ptree_free(e->pt);
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

/* What a read said, in err: its result, or the consumer's failure. */
static int said(struct opp_table_stream *s, int rc, char *err, size_t errlen)
{
    if (s->failed == -ESTALE) { /* never: the first read kept the threads whole */
        snprintf(err, errlen, "a thread's calls came in another order than when read first");
        return 1;
    }
    return opp_pass_said(rc, s->failed, err, errlen);
}

/* The join's results (owns, gowns): the next question joins again. */
static void unjoin(struct opp_table_stream *s)
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

/* The first read, once for every question where the trace has GPU work
 * or CPU memory: the GPU work joined to the calls that own it, the CPU
 * frees sized, each owning call's share sorted by its place (owns), each
 * kernel, copy and set with its owner (gowns). 0, 1 (cannot) or -1
 * (error), err saying why. */
static int join(struct opp_table_stream *s, char *err, size_t errlen)
{
    const struct opp_stream_meta *meta = opp_pass_meta(s->pass);
    if (s->joined ||
        !(meta->gpu_ops || s->m->gpu.records || s->m->gpu.nmem || opp_mrec_any_calls(s->m)))
        return 0;
    s->nrec = 0;
    s->ndem = s->m->nstrs;
    if (!(s->dem = malloc((s->ndem ? s->ndem : 1) * sizeof *s->dem)) ||
        !(s->owns = opp_extsort_new(sizeof(struct own), cmp_own, OWN_SORT_MEM)) ||
        !(s->gowns = opp_extsort_new(sizeof(struct gown), cmp_gown, OWN_SORT_MEM))) {
        snprintf(err, errlen, "out of memory");
        unjoin(s);
        return -1;
    }
    memset(s->dem, 0xff, (s->ndem ? s->ndem : 1) * sizeof *s->dem);
    const struct opp_pass_consumer first = {.ctx = s,
                                            .begin = first_begin,
                                            .call = first_call,
                                            .op_bytes = sizeof(struct gop),
                                            .op = keep_op,
                                            .owned = owned};
    int rc = said(s, opp_pass_run(s->pass, &first, err, errlen), err, errlen);
    if (!rc) {
        s->m->gpu.unattached = opp_pass_unattached(s->pass);
        int src = settle_owned(s);
        if (src == -ENOMEM) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        } else if (src) { /* the sort's temporary file */
            opp_extsort_no_room(err, errlen, src);
            rc = 1;
        }
    }
    if (rc)
        unjoin(s);
    s->joined = !rc;
    s->failed = 0;
    return rc;
}

/* Question q set up for a read: its aggregates (out zeroed), which of
 * them each thread's calls and each process's ops of no call go to, its
 * stacks. 0 or -ENOMEM. */
static int q_open(struct opp_table_stream *s, struct tq *q)
{
    const struct opp_model *m = s->m;
    memset(q->out, 0, q->nacc * sizeof *q->out);
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
        if (frc && !rc) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
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
    s->q = q;
    s->nq = nq;
    s->failed = 0;
    int rc = !s->calls && !(s->calls = calloc(m->nthreads ? m->nthreads : 1, sizeof *s->calls))
                 ? -ENOMEM
                 : 0;
    for (size_t i = 0; i < nq && !rc; i++)
        rc = q_open(s, &q[i]);
    if (rc) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    if (!rc)
        rc = join(s, err, errlen);
    if (!rc && s->gowns && (rc = gpu_rows(s))) {
        if (rc == -ENOMEM) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        } else { /* the temporary file read back */
            opp_extsort_no_room(err, errlen, rc);
            rc = 1;
        }
    }
    s->reads = 0;
    if (!rc) {
        const struct opp_pass_consumer second = {
            .ctx = s, .begin = second_begin, .call = second_call, .top = second_top};
        rc = said(s, opp_pass_run(s->pass, &second, err, errlen), err, errlen);
    }
    forget(s);
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

/* The call paths t merged into ct (freed, whatever rc, the read's). rc,
 * or -1 (out of memory, said in err). */
static int calltree_of(struct ptree *t, struct opp_calltree *ct, int rc, char *err, size_t errlen)
{
    memset(ct, 0, sizeof *ct);
    if (!rc && t->nn && !(ct->nodes = calloc(t->nn, sizeof *ct->nodes))) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    for (size_t i = 0; !rc && i < t->nn; i++) {
        const struct pnode *n = &t->n[i];
        ct->nodes[i] = (struct opp_ct_node){
            .parent = n->parent,
            .name = n->name,
            .depth = n->parent == OPP_CT_ROOT ? 0 : ct->nodes[n->parent].depth + 1,
            .calls = n->calls,
            .self_ns = n->self,
            .total_ns = n->total,
            .self_cuda_ns = n->self_cuda,
            .cuda_total_ns = n->cuda};
    }
    if (!rc)
        ct->n = t->nn;
    ptree_free(t);
    return rc;
}

int opp_table_stream_ask(struct opp_table_stream *s, const struct opp_table_q *qs, size_t n,
                         char *err, size_t errlen)
{
    struct tq *q = calloc(n ? n : 1, sizeof *q);
    struct opp_agg *none = calloc(n ? n : 1, sizeof *none);
    int rc = q && none ? 0 : -1;
    for (size_t i = 0; i < n && !rc; i++) {
        q[i] = (struct tq){.o = qs[i].o, .nacc = 1, .out = qs[i].agg ? qs[i].agg : &none[i]};
        if (qs[i].ct && !(q[i].tree = calloc(1, sizeof *q[i].tree)))
            rc = -1;
    }
    if (rc)
        snprintf(err, errlen, "out of memory");
    else
        rc = read_calls(s, q, n, err, errlen);
    for (size_t i = 0; q && i < n; i++)
        if (qs[i].ct) {
            if (q[i].tree)
                rc = calltree_of(q[i].tree, qs[i].ct, rc, err, errlen);
            else
                memset(qs[i].ct, 0, sizeof *qs[i].ct);
        }
    for (size_t i = 0; rc && q && i < n; i++) { /* opp_agg_free: again, harmless */
        if (qs[i].ct)
            opp_calltree_free(qs[i].ct);
        if (qs[i].agg)
            opp_agg_free(qs[i].agg);
    }
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
    if (grow((void **)&p->v, &p->cap, p->n + 1, sizeof *p->v) ||
        grow((void **)&p->thread, &p->tcap, p->n + 1, sizeof *p->thread) ||
        grow((void **)&p->seq, &p->scap, p->n + 1, sizeof *p->seq))
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
    if (!rc && opp_profiler_windows_of(p.v, p.n, w, nw)) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    free(p.v);
    free(p.thread);
    free(p.seq);
    return rc;
}

int opp_table_stream_has_stacks(struct opp_table_stream *s)
{
    return opp_pass_meta(s->pass)->stacked_calls != 0;
}

uint64_t opp_table_stream_first_ns(const struct opp_table_stream *s)
{
    return opp_pass_first_ns(s->pass);
}

void opp_table_stream_free(struct opp_table_stream *s)
{
    if (!s)
        return;
    unjoin(s);
    opp_pass_free(s->pass);
    free(s->calls);
    free(s);
}
