/* Memory over time as a full trace is read, a consumer of the pass
 * (mem_stream.h). */
#include "analysis/mem_stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/extsort.h"
#include "analysis/loader.h"
#include "analysis/mem_records.h"
#include "analysis/pass.h"
#include "gpu.h"
#include "ops.h"

#define CPU_SORT_MEM (8u << 20) /* bytes the sort of CPU memory calls keeps in memory */
#define NONE UINT32_MAX

/* A device allocation the join gave a call: the call's place, its
 * series (index in gpu.memseries), and once that call has come, its name
 * and the next allocation whose operator is not known yet. */
struct dalloc {
    uint64_t at;
    int64_t bytes;
    uint32_t series, name, next;
};

/* What the join keeps of a record: a device allocation's series and
 * bytes. */
struct dop {
    int64_t bytes;
    uint32_t series;
};

/* Allocations charged to an operator in a series (NONE: the CPU's). */
struct tkey {
    uint32_t series, name;
};
struct tent {
    struct tkey k;
    struct opp_memtop t;
    UT_hash_handle hh;
};

/* A call handed over whose parent has not come: its CPU allocation's
 * bytes (a MEMORY call's), and the device allocations under it whose
 * operator is not known yet (a list through dalloc.next). */
struct sent {
    int64_t cpu;
    uint32_t seq, head, tail;
};

struct sthread {
    struct sent *e; /* e[base..n): as the pass's stack */
    size_t base, n, cap;
};

struct opp_mem_stream {
    struct opp_pass *pass;
    struct opp_model *m;
    struct opp_extsort *cmem; /* CPU memory calls by time (opp_mrec_cmp_time) */
    struct opp_memline cpu;   /* its series' figures (npts 0: none) */
    struct dalloc *dal;       /* by at */
    size_t ndal, dal_cap;
    struct tent *tmap;
    struct opp_memtop **tops; /* by series (device series, then the CPU's) */
    size_t *ntops;
    struct sthread *th;
    int have_tops, failed;
};

static int fail(struct opp_mem_stream *s, int rc)
{
    if (!s->failed)
        s->failed = rc;
    return rc;
}

struct opp_mem_stream *opp_mem_stream_over(struct opp_pass *p, char *err, size_t errlen)
{
    struct opp_mem_stream *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->pass = p;
    s->m = opp_pass_model(p);
    s->cpu.cpu = 1;
    return s;
}

const struct opp_model *opp_mem_stream_model(const struct opp_mem_stream *s)
{
    return s->m;
}

/* ---- the first read: the CPU memory calls, the device allocations
 * joined to their calls ---- */

static void cpu_begin(void *ctx)
{
    struct opp_mem_stream *s = ctx;
    opp_extsort_free(s->cmem); /* an earlier read's (the pass reads again) */
    if (!(s->cmem = opp_extsort_new(sizeof(struct opp_mrec), opp_mrec_cmp_time, CPU_SORT_MEM)))
        fail(s, -ENOMEM);
}

static int cpu_call(void *ctx, const struct opp_pass_call *x)
{
    struct opp_mem_stream *s = ctx;
    struct opp_mrec r;
    if (s->failed)
        return s->failed;
    return opp_mrec_of_call(s->m, x, &r) ? fail(s, opp_extsort_add(s->cmem, &r)) : 0;
}

/* The series of device d (index in gpu.memseries). */
static uint32_t series_of(const struct opp_model *m, uint32_t d)
{
    return (uint32_t)OPP_PARTITION_POINT(m->gpu.nmemseries, k, m->gpu.memseries[k].device < d);
}

static int keep_alloc(void *ctx, uint32_t pi, const struct opp_gpu_rec *r, void *op)
{
    struct opp_mem_stream *s = ctx;
    (void)pi;
    if (r->type != OPP_GPU_MEMORY || r->f[OPP_GF_M_OP] != OPP_GPU_MEM_ALLOC)
        return 1;
    uint64_t b = r->f[OPP_GF_M_BYTES];
    uint32_t device = opp_clamp_u32(r->f[OPP_GF_DEVICE]);
    struct dop d = {.bytes = b > INT64_MAX ? INT64_MAX : (int64_t)b,
                    .series = series_of(s->m, device)};
    if (d.series == s->m->gpu.nmemseries || s->m->gpu.memseries[d.series].device != device)
        return 1; /* never: the first read made a series of every device's records */
    memcpy(op, &d, sizeof d);
    return 0;
}

static void owned_alloc(void *ctx, const struct opp_gpu_call *c, const void *op)
{
    struct opp_mem_stream *s = ctx;
    struct dop d;
    memcpy(&d, op, sizeof d);
    if (!c || s->failed) /* an allocation of no call is charged to none */
        return;
    if (opp_loader_grow((void **)&s->dal, &s->dal_cap, s->ndal + 1, sizeof *s->dal)) {
        fail(s, -ENOMEM);
        return;
    }
    s->dal[s->ndal++] = (struct dalloc){.at = c->at, .bytes = d.bytes, .series = d.series};
}

static int cmp_at(const void *pa, const void *pb)
{
    const struct dalloc *a = pa, *b = pb;
    OPP_SORT_BY(a->at, b->at);
    return 0;
}

/* ---- the second read: each allocation charged to its operator ---- */

static int top_add(struct opp_mem_stream *s, uint32_t series, uint32_t name, int64_t bytes)
{
    struct tkey k = {series, name};
    struct tent *e;
    HASH_FIND(hh, s->tmap, &k, sizeof k, e);
    if (!e) {
        if (!(e = calloc(1, sizeof *e)))
            return fail(s, -ENOMEM);
        e->k = k;
        e->t.name = name;
        if (OPP_HASH_ADD(s->tmap, k, sizeof k, e)) {
            free(e);
            return fail(s, -ENOMEM);
        }
    }
    e->t.bytes = opp_add_sat(e->t.bytes, bytes);
    e->t.allocs++;
    return 0;
}

/* The device allocations of list head charged to name (NONE: each to
 * its own call's). */
static int charge(struct opp_mem_stream *s, uint32_t head, uint32_t name)
{
    int rc = 0;
    for (uint32_t k = head; k != NONE && !rc; k = s->dal[k].next)
        rc = top_add(s, s->dal[k].series, name != NONE ? name : s->dal[k].name, s->dal[k].bytes);
    return rc;
}

static void tops_begin(void *ctx)
{
    struct opp_mem_stream *s = ctx;
    OPP_HASH_FREE(s->tmap); /* an earlier read's (the pass reads again) */
    for (size_t i = 0; i < s->m->nthreads; i++)
        s->th[i].base = s->th[i].n = 0;
}

static int tops_call(void *ctx, const struct opp_pass_call *x)
{
    struct opp_mem_stream *s = ctx;
    if (s->failed)
        return s->failed;
    struct sthread *t = &s->th[x->thread];
    if (x->nkids > t->n - t->base)
        return -EPROTO; /* the pass hands over each child before its parent */
    struct sent e = {.seq = x->seq, .head = NONE, .tail = NONE};
    struct opp_mrec r;
    if (opp_mrec_of_call(s->m, x, &r) && r.op == OPP_MEM_ALLOC)
        e.cpu = r.bytes;
    size_t k = OPP_PARTITION_POINT(s->ndal, i, s->dal[i].at < x->at);
    for (; k < s->ndal && s->dal[k].at == x->at; k++) { /* its own */
        s->dal[k].name = x->name;
        s->dal[k].next = NONE;
        if (e.tail != NONE)
            s->dal[e.tail].next = (uint32_t)k;
        else
            e.head = (uint32_t)k;
        e.tail = (uint32_t)k;
    }
    for (uint32_t i = 0; i < x->nkids; i++) {
        const struct sent *c = &t->e[t->n - x->nkids + i];
        if (c->cpu > 0 && top_add(s, NONE, x->name, c->cpu))
            return s->failed;
        if (c->head == NONE)
            continue;
        if (e.tail != NONE)
            s->dal[e.tail].next = c->head;
        else
            e.head = c->head;
        e.tail = c->tail;
    }
    t->n -= x->nkids;
    if (opp_kind_base(x->kind) != OPP_OP_CUDA_API) {
        if (charge(s, e.head, x->name))
            return s->failed;
        e.head = e.tail = NONE;
    }
    if (opp_loader_grow((void **)&t->e, &t->cap, t->n + 1, sizeof *t->e))
        return fail(s, -ENOMEM);
    t->e[t->n++] = e;
    return 0;
}

static int tops_top(void *ctx, const struct opp_pass_call *x)
{
    struct opp_mem_stream *s = ctx;
    struct sthread *t = &s->th[x->thread];
    const struct sent *e = OPP_PASS_STACK_TAKE(t->e, t->base, t->n, x->seq);
    if (!e)
        return -EPROTO;
    if ((e->cpu > 0 && top_add(s, NONE, x->name, e->cpu)) || charge(s, e->head, NONE))
        return s->failed;
    opp_pass_stack_settled(t->e, sizeof *t->e, &t->base, &t->n);
    return 0;
}

static int cmp_top(const void *a, const void *b)
{
    const struct opp_memtop *x = a, *y = b;
    OPP_SORT_BY(y->bytes, x->bytes);
    OPP_SORT_BY(x->name, y->name);
    return 0;
}

/* The operators of each series from the map, most bytes first. */
static void tops_free(struct opp_mem_stream *s);
static int tops_sorted(struct opp_mem_stream *s)
{
    tops_free(s);
    size_t n = s->m->gpu.nmemseries + 1;
    if (!(s->tops = calloc(n, sizeof *s->tops)) || !(s->ntops = calloc(n, sizeof *s->ntops)))
        return -ENOMEM;
    for (const struct tent *e = s->tmap; e; e = e->hh.next)
        s->ntops[e->k.series == NONE ? n - 1 : e->k.series]++;
    for (size_t i = 0; i < n; i++)
        if (s->ntops[i] && !(s->tops[i] = malloc(s->ntops[i] * sizeof *s->tops[i])))
            return -ENOMEM;
    memset(s->ntops, 0, n * sizeof *s->ntops);
    for (const struct tent *e = s->tmap; e; e = e->hh.next) {
        size_t i = e->k.series == NONE ? n - 1 : e->k.series;
        s->tops[i][s->ntops[i]++] = e->t;
    }
    for (size_t i = 0; i < n; i++)
        if (s->ntops[i])
            qsort(s->tops[i], s->ntops[i], sizeof *s->tops[i], cmp_top);
    OPP_HASH_FREE(s->tmap);
    return 0;
}

/* ---- the CPU's series walked: the calls in time order, sized ---- */

static int cpu_walk(struct opp_mem_stream *s, int (*each)(void *ctx, uint64_t t, int64_t b),
                    void *ctx)
{
    struct opp_live live = {0};
    int64_t now = 0;
    int rc = opp_extsort_rewind(s->cmem);
    const struct opp_mrec *c;
    while (!rc && (c = opp_extsort_next(s->cmem))) {
        struct opp_mrec r = *c;
        if (!(rc = opp_mrec_size(&live, &r, OPP_MEM_ALLOC, OPP_MEM_FREE))) {
            now = opp_add_sat(now, r.bytes);
            rc = each(ctx, r.time, now);
        }
    }
    opp_live_free(&live);
    return rc ? rc : opp_extsort_error(s->cmem);
}

/* The CPU series' figures, point by point. */
static int cpu_figures(void *ctx, uint64_t t, int64_t b)
{
    struct opp_memline *l = ctx;
    if (!l->npts++)
        l->first_ns = t;
    l->last_ns = t;
    if (b > l->peak) {
        l->peak = b;
        l->peak_ns = t;
    }
    l->final = b;
    return 0;
}

/* What a read said, in err (opp_pass_said). */
static int said(struct opp_mem_stream *s, int rc, char *err, size_t errlen)
{
    return opp_pass_said(rc, s->failed, err, errlen);
}

int opp_mem_stream_read(struct opp_mem_stream *s, int cpu, int tops, char *err, size_t errlen)
{
    int rc = 0;
    s->failed = 0;
    cpu = cpu && opp_mrec_any_calls(s->m); /* else no point: no read */
    if (cpu || (tops && s->m->gpu.nmem)) {
        const struct opp_pass_consumer first = {.ctx = s,
                                                .begin = cpu ? cpu_begin : NULL,
                                                .call = cpu ? cpu_call : NULL,
                                                .op_bytes = sizeof(struct dop),
                                                .op = tops && s->m->gpu.nmem ? keep_alloc : NULL,
                                                .owned = tops ? owned_alloc : NULL};
        rc = said(s, opp_pass_run(s->pass, &first, err, errlen), err, errlen);
    }
    if (!rc && cpu) {
        s->cpu = (struct opp_memline){.cpu = 1};
        int wrc = opp_extsort_done(s->cmem);
        if (!wrc)
            wrc = cpu_walk(s, cpu_figures, &s->cpu);
        if (wrc)
            rc = said(s, fail(s, wrc), err, errlen);
    }
    if (!rc && tops) {
        if (s->ndal)
            qsort(s->dal, s->ndal, sizeof *s->dal, cmp_at);
        if (!(s->th = calloc(s->m->nthreads ? s->m->nthreads : 1, sizeof *s->th)))
            return opp_err_oom(err, errlen);
        const struct opp_pass_consumer second = {
            .ctx = s, .begin = tops_begin, .call = tops_call, .top = tops_top};
        rc = said(s, opp_pass_run(s->pass, &second, err, errlen), err, errlen);
        for (size_t i = 0; i < s->m->nthreads; i++)
            free(s->th[i].e);
        free(s->th);
        s->th = NULL;
        free(s->dal);
        s->dal = NULL;
        s->ndal = s->dal_cap = 0;
        if (!rc && tops_sorted(s))
            rc = opp_err_oom(err, errlen);
        s->have_tops = !rc;
    }
    return rc;
}

int opp_mem_stream_find(const struct opp_mem_stream *s, int64_t which, struct opp_memline *l)
{
    const struct opp_gpu *g = &s->m->gpu;
    size_t n = g->nmemseries;
    if (which == OPP_MEM_CPU || (which == OPP_MEM_FIRST && !n)) {
        *l = s->cpu;
        l->tops = s->have_tops ? s->tops[n] : NULL;
        l->ntops = s->have_tops ? s->ntops[n] : 0;
        return l->npts != 0;
    }
    size_t k = which < 0 ? 0 : OPP_PARTITION_POINT(n, i, (int64_t)g->memseries[i].device < which);
    if (k == n || (which >= 0 && g->memseries[k].device != which))
        return 0;
    const struct opp_gpu_memseries *gs = &g->memseries[k];
    *l = (struct opp_memline){.device = gs->device,
                              .npts = gs->npts,
                              .first_ns = gs->npts ? gs->pts[0].time_ns : 0,
                              .last_ns = gs->npts ? gs->pts[gs->npts - 1].time_ns : 0,
                              .peak = gs->peak,
                              .final = gs->final,
                              .tops = s->have_tops ? s->tops[k] : NULL,
                              .ntops = s->have_tops ? s->ntops[k] : 0};
    for (size_t i = 0; i < gs->npts; i++)
        if (gs->pts[i].bytes == gs->peak) {
            l->peak_ns = gs->pts[i].time_ns;
            break;
        }
    return 1;
}

int opp_mem_stream_walk(struct opp_mem_stream *s, const struct opp_memline *l,
                        int (*each)(void *ctx, uint64_t time_ns, int64_t bytes), void *ctx)
{
    if (l->cpu)
        return l->npts ? cpu_walk(s, each, ctx) : 0;
    const struct opp_gpu *g = &s->m->gpu;
    size_t k = series_of(s->m, l->device);
    if (k == g->nmemseries)
        return 0;
    int rc = 0;
    for (size_t i = 0; i < g->memseries[k].npts && !rc; i++)
        rc = each(ctx, g->memseries[k].pts[i].time_ns, g->memseries[k].pts[i].bytes);
    return rc;
}

/* The operators found, forgotten. */
static void tops_free(struct opp_mem_stream *s)
{
    for (size_t i = 0; s->tops && i <= s->m->gpu.nmemseries; i++)
        free(s->tops[i]);
    free(s->tops);
    free(s->ntops);
    s->tops = NULL;
    s->ntops = NULL;
    s->have_tops = 0;
}

void opp_mem_stream_free(struct opp_mem_stream *s)
{
    if (!s)
        return;
    tops_free(s);
    opp_extsort_free(s->cmem);
    OPP_HASH_FREE(s->tmap);
    free(s->dal);
    free(s);
}
