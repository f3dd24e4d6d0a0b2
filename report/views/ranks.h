/* `opprof report --by-rank`: one column per rank of a multi-process job
 * (processes labelled by their launcher's RANK and kin, model.h), the
 * spread per operator and the slowest rank, which exposes stragglers. */
#ifndef OPP_RANKS_H
#define OPP_RANKS_H

#include <stdio.h>

#include "analysis/aggregate.h"

/* Rows: every operator of any rank, by its largest value descending; the
 * value is o->sort's (self CPU time by default) per rank; then min, median
 * (the lower middle of an even count) and max over the ranks, and the rank
 * with the max. o's pid/tid/lib filters apply; processes without a rank
 * are left out (a line says how many). json: {"metric", "ranks", "rows":
 * [{"key", "values", "min", "median", "max", "slowest_rank"}]}, times in us.
 * 0, -ENOENT when no process of the trace has a rank, -ENOMEM or -EIO. */
int opp_out_by_rank(FILE *f, const struct opp_model *m, const struct opp_agg_opts *o, int json);

#endif
