/* The rows, call paths and rank tables of a loaded model (loaded.h), a
 * summary trace's or every call's, from its events in tree order: the
 * tests' second answer to what the pass's consumers add up as it reads
 * (table_stream.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/callpath_tree.h"
#include "analysis/ranks.h"
#include "oracle/loaded.h"

#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(elt) (hash_oom = 1)
#include <uthash.h>

uint64_t tu_model_first_ns(const struct opp_model *m)
{
    uint64_t first = UINT64_MAX;
    for (size_t i = 0; i < m->nthreads; i++) /* tree order: the first begins first */
        if (m->threads[i].nevents && m->threads[i].events[0].begin_ns < first)
            first = m->threads[i].events[0].begin_ns;
    for (size_t i = 0; i < m->gpu.nops; i++)
        if (m->gpu.ops[i].start_ns < first)
            first = m->gpu.ops[i].start_ns;
    return first == UINT64_MAX ? 0 : first;
}

int tu_aggregate(const struct opp_model *m, const struct opp_agg_opts *o, struct opp_agg *a)
{
    struct opp_agg_acc *x = opp_agg_acc_new(m, o, a);
    if (!x)
        return -ENOMEM;
    uint32_t nstack = opp_agg_stack_depth(o);
    uint64_t first = o->window ? tu_model_first_ns(m) : 0;
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        if (!opp_agg_selects(m, o, t->proc, (uint32_t)ti))
            continue;
        for (size_t i = 0; i < t->nevents; i++) {
            const struct opp_event *e = &t->events[i];
            const struct opp_func *f = opp_event_func(m, t, e);
            if (e->parent != OPP_NO_PARENT && opp_kind_base(f->kind) == OPP_OP_MEMORY)
                continue; /* summed into the operators around it (t->cpumem) */
            if (o->window && !opp_agg_call_in_window(o, t->proc, e->begin_ns - first))
                continue;
            if (o->sched_window && (!t->stat || t->stat[i].window != o->sched_window))
                continue;
            uint32_t stack[OPP_STACK_MAX];
            struct opp_agg_call c = {.name = e->name,
                                     .f = f,
                                     .args = opp_event_args(t, e),
                                     .nargs = e->nargs,
                                     .stack = stack};
            c.nstack = opp_agg_code_frames(m, o, t->proc, e->stack, stack);
            for (uint32_t p = c.nstack ? OPP_NO_PARENT : e->parent;
                 p != OPP_NO_PARENT && c.nstack < nstack; p = t->events[p].parent)
                stack[c.nstack++] = t->events[p].name;
            struct opp_agg_vals v;
            int rc = opp_agg_acc_row(x, &c, &v);
            struct opp_agg_part part = {.calls = tu_event_calls(t, i),
                                        .self_ns = e->self_ns,
                                        .dur_ns = opp_event_dur(e),
                                        .gpu = t->gpu ? &t->gpu[i] : NULL,
                                        .cpumem = t->cpumem ? &t->cpumem[i] : NULL};
            if (rc || opp_agg_acc_add(x, t->proc, &v, &part))
                goto oom;
        }
    }
    for (size_t i = 0; i < m->gpu.nops; i++) {
        const struct opp_gpu_op *g = &m->gpu.ops[i];
        if (!opp_gpu_op_timed(g) || !opp_agg_selects(m, o, g->proc, g->thread))
            continue;
        uint64_t owner = g->thread == OPP_GPU_NONE
                             ? UINT64_MAX
                             : m->threads[g->thread].events[g->event].begin_ns - first;
        if (o->window && !opp_agg_gpu_in_window(o, g->proc, g->start_ns - first, owner))
            continue;
        if (o->sched_window && (i >= m->gpu.nsum || m->gpu.sum[i].window != o->sched_window))
            continue;
        struct opp_agg_gpu og = {.name = g->name,
                                 .type = g->type,
                                 .proc = g->proc,
                                 .dur_ns = opp_gpu_op_dur(g),
                                 .bytes = g->bytes,
                                 .calls = opp_gpu_op_count(&m->gpu, i)};
        if (opp_agg_acc_gpu(x, &og))
            goto oom;
    }
    return opp_agg_acc_finish(x, tu_model_has_cpu_mem(m));
oom:
    opp_agg_acc_drop(x);
    return -ENOMEM;
}

int tu_rank_aggregates(void *ctx, const struct opp_agg_opts *o, size_t n, struct opp_agg *out)
{
    const struct opp_model *m = ctx;
    for (size_t k = 0; k < n; k++) {
        int rc = tu_aggregate(m, &o[k], &out[k]);
        if (rc) {
            while (k--)
                opp_agg_free(&out[k]);
            return rc;
        }
    }
    return 0;
}

struct ct_ent {
    uint64_t key; /* parent node << 32 | name */
    uint32_t node;
    UT_hash_handle hh;
};

static int add_node(struct opp_calltree *ct, size_t *cap, uint32_t parent, uint32_t name)
{
    if (ct->n == *cap) {
        size_t n = *cap ? *cap * 2 : 256;
        void *p = reallocarray(ct->nodes, n, sizeof *ct->nodes);
        if (!p)
            return -1;
        ct->nodes = p;
        *cap = n;
    }
    ct->nodes[ct->n] = (struct opp_ct_node){
        .parent = parent,
        .name = name,
        .depth = parent == OPP_CT_ROOT ? 0 : ct->nodes[parent].depth + 1,
    };
    return (int)ct->n++;
}

int tu_calltree_build(const struct opp_model *m, const struct opp_agg_opts *o,
                       struct opp_calltree *ct)
{
    memset(ct, 0, sizeof *ct);
    struct ct_ent *map = NULL, *e;
    size_t cap = 0, node_cap = 0;
    uint32_t *node_of = NULL; /* per event of the current thread */
    int hash_oom = 0, rc = 0;
    for (size_t ti = 0; ti < m->nthreads && !rc; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        if (!opp_agg_selects(m, o, t->proc, (uint32_t)ti) || !t->nevents)
            continue;
        if (t->nevents > node_cap) {
            uint32_t *p = reallocarray(node_of, t->nevents, sizeof *node_of);
            if (!p) {
                rc = -ENOMEM;
                break;
            }
            node_of = p;
            node_cap = t->nevents;
        }
        for (size_t k = 0; k < t->nevents; k++) {
            const struct opp_event *ev = &t->events[k];
            /* tree order: the parent's node is known */
            uint32_t parent = ev->parent == OPP_NO_PARENT ? OPP_CT_ROOT : node_of[ev->parent];
            uint64_t key = (uint64_t)parent << 32 | ev->name;
            HASH_FIND(hh, map, &key, sizeof key, e);
            if (!e) {
                int id = add_node(ct, &cap, parent, ev->name);
                e = id < 0 ? NULL : malloc(sizeof *e);
                if (!e) {
                    rc = -ENOMEM;
                    break;
                }
                e->key = key;
                e->node = (uint32_t)id;
                HASH_ADD(hh, map, key, sizeof e->key, e);
                if (hash_oom) {
                    free(e);
                    rc = -ENOMEM;
                    break;
                }
            }
            node_of[k] = e->node;
            struct opp_ct_node *nd = &ct->nodes[e->node];
            nd->calls += tu_event_calls(t, k);
            nd->self_ns += ev->self_ns;
            nd->total_ns += ev->end_ns - ev->begin_ns;
            if (t->gpu) {
                nd->self_cuda_ns += t->gpu[k].self_cuda_ns;
                nd->cuda_total_ns += t->gpu[k].cuda_ns;
            }
        }
    }
    OPP_HASH_FREE(map);
    free(node_of);
    if (rc)
        opp_calltree_free(ct);
    return rc;
}

