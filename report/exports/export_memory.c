/* Memory over time (torch's export_memory_timeline): the allocated bytes
 * after each allocation or free of one device, or of the CPU (PyTorch's CPU
 * allocator), as JSON [times, sizes] or as an SVG plot with the peak marked
 * and the operators that allocated most named. */
#include "exports/export.h"

#include <inttypes.h>

#include "analysis/mem_stream.h"
#include "views/fmt.h"

/* The points as JSON: times (us from the first), else sizes. */
struct json_out {
    FILE *out;
    uint64_t t0, i;
    int sizes;
};

static int json_point(void *ctx, uint64_t time_ns, int64_t bytes)
{
    struct json_out *j = ctx;
    const char *sep = j->i++ ? ", " : "";
    if (j->sizes) {
        fprintf(j->out, "%s[%" PRId64 "]", sep, bytes);
    } else {
        uint64_t d = time_ns - j->t0;
        fprintf(j->out, "%s%" PRIu64 ".%03" PRIu64, sep, d / 1000, d % 1000);
    }
    return 0;
}

int opp_export_memory_json(struct opp_mem_stream *ms, const struct opp_memline *l, FILE *out)
{
    struct json_out j = {.out = out, .t0 = l->first_ns};
    fputs("[[", out);
    int rc = opp_mem_stream_walk(ms, l, json_point, &j);
    fputs("], [", out);
    j.sizes = 1;
    j.i = 0;
    if (!rc)
        rc = opp_mem_stream_walk(ms, l, json_point, &j);
    fputs("]]\n", out);
    return rc || ferror(out) ? -1 : 0;
}

#define MW 900.0
#define MH 420.0
#define ML 80.0 /* plot area */
#define MR 20.0
#define MT 50.0
#define MB 170.0

/* The plot's step line, point by point. */
struct svg_line {
    FILE *out;
    uint64_t t0, span, i;
    double top;
};

#define X(t) (ML + (v->span ? (double)((t)-v->t0) / (double)v->span * (MW - ML - MR) : 0))
#define Y(b) (MT + (MH - MT - MB) - (double)(b) / v->top * (MH - MT - MB))

static int svg_point(void *ctx, uint64_t time_ns, int64_t bytes)
{
    struct svg_line *v = ctx;
    double x = X(time_ns);
    if (v->i++)
        fprintf(v->out, " H%.1f V%.1f", x, Y(bytes));
    else
        fprintf(v->out, "M%.1f %.1f V%.1f", x, Y(0), Y(bytes));
    return 0;
}

int opp_export_memory_svg(struct opp_mem_stream *ms, const struct opp_memline *l, const char *title,
                          FILE *out)
{
    const struct opp_model *m = opp_mem_stream_model(ms);
    struct svg_line line = {.out = out,
                            .t0 = l->first_ns,
                            .span = l->last_ns - l->first_ns,
                            .top = l->peak > 0 ? (double)l->peak * 1.1 : 1};
    const struct svg_line *v = &line;
    double pw = MW - ML - MR, ph = MH - MT - MB, top = line.top;
    char a[OPP_FMT_MAX], b[OPP_FMT_MAX];
    fprintf(out,
            "<?xml version=\"1.0\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" xmlns=\"http://www.w3.org/2000/svg\">\n"
            "<style>text{font:12px sans-serif}</style>\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
            "<text x=\"%.0f\" y=\"24\" text-anchor=\"middle\" style=\"font-size:16px\">",
            MW, MH, MW / 2);
    opp_xml_text(out, title);
    if (l->cpu)
        fputs(" (CPU)</text>\n", out);
    else
        fprintf(out, " (device %" PRIu32 ")</text>\n", l->device);
    /* axes and labels */
    fprintf(out, "<path d=\"M%.1f %.1f V%.1f H%.1f\" stroke=\"#000\" fill=\"none\"/>\n", ML, MT,
            MT + ph, ML + pw);
    for (int i = 0; i <= 4; i++) {
        double val = top * i / 4;
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", ML - 6,
                Y(val) + 4, opp_fmt_memory(a, (int64_t)val));
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                ML + pw * i / 4, MT + ph + 18, opp_fmt_time(b, (double)line.span * i / 4));
    }
    /* allocated bytes, a step line */
    fputs("<path fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" d=\"", out);
    int rc = opp_mem_stream_walk(ms, l, svg_point, &line);
    fputs("\"/>\n", out);
    /* the peak */
    if (l->peak > 0) {
        double x = X(l->peak_ns), y = Y(l->peak);
        fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#d62728\"/>\n", x, y);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#d62728\">peak %s at %s</text>\n",
                x + 6 > ML + pw - 160 ? ML + pw - 160 : x + 6, y - 6, opp_fmt_memory(a, l->peak),
                opp_fmt_time(b, (double)(l->peak_ns - line.t0)));
    }
    fprintf(out,
            "<text x=\"%.1f\" y=\"%.1f\">allocated at the end: %s; operators that allocated "
            "most:</text>\n",
            ML, MT + ph + 48, opp_fmt_memory(a, l->final));
    for (size_t i = 0; i < l->ntops && i < 5; i++) {
        const struct opp_memtop *t = &l->tops[i];
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">%s in %" PRIu64 " allocation%s: ", ML + 10,
                MT + ph + 68 + 18 * (double)i, opp_fmt_memory(a, t->bytes), t->allocs,
                t->allocs == 1 ? "" : "s");
        opp_xml_text(out, opp_model_str(m, t->name));
        fputs("</text>\n", out);
    }
    fputs("</svg>\n", out);
    return rc || ferror(out) ? -1 : 0;
}
#undef X
#undef Y
