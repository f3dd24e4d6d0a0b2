/* Loads a summary trace into memory (see model.h): a visitor of
 * opp_trace_read (model_read.c, gpu_records.c) that interns names and
 * appends each node to its process's summary thread, then its names,
 * whether it has CPU memory, and its device memory (names.c,
 * cpu_memory.c, gpu_memory.c); and frees the model. Its pass
 * (opp_pass_open_summary) hands the nodes over as counted calls; a full
 * trace's calls are read in one pass (pass.h). */
#include "analysis/model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model_read.h"
#include "analysis/symbolize.h"

struct opp_model *opp_loader_load(const char *const *paths, size_t npaths,
                                  int (*event)(void *ctx, const struct opp_tr_event *te),
                                  int (*finish)(struct opp_loader *ld), char *err, size_t errlen)
{
    const struct opp_tr_visitor v = {
        .process = opp_loader_on_process,
        .funcs = opp_loader_on_funcs,
        .thread = opp_loader_on_thread,
        .event = event,
        .dropped = opp_loader_on_dropped,
        .process_end = opp_loader_on_process_end,
        .process_status = opp_loader_on_process_status,
        .gpu = opp_loader_on_gpu,
        .info = opp_loader_on_info,
        .snode = opp_loader_on_snode,
        .sgpu = opp_loader_on_sgpu,
    };
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
    if (opp_trace_distinct(paths, npaths, err, errlen)) {
        opp_model_free(m);
        errno = EINVAL;
        return NULL;
    }
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
    int rc = ld.failed ? ld.failed : finish(&ld);
    if (rc) {
        snprintf(err, errlen, "cannot load %s: %s", path,
                 rc == EOVERFLOW ? "too many events on one thread"
                 : rc == ENOTSUP ? "a full trace among summary traces (read them apart)"
                                 : strerror(rc));
        opp_model_free(m);
        errno = rc;
        return NULL;
    }
    return m;
}

/* A full trace's call: the loader keeps none (pass.h reads them). */
static int refuse_call(void *ctx, const struct opp_tr_event *te)
{
    (void)te;
    return opp_loader_fail(ctx, ENOTSUP);
}

/* Everything that needs the whole trace: names, whether it has CPU
 * memory, device memory sizes and series (its nodes' own CPU memory and
 * GPU work are added up as the pass hands them over). 0 or an errno. */
static int summary_finish(struct opp_loader *ld)
{
    struct opp_model *m = ld->m;
    if (opp_loader_event_names(ld) || opp_loader_gpu_names(ld) || opp_loader_parents(m) ||
        opp_loader_cpu_summed(m))
        return ENOMEM;
    opp_loader_sort_devices(&m->gpu);
    return opp_loader_gpu_memory(&m->gpu) ? ENOMEM : 0;
}

struct opp_model *opp_model_load_many(const char *const *paths, size_t npaths, char *err,
                                      size_t errlen)
{
    return opp_loader_load(paths, npaths, refuse_call, summary_finish, err, errlen);
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
    free(m->gpu.sum);
    for (size_t i = 0; i < m->gpu.nmemseries; i++)
        free(m->gpu.memseries[i].pts);
    free(m->gpu.memseries);
    for (uint32_t i = 0; i < m->nstrs; i++)
        free(m->strs[i]);
    free(m->strs);
    free(m);
}
