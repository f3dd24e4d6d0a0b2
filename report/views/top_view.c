/* `opprof top`'s screen as text (top_view.h): torch's time, percentage
 * and memory formats (fmt.h), names as the table shows them. */
#include "views/top_view.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "views/fmt.h"

#define NAME_MAX_COLS 50
#define W 12 /* a number column, as wide as the table's */

enum tcol {
    T_RATE,
    T_SELF_PCT,
    T_SELF,
    T_TOTAL,
    T_GPU,
    T_MEM,
    T_CALLS,
    T_ALL_SELF,
    T_ALL_TOTAL,
    T_ALL_GPU,
    NTCOLS
};

static const char *const heads[NTCOLS] = {"Calls/s",   "Self CPU %",   "Self CPU", "CPU total",
                                          "GPU time",  "Self CPU Mem", "Calls",    "Self CPU",
                                          "CPU total", "GPU time"};

/* The column that sort key s orders by, or -1 (the name). */
static int sorted_col(enum opp_top_sort s)
{
    switch (s) {
    case OPP_TOP_SORT_TOTAL:
        return T_TOTAL;
    case OPP_TOP_SORT_SELF:
        return T_SELF;
    case OPP_TOP_SORT_CALLS:
        return T_RATE;
    case OPP_TOP_SORT_GPU:
        return T_GPU;
    case OPP_TOP_SORT_MEM:
        return T_MEM;
    default:
        return -1;
    }
}

static const char *cell(const struct opp_top_view *v, const struct opp_top_line *l, int c,
                        char *buf)
{
    switch (c) {
    case T_RATE:
        if (v->secs <= 0)
            return "-";
        snprintf(buf, OPP_FMT_MAX, "%.1f", (double)l->last.calls / v->secs);
        return buf;
    case T_SELF_PCT: /* of no time at all, no percentage */
        if (!v->last_sum.self_ns)
            return "-";
        return opp_fmt_percent(buf, (double)l->last.self_ns, (double)v->last_sum.self_ns);
    case T_SELF:
        return opp_fmt_time(buf, (double)l->last.self_ns);
    case T_TOTAL:
        return opp_fmt_time(buf, (double)l->last.total_ns);
    case T_GPU:
        return opp_fmt_time(buf, (double)l->last.gpu_ns);
    case T_MEM:
        return opp_fmt_memory(buf, l->last.mem);
    case T_CALLS:
        snprintf(buf, OPP_FMT_MAX, "%" PRIu64, l->all.calls);
        return buf;
    case T_ALL_SELF:
        return opp_fmt_time(buf, (double)l->all.self_ns);
    case T_ALL_TOTAL:
        return opp_fmt_time(buf, (double)l->all.total_ns);
    default:
        return opp_fmt_time(buf, (double)l->all.gpu_ns);
    }
}

static int shown(const struct opp_top_view *v, int c)
{
    if (c == T_GPU || c == T_ALL_GPU)
        return v->gpu;
    return c != T_MEM || v->mem;
}

static void header(FILE *f, const struct opp_top_view *v, const struct opp_top_show *o)
{
    char t[OPP_FMT_MAX];
    fprintf(f, "opprof top: %s%s",
            o->ended       ? "run ended"
            : o->lost      ? "collector lost"
            : v->recording ? "recording"
                           : "recording stopped",
            o->paused ? " (display paused)" : "");
    if (!o->ended && !o->lost) /* those connected: none once it ended; unknown once lost */
        fprintf(f, ", %" PRIu32 " process%s, %" PRIu32 " thread%s", v->procs,
                v->procs == 1 ? "" : "es", v->threads, v->threads == 1 ? "" : "s");
    if (v->secs > 0)
        fprintf(f, ", last %.1f s", v->secs);
    fputc('\n', f);
    fprintf(f, "records: %" PRIu64, v->events);
    if (v->secs > 0)
        fprintf(f, " (%.0f/s)", (double)v->last_events / v->secs);
    fprintf(f, ", dropped: %" PRIu64, v->dropped);
    if (v->interrupted) /* apart: a larger OPPROF_BUFFER would not have kept them */
        fprintf(f, " (%" PRIu64 " buffers full, %" PRIu64 " interrupted by a signal handler)",
                v->dropped - v->interrupted, v->interrupted);
    fputc('\n', f);
    if (v->steps) {
        fprintf(f, "steps (%s): %" PRIu64, v->step_name, v->steps);
        if (v->secs > 0)
            fprintf(f, ", %.2f/s", (double)v->last_steps / v->secs);
        if (v->p50_ns) {
            fprintf(f, ", latency p50 %s", opp_fmt_time(t, (double)v->p50_ns));
            fprintf(f, " p90 %s", opp_fmt_time(t, (double)v->p90_ns));
        }
        fputc('\n', f);
    }
}

static void rule(FILE *f, size_t name_w, const struct opp_top_view *v)
{
    for (size_t i = 0; i < name_w; i++)
        fputc('-', f);
    for (int c = 0; c < NTCOLS; c++)
        if (shown(v, c))
            fprintf(f, "  %s%s", c == T_CALLS ? "|  " : "", "------------");
    fputc('\n', f);
}

size_t opp_top_lines_around(const struct opp_top_view *v, const struct opp_top_show *o)
{
    /* header: the state, records, steps; the spans, a rule, the headings, a
     * rule; below: a rule, the totals, the keys */
    return 2 + (v->steps != 0) + 4 + 2 + (o->keys != 0);
}

int opp_out_top(FILE *f, const struct opp_top_view *v, const struct opp_top_show *o)
{
    header(f, v, o);
    size_t n = o->rows && o->rows < v->n ? o->rows : v->n;
    static const char *const group_head[] = {"Name", "Library", "Layer"};
    /* as wide as its heading too: "Library" over "blas" and "torch" */
    size_t name_w = strlen(group_head[o->group]);
    for (size_t i = 0; i < n; i++) {
        size_t w = opp_text_width(v->lines[i].name, NAME_MAX_COLS);
        name_w = w > name_w ? w : name_w;
    }
    if (name_w > NAME_MAX_COLS)
        name_w = NAME_MAX_COLS;
    int sc = sorted_col(o->sort);
    /* the two spans: the last interval's and the run's */
    fprintf(f, "%*s", (int)name_w, "");
    int last_cols = 0;
    for (int c = 0; c < T_CALLS; c++)
        last_cols += shown(v, c);
    const char *since = v->from_start ? "since the start" : "since first watched";
    const char *last = v->idle ? "last interval: no calls" : v->secs > 0 ? "last interval" : since;
    fprintf(f, "  %-*s  |  %s\n", last_cols * (W + 2) - 2, last, since);
    rule(f, name_w, v);
    fprintf(f, "%*s", (int)name_w, group_head[o->group]);
    for (int c = 0; c < NTCOLS; c++) {
        if (!shown(v, c))
            continue;
        char h[W + 4];
        snprintf(h, sizeof h, "%s%s", c == sc ? "*" : "", heads[c]);
        fprintf(f, "  %s%*s", c == T_CALLS ? "|  " : "", W, h);
    }
    fputc('\n', f);
    rule(f, name_w, v);
    for (size_t i = 0; i < n; i++) {
        const struct opp_top_line *l = &v->lines[i];
        char name[OPP_TEXT_BUF(NAME_MAX_COLS)], buf[OPP_FMT_MAX];
        opp_text_fit(name, l->name, name_w);
        fprintf(f, "%*s%s", (int)(name_w - opp_text_width(name, name_w)), "", name);
        for (int c = 0; c < NTCOLS; c++)
            if (shown(v, c))
                fprintf(f, "  %s%*s", c == T_CALLS ? "|  " : "", W, cell(v, l, c, buf));
        fputc('\n', f);
    }
    rule(f, name_w, v);
    char t[OPP_FMT_MAX], u[OPP_FMT_MAX];
    fprintf(f, "Self CPU time total: %s (last interval), %s (%s)",
            opp_fmt_time(t, (double)v->last_sum.self_ns),
            opp_fmt_time(u, (double)v->all_sum.self_ns), since);
    if (v->n > n || v->left_out)
        fprintf(f, "; %zu more rows", v->n - n + v->left_out);
    fputc('\n', f);
    if (o->keys)
        fprintf(f, "keys: s sort (%s)  g group (%s)  p pause  q quit\n", opp_top_sort_name(o->sort),
                opp_top_group_name(o->group));
    return ferror(f) ? -EIO : 0;
}
