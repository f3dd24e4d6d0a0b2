/* Loads a trace into memory (see model.h): a visitor of opp_trace_read
 * (model_read.c, gpu_records.c) that interns names and appends each event to
 * its thread, then the call trees, names, CPU memory, device memory and GPU
 * attachment (names.c, cpu_memory.c, gpu_memory.c, gpu_attach.c); and frees
 * the model. */
#include "analysis/model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/loader.h"
#include "ops.h"
#include "analysis/symbolize.h"
#include "analysis/thread_tree.h"
#include "torch_rules.h"

struct fold_ctx {
    struct opp_model *m;
    const struct opp_thread *t;
    uint32_t thread; /* t's index */
    size_t lifted_cap;
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
    struct opp_gpu *g = &x->m->gpu;
    uint64_t id =
        opp_op_extid(opp_event_func(x->m, x->t, e)->kind, opp_event_args(x->t, e), e->nargs);
    if (!id)
        return 0;
    if (opp_loader_grow((void **)&g->lifted, &x->lifted_cap, g->nlifted + 1, sizeof *g->lifted))
        return -1;
    g->lifted[g->nlifted++] = (struct opp_gpu_lifted){id, x->t->proc, x->thread, owner};
    return 0;
}

/* Everything that needs the whole trace: names, torch's folding of an op
 * into itself, CPU memory (cpu_memory.c), device memory sizes and series,
 * attachment. 0 or -1 (out of memory). */
static int gpu_finish(struct opp_loader *ld)
{
    struct opp_gpu *gpu = &ld->m->gpu;
    if (opp_loader_event_names(ld) || opp_loader_gpu_names(ld))
        return -1;
    struct fold_ctx x = {.m = ld->m};
    for (size_t i = 0; i < ld->m->nthreads; i++) {
        struct opp_thread *t = &ld->m->threads[i];
        x.t = t;
        x.thread = (uint32_t)i;
        if (t->stat)
            continue;
        if (opp_tree_fold(t->events, &t->nevents, folds_torch, memory_event, lift, &x))
            return -1;
        /* the calls the process died inside, folded ones not counted (as a
         * summary of the trace counts them) */
        for (size_t k = 0; k < t->nevents; k++)
            ld->m->open_events += (t->events[k].flags & OPP_EV_OPEN) != 0;
    }
    if (opp_loader_cpu_memory(ld->m))
        return -1;
    opp_loader_sort_devices(gpu);
    if (opp_loader_gpu_memory(gpu))
        return -1;
    return opp_loader_gpu_attach(ld->m);
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

struct opp_model *opp_model_load(const char *path, char *err, size_t errlen)
{
    return opp_model_load_many(&path, 1, err, errlen);
}

struct opp_model *opp_model_load_many(const char *const *paths, size_t npaths, char *err,
                                      size_t errlen)
{
    const char *path = paths[0];
    struct opp_model *m = calloc(1, sizeof *m);
    if (m)
        m->index = calloc(1, sizeof *m->index);
    if (!m || !m->index) {
        free(m);
        snprintf(err, errlen, "out of memory");
        errno = ENOMEM;
        return NULL;
    }
    struct opp_loader ld = {.m = m};
    static const struct opp_tr_visitor v = {
        .process = opp_loader_on_process,
        .funcs = opp_loader_on_funcs,
        .thread = opp_loader_on_thread,
        .event = opp_loader_on_event,
        .dropped = opp_loader_on_dropped,
        .process_end = opp_loader_on_process_end,
        .process_status = opp_loader_on_process_status,
        .gpu = opp_loader_on_gpu,
        .info = opp_loader_on_info,
        .snode = opp_loader_on_snode,
        .sgpu = opp_loader_on_sgpu,
    };
    for (size_t i = 0; i < npaths && !ld.failed; i++) {
        struct opp_tr_summary sum;
        path = paths[i];
        opp_loader_next_file(&ld, i);
        if (opp_trace_read(path, &v, &ld, i ? &sum : &m->sum, err, errlen) < 0) {
            opp_model_free(m);
            errno = EINVAL;
            return NULL;
        }
        if (i) /* the first file's summary, with what the others add */
            opp_loader_add_summary(m, &sum, path);
    }
    if (ld.failed) {
        snprintf(err, errlen, "cannot load %s: %s", path,
                 ld.failed == EOVERFLOW ? "too many events on one thread" : strerror(ld.failed));
        opp_model_free(m);
        errno = ld.failed;
        return NULL;
    }
    close_open_events(m);
    for (size_t i = 0; i < m->nthreads; i++) {
        struct opp_thread *t = &m->threads[i];
        int rc = t->stat ? 0 : opp_tree_build(t->events, t->nevents); /* summary: built */
        if (rc) {
            snprintf(err, errlen, "cannot load %s: %s", path, strerror(-rc));
            opp_model_free(m);
            errno = -rc;
            return NULL;
        }
    }
    if (gpu_finish(&ld)) {
        snprintf(err, errlen, "cannot load %s: %s", path, strerror(ENOMEM));
        opp_model_free(m);
        errno = ENOMEM;
        return NULL;
    }
    return m;
}

void opp_model_free(struct opp_model *m)
{
    if (!m)
        return;
    if (m->index) {
        OPP_HASH_FREE(m->index->strs);
        OPP_HASH_FREE(m->index->procs);
        OPP_HASH_FREE(m->index->threads);
        OPP_HASH_FREE(m->index->gpu_strs);
        free(m->index);
    }
    for (size_t i = 0; i < m->nprocs; i++) {
        struct opp_process *p = &m->procs[i];
        free(p->exe);
        if (p->argv)
            for (uint32_t k = 0; k < p->argc; k++)
                free(p->argv[k]);
        free(p->argv);
        free(p->funcs);
        for (uint32_t k = 0; k < p->ninfo; k++)
            free(p->info_keys[k]), free(p->info_values[k]);
        free(p->info_keys);
        free(p->info_values);
    }
    free(m->procs);
    opp_code_free(m->code);
    for (size_t i = 0; i < m->nthreads; i++) {
        free(m->threads[i].name);
        free(m->threads[i].events);
        free(m->threads[i].args);
        free(m->threads[i].gpu);
        free(m->threads[i].cpumem);
        free(m->threads[i].stat);
    }
    free(m->threads);
    free(m->gpu.ops);
    free(m->gpu.launches);
    free(m->gpu.mem);
    free(m->gpu.devices);
    free(m->gpu.extcorr);
    free(m->gpu.lifted);
    free(m->gpu.sum);
    for (size_t i = 0; i < m->gpu.nmemseries; i++)
        free(m->gpu.memseries[i].pts);
    free(m->gpu.memseries);
    free(m->cpu.events);
    free(m->cpu.series.pts);
    for (uint32_t i = 0; i < m->nstrs; i++)
        free(m->strs[i]);
    free(m->strs);
    free(m);
}
