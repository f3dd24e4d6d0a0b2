/* CPU memory of a loaded model (loader.h): whether a summary's nodes
 * have any, the sign of a MEMORY call's bytes; and a MEMORY call's bytes
 * as a read meets them. */
#include <stdlib.h>
#include <string.h>

#include "analysis/live_blocks.h"
#include "analysis/loader.h"
#include "ops.h"

uint64_t *opp_loader_mem_cols(const struct opp_model *m, const struct opp_thread *t,
                              const struct opp_event *e)
{
    uint32_t kind = opp_event_func(m, t, e)->kind;
    if (opp_kind_base(kind) != OPP_OP_MEMORY)
        return NULL;
    const uint64_t *a = opp_event_args(t, e);
    if (opp_op_args(kind, &a, e->nargs) < OPP_COL_MEM_COLS)
        return NULL;
    return t->args + (a - t->args);
}

int64_t opp_cpu_mem_signed(const uint64_t *a, uint64_t bytes)
{
    int64_t b = bytes > INT64_MAX ? INT64_MAX : (int64_t)bytes;
    return a[OPP_COL_MEM_OP] == OPP_MEM_ALLOC ? b : a[OPP_COL_MEM_OP] == OPP_MEM_FREE ? -b : 0;
}

int64_t opp_cpu_mem_bytes_read(struct opp_live *live, uint64_t owner, uint32_t kind,
                               const uint64_t *args, uint32_t nargs, int *oom)
{
    const uint64_t *a = args;
    if (opp_kind_base(kind) != OPP_OP_MEMORY || !a ||
        opp_op_args(kind, &a, nargs) < OPP_COL_MEM_COLS)
        return 0;
    uint64_t bytes = a[OPP_COL_MEM_BYTES];
    if (a[OPP_COL_MEM_OP] == OPP_MEM_FREE) {
        int found;
        int64_t had = opp_live_take(live, owner, a[OPP_COL_MEM_ADDRESS], &found);
        if (found && !bytes)
            bytes = (uint64_t)had;
    } else if (a[OPP_COL_MEM_OP] == OPP_MEM_ALLOC &&
               opp_live_put(live, owner, a[OPP_COL_MEM_ADDRESS], (int64_t)bytes)) {
        *oom = -1;
    }
    return opp_cpu_mem_signed(a, bytes);
}

/* Whether a summary thread has MEMORY nodes. */
static int summed(const struct opp_model *m, const struct opp_thread *t)
{
    for (size_t i = 0; t->stat && i < t->nevents; i++)
        if (opp_loader_mem_cols(m, t, &t->events[i]))
            return 1;
    return 0;
}

int opp_loader_cpu_summed(struct opp_model *m)
{
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        struct opp_thread *t = &m->threads[ti];
        m->cpu.summed |= summed(m, t);
    }
    return 0;
}
