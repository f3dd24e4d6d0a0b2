/* The Chrome export's metadata (chrome.h): the file's head (its clock,
 * the rank) and tail (the devices' properties), the names of processes
 * and threads. */
#include "exports/chrome.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "views/fmt.h"

void opp_chrome_meta(struct chrome *x, const char *what, uint64_t pid, uint64_t tid,
                     const char *name)
{
    opp_chrome_begin_event(x);
    fprintf(x->out,
            "{\"ph\": \"M\", \"name\": \"%s\", \"pid\": %" PRIu64 ", \"tid\": %" PRIu64
            ", \"args\": {\"name\": ",
            what, pid, tid);
    opp_json_str(x->out, name);
    fputs("}}", x->out);
}

int opp_chrome_process(void *ctx, uint32_t pi, const struct opp_tr_process *tp)
{
    struct chrome *x = ctx;
    if (opp_chrome_reach(x, pi))
        return -EIO;
    if (!opp_chrome_wanted(x, pi))
        return 0;
    const struct xproc *p = &x->procs[pi];
    const char *exe = tp->exe ? tp->exe : "", *base = strrchr(exe, '/');
    char name[600];
    if (x->nfiles == 1)
        snprintf(name, sizeof name, "%s (pid %" PRIu32 ")", base ? base + 1 : exe, tp->pid);
    else /* several hosts: say which, and why the pid shown is not the pid */
        snprintf(name, sizeof name, "%.200s (pid %" PRIu32 ", %.300s%s)", base ? base + 1 : exe,
                 tp->pid, opp_chrome_where(x, opp_chrome_host(&x->m->procs[pi])),
                 p->cpid != tp->pid ? ", renumbered: an earlier trace has this pid" : "");
    opp_chrome_meta(x, "process_name", p->cpid, 0, name);
    return 0;
}

int opp_chrome_thread(void *ctx, uint32_t ti, const char *name)
{
    struct chrome *x = ctx;
    const struct opp_thread *t = &x->m->threads[ti];
    if (opp_chrome_reach(x, t->proc))
        return -EIO;
    if (opp_chrome_wanted(x, t->proc) && name && name[0])
        opp_chrome_meta(x, "thread_name", x->procs[t->proc].cpid, t->tid, name);
    return 0;
}

/* distributedInfo as Kineto writes it, when the exported processes are
 * one rank (HTA reads the rank with the regex "rank":\s+(\d+)). */
static void distributed_info(struct chrome *x)
{
    int64_t rank = -1, world = -1;
    for (size_t i = 0; i < x->m->nprocs; i++) {
        const struct opp_process *p = &x->m->procs[i];
        if (!opp_chrome_wanted(x, (uint32_t)i) || p->rank < 0)
            continue;
        if (rank >= 0 && p->rank != rank)
            return; /* several ranks: a file per rank carries it (--rank) */
        rank = p->rank;
        if (p->world_size >= 0)
            world = p->world_size;
    }
    if (rank < 0)
        return;
    fprintf(x->out, "  \"distributedInfo\": {\"rank\": %" PRId64, rank);
    if (world >= 0)
        fprintf(x->out, ", \"world_size\": %" PRId64, world);
    fputs("},\n", x->out);
}

/* The events end; the devices. */
void opp_chrome_tail(struct chrome *x)
{
    FILE *f = x->out;
    fputs("\n  ],\n  \"deviceProperties\": [", f);
    const struct opp_gpu *gpu = &x->m->gpu;
    size_t n = gpu->ndevices < 16 ? gpu->ndevices : 16; /* as Kineto's devices */
    for (size_t i = 0; i < n; i++) {
        const struct opp_gpu_device *d = &gpu->devices[i];
        fprintf(f, "%s\n    {\"id\": %" PRIu32 ", \"name\": ", i ? "," : "", d->id);
        opp_json_str(f, opp_model_str(x->m, d->name));
        fprintf(f,
                ", \"totalGlobalMem\": %" PRIu64 ", \"computeMajor\": %" PRIu32
                ", \"computeMinor\": %" PRIu32 ", \"numSms\": %" PRIu32
                ", \"maxThreadsPerBlock\": %" PRIu32 ", \"maxThreadsPerMultiprocessor\": %" PRIu32
                ", \"regsPerMultiprocessor\": %" PRIu32 ", \"sharedMemPerMultiprocessor\": %" PRIu32
                "}",
                d->global_mem, d->cc_major, d->cc_minor, d->sms, d->threads_per_block,
                d->threads_per_sm, d->regs_per_sm, d->smem_per_sm);
    }
    fputs(n ? "\n  ]\n}\n" : "]\n}\n", f);
}

void opp_chrome_head(struct chrome *x, uint64_t base_real)
{
    fprintf(x->out,
            "{\n  \"schemaVersion\": 1,\n  \"displayTimeUnit\": \"ms\",\n"
            "  \"baseTimeNanoseconds\": %" PRIu64 ",\n",
            base_real);
    distributed_info(x);
    fputs("  \"traceEvents\": [", x->out);
}
