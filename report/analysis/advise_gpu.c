/* advise's rules on the GPU: a device idle during the steps, launching
 * bound by the CPU (advise_rules.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/advise_rules.h"
#include "analysis/gpu_stats.h"

/* Device time of the steps (their window's kernels, copies and sets,
 * summed: a busy time when one stream runs at a time) against their wall
 * time. */
int adv_rule_gpu_idle(const struct opp_advise_ctx *c, struct opp_findings *out)
{
    if (!opp_model_has_gpu(c->m) || !c->agg.gpu_ops || !c->wall_ns)
        return 0;
    uint64_t busy = c->agg.self_cuda_time_total_ns;
    uint64_t idle = c->wall_ns > busy ? c->wall_ns - busy : 0;
    if ((double)idle < adv_th(c, OPP_TH_GPU_IDLE_SHARE) * (double)c->wall_ns)
        return 0;
    struct opp_gpu_stats s;
    int rc = adv_gpu_stats(c, &s);
    if (rc)
        return rc;
    struct opp_finding *f = adv_add(out, "gpu_idle");
    if (!f) {
        opp_gpu_stats_free(&s);
        return -ENOMEM;
    }
    adv_stake(c, f, idle);
    char gap[160] = "";
    if (s.ndevs == 1) {
        const struct opp_gpu_dev_stats *d = &s.devs[0];
        f->device = d->device;
        size_t on = 0, which = 0;
        for (size_t i = 0; i < s.nstreams; i++)
            if (s.streams[i].device == d->device && s.streams[i].ops)
                on++, which = i;
        if (on == 1) /* its one stream */
            f->stream = s.streams[which].stream;
        if (d->ngaps)
            snprintf(gap, sizeof gap, "; its largest gap in the trace: %.3f ms, before %.100s",
                     (double)(d->gaps[0].end_ns - d->gaps[0].start_ns) / 1e6,
                     opp_model_str(c->m, d->gaps[0].next));
    }
    opp_gpu_stats_free(&s);
    snprintf(f->what, sizeof f->what, "The GPU is idle %.0f%% of the steps' time", f->share * 100);
    snprintf(f->evidence, sizeof f->evidence,
             "%.3f ms of device work (%" PRIu64 " ops) in a %.3f ms step (mean)%s",
             (double)busy / (double)c->n / 1e6, c->agg.gpu_ops,
             (double)c->wall_ns / (double)c->n / 1e6, gap);
    f->try_ = "the device waits for the host: see the findings on input, host synchronisation "
              "and launching; larger batches, CUDA graphs, copies that overlap compute "
              "(pin_memory, non_blocking=True)";
    return 0;
}

/* Communication kernels while no compute kernel runs, on one device:
 * its busy time (the union over its streams) minus its compute kernels'
 * time (their durations summed: exact when compute runs on one stream at
 * a time, else an underestimate), at most the communication's own time.
 * Over the whole trace (the GPU statistics take no time window). */
int adv_rule_comm(const struct opp_advise_ctx *c, struct opp_findings *out)
{
    if (!opp_model_has_gpu(c->m))
        return 0;
    struct opp_gpu_stats s;
    struct opp_agg a;
    int rc = adv_gpu_stats(c, &s);
    if (rc)
        return rc;
    if (s.ndevs != 1 || (rc = adv_aggregate(c, &c->o, &a))) {
        opp_gpu_stats_free(&s);
        return rc;
    }
    uint64_t comm = 0, compute = 0, calls = 0;
    const struct opp_row *top = NULL;
    for (size_t i = 0; i < a.nrows; i++) {
        const struct opp_row *r = &a.rows[i];
        if (r->device_type != OPP_DEVICE_CUDA || r->transfers)
            continue;
        if (strncmp(r->key, "nccl", 4)) {
            compute += r->cuda_time_total_ns;
            continue;
        }
        comm += r->cuda_time_total_ns;
        calls += r->count;
        if (!top || r->cuda_time_total_ns > top->cuda_time_total_ns)
            top = r;
    }
    uint64_t busy = s.devs[0].busy_ns, device = s.devs[0].device;
    uint64_t exposed = busy > compute ? busy - compute : 0;
    exposed = exposed < comm ? exposed : comm;
    opp_gpu_stats_free(&s);
    if (!comm || (double)exposed < adv_th(c, OPP_TH_COMM_EXPOSED_SHARE) * (double)comm) {
        opp_agg_free(&a);
        return 0;
    }
    struct opp_finding *f = adv_add(out, "comm_exposed");
    if (!f) {
        opp_agg_free(&a);
        return -ENOMEM;
    }
    adv_stake(c, f, exposed);
    f->share = -1; /* the whole trace's time */
    f->device = (int64_t)device;
    f->per_step = (double)calls / (double)c->n;
    f->per_step_unit = "kernels";
    snprintf(f->op, sizeof f->op, "%s", top->key);
    snprintf(f->what, sizeof f->what,
             "Communication not overlapped with compute: %.0f%% of the NCCL kernels' time runs "
             "with no compute kernel beside it",
             100.0 * (double)exposed / (double)comm);
    snprintf(f->evidence, sizeof f->evidence,
             "NCCL kernels %.3f ms, compute kernels %.3f ms, device busy %.3f ms (the union of "
             "its streams): %.3f ms exposed",
             (double)comm / 1e6, (double)compute / 1e6, (double)busy / 1e6, (double)exposed / 1e6);
    opp_agg_free(&a);
    f->try_ = "overlap it: DDP's gradient buckets (bucket_cap_mb) start all-reduces during the "
              "backward pass; FSDP's prefetch (forward_prefetch, backward_prefetch); keep "
              "collectives on their own stream and avoid a synchronisation right after them";
    return 0;
}

static const char *const launches[] = {"cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC",
                                       "cuLaunchKernelEx"};

int adv_rule_launch(const struct opp_advise_ctx *c, struct opp_findings *out)
{
    uint64_t launch_ns = 0, calls = 0;
    const char *name = NULL;
    for (size_t i = 0; i < sizeof launches / sizeof *launches; i++) {
        const struct opp_row *r = adv_row(&c->agg, launches[i]);
        if (r) {
            launch_ns += r->cpu_time_total_ns;
            calls += r->count;
            name = name ? name : r->key;
        }
    }
    if (!name)
        return 0;
    uint64_t kernels = 0, kernel_ns = 0;
    const struct opp_row *most = NULL;
    for (size_t i = 0; i < c->agg.nrows; i++) {
        const struct opp_row *r = &c->agg.rows[i];
        if (r->device_type != OPP_DEVICE_CUDA || r->transfers)
            continue;
        kernels += r->count;
        kernel_ns += r->cuda_time_total_ns;
        if (!most || r->count > most->count)
            most = r;
    }
    if (!kernels || launch_ns <= kernel_ns ||
        (double)kernel_ns / (double)kernels > adv_th(c, OPP_TH_LAUNCH_KERNEL_US) * 1e3)
        return 0;
    struct opp_finding *f = adv_add(out, "launch_bound");
    if (!f)
        return -ENOMEM;
    adv_stake(c, f, launch_ns - kernel_ns);
    f->per_step = (double)kernels / (double)c->n;
    f->per_step_unit = "kernels";
    snprintf(f->op, sizeof f->op, "%s", name);
    snprintf(f->what, sizeof f->what,
             "Launch bound: %.0f short kernels a step take less time on the device than their "
             "launches on the CPU",
             f->per_step);
    snprintf(f->evidence, sizeof f->evidence,
             "kernels %.2f us each on the device, %s %.2f us each on the CPU (%" PRIu64
             " calls); the most launched: %s (%" PRIu64 ")",
             (double)kernel_ns / (double)kernels / 1e3, name,
             calls ? (double)launch_ns / (double)calls / 1e3 : 0.0, calls, most->key, most->count);
    f->try_ = "fewer, larger kernels: CUDA graphs (torch.cuda.graphs, torch.compile "
              "mode=\"reduce-overhead\"), fused kernels (torch.compile), larger batches";
    return 0;
}
