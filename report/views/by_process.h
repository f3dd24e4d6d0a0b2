/* The view of `opprof report --by-process` (by_process.c): each process's
 * part of the table (struct opp_agg's procs) as text or JSON. */
#ifndef OPP_BY_PROCESS_H
#define OPP_BY_PROCESS_H

#include <stdio.h>

#include "analysis/aggregate.h"
#include "analysis/model.h"

/* A line per process whose calls are in a, in the trace's order (the
 * first: the one `opprof run` started): PID, Command (its arguments, cut
 * like a name), # of Calls, CPU total (these add up to the table's Self
 * CPU time total) and its share of that, End (how it ended,
 * opp_process_end_text); then the total. json: {"processes": [{"pid",
 * "cmdline", "calls", "cpu_time_total", "gpu_ops", "end"}],
 * "cpu_time_total"}, times in us. 0 or -EIO. */
int opp_out_by_process(FILE *f, const struct opp_model *m, const struct opp_agg *a, int json);

#endif
