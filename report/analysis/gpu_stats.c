/* Device, stream and kernel statistics (see gpu_stats.h). */
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
    return (a->device > b->device) - (a->device < b->device);
}

struct opp_gpu_dev_stats *opp_gpu_dev_new(const struct opp_model *m, struct opp_gpu_stats *s,
                                          size_t *cap, uint32_t device)
{
    struct opp_gpu_dev_stats *d;
    if (opp_loader_grow((void **)&s->devs, cap, s->ndevs + 1, sizeof *s->devs))
        return NULL;
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
