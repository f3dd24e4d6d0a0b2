/* The tests' loaded model of every call (loaded.h): the loader's
 * callbacks (loader.h) with each call appended to its thread, then the
 * calls a process died inside ended, the trees built (thread_tree.h),
 * names given, torch's fold done, CPU memory, device memory and GPU work
 * attached. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model_read.h"
#include "analysis/thread_tree.h"
#include "oracle/loaded.h"
#include "ops.h"
#include "torch_rules.h"

static int on_event(void *ctx, const struct opp_tr_event *te)
{
    struct opp_loader *ld = ctx;
    int64_t ti = opp_loader_thread(ld, te->proc, te->tid);
    if (ti < 0)
        return opp_loader_fail(ld, ENOMEM);
    struct opp_thread *t = &ld->m->threads[ti];
    const struct opp_process *p = &ld->m->procs[t->proc];
    if (te->fn >= p->nfuncs)
        return opp_loader_fail(ld, EPROTO); /* the reader checks this: never happens */
    if (t->nevents >= OPP_NO_PARENT - 1 || t->nargs + te->nargs > UINT32_MAX)
        return opp_loader_fail(ld, EOVERFLOW);
    if (opp_loader_grow((void **)&t->events, &t->cap, t->nevents + 1, sizeof *t->events) ||
        opp_loader_grow((void **)&t->args, &t->args_cap, t->nargs + te->nargs, sizeof *t->args))
        return opp_loader_fail(ld, ENOMEM);
    struct opp_event *e = &t->events[t->nevents++];
    e->begin_ns = opp_loader_shifted(ld, te->begin_ns);
    e->end_ns = opp_loader_shifted(ld, te->end_ns);
    e->self_ns = 0;
    e->parent = OPP_NO_PARENT;
    e->name = p->funcs[te->fn].name;
    e->fn = te->fn;
    e->args = (uint32_t)t->nargs;
    e->depth = (uint16_t)te->depth;
    e->flags = (uint8_t)te->flags;
    e->nargs = (uint8_t)te->nargs;
    e->stack = te->stack;
    if (te->nargs) {
        memcpy(t->args + t->nargs, te->args, te->nargs * sizeof *te->args);
        t->nargs += te->nargs;
    }
    ld->m->events++;
    return 0;
}

struct fold_ctx {
    struct opp_model *m;
    const struct opp_thread *t;
    uint32_t thread; /* t's index */
    struct tu_lifted *lifted;
    size_t nlifted, lifted_cap;
};

/* torch's folding of an op into itself (torch_rules.h), by the names the
 * model interned. */
static int folds_torch(const struct opp_event *c, const struct opp_event *p, unsigned counted,
                       void *ctx)
{
    const struct fold_ctx *x = ctx;
    return opp_torch_folds(counted, opp_event_func(x->m, x->t, p)->kind, p->name,
                           opp_event_func(x->m, x->t, c)->kind, c->name);
}

/* A memory instant: torch sums those into the event around them, they
 * are not its children. */
static int memory_event(const struct opp_event *e, void *ctx)
{
    const struct fold_ctx *x = ctx;
    return !opp_fold_counts(opp_event_func(x->m, x->t, e)->kind);
}

/* A folded op's external id, its GPU work going to owner. */
static int lift(const struct opp_event *e, uint32_t owner, void *ctx)
{
    struct fold_ctx *x = ctx;
    uint64_t id =
        opp_op_extid(opp_event_func(x->m, x->t, e)->kind, opp_event_args(x->t, e), e->nargs);
    if (!id)
        return 0;
    if (opp_loader_grow((void **)&x->lifted, &x->lifted_cap, x->nlifted + 1, sizeof *x->lifted))
        return -1;
    x->lifted[x->nlifted++] = (struct tu_lifted){id, x->t->proc, x->thread, owner};
    return 0;
}

/* A call the process died inside ends when the process ended, and contains
 * everything its thread did after it began. */
static void close_open_events(struct opp_model *m)
{
    for (size_t i = 0; i < m->nthreads; i++) {
        struct opp_thread *t = &m->threads[i];
        const struct opp_process *p = &m->procs[t->proc];
        uint64_t last = 0;
        for (size_t k = 0; k < t->nevents; k++)
            if (t->events[k].end_ns > last)
                last = t->events[k].end_ns;
        for (size_t k = 0; k < t->nevents; k++) {
            struct opp_event *e = &t->events[k];
            if (e->flags & OPP_EV_OPEN)
                e->end_ns = opp_open_end(e->begin_ns, last, p->end_how, p->end_ns);
        }
    }
}

/* Everything that needs the whole trace: the trees, names, torch's
 * folding of an op into itself, CPU memory, device memory sizes and
 * series, attachment. 0 or an errno. */
static int finish(struct opp_loader *ld)
{
    struct opp_model *m = ld->m;
    close_open_events(m);
    for (size_t i = 0; i < m->nthreads; i++) {
        struct opp_thread *t = &m->threads[i];
        int rc = t->stat ? 0 : opp_tree_build(t->events, t->nevents); /* summary: built */
        if (rc)
            return -rc;
    }
    if (opp_loader_event_names(ld) || opp_loader_gpu_names(ld) || opp_loader_parents(ld->m))
        return ENOMEM;
    struct fold_ctx x = {.m = m};
    for (size_t i = 0; i < m->nthreads; i++) {
        struct opp_thread *t = &m->threads[i];
        x.t = t;
        x.thread = (uint32_t)i;
        if (t->stat)
            continue;
        if (opp_tree_fold(t->events, &t->nevents, folds_torch, memory_event, lift, &x)) {
            free(x.lifted);
            return ENOMEM;
        }
        /* the calls the process died inside, folded ones not counted (as a
         * summary of the trace counts them) */
        for (size_t k = 0; k < t->nevents; k++)
            m->open_events += (t->events[k].flags & OPP_EV_OPEN) != 0;
    }
    int rc = tu_loaded_cpu_memory(m);
    if (!rc) {
        opp_loader_sort_devices(&m->gpu);
        rc = opp_loader_gpu_memory(&m->gpu) || tu_loaded_gpu_attach(m, x.lifted, x.nlifted);
    }
    free(x.lifted);
    return rc ? ENOMEM : 0;
}

struct opp_model *tu_model_load_many(const char *const *paths, size_t npaths, char *err,
                                     size_t errlen)
{
    return opp_loader_load(paths, npaths, on_event, finish, err, errlen);
}

struct opp_model *tu_model_load(const char *path, char *err, size_t errlen)
{
    return tu_model_load_many(&path, 1, err, errlen);
}
