/* advise's rules on memory, from the memory series (CPU: every process's
 * PyTorch allocations; a device's: its CUDA allocations): allocations a
 * steady step, memory growing from step to step (advise_rules.h). Each
 * series is walked point by point (the CPU's, from a pass, is never held
 * whole: opp_advise_src's cpu_series). */
#ifndef _GNU_SOURCE /* qsort_r */
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/advise.h"
#include "analysis/advise_rules.h"

/* What a walk of a series finds: its points; the allocations (points
 * where the bytes rose) in [begin, end); and at each time t[k] the bytes
 * after the last point before it (0 before the first) into bytes[k]. */
struct probe {
    uint64_t begin, end, allocs, npts;
    const uint64_t *t;
    int64_t *bytes;
    size_t *order; /* of t, by time */
    size_t nt, next;
    int64_t prev; /* the last point's bytes */
};

static int probe_point(void *ctx, uint64_t time_ns, int64_t bytes)
{
    struct probe *p = ctx;
    for (; p->next < p->nt && p->t[p->order[p->next]] <= time_ns; p->next++)
        p->bytes[p->order[p->next]] = p->prev;
    p->allocs += time_ns >= p->begin && time_ns < p->end && bytes > p->prev;
    p->prev = bytes;
    p->npts++;
    return 0;
}

static int cmp_time(const void *pa, const void *pb, void *ctx)
{
    const uint64_t *t = ctx;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    return t[a] != t[b] ? (t[a] < t[b] ? -1 : 1) : (a > b) - (a < b);
}

/* p walked over series d of the devices' (d < 0: the CPU's). 0, 1 or
 * -errno (the source's). */
static int walk(const struct opp_advise_ctx *c, int64_t d, struct probe *p)
{
    if (p->nt) {
        if (!(p->order = malloc(p->nt * sizeof *p->order)))
            return -ENOMEM;
        for (size_t k = 0; k < p->nt; k++)
            p->order[k] = k;
        qsort_r(p->order, p->nt, sizeof *p->order, cmp_time, (void *)p->t);
    }
    int rc = 0;
    if (d < 0) {
        rc = c->src->cpu_series(c->src->ctx, probe_point, p);
    } else {
        const struct opp_gpu_memseries *s = &c->m->gpu.memseries[d];
        for (size_t i = 0; i < s->npts; i++)
            probe_point(p, s->pts[i].time_ns, s->pts[i].bytes);
    }
    for (; !rc && p->next < p->nt; p->next++) /* after every point */
        p->bytes[p->order[p->next]] = p->prev;
    free(p->order);
    p->order = NULL;
    return rc;
}

/* Allocations a steady step (the steps after warm-up) in series d, 0
 * when none. 0 or as walk. */
static int steady_allocs(const struct opp_advise_ctx *c, int64_t d, double *per_step)
{
    *per_step = 0;
    if (!c->real_steps || c->warm >= c->n)
        return 0;
    struct probe p = {.begin = c->steps[c->warm].begin_ns, .end = c->steps[c->n - 1].end_ns};
    int rc = walk(c, d, &p);
    *per_step = (double)p.allocs / (double)(c->n - c->warm);
    return rc;
}

int adv_rule_cpu_allocs(const struct opp_advise_ctx *c, struct opp_findings *out)
{
    double per_step;
    int rc = steady_allocs(c, -1, &per_step);
    if (rc || per_step < adv_th(c, OPP_TH_CPU_ALLOCS_PER_STEP) || per_step == 0)
        return rc;
    struct opp_finding *f = adv_add(out, "cpu_alloc_churn");
    if (!f)
        return -ENOMEM;
    f->per_step = per_step;
    f->per_step_unit = "allocations";
    snprintf(f->what, sizeof f->what, "Allocator churn: %.0f CPU allocations a step", per_step);
    snprintf(f->evidence, sizeof f->evidence,
             "PyTorch's CPU allocations in the %zu steady steps (every process's), no time "
             "estimate",
             c->n - c->warm);
    f->try_ = "reuse tensors across steps (out= arguments, in-place ops, preallocated buffers); "
              "fewer temporaries (fused ops, torch.compile)";
    return 0;
}

int adv_rule_cuda_allocs(const struct opp_advise_ctx *c, struct opp_findings *out)
{
    for (size_t d = 0; d < c->m->gpu.nmemseries; d++) {
        const struct opp_gpu_memseries *s = &c->m->gpu.memseries[d];
        double per_step;
        int rc = steady_allocs(c, (int64_t)d, &per_step);
        if (rc)
            return rc;
        if (per_step < adv_th(c, OPP_TH_CUDA_ALLOCS_PER_STEP) || per_step == 0)
            continue;
        struct opp_finding *f = adv_add(out, "cuda_alloc_churn");
        if (!f)
            return -ENOMEM;
        uint64_t ns = 0;
        static const char *const calls[] = {"cudaMalloc", "cudaFree", "cuMemAlloc_v2",
                                            "cuMemFree_v2"};
        for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
            const struct opp_row *r = adv_row(&c->agg, calls[i]);
            ns += r ? r->cpu_time_total_ns : 0;
        }
        adv_stake(c, f, ns);
        f->device = s->device;
        f->per_step = per_step;
        f->per_step_unit = "allocations";
        snprintf(f->what, sizeof f->what,
                 "Device allocations inside the step: %.1f a steady step on device %" PRIu32,
                 per_step, s->device);
        snprintf(f->evidence, sizeof f->evidence,
                 "%zu steady steps; cudaMalloc and cudaFree take %.3f ms a step", c->n - c->warm,
                 f->ms_per_step);
        f->try_ = "let PyTorch's caching allocator keep the memory (no torch.cuda.empty_cache() "
                  "in the loop); keep shapes static so cached blocks fit again";
    }
    return 0;
}

/* Series d (as walk) growing by growth_bytes_per_step or more a step
 * over each half of the steady steps: a finding about where (device -1:
 * CPU). Each half, so that a one-off rise (a cache filled once) is not
 * growth, while a leak every few steps (outputs kept at each log
 * interval) is, rising in few of the steps. 0 or as walk. */
static int growth(const struct opp_advise_ctx *c, struct opp_findings *out, int64_t d,
                  int64_t device)
{
    size_t first = c->warm, n = c->n - first;
    if (!c->real_steps || n < 2 || (double)n < adv_th(c, OPP_TH_STEPS_MIN))
        return 0;
    uint64_t *t = malloc(n * sizeof *t);
    int64_t *at = malloc(n * sizeof *at);
    if (!t || !at) {
        free(t);
        free(at);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        t[i] = c->steps[first + i].end_ns;
    struct probe p = {.t = t, .bytes = at, .nt = n};
    int rc = walk(c, d, &p);
    size_t rises = 0, half = (n - 1) / 2;
    int64_t prev = at[0], start = prev, mid = at[half];
    for (size_t i = 1; i < n; i++) {
        rises += at[i] > prev;
        prev = at[i];
    }
    free(t);
    free(at);
    if (rc || !p.npts)
        return rc;
    double th = adv_th(c, OPP_TH_GROWTH_PER_STEP);
    double per_step = (double)(prev - start) / (double)(n - 1);
    if (per_step < th || (double)(mid - start) < th * (double)half ||
        (double)(prev - mid) < th * (double)(n - 1 - half))
        return 0;
    struct opp_finding *f = adv_add(out, "memory_growth");
    if (!f)
        return -ENOMEM;
    f->device = device;
    f->per_step = per_step;
    f->per_step_unit = "bytes";
    f->step = (int64_t)first;
    f->step_last = (int64_t)c->n - 1;
    if (device < 0)
        snprintf(f->what, sizeof f->what, "CPU memory grows %.2f MiB a step", per_step / 1048576.0);
    else
        snprintf(f->what, sizeof f->what, "Device %" PRId64 " memory grows %.2f MiB a step", device,
                 per_step / 1048576.0);
    snprintf(f->evidence, sizeof f->evidence,
             "%.2f MiB at the end of step %zu, %.2f MiB at the end of step %zu; it rose in %zu of "
             "%zu steps",
             (double)start / 1048576.0, first, (double)prev / 1048576.0, c->n - 1, rises, n - 1);
    f->try_ = "something keeps tensors from step to step: a loss kept with its graph "
              "(total += loss instead of loss.item() or loss.detach()), lists of outputs, caches; "
              "`opprof export memory` draws the timeline";
    return 0;
}

int adv_rule_growth(const struct opp_advise_ctx *c, struct opp_findings *out)
{
    int rc = growth(c, out, -1, -1);
    for (size_t d = 0; d < c->m->gpu.nmemseries && !rc; d++)
        rc = growth(c, out, (int64_t)d, c->m->gpu.memseries[d].device);
    return rc;
}
