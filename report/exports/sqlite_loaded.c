/* `opprof export sqlite` from the loaded model, for the traces the pass
 * cannot read (export_sqlite.c): every row from the model's events and
 * GPU records, the shapes' texts after the model's strings. */
#include "exports/export.h"

#include <stdio.h>

#ifdef OPP_HAVE_SQLITE
#include <stdlib.h>

#include "analysis/model.h"
#include "analysis/step_times.h"
#include "exports/sqlite_rows.h"

/* cpu_ops ids: the events of thread 0, then thread 1's...: base[t] + i. */
static void put_cpu_ops(struct db *d, const struct opp_model *m, const uint64_t *base)
{
    struct inserter in;
    opp_inserter_open(d, &in, "cpu_ops", 18);
    struct shape_ids ids = {.next = m->nstrs,
                            .put = opp_db_prepare(d, "INSERT INTO strings VALUES (?, ?)")};
    for (size_t ti = 0; ti < m->nthreads && !d->failed; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        for (size_t i = 0; i < t->nevents && !d->failed; i++) {
            const struct opp_event *e = &t->events[i];
            struct cpu_row r = {
                .id = (int64_t)(base[ti] + i),
                .parent = e->parent == OPP_NO_PARENT ? -1 : (int64_t)(base[ti] + e->parent),
                .begin = e->begin_ns,
                .end = e->end_ns,
                .self = e->self_ns,
                .thread = (uint32_t)ti,
                .depth = e->depth,
                .name = e->name,
                .open = (e->flags & OPP_EV_OPEN) != 0};
            opp_sqlite_call_values(d, &ids, &r, opp_event_func(m, t, e), opp_event_args(t, e),
                                   e->nargs);
            if (opp_kind_base(r.kind) == OPP_OP_MEMORY)
                r.bytes = opp_cpu_mem_bytes(m, t, e);
            opp_sqlite_put_cpu_row(d, &in, &r);
        }
    }
    opp_inserter_close(d, &in);
    opp_sqlite_shape_ids_free(&ids);
}

static int64_t cpu_op_of(const uint64_t *base, uint32_t thread, uint32_t event)
{
    return thread == OPP_GPU_NONE ? -1 : (int64_t)(base[thread] + event);
}

static void put_gpu(struct db *d, const struct opp_model *m, const uint64_t *base)
{
    struct inserter in;
    opp_inserter_open(d, &in, "gpu_ops", 17);
    for (size_t i = 0; i < m->gpu.nops && !d->failed; i++) {
        const struct opp_gpu_op *g = &m->gpu.ops[i];
        const struct opp_gpu_launch *l =
            g->launch != OPP_GPU_NONE ? &m->gpu.launches[g->launch] : NULL;
        struct gpu_row r = {.start = g->start_ns,
                            .end = g->end_ns,
                            .bytes = g->bytes,
                            .corr = g->corr,
                            .proc = g->proc,
                            .device = g->device,
                            .stream = g->stream,
                            .name = g->name,
                            .type = g->type};
        for (int k = 0; l && k < 3; k++) {
            r.grid[k] = l->grid[k];
            r.block[k] = l->block[k];
        }
        opp_sqlite_put_gpu_row(d, &in, m, (int64_t)i, &r, cpu_op_of(base, g->thread, g->event));
    }
    opp_inserter_close(d, &in);
    opp_inserter_open(d, &in, "gpu_memory", 8);
    for (size_t i = 0; i < m->gpu.nmem && !d->failed; i++) {
        const struct opp_gpu_mem *g = &m->gpu.mem[i];
        opp_sqlite_put_gpu_mem_row(d, &in, (int64_t)i, g, cpu_op_of(base, g->thread, g->event));
    }
    opp_inserter_close(d, &in);
}

int opp_export_sqlite(const struct opp_model *m, const char *path, char *err, size_t errlen)
{
    struct db d;
    struct opp_agg_opts all = {0};
    struct opp_steps st;
    char what[200] = "";
    if (opp_steps_default(m, &all, &st, what, sizeof what)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    uint64_t *base = calloc(m->nthreads + 1, sizeof *base);
    if (!base || opp_sqlite_open(&d, path, err, errlen)) {
        if (!base)
            snprintf(err, errlen, "out of memory");
        free(base);
        opp_steps_free(&st);
        return -1;
    }
    for (size_t i = 0; i < m->nthreads; i++)
        base[i + 1] = base[i] + m->threads[i].nevents;
    opp_sqlite_put_meta(&d, m, what);
    opp_sqlite_put_strings(&d, m);
    opp_sqlite_put_processes(&d, m);
    put_cpu_ops(&d, m, base);
    put_gpu(&d, m, base);
    opp_sqlite_put_steps(&d, &st);
    free(base);
    opp_steps_free(&st);
    return opp_sqlite_close(&d, path);
}

#else

int opp_export_sqlite(const struct opp_model *m, const char *path, char *err, size_t errlen)
{
    (void)m, (void)path;
    snprintf(err, errlen, "this opprof was built without SQLite (libsqlite3-dev)");
    return -1;
}

#endif
