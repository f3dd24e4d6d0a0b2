/* The call tree of one thread's calls in memory (a thread the pass keeps
 * whole, pass.c; the tests' loaded model), with torch.profiler's
 * semantics: an event is the child of the innermost event of the same
 * thread that wholly contains it; self time is its duration minus its
 * direct children's. (Merged over threads by call path: callpath_tree.h.) */
#ifndef OPP_THREAD_TREE_H
#define OPP_THREAD_TREE_H

#include <stddef.h>

#include "analysis/model.h"

/* Sort ev[0..n) (the events of one thread) into tree order, by begin
 * ascending, end descending, recorded depth ascending, then original order;
 * a parent always comes before its children. Then set each event's parent
 * (an index in ev, or OPP_NO_PARENT) and self_ns.
 *
 * Nesting follows torch's _populate_cpu_children: an event is a child of
 * the innermost open event that contains it (child.begin >= parent.begin
 * and child.end <= parent.end); partial overlaps are not nested. One case
 * timestamps cannot decide, an event beginning exactly where another ends
 * (zero-length calls on a coarse clock), is decided by the recorded depth:
 * it is a child only when its depth is greater.
 *
 * self_ns = duration - sum of direct children's durations, never below 0;
 * a recursive call is counted in both its own and its caller's total, like
 * torch. 0, or -ENOMEM (ev is then left unchanged). */
int opp_tree_build(struct opp_event *ev, size_t n);

/* torch's folding of an op into itself (torch_rules.h: opp_torch_folds)
 * on a built tree: an event that folds(child, parent, counted, ctx) says
 * folds into its parent, counted being the parent's children (0, 1, or 2
 * for more), is removed, its children going to the parent, whose total
 * stays. Children that uncounted(child, ctx) says are not torch's children
 * (memory instants, which torch sums into the event instead) are not
 * counted and never removed; uncounted may be NULL. Before ev[0..*n) is
 * compacted and its tree built again, lift (may be NULL) sees each removed
 * event with the index its nearest kept ancestor will have (torch lifts a
 * removed op's kernels to its parent); non-zero from it stops the fold.
 * 0, or -ENOMEM. */
int opp_tree_fold(struct opp_event *ev, size_t *n,
                  int (*folds)(const struct opp_event *child, const struct opp_event *parent,
                               unsigned counted, void *ctx),
                  int (*uncounted)(const struct opp_event *child, void *ctx),
                  int (*lift)(const struct opp_event *child, uint32_t owner, void *ctx), void *ctx);

#endif
