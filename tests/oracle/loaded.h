/* The loaded model of every call of a full trace: the tests' second
 * answer, in memory, to what the report computes as it reads (pass.h).
 * A trace's calls appended to their threads, each thread's tree built
 * (thread_tree.h), its calls a process died inside ended, torch's fold
 * done, CPU memory sized, GPU work attached by correlation id, and steps
 * found among the calls; the rows, call paths and rank tables of such a
 * model added up from its events (tables.c), with the report's
 * accumulator (aggregate.h). Tests inspect what
 * a program recorded through it, and hold the pass's answers to it on
 * real programs' traces. */
#ifndef TU_ORACLE_LOADED_H
#define TU_ORACLE_LOADED_H

#include <stddef.h>

#include "analysis/aggregate.h"
#include "analysis/callpath_tree.h"
#include "analysis/model.h"
#include "analysis/step_times.h"

/* The trace at path (a summary trace too), or several as one model
 * (opp_model_load_many's clocks); NULL with err said. */
struct opp_model *tu_model_load(const char *path, char *err, size_t errlen);
struct opp_model *tu_model_load_many(const char *const *paths, size_t npaths, char *err,
                                     size_t errlen);

/* The calls event i of t stands for: 1, or a summary node's count. */
static inline uint64_t tu_event_calls(const struct opp_thread *t, size_t i)
{
    return t->stat ? t->stat[i].count : 1;
}

/* ---- gpu_attach.c, cpu_memory.c: what the load does once every call is in ---- */
/* The external id of a torch operator folded into a same-named parent
 * (load.c), with the event that owns its GPU work: the nearest one kept
 * above (torch lifts a removed op's kernels to its parent). */
struct tu_lifted {
    uint64_t external;
    uint32_t proc, thread, event;
};
/* m's GPU work attached to its events, folded ops' ids lifted[0..nlifted)
 * going to their owners'. 0 or -1. */
int tu_loaded_gpu_attach(struct opp_model *m, const struct tu_lifted *lifted, size_t nlifted);
/* gpu_totals.c: event event of t's GPU work (t->gpu made on first need),
 * NULL when out of memory; and each event's totals, a summary node's own
 * from the file, then its children's added. 0 or -1. */
struct opp_event_gpu *tu_loaded_event_gpu(struct opp_thread *t, uint32_t event);
int tu_loaded_gpu_totals(struct opp_model *m);
int tu_loaded_cpu_memory(struct opp_model *m);
/* Some thread of m has CPU memory (a MEMORY event, or a summary's MEMORY
 * node). */
int tu_model_has_cpu_mem(const struct opp_model *m);
/* A MEMORY event's bytes: + allocated, - freed (its allocation's size,
 * once loaded), 0 for anything else. */
int64_t tu_cpu_mem_bytes(const struct opp_model *m, const struct opp_thread *t,
                         const struct opp_event *e);

/* ---- tables.c: the rows, call paths and rank tables of a loaded model,
 * from its events in tree order, as the pass's consumers add them up ---- */
/* The trace's first time: the earliest begin of an event or start of a
 * GPU op (0 for an empty trace). */
uint64_t tu_model_first_ns(const struct opp_model *m);
/* 0, or -ENOMEM. The rows point into m: free them before the model. */
int tu_aggregate(const struct opp_model *m, const struct opp_agg_opts *o, struct opp_agg *out);
/* The events of the threads that o's pid/tid filters select merged by
 * call path (sort and limit are ignored). 0, or -ENOMEM. */
int tu_calltree_build(const struct opp_model *m, const struct opp_agg_opts *o,
                      struct opp_calltree *ct);
/* tu_aggregate of model ctx for each of o[0..n) (opp_rank_aggregate_fn). */
int tu_rank_aggregates(void *ctx, const struct opp_agg_opts *o, size_t n, struct opp_agg *out);

/* ---- codetree.c: the code-frame tree of every loaded call ----
 * 0; 1 when no event of m has a code stack (ct is then empty); -ENOMEM. */
struct opp_codetree;
int tu_codetree_build(const struct opp_model *m, struct opp_codetree *t);

/* ---- steps.c: the steps of the loaded calls (step_stream.h's rules) ----
 * A range (an NVTX range, a torch label or nn.Module forward) is a step by
 * itself: CPU = its CPU total minus its self time, GPU = its CUDA total.
 * Any other operator marks boundaries: a step runs from the end of one
 * call to the end of the next on the same thread (a call ending inside
 * the one before marks none), and holds the calls that begin in it. 0 (n
 * may be 0) or -ENOMEM. */
int tu_steps_find(const struct opp_model *m, const struct opp_agg_opts *o, const char *name,
                  struct opp_steps *out);
/* The program's own steps (opp_steps_default_what says which). */
int tu_steps_default(const struct opp_model *m, const struct opp_agg_opts *o, struct opp_steps *out,
                     char *what, size_t cap_what);
/* The windows a schedule recorded, as opp_profiler_windows_of makes them. */
int tu_profiler_windows(const struct opp_model *m, struct opp_window **out, size_t *n);

#endif
