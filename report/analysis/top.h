/* `opprof top`'s numbers: two snapshots of the collector's live aggregate
 * (common/topsnap.h) turned into the last interval's and the whole run's, per
 * operator or per library, sorted; and the interval's steps. Computes,
 * never prints (views/top_view.h shows it). */
#ifndef OPP_ANALYSIS_TOP_H
#define OPP_ANALYSIS_TOP_H

#include <stddef.h>
#include <stdint.h>

#include "topsnap.h"

/* What a line adds up: an operator's calls (or a library's). */
struct opp_top_sums {
    uint64_t calls, self_ns, total_ns, gpu_ns;
    int64_t mem;
};

struct opp_top_line {
    const char *name; /* the operator's, or with OPP_TOP_BY_LIB the library's */
    const char *lib;
    struct opp_top_sums last, all; /* the last interval's, since the start */
};

#define OPP_TOP_SORT_KEYS(X)                                                                       \
    X(OPP_TOP_SORT_TOTAL, "total") /* CPU total */                                                 \
    X(OPP_TOP_SORT_SELF, "self") /* self CPU */                                                    \
    X(OPP_TOP_SORT_CALLS, "calls")                                                                 \
    X(OPP_TOP_SORT_GPU, "gpu") /* GPU time */                                                      \
    X(OPP_TOP_SORT_MEM, "mem") /* CPU memory */                                                    \
    X(OPP_TOP_SORT_NAME, "name")
#define OPP_TOP_SORT_ENUM(e, s) e,
enum opp_top_sort { OPP_TOP_SORT_KEYS(OPP_TOP_SORT_ENUM) OPP_TOP_NSORT };
/* "total", "self", ... (NULL past the last). */
const char *opp_top_sort_name(enum opp_top_sort s);

/* By operator; by library; by layer: a line per nn.Module (its forward's
 * calls and CPU total, and as self time the self time of every call inside
 * it and in no module inside it), and one of the time outside any. */
enum opp_top_group { OPP_TOP_BY_NAME, OPP_TOP_BY_LIB, OPP_TOP_BY_LAYER, OPP_TOP_NGROUP };

struct opp_top_view {
    struct opp_top_line *lines; /* sorted by the interval's key, then the whole run's */
    size_t n;
    double secs;                           /* the interval's length (0: no snapshot before) */
    int idle;                              /* a snapshot before, and no call since it */
    struct opp_top_sums last_sum, all_sum; /* every line's */
    uint64_t events, last_events, dropped;
    uint64_t interrupted; /* of dropped, a signal handler's interruption's */
    uint32_t procs, threads, recording, left_out;
    int from_start;             /* the rows add up the whole run (else since first watched) */
    uint64_t steps, last_steps; /* steps ended, in all and in the interval */
    uint64_t p50_ns, p90_ns;    /* the interval's step latencies (0: none) */
    const char *step_name;
    int gpu; /* some GPU time */
    int mem; /* some CPU memory */
};

/* The view from cur and the snapshot before it (NULL: none; the
 * interval is then the whole run), grouped and sorted. Its names point
 * into cur. 0 or -ENOMEM. */
int opp_top_compute(const struct opp_top_snap *prev, const struct opp_top_snap *cur,
                    enum opp_top_group g, enum opp_top_sort s, struct opp_top_view *out);
void opp_top_view_free(struct opp_top_view *v);
/* "name", "library", "layer". */
const char *opp_top_group_name(enum opp_top_group g);

#endif
