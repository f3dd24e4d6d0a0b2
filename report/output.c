/* Table, CSV and JSON writers of `opprof report` (see output.h). */
#include "output.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "fmt.h"

/* ---- table ---- */

#define NAME_MAX_WIDTH 55   /* torch's max_name_column_width */
#define SHAPES_MAX_WIDTH 80 /* torch's max_shapes_column_width */
#define COLUMN_WIDTH 12     /* torch's DEFAULT_COLUMN_WIDTH */
#define CELL_MAX OPP_SHAPES_STR_MAX

enum col {
    COL_NAME,
    COL_SELF_PCT,
    COL_SELF,
    COL_TOTAL_PCT,
    COL_TOTAL,
    COL_AVG,
    COL_CALLS,
    COL_SHAPES,
    COL_FLOPS,
    COL_GFLOPS,
    NCOLS
};

struct table {
    const struct opp_agg *a;
    int on[NCOLS];
    int width[NCOLS];
    const char *head[NCOLS];
    uint64_t flops_unit; /* 1, 1000, ... */
    char flops_head[24];
};

static int imax(int a, int b)
{
    return a > b ? a : b;
}

static int imin(int a, int b)
{
    return a < b ? a : b;
}

/* The text of column c of row r, in buf (CELL_MAX bytes) or static. */
static const char *cell(const struct table *t, const struct opp_row *r, int c, char *buf)
{
    double total = (double)t->a->self_cpu_time_total_ns;
    switch (c) {
    case COL_NAME: {
        size_t n = strlen(r->key);
        if (n < NAME_MAX_WIDTH - 3)
            return r->key;
        snprintf(buf, CELL_MAX, "%.*s...", NAME_MAX_WIDTH - 3, r->key);
        return buf;
    }
    case COL_SELF_PCT:
        return opp_fmt_percent(buf, (double)r->self_cpu_time_total_ns, total);
    case COL_SELF:
        return opp_fmt_time(buf, (double)r->self_cpu_time_total_ns);
    case COL_TOTAL_PCT:
        return opp_fmt_percent(buf, (double)r->cpu_time_total_ns, total);
    case COL_TOTAL:
        return opp_fmt_time(buf, (double)r->cpu_time_total_ns);
    case COL_AVG:
        return opp_fmt_time(buf, opp_row_avg_ns(r));
    case COL_CALLS:
        snprintf(buf, CELL_MAX, "%" PRIu64, r->count);
        return buf;
    case COL_SHAPES:
        snprintf(buf, CELL_MAX, "%.*s", t->width[COL_SHAPES], r->shapes_str);
        return buf;
    case COL_FLOPS:
        if (!r->flops)
            return "--";
        snprintf(buf, CELL_MAX, "%.3f", (double)r->flops / (double)t->flops_unit);
        return buf;
    case COL_GFLOPS:
        if (!r->flops || !r->cpu_time_total_ns)
            return "--";
        snprintf(buf, CELL_MAX, "%.3f", (double)r->flops / (double)r->cpu_time_total_ns);
        return buf;
    }
    return "";
}

/* torch's auto_scale_flops: the largest power of 1000 not above the
 * smallest non-zero count. 0 when no row has FLOPs. */
static int scale_flops(struct table *t)
{
    static const char *units[] = {"FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"};
    uint64_t min = 0;
    for (size_t i = 0; i < t->a->nrows; i++) {
        uint64_t f = t->a->rows[i].flops;
        if (f && (!min || f < min))
            min = f;
    }
    if (!min)
        return 0;
    size_t u = 0;
    t->flops_unit = 1;
    while (u + 1 < sizeof units / sizeof units[0] && min / t->flops_unit >= 1000) {
        t->flops_unit *= 1000;
        u++;
    }
    snprintf(t->flops_head, sizeof t->flops_head, "Total %s", units[u]);
    return 1;
}

static void table_layout(struct table *t, const struct opp_out_opts *o)
{
    static const char *heads[NCOLS] = {
        [COL_NAME] = "Name",
        [COL_SELF_PCT] = "Self CPU %",
        [COL_SELF] = "Self CPU",
        [COL_TOTAL_PCT] = "CPU total %",
        [COL_TOTAL] = "CPU total",
        [COL_AVG] = "CPU time avg",
        [COL_CALLS] = "# of Calls",
        [COL_SHAPES] = "Input Shapes",
        [COL_FLOPS] = "Total FLOPs", /* the unit is set by scale_flops */
        [COL_GFLOPS] = "GFLOP/s",
    };
    for (int c = 0; c < NCOLS; c++) {
        t->head[c] = heads[c];
        t->on[c] = c <= COL_CALLS;
        t->width[c] = COLUMN_WIDTH;
    }
    t->on[COL_SHAPES] = o->group_by_shape;
    t->on[COL_FLOPS] = t->on[COL_GFLOPS] = o->flops && scale_flops(t);
    if (t->on[COL_FLOPS])
        t->head[COL_FLOPS] = t->flops_head;

    /* Name and Input Shapes: the longest value + 4, capped; the cells are
     * cut to fit. The others grow past 12 only when a value needs it. */
    int name_w = 0, shapes_w = 0;
    for (size_t i = 0; i < t->a->nrows; i++) {
        name_w = imax(name_w, (int)strlen(t->a->rows[i].key));
        shapes_w = imax(shapes_w, (int)strlen(t->a->rows[i].shapes_str));
    }
    t->width[COL_NAME] = imin(name_w + 4, NAME_MAX_WIDTH); /* never below strlen("Name") */
    t->width[COL_SHAPES] = imax(imin(shapes_w + 4, SHAPES_MAX_WIDTH),
                                (int)strlen(t->head[COL_SHAPES]));
    char buf[CELL_MAX];
    for (int c = 0; c < NCOLS; c++) {
        if (!t->on[c] || c == COL_NAME || c == COL_SHAPES)
            continue;
        t->width[c] = imax(t->width[c], (int)strlen(t->head[c]));
        for (size_t i = 0; i < t->a->nrows; i++)
            t->width[c] = imax(t->width[c], (int)strlen(cell(t, &t->a->rows[i], c, buf)));
    }
}

static void table_sep(FILE *f, const struct table *t)
{
    for (int c = 0; c < NCOLS; c++) {
        if (!t->on[c])
            continue;
        for (int k = 0; k < t->width[c]; k++)
            putc('-', f);
        fputs("  ", f);
    }
    putc('\n', f);
}

/* One line: row r, or the header when r is NULL. */
static void table_line(FILE *f, const struct table *t, const struct opp_row *r)
{
    char buf[CELL_MAX];
    for (int c = 0; c < NCOLS; c++)
        if (t->on[c])
            fprintf(f, "%*s  ", t->width[c], r ? cell(t, r, c, buf) : t->head[c]);
    putc('\n', f);
}

int opp_out_table(FILE *f, const struct opp_agg *a, const struct opp_out_opts *o)
{
    struct table t = {.a = a};
    table_layout(&t, o);
    table_sep(f, &t);
    table_line(f, &t, NULL);
    table_sep(f, &t);
    for (size_t i = 0; i < a->nrows; i++)
        table_line(f, &t, &a->rows[i]);
    table_sep(f, &t);
    char buf[OPP_FMT_MAX];
    fprintf(f, "Self CPU time total: %s\n", opp_fmt_time(buf, (double)a->self_cpu_time_total_ns));
    return ferror(f) ? -EIO : 0;
}

/* ---- CSV ---- */

static void put_us(FILE *f, double ns)
{
    fprintf(f, "%.3f", opp_ns_to_us(ns));
}

int opp_out_csv(FILE *f, const struct opp_agg *a, const struct opp_out_opts *o)
{
    fprintf(f, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,%sflops\n",
            o->group_by_shape ? "input_shapes," : "");
    for (size_t i = 0; i < a->nrows; i++) {
        const struct opp_row *r = &a->rows[i];
        opp_csv_field(f, r->key, 0);
        putc(',', f);
        opp_csv_field(f, r->lib, 0);
        fprintf(f, ",%" PRIu64 ",", r->count);
        put_us(f, (double)r->self_cpu_time_total_ns);
        putc(',', f);
        put_us(f, (double)r->cpu_time_total_ns);
        putc(',', f);
        put_us(f, opp_row_avg_ns(r));
        putc(',', f);
        if (o->group_by_shape) {
            opp_csv_field(f, r->shapes_str, 1);
            putc(',', f);
        }
        fprintf(f, "%" PRIu64 "\n", r->flops);
    }
    return ferror(f) ? -EIO : 0;
}

/* ---- JSON ---- */

static void json_processes(FILE *f, const struct opp_model *m)
{
    fputs("  \"processes\": [", f);
    for (size_t i = 0; i < m->nprocs; i++) {
        const struct opp_process *p = &m->procs[i];
        fprintf(f, "%s\n    {\"pid\": %" PRIu32 ", \"ppid\": %" PRIu32 ", \"cmdline\": [",
                i ? "," : "", p->pid, p->ppid);
        for (uint32_t k = 0; k < p->argc; k++) {
            if (k)
                fputs(", ", f);
            opp_json_str(f, p->argv[k]);
        }
        fputs("], \"exe\": ", f);
        opp_json_str(f, p->exe);
        fprintf(f, ", \"end\": \"%s\"}", opp_end_how_name(p->end_how));
    }
    fputs(m->nprocs ? "\n  ],\n" : "],\n", f);
}

static void json_threads(FILE *f, const struct opp_model *m)
{
    fputs("  \"threads\": [", f);
    for (size_t i = 0; i < m->nthreads; i++) {
        const struct opp_thread *t = &m->threads[i];
        fprintf(f, "%s\n    {\"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"name\": ", i ? "," : "",
                opp_thread_process(m, t)->pid, t->tid);
        opp_json_str(f, t->name);
        fprintf(f, ", \"events\": %zu, \"dropped\": %" PRIu64 "}", t->nevents, t->dropped);
    }
    fputs(m->nthreads ? "\n  ],\n" : "],\n", f);
}

static void json_rows(FILE *f, const struct opp_agg *a, const struct opp_out_opts *o)
{
    fputs("  \"rows\": [", f);
    for (size_t i = 0; i < a->nrows; i++) {
        const struct opp_row *r = &a->rows[i];
        fprintf(f, "%s\n    {\"key\": ", i ? "," : "");
        opp_json_str(f, r->key);
        fputs(", \"lib\": ", f);
        opp_json_str(f, r->lib);
        fprintf(f, ", \"count\": %" PRIu64 ", \"self_cpu_time_total\": ", r->count);
        put_us(f, (double)r->self_cpu_time_total_ns);
        fputs(", \"cpu_time_total\": ", f);
        put_us(f, (double)r->cpu_time_total_ns);
        fputs(", \"cpu_time\": ", f);
        put_us(f, opp_row_avg_ns(r));
        if (o->group_by_shape)
            fprintf(f, ", \"input_shapes\": %s", r->shapes_str); /* already JSON */
        fprintf(f, ", \"flops\": %" PRIu64 "}", r->flops);
    }
    fputs(a->nrows ? "\n  ]\n" : "]\n", f);
}

int opp_out_json(FILE *f, const char *path, const struct opp_model *m, const struct opp_agg *a,
                 const struct opp_out_opts *o)
{
    fputs("{\n  \"trace\": ", f);
    opp_json_str(f, path);
    fprintf(f, ",\n  \"complete\": %s,\n  \"warning\": ", m->sum.complete ? "true" : "false");
    if (m->sum.warning[0])
        opp_json_str(f, m->sum.warning);
    else
        fputs("null", f);
    fputs(",\n  \"self_cpu_time_total\": ", f);
    put_us(f, (double)a->self_cpu_time_total_ns);
    fputs(",\n", f);
    json_processes(f, m);
    json_threads(f, m);
    fprintf(f, "  \"events\": %" PRIu64 ",\n  \"dropped\": %" PRIu64 ",\n", m->events, m->dropped);
    json_rows(f, a, o);
    fputs("}\n", f);
    return ferror(f) ? -EIO : 0;
}
