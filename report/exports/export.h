/* Exports of a trace to formats other tools read (`opprof export`). Each
 * streams the trace file, so memory does not grow with its events. */
#ifndef OPP_EXPORT_H
#define OPP_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What a Chrome export holds: rank >= 0: only the processes labelled with
 * that rank (one file per rank, as HTA reads them); only the calls and GPU
 * work that begin in [from_ns, to_ns) (to_ns 0: no end; CLOCK_MONOTONIC). */
struct opp_chrome_opts {
    int64_t rank;
    uint64_t from_ns, to_ns;
};
/* Chrome trace JSON as Kineto writes it (Perfetto, chrome://tracing, HTA)
 * of traces[0..ntraces) read by pass p (analysis/pass.h, opened over
 * them); o NULL: everything. Several traces (one per host, at most
 * OPP_CHROME_MAX_TRACES) make one file, merged as opp_model_load_many merges
 * them (times on the first trace's clock, o's times too); a pid or device
 * number an earlier trace has is shown as itself + 2^22 (+ 2^22 ...). 0 when
 * written (err may still hold a warning: a trace was cut short and what was
 * readable is exported), -1 with err set, OPP_EXPORT_NOT_HELD (err) when no
 * process has o's rank; nothing is written then. */
#define OPP_CHROME_MAX_TRACES OPP_MODEL_MAX_TRACES
/* An export's status: what its options name (a rank, a device) the traces
 * do not hold, err says which: a usage error, not a trace that cannot be
 * read. */
#define OPP_EXPORT_NOT_HELD (-2)
struct opp_pass;
int opp_export_chrome(struct opp_pass *p, const char *const *traces, size_t ntraces,
                      const struct opp_chrome_opts *o, FILE *out, char *err, size_t errlen);
/* Whether the traces merged in m hold rank (of o's): 0 when one trace
 * does, else OPP_EXPORT_NOT_HELD with err saying none does, or which two
 * both do (a copy, another run's: merged they would be one rank). */
struct opp_model;
int opp_export_chrome_rank_held(const struct opp_model *m, const char *const *traces,
                                size_t ntraces, int64_t rank, char *err, size_t errlen);

/* Folded stacks like torch's export_stacks: per call path (outermost
 * first, ';'-joined) its summed self time, integer us, paths under 1 us
 * left out. cuda: self CUDA time instead of self CPU time. 0 or -1. */
#include "analysis/callpath_tree.h"
int opp_export_folded(const struct opp_model *m, const struct opp_calltree *ct, int cuda,
                      FILE *out);

/* The same as a self-contained SVG flame graph (hover: name, time, share). */
int opp_export_flamegraph(const struct opp_model *m, const struct opp_calltree *ct, int cuda,
                          const char *title, FILE *out);

/* Memory over time, series l of ms (analysis/mem_stream.h), as JSON
 * [times, sizes] like torch's export_memory_timeline: times in us from the
 * series' first allocation or free, sizes one [bytes allocated] row per
 * time (a single category: allocations are not classified). 0 or -1. */
struct opp_mem_stream;
struct opp_memline;
int opp_export_memory_json(struct opp_mem_stream *ms, const struct opp_memline *l, FILE *out);
/* The same as an SVG plot: peak marked, the operators that allocated most
 * named (l's tops: read with them). */
int opp_export_memory_svg(struct opp_mem_stream *ms, const struct opp_memline *l, const char *title,
                          FILE *out);

/* What the HTML page shows, each computed beforehand, from the pass over
 * the traces (analysis/table_stream.h, advise_pass.h, gpu_stream.h,
 * mem_stream.h). */
#define OPP_HTML_BAR_PX 700 /* width of a stream's bar */
struct opp_advice;
struct opp_agg;
struct opp_gpu_stats;
struct opp_html_page {
    const struct opp_model *m;       /* the processes, threads, drops, warning; agg's, ct's names */
    uint64_t gpu_ops;                /* kernels, copies, sets, syncs and overhead records */
    const struct opp_advice *advice; /* advise's findings */
    const struct opp_agg *agg;       /* the table of every call */
    const struct opp_calltree *ct;   /* their call paths */
    const struct opp_gpu_stats *gs;  /* every op's */
    const uint8_t *busy;             /* OPP_HTML_BAR_PX pixels each of gs's streams, 1: busy */
    struct opp_mem_stream *ms;       /* the series, read with the CPU's and their operators */
};
/* One self-contained HTML page (no script, nothing fetched): a summary
 * line, advise's findings, the key_averages table, the call tree, the
 * flame graph of self CPU time, a busy/idle bar per GPU stream and each
 * device's memory plot and the CPU's, the writers' own output embedded.
 * name: the page's title. 0 or -1. */
int opp_export_html(const struct opp_html_page *page, const char *name, FILE *out);

/* The traces of pass p (analysis/pass.h) as an
 * SQLite database at path (a new file), in the schema of docs/SQLITE.md:
 * strings, processes, threads, every CPU operator with its shapes, FLOPs,
 * status and correlation ids, GPU operations, memory records and the
 * program's steps; read as they stream (analysis/pass.h), without loading
 * them: memory bounded by the threads, the calls still open and the GPU
 * records' join, not by the calls. 0 (err: the trace's warning, if any);
 * -1 with err set (no room in TMPDIR for the GPU join's sorts included;
 * built without libsqlite3-dev). */
struct opp_pass;
int opp_export_sqlite(struct opp_pass *p, const char *path, char *err, size_t errlen);

#endif
