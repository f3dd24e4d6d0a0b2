/* `opprof export html`: one self-contained page (nothing fetched) with the
 * findings of `opprof advise` (analysis/advise.h) linking to the table's
 * rows and the tree's nodes they name, the
 * key_averages table (sortable, filterable), the call tree (folding, with
 * no script), the flame graph (export_stacks.c; search and zoom), each GPU
 * stream's busy and idle time as a bar (gpu_stats.c), each device's memory
 * plot and the CPU's (export_memory.c), each computed beforehand
 * (struct opp_html_page: from the pass). The SVG writers' own output is
 * embedded inline without its XML declaration; the page's script
 * (html_report.js, built in) only adds behaviour to what is already
 * there, and takes its state from the address's #fragment. */
#include "exports/export.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/advise.h"
#include "analysis/aggregate.h"
#include "analysis/callpath_tree.h"
#include "analysis/gpu_stats.h"
#include "analysis/mem_stream.h"
#include "views/fmt.h"
#include "views/output.h"

#define BAR_PX OPP_HTML_BAR_PX

/* The page's script, built in (the path is the build's, from the top). */
__asm__(".section .rodata\n"
        ".global opp_html_script\n"
        "opp_html_script:\n"
        ".incbin \"report/exports/html_report.js\"\n"
        ".byte 0\n"
        ".previous\n");
extern const char opp_html_script[];

/* s (its first n bytes) as HTML text: as the inline SVG's text
 * (opp_xml_textn: '<', '>', '&' escaped, control characters but tab left
 * out, U+FFFD for what is not UTF-8), and '"' and '\'' escaped for an
 * attribute. A quote is never inside a UTF-8 sequence: the runs between
 * them are whole. */
static void html_text(FILE *f, const char *s, size_t n)
{
    const char *end = s + n, *run = s, *p = s;
    for (; p < end && *p; p++) {
        if (*p == '"' || *p == '\'') {
            opp_xml_textn(f, run, (size_t)(p - run));
            fputs(*p == '"' ? "&quot;" : "&#39;", f);
            run = p + 1;
        }
    }
    opp_xml_textn(f, run, (size_t)(p - run));
}

/* An SVG document written inline, as it is written: from its <svg
 * element on (its XML declaration left out), never held whole (a memory
 * plot has a point per allocation). */
struct svg_inline {
    FILE *out;
    size_t matched; /* of "<svg", until it is found */
};

static ssize_t inline_write(void *ctx, const char *buf, size_t n)
{
    static const char tag[] = "<svg";
    struct svg_inline *x = ctx;
    size_t i = 0;
    for (; x->matched < 4 && i < n; i++) {
        x->matched = buf[i] == tag[x->matched] ? x->matched + 1 : buf[i] == '<';
        if (x->matched == 4)
            fputs(tag, x->out);
    }
    if (i < n && fwrite(buf + i, 1, n - i, x->out) != n - i)
        return -1;
    return (ssize_t)n;
}

/* A stream writing into x->out as struct svg_inline says, NULL (errno
 * set). */
static FILE *inline_open(struct svg_inline *x, FILE *out)
{
    static const cookie_io_functions_t io = {.write = inline_write};
    *x = (struct svg_inline){.out = out};
    return fopencookie(x, "w", io);
}

/* The writer's result and the stream's closing: 0 or -1. */
static int inline_close(FILE *f, int rc)
{
    return fclose(f) || rc ? -1 : 0;
}

/* ---- the operator table: one row per key_averages row, each cell with
 * its value for sorting (data-v) beside its text ---- */

enum cell_kind { CK_TIME, CK_PCT_SELF, CK_PCT_SELF_CUDA, CK_COUNT, CK_BYTES };

struct html_col {
    const char *head;
    enum cell_kind kind;
    int when; /* 0 always, 1 with CUDA columns, 2 with CPU memory, 3 with CUDA memory */
    enum opp_sort_key value; /* opp_row_metric's */
};

/* torch's columns, in its order; the name first. */
static const struct html_col cols[] = {
    {"Self CPU %", CK_PCT_SELF, 0, OPP_SORT_SELF_CPU_TIME_TOTAL},
    {"Self CPU", CK_TIME, 0, OPP_SORT_SELF_CPU_TIME_TOTAL},
    {"CPU total %", CK_PCT_SELF, 0, OPP_SORT_CPU_TIME_TOTAL},
    {"CPU total", CK_TIME, 0, OPP_SORT_CPU_TIME_TOTAL},
    {"CPU time avg", CK_TIME, 0, OPP_SORT_CPU_TIME},
    {"Self CUDA", CK_TIME, 1, OPP_SORT_SELF_CUDA_TIME_TOTAL},
    {"Self CUDA %", CK_PCT_SELF_CUDA, 1, OPP_SORT_SELF_CUDA_TIME_TOTAL},
    {"CUDA total", CK_TIME, 1, OPP_SORT_CUDA_TIME_TOTAL},
    {"CUDA time avg", CK_TIME, 1, OPP_SORT_CUDA_TIME},
    {"CPU Mem", CK_BYTES, 2, OPP_SORT_CPU_MEMORY_USAGE},
    {"Self CPU Mem", CK_BYTES, 2, OPP_SORT_SELF_CPU_MEMORY_USAGE},
    {"CUDA Mem", CK_BYTES, 3, OPP_SORT_CUDA_MEMORY_USAGE},
    {"Self CUDA Mem", CK_BYTES, 3, OPP_SORT_SELF_CUDA_MEMORY_USAGE},
    {"# of Calls", CK_COUNT, 0, OPP_SORT_COUNT},
};
#define NCOLS (sizeof cols / sizeof cols[0])

static int section_table(FILE *out, const struct opp_agg *ap)
{
    const struct opp_agg a = *ap;
    /* the text table's columns (views/table.c) */
    const int shown[4] = {1, opp_agg_has_cuda_time(&a) || a.cuda_calls, opp_agg_has_cpu_mem(&a),
                          opp_agg_has_cuda_mem(&a)};
    fprintf(out, "<h2 id=\"operators\">Operators</h2>\n<p><input id=\"filter\" type=\"search\" "
                 "placeholder=\"filter by name\" aria-label=\"filter by name\"> "
                 "<span id=\"shown\">%zu of %zu operators</span></p>\n"
                 "<table id=\"ops\">\n<thead><tr><th data-type=\"text\">Name</th>",
            a.nrows, a.nrows);
    for (size_t c = 0; c < NCOLS; c++)
        if (shown[cols[c].when])
            fprintf(out, "<th>%s</th>", cols[c].head);
    fputs("</tr></thead>\n<tbody>\n", out);
    char buf[OPP_FMT_MAX];
    for (size_t i = 0; i < a.nrows; i++) {
        const struct opp_row *r = &a.rows[i];
        fprintf(out, "<tr id=\"op-%zu\"><td>", i);
        html_text(out, r->key, strlen(r->key));
        fputs("</td>", out);
        for (size_t c = 0; c < NCOLS; c++) {
            if (!shown[cols[c].when])
                continue;
            double v = opp_row_metric(r, cols[c].value);
            const char *t = buf;
            switch (cols[c].kind) {
            case CK_TIME: t = opp_fmt_time(buf, v); break;
            case CK_PCT_SELF:
            case CK_PCT_SELF_CUDA: {
                uint64_t base = cols[c].kind == CK_PCT_SELF ? a.self_cpu_time_total_ns
                                                            : a.self_cuda_time_total_ns;
                t = opp_fmt_percent(buf, base ? v : 0, base ? (double)base : 1);
                break;
            }
            case CK_BYTES: t = opp_fmt_memory(buf, (int64_t)v); break;
            case CK_COUNT: snprintf(buf, sizeof buf, "%" PRIu64, r->count); break;
            }
            fprintf(out, "<td data-v=\"%.17g\">%s</td>", v, t);
        }
        fputs("</tr>\n", out);
    }
    fputs("</tbody>\n</table>\n", out);
    return ferror(out) ? -1 : 0;
}

/* ---- the findings of `opprof advise`, ranked: each names its operator
 * with a link to its row of the table (op-N: the row's index, the table's
 * rows in the same order) and to its heaviest node of the call tree (the
 * script finds it by name and opens the nodes above it) ---- */

static void html_str(FILE *f, const char *s)
{
    html_text(f, s, strlen(s));
}

/* label and s on a line of their own, when s says something. */
static void html_line(FILE *f, const char *label, const char *s)
{
    if (!s[0])
        return;
    fputs(label, f);
    html_str(f, s);
}

/* The first operator a finding names ("aten::mul, aten::add": aten::mul),
 * its table row's index in *row; 0 when the table has none. */
static int finding_row(const struct opp_agg *a, const char *op, size_t *row)
{
    size_t len = strcspn(op, ",");
    for (size_t i = 0; i < a->nrows; i++)
        if (strlen(a->rows[i].key) == len && !strncmp(a->rows[i].key, op, len)) {
            *row = i;
            return 1;
        }
    return 0;
}

static void finding_item(FILE *out, const struct opp_agg *a, const struct opp_finding *x)
{
    fputs("<li><b>", out);
    html_str(out, x->what);
    fputs("</b> <span class=\"rule\">", out);
    html_str(out, x->rule);
    fputs("</span>", out);
    size_t row;
    if (x->op[0]) {
        size_t len = strcspn(x->op, ",");
        fputs("<br>where: ", out);
        html_str(out, x->op);
        if (finding_row(a, x->op, &row))
            fprintf(out, " (<a href=\"#op-%zu\">row</a>, ", row);
        else
            fputs(" (", out);
        fputs("<a class=\"to-tree\" href=\"#calltree\" data-name=\"", out);
        html_text(out, x->op, len);
        fputs("\">call tree</a>)", out);
    }
    html_line(out, "<br>in layer: ", x->layer);
    html_line(out, "<br>called at: ", x->code);
    if (x->step >= 0) {
        fprintf(out, "<br>step %" PRId64, x->step);
        if (x->step_last > x->step)
            fprintf(out, " to %" PRId64, x->step_last);
    }
    if (x->rank >= 0)
        fprintf(out, "<br>rank %" PRId64, x->rank);
    if (x->device >= 0)
        fprintf(out, "<br>device %" PRId64, x->device);
    if (x->stream >= 0)
        fprintf(out, ", stream %" PRId64, x->stream);
    if (x->ms_per_step >= 0) {
        fprintf(out, "<br>how much: %.3f ms a step", x->ms_per_step);
        if (x->share >= 0)
            fprintf(out, ", %.1f%% of the steps' time", x->share * 100);
    }
    html_line(out, "<br>evidence: ", x->evidence);
    html_line(out, "<br>try: ", x->try_);
    fputs("</li>\n", out);
}

static int section_findings(FILE *out, const struct opp_agg *a, const struct opp_advice *ap)
{
    const struct opp_advice adv = *ap;
    fputs("<h2 id=\"findings\">Findings</h2>\n<p>Steps: ", out);
    html_str(out, adv.steps_what);
    if (adv.nsteps)
        fprintf(out, ", %zu", adv.nsteps);
    fputs(". Ranked by the time at stake, as <code>opprof advise</code> says them.</p>\n", out);
    size_t lost = 0, n = 0;
    for (size_t i = 0; i < adv.fs.n; i++)
        if (adv.fs.f[i].lost) {
            fputs(lost++ ? ""
                         : "<p>The trace lost data; the findings rest on what it kept:</p>"
                           "\n<ul id=\"lost\">\n",
                  out);
            finding_item(out, a, &adv.fs.f[i]);
        }
    if (lost)
        fputs("</ul>\n", out);
    for (size_t i = 0; i < adv.fs.n; i++)
        if (!adv.fs.f[i].lost) {
            fputs(n++ ? "" : "<ol id=\"advice\">\n", out);
            finding_item(out, a, &adv.fs.f[i]);
        }
    fputs(n ? "</ol>\n" : "<p id=\"advice\">No findings.</p>\n", out);
    return ferror(out) ? -1 : 0;
}

/* ---- the call tree: one <details> per call path, folding open and shut
 * with no script; the two top levels open, children by CPU total. Paths
 * under 0.1% of the roots' total, and past 5000 shown, are counted. ---- */

#define TREE_NODES_MAX 5000
#define TREE_OPEN_DEPTH 2

struct tree_out {
    FILE *out;
    const struct opp_model *m;
    const struct opp_calltree *ct;
    struct opp_ct_order ord;
    uint64_t floor;
    size_t shown, hidden;
};

static void tree_node(struct tree_out *t, uint32_t i)
{
    const struct opp_ct_node *n = &t->ct->nodes[i];
    char tot[OPP_FMT_MAX], pct[OPP_FMT_MAX], self[OPP_FMT_MAX], cuda[OPP_FMT_MAX];
    int kids = 0;
    for (uint32_t c = t->ord.first[i]; c != OPP_CT_ROOT; c = t->ord.next[c])
        kids += t->ct->nodes[c].total_ns >= t->floor;
    t->shown++;
    fputs(kids ? (n->depth < TREE_OPEN_DEPTH ? "<details open><summary>" : "<details><summary>")
               : "<div class=\"leaf\">",
          t->out);
    const char *name = opp_model_str(t->m, n->name);
    fputs("<span class=\"n\">", t->out);
    html_text(t->out, name, strlen(name));
    fprintf(t->out, "</span> <span class=\"t\">%s (%s), self %s, %" PRIu64 " call%s",
            opp_fmt_time(tot, (double)n->total_ns), opp_fmt_percent(pct, (double)n->total_ns, (double)t->ord.grand),
            opp_fmt_time(self, (double)n->self_ns), n->calls, n->calls == 1 ? "" : "s");
    if (n->cuda_total_ns)
        fprintf(t->out, ", CUDA %s", opp_fmt_time(cuda, (double)n->cuda_total_ns));
    fputs("</span>", t->out);
    if (!kids) {
        fputs("</div>\n", t->out);
        return;
    }
    fputs("</summary>\n", t->out);
    for (uint32_t c = t->ord.first[i]; c != OPP_CT_ROOT; c = t->ord.next[c]) {
        if (t->ct->nodes[c].total_ns < t->floor || t->shown >= TREE_NODES_MAX)
            t->hidden++;
        else
            tree_node(t, c);
    }
    fputs("</details>\n", t->out);
}

static int section_tree(FILE *out, const struct opp_model *m, const struct opp_calltree *ctp)
{
    const struct opp_calltree ct = *ctp;
    struct tree_out t = {.out = out, .m = m, .ct = ctp};
    if (opp_calltree_order(m, &ct, &t.ord))
        return -1;
    t.floor = t.ord.grand / 1000;
    fputs("<h2 id=\"calltree\">Call tree</h2>\n<div id=\"tree\">\n", out);
    for (uint32_t c = t.ord.roots; c != OPP_CT_ROOT; c = t.ord.next[c]) {
        if (ct.nodes[c].total_ns < t.floor || t.shown >= TREE_NODES_MAX)
            t.hidden++;
        else
            tree_node(&t, c);
    }
    if (t.hidden)
        fprintf(out, "<p class=\"more\">%zu smaller call paths not shown (under 0.1%% of the "
                     "total, or past %d)</p>\n",
                t.hidden, TREE_NODES_MAX);
    fputs("</div>\n", out);
    opp_calltree_order_free(&t.ord);
    return ferror(out) ? -1 : 0;
}

static int section_flame(FILE *out, const struct opp_model *m, const struct opp_calltree *ct,
                         const char *name)
{
    char title[300];
    snprintf(title, sizeof title, "%s: self CPU time", name);
    fputs("<h2 id=\"flamegraph\">Flame graph</h2>\n<p><input id=\"search\" type=\"search\" "
          "placeholder=\"search frames (regular expression)\" aria-label=\"search frames\"> "
          "<span id=\"matched\"></span> <button id=\"unzoom\" type=\"button\">reset zoom</button> "
          "click a frame to zoom</p>\n<div id=\"flame\">\n", out);
    struct svg_inline x;
    FILE *f = inline_open(&x, out);
    if (!f || inline_close(f, opp_export_flamegraph(m, ct, 0, title, f)))
        return -1;
    fputs("</div>\n", out);
    return 0;
}

/* One bar per stream over the span of its device's work: busy pixels dark,
 * idle light (busy: OPP_HTML_BAR_PX a stream); the figures beside it. */
static int section_streams(FILE *out, const struct opp_model *m, const struct opp_gpu_stats *gs,
                           const uint8_t *busy)
{
    const struct opp_gpu_stats s = *gs;
    fputs("<h2 id=\"streams-h\">GPU streams</h2>\n", out);
    if (!s.nstreams) { /* GPU chunks may hold only names and stacks */
        fputs("<p id=\"streams\">no GPU activity records</p>\n", out);
        return 0;
    }
    double row = 26, height = 10 + row * (double)(s.nstreams ? s.nstreams : 1);
    fprintf(out, "<svg id=\"streams\" width=\"%d\" height=\"%.0f\" "
                 "xmlns=\"http://www.w3.org/2000/svg\" style=\"font:12px sans-serif\">\n",
            BAR_PX + 420, height);
    for (size_t i = 0; i < s.nstreams; i++) {
        const struct opp_gpu_stream_stats *st = &s.streams[i];
        const uint8_t *px = busy + i * BAR_PX;
        uint64_t t0 = 0, t1 = 0;
        for (size_t d = 0; d < s.ndevs; d++)
            if (s.devs[d].device == st->device) {
                t0 = s.devs[d].first_ns;
                t1 = s.devs[d].last_ns;
            }
        double y = 5 + row * (double)i;
        fprintf(out, "<g class=\"stream\"><text x=\"0\" y=\"%.0f\">pid %u dev %u stream %u</text>"
                     "<rect x=\"170\" y=\"%.0f\" width=\"%d\" height=\"18\" fill=\"#e8e8e8\"/>",
                y + 13, m->procs[st->proc].pid, st->device, st->stream, y, BAR_PX);
        for (size_t p = 0; p < BAR_PX;) {
            if (!px[p]) {
                p++;
                continue;
            }
            size_t q = p;
            while (q < BAR_PX && px[q])
                q++;
            fprintf(out, "<rect x=\"%zu\" y=\"%.0f\" width=\"%zu\" height=\"18\" fill=\"#3a6ea5\"/>",
                    170 + p, y, q - p);
            p = q;
        }
        char bt[OPP_FMT_MAX], sp[OPP_FMT_MAX], pct[OPP_FMT_MAX];
        fprintf(out, "<text x=\"%d\" y=\"%.0f\">busy %s of %s (%s), %" PRIu64 " ops</text></g>\n",
                BAR_PX + 180, y + 13, opp_fmt_time(bt, (double)st->busy_ns),
                opp_fmt_time(sp, t1 > t0 ? (double)(t1 - t0) : 0),
                opp_fmt_percent(pct, (double)st->busy_ns, t1 > t0 ? (double)(t1 - t0) : 0),
                st->ops);
    }
    fputs("</svg>\n", out);
    return 0;
}

/* Series l of ms as an SVG inline. 0 or -1. */
static int memory_plot(FILE *out, struct opp_mem_stream *ms, const struct opp_memline *l,
                       const char *title)
{
    struct svg_inline x;
    FILE *f = inline_open(&x, out);
    return !f || inline_close(f, opp_export_memory_svg(ms, l, title, f)) ? -1 : 0;
}

static int section_memory(FILE *out, struct opp_mem_stream *ms, const char *name)
{
    const struct opp_model *m = opp_mem_stream_model(ms);
    fputs("<h2 id=\"memory-h\">Device memory</h2>\n", out);
    if (!m->gpu.nmemseries) {
        fputs("<p id=\"memory\">no device memory records</p>\n", out);
        return 0;
    }
    fputs("<div id=\"memory\">\n", out);
    for (size_t i = 0; i < m->gpu.nmemseries; i++) {
        char title[300];
        struct opp_memline l;
        snprintf(title, sizeof title, "%s: device %u", name, m->gpu.memseries[i].device);
        if (opp_mem_stream_find(ms, m->gpu.memseries[i].device, &l) &&
            memory_plot(out, ms, &l, title))
            return -1;
    }
    fputs("</div>\n", out);
    return 0;
}

/* PyTorch's CPU allocations, when the trace has them. */
static int section_cpu_memory(FILE *out, struct opp_mem_stream *ms, const char *name)
{
    struct opp_memline l;
    if (!opp_mem_stream_find(ms, OPP_MEM_CPU, &l))
        return 0;
    fputs("<h2>CPU memory</h2>\n<div id=\"cpu-memory\">\n", out);
    if (memory_plot(out, ms, &l, name))
        return -1;
    fputs("</div>\n", out);
    return 0;
}

int opp_export_html(const struct opp_html_page *pg, const char *name, FILE *out)
{
    const struct opp_model *m = pg->m;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>opprof: ",
          out);
    html_text(out, name, strlen(name));
    fputs("</title>\n<style>body{font-family:sans-serif;margin:16px;background:#fff}"
          "h2{margin-top:28px}svg{max-width:100%;height:auto}"
          "table{border-collapse:collapse;font:12px monospace}"
          "th{cursor:pointer;background:#eee;position:sticky;top:0;padding:3px 6px;user-select:none}"
          "th[data-dir=desc]::after{content:' \\25BC'}th[data-dir=asc]::after{content:' \\25B2'}"
          "td{padding:2px 6px;text-align:right;border-bottom:1px solid #eee}"
          "td:first-child{text-align:left;max-width:60ch;overflow:hidden;text-overflow:ellipsis;"
          "white-space:nowrap}tr:hover td{background:#f4f8ff}"
          "#tree{font:12px monospace}#tree details,#tree .leaf{margin-left:18px}"
          "#tree>details,#tree>.leaf{margin-left:0}#tree .t{color:#555}"
          "#flame g{cursor:pointer}#flame g.match rect{fill:#e040e0}"
          "nav a{margin-right:12px}#advice li,#lost li{margin-bottom:8px}.rule{color:#888}"
          "#tree .hit{background:#ffe680}</style>\n</head>\n<body>\n<h1>opprof: ",
          out);
    html_text(out, name, strlen(name));
    fprintf(out,
            "</h1>\n<p id=\"summary\">%" PRIu64 " events, %zu processes, %zu threads, "
            "%zu GPU ops",
            m->events, m->nprocs, m->nthreads, (size_t)pg->gpu_ops);
    if (m->dropped) { /* the total, then each reason's share of it */
        const struct {
            uint64_t n;
            const char *why;
        } drops[] = {{opp_model_dropped_full(m), "buffers full"},
                     {m->interrupted, "interrupted by a signal handler"},
                     {m->sum_dropped, "past the summary's node bound"}};
        fprintf(out, ", %" PRIu64 " records dropped (", m->dropped);
        const char *sep = "";
        for (size_t i = 0; i < sizeof drops / sizeof *drops; i++)
            if (drops[i].n) {
                fprintf(out, "%s%" PRIu64 " %s", sep, drops[i].n, drops[i].why);
                sep = ", ";
            }
        fputc(')', out);
    }
    fputs(m->sum.warning[0] ? "; warning: " : "", out);
    html_text(out, m->sum.warning, strlen(m->sum.warning));
    fputs("</p>\n", out);
    fputs("<nav><a href=\"#findings\">Findings</a><a href=\"#operators\">Operators</a>"
          "<a href=\"#calltree\">Call tree</a>"
          "<a href=\"#flamegraph\">Flame graph</a><a href=\"#streams-h\">GPU streams</a>"
          "<a href=\"#memory-h\">Memory</a></nav>\n",
          out);
    if (section_findings(out, pg->agg, pg->advice) || section_table(out, pg->agg) ||
        section_tree(out, m, pg->ct) || section_flame(out, m, pg->ct, name) ||
        section_streams(out, m, pg->gs, pg->busy) || section_memory(out, pg->ms, name) ||
        section_cpu_memory(out, pg->ms, name))
        return -1;
    fprintf(out, "<script>\n%s</script>\n</body>\n</html>\n", opp_html_script);
    return ferror(out) ? -1 : 0;
}
