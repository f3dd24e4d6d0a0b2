/* The Chrome export's metadata (chrome.h): the file's head (its clock,
 * the rank) and tail (the devices' properties), the names of processes
 * and threads. */
#include "exports/chrome.h"

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

int opp_chrome_process(void *ctx, const struct opp_tr_process *tp)
{
    struct chrome *x = ctx;
    struct xproc *p = opp_chrome_proc(x, tp->proc);
    if (!opp_chrome_wanted(x, p))
        return 0;
    const char *exe = tp->exe ? strrchr(tp->exe, '/') : NULL;
    char name[600];
    if (x->nfiles == 1)
        snprintf(name, sizeof name, "%s (pid %" PRIu32 ")",
                 exe       ? exe + 1
                 : tp->exe ? tp->exe
                           : "",
                 tp->pid);
    else /* several hosts: say which, and why the pid shown is not the pid */
        snprintf(name, sizeof name, "%.200s (pid %" PRIu32 ", %.300s%s)",
                 exe       ? exe + 1
                 : tp->exe ? tp->exe
                           : "",
                 tp->pid, opp_chrome_where(x, p->host),
                 p->cpid != tp->pid ? ", renumbered: an earlier trace has this pid" : "");
    opp_chrome_meta(x, "process_name", p->cpid, 0, name);
    return 0;
}

int opp_chrome_thread(void *ctx, uint32_t proc, uint32_t tid, const char *name)
{
    struct chrome *x = ctx;
    struct xproc *p = opp_chrome_proc(x, proc);
    if (opp_chrome_wanted(x, p) && name && name[0])
        opp_chrome_meta(x, "thread_name", p->cpid, tid, name);
    return 0;
}

/* distributedInfo as Kineto writes it, when the exported processes are
 * one rank (HTA reads the rank with the regex "rank":\s+(\d+)). */
static void distributed_info(struct chrome *x)
{
    int64_t rank = -1, world = -1;
    struct xproc *p, *pt;
    HASH_ITER(hh, x->procs, p, pt)
    {
        if (!opp_chrome_wanted(x, p) || p->rank < 0)
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
    for (size_t i = 0; i < x->ndevs; i++) {
        const uint64_t *v = x->devs[i].f;
        const char *name =
            opp_chrome_str_of(x, (uint32_t)(v[OPP_GF_V_NAME] >> 32), v[OPP_GF_V_NAME]);
        fprintf(f, "%s\n    {\"id\": %" PRIu64 ", \"name\": ", i ? "," : "", v[OPP_GF_V_ID]);
        opp_json_str(f, name ? name : "");
        fprintf(f,
                ", \"totalGlobalMem\": %" PRIu64 ", \"computeMajor\": %" PRIu64
                ", \"computeMinor\": %" PRIu64 ", \"numSms\": %" PRIu64
                ", \"maxThreadsPerBlock\": %" PRIu64 ", \"maxThreadsPerMultiprocessor\": %" PRIu64
                ", \"regsPerMultiprocessor\": %" PRIu64 ", \"sharedMemPerMultiprocessor\": %" PRIu64
                "}",
                v[OPP_GF_V_GLOBAL_MEM], v[OPP_GF_V_CC_MAJOR], v[OPP_GF_V_CC_MINOR], v[OPP_GF_V_SMS],
                v[OPP_GF_V_THREADS_PER_BLOCK], v[OPP_GF_V_THREADS_PER_SM], v[OPP_GF_V_REGS_PER_SM],
                v[OPP_GF_V_SMEM_PER_SM]);
    }
    fputs(x->ndevs ? "\n  ]\n}\n" : "]\n}\n", f);
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
