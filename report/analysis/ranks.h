/* `opprof report --by-rank` (shown by views/by_rank.h): one column per rank
 * of a multi-process job (processes labelled by their launcher's RANK and
 * kin, model.h), the spread per operator and the slowest rank, which
 * exposes stragglers. */
#ifndef OPP_RANKS_H
#define OPP_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/aggregate.h"

struct opp_rank_row {
    const char *key; /* the operator's name (points into the model) */
    double *v;       /* its value per rank, in the order of ranks */
    double min, median, max; /* median: the lower middle of an even count */
    size_t slowest;          /* index of the rank with the max (the first of equals) */
};

struct opp_rank_table {
    int64_t *ranks; /* ascending */
    size_t nranks;
    size_t unranked;           /* processes without a rank, left out */
    struct opp_rank_row *rows; /* by max descending, then key */
    size_t nrows;
    /* -EEXIST: the lowest rank that processes of two traces hold, and the
     * first two of those traces (their indexes among the model's files). */
    int64_t twice_rank;
    uint32_t twice_files[2];
};

/* Rows: every operator of any rank; the value is o->sort's (self CPU time
 * by default) of the aggregate of each rank's processes (o's pid, tid and
 * lib filters apply; o->limit does not), rows of one name added up. 0,
 * -ENOENT when no process of the trace has a rank, -EEXIST when two of
 * the traces merged in m hold the same rank (the table then holds only
 * twice_rank and twice_files), or -ENOMEM. */
/* The aggregates of o[0..n) into out[0..n) (one rank each): 0, or
 * -errno, or what the function says (above 0), out then freed. */
typedef int (*opp_rank_aggregate_fn)(void *ctx, const struct opp_agg_opts *o, size_t n,
                                     struct opp_agg *out);
/* aggregate: a pass's (table_stream.h), given ctx. */
int opp_rank_table_build(const struct opp_model *m, const struct opp_agg_opts *o,
                         opp_rank_aggregate_fn aggregate, void *ctx, struct opp_rank_table *t);
void opp_rank_table_free(struct opp_rank_table *t);
/* How many of the traces merged in m hold a process of rank: 0, 1, or 2
 * (two or more: a copy of one, another run's; files then the first two,
 * their indexes among the model's files, else files[0] the one). */
int opp_rank_files(const struct opp_model *m, int64_t rank, uint32_t files[2]);
/* The refusal of traces a and b, which both hold rank, into buf. */
void opp_rank_twice_said(char *buf, size_t cap, const char *a, const char *b, int64_t rank);

#endif
