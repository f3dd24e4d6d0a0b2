/* Table, CSV and JSON writers of `opprof report` (see output.h). */
#include "views/output.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "views/fmt.h"

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
    COL_SELF_CUDA,
    COL_SELF_CUDA_PCT,
    COL_CUDA_TOTAL,
    COL_CUDA_AVG,
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

static int imax(int a, int b)
{
    return a > b ? a : b;
}

static int imin(int a, int b)
{
    return a < b ? a : b;
}

/* Columns of every text table: right-aligned, each followed by two spaces;
 * those not on are left out. */
static void put_sep(FILE *f, int n, const int *width, const int *on)
{
    for (int c = 0; c < n; c++) {
        if (!on[c])
            continue;
        for (int k = 0; k < width[c]; k++)
            putc('-', f);
        fputs("  ", f);
    }
    putc('\n', f);
}

static void put_line(FILE *f, int n, const int *width, const int *on, const char *const *cells)
{
    for (int c = 0; c < n; c++)
        if (on[c])
            fprintf(f, "%*s  ", width[c], cells[c]);
    putc('\n', f);
}

/* A name as torch shows it: cut to 52 characters and "..." when it would
 * not fit in 55. buf: at least NAME_MAX_WIDTH + 1 bytes. */
static const char *cut_name(const char *name, char *buf)
{
    if (strlen(name) < NAME_MAX_WIDTH - 3)
        return name;
    snprintf(buf, NAME_MAX_WIDTH + 1, "%.*s...", NAME_MAX_WIDTH - 3, name);
    return buf;
}

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
    double total = (double)t->a->self_cpu_time_total_ns;
    switch (c) {
    case COL_NAME:
        return cut_name(r->key, buf);
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
                               (double)t->a->self_cuda_time_total_ns);
    case COL_CUDA_TOTAL:
        return opp_fmt_time(buf, (double)r->cuda_time_total_ns);
    case COL_CUDA_AVG:
        return opp_fmt_time(buf, opp_row_cuda_avg_ns(r));
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
        snprintf(buf, CELL_MAX, "%.*s", t->width[COL_STACK], r->stack_str ? r->stack_str : "");
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
        return r->lib;
    }
    return "";
}

/* Like torch: the CUDA columns when some row, before the limit, has Self
 * CUDA time; the CUDA memory columns when some row has Self CUDA Mem > 0. */
/* The bandwidth columns: some row of collectives has GPU time. */
static int has_coll_time(const struct opp_agg *a)
{
    for (size_t i = 0; i < a->nrows; i++)
        if (a->rows[i].coll && a->rows[i].cuda_time_total_ns)
            return 1;
    return 0;
}

static int has_cuda_time(const struct opp_agg *a)
{
    for (size_t i = 0; i < a->nrows_all; i++)
        if (a->rows[i].self_cuda_time_total_ns > 0)
            return 1;
    return 0;
}

static int has_cuda_mem(const struct opp_agg *a)
{
    for (size_t i = 0; i < a->nrows_all; i++)
        if (a->rows[i].self_cuda_memory_usage > 0)
            return 1;
    return 0;
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
    /* Achieved rate: TFLOP/s when some row reaches 1000 GFLOP/s. */
    t->rate_unit = 1;
    for (size_t i = 0; i < t->a->nrows; i++)
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
        t->width[c] = COLUMN_WIDTH;
    }
    t->on[COL_SELF_CUDA] = t->on[COL_SELF_CUDA_PCT] = t->on[COL_CUDA_TOTAL] =
        t->on[COL_CUDA_AVG] = has_cuda_time(t->a) || t->a->cuda_calls;
    t->on[COL_CUDA_MEM] = t->on[COL_SELF_CUDA_MEM] = has_cuda_mem(t->a);
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
        name_w = imax(name_w, (int)strlen(t->a->rows[i].key));
        shapes_w = imax(shapes_w, (int)strlen(t->a->rows[i].shapes_str));
        if (t->a->rows[i].stack_str)
            stack_w = imax(stack_w, (int)strlen(t->a->rows[i].stack_str));
    }
    t->width[COL_STACK] = imax(imin(stack_w + 4, SHAPES_MAX_WIDTH), (int)strlen(t->head[COL_STACK]));
    t->width[COL_NAME] = imin(name_w + 4, NAME_MAX_WIDTH); /* never below strlen("Name") */
    t->width[COL_SHAPES] = imax(imin(shapes_w + 4, SHAPES_MAX_WIDTH),
                                (int)strlen(t->head[COL_SHAPES]));
    char buf[CELL_MAX];
    for (int c = 0; c < NCOLS; c++) {
        if (!t->on[c] || c == COL_NAME || c == COL_SHAPES || c == COL_STACK)
            continue;
        t->width[c] = imax(t->width[c], (int)strlen(t->head[c]));
        for (size_t i = 0; i < t->a->nrows; i++)
            t->width[c] = imax(t->width[c], (int)strlen(cell(t, &t->a->rows[i], c, buf)));
    }
}

static void table_sep(FILE *f, const struct table *t)
{
    put_sep(f, NCOLS, t->width, t->on);
}

/* One line: row r, or the header when r is NULL. */
static void table_line(FILE *f, const struct table *t, const struct opp_row *r)
{
    char buf[NCOLS][CELL_MAX];
    const char *cells[NCOLS];
    for (int c = 0; c < NCOLS; c++)
        cells[c] = !t->on[c] ? "" : r ? cell(t, r, c, buf[c]) : t->head[c];
    put_line(f, NCOLS, t->width, t->on, cells);
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
    int width[S_N] = {4 + 4, COLUMN_WIDTH, 6}, on[S_N] = {1, 1, 1};
    char name[NAME_MAX_WIDTH + 1], calls[32], st[CELL_MAX], cell_st[CELL_MAX];
    for (size_t i = 0; i < a->nstatuses; i++) {
        const struct opp_status_row *s = &a->statuses[i];
        width[S_NAME] = imax(width[S_NAME], imin((int)strlen(s->key) + 4, NAME_MAX_WIDTH));
        width[S_STATUS] = imax(width[S_STATUS], (int)strlen(status_text(s, st, sizeof st)));
    }
    fprintf(f, "\nCalls that did not return success: %" PRIu64 " of %" PRIu64 "\n", a->errors,
            a->events);
    put_sep(f, S_N, width, on);
    snprintf(cell_st, sizeof cell_st, "%-*s", width[S_STATUS], "Status");
    put_line(f, S_N, width, on, (const char *const[]){"Name", "# of Calls", cell_st});
    put_sep(f, S_N, width, on);
    for (size_t i = 0; i < a->nstatuses; i++) {
        const struct opp_status_row *s = &a->statuses[i];
        snprintf(calls, sizeof calls, "%" PRIu64, s->count);
        snprintf(cell_st, sizeof cell_st, "%-*s", width[S_STATUS], status_text(s, st, sizeof st));
        put_line(f, S_N, width, on, (const char *const[]){cut_name(s->key, name), calls, cell_st});
    }
    put_sep(f, S_N, width, on);
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
    if (t.on[COL_SELF_CUDA])
        fprintf(f, "Self CUDA time total: %s\n",
                opp_fmt_time(buf, (double)a->self_cuda_time_total_ns));
    if (a->nstatuses)
        table_statuses(f, a);
    return ferror(f) ? -EIO : 0;
}

/* ---- CSV ---- */

static void put_us(FILE *f, double ns)
{
    fprintf(f, "%.3f", opp_ns_to_us(ns));
}

int opp_out_csv(FILE *f, const struct opp_agg *a, const struct opp_out_opts *o)
{
    fprintf(f, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,%s%sflops%s\n",
            o->group_by_shape ? "input_shapes," : "", o->group_by_stack ? "stack," : "",
            a->gpu ? ",device_type,self_cuda_time_total_us,cuda_time_total_us,cuda_time_avg_us,"
                     "self_cuda_memory_usage,cuda_memory_usage,bytes,gbps"
                   : "");
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
        if (o->group_by_stack) {
            opp_csv_field(f, r->stack_str ? r->stack_str : "", 0);
            putc(',', f);
        }
        fprintf(f, "%" PRIu64, r->flops);
        if (a->gpu) {
            fprintf(f, ",%s,", opp_device_type_name(r->device_type));
            put_us(f, (double)r->self_cuda_time_total_ns);
            putc(',', f);
            put_us(f, (double)r->cuda_time_total_ns);
            putc(',', f);
            put_us(f, opp_row_cuda_avg_ns(r));
            fprintf(f, ",%" PRId64 ",%" PRId64 ",", r->self_cuda_memory_usage,
                    r->cuda_memory_usage);
            if (r->transfers)
                fprintf(f, "%" PRIu64 ",%.3f", r->bytes, opp_row_gbps(r));
            else
                putc(',', f);
        }
        putc('\n', f);
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
        fprintf(f, ", \"end\": \"%s\", \"host\": ", opp_end_how_name(p->end_how));
        const char *host = opp_process_info(p, "host");
        if (host)
            opp_json_str(f, host);
        else
            fputs("null", f);
        const char *k[] = {"rank", "local_rank", "world_size"};
        const int64_t v[] = {p->rank, p->local_rank, p->world_size};
        for (int j = 0; j < 3; j++)
            if (v[j] < 0)
                fprintf(f, ", \"%s\": null", k[j]);
            else
                fprintf(f, ", \"%s\": %" PRId64, k[j], v[j]);
        fputc('}', f);
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

static void json_gpu(FILE *f, const struct opp_model *m, const struct opp_gpu_stats *s)
{
    if (!s) {
        fputs("  \"gpu\": null,\n", f);
        return;
    }
    fprintf(f, "  \"gpu\": {\n    \"ops\": %" PRIu64 ", \"kernels\": %" PRIu64 ", \"kernel_time\": ",
            s->ops, s->kernels);
    put_us(f, (double)s->kernel_ns);
    fprintf(f, ", \"unattached\": %" PRIu64 ",\n    \"dropped\": {\"cupti\": %" PRIu64
               ", \"opprof\": %" PRIu64 "},\n    \"devices\": [",
            m->gpu.unattached, m->gpu.dropped_cupti, m->gpu.dropped_ours);
    for (size_t i = 0; i < s->ndevs; i++) {
        const struct opp_gpu_dev_stats *d = &s->devs[i];
        fprintf(f, "%s\n      {\"device\": %" PRIu32 ", \"name\": ", i ? "," : "", d->device);
        if (d->info)
            opp_json_str(f, opp_model_str(m, d->info->name));
        else
            fputs("null", f);
        fprintf(f, ", \"ops\": %" PRIu64 ", \"kernels\": %" PRIu64 ", \"kernel_time\": ", d->ops,
                d->kernels);
        put_us(f, (double)d->kernel_ns);
        fputs(", \"busy_time\": ", f);
        put_us(f, (double)d->busy_ns);
        fputs(", \"span\": ", f);
        put_us(f, (double)(d->last_ns - d->first_ns));
        fprintf(f, ", \"idle_share\": %.4f, ", d->idle_share);
        if (d->has_memory)
            fprintf(f, "\"peak_memory\": %" PRId64 ", \"final_memory\": %" PRId64 "}",
                    d->peak_memory, d->final_memory);
        else
            fputs("\"peak_memory\": null, \"final_memory\": null}", f);
    }
    fputs(s->ndevs ? "\n    ],\n    \"streams\": [" : "],\n    \"streams\": [", f);
    for (size_t i = 0; i < s->nstreams; i++) {
        const struct opp_gpu_stream_stats *st = &s->streams[i];
        fprintf(f,
                "%s\n      {\"pid\": %" PRIu32 ", \"device\": %" PRIu32 ", \"stream\": %" PRIu32
                ", \"ops\": %" PRIu64 ", \"kernels\": %" PRIu64 ", \"kernel_time\": ",
                i ? "," : "", m->procs[st->proc].pid, st->device, st->stream, st->ops, st->kernels);
        put_us(f, (double)st->kernel_ns);
        fputs(", \"busy_time\": ", f);
        put_us(f, (double)st->busy_ns);
        putc('}', f);
    }
    fputs(s->nstreams ? "\n    ]\n  },\n" : "]\n  },\n", f);
}

/* The start of the i-th object of a list: {"key": key, "lib": lib */
static void json_key_lib(FILE *f, size_t i, const char *key, const char *lib)
{
    fprintf(f, "%s\n    {\"key\": ", i ? "," : "");
    opp_json_str(f, key);
    fputs(", \"lib\": ", f);
    opp_json_str(f, lib);
}

/* "errors": calls that did not return success, "statuses": them by entry
 * point and status. */
static void json_statuses(FILE *f, const struct opp_agg *a)
{
    fprintf(f, "  \"errors\": %" PRIu64 ",\n  \"statuses\": [", a->errors);
    for (size_t i = 0; i < a->nstatuses; i++) {
        const struct opp_status_row *s = &a->statuses[i];
        json_key_lib(f, i, s->key, s->lib);
        fprintf(f, ", \"status\": %" PRId64 ", \"name\": ", s->status);
        if (s->name)
            opp_json_str(f, s->name);
        else
            fputs("null", f);
        fprintf(f, ", \"count\": %" PRIu64 "}", s->count);
    }
    fputs(a->nstatuses ? "\n  ]\n" : "]\n", f);
}

static void json_rows(FILE *f, const struct opp_model *m, const struct opp_agg *a,
                      const struct opp_out_opts *o)
{
    fputs("  \"rows\": [", f);
    for (size_t i = 0; i < a->nrows; i++) {
        const struct opp_row *r = &a->rows[i];
        json_key_lib(f, i, r->key, r->lib);
        fprintf(f, ", \"count\": %" PRIu64 ", \"self_cpu_time_total\": ", r->count);
        put_us(f, (double)r->self_cpu_time_total_ns);
        fputs(", \"cpu_time_total\": ", f);
        put_us(f, (double)r->cpu_time_total_ns);
        fputs(", \"cpu_time\": ", f);
        put_us(f, opp_row_avg_ns(r));
        if (o->group_by_shape)
            fprintf(f, ", \"input_shapes\": %s", r->shapes_str); /* already JSON */
        if (o->group_by_stack) { /* outermost first */
            fputs(", \"stack\": [", f);
            for (uint32_t k = r->nstack; k-- > 0;) {
                opp_json_str(f, opp_model_str(m, r->stack[k]));
                if (k)
                    fputs(", ", f);
            }
            putc(']', f);
        }
        fprintf(f, ", \"flops\": %" PRIu64, r->flops);
        if (r->errors) /* calls that did not return success */
            fprintf(f, ", \"errors\": %" PRIu64, r->errors);
        if (r->coll) { /* collectives: bandwidth once GPU time is known */
            fprintf(f, ", \"coll_bytes\": %" PRIu64, r->coll_bytes);
            if (r->cuda_time_total_ns)
                fprintf(f, ", \"algbw_gbps\": %.6f, \"busbw_gbps\": %.6f", opp_row_algbw(r),
                        opp_row_busbw(r));
            else
                fputs(", \"algbw_gbps\": null, \"busbw_gbps\": null", f);
        }
        if (a->gpu) {
            fprintf(f, ", \"device_type\": \"%s\", \"self_cuda_time_total\": ",
                    opp_device_type_name(r->device_type));
            put_us(f, (double)r->self_cuda_time_total_ns);
            fputs(", \"cuda_time_total\": ", f);
            put_us(f, (double)r->cuda_time_total_ns);
            fputs(", \"cuda_time\": ", f);
            put_us(f, opp_row_cuda_avg_ns(r));
            fprintf(f, ", \"self_cuda_memory_usage\": %" PRId64 ", \"cuda_memory_usage\": %" PRId64,
                    r->self_cuda_memory_usage, r->cuda_memory_usage);
            if (r->transfers)
                fprintf(f, ", \"bytes\": %" PRIu64 ", \"gbps\": %.3f", r->bytes, opp_row_gbps(r));
        }
        putc('}', f);
    }
    fputs(a->nrows ? "\n  ],\n" : "],\n", f);
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
    fputs(",\n  \"self_cuda_time_total\": ", f);
    put_us(f, (double)a->self_cuda_time_total_ns);
    fputs(",\n", f);
    json_processes(f, m);
    json_threads(f, m);
    fprintf(f, "  \"events\": %" PRIu64 ",\n  \"dropped\": %" PRIu64 ",\n", m->events, m->dropped);
    json_gpu(f, m, o->gpu);
    json_rows(f, m, a, o);
    json_statuses(f, a);
    fputs("}\n", f);
    return ferror(f) ? -EIO : 0;
}

/* ---- the GPU view ---- */

#define GRID_COLS 8
#define GRID_CELL (NAME_MAX_WIDTH + 8)

/* A text table of the GPU view: each column as wide as its widest cell,
 * at least 12, laid out like the main table. */
struct grid {
    int ncols;
    const char *head[GRID_COLS];
    char (*rows)[GRID_COLS][GRID_CELL];
    size_t nrows, cap;
    int failed;
};

/* The cells of a new row (a scratch row when memory runs out). */
static char (*grid_row(struct grid *g))[GRID_CELL]
{
    static char scratch[GRID_COLS][GRID_CELL];
    if (g->nrows == g->cap) {
        size_t n = g->cap ? 2 * g->cap : 16;
        void *p = reallocarray(g->rows, n, sizeof *g->rows);
        if (!p) {
            g->failed = 1;
            return scratch;
        }
        g->rows = p;
        g->cap = n;
    }
    return g->rows[g->nrows++];
}

/* Prints and empties g; 1 when a row was lost for want of memory. */
static int grid_print(FILE *f, struct grid *g, const char *title)
{
    int width[GRID_COLS], on[GRID_COLS];
    const char *cells[GRID_COLS];
    for (int c = 0; c < g->ncols; c++) {
        on[c] = 1;
        width[c] = imax(COLUMN_WIDTH, (int)strlen(g->head[c]));
        for (size_t r = 0; r < g->nrows; r++)
            width[c] = imax(width[c], (int)strlen(g->rows[r][c]));
    }
    fprintf(f, "%s\n", title);
    put_sep(f, g->ncols, width, on);
    put_line(f, g->ncols, width, on, g->head);
    put_sep(f, g->ncols, width, on);
    for (size_t r = 0; r < g->nrows; r++) {
        for (int c = 0; c < g->ncols; c++)
            cells[c] = g->rows[r][c];
        put_line(f, g->ncols, width, on, cells);
    }
    put_sep(f, g->ncols, width, on);
    free(g->rows);
    g->rows = NULL;
    g->nrows = g->cap = 0;
    return g->failed;
}

static const struct opp_gpu_dev_stats *find_dev(const struct opp_gpu_stats *s, uint32_t device)
{
    for (size_t i = 0; i < s->ndevs; i++)
        if (s->devs[i].device == device)
            return &s->devs[i];
    return NULL;
}

static int gpu_kernels(FILE *f, const struct opp_gpu_stats *s, const struct opp_kernel_stats *k,
                        size_t nk, size_t limit)
{
    struct grid g = {.ncols = 8,
                     .head = {"Name", "# of Calls", "Total", "Avg", "Share", "Est. Occupancy",
                              "Launch Delay Avg", "Launch Delay Max"}};
    size_t n = limit && limit < nk ? limit : nk;
    char name[NAME_MAX_WIDTH + 1];
    for (size_t i = 0; i < n; i++) {
        char(*c)[GRID_CELL] = grid_row(&g);
        snprintf(c[0], GRID_CELL, "%s", cut_name(k[i].name, name));
        snprintf(c[1], GRID_CELL, "%" PRIu64, k[i].count);
        opp_fmt_time(c[2], (double)k[i].total_ns);
        opp_fmt_time(c[3], (double)k[i].total_ns / (double)k[i].count);
        opp_fmt_percent(c[4], (double)k[i].total_ns, (double)s->kernel_ns);
        if (k[i].occupancy >= 0)
            snprintf(c[5], GRID_CELL, "%.2f%%", k[i].occupancy * 100.0);
        else
            snprintf(c[5], GRID_CELL, "--");
        if (k[i].delays) {
            opp_fmt_time_signed(c[6], k[i].delay_sum_ns / (double)k[i].delays);
            opp_fmt_time_signed(c[7], (double)k[i].delay_max_ns);
        } else {
            snprintf(c[6], GRID_CELL, "--");
            snprintf(c[7], GRID_CELL, "--");
        }
    }
    int failed = grid_print(f, &g, "GPU kernels");
    char buf[OPP_FMT_MAX];
    fprintf(f, "Kernel time total: %s (%" PRIu64 " launches of %zu kernels",
            opp_fmt_time(buf, (double)s->kernel_ns), s->kernels, nk);
    if (n < nk)
        fprintf(f, ", the first %zu shown", n);
    fputs(")\n", f);
    return failed;
}

static int gpu_streams(FILE *f, const struct opp_model *m, const struct opp_gpu_stats *s)
{
    struct grid g = {.ncols = 8,
                     .head = {"PID", "Device", "Stream", "# of Ops", "Kernels", "Kernel Time",
                              "Busy", "Busy %"}};
    for (size_t i = 0; i < s->nstreams; i++) {
        const struct opp_gpu_stream_stats *st = &s->streams[i];
        const struct opp_gpu_dev_stats *d = find_dev(s, st->device);
        char(*c)[GRID_CELL] = grid_row(&g);
        snprintf(c[0], GRID_CELL, "%" PRIu32, m->procs[st->proc].pid);
        snprintf(c[1], GRID_CELL, "%" PRIu32, st->device);
        snprintf(c[2], GRID_CELL, "%" PRIu32, st->stream);
        snprintf(c[3], GRID_CELL, "%" PRIu64, st->ops);
        snprintf(c[4], GRID_CELL, "%" PRIu64, st->kernels);
        opp_fmt_time(c[5], (double)st->kernel_ns);
        opp_fmt_time(c[6], (double)st->busy_ns);
        opp_fmt_percent(c[7], (double)st->busy_ns, d ? (double)(d->last_ns - d->first_ns) : 0);
    }
    return grid_print(f, &g, "GPU streams (Busy %: of the device's span)");
}

static int gpu_devices(FILE *f, const struct opp_model *m, const struct opp_gpu_stats *s)
{
    struct grid g = {.ncols = 8,
                     .head = {"Device", "Name", "# of Ops", "Busy", "Span", "Idle %", "Peak Mem",
                              "Final Mem"}};
    for (size_t i = 0; i < s->ndevs; i++) {
        const struct opp_gpu_dev_stats *d = &s->devs[i];
        const char *name = d->info ? opp_model_str(m, d->info->name) : "";
        char cut[NAME_MAX_WIDTH + 1];
        char(*c)[GRID_CELL] = grid_row(&g);
        snprintf(c[0], GRID_CELL, "%" PRIu32, d->device);
        snprintf(c[1], GRID_CELL, "%s", name[0] ? cut_name(name, cut) : "--");
        snprintf(c[2], GRID_CELL, "%" PRIu64, d->ops);
        opp_fmt_time(c[3], (double)d->busy_ns);
        opp_fmt_time(c[4], (double)(d->last_ns - d->first_ns));
        snprintf(c[5], GRID_CELL, "%.2f%%", d->idle_share * 100.0);
        if (d->has_memory) {
            opp_fmt_memory(c[6], d->peak_memory);
            opp_fmt_memory(c[7], d->final_memory);
        } else {
            snprintf(c[6], GRID_CELL, "--");
            snprintf(c[7], GRID_CELL, "--");
        }
    }
    return grid_print(f, &g, "GPU devices (Idle %: 1 - busy / span, span from the first GPU op's start "
                      "to the last one's end)");
}

static int gpu_gaps(FILE *f, const struct opp_model *m, const struct opp_gpu_stats *s)
{
    struct grid g = {.ncols = 5, .head = {"Device", "Gap", "From", "To", "Next Op"}};
    char cut[NAME_MAX_WIDTH + 1], t[OPP_FMT_MAX];
    for (size_t i = 0; i < s->ndevs; i++) {
        const struct opp_gpu_dev_stats *d = &s->devs[i];
        for (size_t k = 0; k < d->ngaps; k++) {
            const struct opp_gpu_gap *gap = &d->gaps[k];
            char(*c)[GRID_CELL] = grid_row(&g);
            snprintf(c[0], GRID_CELL, "%" PRIu32, d->device);
            opp_fmt_time(c[1], (double)(gap->end_ns - gap->start_ns));
            snprintf(c[2], GRID_CELL, "+%s", opp_fmt_time(t, (double)(gap->start_ns - d->first_ns)));
            snprintf(c[3], GRID_CELL, "+%s", opp_fmt_time(t, (double)(gap->end_ns - d->first_ns)));
            snprintf(c[4], GRID_CELL, "%s",
                     cut_name(opp_model_str(m, m->gpu.ops[gap->next].name), cut));
        }
    }
    return grid_print(f, &g, "Largest idle gaps per device (From, To: since the device's first GPU op)");
}

int opp_out_gpu(FILE *f, const struct opp_model *m, const struct opp_gpu_stats *s,
                const struct opp_kernel_stats *k, size_t nk, size_t limit)
{
    int failed = gpu_kernels(f, s, k, nk, limit);
    putc('\n', f);
    failed |= gpu_streams(f, m, s);
    putc('\n', f);
    failed |= gpu_devices(f, m, s);
    putc('\n', f);
    failed |= gpu_gaps(f, m, s);
    return failed ? -ENOMEM : ferror(f) ? -EIO : 0;
}
