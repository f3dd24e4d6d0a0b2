/* Memory over time (torch's export_memory_timeline): the allocated bytes
 * after each allocation or free of one device, or of the CPU (PyTorch's CPU
 * allocator), as JSON [times, sizes] or as an SVG plot with the peak marked
 * and the operators that allocated most named. */
#include "exports/export.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "views/fmt.h"

const struct opp_gpu_memseries *opp_memseries_find(const struct opp_model *m, int64_t device)
{
    const struct opp_gpu_memseries *cpu = m->cpu.series.npts ? &m->cpu.series : NULL;
    if (device == OPP_MEM_CPU)
        return cpu;
    for (size_t i = 0; i < m->gpu.nmemseries; i++)
        if (device < 0 || m->gpu.memseries[i].device == (uint64_t)device)
            return &m->gpu.memseries[i];
    return device < 0 ? cpu : NULL;
}

int opp_export_memory_json(const struct opp_model *m, const struct opp_gpu_memseries *s, FILE *out)
{
    fputs("[[", out);
    uint64_t t0 = s->npts ? s->pts[0].time_ns : 0;
    for (size_t i = 0; i < s->npts; i++) {
        uint64_t d = s->pts[i].time_ns - t0;
        fprintf(out, "%s%" PRIu64 ".%03" PRIu64, i ? ", " : "", d / 1000, d % 1000);
    }
    fputs("], [", out);
    for (size_t i = 0; i < s->npts; i++)
        fprintf(out, "%s[%" PRId64 "]", i ? ", " : "", s->pts[i].bytes);
    fputs("]]\n", out);
    return ferror(out) ? -1 : 0;
}

/* The operator an allocation is charged to: the innermost call around the
 * CUDA API call that made it which is not itself a CUDA API call (a library
 * operator or an NVTX range), else that API call. */
static uint32_t charged_name(const struct opp_model *m, const struct opp_gpu_mem *r)
{
    const struct opp_thread *t = &m->threads[r->thread];
    uint32_t k = r->event;
    for (uint32_t p = k; p != OPP_NO_PARENT; p = t->events[p].parent)
        if (opp_kind_base(opp_event_func(m, t, &t->events[p])->kind) != OPP_OP_CUDA_API)
            return t->events[p].name;
    return t->events[k].name;
}

struct top {
    uint32_t name;
    int64_t bytes;
    uint64_t allocs;
};

static void top_add(struct top *tops, size_t *ntops, uint32_t name, int64_t bytes)
{
    size_t k = 0;
    while (k < *ntops && tops[k].name != name)
        k++;
    if (k == *ntops)
        tops[(*ntops)++] = (struct top){.name = name};
    tops[k].bytes = opp_add_sat(tops[k].bytes, bytes);
    tops[k].allocs++;
}

/* Device allocations per charged operator; tops has room for each record. */
static size_t tops_device(const struct opp_model *m, const struct opp_gpu_memseries *s,
                          struct top *tops)
{
    size_t ntops = 0;
    for (size_t i = 0; i < m->gpu.nmem; i++) {
        const struct opp_gpu_mem *r = &m->gpu.mem[i];
        if (r->device != s->device || r->op != OPP_GPU_MEM_ALLOC || r->thread == OPP_GPU_NONE)
            continue;
        top_add(tops, &ntops, charged_name(m, r), r->bytes);
    }
    return ntops;
}

/* CPU allocations per operator: the innermost one open on the thread, else
 * the allocation's own name ("[memory]"). */
static size_t tops_cpu(const struct opp_model *m, struct top *tops)
{
    size_t ntops = 0;
    for (size_t i = 0; i < m->cpu.nevents; i++) {
        const struct opp_thread *t = &m->threads[m->cpu.events[i].thread];
        const struct opp_event *e = &t->events[m->cpu.events[i].event];
        int64_t b = opp_cpu_mem_bytes(m, t, e);
        if (b <= 0)
            continue;
        top_add(tops, &ntops, e->parent != OPP_NO_PARENT ? t->events[e->parent].name : e->name, b);
    }
    return ntops;
}

static int cmp_top(const void *a, const void *b)
{
    const struct top *x = a, *y = b;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : (x->name > y->name) - (x->name < y->name);
}

#define MW 900.0
#define MH 420.0
#define ML 80.0 /* plot area */
#define MR 20.0
#define MT 50.0
#define MB 170.0

int opp_export_memory_svg(const struct opp_model *m, const struct opp_gpu_memseries *s,
                          const char *title, FILE *out)
{
    /* Allocations per charged operator, top 5. */
    int cpu = s == &m->cpu.series;
    struct top *tops = calloc((cpu ? m->cpu.nevents : m->gpu.nmem) + 1, sizeof *tops);
    if (!tops)
        return -1;
    size_t ntops = cpu ? tops_cpu(m, tops) : tops_device(m, s, tops);
    qsort(tops, ntops, sizeof *tops, cmp_top);
    uint64_t t0 = s->npts ? s->pts[0].time_ns : 0;
    uint64_t span = s->npts ? s->pts[s->npts - 1].time_ns - t0 : 0;
    double top = s->peak > 0 ? (double)s->peak * 1.1 : 1;
    double pw = MW - ML - MR, ph = MH - MT - MB;
#define X(t) (ML + (span ? (double)((t) - t0) / (double)span * pw : 0))
#define Y(b) (MT + ph - (double)(b) / top * ph)
    char a[OPP_FMT_MAX], b[OPP_FMT_MAX];
    fprintf(out,
            "<?xml version=\"1.0\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" xmlns=\"http://www.w3.org/2000/svg\">\n"
            "<style>text{font:12px sans-serif}</style>\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
            "<text x=\"%.0f\" y=\"24\" text-anchor=\"middle\" style=\"font-size:16px\">",
            MW, MH, MW / 2);
    opp_xml_text(out, title);
    if (cpu)
        fputs(" (CPU)</text>\n", out);
    else
        fprintf(out, " (device %" PRIu32 ")</text>\n", s->device);
    /* axes and labels */
    fprintf(out, "<path d=\"M%.1f %.1f V%.1f H%.1f\" stroke=\"#000\" fill=\"none\"/>\n", ML, MT,
            MT + ph, ML + pw);
    for (int i = 0; i <= 4; i++) {
        double v = top * i / 4;
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", ML - 6,
                Y(v) + 4, opp_fmt_memory(a, (int64_t)v));
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                ML + pw * i / 4, MT + ph + 18, opp_fmt_time(b, (double)span * i / 4));
    }
    /* allocated bytes, a step line */
    fputs("<path fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" d=\"", out);
    for (size_t i = 0; i < s->npts; i++) {
        double x = X(s->pts[i].time_ns);
        if (i)
            fprintf(out, " H%.1f V%.1f", x, Y(s->pts[i].bytes));
        else
            fprintf(out, "M%.1f %.1f V%.1f", x, Y(0), Y(s->pts[i].bytes));
    }
    fputs("\"/>\n", out);
    /* the peak */
    for (size_t i = 0; i < s->npts; i++)
        if (s->pts[i].bytes == s->peak && s->peak > 0) {
            double x = X(s->pts[i].time_ns), y = Y(s->peak);
            fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#d62728\"/>\n", x, y);
            fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#d62728\">peak %s at %s</text>\n",
                    x + 6 > ML + pw - 160 ? ML + pw - 160 : x + 6, y - 6,
                    opp_fmt_memory(a, s->peak), opp_fmt_time(b, (double)(s->pts[i].time_ns - t0)));
            break;
        }
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">allocated at the end: %s; operators that allocated "
                 "most:</text>\n",
            ML, MT + ph + 48, opp_fmt_memory(a, s->final));
    for (size_t i = 0; i < ntops && i < 5; i++) {
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">%s in %" PRIu64 " allocation%s: ", ML + 10,
                MT + ph + 68 + 18 * (double)i, opp_fmt_memory(a, tops[i].bytes), tops[i].allocs,
                tops[i].allocs == 1 ? "" : "s");
        opp_xml_text(out, opp_model_str(m, tops[i].name));
        fputs("</text>\n", out);
    }
    fputs("</svg>\n", out);
#undef X
#undef Y
    free(tops);
    return ferror(out) ? -1 : 0;
}
