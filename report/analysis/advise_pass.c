/* advise's findings from the pass over a trace (advise_pass.h). */
#include "analysis/advise_pass.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gpu_stream.h"
#include "analysis/mem_stream.h"
#include "analysis/pass.h"
#include "analysis/step_stream.h"
#include "analysis/table_stream.h"

struct opp_advise_pass {
    struct opp_pass *pass;
    struct opp_table_stream *table;
    struct opp_step_stream *steps; /* over the table's pass, when advise runs */
    struct opp_gpu_stream *gpu;    /* the same, when a rule asks */
    struct opp_mem_stream *mem;    /* the CPU memory series, read when a rule asks */
    struct opp_gpu_stats gs;       /* its answer for gs_opts (two rules ask) */
    struct opp_agg_opts gs_opts;
    int have_gs;
    char err[512]; /* why -EIO, or why 1 ("": not said) */
};

/* The pass's answer (0, 1 or -1) as opp_advise_src's (0, 1 or -EIO). */
static int got_of(int got)
{
    return got < 0 ? -EIO : got;
}

static int pass_aggregates(void *ctx, const struct opp_agg_opts *o, size_t n, struct opp_agg *out)
{
    struct opp_advise_pass *ap = ctx;
    return got_of(opp_table_stream_aggregates(ap->table, o, n, out, ap->err, sizeof ap->err));
}

static int pass_steps(void *ctx, const struct opp_agg_opts *o, const char *name,
                      struct opp_steps *out, char *what, size_t cap)
{
    struct opp_advise_pass *ap = ctx;
    return got_of(
        opp_step_stream_steps(ap->steps, o, name, out, what, cap, ap->err, sizeof ap->err));
}

static int pass_ask(void *ctx, const struct opp_table_q *q, size_t n)
{
    struct opp_advise_pass *ap = ctx;
    return got_of(opp_table_stream_ask(ap->table, q, n, ap->err, sizeof ap->err));
}

/* A copy of the array from[0..n) of size bytes each into *to: 0 or -ENOMEM. */
static int copy_array(void **to, const void *from, size_t n, size_t size)
{
    *to = NULL;
    if (!n)
        return 0;
    if (!(*to = malloc(n * size)))
        return -ENOMEM;
    memcpy(*to, from, n * size);
    return 0;
}

static int pass_gpu_stats(void *ctx, const struct opp_agg_opts *o, struct opp_gpu_stats *s)
{
    struct opp_advise_pass *ap = ctx;
    if (!ap->have_gs || memcmp(&ap->gs_opts, o, sizeof *o)) {
        if (!ap->gpu && !(ap->gpu = opp_gpu_stream_over(ap->pass, ap->err, sizeof ap->err)))
            return -EIO;
        opp_gpu_stats_free(&ap->gs);
        ap->have_gs = 0;
        int got = opp_gpu_stream_stats(ap->gpu, o, &ap->gs, NULL, NULL, ap->err, sizeof ap->err);
        if (got)
            return got_of(got);
        ap->gs_opts = *o;
        ap->have_gs = 1;
    }
    *s = ap->gs;
    if (copy_array((void **)&s->devs, ap->gs.devs, ap->gs.ndevs, sizeof *s->devs) ||
        copy_array((void **)&s->streams, ap->gs.streams, ap->gs.nstreams, sizeof *s->streams)) {
        opp_gpu_stats_free(s);
        return -ENOMEM;
    }
    return 0;
}

static int pass_cpu_series(void *ctx, int (*each)(void *ectx, uint64_t time_ns, int64_t bytes),
                           void *ectx)
{
    struct opp_advise_pass *ap = ctx;
    if (!ap->mem) {
        if (!(ap->mem = opp_mem_stream_over(ap->pass, ap->err, sizeof ap->err)))
            return -EIO;
        int got = opp_mem_stream_read(ap->mem, 1, 0, ap->err, sizeof ap->err);
        if (got) {
            opp_mem_stream_free(ap->mem);
            ap->mem = NULL;
            return got_of(got);
        }
    }
    struct opp_memline l;
    if (!opp_mem_stream_find(ap->mem, OPP_MEM_CPU, &l))
        return 0;
    int rc = opp_mem_stream_walk(ap->mem, &l, each, ectx);
    if (rc < 0) { /* its sort's temporary file read back */
        snprintf(ap->err, sizeof ap->err, "cannot read a temporary file: %s", strerror(-rc));
        return -EIO;
    }
    return rc;
}

struct opp_advise_pass *opp_advise_pass_over(struct opp_pass *p, char *err, size_t errlen)
{
    struct opp_advise_pass *ap = calloc(1, sizeof *ap);
    if (ap && (ap->pass = p) && (ap->table = opp_table_stream_over(p, err, errlen)))
        return ap;
    free(ap);
    snprintf(err, errlen, "out of memory");
    return NULL;
}

struct opp_table_stream *opp_advise_pass_table(struct opp_advise_pass *ap)
{
    return ap->table;
}

/* Whether a row by stack can show a code line: some call has a code stack
 * (OPPROF_STACKS), or a name has a code line's "): " (the rows grouped by
 * operator stack would show it). */
static int code_lines(const struct opp_advise_pass *ap)
{
    const struct opp_model *m = opp_pass_model(ap->pass);
    if (opp_pass_meta(ap->pass)->stacked_calls)
        return 1;
    for (uint32_t i = 0; i < m->nstrs; i++)
        if (m->strs[i] && strstr(m->strs[i], "): "))
            return 1;
    return 0;
}

int opp_advise_pass_run(struct opp_advise_pass *ap, const struct opp_agg_opts *o, const char *step,
                        const double *th, struct opp_advice *out, char *err, size_t errlen)
{
    ap->err[0] = 0;
    int summary = opp_pass_model(ap->pass)->summary; /* its steps are counted (advise.c) */
    if (!summary && !ap->steps && !(ap->steps = opp_step_stream_over(ap->pass, err, errlen)))
        return -1;
    /* the steps' first read made in the table's join (one read fewer) */
    struct opp_pass_consumer cands;
    if (!summary && opp_table_stream_join_pending(ap->table)) {
        if (opp_step_stream_tap(ap->steps, step, &cands))
            return opp_err_oom(err, errlen);
        int j = opp_table_stream_join_with(ap->table, &cands, err, errlen);
        if (j)
            return j;
    }
    const struct opp_advise_src src = {.ctx = ap,
                                       .aggregates = pass_aggregates,
                                       .steps = pass_steps,
                                       .ask = pass_ask,
                                       .gpu_stats = pass_gpu_stats,
                                       .cpu_series = pass_cpu_series,
                                       .first_ns = opp_pass_first_ns(ap->pass),
                                       .code_lines = !summary && code_lines(ap),
                                       .summary = summary};
    int rc = opp_advise(opp_pass_model(ap->pass), &src, o, step, th, out);
    if (rc == 1 || rc == -EIO) {
        snprintf(err, errlen, "%s", ap->err);
        return rc == 1 ? 1 : -1;
    }
    if (rc) {
        snprintf(err, errlen, "%s", strerror(-rc));
        return -1;
    }
    return 0;
}

void opp_advise_pass_free(struct opp_advise_pass *ap)
{
    if (!ap)
        return;
    if (ap->have_gs)
        opp_gpu_stats_free(&ap->gs);
    opp_gpu_stream_free(ap->gpu);
    opp_mem_stream_free(ap->mem);
    opp_step_stream_free(ap->steps);
    opp_table_stream_free(ap->table);
    free(ap);
}
