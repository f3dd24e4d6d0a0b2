/* Memory records in time order, sized (mem_records.h). */
#include "analysis/mem_records.h"

#include <errno.h>

#include "analysis/extsort.h"
#include "ops.h"

int opp_mrec_cols(uint32_t kind, const uint64_t *args, uint32_t nargs, const uint64_t **cols)
{
    if (opp_kind_base(kind) != OPP_OP_MEMORY)
        return 0;
    *cols = args;
    return opp_op_args(kind, cols, nargs) >= OPP_COL_MEM_COLS;
}

int opp_mrec_any_calls(const struct opp_model *m)
{
    for (size_t p = 0; p < m->nprocs; p++)
        for (size_t i = 0; i < m->procs[p].nfuncs; i++)
            if (opp_kind_base(m->procs[p].funcs[i].kind) == OPP_OP_MEMORY)
                return 1;
    return 0;
}

int opp_mrec_of_call(const struct opp_model *m, const struct opp_pass_call *x, struct opp_mrec *r)
{
    const uint64_t *a;
    if (!opp_mrec_cols(x->kind, x->args, x->nargs, &a))
        return 0;
    /* a thread's instants at one time in tree order: the shallower first */
    *r = (struct opp_mrec){
        .time = x->begin,
        .idx = (uint64_t)x->depth << 32 | x->seq,
        .addr = a[OPP_COL_MEM_ADDRESS],
        .at = x->at,
        .bytes = (int64_t)(a[OPP_COL_MEM_BYTES] > INT64_MAX ? INT64_MAX : a[OPP_COL_MEM_BYTES]),
        .proc = m->threads[x->thread].proc,
        .thread = x->thread,
        .seq = x->seq,
        .op = (uint32_t)a[OPP_COL_MEM_OP]};
    return 1;
}

int opp_mrec_cmp_time(const void *pa, const void *pb)
{
    const struct opp_mrec *a = pa, *b = pb;
    OPP_SORT_BY(a->time, b->time);
    OPP_SORT_BY(a->proc, b->proc);
    OPP_SORT_BY(a->thread, b->thread);
    OPP_SORT_BY(a->idx, b->idx);
    return 0;
}

int opp_mrec_size(struct opp_live *live, struct opp_mrec *r, uint32_t alloc, uint32_t fre)
{
    if (r->op == fre) {
        int found;
        int64_t bytes = opp_live_take(live, r->proc, r->addr, &found);
        if (found && !r->bytes)
            r->bytes = bytes;
        r->bytes = -r->bytes;
    } else if (r->op == alloc) {
        return opp_live_put(live, r->proc, r->addr, r->bytes) ? -ENOMEM : 0;
    } else {
        r->bytes = 0;
    }
    return 0;
}
