/* Self time from a thread's completed calls, which arrive in the order
 * they returned: a call's children (one depth deeper) come before it. Used
 * by summary mode (summary_calls.c) and the collector's live aggregate
 * (collector/top_agg.c), so both give the report's self time (the call tree's:
 * duration minus the direct children's). */
#ifndef OPP_CALLS_H
#define OPP_CALLS_H

#include <stdint.h>

#include "torch_rules.h"

/* child[d]: the durations of depth d calls since the last call at depth
 * d - 1 (child has room for depth + 2 entries). A range (OPP_REC_RANGE,
 * recorded when it ended) has no children and is no call's child: all its
 * duration is returned, so its self time is 0. What the call at depth d
 * lasting dur had its children take. */
static inline uint64_t opp_call_children(uint64_t *child, uint32_t depth, uint64_t dur, int range)
{
    if (range)
        return dur;
    uint64_t children = child[depth + 1];
    child[depth + 1] = 0;
    child[depth] += dur;
    return children;
}

/* torch's folding of an operator into itself (torch_rules.h:
 * opp_torch_folds) as the calls arrive: the folded call is not counted and
 * its self time becomes the parent's. kids[d]: what a thread's calls at
 * depth d were since its last call at depth d - 1 (kids has room for
 * depth + 2 entries). */
struct opp_call_kids {
    uint64_t name;      /* the last one's torch name (opp_torch_call_name), 0 none */
    uint64_t dur, self; /* and its duration and self time */
    uint32_t n;         /* how many, memory aside */
};

/* Whether the call at depth d named name (0: not a torch operator) folds
 * its only child, kids[depth + 1]. */
static inline int opp_call_folds(const struct opp_call_kids *kids, uint32_t depth, uint64_t name,
                                 int range)
{
    const struct opp_call_kids *k = &kids[depth + 1];
    /* a name is a torch operator's (opp_torch_call_name) */
    return !range && name && k->name &&
           opp_torch_folds(k->n, OPP_OP_TORCH, name, OPP_OP_TORCH, k->name);
}

/* The call at depth d, its self time known, noted as a child of the one
 * open at depth d - 1 (a range is none's child; memory is not counted). */
static inline void opp_call_kid(struct opp_call_kids *kids, uint32_t depth, uint64_t name,
                                uint64_t dur, uint64_t self, int range, int memory)
{
    if (range)
        return;
    kids[depth + 1].n = 0; /* n first: the rest is read only when it is 1 */
    if (memory)
        return;
    struct opp_call_kids *k = &kids[depth];
    k->n++;
    k->name = name;
    if (name) { /* only a named one folds */
        k->dur = dur;
        k->self = self;
    }
}

#endif
