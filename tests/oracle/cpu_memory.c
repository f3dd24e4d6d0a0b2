/* The tests' loaded model (loaded.h): CPU memory from the MEMORY events,
 * every process's allocations and frees in time order, each free given
 * its allocation's size, and the bytes inside each event (a summary's
 * nodes' too).
 * The report sizes them as it reads (mem_records.c): this is the tests'
 * second answer, in memory. */
#ifndef _GNU_SOURCE /* qsort_r */
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>

#include "analysis/live_blocks.h"
#include "analysis/loader.h"
#include "oracle/loaded.h"
#include "ops.h"

/* A MEMORY event, as (thread index, event index). */
struct mem_ref {
    uint32_t thread, event;
};

/* By time, then process, thread and place in the thread (tree order keeps
 * a thread's instants at one time in the order they were recorded). */
static int cmp_ref(const void *pa, const void *pb, void *ctx)
{
    const struct opp_model *m = ctx;
    const struct mem_ref *a = pa, *b = pb;
    const struct opp_thread *ta = &m->threads[a->thread], *tb = &m->threads[b->thread];
    uint64_t xa = ta->events[a->event].begin_ns, xb = tb->events[b->event].begin_ns;
    if (xa != xb)
        return xa < xb ? -1 : 1;
    if (ta->proc != tb->proc)
        return ta->proc < tb->proc ? -1 : 1;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    return a->event < b->event ? -1 : a->event > b->event;
}

/* Every MEMORY event of the full (not summary) threads, by time, in
 * (*refs)[0..*n). 0 or -1. */
static int collect(const struct opp_model *m, struct mem_ref **refs, size_t *n)
{
    size_t cap = 0;
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        for (size_t i = 0; !t->stat && i < t->nevents; i++) {
            if (!opp_loader_mem_cols(m, t, &t->events[i]))
                continue;
            if (opp_loader_grow((void **)refs, &cap, *n + 1, sizeof **refs))
                return -1;
            (*refs)[(*n)++] = (struct mem_ref){(uint32_t)ti, (uint32_t)i};
        }
    }
    if (*n)
        qsort_r(*refs, *n, sizeof **refs, cmp_ref, (void *)m);
    return 0;
}

/* Each free without a size takes the size of the allocation at its address
 * before it in its process; that allocation is then gone. 0 or -1. */
static int free_sizes(struct opp_model *m, const struct mem_ref *refs, size_t n)
{
    struct opp_live live = {0};
    for (size_t i = 0; i < n; i++) {
        const struct mem_ref *r = &refs[i];
        const struct opp_thread *t = &m->threads[r->thread];
        uint64_t *a = opp_loader_mem_cols(m, t, &t->events[r->event]);
        if (a[OPP_COL_MEM_OP] == OPP_MEM_FREE) {
            int found;
            int64_t bytes = opp_live_take(&live, t->proc, a[OPP_COL_MEM_ADDRESS], &found);
            if (found && !a[OPP_COL_MEM_BYTES])
                a[OPP_COL_MEM_BYTES] = (uint64_t)bytes;
        } else if (a[OPP_COL_MEM_OP] == OPP_MEM_ALLOC &&
                   opp_live_put(&live, t->proc, a[OPP_COL_MEM_ADDRESS],
                                (int64_t)a[OPP_COL_MEM_BYTES])) {
            opp_live_free(&live);
            return -1;
        }
    }
    opp_live_free(&live);
    return 0;
}

int64_t tu_cpu_mem_bytes(const struct opp_model *m, const struct opp_thread *t,
                         const struct opp_event *e)
{
    const uint64_t *a = opp_loader_mem_cols(m, t, e);
    return a ? opp_cpu_mem_signed(a, a[OPP_COL_MEM_BYTES]) : 0;
}

/* The nearest of p and its ancestors that is not a MEMORY event (one
 * could only contain another event on a clock too coarse to order them). */
static uint32_t owner(const struct opp_model *m, const struct opp_thread *t, uint32_t p)
{
    while (p != OPP_NO_PARENT && opp_loader_mem_cols(m, t, &t->events[p]))
        p = t->events[p].parent;
    return p;
}

/* Once t's tree is final (and its frees sized): its cpumem, the bytes
 * inside each event (a summary node's own from the file). 0 or -1. */
static int cpumem_tree(const struct opp_model *m, struct opp_thread *t)
{
    if (!t->cpumem && !(t->cpumem = calloc(t->nevents, sizeof *t->cpumem)))
        return -1;
    struct opp_event_cpumem *c = t->cpumem;
    for (size_t i = 0; i < t->nevents; i++) {
        if (!opp_loader_mem_cols(m, t, &t->events[i]))
            continue;
        int64_t b = t->stat ? t->stat[i].cpu_mem : tu_cpu_mem_bytes(m, t, &t->events[i]);
        c[i].self = c[i].total = b;
        uint32_t p = owner(m, t, t->events[i].parent);
        if (p != OPP_NO_PARENT)
            c[p].self = opp_add_sat(c[p].self, b);
    }
    for (size_t i = 0; i < t->nevents; i++)
        if (!opp_loader_mem_cols(m, t, &t->events[i]))
            c[i].total = c[i].self;
    for (size_t i = t->nevents; i-- > 0;) {
        uint32_t p = owner(m, t, t->events[i].parent);
        if (p != OPP_NO_PARENT && !opp_loader_mem_cols(m, t, &t->events[i]))
            c[p].total = opp_add_sat(c[p].total, c[i].total);
    }
    return 0;
}

int tu_loaded_cpu_memory(struct opp_model *m)
{
    struct mem_ref *refs = NULL;
    size_t n = 0;
    int rc = collect(m, &refs, &n) || free_sizes(m, refs, n) ? -1 : 0;
    for (size_t i = 0; i < n && !rc; i++) {
        struct opp_thread *t = &m->threads[refs[i].thread];
        if (!t->cpumem && cpumem_tree(m, t))
            rc = -1;
    }
    free(refs);
    if (rc || opp_loader_cpu_summed(m))
        return -1;
    for (size_t i = 0; m->cpu.summed && i < m->nthreads; i++) { /* a summary's MEMORY nodes */
        struct opp_thread *t = &m->threads[i];
        int has = 0;
        for (size_t k = 0; t->stat && k < t->nevents && !has; k++)
            has = opp_loader_mem_cols(m, t, &t->events[k]) != NULL;
        if (has && cpumem_tree(m, t))
            return -1;
    }
    return 0;
}

int tu_model_has_cpu_mem(const struct opp_model *m)
{
    for (size_t i = 0; i < m->nthreads; i++)
        if (m->threads[i].cpumem)
            return 1;
    return 0;
}
