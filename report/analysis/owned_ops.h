/* A full trace's GPU ops and device memory records, each with the call
 * that owns it (the pass's join, pass.h), sorted by that call's place in
 * the trace, so that a reader going through the calls again in the
 * trace's order takes each call's ops right after it; and the bytes of
 * its CPU MEMORY calls, a free's found in time order. What lets a summary
 * (summarize.c) attribute any number of launches' GPU work, and frees
 * read before their allocations, with memory bounded by its call paths:
 * the join and the sorts go through temporary files (extsort.h). */
#ifndef OPP_OWNED_OPS_H
#define OPP_OWNED_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "summary.h"

/* Calls are numbered by their place among the trace's (the pass's at),
 * the calls processes died inside apart (the collector writes them last):
 * those are numbered from this in the order opp_owned_open_order gives. */
#define OPP_OWNED_OPEN_AT (1ull << 63)

/* The order the calls processes died inside are summed in, depth[i] being
 * the depth of the i-th in the trace: the innermost first, as they would
 * have returned (the collector writes a thread's outermost first), else
 * in the trace's order. A malloc'd array of n indices, NULL when out of
 * memory. */
size_t *opp_owned_open_order(const uint32_t *depth, size_t n);

struct opp_owned_ops;

struct opp_owned_op {
    uint64_t at;   /* the call that owns it, UINT64_MAX: none */
    uint64_t seq;  /* its place among the trace's ops */
    uint32_t proc; /* the trace's serial of its process */
    uint32_t pad;
    struct opp_sum_op op;
};

struct opp_pass;
/* A read of the pass's trace in the files' order, joining. sum takes each
 * op out of its record (opp_sum_op_of: the blocks memory records free are
 * looked up in the trace's order). 0 and *out; 1 when there is no room
 * for the temporary files (err says so); -1 when the trace cannot be
 * read or memory is short (err says why). */
int opp_owned_ops_read(struct opp_owned_ops **out, struct opp_pass *pass, struct opp_sum *sum,
                       char *err, size_t errlen);
/* The next op, in the order of the calls that own them (those of no call
 * last), if its call is numbered at or below at; else NULL. */
const struct opp_owned_op *opp_owned_ops_next(struct opp_owned_ops *o, uint64_t at);
/* The bytes of CPU MEMORY call number at (a torch allocation, or a free:
 * < 0), its free's size found in time order as a loaded trace finds it:
 * 1 and *bytes, 0 when at is not such a call. Asked of each call in
 * order. */
int opp_owned_ops_mem(struct opp_owned_ops *o, uint64_t at, int64_t *bytes);
/* 0, or the -errno that stopped reading the sorted ops back. */
int opp_owned_ops_error(const struct opp_owned_ops *o);
void opp_owned_ops_free(struct opp_owned_ops *o);

#endif
