/* What a reader that streams a full trace learns in a first read of it,
 * before it reads the calls again for its own ends (step_stream.h,
 * gpu_stream.h): the model without its calls and GPU ops (processes,
 * threads in the loader's order, function tables, names, devices, the GPU
 * memory records and their series, drops and warnings, the count of
 * calls), each thread's latest end and calls, and how many GPU ops the
 * trace has. */
#ifndef OPP_STREAM_META_H
#define OPP_STREAM_META_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/model_read.h"

/* Why a reader that streams opened no stream (its open returned NULL). */
enum opp_stream_refused {
    OPP_STREAM_ERROR,        /* err says what went wrong */
    OPP_STREAM_CANNOT,       /* the pass cannot read it (no room for its sorts): err says why */
    OPP_STREAM_SUMMARY_FILE, /* the trace is a summary trace: loaded, it says what it lacks */
};

struct opp_stream_meta {
    struct opp_loader ld; /* ld.m: the model */
    uint64_t *last;       /* by thread index: the latest end of its calls */
    uint64_t *calls;      /* and how many it made */
    size_t nlast;
    uint64_t gpu_ops;    /* kernels, copies and sets */
    uint64_t open_calls; /* calls a process died inside */
    uint64_t stacked_calls; /* calls recorded with a code stack (OPPROF_STACKS) */
    int64_t *shift;      /* by file: its times onto the first file's clock */
    size_t nfiles;
    int (*each)(void *ctx, uint32_t thread, const struct opp_tr_event *e);
    int (*each_gpu)(void *ctx, uint32_t proc, const struct opp_gpu_rec *g);
    void *ctx;
    int summary, failed;
};

/* The first read of the traces paths[0..n) into *sm, one model as
 * opp_model_load_many makes it: each file's process serials offset
 * (opp_loader_next_file), its times moved onto the first file's clock
 * (sm->shift). each (may be NULL) sees every call with its thread index,
 * each_gpu (may be NULL) every GPU record with its process's serial, so
 * moved; either stops the read by returning non-zero. 0; 1 when a trace
 * is a summary trace (sm->summary; err its path) or a callback stopped
 * it; -1 on error (err says why). *sm is freed by opp_stream_meta_free
 * whatever the result. */
int opp_stream_meta_read_many(struct opp_stream_meta *sm, const char *const *paths, size_t n,
                              int (*each)(void *ctx, uint32_t thread, const struct opp_tr_event *e),
                              int (*each_gpu)(void *ctx, uint32_t proc,
                                              const struct opp_gpu_rec *g),
                              void *ctx, char *err, size_t errlen);
/* The index of thread tid of process serial proc (one it has seen; of
 * the file sm->ld.base says), or -1. */
static inline int64_t opp_stream_meta_thread(struct opp_stream_meta *sm, uint32_t proc,
                                             uint32_t tid)
{
    int64_t ti = opp_loader_thread(&sm->ld, proc, tid);
    return ti >= 0 && (size_t)ti < sm->ld.m->nthreads ? ti : -1;
}
/* Call e of thread ti handed to the join (opp_gpu_join_call): seq its
 * arrival on its thread, at the caller's mark. The join's result, or
 * -EPROTO for a call of no entry point (the reader checks: never). */
struct opp_gpu_join;
int opp_stream_meta_join(const struct opp_stream_meta *sm, struct opp_gpu_join *j, uint32_t ti,
                         const struct opp_tr_event *e, uint32_t seq, uint64_t at);
/* Where call e of thread ti ends: its own end, or for a call its process
 * died inside, where its process ended (opp_open_end, loader.h). */
uint64_t opp_stream_meta_end(const struct opp_stream_meta *sm, uint32_t ti,
                             const struct opp_tr_event *e);
void opp_stream_meta_free(struct opp_stream_meta *sm);

#endif
