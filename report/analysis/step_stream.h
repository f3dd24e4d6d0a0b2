/* Steps found as a full trace is read (`opprof report --step` on a large
 * trace): the answer of opp_steps_find / opp_steps_default (step_times.h)
 * with memory bounded by the steps, the threads and the calls still open,
 * not by the calls. Three reads of the file: the processes, threads, names
 * and NVTX ranges; the steps; the calls inside them (boundaries and
 * training iterations) and the GPU work, joined to its calls (gpu_join.h).
 *
 * Calls of a thread arrive in the order they returned, so a call's
 * children arrive before it: a stack holds the calls no later one has
 * enclosed yet, and each arrival takes in those that begin within it
 * (their durations are its children's time; torch's folding of an only
 * child of the same name is done there). A call is known to be top-level
 * once nothing can enclose it any more: after a call made at depth 0
 * (none of ours is running on the thread) and before the next NVTX range
 * that begins earlier (ranges are recorded when they end, at the depth of
 * what they enclose). */
#ifndef OPP_STEP_STREAM_H
#define OPP_STEP_STREAM_H

#include <stddef.h>

#include "analysis/aggregate.h"
#include "analysis/step_times.h"
#include "analysis/stream_meta.h"

struct opp_step_stream;

/* The first read: the stream, whose model (opp_step_stream_model) has
 * the processes, threads, names, warnings and counts of drops, and no
 * calls; or NULL and *why: OPP_STREAM_ERROR (err says it),
 * OPP_STREAM_SUMMARY_FILE, or OPP_STREAM_CANNOT (err says why: more than
 * 2^20 NVTX ranges...). */
struct opp_step_stream *opp_step_stream_open(const char *path, enum opp_stream_refused *why,
                                             char *err, size_t errlen);
const struct opp_model *opp_step_stream_model(const struct opp_step_stream *s);

/* opp_steps_find (name) or opp_steps_default (name NULL: what set) for the
 * threads o selects. 0; 1 when the trace cannot be answered this way
 * after all (a thread's calls out of the order they returned or
 * overlapping without nesting, ties the tree decides by depth, no room
 * for the temporary files of the GPU join; err says why); -1 on error. */
int opp_step_stream_steps(struct opp_step_stream *s, const struct opp_agg_opts *o, const char *name,
                          struct opp_steps *out, char *what, size_t cap_what, char *err,
                          size_t errlen);
void opp_step_stream_free(struct opp_step_stream *s);

#endif
