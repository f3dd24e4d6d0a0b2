/* The tests' loaded model (loaded.h): GPU work attached to the calls that
 * caused it, each op or memory record to the CUDA API call with its
 * correlation id, else to the library call that CUPTI's external
 * correlation ties it to; then each call's GPU totals (gpu_totals.c). The
 * report joins them as it reads (gpu_join.c): this is the tests' second
 * answer, in memory. */
#include <stdlib.h>

#include "analysis/loader.h"
#include "oracle/loaded.h"
#include "ops.h"

/* An API event that carries a correlation id. */
struct corr_ent {
    uint64_t corr;
    uint32_t proc, thread, event;
    uint32_t depth;
};

static int cmp_corr(const void *pa, const void *pb)
{
    const struct corr_ent *a = pa, *b = pb;
    if (a->proc != b->proc)
        return a->proc < b->proc ? -1 : 1;
    if (a->corr != b->corr)
        return a->corr < b->corr ? -1 : 1;
    if (a->depth != b->depth) /* a runtime call before the driver calls inside it */
        return a->depth < b->depth ? -1 : 1;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    return a->event < b->event ? -1 : a->event > b->event;
}

/* The outermost API event of process pi with correlation id corr, or NULL. */
static const struct corr_ent *corr_find(const struct corr_ent *c, size_t n, uint32_t pi,
                                        uint64_t corr)
{
    size_t lo = OPP_PARTITION_POINT(n, k, c[k].proc < pi || (c[k].proc == pi && c[k].corr < corr));
    return lo < n && c[lo].proc == pi && c[lo].corr == corr ? &c[lo] : NULL;
}

/* External correlation: a library call's id (OPP_OPK_EXTID) and, from the
 * EXTCORR records, the correlation ids CUPTI gave the calls made inside it:
 * ext_map by (proc index, correlation id) -> id; ext_ev by (proc, id) ->
 * the event. */
struct ext_map {
    uint64_t corr, ext;
    uint32_t proc;
};
struct ext_ev {
    uint64_t ext;
    uint32_t proc, thread, event, depth;
};

static int cmp_ext_map(const void *pa, const void *pb)
{
    const struct ext_map *a = pa, *b = pb;
    if (a->proc != b->proc)
        return a->proc < b->proc ? -1 : 1;
    if (a->corr != b->corr)
        return a->corr < b->corr ? -1 : 1;
    return a->ext < b->ext ? -1 : a->ext > b->ext; /* of two, the lower id */
}

/* By process and id; of calls that pushed the same id (a thread's id
 * again, after its tid was reused), the outermost, then thread, then
 * event first: the one a GPU record goes to, as for correlation ids. */
static int cmp_ext_ev(const void *pa, const void *pb)
{
    const struct ext_ev *a = pa, *b = pb;
    if (a->proc != b->proc)
        return a->proc < b->proc ? -1 : 1;
    if (a->ext != b->ext)
        return a->ext < b->ext ? -1 : 1;
    if (a->depth != b->depth)
        return a->depth < b->depth ? -1 : 1;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    return a->event < b->event ? -1 : a->event > b->event;
}

struct ext_index {
    struct ext_map *map;
    struct ext_ev *ev;
    size_t nmap, nev;
};

/* 0 or -1 (out of memory); empty when no event pushed an id. */
static int ext_index_build(const struct opp_model *m, const struct tu_lifted *lifted,
                           size_t nlifted, struct ext_index *x)
{
    size_t cap = 0;
    *x = (struct ext_index){0};
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        for (size_t i = 0; i < t->nevents; i++) {
            const struct opp_event *e = &t->events[i];
            uint64_t id =
                opp_op_extid(opp_event_func(m, t, e)->kind, opp_event_args(t, e), e->nargs);
            if (!id)
                continue;
            if (opp_loader_grow((void **)&x->ev, &cap, x->nev + 1, sizeof *x->ev))
                return -1;
            x->ev[x->nev++] = (struct ext_ev){id, t->proc, (uint32_t)ti, (uint32_t)i, e->depth};
        }
    }
    for (size_t i = 0; i < nlifted; i++) { /* folded ops' ids: their owners' */
        const struct tu_lifted *l = &lifted[i];
        const struct opp_event *e = &m->threads[l->thread].events[l->event];
        if (opp_loader_grow((void **)&x->ev, &cap, x->nev + 1, sizeof *x->ev))
            return -1;
        x->ev[x->nev++] = (struct ext_ev){l->external, l->proc, l->thread, l->event, e->depth};
    }
    if (!x->nev)
        return 0;
    qsort(x->ev, x->nev, sizeof *x->ev, cmp_ext_ev);
    cap = 0;
    for (size_t i = 0; i < m->gpu.nextcorr; i++) {
        const struct opp_gpu_extcorr *r = &m->gpu.extcorr[i];
        if (r->kind != OPP_EXTCORR_KIND || !r->corr)
            continue;
        if (opp_loader_grow((void **)&x->map, &cap, x->nmap + 1, sizeof *x->map))
            return -1;
        x->map[x->nmap++] = (struct ext_map){r->corr, r->external, r->proc};
    }
    if (x->nmap)
        qsort(x->map, x->nmap, sizeof *x->map, cmp_ext_map);
    return 0;
}

/* The library call whose pushed id CUPTI tied correlation id corr of
 * process pi to, as (thread, event); 0 when found. */
static int ext_find(const struct ext_index *x, uint32_t pi, uint64_t corr, uint32_t *thread,
                    uint32_t *event)
{
    if (!x->nmap || !corr)
        return -1;
    size_t lo =
        OPP_PARTITION_POINT(x->nmap, k, /* the first record of the id */
                            x->map[k].proc < pi || (x->map[k].proc == pi && x->map[k].corr < corr));
    const struct ext_map *mp = lo < x->nmap ? &x->map[lo] : NULL;
    if (!mp || mp->proc != pi || mp->corr != corr)
        return -1;
    lo = OPP_PARTITION_POINT(x->nev, k, /* the first call with the id */
                             x->ev[k].proc < pi || (x->ev[k].proc == pi && x->ev[k].ext < mp->ext));
    const struct ext_ev *ev = lo < x->nev ? &x->ev[lo] : NULL;
    if (!ev || ev->proc != pi || ev->ext != mp->ext)
        return -1;
    *thread = ev->thread;
    *event = ev->event;
    return 0;
}

/* The event a GPU record (process pi, correlation id corr) belongs to: the
 * CUDA call with its correlation id, else the library call that CUPTI's
 * external correlation ties it to. 0 when found; else a record that had an
 * id is counted unattached. */
static int gpu_owner(struct opp_gpu *gpu, const struct corr_ent *c, size_t n,
                     const struct ext_index *x, uint32_t pi, uint64_t corr, uint32_t *thread,
                     uint32_t *event)
{
    const struct corr_ent *ce = corr ? corr_find(c, n, pi, corr) : NULL;
    if (ce) {
        *thread = ce->thread, *event = ce->event;
        return 0;
    }
    if (ext_find(x, pi, corr, thread, event) == 0)
        return 0;
    gpu->unattached += corr != 0;
    return -1;
}

int tu_loaded_gpu_attach(struct opp_model *m, const struct tu_lifted *lifted, size_t nlifted)
{
    struct opp_gpu *gpu = &m->gpu;
    if (!gpu->nops && !gpu->nmem && !m->summary)
        return 0;
    size_t n = 0, cap = 0;
    struct corr_ent *c = NULL;
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        for (size_t i = 0; i < t->nevents; i++) {
            const struct opp_event *e = &t->events[i];
            if (opp_event_func(m, t, e)->kind != OPP_OP_CUDA_API || e->nargs <= OPP_COL_CUDA_CORR)
                continue;
            uint64_t corr = opp_corr_id(opp_event_args(t, e)[OPP_COL_CUDA_CORR]);
            if (!corr)
                continue;
            if (opp_loader_grow((void **)&c, &cap, n + 1, sizeof *c)) {
                free(c);
                return -1;
            }
            c[n++] = (struct corr_ent){corr, t->proc, (uint32_t)ti, (uint32_t)i, e->depth};
        }
    }
    if (n)
        qsort(c, n, sizeof *c, cmp_corr);
    /* Work whose API call is not an event (a driver call made inside a
     * runtime call, or one we did not see) goes to the library call that
     * CUPTI's external correlation ties it to. */
    struct ext_index x;
    int rc = ext_index_build(m, lifted, nlifted, &x);
    for (size_t i = 0; i < gpu->nops && !rc; i++) {
        struct opp_gpu_op *op = &gpu->ops[i];
        uint32_t th, ev;
        if (gpu_owner(gpu, c, n, &x, op->proc, op->corr, &th, &ev))
            continue;
        op->thread = th;
        op->event = ev;
        struct opp_event_gpu *eg = tu_loaded_event_gpu(&m->threads[th], ev);
        if (!eg)
            rc = -1;
        else if (opp_gpu_op_timed(op))
            eg->self_cuda_ns += opp_gpu_op_dur(op);
    }
    for (size_t i = 0; i < gpu->nmem && !rc; i++) {
        struct opp_gpu_mem *r = &gpu->mem[i];
        uint32_t th, ev;
        if (gpu_owner(gpu, c, n, &x, r->proc, r->corr, &th, &ev))
            continue;
        r->thread = th;
        r->event = ev;
        struct opp_event_gpu *eg = tu_loaded_event_gpu(&m->threads[th], ev);
        if (!eg)
            rc = -1;
        else
            eg->self_mem = opp_add_sat(eg->self_mem, r->bytes);
    }
    free(c);
    free(x.map);
    free(x.ev);
    return rc ? rc : tu_loaded_gpu_totals(m);
}
