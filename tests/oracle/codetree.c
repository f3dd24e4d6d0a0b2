/* The tests' loaded model's code-frame tree (loaded.h): every loaded call
 * added to it in tree order, as the pass adds each call it hands over
 * (table_stream.c). */
#include <errno.h>
#include <string.h>

#include "analysis/codestack_tree.h"
#include "oracle/loaded.h"

int tu_codetree_build(const struct opp_model *m, struct opp_codetree *t)
{
    memset(t, 0, sizeof *t);
    int any = 0;
    for (size_t k = 0; k < m->nthreads && !any; k++)
        for (size_t i = 0; i < m->threads[k].nevents && !any; i++)
            any = m->threads[k].events[i].stack != 0;
    if (!any)
        return 1;
    struct opp_codetree_acc *x = opp_codetree_acc_new(t);
    if (!x)
        return -ENOMEM;
    int rc = 0;
    for (size_t k = 0; k < m->nthreads && !rc; k++) {
        const struct opp_thread *th = &m->threads[k];
        for (size_t i = 0; i < th->nevents && !rc; i++) {
            const struct opp_event *e = &th->events[i];
            struct opp_codetree_call c = {.proc = th->proc,
                                          .stack = e->stack,
                                          .name = opp_model_str(m, e->name),
                                          .self_ns = e->self_ns,
                                          .total_ns = e->end_ns - e->begin_ns,
                                          .self_cuda_ns = th->gpu ? th->gpu[i].self_cuda_ns : 0,
                                          .cuda_total_ns = th->gpu ? th->gpu[i].cuda_ns : 0,
                                          .thread = (uint32_t)k,
                                          .seq = (uint32_t)i, /* in tree order already */
                                          .begin = e->begin_ns,
                                          .end = e->end_ns,
                                          .depth = e->depth};
            rc = opp_codetree_acc_add(x, m->code, &c);
        }
    }
    if (rc) {
        opp_codetree_acc_drop(x);
        return rc;
    }
    return opp_codetree_acc_finish(x);
}
