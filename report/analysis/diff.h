/* Two traces compared operator by operator (and kernel by kernel): the rows
 * of both aggregates (aggregate.h) matched by name (and input shapes, and
 * device type), each classed added, removed, slower, faster or same by the
 * change of one metric. The base of `opprof diff`. */
#ifndef OPP_DIFF_H
#define OPP_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/aggregate.h"
#include "analysis/model.h"

enum opp_diff_metric {
    OPP_DIFF_SELF_CPU = 0, /* self_cpu: the default */
    OPP_DIFF_CPU_TOTAL,    /* cpu_total */
    OPP_DIFF_SELF_CUDA,    /* self_cuda */
    OPP_DIFF_CUDA_TOTAL,   /* cuda_total */
};

/* 0, or -EINVAL for a name that is not a metric. */
int opp_diff_metric_parse(const char *name, enum opp_diff_metric *out);
const char *opp_diff_metric_name(enum opp_diff_metric m); /* "self_cpu"... */

enum opp_diff_class {
    OPP_DIFF_ADDED = 0, /* only in B */
    OPP_DIFF_REMOVED,   /* only in A */
    OPP_DIFF_SLOWER,
    OPP_DIFF_FASTER,
    OPP_DIFF_SAME,
    OPP_DIFF_NCLASSES
};
const char *opp_diff_class_name(enum opp_diff_class c); /* "added"... */

/* One side of a row: zero when the row is not in that trace. */
struct opp_diff_side {
    uint64_t count;
    uint64_t self_cpu_ns, cpu_total_ns, self_cuda_ns, cuda_total_ns;
};

struct opp_diff_row {
    const char *key;    /* points into a model */
    const char *shapes; /* "" unless grouped by shape */
    uint32_t device_type;
    int in_a, in_b;
    struct opp_diff_side a, b;
    double va, vb;  /* the metric's value on each side, ns */
    double change;  /* vb - va, ns */
    double percent; /* change / va * 100; NaN when va is 0 */
    enum opp_diff_class cls;
};

/* When a change counts as none: |change| <= max(same_pct% of A's value,
 * same_ns). Zero-initialised means the defaults, 1% and 1 us. */
struct opp_diff_opts {
    enum opp_diff_metric metric;
    int group_by_shape;
    double same_pct; /* < 0: 0 */
    double same_ns;  /* < 0: 0 */
    int same_given;  /* same_pct and same_ns are set (0 is then 0) */
};

struct opp_diff {
    struct opp_diff_row *rows; /* by |change| descending, then name, device, shapes */
    size_t n;
    size_t classes[OPP_DIFF_NCLASSES];
    /* The total: the traces' Self CPU time total (CPU metrics) or Self
     * CUDA time total (CUDA metrics), every nanosecond counted once. */
    double total_a, total_b, total_change, total_percent;
    enum opp_diff_class total_cls;
    double same_pct, same_ns; /* the thresholds used */
    enum opp_diff_metric metric;
    int gpu; /* either trace has GPU records */
    struct opp_agg agg_a, agg_b; /* the rows point into these (and the models) */
};

/* Two traces' aggregates (a, b: the whole of each, made with o's
 * group_by_shape) compared, which d takes whatever the result; gpu:
 * either trace has GPU records. 0, or -ENOMEM. Free with opp_diff_free
 * before the models. */
int opp_diff_aggs(struct opp_agg *a, struct opp_agg *b, int gpu, const struct opp_diff_opts *o,
                  struct opp_diff *d);
void opp_diff_free(struct opp_diff *d);

/* The class of a change from va to vb under d's thresholds. */
enum opp_diff_class opp_diff_classify(const struct opp_diff *d, double va, double vb);

/* --fail-above: what the gate checks. An operator whose metric in B is
 * under min_ns, or whose calls in B are fewer than min_calls, cannot fail
 * it: a one-call operator of tens of microseconds moves by more than any
 * useful percentage from one run to the next. */
struct opp_diff_gate {
    double pct;                /* a regression is slower by more than pct percent */
    const char *const *names;  /* the operators checked (nnames 0: every one, and the total) */
    size_t nnames;
    double min_ns;             /* the floors: OPP_DIFF_GATE_MIN_US, OPP_DIFF_GATE_MIN_CALLS */
    uint64_t min_calls;
};
#define OPP_DIFF_GATE_MIN_US 100
#define OPP_DIFF_GATE_MIN_CALLS 2

/* What the gate found: the number of regressions, the worst (the largest
 * percent; NULL with total set when it is the total), and how many rows
 * slower beyond pct were let through by the floors. */
struct opp_diff_gate_result {
    size_t nreg;
    const struct opp_diff_row *worst;
    int worst_total;
    size_t under_floor;
};

/* The regressions under g: changes classed slower (so above the
 * same-threshold) whose percent is above g->pct, among the total and every
 * row present in both traces when g names none, else among the named rows
 * alone (a named row only in B counts as infinitely slower); rows under
 * the floors are not counted. */
void opp_diff_regressions(const struct opp_diff *d, const struct opp_diff_gate *g,
                          struct opp_diff_gate_result *res);

#endif
