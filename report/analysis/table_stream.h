/* The table (key_averages, aggregate.h) and --tree's call paths
 * (callpath_tree.h) added up as a full trace is read,
 * a consumer of the pass (pass.h): rows in memory bounded by the rows and
 * the calls still open, not by the calls. Where the trace has GPU work or
 * CPU memory, a first read of the calls joins the GPU work to the calls
 * that own it (gpu_join.h) and sizes the CPU frees in time order, once
 * for all the questions asked of a stream; each owning call's GPU time
 * and memory, each CPU memory call's bytes (sorted by the call's place
 * in the files beyond memory, extsort.h) and each kernel, copy and set
 * with its owner are kept for the questions' reads, each of which adds
 * the calls up as their tree nests them (a call's CUDA total and CPU
 * memory are its children's too).
 * For --tree, each call's subtree is merged by call path as its parent
 * takes it in, and a top-level call's into the tree: memory bounded by
 * the call paths under the calls still open. Grouped by stack, a call
 * keyed by the operators around it waits with its parent, added up with
 * the calls of its row and names so far, until N names have come or its
 * top-level call has: bounded the same way. The code-frame tree
 * (codestack_tree.h) takes each call as its parent shows it is not
 * folded: bounded by its paths. */
#ifndef OPP_TABLE_STREAM_H
#define OPP_TABLE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/aggregate.h"
#include "analysis/callpath_tree.h"
#include "analysis/stream_meta.h"

struct opp_table_stream;

/* A consumer of pass p (opp_pass_open), which outlives it; NULL when out
 * of memory (err). */
struct opp_pass;
struct opp_table_stream *opp_table_stream_over(struct opp_pass *p, char *err, size_t errlen);
/* The aggregate of the calls and GPU ops o selects (a summary's nodes
 * counted). 0; 1 when the pass cannot read the trace
 * this way (err says why); -1 on error (err). */
int opp_table_stream_aggregate(struct opp_table_stream *s, const struct opp_agg_opts *o,
                               struct opp_agg *out, char *err, size_t errlen);
/* The aggregates of o[0..n) into out[0..n) in the same reads; each
 * thread's calls (and each process's GPU ops of no call) go to the first
 * of o that selects them, which is o's every aggregate when their
 * selections are apart (a rank each: ranks.h). 0, 1 or -1 as above. */
int opp_table_stream_aggregates(struct opp_table_stream *s, const struct opp_agg_opts *o, size_t n,
                                struct opp_agg *out, char *err, size_t errlen);
/* A question of a read: the aggregate of the calls and GPU ops o selects
 * into *agg, or with ct (agg NULL) --tree's call paths of the threads it
 * selects into *ct. */
struct opp_table_q {
    const struct opp_agg_opts *o;
    struct opp_agg *agg;
    struct opp_calltree *ct;
};
/* Questions q[0..n) answered in the same read (advise's: the rows of the
 * steps, by shape and by stack, and the call paths): each as when asked
 * alone. 0, 1 or -1 as above; on failure, nothing of theirs to free. */
int opp_table_stream_ask(struct opp_table_stream *s, const struct opp_table_q *q, size_t n,
                         char *err, size_t errlen);
/* --tree's call paths of the threads o selects (node indices: in the
 * order the paths were first added up). 0; 1 (cannot, err); -1 (error, err). */
int opp_table_stream_calltree(struct opp_table_stream *s, const struct opp_agg_opts *o,
                              struct opp_calltree *ct, char *err, size_t errlen);
/* The code-frame tree of every call (codestack_tree.h). 0; 1 (cannot, err);
 * -1 (error, err). */
struct opp_codetree;
int opp_table_stream_codetree(struct opp_table_stream *s, struct opp_codetree *t, char *err,
                              size_t errlen);
/* Whether the questions' next read is preceded by the read that joins
 * the GPU work and CPU memory to their calls (the trace has either, and
 * that read was not made yet). */
int opp_table_stream_join_pending(const struct opp_table_stream *s);
struct opp_pass_consumer;
/* That read, made now where it is pending: the GPU work joined to the
 * calls that own it, the CPU frees sized, each owning call's share
 * sorted by its place, each kernel, copy and set with its owner; with
 * also (NULL: none), another consumer's first read made in the same read
 * (opp_step_stream_tap's). 0 (also handed nothing when none was
 * pending), 1 when it cannot be made (err says why), -1 on error (err). */
int opp_table_stream_join_with(struct opp_table_stream *s, const struct opp_pass_consumer *also,
                               char *err, size_t errlen);
/* After opp_table_stream_aggregate with --match (a read of one
 * question): whether the name of some call or GPU op (selected or not)
 * matched it. */
int opp_table_stream_matched(const struct opp_table_stream *s);
/* The windows a schedule recorded (step_times.h's opp_window),
 * from a read of the calls: 0, 1 or -1 as above; *w malloc'd. */
struct opp_window;
int opp_table_stream_windows(struct opp_table_stream *s, struct opp_window **w, size_t *nw,
                             char *err, size_t errlen);
/* After a read: each thread's calls (by thread index), those folded into
 * a same-named parent apart. */
const uint64_t *opp_table_stream_thread_calls(const struct opp_table_stream *s);
void opp_table_stream_free(struct opp_table_stream *s);

#endif
