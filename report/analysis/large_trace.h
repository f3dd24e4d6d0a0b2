/* How `opprof report` reads a large trace: whether traces are large
 * enough to stream, and the model loaded through their summaries
 * (summarize.h), whose memory is bounded by the call paths, not the calls. */
#ifndef OPP_LARGE_TRACE_H
#define OPP_LARGE_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/model.h"
#include "analysis/stream_meta.h"
#include "analysis/summarize.h"

#define OPP_STREAM_MIB 32 /* loaded, 32 MiB of trace take about 250 MiB of memory */

/* Whether the traces together hold OPPROF_STREAM_MIB (OPP_STREAM_MIB
 * unless set to a number) MiB or more: *bytes their size. */
int opp_traces_large(const char *const *traces, size_t n, unsigned long long *bytes);

/* What opp_summary_load did. */
enum opp_summary_load_rc {
    OPP_SUMMARY_LOADED,     /* *m is the model */
    OPP_SUMMARY_LOAD_ERROR, /* err says what went wrong */
    OPP_SUMMARY_LOAD_CALLS, /* exact: a summary cannot be the loaded report (err says why):
                               every call is to be loaded instead */
};

struct opp_summary_load_opts {
    /* stop where a summary cannot be what the loaded trace reports (calls
     * past the bound on call paths, no room for a temporary file...);
     * else what it leaves out is said through warn (may be NULL), a line
     * for a person each time */
    int exact;
    void (*warn)(void *ctx, const char *line);
    void *ctx;
    const struct opp_owned_tap *tap; /* the first trace's summary's (summarize.h), or NULL */
    struct opp_summarized *first;    /* NULL, or what summarising the first trace gave */
};

/* The traces each summarised into a temporary file in TMPDIR (a summary
 * trace already is taken as it is), loaded as opp_model_load_many loads
 * them; the files are gone once loaded. The traces' own warnings (cut
 * short...) are the model's. */
enum opp_summary_load_rc opp_summary_load(const char *const *traces, size_t n,
                                          const struct opp_summary_load_opts *o,
                                          struct opp_model **m, char *err, size_t errlen);

/* Each thread's calls as a loaded model keeps them (by the thread index
 * of sm): made, less those folded into a same-named parent (the summary
 * sum counted them). NULL when out of memory. */
uint64_t *opp_summary_thread_calls(struct opp_stream_meta *sm, const struct opp_summarized *sum);

#endif
