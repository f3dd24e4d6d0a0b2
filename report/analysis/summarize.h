/* A full trace added up by call path into a summary trace, as
 * OPPROF_MODE=summary records one (common/summary_calls.c, the collector's own
 * aggregation): the calls stream through, so memory is bounded by the call
 * paths, threads and depth, not by the number of calls. `opprof summarize`
 * writes it. */
#ifndef OPP_SUMMARIZE_H
#define OPP_SUMMARIZE_H

#include <stddef.h>
#include <stdint.h>

struct opp_summarized {
    uint64_t calls;    /* calls added up */
    uint64_t dropped;  /* calls on new call paths past max_nodes */
    int complete;      /* the trace had its end marker */
    /* an NVTX range recorded when it ended (start/end, ProfilerStep#N) is
     * around calls of its depth: the summary cannot nest them in it as a
     * loaded trace does; it has no self time there, as in a summary the
     * collector made (its self time and its parent's differ from the
     * trace's) */
    int ranges_enclose;
    /* launches whose GPU records had not been reached, or CPU blocks still
     * allocated, past the summary's bound on them (opp_sum_stats.lost):
     * their GPU time or memory is not in the summary */
    uint64_t lost;
    /* CPU frees on another thread than their allocations (or otherwise
     * out of time order in the file) that could not be ordered (no room
     * for the temporary files): some may miss their sizes */
    int frees_unordered;
    char warning[512]; /* the trace's own warning (cut short...), or "" */
};

/* What opp_summarize returns: done, or why not (err says it for a person). */
enum opp_summarize_rc {
    OPP_SUMMARIZED = 0,
    OPP_SUMMARIZE_FAILED = -1,     /* in could not be read, or out of memory */
    OPP_SUMMARIZE_OUT_FAILED = -2, /* out could not be written (not the trace's fault) */
    OPP_SUMMARIZE_IS_SUMMARY = -3, /* in is a summary trace already */
};

/* in (a full trace) summarised into out (written whole, or not at all is
 * the caller's: out is what it names, removed on failure); name: out as
 * err names it (the file out becomes, when out is a temporary one; NULL:
 * out). max_nodes: call paths kept (past it, calls on new paths are
 * counted as dropped). */
enum opp_summarize_rc opp_summarize(const char *in, const char *out, const char *name,
                                    unsigned long max_nodes, struct opp_summarized *res, char *err,
                                    size_t errlen);

#endif
