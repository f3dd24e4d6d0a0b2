/* The trace loader's own state, shared by the files that fill a model
 * (model.h): load.c (the load and the model's end), loader.c (arrays,
 * strings), model_read.c (processes, threads, summary nodes),
 * gpu_records.c (GPU records), names.c (names given once the whole trace
 * is read), cpu_memory.c and gpu_memory.c; the pass's first
 * read (stream_meta.c) and the tests' loaded model of every call
 * (tests/oracle) fill theirs with them. Not for readers of a model, but
 * for its helpers every analysis (and export) file shares: uthash that
 * says running out of memory, growing arrays, "out of memory" said. */
#ifndef OPP_LOADER_H
#define OPP_LOADER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* uthash reports running out of memory through this flag instead of exiting:
 * a table is added to only through OPP_HASH_ADD and OPP_HASH_ADD_KEYPTR. */
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(elt) (hash_oom = 1)
#include <uthash.h>

/* uthash's HASH_ADD (elt's key its member field, len bytes) and
 * HASH_ADD_KEYPTR (its key len bytes at keyptr) of elt into head, hh its
 * handle: 0, or -1 when out of memory (elt not added, still the
 * caller's). */
#define OPP_HASH_ADD(head, field, len, elt)                                                        \
    ({                                                                                             \
        int hash_oom = 0;                                                                          \
        HASH_ADD(hh, head, field, len, elt);                                                       \
        hash_oom ? -1 : 0;                                                                         \
    })
#define OPP_HASH_ADD_KEYPTR(head, keyptr, len, elt)                                                \
    ({                                                                                             \
        int hash_oom = 0;                                                                          \
        HASH_ADD_KEYPTR(hh, head, keyptr, len, elt);                                               \
        hash_oom ? -1 : 0;                                                                         \
    })

#include "analysis/model.h"

struct str_ent {
    uint32_t id;
    UT_hash_handle hh; /* key: the string itself (model->strs[id]) */
};

struct proc_ent {
    uint32_t proc; /* key: serial in the trace */
    uint32_t index;
    UT_hash_handle hh;
};

struct thread_ent {
    uint64_t key; /* proc serial << 32 | tid */
    uint32_t index;
    UT_hash_handle hh;
};

/* A process's GPU string id -> our string id. */
struct gpu_str_ent {
    uint64_t key; /* proc index << 32 | the process's id */
    uint32_t str;
    UT_hash_handle hh;
};

struct opp_model_index {
    struct str_ent *strs;
    struct proc_ent *procs;
    struct thread_ent *threads;
    struct gpu_str_ent *gpu_strs;
    uint64_t last_key; /* events come in runs of one thread */
    uint32_t last_thread;
    int have_last;
};

struct opp_loader {
    struct opp_model *m;
    /* Several traces in one model: this file's process serials are offset
     * by base, its times moved by shift onto the first file's clock. */
    uint32_t base;
    int64_t shift;
    int have_ref, have_shift;
    int64_t ref; /* the first file's realtime - monotonic */
    size_t procs_cap, threads_cap, strs_cap;
    size_t ops_cap, launches_cap, mem_cap, devices_cap, extcorr_cap;
    int failed; /* errno of the first failure, which stops the reader */
};

/* A time of this file on the first file's clock. */
static inline uint64_t opp_loader_shifted(const struct opp_loader *ld, uint64_t t)
{
    return opp_clock_shift(t, ld->shift);
}

/* Call te of this file on the first file's clock: te itself when this
 * file's is (the first, or one of no offset), else the copy in *tmp
 * (its header and the arguments it has, not all OPP_MAX_ARGS). */
static inline const struct opp_tr_event *opp_loader_event_shifted(const struct opp_loader *ld,
                                                                  const struct opp_tr_event *te,
                                                                  struct opp_tr_event *tmp)
{
    if (!ld->shift)
        return te;
    memcpy(tmp, te, offsetof(struct opp_tr_event, args));
    memcpy(tmp->args, te->args,
           (te->nargs < OPP_MAX_ARGS ? te->nargs : OPP_MAX_ARGS) * sizeof *te->args);
    tmp->begin_ns = opp_loader_shifted(ld, te->begin_ns);
    tmp->end_ns = opp_loader_shifted(ld, te->end_ns);
    return tmp;
}

static inline uint32_t opp_clamp_u32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* A correlation id as the agent records them (CUPTI's, extended past its
 * 32-bit wrap); 0, the unknown one, for all ones. */
static inline uint64_t opp_corr_id(uint64_t v)
{
    return v == UINT64_MAX ? 0 : v;
}

/* Where a call its process died inside ends: when the process ended
 * (end_how set), or its thread's last call did, whichever is later; never
 * before it began. */
static inline uint64_t opp_open_end(uint64_t begin, uint64_t thread_last, uint32_t end_how,
                                    uint64_t proc_end)
{
    uint64_t last = end_how && proc_end > thread_last ? proc_end : thread_last;
    return last > begin ? last : begin;
}

/* ---- loader.c ---- */

/* err made "out of memory": -1, what a function that fills err returns
 * then. */
int opp_err_oom(char *err, size_t errlen);
/* Grow *arr (of elements of size sz) to hold at least need; 0 or -ENOMEM.
 * Inline: the common case, room left, is one compare per event. */
int opp_loader_grow_to(void **arr, size_t *cap, size_t need, size_t sz);
static inline int opp_loader_grow(void **arr, size_t *cap, size_t need, size_t sz)
{
    return need <= *cap ? 0 : opp_loader_grow_to(arr, cap, need, sz);
}
/* Grow *arr (*n elements of size sz) to need elements at least, the new
 * ones zeroed (tables indexed by thread or depth); 0 or -1. */
int opp_loader_grow_zeroed(void **arr, size_t *n, size_t need, size_t sz);
/* The id of s, interned; UINT32_MAX when out of memory. */
uint32_t opp_loader_intern(struct opp_loader *ld, const char *s);
/* The process with this serial (the file's base added), NULL when not declared. */
struct opp_process *opp_loader_proc(const struct opp_model *m, uint32_t proc);
/* Note the first failure (an errno); returns 1, which stops the reader. */
int opp_loader_fail(struct opp_loader *ld, int err);
/* Several traces in one model: file i (from 0) is read next, its process
 * serials offset and its clock paired anew (opp_loader_on_process). */
void opp_loader_next_file(struct opp_loader *ld, size_t i);
/* File path's summary (the reader's, of a file after the first) added to
 * the model's: complete if all are, the counts summed, the first warning
 * kept with its file's name. */
void opp_loader_add_summary(struct opp_model *m, const struct opp_tr_summary *sum,
                            const char *path);

/* ---- load.c ---- */

/* The model of paths[0..n) (several: one model, each file's times on the
 * first's clock), read with the loader's callbacks and event for each
 * call (its context a struct opp_loader), then finished by finish (0, or
 * an errno). NULL with err said. */
struct opp_model *opp_loader_load(const char *const *paths, size_t n,
                                  int (*event)(void *ctx, const struct opp_tr_event *te),
                                  int (*finish)(struct opp_loader *ld), char *err, size_t errlen);

/* ---- gpu_records.c: the reader's callbacks for GPU records ----
 * While loading, an op's and a device's name hold the process's string id
 * (STRING records may come after the records that use them); names.c turns
 * them into our string ids once the whole trace is read. */

int opp_loader_on_gpu(void *ctx, uint32_t proc, const struct opp_gpu_rec *g);
int opp_loader_on_sgpu(void *ctx, uint32_t proc, const struct opp_tr_sgpu *r);
/* Our string id of process pi's string id, or UINT32_MAX. */
uint32_t opp_loader_gpu_str(const struct opp_model *m, uint32_t pi, uint32_t id);
/* The devices by id, for opp_gpu_device_find. */
void opp_loader_sort_devices(struct opp_gpu *gpu);

/* ---- names.c ---- */

/* Events not named after their entry point (NVTX ranges, sub-named
 * operators) renamed. 0 or -1 (out of memory). */
int opp_loader_event_names(struct opp_loader *ld);
/* One event's name: its entry point's, or the one given above (process
 * index pi, entry point fn, its arguments). *cache keeps sub-names between
 * calls (NULL at first; opp_loader_name_cache_free). UINT32_MAX when out
 * of memory. */
struct opp_name_cache;
uint32_t opp_loader_event_name(struct opp_loader *ld, struct opp_name_cache **cache, uint32_t pi,
                               uint32_t fn, const uint64_t *args, uint32_t nargs);
void opp_loader_name_cache_free(struct opp_name_cache *c);
/* Every op's and device's name as our string id. 0 or -1. */
int opp_loader_gpu_names(struct opp_loader *ld);
/* Each process whose parent_proc names no process of the model, linked
 * to its parent when that is in its file too: one that connected after
 * its child (processes connect at their first record), the first such
 * instance of its pid that started no later than the child and is not
 * its child. 0 or -1. */
int opp_loader_parents(struct opp_model *m);
/* The cache of demangled names opp_loader_op_name fills, one for each of
 * m's string ids, none yet, *ndem of them; NULL when out of memory. */
uint32_t *opp_loader_dem_new(const struct opp_model *m, uint32_t *ndem);
/* One op's (as opp_gpu_op_decode gives it): dem[0..ndem) caches the
 * demangled name of each of our string ids (UINT32_MAX: not yet), as
 * opp_loader_gpu_names keeps it. UINT32_MAX when out of memory. */
uint32_t opp_loader_op_name(struct opp_loader *ld, const struct opp_gpu_op *op, uint32_t *dem,
                            uint32_t ndem);

/* ---- cpu_memory.c ---- */

/* The MEMORY columns (op, address, bytes) of event e of t, NULL when it
 * is not a MEMORY event or has too few arguments. */
uint64_t *opp_loader_mem_cols(const struct opp_model *m, const struct opp_thread *t,
                              const struct opp_event *e);
/* model->cpu.summed set when a summary thread has MEMORY nodes. 0. */
int opp_loader_cpu_summed(struct opp_model *m);
/* MEMORY columns a's bytes signed: + allocated, - freed, 0 for another
 * op; bytes the block's. */
int64_t opp_cpu_mem_signed(const uint64_t *a, uint64_t bytes);

/* ---- gpu_memory.c ---- */

/* Memory records sorted by time, each free without a size given the size of
 * the allocation at its address, and one series per device. 0 or -1. */
int opp_loader_gpu_memory(struct opp_gpu *gpu);

#endif
