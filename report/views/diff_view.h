/* The outputs of `opprof diff` (diff_view.c): a comparison (analysis/diff.h)
 * as a table laid out like the report's, or JSON. */
#ifndef OPP_DIFF_VIEW_H
#define OPP_DIFF_VIEW_H

#include <stddef.h>
#include <stdio.h>

#include "analysis/diff.h"

#define OPP_DIFF_CELL_MAX (OPP_SHAPES_STR_MAX + 8)

struct opp_diff_view {
    const char *a, *b; /* the traces as named on the command line */
    size_t limit;      /* rows shown; 0 = all */
    int by_shape;      /* rows by name and input shapes: show the shapes */
    /* --fail-above: what it checks (NULL: no gate), and what
     * opp_diff_regressions found */
    const struct opp_diff_gate *gate;
    const struct opp_diff_gate_result *found;
};

/* The rows (an Input Shapes column when by shape, the CUDA columns when a
 * trace has GPU records), then the total, the count per class, what
 * "same" means and, with a gate, what it checks and its floors. 0, or
 * -EIO. */
int opp_out_diff_table(FILE *f, const struct opp_diff *d, const struct opp_diff_view *v);

/* {"a", "b", "metric", "by", "same", "total", "classes", "gate" (null
 * without one: {"percent", "ops", "min_us", "min_calls", "under_floor"}),
 * "regression" (null without a gate or a regression), "rows"}: times in
 * us. 0, or -EIO. */
int opp_out_diff_json(FILE *f, const struct opp_diff *d, const struct opp_diff_view *v);

/* "Self CPU time total" (CPU metrics) or "Self CUDA time total". */
const char *opp_diff_total_name(enum opp_diff_metric m);

/* A change in percent: "+12.34%", "-0.50%"; "--" when unknown (NaN: A's
 * value was 0). buf: OPP_DIFF_CELL_MAX bytes. */
const char *opp_diff_pct_text(char *buf, double pct);

#endif
