/* GPU work joined to the calls that caused it while a trace streams, by
 * gpu_attach.c's rules: an op goes to the outermost CUDA call of its
 * process with its correlation id, else to the library call that CUPTI's
 * external correlation ties it to. Calls and records are given in the
 * order the trace has them (which promises no order between the two);
 * they are sorted beyond memory (extsort.h) and joined at the end. */
#ifndef OPP_GPU_JOIN_H
#define OPP_GPU_JOIN_H

#include <stddef.h>
#include <stdint.h>

struct opp_gpu_join;
struct opp_gpu_rec;

/* Where a call is: its thread (an index of the reader's) and place. */
struct opp_gpu_call {
    uint64_t begin, end;
    uint32_t thread, seq; /* seq: the call's arrival on its thread */
    uint32_t depth, open; /* open: its process died inside it */
    uint64_t at;          /* the caller's own mark, handed back */
};

/* op_bytes: what the caller keeps of each op, handed back at the end. */
struct opp_gpu_join *opp_gpu_join_new(size_t op_bytes);
/* A call of process proc (an index) to its function fn, of entry-point
 * kind, and its arguments, every call of a thread in the order the trace
 * has them: kept when it can own GPU work. A torch operator that torch
 * folds into its same-named parent (torch_rules.h) owns none: the work
 * of its external id is the parent's, as torch lifts it, known once its
 * parent is (by depth; the calls its process died inside come last,
 * outermost first: whether a completed child folds into one of those is
 * known at the thread's next call). 0 or -errno. */
int opp_gpu_join_call(struct opp_gpu_join *j, uint32_t proc, uint32_t fn, uint32_t kind,
                      const uint64_t *args, uint32_t nargs, const struct opp_gpu_call *c);
/* An op of process proc with correlation id corr (0: none), op_bytes of
 * op. 0 or -errno. */
int opp_gpu_join_op(struct opp_gpu_join *j, uint32_t proc, uint64_t corr, const void *op);
/* An EXTCORR record of process proc; those of other kinds than ours are
 * left out. 0 or -errno. */
int opp_gpu_join_extcorr(struct opp_gpu_join *j, uint32_t proc, const struct opp_gpu_rec *g);
/* Each op handed to each with the call that owns it, or NULL (an op of
 * no call; *unattached counts those that had a correlation id). 0 or
 * -errno. */
int opp_gpu_join_run(struct opp_gpu_join *j,
                     void (*each)(void *ctx, const struct opp_gpu_call *c, const void *op),
                     void *ctx, uint64_t *unattached);
void opp_gpu_join_free(struct opp_gpu_join *j);

#endif
