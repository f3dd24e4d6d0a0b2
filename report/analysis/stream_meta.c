/* The first read of a trace that is streamed (stream_meta.h). */
#include "analysis/stream_meta.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gpu_join.h"
#include "gpu.h"

static int fail(struct opp_stream_meta *sm, int err)
{
    if (!sm->failed)
        sm->failed = err;
    return 1;
}

static int on_event(void *ctx, const struct opp_tr_event *te)
{
    struct opp_stream_meta *sm = ctx;
    struct opp_tr_event tmp;
    const struct opp_tr_event *e = opp_loader_event_shifted(&sm->ld, te, &tmp);
    int64_t ti = opp_loader_thread(&sm->ld, e->proc, e->tid);
    if (ti < 0)
        return fail(sm, ENOMEM);
    size_t n = sm->nlast, need = (size_t)ti + 1;
    if (need > n &&
        (opp_loader_grow_zeroed((void **)&sm->last, &n, need, sizeof *sm->last) ||
         opp_loader_grow_zeroed((void **)&sm->calls, &sm->nlast, need, sizeof *sm->calls)))
        return fail(sm, ENOMEM);
    if (e->end_ns > sm->last[ti])
        sm->last[ti] = e->end_ns;
    sm->calls[ti]++;
    sm->ld.m->events++;
    sm->open_calls += (e->flags & OPP_EV_OPEN) != 0;
    sm->stacked_calls += e->stack != 0;
    return sm->each ? sm->each(sm->ctx, (uint32_t)ti, e) : 0;
}

/* What the loader keeps of everything but the ops (code stacks too: one
 * each, not one a call): their count. */
static int on_gpu(void *ctx, uint32_t proc, const struct opp_gpu_rec *g)
{
    struct opp_stream_meta *sm = ctx;
    int rc = 0;
    switch (g->type) {
    case OPP_GPU_STRING:
    case OPP_GPU_DEVICE:
    case OPP_GPU_DROPPED:
    case OPP_GPU_MEMORY:
    case OPP_GPU_STACK:
    case OPP_GPU_MODULE:
        rc = opp_loader_on_gpu(&sm->ld, proc, g);
        if (rc || !sm->each_gpu)
            return rc;
        return sm->each_gpu(sm->ctx, proc, g);
    case OPP_GPU_KERNEL:
    case OPP_GPU_MEMCPY:
    case OPP_GPU_MEMSET:
        sm->gpu_ops++;
        break;
    default:
        break;
    }
    sm->ld.m->gpu.records += opp_gpu_is_activity(g->type);
    return sm->each_gpu ? sm->each_gpu(sm->ctx, proc, g) : 0;
}

static int on_summary(struct opp_stream_meta *sm)
{
    sm->summary = 1;
    return 1;
}

static int on_snode(void *ctx, uint32_t proc, const struct opp_tr_snode *n)
{
    return on_summary(ctx);
}

static int on_sgpu(void *ctx, uint32_t proc, const struct opp_tr_sgpu *g)
{
    return on_summary(ctx);
}

#define FWD(fn, args, call)                                                                        \
    static int fn args                                                                             \
    {                                                                                              \
        struct opp_stream_meta *sm = ctx;                                                          \
        return call;                                                                               \
    }
FWD(on_process, (void *ctx, const struct opp_tr_process *p), opp_loader_on_process(&sm->ld, p))
FWD(on_funcs, (void *ctx, uint32_t proc, uint32_t count, const struct opp_tr_func *f),
    opp_loader_on_funcs(&sm->ld, proc, count, f))
FWD(on_info,
    (void *ctx, uint32_t proc, uint32_t count, const char *const *keys, const char *const *values),
    opp_loader_on_info(&sm->ld, proc, count, keys, values))
FWD(on_thread, (void *ctx, uint32_t proc, uint32_t tid, const char *name),
    opp_loader_on_thread(&sm->ld, proc, tid, name))
FWD(on_dropped, (void *ctx, uint32_t proc, uint32_t tid, uint64_t count, uint32_t why),
    opp_loader_on_dropped(&sm->ld, proc, tid, count, why))
FWD(on_process_end, (void *ctx, uint32_t proc, uint32_t how, uint64_t end_ns),
    opp_loader_on_process_end(&sm->ld, proc, how, end_ns))
FWD(on_process_status, (void *ctx, uint32_t proc, uint32_t how, uint32_t code),
    opp_loader_on_process_status(&sm->ld, proc, how, code))
#undef FWD

int opp_stream_meta_read_many(struct opp_stream_meta *sm, const char *const *paths, size_t n,
                              int (*each)(void *ctx, uint32_t thread, const struct opp_tr_event *e),
                              int (*each_gpu)(void *ctx, uint32_t proc,
                                              const struct opp_gpu_rec *g),
                              void *ctx, char *err, size_t errlen)
{
    static const struct opp_tr_visitor v = {.process = on_process,
                                            .funcs = on_funcs,
                                            .info = on_info,
                                            .thread = on_thread,
                                            .event = on_event,
                                            .dropped = on_dropped,
                                            .process_end = on_process_end,
                                            .process_status = on_process_status,
                                            .gpu = on_gpu,
                                            .snode = on_snode,
                                            .sgpu = on_sgpu};
    memset(sm, 0, sizeof *sm);
    sm->each = each;
    sm->each_gpu = each_gpu;
    sm->ctx = ctx;
    struct opp_model *m = calloc(1, sizeof *m);
    if (m && !(m->index = calloc(1, sizeof *m->index))) {
        free(m);
        m = NULL;
    }
    sm->shift = calloc(n ? n : 1, sizeof *sm->shift);
    if (!m || !sm->shift) {
        free(m ? m->index : NULL);
        free(m);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    sm->ld.m = m;
    sm->nfiles = n;
    const char *path = paths[0];
    int rc = opp_trace_distinct(paths, n, err, errlen);
    for (size_t i = 0; i < n && rc >= 0 && !sm->failed && !sm->ld.failed && !sm->summary; i++) {
        struct opp_tr_summary sum;
        path = paths[i];
        opp_loader_next_file(&sm->ld, i);
        rc = opp_trace_read(path, &v, sm, i ? &sum : &m->sum, err, errlen);
        sm->shift[i] = sm->ld.shift;
        if (i && rc >= 0)
            opp_loader_add_summary(m, &sum, path);
    }
    if (sm->failed || sm->ld.failed) {
        snprintf(err, errlen, "cannot read %s: %s", path,
                 strerror(sm->failed ? sm->failed : sm->ld.failed));
        return -1;
    }
    if (rc < 0)
        return -1;
    if (sm->summary) {
        snprintf(err, errlen, "%s", path); /* which of them */
        return 1;
    }
    if (opp_loader_gpu_names(&sm->ld) || opp_loader_parents(m)) { /* devices' names */
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    opp_loader_sort_devices(&m->gpu);
    if (opp_loader_gpu_memory(&m->gpu))
        return opp_err_oom(err, errlen);
    return 0;
}

uint64_t opp_stream_meta_end(const struct opp_stream_meta *sm, uint32_t ti,
                             const struct opp_tr_event *e)
{
    if (!(e->flags & OPP_EV_OPEN))
        return e->end_ns;
    const struct opp_model *m = sm->ld.m;
    const struct opp_process *p = &m->procs[m->threads[ti].proc];
    return opp_open_end(e->begin_ns, ti < sm->nlast ? sm->last[ti] : 0, p->end_how, p->end_ns);
}

int opp_stream_meta_join(const struct opp_stream_meta *sm, struct opp_gpu_join *j, uint32_t ti,
                         const struct opp_tr_event *e, uint32_t seq, uint64_t at)
{
    const struct opp_model *m = sm->ld.m;
    uint32_t pi = m->threads[ti].proc;
    if (e->fn >= m->procs[pi].nfuncs)
        return -EPROTO;
    struct opp_gpu_call c = {e->begin_ns, opp_stream_meta_end(sm, ti, e),
                             ti,          seq,
                             e->depth,    (e->flags & OPP_EV_OPEN) != 0,
                             at};
    return opp_gpu_join_call(j, pi, e->fn, m->procs[pi].funcs[e->fn].kind, e->args, e->nargs, &c);
}

void opp_stream_meta_free(struct opp_stream_meta *sm)
{
    opp_model_free(sm->ld.m);
    free(sm->shift);
    free(sm->last);
    free(sm->calls);
    memset(sm, 0, sizeof *sm);
}
