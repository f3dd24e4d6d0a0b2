/* Summary mode's aggregation's own (summary.h): its arena of nodes, the
 * per-thread waiting lists, the processes' GPU rows and the bounded maps
 * of ids, shared by its files: summary_calls.c (nodes, processes and threads,
 * calls), summary_maps.c (the bounded maps, memory blocks),
 * summary_gpu.c (GPU records), summary_write.c (the summary written). */
#ifndef OPP_SUMMARY_INTERNAL_H
#define OPP_SUMMARY_INTERNAL_H

#include <stdint.h>

#include "summary.h"

#define NONE 0u                /* node id 0 is never used */
#define MAP_CAP (1u << 18)     /* entries per map at first */
#define MAP_CAP_MAX (1u << 22) /* the correlation map grows to this while GPU records lag */
#define OPP_SUM_RECENT 256u    /* new label and range nodes a step's late string may name */

struct node {
    uint32_t parent, proc, window, fn;
    uint32_t first, next, prev; /* children; siblings */
    uint32_t hnext, hash;
    uint32_t refs; /* map entries and stubs that point here */
    uint32_t fwd;  /* a stub: merged into this node */
    uint8_t nargs;
    uint8_t state; /* N_FREE, N_LIVE, N_HOLD (a placeholder or a root), N_STUB */
    uint64_t *args;
    uint64_t count, total, self, open, self_cuda;
    int64_t self_mem;
    int64_t cpu_mem; /* MEMORY nodes: bytes allocated minus freed */
};
enum { N_FREE = 0, N_LIVE, N_HOLD, N_STUB };

struct sthread {
    uint32_t proc, tid, window;
    uint32_t hold[OPP_SUM_DEPTH_MAX];      /* placeholder of the call in flight at depth d */
    uint32_t last[OPP_SUM_DEPTH_MAX];      /* the node the last call at depth d went to */
    uint64_t child[OPP_SUM_DEPTH_MAX + 1]; /* durations of depth d calls since the last
                                              call at depth d - 1 */
    struct sthread *next;
};

struct grow_row { /* a GPU op row */
    uint32_t window, type, name, kind, src, dst, device, stream;
    uint64_t count, dur, bytes;
};

struct sproc {
    uint32_t proc, window, nfuncs, root;
    uint32_t *kinds;
    struct grow_row *rows;
    size_t nrows, rows_cap;
    uint64_t dropped;
    uint64_t lost;         /* its entries still needed that the maps' bound made go */
    uint64_t gpu_corr_max; /* the highest correlation id its GPU records have carried */
    /* torch.profiler's steps, a string each (ProfilerStep#N): the string
     * ids known to be a step's + 1 (a set, 0: empty), and the first, which
     * names the calls of them all (opp_sum_string) */
    uint64_t *steps;
    uint32_t nsteps, steps_cap;      /* steps_cap a power of two */
    uint64_t step_name;              /* the first's id + 1, 0: none yet */
    uint32_t recent[OPP_SUM_RECENT]; /* the latest new nodes a step's string may name */
    uint32_t nrecent;                /* made so far (the ring's next slot, modulo) */
    struct sproc *next;
};

/* A bounded map of (a, b) -> v: the oldest entry goes when it is full. */
struct ment {
    uint64_t a, b, v;
    uint32_t hnext;
    uint8_t used;
};
struct bmap {
    struct ment *e; /* cap entries, used as a ring */
    uint32_t *heads;
    uint32_t cap;  /* a power of two */
    uint32_t next; /* the slot the next entry takes (the oldest when full) */
    uint32_t used; /* entries in it */
    /* whether an entry is still needed, so that the map grows rather than
     * lose it (NULL: none is); set by whoever made the map */
    int (*needed)(struct opp_sum *s, const struct ment *e);
};

struct opp_sum {
    struct node *n;
    uint32_t nnodes, cap, max_nodes, live;
    uint32_t free_head; /* freed ids, chained through .next */
    uint32_t *heads;
    uint32_t nheads; /* a power of two */
    struct sthread *threads;
    struct sproc *procs;
    struct sthread *last_t; /* the last looked up: a ring's records come in a row */
    struct sproc *last_p;
    struct bmap corr; /* (proc, corr) -> node of the CUDA call */
    struct bmap ext;  /* (proc, external id) -> node of the library call */
    struct bmap extc; /* (proc, corr) -> external id */
    struct bmap addr; /* (proc, address) -> bytes allocated */
    struct bmap cpu;  /* (proc, address) -> CPU bytes allocated (made at the first) */
    uint64_t calls, dropped, unattached;
    uint64_t lost; /* entries still needed that the maps' bound made go */
    uint32_t map_max; /* the maps' bound: MAP_CAP_MAX (opp_sum_map_max) */
    uint32_t just; /* the node of the call opp_sum_call was last given, or NONE */
    /* that call's thread, depth and whether it was a range when opp_sum_again
     * may count it again (NULL: it may not) */
    struct sthread *again;
    uint32_t again_d;
    int again_range;
    int given;     /* the next MEMORY call's bytes are given_bytes (opp_sum_given_bytes) */
    int64_t given_bytes;
    int joined; /* GPU work comes with its call (opp_sum_op_add): ids are not kept */
};

/* The hash of a key of two numbers. */
static inline uint32_t opp_sum_mix(uint64_t a, uint64_t b)
{
    uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    return (uint32_t)h;
}

/* The process proc of s, or NULL (the calls' and the maps' lookup). */
static inline struct sproc *opp_sum_proc_find(struct opp_sum *s, uint32_t proc)
{
    if (s->last_p && s->last_p->proc == proc)
        return s->last_p;
    for (struct sproc *p = s->procs; p; p = p->next)
        if (p->proc == proc)
            return s->last_p = p;
    return NULL;
}

/* ---- the bounded maps (summary_maps.c) ---- */

/* The maps' bound made cap entries (a power of two from MAP_CAP to
 * MAP_CAP_MAX), before any call: the tests' way past it in fewer calls. */
void opp_sum_map_max(struct opp_sum *s, uint32_t cap);

int opp_bmap_init(struct bmap *m, int (*needed)(struct opp_sum *s, const struct ment *e));
void opp_bmap_free(struct bmap *m);
struct ment *opp_bmap_find(struct bmap *m, uint64_t a, uint64_t b);
/* Insert or replace (summary_maps.c): 1 when an entry's value was let go
 * (replaced, or the oldest entry's, evicted) into *gone, else 0. */
int opp_bmap_put(struct opp_sum *s, struct bmap *m, uint64_t a, uint64_t b, uint64_t v,
                 uint64_t *gone);
void opp_bmap_del(struct bmap *m, struct ment *e);
/* An allocation or free of the block at addr: its bytes (summary_maps.c). */
int64_t opp_sum_block_bytes(struct opp_sum *s, struct bmap *m, uint32_t proc, uint64_t op,
                            uint64_t addr, uint64_t size);

/* ---- nodes, processes (summary_calls.c) ---- */

/* A map entry or stub let go of id: a stub nobody points at is freed (and
 * lets go of what it forwards to). */
void opp_sum_unref(struct opp_sum *s, uint32_t id);
/* The live node a mapped id stands for now (stubs followed). */
uint32_t opp_sum_resolve(const struct opp_sum *s, uint32_t id);
void opp_sum_hash_del(struct opp_sum *s, uint32_t id);
void opp_sum_node_release(struct opp_sum *s, uint32_t id);
void opp_sum_proc_free(struct sproc *p);
/* A string of proc has come (id, text of len bytes): if a profiler step's,
 * the calls it names are its process's steps' (summary_calls.c). 0 or
 * -ENOMEM. */
int opp_sum_string(struct opp_sum *s, uint32_t proc, uint64_t id, const char *text, uint32_t len);

#endif
