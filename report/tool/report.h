/* `opprof report`'s own: its arguments and its views (report_views.c),
 * shared by the command (cmd_report.c) and the views' table. */
#ifndef OPP_TOOL_REPORT_H
#define OPP_TOOL_REPORT_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/aggregate.h"
#include "analysis/model.h"
#include "analysis/stream_meta.h"
#include "views/output.h"
#include "views/tree_view.h"

enum format { FMT_TABLE, FMT_CSV, FMT_JSON };
enum view_id { VIEW_GPU, VIEW_TREE, VIEW_STEP, VIEW_BY_RANK, VIEW_BY_PROCESS };

struct report_args {
    const char *trace;         /* the first */
    const char *const *traces; /* every trace named: one per host, merged */
    size_t ntraces;
    int format; /* enum format */
    int format_given;
    int sort_given;
    unsigned views; /* the views chosen (bits of enum view_id); none: the table */
    const struct view *view;
    const char *step; /* --step NAME: steps and latency */
    uint32_t window_k; /* --window K: the K-th window a schedule recorded (1..) */
    struct opp_tree_opts tree_opts;
    struct opp_agg_opts agg;
    struct opp_out_opts out;
    int from_given, to_given;
    regex_t match; /* agg.match points here when --match was given */
    const char *match_text; /* --match's REGEX as given */
    int stream;             /* --stream, --no-stream: accepted for old scripts, no effect */
};

/* The views besides the table, one line each: the option that chooses
 * it, the formats it writes (a bit per enum format) and what it says when
 * asked for another, whether it takes the table's filters (--from, --to,
 * --window, --match, --lib), whether it takes --limit (what it
 * limits, for the help; NULL: it refuses it), what it is called when it
 * refuses a summary trace (NULL: it takes one), and how it reads traces
 * in one pass. */
struct opp_pass;
struct opp_table_stream;
/* A view read in one pass over traces (analysis/pass.h; a summary
 * trace's nodes as counted calls), for every trace whatever its size: read computes and prints, over pass p (opened
 * by the caller: its model has what the first read learnt, for the
 * filters and warnings; ra's --window K made its time range) and t, a table stream over p for the views that
 * add calls up. 0 and the output's status in *rc, 1 when the trace
 * cannot be answered this way (no room in TMPDIR: err says why, refused),
 * -1 on error (err). Several traces are read as one, as when loaded. */
typedef int view_read_fn(const struct report_args *ra, struct opp_pass *p,
                         struct opp_table_stream *t, int *rc, char *err, size_t errlen);
struct view {
    const char *option;
    unsigned formats;
    const char *other_format;
    int filters;
    const char *limits;
    const char *needs_calls;
    view_read_fn *read;
    int names_read; /* --match's names are known once read: read checks them */
};
extern const struct view views[];
/* The table, its CSV and JSON, read in one pass (names_read). */
view_read_fn report_table_read;
extern const size_t nviews;

/* A view's status (as its show returns): a name, window or rank the
 * trace does not hold (--step NAME, --window K), said on stderr; the exit
 * status is 2, as for --lib's, --match's and --pid's. */
#define REPORT_NAME_UNKNOWN 2

/* The view's (or the table's) status rc as the exit status: what went
 * wrong said, the trace's warnings when it went right (cmd_report.c). */
int report_finish(const struct report_args *ra, const struct opp_model *m, int rc);
/* --window K as the time window of the K-th of w[0..nw) (the traces'
 * first time first), said on stderr: 0, or REPORT_NAME_UNKNOWN when
 * there is no such window (said). */
struct opp_window;
int report_window(struct report_args *ra, const struct opp_window *w, size_t nw, uint64_t first);
/* The filters name what the trace has: 0, or 2 (said). */
int report_filters_known(const struct report_args *ra, const struct opp_model *m);

/* The report of traces read in one pass (report_stream.c): the exit
 * status. */
int report_streamed(const struct report_args *ra);

#endif
