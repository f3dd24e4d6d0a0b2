/* `opprof report --gpu`, the GPU view (see output.h): top kernels, busy time
 * per stream, devices, the largest idle gaps. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "views/columns.h"
#include "views/fmt.h"
#include "views/output.h"

#define GRID_COLS 8
#define GRID_CELL OPP_CUT_NAME_BUF

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
        width[c] = opp_imax(OPP_COLUMN_WIDTH, (int)strlen(g->head[c]));
        for (size_t r = 0; r < g->nrows; r++)
            width[c] = opp_imax(width[c], (int)opp_text_width(g->rows[r][c], GRID_CELL));
    }
    fprintf(f, "%s\n", title);
    opp_col_sep(f, g->ncols, width, on);
    opp_col_line(f, g->ncols, width, on, g->head);
    opp_col_sep(f, g->ncols, width, on);
    for (size_t r = 0; r < g->nrows; r++) {
        for (int c = 0; c < g->ncols; c++)
            cells[c] = g->rows[r][c];
        opp_col_line(f, g->ncols, width, on, cells);
    }
    opp_col_sep(f, g->ncols, width, on);
    free(g->rows);
    g->rows = NULL;
    g->nrows = g->cap = 0;
    return g->failed;
}

static int gpu_kernels(FILE *f, const struct opp_gpu_stats *s, const struct opp_kernel_stats *k,
                        size_t nk, size_t limit)
{
    struct grid g = {.ncols = 8,
                     .head = {"Name", "# of Calls", "Total", "Avg", "Share", "Est. Occupancy",
                              "Launch Delay Avg", "Launch Delay Max"}};
    size_t n = limit && limit < nk ? limit : nk;
    char name[OPP_CUT_NAME_BUF];
    for (size_t i = 0; i < n; i++) {
        char(*c)[GRID_CELL] = grid_row(&g);
        snprintf(c[0], GRID_CELL, "%s", opp_cut_name(k[i].name, name));
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
        const struct opp_gpu_dev_stats *d = opp_gpu_stats_dev(s, st->device);
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
        char cut[OPP_CUT_NAME_BUF];
        char(*c)[GRID_CELL] = grid_row(&g);
        snprintf(c[0], GRID_CELL, "%" PRIu32, d->device);
        snprintf(c[1], GRID_CELL, "%s", name[0] ? opp_cut_name(name, cut) : "--");
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
    char cut[OPP_CUT_NAME_BUF], t[OPP_FMT_MAX];
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
                     opp_cut_name(opp_model_str(m, gap->next), cut));
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
