/* One pass over a full trace, the reader every view's analysis consumes
 * (docs/DESIGN.md, "One pass over a trace"): each call handed over as its
 * thread returned from it, with its children's time, the calls a process
 * died inside ended where their process ended (opp_open_end), torch's folding of
 * an op into itself done (torch_rules.h's rule), each call told when it
 * is known to be top-level, and the GPU work joined to the call that owns
 * it. The reading is written here once; a consumer (steps: step_stream.h) keeps
 * only what it shows, so memory is bounded by the threads, the calls
 * still open and what the consumers keep, not by the calls.
 *
 * Calls of a thread arrive in the order they returned, so a call's
 * children arrive before it: a stack holds the calls no later one has
 * enclosed yet, and each arrival takes in those that begin within it. A
 * call is known to be top-level once nothing can enclose it any more:
 * after a call made at depth 0 (none of ours is running on the thread)
 * and before the next NVTX range that begins earlier (ranges are recorded
 * when they end, at the depth of what they enclose: the first read notes
 * where each begins). A thread whose calls the stack cannot nest as the
 * loaded tree does (out of the order they returned, overlapping without
 * nesting, ties the tree decides by depth, a call that took no time where
 * a later one begins) is kept whole instead, the
 * read made again once, and its tree built as a loaded thread's is
 * (thread_tree.h): memory then grows with that thread's calls. */
#ifndef OPP_PASS_H
#define OPP_PASS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "analysis/gpu_join.h"
#include "analysis/model.h"
#include "analysis/stream_meta.h"

struct opp_gpu_rec;

enum {
    OPP_PASS_LABEL = 1, /* a torch label or nn.Module forward */
    OPP_PASS_OPEN = 2,  /* its process died inside it */
};
#define OPP_PASS_NONE UINT32_MAX

/* A call as the pass hands it over. */
struct opp_pass_call {
    uint64_t begin, end; /* a call its process died inside ends at opp_open_end */
    uint64_t kids_ns;    /* its children's durations (those opp_fold_counts) */
    uint32_t thread;     /* index in the model's threads */
    uint32_t seq;        /* its arrival on its thread (opp_gpu_call.seq) */
    uint32_t name;       /* string id (NVTX ranges and sub-named ops by their own name) */
    uint32_t kind;       /* its entry point's (enum opp_op_kind with flags) */
    uint32_t folded;     /* the seq of its only child, handed over before it, that torch
                            folds into it (torch_rules.h: opp_torch_folds; its children are
                            this call's), or OPP_PASS_NONE */
    int32_t scope;       /* a torch operator's (enum opp_torch_scope), else -1 */
    uint16_t depth;      /* as recorded */
    uint8_t flags;       /* OPP_PASS_* */
    uint32_t fn;         /* its entry point (an index in its process's funcs) */
    uint32_t nkids;      /* its children handed over (each after its own, as call saw them;
                            the one folded into it among them), memory instants too */
    uint32_t stack;      /* its code stack id (OPPROF_STACKS; symbolize.h), 0: none */
    uint32_t nargs;      /* its argument values: to call only (top sees none) */
    const uint64_t *args;
    uint64_t at; /* its place among the calls of the files read, from 0 (the GPU join's
                    opp_gpu_call.at): a read hands most calls over in this order */
    /* A summary trace's node (a counted call: opp_pass_open_summary): the
     * calls it stands for, its schedule window, its own CUDA time, device
     * and CPU memory, given, not joined; NULL: one call. */
    const struct opp_sum_stat *stat;
};

/* What consumes a read: each callback may be NULL. call sees every call
 * of a thread in the order they returned (children first; a call folded
 * into its parent is named by the parent's folded, and is to be
 * forgotten); top sees each call once it is known to be top-level, in
 * tree order (thread_tree.h: begin, the longer first) on each thread.
 * With op, the read joins GPU work to its calls (gpu_join.h): op sees
 * each kernel, copy, set, memory, sync and overhead record of process
 * index proc and keeps op_bytes of it (0), or none (1); once the read is
 * over owned sees each kept with the call that owns it (NULL: none).
 * call, top and op return 0 or -errno, which stops the read. */
struct opp_pass_consumer {
    void *ctx;
    void (*begin)(void *ctx); /* a read starts */
    int (*call)(void *ctx, const struct opp_pass_call *c);
    int (*top)(void *ctx, const struct opp_pass_call *c);
    size_t op_bytes;
    int (*op)(void *ctx, uint32_t proc, const struct opp_gpu_rec *g, void *op);
    void (*owned)(void *ctx, const struct opp_gpu_call *owner, const void *op);
    /* A consumer of the files' order (the Chrome export) has read
     * instead of call and top: the read nests nothing and hands each
     * call over as read (none folded, no children counted; a call its
     * process died inside ended as call's are). process, thread and
     * record see, among the calls as the files give them, each PROCESS
     * record (with the process's index in the model), THREAD record (the
     * thread's index, the name it gives, which a later one may change)
     * and GPU record (its process's index; a kernel's, copy's, set's,
     * sync's and overhead's start and end, a memory record's start, on
     * the first file's clock). */
    int (*read)(void *ctx, const struct opp_pass_call *c);
    int (*process)(void *ctx, uint32_t proc, const struct opp_tr_process *tp);
    int (*thread)(void *ctx, uint32_t thread, const char *name);
    int (*record)(void *ctx, uint32_t proc, const struct opp_gpu_rec *g);
    /* And of the records the pass has no hook for (FUNCS, INFO, DROPPED,
     * PROCESS_END, PROCESS_STATUS), those rest has, as the files give
     * them (proc: the serial in its file), with ctx. */
    const struct opp_tr_visitor *rest;
    /* Another consumer's calls read in the same read (its begin, call and
     * top, each before this one's; its own also, op, owned and files'
     * hooks unused): a step stream's candidates (opp_step_stream_tap)
     * beside the rows, or the table's join. */
    const struct opp_pass_consumer *also;
};

struct opp_pass;

/* The first of a consumer's stack of a thread's calls v[base..n) when it
 * is call seq's, as top hands them over (the pass settles its stack's
 * first): a pointer to it, base moved past it; else NULL (never, but for
 * a bug: the consumer then says EPROTO). */
#define OPP_PASS_STACK_TAKE(v, base, n, seq_)                                                      \
    ((base) < (n) && (v)[base].seq == (seq_) ? &(v)[(base)++] : NULL)

/* A consumer's stack of a thread's calls, v[*base..*n) of elements of
 * size bytes, after its first was settled (*base moved past it): emptied
 * when nothing is left, else the settled ones dropped once they are many
 * and the larger part, so the stack is not moved at each call. */
static inline void opp_pass_stack_settled(void *v, size_t size, size_t *base, size_t *n)
{
    if (*base == *n) {
        *base = *n = 0;
    } else if (*base > 4096 && *base > *n / 2) {
        memmove(v, (char *)v + *base * size, (*n - *base) * size);
        *n -= *base;
        *base = 0;
    }
}

/* The first read of paths[0..npaths) (several: one model as
 * opp_model_load_many makes it, each file's times on the first's clock;
 * paths must outlive the pass): the processes, threads, names, devices,
 * warnings and counts of drops (the model, with no calls), and where each
 * thread's NVTX ranges begin (8 bytes each). NULL and *why:
 * OPP_STREAM_ERROR (err says it), OPP_STREAM_SUMMARY_FILE for a summary
 * trace (err: which of the paths). */
struct opp_pass *opp_pass_open(const char *const *paths, size_t npaths,
                               enum opp_stream_refused *why, char *err, size_t errlen);
/* A summary trace (or several) read as a pass: the model loaded as
 * opp_model_load_many loads it, each read handing each thread's nodes
 * over as counted calls (stat), children first, begin 0 and end their
 * total time, kids_ns what is not their self time, each root then to top;
 * no GPU records (a summary's are the model's). NULL when it cannot be
 * loaded (err). */
struct opp_pass *opp_pass_open_summary(const char *const *paths, size_t npaths, char *err,
                                       size_t errlen);
/* The model of the first read; after a read, its open_events counts the
 * calls a process died inside, less those folded. */
struct opp_model *opp_pass_model(const struct opp_pass *p);
/* What the first read learnt (the model's loader, each thread's calls). */
struct opp_stream_meta *opp_pass_meta(struct opp_pass *p);
/* The traces' first time: the earliest begin of a call or start of a GPU op (0: none, or
 * a time unknown, which opp_pass_first_known_ns leaves out). */
uint64_t opp_pass_first_ns(const struct opp_pass *p);
/* The earliest of those times, begins and ends, that is known: not 0,
 * what a later trace's time before the first's clock began is on it
 * (model.h's opp_clock_shift); 0: none. */
uint64_t opp_pass_first_known_ns(const struct opp_pass *p);
/* And their last: the latest end of either (0: none). */
uint64_t opp_pass_last_ns(const struct opp_pass *p);
/* After a read with op: the records kept that had a correlation id and
 * no call to own them. */
uint64_t opp_pass_unattached(const struct opp_pass *p);
/* The string id of s in the model; UINT32_MAX when out of memory. */
uint32_t opp_pass_intern(struct opp_pass *p, const char *s);
/* One read of the calls (and with c->op the GPU records) handed to c:
 * begin, then the calls; made again, begin first, when a thread turns
 * out to need keeping whole. 0; 1 when the trace cannot be read this way
 * (no room for the GPU join's temporary files; err says why); -1 on error (err). */
int opp_pass_run(struct opp_pass *p, const struct opp_pass_consumer *c, char *err, size_t errlen);
/* What a consumer's read said, in err: failed, the consumer's own -errno
 * (0: none), first, since the pass took it for its own: any but ENOMEM
 * and EPROTO is its temporary files' (1: no room, said), those -1; else
 * rc, opp_pass_run's, as it is. */
int opp_pass_said(int rc, int failed, char *err, size_t errlen);
/* The reads of the calls made so far (a read made again counted; the
 * first read, of what is small, not). */
uint32_t opp_pass_reads(const struct opp_pass *p);
void opp_pass_free(struct opp_pass *p);

#endif
