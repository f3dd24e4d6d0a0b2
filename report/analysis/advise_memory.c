/* advise's rules on memory, from the memory series (CPU: every process's
 * PyTorch allocations; a device's: its CUDA allocations): allocations a
 * steady step, memory growing from step to step (advise_rules.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/advise_rules.h"

/* The first point of s at or after t. */
static size_t first_at(const struct opp_gpu_memseries *s, uint64_t t)
{
    return OPP_PARTITION_POINT(s->npts, k, s->pts[k].time_ns < t);
}

/* Allocations (points where the bytes rose) in [begin, end). */
static uint64_t allocs_in(const struct opp_gpu_memseries *s, uint64_t begin, uint64_t end)
{
    uint64_t n = 0;
    for (size_t i = first_at(s, begin); i < s->npts && s->pts[i].time_ns < end; i++)
        n += s->pts[i].bytes > (i ? s->pts[i - 1].bytes : 0);
    return n;
}

/* The bytes after the last point before t (0 before the first). */
static int64_t bytes_at(const struct opp_gpu_memseries *s, uint64_t t)
{
    size_t i = first_at(s, t);
    return i ? s->pts[i - 1].bytes : 0;
}

/* Allocations a steady step (the steps after warm-up), 0 when none. */
static double steady_allocs(const struct opp_advise_ctx *c, const struct opp_gpu_memseries *s)
{
    if (!c->real_steps || c->warm >= c->n)
        return 0;
    uint64_t n = allocs_in(s, c->steps[c->warm].begin_ns, c->steps[c->n - 1].end_ns);
    return (double)n / (double)(c->n - c->warm);
}

int adv_rule_cpu_allocs(const struct opp_advise_ctx *c, struct opp_findings *out)
{
    double per_step = steady_allocs(c, &c->m->cpu.series);
    if (per_step < adv_th(c, OPP_TH_CPU_ALLOCS_PER_STEP) || per_step == 0)
        return 0;
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
        double per_step = steady_allocs(c, s);
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

/* A series growing in most steady steps by growth_bytes_per_step or more
 * a step on average: a finding about where (device -1: CPU). */
static int growth(const struct opp_advise_ctx *c, struct opp_findings *out,
                  const struct opp_gpu_memseries *s, int64_t device)
{
    size_t first = c->warm, n = c->n - first;
    if (!c->real_steps || !s->npts || n < 2 || (double)n < adv_th(c, OPP_TH_STEPS_MIN))
        return 0;
    size_t rises = 0;
    int64_t prev = bytes_at(s, c->steps[first].end_ns), start = prev;
    for (size_t i = first + 1; i < c->n; i++) {
        int64_t v = bytes_at(s, c->steps[i].end_ns);
        rises += v > prev;
        prev = v;
    }
    double per_step = (double)(prev - start) / (double)(n - 1);
    if (per_step < adv_th(c, OPP_TH_GROWTH_PER_STEP) || rises * 5 < (n - 1) * 4)
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
    int rc = growth(c, out, &c->m->cpu.series, -1);
    for (size_t d = 0; d < c->m->gpu.nmemseries && !rc; d++)
        rc = growth(c, out, &c->m->gpu.memseries[d], c->m->gpu.memseries[d].device);
    return rc;
}
