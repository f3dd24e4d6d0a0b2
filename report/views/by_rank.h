/* The by-rank view of `opprof report --by-rank` (by_rank.c): a rank table
 * (analysis/ranks.h) as text or JSON. */
#ifndef OPP_BY_RANK_H
#define OPP_BY_RANK_H

#include <stddef.h>
#include <stdio.h>

#include "analysis/ranks.h"

/* A heading (the key, the ranks, how many processes had none), then the
 * first limit rows (0: all): the key's value per rank, min, median, max and
 * the slowest rank; times as torch shows them. json: {"metric", "ranks",
 * "rows": [{"key", "values", "min", "median", "max", "slowest_rank"}]},
 * times in us. 0 or -EIO. */
int opp_out_by_rank(FILE *f, const struct opp_rank_table *t, enum opp_sort_key key, size_t limit,
                    int json);

#endif
