/* Device, stream and kernel statistics (see gpu_stats.h). */
#ifndef _GNU_SOURCE /* qsort_r */
#define _GNU_SOURCE
#endif
#include "analysis/gpu_stats.h"
#include "analysis/loader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

double opp_gpu_occupancy(const struct opp_gpu_device *d, const struct opp_gpu_launch *l)
{
    if (!d)
        return -1;
    uint64_t max_warps = d->warps_per_sm ? d->warps_per_sm : d->threads_per_sm / 32;
    uint64_t threads = (uint64_t)l->block[0] * l->block[1] * l->block[2];
    if (!max_warps || !threads)
        return -1;
    if (d->threads_per_block && threads > d->threads_per_block)
        return 0; /* cannot run */
    uint64_t warps = (threads + 31) / 32;
    uint64_t blocks = max_warps / warps;
    if (d->blocks_per_sm && d->blocks_per_sm < blocks)
        blocks = d->blocks_per_sm;
    if (l->regs && d->regs_per_sm) {
        uint64_t regs_per_warp = ((uint64_t)l->regs * 32 + 255) / 256 * 256;
        uint64_t by_regs = d->regs_per_sm / regs_per_warp / warps;
        if (by_regs < blocks)
            blocks = by_regs;
    }
    uint64_t smem = (uint64_t)l->static_smem + l->dynamic_smem;
    if (smem && d->smem_per_sm && d->smem_per_sm / smem < blocks)
        blocks = d->smem_per_sm / smem;
    return (double)(blocks * warps) / (double)max_warps;
}

/* ---- busy intervals ---- */

enum order { BY_DEVICE, BY_STREAM, BY_NAME };

struct order_ctx {
    const struct opp_gpu_op *ops;
    enum order by;
};

static int cmp_u32(uint32_t a, uint32_t b)
{
    return a < b ? -1 : a > b;
}

static int cmp_ops(const void *pa, const void *pb, void *vctx)
{
    const struct order_ctx *ctx = vctx;
    uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
    const struct opp_gpu_op *a = &ctx->ops[ia], *b = &ctx->ops[ib];
    int c = 0;
    if (ctx->by == BY_NAME)
        c = cmp_u32(a->name, b->name);
    if (!c && ctx->by == BY_STREAM)
        c = cmp_u32(a->proc, b->proc);
    if (!c && ctx->by != BY_NAME)
        c = cmp_u32(a->device, b->device);
    if (!c && ctx->by == BY_STREAM)
        c = cmp_u32(a->stream, b->stream);
    if (!c && a->start_ns != b->start_ns)
        c = a->start_ns < b->start_ns ? -1 : 1;
    return c ? c : cmp_u32(ia, ib);
}

/* The selected ops that count as device time (kernels, memcpy, memset),
 * as indices sorted by `by`. NULL with *n = 0 when there are none or
 * memory runs out (*oom set). */
static uint32_t *selected_ops(const struct opp_model *m, const struct opp_agg_opts *o, enum order by,
                              int kernels_only, size_t *n, int *oom)
{
    *n = 0;
    *oom = 0;
    if (!m->gpu.nops)
        return NULL;
    if (m->gpu.nops > UINT32_MAX) {
        *oom = 1;
        return NULL;
    }
    uint32_t *idx = malloc(m->gpu.nops * sizeof *idx);
    if (!idx) {
        *oom = 1;
        return NULL;
    }
    for (size_t i = 0; i < m->gpu.nops; i++) {
        const struct opp_gpu_op *g = &m->gpu.ops[i];
        if (opp_gpu_op_timed(g) && (!kernels_only || g->type == OPP_GPU_KERNEL) &&
            opp_agg_selects(m, o, g->proc, g->thread))
            idx[(*n)++] = (uint32_t)i;
    }
    struct order_ctx ctx = {m->gpu.ops, by};
    if (*n)
        qsort_r(idx, *n, sizeof *idx, cmp_ops, &ctx);
    return idx;
}

/* Keep the OPP_GPU_GAPS_MAX largest gaps, largest first; an equal gap
 * found later goes after the earlier ones. */
static void keep_gap(struct opp_gpu_dev_stats *d, uint64_t start, uint64_t end, uint32_t next)
{
    uint64_t len = end - start;
    size_t at = d->ngaps;
    while (at > 0 && d->gaps[at - 1].end_ns - d->gaps[at - 1].start_ns < len)
        at--;
    if (at >= OPP_GPU_GAPS_MAX)
        return;
    size_t last = d->ngaps < OPP_GPU_GAPS_MAX ? d->ngaps : OPP_GPU_GAPS_MAX - 1;
    memmove(&d->gaps[at + 1], &d->gaps[at], (last - at) * sizeof d->gaps[0]);
    d->gaps[at] = (struct opp_gpu_gap){start, end, next};
    if (d->ngaps < OPP_GPU_GAPS_MAX)
        d->ngaps++;
}

/* The union of the intervals so far: a gap before this one is returned
 * (1) in *gap_start (its end is start). */
static int sweep(struct opp_gpu_sweep *w, uint64_t start, uint64_t end, uint64_t *gap_start)
{
    int gap = 0;
    if (!w->any) {
        *w = (struct opp_gpu_sweep){0, start, end, 1};
        return 0;
    }
    if (start > w->end) {
        w->busy += w->end - w->start;
        *gap_start = w->end;
        gap = 1;
        w->start = start;
    }
    if (end > w->end)
        w->end = end;
    return gap;
}

static uint64_t swept(const struct opp_gpu_sweep *w)
{
    return w->any ? w->busy + (w->end - w->start) : 0;
}

void opp_gpu_dev_op(struct opp_gpu_dev_stats *d, struct opp_gpu_sweep *w, uint64_t start,
                    uint64_t end, int kernel, uint32_t name)
{
    uint64_t gap;
    if (!w->any)
        d->first_ns = start;
    if (sweep(w, start, end, &gap))
        keep_gap(d, gap, start, name);
    d->ops++;
    if (kernel) {
        d->kernels++;
        d->kernel_ns += end - start;
    }
    if (end > d->last_ns)
        d->last_ns = end;
}

void opp_gpu_dev_done(struct opp_gpu_dev_stats *d, struct opp_gpu_sweep *w,
                      struct opp_gpu_stats *s)
{
    d->busy_ns = swept(w);
    uint64_t span = d->last_ns - d->first_ns;
    d->idle_share = span ? 1.0 - (double)d->busy_ns / (double)span : 0.0;
    s->ops += d->ops;
    s->kernels += d->kernels;
    s->kernel_ns += d->kernel_ns;
}

void opp_gpu_stream_op(struct opp_gpu_stream_stats *st, struct opp_gpu_sweep *w, uint64_t start,
                       uint64_t end, int kernel)
{
    uint64_t gap;
    sweep(w, start, end, &gap);
    st->ops++;
    if (kernel) {
        st->kernels++;
        st->kernel_ns += end - start;
    }
}

void opp_gpu_stream_done(struct opp_gpu_stream_stats *st, struct opp_gpu_sweep *w)
{
    st->busy_ns = swept(w);
}

static int cmp_dev(const void *pa, const void *pb)
{
    const struct opp_gpu_dev_stats *a = pa, *b = pb;
    return cmp_u32(a->device, b->device);
}

struct opp_gpu_dev_stats *opp_gpu_dev_new(const struct opp_model *m, struct opp_gpu_stats *s,
                                          size_t *cap, uint32_t device)
{
    struct opp_gpu_dev_stats *d;
    if (s->ndevs == *cap) {
        size_t n = *cap ? *cap * 2 : 8;
        if (!(d = reallocarray(s->devs, n, sizeof *d)))
            return NULL;
        s->devs = d;
        *cap = n;
    }
    d = &s->devs[s->ndevs++];
    memset(d, 0, sizeof *d);
    d->device = device;
    d->info = opp_gpu_device_find(m, device);
    return d;
}

const struct opp_gpu_dev_stats *opp_gpu_stats_dev(const struct opp_gpu_stats *s, uint32_t device)
{
    struct opp_gpu_dev_stats key = {.device = device};
    return s->ndevs ? bsearch(&key, s->devs, s->ndevs, sizeof key, cmp_dev) : NULL;
}

int opp_gpu_stats_memory(const struct opp_model *m, struct opp_gpu_stats *s, size_t *cap)
{
    size_t nsorted = s->ndevs; /* those of the ops, in device order */
    for (size_t i = 0; i < m->gpu.nmemseries; i++) {
        const struct opp_gpu_memseries *ms = &m->gpu.memseries[i];
        struct opp_gpu_dev_stats key = {.device = ms->device};
        struct opp_gpu_dev_stats *d =
            nsorted ? bsearch(&key, s->devs, nsorted, sizeof key, cmp_dev) : NULL;
        if (!d && !(d = opp_gpu_dev_new(m, s, cap, ms->device)))
            return -ENOMEM;
        d->has_memory = 1;
        d->peak_memory = ms->peak;
        d->final_memory = ms->final;
    }
    if (s->ndevs)
        qsort(s->devs, s->ndevs, sizeof *s->devs, cmp_dev);
    return 0;
}

static int device_stats(const struct opp_model *m, const struct opp_agg_opts *o,
                        struct opp_gpu_stats *s)
{
    size_t n;
    int oom;
    uint32_t *idx = selected_ops(m, o, BY_DEVICE, 0, &n, &oom);
    if (oom)
        return -ENOMEM;
    const struct opp_gpu_op *ops = m->gpu.ops;
    size_t cap = 0;
    for (size_t i = 0; i < n;) { /* by device: each group a new one, in order */
        size_t j = i;
        while (j < n && ops[idx[j]].device == ops[idx[i]].device)
            j++;
        struct opp_gpu_dev_stats *d = opp_gpu_dev_new(m, s, &cap, ops[idx[i]].device);
        if (!d) {
            free(idx);
            return -ENOMEM;
        }
        struct opp_gpu_sweep w = {0};
        for (size_t k = i; k < j; k++) {
            const struct opp_gpu_op *g = &ops[idx[k]];
            opp_gpu_dev_op(d, &w, g->start_ns, g->end_ns, g->type == OPP_GPU_KERNEL, g->name);
        }
        opp_gpu_dev_done(d, &w, s);
        i = j;
    }
    free(idx);
    return opp_gpu_stats_memory(m, s, &cap);
}

static int stream_stats(const struct opp_model *m, const struct opp_agg_opts *o,
                        struct opp_gpu_stats *s)
{
    size_t n;
    int oom;
    uint32_t *idx = selected_ops(m, o, BY_STREAM, 0, &n, &oom);
    if (oom)
        return -ENOMEM;
    const struct opp_gpu_op *ops = m->gpu.ops;
    size_t cap = 0;
    for (size_t i = 0; i < n;) {
        const struct opp_gpu_op *first = &ops[idx[i]];
        size_t j = i;
        while (j < n && ops[idx[j]].proc == first->proc && ops[idx[j]].device == first->device &&
               ops[idx[j]].stream == first->stream)
            j++;
        if (opp_loader_grow((void **)&s->streams, &cap, s->nstreams + 1, sizeof *s->streams)) {
            free(idx);
            return -ENOMEM;
        }
        struct opp_gpu_stream_stats *st = &s->streams[s->nstreams++];
        *st = (struct opp_gpu_stream_stats){.proc = first->proc, .device = first->device,
                                            .stream = first->stream};
        struct opp_gpu_sweep w = {0};
        for (size_t k = i; k < j; k++) {
            const struct opp_gpu_op *g = &ops[idx[k]];
            opp_gpu_stream_op(st, &w, g->start_ns, g->end_ns, g->type == OPP_GPU_KERNEL);
        }
        opp_gpu_stream_done(st, &w);
        i = j;
    }
    free(idx);
    return 0;
}

int opp_gpu_stats(const struct opp_model *m, const struct opp_agg_opts *o, struct opp_gpu_stats *s)
{
    memset(s, 0, sizeof *s);
    int rc = device_stats(m, o, s);
    if (!rc)
        rc = stream_stats(m, o, s);
    if (rc)
        opp_gpu_stats_free(s);
    return rc;
}

void opp_gpu_stats_free(struct opp_gpu_stats *s)
{
    free(s->devs);
    free(s->streams);
    memset(s, 0, sizeof *s);
}

/* ---- kernels ---- */

static int cmp_kernels(const void *pa, const void *pb)
{
    const struct opp_kernel_stats *a = pa, *b = pb;
    if (a->total_ns != b->total_ns)
        return a->total_ns > b->total_ns ? -1 : 1;
    return strcmp(a->name, b->name);
}

void opp_kernel_stats_sort(struct opp_kernel_stats *k, size_t n)
{
    if (n)
        qsort(k, n, sizeof *k, cmp_kernels);
}

void opp_kernel_op(struct opp_kernel_stats *k, struct opp_kernel_acc *a, uint64_t dur_ns,
                   double occupancy, int has_delay, int64_t delay_ns)
{
    k->count++;
    k->total_ns += dur_ns;
    if (occupancy >= 0) {
        a->occ_sum += occupancy;
        a->occ_n++;
    }
    if (has_delay) {
        if (!k->delays || delay_ns > k->delay_max_ns)
            k->delay_max_ns = delay_ns;
        k->delay_sum_ns += (double)delay_ns;
        k->delays++;
    }
}

void opp_kernel_done(struct opp_kernel_stats *k, const struct opp_kernel_acc *a)
{
    k->occupancy = a->occ_n ? a->occ_sum / (double)a->occ_n : -1;
}

int opp_kernel_stats(const struct opp_model *m, const struct opp_agg_opts *o,
                     struct opp_kernel_stats **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    size_t n;
    int oom;
    uint32_t *idx = selected_ops(m, o, BY_NAME, 1, &n, &oom);
    if (oom)
        return -ENOMEM;
    const struct opp_gpu_op *ops = m->gpu.ops;
    struct opp_kernel_stats *ks = NULL;
    size_t nks = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && ops[idx[j]].name == ops[idx[i]].name)
            j++;
        struct opp_kernel_stats *k = reallocarray(ks, nks + 1, sizeof *k);
        if (!k) {
            free(ks);
            free(idx);
            return -ENOMEM;
        }
        ks = k;
        k = &ks[nks++];
        *k = (struct opp_kernel_stats){.name = opp_model_str(m, ops[idx[i]].name)};
        struct opp_kernel_acc acc = {0};
        for (size_t q = i; q < j; q++) {
            const struct opp_gpu_op *g = &ops[idx[q]];
            double occ = g->launch == OPP_GPU_NONE
                             ? -1
                             : opp_gpu_occupancy(opp_gpu_device_find(m, g->device),
                                                 &m->gpu.launches[g->launch]);
            int64_t d = 0;
            if (g->thread != OPP_GPU_NONE) /* two's complement */
                d = (int64_t)(g->start_ns - m->threads[g->thread].events[g->event].end_ns);
            opp_kernel_op(k, &acc, opp_gpu_op_dur(g), occ, g->thread != OPP_GPU_NONE, d);
        }
        opp_kernel_done(k, &acc);
        i = j;
    }
    free(idx);
    opp_kernel_stats_sort(ks, nks);
    *out = ks;
    *nout = nks;
    return 0;
}
