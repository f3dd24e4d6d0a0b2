/* The table stream's state (table_stream.h), shared by the files that
 * answer its questions: table_stream.c (the questions, and the read that
 * adds each call up into their rows, paths and code frames),
 * table_join.c (the first read, joining the GPU work and sizing the CPU
 * frees once for every question, and what each question's read takes
 * of it), table_paths.c (--tree's call paths). Not for other readers. */
#ifndef OPP_TABLE_INTERNAL_H
#define OPP_TABLE_INTERNAL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/aggregate.h"
#include "analysis/callpath_tree.h"
#include "analysis/codestack_tree.h"
#include "analysis/extsort.h"
#include "analysis/loader.h" /* uthash, out of memory: hash_oom */
#include "analysis/mem_records.h"
#include "analysis/pass.h"

/* A kernel, copy or set as the join leaves it: its owner's thread
 * (OPP_GPU_NONE: no call), kept beyond memory (sorted by its place among
 * the records, extsort.h) for each question's CUDA rows. */
struct gown {
    uint64_t idx, time, dur, bytes;
    uint64_t call; /* its owning call's begin, UINT64_MAX: none */
    uint32_t name, type, proc, thread;
};

/* The kernels, copies and sets the filters select, by name, type and
 * process: the table's CUDA rows, added to each read of the calls. */
struct gkey {
    uint32_t name, type, proc, acc;
};

struct grow_ {
    struct gkey k;
    uint64_t dur, bytes, calls;
    UT_hash_handle hh;
};

/* GPU time or device memory of a call (at: its place among the calls),
 * sorted by that place beyond memory (extsort.h): the second read takes
 * them as it hands the calls over, most in that order. */
struct own {
    uint64_t at, cuda;
    int64_t mem, cpu; /* device memory; a CPU memory call's bytes */
};

#define OWN_SORT_MEM (8u << 20) /* bytes the sort keeps in memory */

struct ptree; /* --tree's call paths (table_paths.c) */

/* --group-by-stack: calls whose key waits on the names of the calls
 * around them, which come after them, added up by what their row's
 * numbers take (the row without the stack, kind, status), the aggregate
 * they go to and the names so far, innermost first. */
struct skey {
    uint64_t row;
    int64_t status;
    uint32_t kind, acc, nstack;
    uint32_t stack[OPP_STACK_MAX];
};

struct skeep {
    struct skey k; /* zeroed before it is filled: hashed whole */
    struct opp_agg_sum sum;
    UT_hash_handle hh;
};

/* A call handed over whose parent has not arrived yet. */
struct ent {
    uint64_t calls; /* it stands for: 1, a summary node's count */
    uint64_t self_ns, dur;
    struct ptree *pt; /* --tree: its subtree; NULL: a call with no children */
    struct skeep *sk; /* --group-by-stack: the calls under it whose key waits */
    uint64_t begin;   /* code frames: its place in tree order, its stack */
    uint32_t stack;
    uint16_t depth;
    uint32_t acc;  /* the aggregate it goes to */
    uint64_t span; /* end - begin, as callpath_tree.c adds it */
    uint32_t name;
    struct opp_agg_vals v;
    struct opp_event_gpu gpu;
    /* CPU memory: a call's self and total; a memory call's bytes for the
     * operator around it (self) and what passes through it (total) */
    int64_t self, total;
    uint32_t seq;
    uint8_t sel, mem;
    uint8_t keyed; /* its row's key is whole (not grouped by stack, or by its Python frames) */
};

struct tthread {
    struct ent *e; /* e[base..n): as the pass's stack */
    size_t base, n, cap;
};

/* One question a read answers (several in one read: opp_table_stream_ask). */
struct tq {
    const struct opp_agg_opts *o;
    /* the aggregates made at once (o[k] into out[k]: their processes or
     * threads apart), and which one each thread's calls and each
     * process's ops of no call go to (-1: none) */
    size_t nacc;
    struct opp_agg_acc **acc;
    struct opp_agg *out;
    int32_t *thread_acc, *proc_acc;
    struct grow_ *gpu;             /* the CUDA rows */
    struct ptree *tree;            /* --tree: the call paths; NULL: the table */
    struct opp_codetree *code;     /* code frames: the tree; NULL: the table */
    struct opp_codetree_acc *cacc; /* and what adds it up */
    struct tthread *th;            /* by thread: its calls whose parent is still to come */
    uint8_t *tried;                /* --match: names tried, by string id */
    size_t ntried;
    int matched; /* some call's or GPU op's name matched */
};

struct opp_table_stream {
    struct opp_pass *pass;
    struct opp_model *m;
    struct tq *q; /* the read's questions */
    size_t nq;
    uint64_t *calls; /* by thread: its calls, those folded into a parent apart */
    uint32_t *dem, ndem;
    uint64_t nrec;
    /* the join, made by the first question's first read and kept for the
     * others: each owning call's GPU time and memory (owns), each kernel,
     * copy and set with its owner (gowns) */
    int joined;
    struct opp_extsort *owns;  /* struct own by at */
    struct opp_extsort *gowns; /* struct gown by idx */
    struct own cur;            /* the next of owns, if have_cur */
    int have_cur, reads;
    uint64_t next_at;  /* the place after the last call taken in order */
    struct own *stash; /* owns' records passed before their calls came (by at) */
    size_t nstash, stash_cap;
    struct opp_mrec *gmem; /* device memory records */
    size_t ngmem, gmem_cap;
    struct opp_extsort *cmem; /* CPU memory calls by time (opp_mrec_cmp_time) */
    int matched;              /* the last read's (of one question): its matched */
    int cpu_mem;              /* some CPU MEMORY call */
    int failed;               /* -errno */
};

static inline int tstream_fail(struct opp_table_stream *s, int rc)
{
    if (!s->failed)
        s->failed = rc;
    return rc;
}

/* Whether a call of thread index thread that begins at t is in o's
 * window (aggregate.h). */
static inline int tstream_call_in_window(const struct opp_table_stream *s,
                                         const struct opp_agg_opts *o, uint32_t thread, uint64_t t)
{
    return !o->window || opp_agg_call_in_window(o, opp_pass_model(s->pass)->threads[thread].proc,
                                                t - opp_pass_first_ns(s->pass));
}

/* Whether GPU op g is in o's window (aggregate.h's opp_agg_gpu_in_window). */
static inline int tstream_gpu_in_window(const struct opp_table_stream *s,
                                        const struct opp_agg_opts *o, const struct gown *g)
{
    uint64_t first = opp_pass_first_ns(s->pass); /* g's times are not before it */
    return !o->window ||
           opp_agg_gpu_in_window(o, g->proc, g->time - first,
                                 g->call == UINT64_MAX ? UINT64_MAX : g->call - first);
}

/* What a read said, in err: its result, or the consumer's failure. */
static inline int tstream_said(struct opp_table_stream *s, int rc, char *err, size_t errlen)
{
    if (s->failed == -ESTALE) { /* never: the first read kept the threads whole */
        snprintf(err, errlen, "a thread's calls came in another order than when read first");
        return 1;
    }
    return opp_pass_said(rc, s->failed, err, errlen);
}

/* ---- table_join.c ---- */

/* The join's results gone: the next question joins again. */
void opp_tstream_unjoin(struct opp_table_stream *s);
/* A read of the calls starts: owns read from its first record. 0 or -errno. */
int opp_tstream_owns_rewind(struct opp_table_stream *s);
/* Call at's GPU time and device memory into o (zero: none), as the read
 * hands the calls over. 0 or -errno. */
int opp_tstream_own_take(struct opp_table_stream *s, uint64_t at, struct own *o);

/* ---- table_paths.c: --tree's call paths ---- */

/* An empty tree of call paths, NULL when out of memory. */
struct ptree *opp_tpaths_new(void);
/* Tree t emptied, for a read made again. */
void opp_tpaths_clear(struct ptree *t);

/* Call e's subtree merged into t under node at (OPP_CT_ROOT: as a root);
 * folded: e is gone, its children are at's. 0 or -ENOMEM. */
int opp_tpaths_merge(struct ptree *t, uint32_t at, const struct ent *e, int folded);
/* Call e's subtree: it and its children c[0..n) (folded: that one's
 * seq). 0 or -ENOMEM. */
int opp_tpaths_subtree(struct ent *e, const struct ent *c, uint32_t n, uint32_t folded);
void opp_tpaths_free(struct ptree *t);
/* The call paths t merged into ct (t freed, whatever rc, the read's). rc,
 * or -1 (out of memory, said in err). */
int opp_tpaths_calltree(struct ptree *t, struct opp_calltree *ct, int rc, char *err, size_t errlen);

#endif
