/* Steps found as a full trace is read (`opprof report --step`, advise,
 * the SQLite export), a consumer of the pass (pass.h): memory bounded by
 * the steps, the threads and the calls still open, not by the calls.
 *
 * The steps of a name: a range (an NVTX range, a torch label or
 * nn.Module forward; the name's first call decides) is a step by itself:
 * CPU = its CPU total minus its self time (the time inside calls we
 * intercepted), GPU = its CUDA total. Any other operator marks
 * boundaries: a step runs from the end of one call to the end of the next
 * on the same thread (a call ending inside the one before marks none),
 * and holds the calls that begin in it (their CPU and CUDA totals; the
 * boundary call itself included).
 *
 * The program's own steps, without a name: ProfilerStep#N ranges when it
 * has them (its schedule, or OPPROF_SCHEDULE); else, in a torch program
 * that trains, one step per optimizer step inside no other optimizer's
 * (to its end, from the end of the one before; the first from the first
 * top-level label or nn.Module forward); else its outermost nn.Module
 * forwards (inference), each a range.
 *
 * The pass's first
 * read, then two reads of the calls: the candidates (the named calls, or
 * ProfilerStep#N, optimizer steps and nn.Module forwards), then the
 * top-level calls in each step and the GPU work joined to its calls. */
#ifndef OPP_STEP_STREAM_H
#define OPP_STEP_STREAM_H

#include <stddef.h>

#include "analysis/aggregate.h"
#include "analysis/step_times.h"
#include "analysis/stream_meta.h"

struct opp_step_stream;

/* A consumer of pass p (opp_pass_open), which outlives it; NULL when out
 * of memory (err). */
struct opp_pass;
struct opp_step_stream *opp_step_stream_over(struct opp_pass *p, char *err, size_t errlen);

/* The steps of name (NULL: the program's own, what says which:
 * opp_steps_default_what) for the threads o selects. 0; 1 when the trace cannot be answered this way
 * after all (a thread's calls out of the order they returned or
 * overlapping without nesting, ties the tree decides by depth, no room
 * for the temporary files of the GPU join; err says why); -1 on error. */
int opp_step_stream_steps(struct opp_step_stream *s, const struct opp_agg_opts *o, const char *name,
                          struct opp_steps *out, char *what, size_t cap_what, char *err,
                          size_t errlen);
/* The first of those reads made by a read of the caller's own over the
 * same pass (opp_step_stream_over): *c is what consumes it, to be handed
 * the same begin, call and top as that read's; opp_step_stream_steps with
 * the same name then makes only the second read, if any. 0, or -1 when
 * out of memory. */
struct opp_pass_consumer;
int opp_step_stream_tap(struct opp_step_stream *s, const char *name, struct opp_pass_consumer *c);
void opp_step_stream_free(struct opp_step_stream *s);

#endif
