/* The outputs of `opprof diff` (see diff_view.h): the comparison as a
 * table laid out like the report's, or JSON. */
#include "views/diff_view.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "views/columns.h"
#include "views/fmt.h"

enum col {
    C_NAME, C_SHAPES, C_CLASS, C_CALLS_A, C_CALLS_B, C_SELF_A, C_SELF_B, C_TOTAL_A, C_TOTAL_B,
    C_SCUDA_A, C_SCUDA_B, C_CUDA_A, C_CUDA_B, C_CHANGE, C_PCT, NCOLS
};

static const char *const heads[NCOLS] = {
    "Name", "Input Shapes", "Class", "Calls A", "Calls B", "Self CPU A", "Self CPU B",
    "CPU total A", "CPU total B", "Self CUDA A", "Self CUDA B", "CUDA total A", "CUDA total B",
    "Change", "Change %"};

#define CELL_MAX OPP_DIFF_CELL_MAX

static const char *signed_time(char *buf, double ns)
{
    char t[OPP_FMT_MAX];
    if (ns == 0)
        return opp_fmt_time(buf, 0);
    snprintf(buf, CELL_MAX, "%c%s", ns > 0 ? '+' : '-', opp_fmt_time(t, fabs(ns)));
    return buf;
}

const char *opp_diff_pct_text(char *buf, double pct)
{
    if (isnan(pct))
        return "--";
    snprintf(buf, CELL_MAX, "%+.2f%%", pct);
    return buf;
}

static const char *cell(const struct opp_diff_row *r, int c, char *buf)
{
    const struct opp_diff_side *s = c % 2 ? &r->a : &r->b; /* _A columns are odd */
    int present = c % 2 ? r->in_a : r->in_b;
    uint64_t v = 0;
    switch (c) {
    case C_NAME:
        return opp_cut_name(r->key, buf);
    case C_SHAPES:
        return r->shapes;
    case C_CLASS:
        return opp_diff_class_name(r->cls);
    case C_CHANGE:
        return signed_time(buf, r->change);
    case C_PCT:
        return opp_diff_pct_text(buf, r->percent);
    case C_CALLS_A:
    case C_CALLS_B:
        if (!present)
            return "--";
        snprintf(buf, CELL_MAX, "%" PRIu64, s->count);
        return buf;
    case C_SELF_A:
    case C_SELF_B:
        v = s->self_cpu_ns;
        break;
    case C_TOTAL_A:
    case C_TOTAL_B:
        v = s->cpu_total_ns;
        break;
    case C_SCUDA_A:
    case C_SCUDA_B:
        v = s->self_cuda_ns;
        break;
    case C_CUDA_A:
    case C_CUDA_B:
        v = s->cuda_total_ns;
        break;
    }
    return present ? opp_fmt_time(buf, (double)v) : "--";
}

const char *opp_diff_total_name(enum opp_diff_metric m)
{
    return m == OPP_DIFF_SELF_CUDA || m == OPP_DIFF_CUDA_TOTAL ? "Self CUDA time total"
                                                               : "Self CPU time total";
}

int opp_out_diff_table(FILE *f, const struct opp_diff *d, const struct opp_diff_view *v)
{
    int on[NCOLS], width[NCOLS];
    size_t n = v->limit && v->limit < d->n ? v->limit : d->n;
    char buf[NCOLS][CELL_MAX];
    const char *cells[NCOLS];
    for (int c = 0; c < NCOLS; c++) {
        on[c] = 1;
        width[c] = c == C_CLASS ? 7 : (int)strlen(heads[c]);
    }
    on[C_SHAPES] = v->by_shape;
    if (!d->gpu)
        on[C_SCUDA_A] = on[C_SCUDA_B] = on[C_CUDA_A] = on[C_CUDA_B] = 0;
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < NCOLS; c++) {
            int w = (int)opp_text_width(cell(&d->rows[i], c, buf[0]), CELL_MAX) +
                    (c == C_NAME || c == C_SHAPES ? 4 : 0);
            width[c] = opp_imax(width[c], w);
        }
    opp_col_sep(f, NCOLS, width, on);
    opp_col_line(f, NCOLS, width, on, heads);
    opp_col_sep(f, NCOLS, width, on);
    for (size_t i = 0; i < n; i++) {
        for (int c = 0; c < NCOLS; c++)
            cells[c] = on[c] ? cell(&d->rows[i], c, buf[c]) : "";
        opp_col_line(f, NCOLS, width, on, cells);
    }
    opp_col_sep(f, NCOLS, width, on);
    char ta[OPP_FMT_MAX], tb[OPP_FMT_MAX], same[OPP_FMT_MAX], pct[CELL_MAX];
    fprintf(f, "%s: %s -> %s (%s, %s)\n", opp_diff_total_name(d->metric),
            opp_fmt_time(ta, d->total_a), opp_fmt_time(tb, d->total_b),
            opp_diff_pct_text(pct, d->total_percent), opp_diff_class_name(d->total_cls));
    fprintf(f, "%zu rows: %zu added, %zu removed, %zu slower, %zu faster, %zu same\n", d->n,
            d->classes[OPP_DIFF_ADDED], d->classes[OPP_DIFF_REMOVED], d->classes[OPP_DIFF_SLOWER],
            d->classes[OPP_DIFF_FASTER], d->classes[OPP_DIFF_SAME]);
    fprintf(f, "Change: %s from A to B%s; same: within %.2f%% of A or %s\n",
            opp_diff_metric_name(d->metric),
            d->metric == OPP_DIFF_SELF_CPU || d->metric == OPP_DIFF_CPU_TOTAL
                ? " (kernels, copies, memsets: device time)" : "",
            d->same_pct, opp_fmt_time(same, d->same_ns));
    if (v->gate) {
        const struct opp_diff_gate *g = v->gate;
        char floor[OPP_FMT_MAX];
        fprintf(f, "Gate: fails above +%.2f%% (", g->pct);
        if (!g->nnames)
            fputs("the total and every operator in both traces", f);
        for (size_t k = 0; k < g->nnames; k++) {
            fputs(k ? ", " : "", f);
            opp_text_fput(f, g->names[k]); /* as the table shows it */
        }
        fprintf(f, "); an operator under %s or %" PRIu64 " call%s in B cannot fail (--min-us, "
                   "--min-calls): %zu slower above +%.2f%% let through\n",
                opp_fmt_time(floor, g->min_ns), g->min_calls, g->min_calls == 1 ? "" : "s",
                v->found->under_floor, g->pct);
    }
    return ferror(f) ? -EIO : 0;
}

/* null for NaN and the infinite percent of an operator new in B. */
static void json_num(FILE *f, double v)
{
    if (isnan(v) || isinf(v))
        fputs("null", f);
    else
        fprintf(f, "%.3f", v);
}

static void json_side(FILE *f, int present, const struct opp_diff_side *s)
{
    if (!present) {
        fputs("null", f);
        return;
    }
    fprintf(f, "{\"count\": %" PRIu64 ", \"self_cpu_time_total\": %.3f, \"cpu_time_total\": %.3f, "
               "\"self_cuda_time_total\": %.3f, \"cuda_time_total\": %.3f}",
            s->count, opp_ns_to_us((double)s->self_cpu_ns), opp_ns_to_us((double)s->cpu_total_ns),
            opp_ns_to_us((double)s->self_cuda_ns), opp_ns_to_us((double)s->cuda_total_ns));
}

int opp_out_diff_json(FILE *f, const struct opp_diff *d, const struct opp_diff_view *v)
{
    const struct opp_diff_gate *g = v->gate;
    const struct opp_diff_gate_result *found = v->found;
    size_t n = v->limit && v->limit < d->n ? v->limit : d->n;
    fputs("{\n  \"a\": ", f);
    opp_json_str(f, v->a);
    fputs(",\n  \"b\": ", f);
    opp_json_str(f, v->b);
    fprintf(f, ",\n  \"metric\": \"%s\",\n  \"by\": \"%s\",\n  \"same\": {\"percent\": %.3f, "
               "\"us\": %.3f},\n",
            opp_diff_metric_name(d->metric), v->by_shape ? "shape" : "name", d->same_pct,
            opp_ns_to_us(d->same_ns));
    fputs("  \"total\": {\"a\": ", f);
    json_num(f, opp_ns_to_us(d->total_a));
    fputs(", \"b\": ", f);
    json_num(f, opp_ns_to_us(d->total_b));
    fputs(", \"change\": ", f);
    json_num(f, opp_ns_to_us(d->total_change));
    fputs(", \"percent\": ", f);
    json_num(f, d->total_percent);
    fprintf(f, ", \"class\": \"%s\"},\n  \"classes\": {", opp_diff_class_name(d->total_cls));
    for (int c = 0; c < OPP_DIFF_NCLASSES; c++)
        fprintf(f, "%s\"%s\": %zu", c ? ", " : "", opp_diff_class_name((enum opp_diff_class)c),
                d->classes[c]);
    fputs("},\n  \"gate\": ", f);
    if (!g) {
        fputs("null", f);
    } else {
        fprintf(f, "{\"percent\": %.3f, \"ops\": ", g->pct);
        if (!g->nnames)
            fputs("null", f);
        for (size_t k = 0; k < g->nnames; k++) {
            fputs(k ? ", " : "[", f);
            opp_json_str(f, g->names[k]);
        }
        fprintf(f, "%s, \"min_us\": %.3f, \"min_calls\": %" PRIu64 ", \"under_floor\": %zu}",
                g->nnames ? "]" : "", opp_ns_to_us(g->min_ns), g->min_calls, found->under_floor);
    }
    fputs(",\n  \"regression\": ", f);
    if (!g || !found->nreg) {
        fputs("null", f);
    } else {
        const struct opp_diff_row *worst = found->worst;
        fputs("{\"key\": ", f);
        opp_json_str(f, found->worst_total ? NULL : worst->key);
        fputs(", \"percent\": ", f);
        json_num(f, found->worst_total ? d->total_percent
                    : isnan(worst->percent) ? INFINITY
                                            : worst->percent);
        fprintf(f, ", \"count\": %zu}", found->nreg);
    }
    fputs(",\n  \"rows\": [", f);
    for (size_t i = 0; i < n; i++) {
        const struct opp_diff_row *r = &d->rows[i];
        fputs(i ? ",\n    {\"key\": " : "\n    {\"key\": ", f);
        opp_json_str(f, r->key);
        if (v->by_shape) {
            fputs(", \"input_shapes\": ", f);
            opp_json_str(f, r->shapes);
        }
        fprintf(f, ", \"device_type\": \"%s\", \"class\": \"%s\", \"a\": ",
                opp_device_type_name(r->device_type), opp_diff_class_name(r->cls));
        json_side(f, r->in_a, &r->a);
        fputs(", \"b\": ", f);
        json_side(f, r->in_b, &r->b);
        fputs(", \"change\": ", f);
        json_num(f, opp_ns_to_us(r->change));
        fputs(", \"percent\": ", f);
        json_num(f, r->percent);
        fputs("}", f);
    }
    fputs(n ? "\n  ]\n}\n" : "]\n}\n", f);
    return ferror(f) ? -EIO : 0;
}
