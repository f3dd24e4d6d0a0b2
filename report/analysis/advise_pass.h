/* advise's findings (advise.h) from the pass over full traces, its rules'
 * rows and call paths (table_stream.h), steps (step_stream.h) and GPU
 * statistics (gpu_stream.h) and CPU memory series (mem_stream.h) read as
 * they stream (opp_advise_src): memory bounded by the rows, call paths,
 * steps and devices, not by the calls. Over a summary trace's pass
 * (opp_pass_open_summary), its rows and call paths alone: the steps
 * counted, the rules that need the calls' times not run (advise.h).
 * What `opprof advise` and the HTML export's findings both read. */
#ifndef OPP_ADVISE_PASS_H
#define OPP_ADVISE_PASS_H

#include <stddef.h>

#include "analysis/advise.h"
#include "analysis/stream_meta.h"

struct opp_advise_pass;
struct opp_table_stream;

/* A consumer of pass p (opp_pass_open), which outlives it; NULL when out
 * of memory (err). */
struct opp_pass;
struct opp_advise_pass *opp_advise_pass_over(struct opp_pass *p, char *err, size_t errlen);
/* Its table stream, for the caller's own rows and call paths (the GPU
 * work joined once for both). */
struct opp_table_stream *opp_advise_pass_table(struct opp_advise_pass *ap);
/* opp_advise of the traces for the calls o selects (step, th as there).
 * 0; 1 when the pass cannot answer (err says why); -1 on error (err). */
int opp_advise_pass_run(struct opp_advise_pass *ap, const struct opp_agg_opts *o, const char *step,
                        const double *th, struct opp_advice *out, char *err, size_t errlen);
void opp_advise_pass_free(struct opp_advise_pass *ap);

#endif
