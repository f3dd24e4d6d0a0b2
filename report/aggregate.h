/* key_averages(): the events of a model grouped by name (and optionally by
 * input shapes) into rows of counts and times, like torch.profiler's. */
#ifndef OPP_AGGREGATE_H
#define OPP_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "ops.h"

/* What rows are sorted by, descending (torch's attribute names). */
enum opp_sort_key {
    OPP_SORT_SELF_CPU_TIME_TOTAL = 0, /* the default */
    OPP_SORT_CPU_TIME_TOTAL,
    OPP_SORT_CPU_TIME, /* average per call */
    OPP_SORT_COUNT,
    OPP_SORT_FLOPS,
};

/* 0, or -EINVAL for a name that is not a sort key. */
int opp_sort_key_parse(const char *name, enum opp_sort_key *out);
/* "self_cpu_time_total, cpu_time_total, ...", for messages. */
const char *opp_sort_key_list(void);

/* Zero-initialised options mean: every event, sorted by self CPU time,
 * every row. */
struct opp_agg_opts {
    enum opp_sort_key sort;
    size_t limit;       /* rows kept after sorting; 0 = all */
    int group_by_shape; /* torch's group_by_input_shape */
    int filter_pid;     /* only processes with this OS pid (every instance) */
    uint32_t pid;
    int filter_tid; /* only threads with this OS tid */
    uint32_t tid;
};

/* "[[300, 200], [200, 100], [300, 100]]" fits with room to spare. */
#define OPP_SHAPES_STR_MAX 400

struct opp_row {
    const char *key; /* the entry point's symbol name (points into the model) */
    const char *lib; /* its library, as the first event of the row gave it */
    uint64_t count;
    uint64_t self_cpu_time_total_ns;
    uint64_t cpu_time_total_ns;
    uint64_t flops;            /* sum over the row's calls of opp_op_flops */
    struct opp_shapes shapes;  /* n = 0 unless grouped by shape */
    char shapes_str[OPP_SHAPES_STR_MAX]; /* "" unless grouped by shape */
};

static inline double opp_row_avg_ns(const struct opp_row *r)
{
    return r->count ? (double)r->cpu_time_total_ns / (double)r->count : 0.0;
}

struct opp_agg {
    struct opp_row *rows;
    size_t nrows;       /* rows kept (after the limit) */
    size_t nrows_all;   /* rows before the limit */
    uint64_t events;    /* events that passed the filters */
    /* torch's "Self CPU time total": self time summed over every row before
     * the limit; Self CPU % and CPU total % both divide by it. */
    uint64_t self_cpu_time_total_ns;
};

/* 0, or -ENOMEM. The rows point into m: free them before the model. */
int opp_aggregate(const struct opp_model *m, const struct opp_agg_opts *o, struct opp_agg *out);
void opp_agg_free(struct opp_agg *a);

#endif
