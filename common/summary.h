/* Summary mode (OPPROF_MODE=summary): calls aggregated as they arrive into
 * a tree of call paths, so a run of any length gives a trace of constant
 * size whose report is the same key_averages table. Used by the collector
 * (records from the rings) and by `opprof summarize` (events of a full
 * trace), so both make the same file from the same calls.
 *
 * A node is every call with the same call path: the same process, window,
 * enclosing node, entry point and identity arguments (opp_op_identity:
 * the shapes, the NVTX message, the status; not a correlation id or an
 * NVTX payload). torch.profiler's steps, a string each (ProfilerStep#N),
 * are one node: the first step's string names them all, as the report's
 * table keys them (one row), so the nodes do not grow with the steps;
 * strings come through opp_sum_gpu. It holds the calls' count, total and
 * self time (self = duration minus the direct children's, as the report's
 * call tree has it), how many were open (the process died inside them),
 * and the GPU work and device memory attached to them through CUPTI
 * correlation ids.
 *
 * Calls of a thread arrive in the order they returned, so a call's children
 * arrive before it: they wait under a placeholder for their depth until
 * the call itself arrives, and then join (or merge into) its node. */
#ifndef OPP_SUMMARY_H
#define OPP_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "gpu.h"

#define OPP_SUM_DEPTH_MAX 64u /* deeper calls count as this depth */
#define OPP_SUM_NODES_DEFAULT (1u << 20) /* call paths kept unless told otherwise */
#define OPP_SUM_NODES_MAX (1u << 28)     /* the most that may be asked for */

struct opp_sum;
struct opp_tw;

/* max_nodes bounds memory: past it, a call on a new call path is dropped
 * and counted (opp_sum_write writes the count as a DROPPED chunk). */
struct opp_sum *opp_sum_new(uint32_t max_nodes);
void opp_sum_free(struct opp_sum *s);

/* Process proc's entry-point table (its kinds are kept), before its calls.
 * 0 or -ENOMEM. */
struct opp_func_desc;
int opp_sum_proc(struct opp_sum *s, uint32_t proc, uint32_t nfuncs,
                 const struct opp_func_desc *funcs);
/* The window thread tid's later calls belong to (schedule windows from 1;
 * 0: none). 0, or -ENOMEM. */
int opp_sum_window(struct opp_sum *s, uint32_t proc, uint32_t tid, uint32_t window);
/* One call of thread tid of proc, in the order the thread's calls returned.
 * Times are the process's ticks. 0, or -ENOMEM. */
#define OPP_SUM_OPEN 1u  /* the process died inside it */
#define OPP_SUM_RANGE 2u /* recorded when it ended, not entered (OPP_REC_RANGE): the calls
                            made during it are not its children, so it has no self time
                            and is not a child's time of its parent */
int opp_sum_call(struct opp_sum *s, uint32_t proc, uint32_t tid, uint32_t fn, uint32_t depth,
                 uint64_t begin, uint64_t end, uint32_t nargs, const uint64_t *args,
                 unsigned flags);
/* The call opp_sum_call was last given, again, with these times: the same
 * thread's next call, with the same entry point, depth, arguments and
 * flags (most calls of a loop; the caller compared them). 1: counted, to
 * the same effect as opp_sum_call; 0: given nothing, it wants
 * opp_sum_call (that call was memory, open, had children or an id GPU
 * work finds it by, or was not counted; or another entry came between). */
int opp_sum_again(struct opp_sum *s, uint64_t begin, uint64_t end);
/* The thread is gone: what waits under its placeholders (its calls were
 * dropped) is kept as calls without a parent. */
void opp_sum_thread_end(struct opp_sum *s, uint32_t proc, uint32_t tid);
/* A GPU record of proc. 1: aggregated (kernels, copies, sets, sync,
 * overhead, memory, external correlation); 0: the caller keeps it as it is
 * (strings, devices, dropped counts, stacks, modules: bounded, and the
 * report needs them to name things; a string is learnt too, for the
 * steps). Else -ENOMEM. */
int opp_sum_gpu(struct opp_sum *s, uint32_t proc, const struct opp_gpu_rec *g);
/* Whether opp_sum_gpu leaves records of this type to the caller. */
int opp_sum_gpu_keeps(uint32_t type);

/* A reader that finds each GPU op's call itself (report/analysis/
 * summarize.c joins a whole trace's) hands the ops over with their calls
 * instead of through opp_sum_gpu: what the summary adds up of an op,
 * taken out of its record. */
struct opp_sum_op {
    uint32_t type, name, kind, src, dst, device, stream, pad;
    uint64_t dur, bytes;
    int64_t mem; /* MEMORY: bytes allocated, or freed (< 0) */
};
/* Calls' correlation and external ids are not kept: GPU work comes
 * through opp_sum_op_add. */
void opp_sum_joined(struct opp_sum *s);
/* 1 and *op when g is a GPU op or device memory record (the block a
 * MEMORY record frees is looked up now: give them in the trace's order),
 * else 0. */
int opp_sum_op_of(struct opp_sum *s, uint32_t proc, const struct opp_gpu_rec *g,
                  struct opp_sum_op *op);
/* The bytes of the next call given to opp_sum_call if it is a MEMORY one
 * (a free's < 0), found by the caller (in time order, where a free can
 * come before its allocation in the trace): not looked up by address. */
void opp_sum_given_bytes(struct opp_sum *s, int64_t bytes);
/* op of proc added up: owned by the call opp_sum_call was last given
 * (when that call was kept), or by none. 0 or -ENOMEM. */
int opp_sum_op_add(struct opp_sum *s, uint32_t proc, const struct opp_sum_op *op, int owned);
/* Write proc's nodes and GPU rows as SUMMARY and SUMMARY_GPU chunks and
 * forget the process. 0 or the writer's -errno. */
int opp_sum_write(struct opp_sum *s, uint32_t proc, struct opp_tw *w);

struct opp_sum_stats {
    uint64_t calls;      /* calls aggregated */
    uint64_t nodes;      /* live nodes now */
    uint64_t dropped;    /* calls on new call paths past max_nodes */
    uint64_t unattached; /* GPU records whose correlation id matched no call */
    uint64_t map_slots;  /* entries the maps of ids and blocks have room for */
    uint64_t lost;       /* correlation ids awaiting GPU records, or CPU blocks still
                            allocated, that left the maps at their bound (2^22) */
};
void opp_sum_stats(const struct opp_sum *s, struct opp_sum_stats *out);
/* What lost launches and blocks (opp_sum_stats.lost, a summary trace's
 * GPU DROPPED field) mean, for the lines that say them, into buf: "N CUDA
 * launches ... are not in it", each line adding its own remedy. */
void opp_sum_lost_said(char *buf, size_t cap, uint64_t lost);
/* What calls dropped past max_nodes (opp_sum_stats.dropped) mean, for the
 * lines of a run that made a summary, into buf: max_nodes is the bound the
 * collector kept. */
void opp_sum_dropped_said(char *buf, size_t cap, uint64_t dropped, uint32_t max_nodes);
/* The bound the collector keeps for OPPROF_MAX_NODES's value s (NULL or
 * empty: unset): s, or OPP_SUM_NODES_DEFAULT when unset or not a number
 * from 1 to OPP_SUM_NODES_MAX (*bad then 1, else 0). */
uint32_t opp_sum_nodes_of(const char *s, int *bad);

#endif
