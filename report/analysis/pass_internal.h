/* The pass's state (pass.h), shared by the files that read a trace as
 * one: pass.c (a full trace's calls, each as its thread returned from
 * it) and pass_summary.c (a summary trace's nodes as counted calls). Not
 * for other readers. */
#ifndef OPP_PASS_INTERNAL_H
#define OPP_PASS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/stream_meta.h"

struct pthread; /* a thread's calls as they arrive (pass.c) */
struct opp_name_cache;
struct opp_gpu_join;
struct opp_pass_consumer;

struct opp_pass {
    const char *const *paths; /* several: one model, as opp_model_load_many makes it */
    size_t npaths;
    const char *path; /* the one being read */
    struct opp_stream_meta meta;
    struct opp_name_cache *names;
    struct pthread *th;
    size_t nth;
    const struct opp_pass_consumer *c;
    struct opp_gpu_join *join;
    char *op;           /* the op being kept */
    int failed;         /* errno */
    const char *cannot; /* why the trace cannot be read this way */
    char why[256];
    uint64_t open;        /* calls the process died inside, folding done */
    uint64_t unattached;  /* records kept with a correlation id and no call */
    uint64_t first;       /* the earliest begin of a call or start of a GPU op */
    uint64_t first_known; /* the earliest of their times but 0 (unknown) */
    uint64_t last;        /* the latest end of either */
    int again;            /* a thread is kept whole from now on: the read is made again */
    uint64_t at;          /* calls read so far */
    uint32_t reads;       /* of the calls (opp_pass_reads) */
    /* how opp_pass_run reads another kind of trace: a summary trace's
     * nodes (pass_summary.c); NULL for a full trace's calls */
    int (*run)(struct opp_pass *p, const struct opp_pass_consumer *c, char *err, size_t errlen);
};

/* A pass over paths[0..npaths) with nothing read yet; NULL when out of
 * memory (err). */
struct opp_pass *opp_pass_new(const char *const *paths, size_t npaths, char *err, size_t errlen);

#endif
