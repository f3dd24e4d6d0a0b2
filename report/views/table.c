/* The table of `opprof report` as torch's key_averages().table() lays it
 * out (see output.h), and the calls that did not return success after it. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "views/columns.h"
#include "views/fmt.h"
#include "views/output.h"

#define SHAPES_MAX_WIDTH 80 /* torch's max_shapes_column_width */
#define CELL_MAX OPP_SHAPES_STR_MAX

enum col {
    COL_NAME,
    COL_SELF_PCT,
    COL_SELF,
    COL_TOTAL_PCT,
    COL_TOTAL,
    COL_AVG,
    COL_SELF_CUDA,
    COL_SELF_CUDA_PCT,
    COL_CUDA_TOTAL,
    COL_CUDA_AVG,
    COL_CPU_MEM,
    COL_SELF_CPU_MEM,
    COL_CUDA_MEM,
    COL_SELF_CUDA_MEM,
    COL_CALLS,
    COL_SHAPES,
    COL_STACK, /* --group-by-stack */
    COL_FLOPS,
    COL_GFLOPS,
    COL_ALGBW, /* collectives with GPU time */
    COL_BUSBW,
    COL_LIB,   /* --show-lib: after torch's columns */
    NCOLS
};

struct table {
    const struct opp_agg *a;
    int on[NCOLS];
    int width[NCOLS];
    const char *head[NCOLS];
    uint64_t flops_unit; /* 1, 1000, ... */
    char flops_head[24];
    double rate_unit; /* FLOPs per ns shown as 1: GFLOP/s, 1000: TFLOP/s */
};

/* FLOPs per ns (= GFLOP/s) over the row's GPU time when it has some, else
 * over its CPU time; 0 when unknown. */
static double flop_rate(const struct opp_row *r)
{
    uint64_t ns = r->cuda_time_total_ns ? r->cuda_time_total_ns : r->cpu_time_total_ns;
    return r->flops && ns ? (double)r->flops / (double)ns : 0.0;
}

/* The text of column c of row r, in buf (CELL_MAX bytes) or static. */
static const char *cell(const struct table *t, const struct opp_row *r, int c, char *buf)
{
    double total = (double)t->a->self_cpu_base_ns;
    switch (c) {
    case COL_NAME:
        return opp_cut_name(r->key, buf);
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
    case COL_SELF_CUDA:
        return opp_fmt_time(buf, (double)r->self_cuda_time_total_ns);
    case COL_SELF_CUDA_PCT:
        return opp_fmt_percent(buf, (double)r->self_cuda_time_total_ns,
                               (double)t->a->self_cuda_base_ns);
    case COL_CUDA_TOTAL:
        return opp_fmt_time(buf, (double)r->cuda_time_total_ns);
    case COL_CUDA_AVG:
        return opp_fmt_time(buf, opp_row_cuda_avg_ns(r));
    case COL_CPU_MEM:
        return opp_fmt_memory(buf, r->cpu_memory_usage);
    case COL_SELF_CPU_MEM:
        return opp_fmt_memory(buf, r->self_cpu_memory_usage);
    case COL_CUDA_MEM:
        return opp_fmt_memory(buf, r->cuda_memory_usage);
    case COL_SELF_CUDA_MEM:
        return opp_fmt_memory(buf, r->self_cuda_memory_usage);
    case COL_CALLS:
        snprintf(buf, CELL_MAX, "%" PRIu64, r->count);
        return buf;
    case COL_SHAPES:
        snprintf(buf, CELL_MAX, "%.*s", t->width[COL_SHAPES], r->shapes_str);
        return buf;
    case COL_STACK:
        opp_text_put(buf, r->stack_str ? r->stack_str : "", (size_t)t->width[COL_STACK], NULL);
        return buf;
    case COL_FLOPS:
        if (!r->flops)
            return "--";
        snprintf(buf, CELL_MAX, "%.3f", (double)r->flops / (double)t->flops_unit);
        return buf;
    case COL_GFLOPS: {
        double rate = flop_rate(r);
        if (rate <= 0)
            return "--";
        snprintf(buf, CELL_MAX, "%.3f", rate / t->rate_unit);
        return buf;
    }
    case COL_ALGBW:
    case COL_BUSBW:
        if (!r->coll || !r->cuda_time_total_ns)
            return "--";
        snprintf(buf, CELL_MAX, "%.3f", c == COL_ALGBW ? opp_row_algbw(r) : opp_row_busbw(r));
        return buf;
    case COL_LIB:
        opp_text_put(buf, r->lib, CELL_MAX / 4 - 1, NULL);
        return buf;
    }
    return "";
}

/* The bandwidth columns: some row of collectives has GPU time. */
static int has_coll_time(const struct opp_agg *a)
{
    for (size_t i = 0; i < a->nrows; i++)
        if (a->rows[i].coll && a->rows[i].cuda_time_total_ns)
            return 1;
    return 0;
}

/* torch's auto_scale_flops: the largest power of 1000 not above the
 * smallest non-zero count. 0 when no row has FLOPs. Over every row before
 * the limit, as torch's table (and the CUDA and memory columns here): the
 * columns and their units do not change with --limit. */
static int scale_flops(struct table *t)
{
    static const char *units[] = {"FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"};
    uint64_t min = 0;
    for (size_t i = 0; i < t->a->nrows_all; i++) {
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
    /* Achieved rate: TFLOP/s when some row reaches 1000 GFLOP/s. */
    t->rate_unit = 1;
    for (size_t i = 0; i < t->a->nrows_all; i++)
        if (flop_rate(&t->a->rows[i]) >= 1000)
            t->rate_unit = 1000;
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
        [COL_SELF_CUDA] = "Self CUDA",
        [COL_SELF_CUDA_PCT] = "Self CUDA %",
        [COL_CUDA_TOTAL] = "CUDA total",
        [COL_CUDA_AVG] = "CUDA time avg",
        [COL_CPU_MEM] = "CPU Mem",
        [COL_SELF_CPU_MEM] = "Self CPU Mem",
        [COL_CUDA_MEM] = "CUDA Mem",
        [COL_SELF_CUDA_MEM] = "Self CUDA Mem",
        [COL_CALLS] = "# of Calls",
        [COL_SHAPES] = "Input Shapes",
        [COL_STACK] = "Stack",
        [COL_FLOPS] = "Total FLOPs", /* the unit is set by scale_flops */
        [COL_GFLOPS] = "GFLOP/s", /* or TFLOP/s, set by scale_flops */
        [COL_ALGBW] = "Alg BW GB/s",
        [COL_BUSBW] = "Bus BW GB/s",
        [COL_LIB] = "Lib",
    };
    for (int c = 0; c < NCOLS; c++) {
        t->head[c] = heads[c];
        t->on[c] = c <= COL_AVG || c == COL_CALLS;
        t->width[c] = OPP_COLUMN_WIDTH;
    }
    t->on[COL_SELF_CUDA] = t->on[COL_SELF_CUDA_PCT] = t->on[COL_CUDA_TOTAL] =
        t->on[COL_CUDA_AVG] = opp_agg_has_cuda_time(t->a) || t->a->cuda_calls;
    t->on[COL_CPU_MEM] = t->on[COL_SELF_CPU_MEM] = opp_agg_has_cpu_mem(t->a);
    t->on[COL_CUDA_MEM] = t->on[COL_SELF_CUDA_MEM] = opp_agg_has_cuda_mem(t->a);
    t->on[COL_SHAPES] = o->group_by_shape;
    t->on[COL_STACK] = o->group_by_stack;
    t->on[COL_FLOPS] = t->on[COL_GFLOPS] = o->flops && scale_flops(t);
    t->on[COL_ALGBW] = t->on[COL_BUSBW] = has_coll_time(t->a);
    if (t->on[COL_FLOPS])
        t->head[COL_FLOPS] = t->flops_head;
    if (t->on[COL_GFLOPS] && t->rate_unit > 1)
        t->head[COL_GFLOPS] = "TFLOP/s";
    t->on[COL_LIB] = o->show_lib;

    /* Name and Input Shapes: the longest value + 4, capped; the cells are
     * cut to fit. The others grow past 12 only when a value needs it. */
    int name_w = 0, shapes_w = 0, stack_w = 0;
    for (size_t i = 0; i < t->a->nrows; i++) {
        const struct opp_row *r = &t->a->rows[i];
        name_w = opp_imax(name_w, (int)opp_text_width(r->key, OPP_NAME_MAX_WIDTH));
        shapes_w = opp_imax(shapes_w, (int)strlen(r->shapes_str));
        if (r->stack_str)
            stack_w = opp_imax(stack_w, (int)opp_text_width(r->stack_str, SHAPES_MAX_WIDTH));
    }
    t->width[COL_STACK] = opp_imax(opp_imin(stack_w + 4, SHAPES_MAX_WIDTH), (int)strlen(t->head[COL_STACK]));
    t->width[COL_NAME] = opp_imin(name_w + 4, OPP_NAME_MAX_WIDTH); /* never below strlen("Name") */
    t->width[COL_SHAPES] = opp_imax(opp_imin(shapes_w + 4, SHAPES_MAX_WIDTH),
                                (int)strlen(t->head[COL_SHAPES]));
    char buf[CELL_MAX];
    for (int c = 0; c < NCOLS; c++) {
        if (!t->on[c] || c == COL_NAME || c == COL_SHAPES || c == COL_STACK)
            continue;
        t->width[c] = opp_imax(t->width[c], (int)strlen(t->head[c]));
        for (size_t i = 0; i < t->a->nrows; i++)
            t->width[c] = opp_imax(t->width[c],
                                   (int)opp_text_width(cell(t, &t->a->rows[i], c, buf), CELL_MAX));
    }
}

static void table_sep(FILE *f, const struct table *t)
{
    opp_col_sep(f, NCOLS, t->width, t->on);
}

/* One line: row r, or the header when r is NULL. */
static void table_line(FILE *f, const struct table *t, const struct opp_row *r)
{
    char buf[NCOLS][CELL_MAX];
    const char *cells[NCOLS];
    for (int c = 0; c < NCOLS; c++)
        cells[c] = !t->on[c] ? "" : r ? cell(t, r, c, buf[c]) : t->head[c];
    opp_col_line(f, NCOLS, t->width, t->on, cells);
}

/* "cudaErrorInsufficientDriver (35)", or "35" when the name is unknown. */
static const char *status_text(const struct opp_status_row *s, char *buf, size_t cap)
{
    if (s->name)
        snprintf(buf, cap, "%s (%" PRId64 ")", s->name, s->status);
    else
        snprintf(buf, cap, "%" PRId64, s->status);
    return buf;
}

/* After the table: the calls that did not return success, by entry point
 * and status, laid out like the table but for Status, left-aligned. */
static void table_statuses(FILE *f, const struct opp_agg *a)
{
    enum { S_NAME, S_CALLS, S_STATUS, S_N };
    int width[S_N] = {4 + 4, OPP_COLUMN_WIDTH, 6}, on[S_N] = {1, 1, 1};
    char name[OPP_CUT_NAME_BUF], calls[32], st[CELL_MAX], cell_st[CELL_MAX];
    for (size_t i = 0; i < a->nstatuses; i++) {
        const struct opp_status_row *s = &a->statuses[i];
        width[S_NAME] =
            opp_imax(width[S_NAME], opp_imin((int)opp_text_width(s->key, OPP_NAME_MAX_WIDTH) + 4,
                                             OPP_NAME_MAX_WIDTH));
        width[S_STATUS] = opp_imax(width[S_STATUS], (int)strlen(status_text(s, st, sizeof st)));
    }
    fprintf(f, "\nCalls that did not return success: %" PRIu64 " of %" PRIu64 "\n", a->errors,
            a->events);
    opp_col_sep(f, S_N, width, on);
    snprintf(cell_st, sizeof cell_st, "%-*s", width[S_STATUS], "Status");
    opp_col_line(f, S_N, width, on, (const char *const[]){"Name", "# of Calls", cell_st});
    opp_col_sep(f, S_N, width, on);
    for (size_t i = 0; i < a->nstatuses; i++) {
        const struct opp_status_row *s = &a->statuses[i];
        snprintf(calls, sizeof calls, "%" PRIu64, s->count);
        snprintf(cell_st, sizeof cell_st, "%-*s", width[S_STATUS], status_text(s, st, sizeof st));
        opp_col_line(f, S_N, width, on, (const char *const[]){opp_cut_name(s->key, name), calls, cell_st});
    }
    opp_col_sep(f, S_N, width, on);
}

const char *opp_out_processes_note(const struct opp_agg *a, char *buf, size_t cap)
{
    if (a->nprocs < 2)
        return NULL;
    snprintf(buf, cap,
             "%zu processes added up (the whole job's cost): --pid PID for one, "
             "--by-process for each",
             a->nprocs);
    return buf;
}

int opp_out_table(FILE *f, const struct opp_agg *a, const struct opp_out_opts *o)
{
    struct table t = {.a = a};
    char note[160];
    if (opp_out_processes_note(a, note, sizeof note))
        fprintf(f, "%s\n", note);
    table_layout(&t, o);
    table_sep(f, &t);
    table_line(f, &t, NULL);
    table_sep(f, &t);
    for (size_t i = 0; i < a->nrows; i++)
        table_line(f, &t, &a->rows[i]);
    table_sep(f, &t);
    char buf[OPP_FMT_MAX], base[OPP_FMT_MAX];
    fprintf(f, "Self CPU time total: %s", opp_fmt_time(buf, (double)a->self_cpu_time_total_ns));
    if (a->filtered)
        fprintf(f, " of %s before %s (the percentages' base)",
                opp_fmt_time(base, (double)a->self_cpu_base_ns), a->filtered);
    putc('\n', f);
    if (t.on[COL_SELF_CUDA]) {
        fprintf(f, "Self CUDA time total: %s",
                opp_fmt_time(buf, (double)a->self_cuda_time_total_ns));
        if (a->filtered)
            fprintf(f, " of %s before %s", opp_fmt_time(base, (double)a->self_cuda_base_ns),
                    a->filtered);
        putc('\n', f);
    }
    if (a->nstatuses)
        table_statuses(f, a);
    return ferror(f) ? -EIO : 0;
}
