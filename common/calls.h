/* Self time from a thread's completed calls, which arrive in the order
 * they returned: a call's children (one depth deeper) come before it. Used
 * by summary mode (summary.c) and the collector's live aggregate
 * (collector/top_agg.c), so both give the report's self time (the call tree's:
 * duration minus the direct children's). */
#ifndef OPP_CALLS_H
#define OPP_CALLS_H

#include <stdint.h>

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

#endif
