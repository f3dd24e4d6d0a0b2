/* `opprof export html`: one self-contained page (no script, no network) with
 * the key_averages table (views/table.c), the flame graph (export_stacks.c),
 * each GPU stream's busy and idle time as a bar (gpu_stats.c), each
 * device's memory plot and the CPU's (export_memory.c). The writers' own output is embedded: the
 * table as escaped text, the SVGs inline without their XML declaration. */
#include "exports/export.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/aggregate.h"
#include "analysis/callpath_tree.h"
#include "analysis/gpu_stats.h"
#include "views/fmt.h"
#include "views/output.h"

#define BAR_PX 700 /* width of a stream's bar */

/* s as HTML text: &, <, >, " and ' escaped. */
static void html_text(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: putc(s[i], f);
        }
    }
}

/* What a writer wrote to a memory stream, or NULL (errno set). */
struct capture {
    char *buf;
    size_t len;
    FILE *f;
};

static int cap_open(struct capture *c)
{
    c->buf = NULL;
    c->len = 0;
    c->f = open_memstream(&c->buf, &c->len);
    return c->f ? 0 : -1;
}

static int cap_close(struct capture *c, int rc)
{
    if (fclose(c->f) || rc) {
        free(c->buf);
        c->buf = NULL;
        return -1;
    }
    return 0;
}

/* An SVG document inline: from its <svg element on. */
static void put_svg(FILE *out, const char *doc)
{
    const char *s = strstr(doc, "<svg");
    fputs(s ? s : "", out);
}

static int section_table(FILE *out, const struct opp_model *m)
{
    struct opp_agg_opts o = {0};
    struct opp_agg a;
    if (opp_aggregate(m, &o, &a))
        return -1;
    struct opp_out_opts oo = {0};
    struct capture c;
    int rc = cap_open(&c);
    if (!rc)
        rc = cap_close(&c, opp_out_table(c.f, &a, &oo));
    opp_agg_free(&a);
    if (rc)
        return -1;
    fputs("<h2>Operators</h2>\n<pre id=\"table\">", out);
    html_text(out, c.buf, c.len);
    fputs("</pre>\n", out);
    free(c.buf);
    return 0;
}

static int section_flame(FILE *out, const struct opp_model *m, const char *name)
{
    struct opp_agg_opts all = {0};
    struct opp_calltree ct;
    if (opp_calltree_build(m, &all, &ct))
        return -1;
    char title[300];
    snprintf(title, sizeof title, "%s: self CPU time", name);
    struct capture c;
    int rc = cap_open(&c);
    if (!rc)
        rc = cap_close(&c, opp_export_flamegraph(m, &ct, 0, title, c.f));
    opp_calltree_free(&ct);
    if (rc)
        return -1;
    fputs("<h2>Flame graph</h2>\n<div id=\"flame\">\n", out);
    put_svg(out, c.buf);
    fputs("</div>\n", out);
    free(c.buf);
    return 0;
}

/* One bar per stream over the span of its device's work: busy pixels dark,
 * idle light; the figures beside it. */
static int section_streams(FILE *out, const struct opp_model *m)
{
    fputs("<h2>GPU streams</h2>\n", out);
    if (!opp_model_has_gpu(m)) {
        fputs("<p id=\"streams\">no GPU activity records</p>\n", out);
        return 0;
    }
    struct opp_agg_opts all = {0};
    struct opp_gpu_stats s;
    if (opp_gpu_stats(m, &all, &s))
        return -1;
    unsigned char *px = malloc(BAR_PX);
    if (!px) {
        opp_gpu_stats_free(&s);
        return -1;
    }
    double row = 26, height = 10 + row * (double)(s.nstreams ? s.nstreams : 1);
    fprintf(out, "<svg id=\"streams\" width=\"%d\" height=\"%.0f\" "
                 "xmlns=\"http://www.w3.org/2000/svg\" style=\"font:12px sans-serif\">\n",
            BAR_PX + 420, height);
    for (size_t i = 0; i < s.nstreams; i++) {
        const struct opp_gpu_stream_stats *st = &s.streams[i];
        uint64_t t0 = 0, t1 = 0;
        for (size_t d = 0; d < s.ndevs; d++)
            if (s.devs[d].device == st->device) {
                t0 = s.devs[d].first_ns;
                t1 = s.devs[d].last_ns;
            }
        memset(px, 0, BAR_PX);
        double span = t1 > t0 ? (double)(t1 - t0) : 1;
        for (size_t k = 0; k < m->gpu.nops; k++) {
            const struct opp_gpu_op *g = &m->gpu.ops[k];
            if (!opp_gpu_op_timed(g) || g->proc != st->proc || g->device != st->device ||
                g->stream != st->stream || g->start_ns < t0 || g->end_ns > t1)
                continue;
            size_t a = (size_t)((double)(g->start_ns - t0) / span * BAR_PX);
            size_t b = (size_t)((double)(g->end_ns - t0) / span * BAR_PX + 0.999);
            for (size_t p = a; p < b && p < BAR_PX; p++)
                px[p] = 1;
            if (a < BAR_PX && a == b)
                px[a] = 1;
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
        char busy[OPP_FMT_MAX], sp[OPP_FMT_MAX], pct[OPP_FMT_MAX];
        fprintf(out, "<text x=\"%d\" y=\"%.0f\">busy %s of %s (%s), %" PRIu64 " ops</text></g>\n",
                BAR_PX + 180, y + 13, opp_fmt_time(busy, (double)st->busy_ns),
                opp_fmt_time(sp, t1 > t0 ? (double)(t1 - t0) : 0),
                opp_fmt_percent(pct, (double)st->busy_ns, t1 > t0 ? (double)(t1 - t0) : 0),
                st->ops);
    }
    fputs("</svg>\n", out);
    free(px);
    opp_gpu_stats_free(&s);
    return 0;
}

static int section_memory(FILE *out, const struct opp_model *m, const char *name)
{
    fputs("<h2>Device memory</h2>\n", out);
    if (!m->gpu.nmemseries) {
        fputs("<p id=\"memory\">no device memory records</p>\n", out);
        return 0;
    }
    fputs("<div id=\"memory\">\n", out);
    for (size_t i = 0; i < m->gpu.nmemseries; i++) {
        char title[300];
        snprintf(title, sizeof title, "%s: device %u", name, m->gpu.memseries[i].device);
        struct capture c;
        int rc = cap_open(&c);
        if (!rc)
            rc = cap_close(&c, opp_export_memory_svg(m, &m->gpu.memseries[i], title, c.f));
        if (rc)
            return -1;
        put_svg(out, c.buf);
        free(c.buf);
    }
    fputs("</div>\n", out);
    return 0;
}

/* PyTorch's CPU allocations, when the trace has them. */
static int section_cpu_memory(FILE *out, const struct opp_model *m, const char *name)
{
    if (!m->cpu.series.npts)
        return 0;
    struct capture c;
    int rc = cap_open(&c);
    if (!rc)
        rc = cap_close(&c, opp_export_memory_svg(m, &m->cpu.series, name, c.f));
    if (rc)
        return -1;
    fputs("<h2>CPU memory</h2>\n<div id=\"cpu-memory\">\n", out);
    put_svg(out, c.buf);
    free(c.buf);
    fputs("</div>\n", out);
    return 0;
}

int opp_export_html(const struct opp_model *m, const char *name, FILE *out)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>opprof: ",
          out);
    html_text(out, name, strlen(name));
    fputs("</title>\n<style>body{font-family:sans-serif;margin:16px;background:#fff}"
          "pre{font:12px monospace;overflow-x:auto;background:#f6f6f6;padding:8px}"
          "h2{margin-top:28px}svg{max-width:100%;height:auto}</style>\n</head>\n<body>\n<h1>opprof: ",
          out);
    html_text(out, name, strlen(name));
    fprintf(out, "</h1>\n<p id=\"summary\">%" PRIu64 " events, %zu processes, %zu threads, "
                 "%zu GPU ops%s%s",
            m->events, m->nprocs, m->nthreads, m->gpu.nops, m->dropped ? ", records dropped" : "",
            m->sum.warning[0] ? "; warning: " : "");
    html_text(out, m->sum.warning, strlen(m->sum.warning));
    fputs("</p>\n", out);
    if (section_table(out, m) || section_flame(out, m, name) || section_streams(out, m) ||
        section_memory(out, m, name) || section_cpu_memory(out, m, name))
        return -1;
    fputs("</body>\n</html>\n", out);
    return ferror(out) ? -1 : 0;
}
