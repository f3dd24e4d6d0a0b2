/* Device memory from the MEMORY records (loader.h): the records in time
 * order, frees given their allocation's size, and each device's series of
 * bytes allocated over time with its peak. */
#include <stdlib.h>
#include <string.h>

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

struct live_ent {
    uint64_t key[2]; /* proc, address */
    int64_t bytes;
    UT_hash_handle hh;
};

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

    struct live_ent *live = NULL;
    for (size_t i = 0; i < gpu->nmem; i++) {
        struct opp_gpu_mem *r = &gpu->mem[i];
        if (r->op != OPP_GPU_MEM_ALLOC && r->op != OPP_GPU_MEM_FREE)
            continue;
        uint64_t key[2] = {r->proc, r->address};
        struct live_ent *e;
        HASH_FIND(hh, live, key, sizeof key, e);
        if (r->op == OPP_GPU_MEM_FREE) {
            if (e) {
                if (!r->bytes)
                    r->bytes = -e->bytes;
                HASH_DEL(live, e);
                free(e);
            }
            continue;
        }
        if (!e) {
            e = malloc(sizeof *e);
            if (!e) {
                OPP_HASH_FREE(live);
                return -1;
            }
            memcpy(e->key, key, sizeof key);
            int hash_oom = 0;
            HASH_ADD(hh, live, key, sizeof e->key, e);
            if (hash_oom) {
                free(e);
                OPP_HASH_FREE(live);
                return -1;
            }
        }
        e->bytes = r->bytes;
    }
    OPP_HASH_FREE(live);
    return 0;
}

/* One series per device from the sorted memory records. 0 or -1. */
static int gpu_memory_series(struct opp_gpu *gpu)
{
    for (size_t i = 0; i < gpu->nmem; i++) {
        uint32_t dev = gpu->mem[i].device;
        size_t k = 0;
        while (k < gpu->nmemseries && gpu->memseries[k].device != dev)
            k++;
        if (k == gpu->nmemseries) {
            struct opp_gpu_memseries *s =
                reallocarray(gpu->memseries, gpu->nmemseries + 1, sizeof *s);
            if (!s)
                return -1;
            gpu->memseries = s;
            memset(&s[k], 0, sizeof s[k]);
            s[k].device = dev;
            gpu->nmemseries++;
            /* Sized for the device's records, counted once. */
            size_t n = 0;
            for (size_t j = i; j < gpu->nmem; j++)
                n += gpu->mem[j].device == dev;
            s[k].pts = malloc(n * sizeof *s[k].pts);
            if (!s[k].pts)
                return -1;
        }
        struct opp_gpu_memseries *s = &gpu->memseries[k];
        int64_t now = opp_add_sat(s->npts ? s->pts[s->npts - 1].bytes : 0, gpu->mem[i].bytes);
        s->pts[s->npts++] = (struct opp_gpu_mem_point){gpu->mem[i].time_ns, now};
        if (now > s->peak)
            s->peak = now;
        s->final = now;
    }
    for (size_t i = 1; i < gpu->nmemseries; i++) /* few devices: insertion sort */
        for (size_t k = i; k > 0 && gpu->memseries[k - 1].device > gpu->memseries[k].device;
             k--) {
            struct opp_gpu_memseries t = gpu->memseries[k];
            gpu->memseries[k] = gpu->memseries[k - 1];
            gpu->memseries[k - 1] = t;
        }
    return 0;
}

int opp_loader_gpu_memory(struct opp_gpu *gpu)
{
    return gpu_memory_sizes(gpu) || gpu_memory_series(gpu) ? -1 : 0;
}
