/* The tests' loaded model (loaded.h): each event's GPU work and device
 * memory added up its tree, a summary node's own from what the summary
 * kept of its calls, then each event's totals, its own and its
 * children's. */
#include <stdlib.h>

#include "analysis/loader.h"
#include "oracle/loaded.h"

struct opp_event_gpu *tu_loaded_event_gpu(struct opp_thread *t, uint32_t event)
{
    if (!t->gpu)
        t->gpu = calloc(t->nevents, sizeof *t->gpu);
    return t->gpu ? &t->gpu[event] : NULL;
}

int tu_loaded_gpu_totals(struct opp_model *m)
{
    /* A summary node carries its own calls' GPU work and memory. */
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        struct opp_thread *t = &m->threads[ti];
        for (size_t i = 0; t->stat && i < t->nevents; i++) {
            if (!t->stat[i].self_cuda_ns && !t->stat[i].self_mem)
                continue;
            struct opp_event_gpu *eg = tu_loaded_event_gpu(t, (uint32_t)i);
            if (!eg)
                return -1;
            eg->self_cuda_ns += t->stat[i].self_cuda_ns;
            eg->self_mem = opp_add_sat(eg->self_mem, t->stat[i].self_mem);
        }
    }
    /* children come after their parent in tree order */
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        struct opp_thread *t = &m->threads[ti];
        if (!t->gpu)
            continue;
        for (size_t i = 0; i < t->nevents; i++) {
            t->gpu[i].cuda_ns = t->gpu[i].self_cuda_ns;
            t->gpu[i].mem = t->gpu[i].self_mem;
        }
        for (size_t i = t->nevents; i-- > 0;) {
            uint32_t p = t->events[i].parent;
            if (p == OPP_NO_PARENT)
                continue;
            t->gpu[p].cuda_ns += t->gpu[i].cuda_ns;
            t->gpu[p].mem = opp_add_sat(t->gpu[p].mem, t->gpu[i].mem);
        }
    }
    return 0;
}
