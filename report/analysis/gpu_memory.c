/* Device memory from the MEMORY records (loader.h): the records in time
 * order, frees given their allocation's size, and each device's series of
 * bytes allocated over time with its peak. */
#include <stdlib.h>
#include <string.h>

#include "analysis/live_blocks.h"
#include "analysis/loader.h"

/* Memory records by time, then in the order they were read. */
static int cmp_mem(const void *pa, const void *pb, void *ctx)
{
    const struct opp_gpu_mem *mem = ctx;
    uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
    if (mem[ia].time_ns != mem[ib].time_ns)
        return mem[ia].time_ns < mem[ib].time_ns ? -1 : 1;
    return ia < ib ? -1 : ia > ib;
}

/* Sort the memory records by time and give each free without a size the
 * size of the allocation at its address. 0 or -1. */
static int gpu_memory_sizes(struct opp_gpu *gpu)
{
    if (!gpu->nmem)
        return 0;
    if (gpu->nmem > UINT32_MAX)
        return -1;
    uint32_t *order = malloc(gpu->nmem * sizeof *order);
    struct opp_gpu_mem *sorted = malloc(gpu->nmem * sizeof *sorted);
    if (!order || !sorted) {
        free(order);
        free(sorted);
        return -1;
    }
    for (size_t i = 0; i < gpu->nmem; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, gpu->nmem, sizeof *order, cmp_mem, gpu->mem);
    for (size_t i = 0; i < gpu->nmem; i++)
        sorted[i] = gpu->mem[order[i]];
    free(order);
    free(gpu->mem);
    gpu->mem = sorted;

    struct opp_live live = {0};
    for (size_t i = 0; i < gpu->nmem; i++) {
        struct opp_gpu_mem *r = &gpu->mem[i];
        if (r->op == OPP_GPU_MEM_FREE) {
            int found;
            int64_t bytes = opp_live_take(&live, r->proc, r->address, &found);
            if (found && !r->bytes)
                r->bytes = -bytes;
        } else if (r->op == OPP_GPU_MEM_ALLOC && opp_live_put(&live, r->proc, r->address, r->bytes)) {
            opp_live_free(&live);
            return -1;
        }
    }
    opp_live_free(&live);
    return 0;
}

static int cmp_u32(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return a < b ? -1 : a > b;
}

/* One series per device, in device order, from the records sorted by
 * time: the devices found by binary search (a trace may name very many). 0
 * or -1. */
static int gpu_memory_series(struct opp_gpu *gpu)
{
    if (!gpu->nmem)
        return 0;
    uint32_t *ids = malloc(gpu->nmem * sizeof *ids);
    size_t *count = NULL;
    if (!ids)
        return -1;
    for (size_t i = 0; i < gpu->nmem; i++)
        ids[i] = gpu->mem[i].device;
    qsort(ids, gpu->nmem, sizeof *ids, cmp_u32);
    size_t nd = 1;
    for (size_t i = 1; i < gpu->nmem; i++)
        if (ids[i] != ids[nd - 1])
            ids[nd++] = ids[i];
    int rc = -1;
    gpu->memseries = calloc(nd, sizeof *gpu->memseries);
    count = calloc(nd, sizeof *count);
    if (!gpu->memseries || !count)
        goto out;
    gpu->nmemseries = nd;
    for (size_t i = 0; i < gpu->nmem; i++)
        count[(uint32_t *)bsearch(&gpu->mem[i].device, ids, nd, sizeof *ids, cmp_u32) - ids]++;
    for (size_t k = 0; k < nd; k++) {
        gpu->memseries[k].device = ids[k];
        if (!(gpu->memseries[k].pts = malloc(count[k] * sizeof *gpu->memseries[k].pts)))
            goto out;
    }
    for (size_t i = 0; i < gpu->nmem; i++) {
        size_t k =
            (size_t)((uint32_t *)bsearch(&gpu->mem[i].device, ids, nd, sizeof *ids, cmp_u32) - ids);
        struct opp_gpu_memseries *s = &gpu->memseries[k];
        int64_t now = opp_add_sat(s->npts ? s->pts[s->npts - 1].bytes : 0, gpu->mem[i].bytes);
        s->pts[s->npts++] = (struct opp_gpu_mem_point){gpu->mem[i].time_ns, now};
        if (now > s->peak)
            s->peak = now;
        s->final = now;
    }
    rc = 0;
out:
    free(ids);
    free(count);
    return rc;
}

int opp_loader_gpu_memory(struct opp_gpu *gpu)
{
    return gpu_memory_sizes(gpu) || gpu_memory_series(gpu) ? -1 : 0;
}
