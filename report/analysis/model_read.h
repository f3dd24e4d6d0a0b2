/* The reader's callbacks for processes, threads, summary nodes, which
 * fill a model (model_read.c), and a call's thread found on the hot path. */
#ifndef OPP_MODEL_READ_H
#define OPP_MODEL_READ_H

#include "analysis/loader.h"

/* The index of thread tid of process serial proc (this file's), created
 * on first sight as a call of it would create it; -1 when out of memory or
 * the process is unknown. Inline: calls come in runs of one thread, and
 * the one found last is one compare. */
int64_t opp_loader_thread_find(struct opp_loader *ld, uint32_t proc, uint32_t tid);
static inline int64_t opp_loader_thread(struct opp_loader *ld, uint32_t proc, uint32_t tid)
{
    const struct opp_model_index *ix = ld->m->index;
    if (ix->have_last && ix->last_key == ((uint64_t)(proc + ld->base) << 32 | tid))
        return ix->last_thread;
    return opp_loader_thread_find(ld, proc, tid);
}
int opp_loader_on_process(void *ctx, const struct opp_tr_process *tp);
int opp_loader_on_info(void *ctx, uint32_t proc, uint32_t count, const char *const *keys,
                       const char *const *values);
int opp_loader_on_funcs(void *ctx, uint32_t proc, uint32_t count, const struct opp_tr_func *f);
int opp_loader_on_thread(void *ctx, uint32_t proc, uint32_t tid, const char *name);
int opp_loader_on_snode(void *ctx, uint32_t proc, const struct opp_tr_snode *n);
int opp_loader_on_dropped(void *ctx, uint32_t proc, uint32_t tid, uint64_t count, uint32_t why);
int opp_loader_on_process_end(void *ctx, uint32_t proc, uint32_t how, uint64_t end_ns);
int opp_loader_on_process_status(void *ctx, uint32_t proc, uint32_t how, uint32_t code);

#endif
