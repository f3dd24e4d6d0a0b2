/* `opprof advise`'s output (advise_view.c): the findings of
 * analysis/advise.h as text or JSON, and the thresholds' table. */
#ifndef OPP_ADVISE_VIEW_H
#define OPP_ADVISE_VIEW_H

#include <stdio.h>

#include "analysis/advise.h"

/* Text: a line on the steps looked at, what the trace lost, then the
 * findings numbered by rank, each with what, where, how much, evidence and
 * what to try. JSON: {"trace", "steps": {...}, "lost": [...],
 * "findings": [...]} (README's `opprof advise`). 0 or -EIO. */
int opp_out_advice(FILE *f, const char *trace, const struct opp_advice *a, int json);

/* The thresholds (th: their values) as a Markdown table: name, value,
 * unit, meaning, and the rules that read each. 0 or -EIO. */
int opp_out_advise_thresholds(FILE *f, const double *th);

#endif
