/* The Chrome export's GPU work (chrome.h): kernels, copies, sets,
 * synchronizations and overhead on a track per device and stream, device
 * memory as instants, the end of a launch's arrow. */
#include "exports/chrome.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "analysis/loader.h"
#include "exports/chrome_json.h"
#include "views/fmt.h"

/* A GPU track named when first used: 0, or -ENOMEM. */
static int track(struct chrome *x, struct xkey **set, uint64_t key, const char *what, uint64_t pid,
                 uint64_t tid, const char *name)
{
    struct xkey *k;
    HASH_FIND(hh, *set, &key, sizeof key, k);
    if (k)
        return 0;
    if (!(k = malloc(sizeof *k)))
        return -ENOMEM;
    k->key = key;
    if (OPP_HASH_ADD(*set, key, sizeof k->key, k)) {
        free(k);
        return -ENOMEM;
    }
    opp_chrome_meta(x, what, pid, tid, name);
    return 0;
}

int opp_chrome_gpu(void *ctx, uint32_t pi, const struct opp_gpu_rec *g)
{
    struct chrome *x = ctx;
    FILE *f = x->out;
    char buf[96];
    if (g->type < OPP_GPU_KERNEL || g->type > OPP_GPU_OVERHEAD)
        return 0;
    if (opp_chrome_reach(x, pi))
        return -EIO;
    if (!opp_chrome_wanted(x, pi))
        return 0;
    uint64_t start = g->f[OPP_GF_START];
    if (start < x->from_ns || start >= x->to_ns)
        return 0;
    if (g->type == OPP_GPU_MEMORY) {
        uint64_t dev = g->f[OPP_GF_DEVICE];
        int64_t bytes = (int64_t)g->f[OPP_GF_M_BYTES];
        if (g->f[OPP_GF_M_OP] == OPP_GPU_MEM_FREE)
            bytes = -bytes;
        else if (g->f[OPP_GF_M_OP] != OPP_GPU_MEM_ALLOC)
            return 0;
        if (dev < 64)
            x->mem_total[dev] += bytes;
        opp_chrome_begin_event(x);
        fprintf(f,
                "{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"cuda_memory\", \"name\": \"[memory]\", "
                "\"pid\": %" PRIu32 ", \"tid\": 0, \"ts\": ",
                opp_chrome_pid(x, dev));
        put_us(f, start, x->base_ns);
        fprintf(f,
                ", \"args\": {\"Device Type\": 1, \"Device Id\": %" PRIu64 ", \"Addr\": %" PRIu64
                ", \"Bytes\": %" PRId64 ", \"Total Allocated\": %" PRId64 "}}",
                dev, g->f[OPP_GF_M_ADDRESS], bytes, dev < 64 ? x->mem_total[dev] : 0);
        return ferror(f) ? -EIO : 0;
    }
    struct opp_gpu_op op;
    struct opp_gpu_launch l;
    opp_gpu_op_decode(g, pi, &op, &l);
    uint32_t cpid = opp_chrome_pid(x, op.device);
    if (x->nfiles == 1)
        snprintf(buf, sizeof buf, "GPU %" PRIu32, op.device);
    else
        snprintf(buf, sizeof buf, "GPU %" PRIu32 " (%.60s)", op.device,
                 opp_chrome_where(x, x->hosts[x->cur]));
    if (track(x, &x->devices, cpid, "process_name", cpid, 0, buf))
        return -ENOMEM;
    snprintf(buf, sizeof buf, "stream %" PRIu32, op.stream);
    if (track(x, &x->streams, (uint64_t)cpid << 32 | op.stream, "thread_name", cpid, op.stream,
              buf))
        return -ENOMEM;
    const char *cat = op.type == OPP_GPU_KERNEL   ? "kernel"
                      : op.type == OPP_GPU_MEMCPY ? "gpu_memcpy"
                      : op.type == OPP_GPU_MEMSET ? "gpu_memset"
                      : op.type == OPP_GPU_SYNC   ? "cuda_sync"
                                                  : "overhead";
    uint32_t name = opp_loader_op_name(&opp_pass_meta(x->pass)->ld, &op, x->dem, x->ndem);
    if (name == UINT32_MAX)
        return -ENOMEM;
    opp_chrome_begin_event(x);
    fprintf(f, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": ", cat);
    opp_json_str(f, opp_model_str(x->m, name));
    fprintf(f, ", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"ts\": ", cpid, op.stream);
    put_us(f, op.start_ns, x->base_ns);
    fputs(", \"dur\": ", f);
    put_us(f, op.end_ns, op.start_ns);
    fprintf(f,
            ", \"args\": {\"device\": %" PRIu32 ", \"context\": %" PRIu64 ", \"stream\": %" PRIu32
            ", \"correlation\": %" PRIu64,
            op.device, g->f[OPP_GF_CONTEXT], op.stream, op.corr);
    if (op.type == OPP_GPU_KERNEL)
        fprintf(f,
                ", \"grid\": [%" PRIu32 ", %" PRIu32 ", %" PRIu32 "], \"block\": [%" PRIu32
                ", %" PRIu32 ", %" PRIu32 "], \"registers per thread\": %" PRIu32
                ", \"shared memory\": %" PRIu64,
                l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2], l.regs,
                (uint64_t)l.static_smem + l.dynamic_smem);
    if (op.type == OPP_GPU_MEMCPY || op.type == OPP_GPU_MEMSET) {
        fprintf(f, ", \"bytes\": %" PRIu64, op.bytes);
        uint64_t dur = op.end_ns - op.start_ns;
        if (dur)
            fprintf(f, ", \"memory bandwidth (GB/s)\": %.3f", (double)op.bytes / (double)dur);
    }
    fputs("}}", f);
    if (op.corr && opp_bits_has(&x->procs[pi].has_call, op.corr)) {
        opp_chrome_begin_event(x);
        fprintf(
            f,
            "{\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": %" PRIu64
            ", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"ts\": ",
            opp_chrome_flow_id(x->m->procs[pi].proc, op.corr), cpid, op.stream);
        put_us(f, op.start_ns, x->base_ns);
        fputs("}", f);
    }
    return ferror(f) ? -EIO : 0;
}
