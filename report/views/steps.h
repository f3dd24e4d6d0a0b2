/* The step view of `opprof report --step NAME` (steps.c), with the steps
 * it shows (analysis/step_times.h). */
#ifndef OPP_STEPS_H
#define OPP_STEPS_H

#include <stdio.h>

#include "analysis/step_times.h"

/* Table: count, mean, p50, p90, p99, max of wall, CPU and GPU time (GPU
 * only when some step has GPU time). JSON: {"step", "kind", "count",
 * "wall_us", "cpu_us", "gpu_us" (per-step series), "wall", "cpu", "gpu"
 * ({count, mean, p50, p90, p99, max} in us)}. 0, -EIO or -ENOMEM. */
int opp_out_steps(FILE *f, const char *name, const struct opp_steps *s, int json);

#endif
