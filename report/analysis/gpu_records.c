/* The trace reader's callbacks for GPU records (trace format 2, common/gpu.h):
 * strings, ops (kernels, copies, memsets, syncs, overheads) and their launch
 * configurations, memory records, devices, external correlation, code
 * stacks and modules, summary GPU rows. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/loader.h"
#include "analysis/symbolize.h"

static uint8_t clamp_u8(uint64_t v)
{
    return v > UINT8_MAX ? UINT8_MAX : (uint8_t)v;
}

static int64_t clamp_i64(uint64_t v)
{
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

static int gpu_string(struct opp_loader *ld, uint32_t pi, const struct opp_gpu_rec *g)
{
    char text[OPP_NAME_STR_MAX + 1];
    uint32_t n = g->slen > OPP_NAME_STR_MAX ? OPP_NAME_STR_MAX : g->slen;
    memcpy(text, g->str, n);
    text[n] = 0; /* a NUL inside ends the name */
    uint32_t id = opp_loader_intern(ld, text);
    if (id == UINT32_MAX)
        return opp_loader_fail(ld, ENOMEM);
    struct opp_model_index *ix = ld->m->index;
    uint64_t key = (uint64_t)pi << 32 | (uint32_t)g->f[0];
    struct gpu_str_ent *e;
    HASH_FIND(hh, ix->gpu_strs, &key, sizeof key, e);
    if (!e) {
        e = malloc(sizeof *e);
        if (!e)
            return opp_loader_fail(ld, ENOMEM);
        e->key = key;
        if (OPP_HASH_ADD(ix->gpu_strs, key, sizeof key, e)) {
            free(e);
            return opp_loader_fail(ld, ENOMEM);
        }
    }
    e->str = id; /* a later definition replaces an earlier one */
    return 0;
}

/* CUPTI's overhead kinds (1, then 1 << 16 .. 8 << 16) as 1..9; 0 unknown. */
static uint8_t overhead_kind(uint64_t k)
{
    switch (k) {
    case 1:
        return 1;
    default:
        return !(k & 0xffff) && k >> 16 >= 1 && k >> 16 <= 8 ? (uint8_t)(1 + (k >> 16)) : 0;
    }
}

void opp_gpu_op_decode(const struct opp_gpu_rec *g, uint32_t pi, struct opp_gpu_op *op,
                       struct opp_gpu_launch *l)
{
    const uint64_t *f = g->f;
    *op = (struct opp_gpu_op){
        .start_ns = f[OPP_GF_START],
        .end_ns = f[OPP_GF_END] > f[OPP_GF_START] ? f[OPP_GF_END] : f[OPP_GF_START],
        .corr = opp_corr_id(f[OPP_GF_CORRELATION]),
        .proc = pi,
        .device = opp_clamp_u32(f[OPP_GF_DEVICE]),
        .stream = opp_clamp_u32(f[OPP_GF_STREAM]),
        .thread = OPP_GPU_NONE,
        .event = OPP_GPU_NONE,
        .launch = OPP_GPU_NONE,
        .name = OPP_GPU_NONE,
        .type = (uint8_t)g->type,
    };
    memset(l, 0, sizeof *l);
    switch (g->type) {
    case OPP_GPU_KERNEL:
        for (int i = 0; i < 3; i++) {
            l->grid[i] = opp_clamp_u32(f[OPP_GF_K_GRID_X + i]);
            l->block[i] = opp_clamp_u32(f[OPP_GF_K_BLOCK_X + i]);
        }
        l->regs = opp_clamp_u32(f[OPP_GF_K_REGS]);
        l->static_smem = opp_clamp_u32(f[OPP_GF_K_STATIC_SMEM]);
        l->dynamic_smem = opp_clamp_u32(f[OPP_GF_K_DYNAMIC_SMEM]);
        op->name = opp_clamp_u32(f[OPP_GF_K_NAME]); /* the process's id */
        break;
    case OPP_GPU_MEMCPY:
        op->bytes = f[OPP_GF_C_BYTES];
        op->kind = clamp_u8(f[OPP_GF_C_KIND]);
        op->src_kind = clamp_u8(f[OPP_GF_C_SRC_KIND]);
        op->dst_kind = clamp_u8(f[OPP_GF_C_DST_KIND]);
        break;
    case OPP_GPU_MEMSET:
        op->bytes = f[OPP_GF_S_BYTES];
        op->kind = clamp_u8(f[OPP_GF_S_MEM_KIND]);
        break;
    case OPP_GPU_SYNC:
        op->kind = clamp_u8(f[OPP_GF_Y_TYPE]);
        break;
    case OPP_GPU_OVERHEAD:
        op->kind = overhead_kind(f[OPP_GF_O_KIND]);
        break;
    }
}

static int gpu_op(struct opp_loader *ld, uint32_t pi, const struct opp_gpu_rec *g)
{
    struct opp_gpu *gpu = &ld->m->gpu;
    if (opp_loader_grow((void **)&gpu->ops, &ld->ops_cap, gpu->nops + 1, sizeof *gpu->ops))
        return opp_loader_fail(ld, ENOMEM);
    struct opp_gpu_op op;
    struct opp_gpu_launch l;
    opp_gpu_op_decode(g, pi, &op, &l);
    op.start_ns = opp_loader_shifted(ld, op.start_ns);
    op.end_ns = opp_loader_shifted(ld, op.end_ns);
    if (g->type == OPP_GPU_KERNEL) {
        if (opp_loader_grow((void **)&gpu->launches, &ld->launches_cap, gpu->nlaunches + 1,
                            sizeof *gpu->launches))
            return opp_loader_fail(ld, ENOMEM);
        gpu->launches[gpu->nlaunches] = l;
        op.launch = (uint32_t)gpu->nlaunches++;
    }
    gpu->ops[gpu->nops++] = op;
    return 0;
}

static int gpu_memory(struct opp_loader *ld, uint32_t pi, const struct opp_gpu_rec *g)
{
    struct opp_gpu *gpu = &ld->m->gpu;
    if (opp_loader_grow((void **)&gpu->mem, &ld->mem_cap, gpu->nmem + 1, sizeof *gpu->mem))
        return opp_loader_fail(ld, ENOMEM);
    const uint64_t *f = g->f;
    struct opp_gpu_mem *r = &gpu->mem[gpu->nmem++];
    memset(r, 0, sizeof *r);
    r->time_ns = opp_loader_shifted(ld, f[OPP_GF_START]);
    r->address = f[OPP_GF_M_ADDRESS];
    r->corr = opp_corr_id(f[OPP_GF_CORRELATION]);
    r->proc = pi;
    r->device = opp_clamp_u32(f[OPP_GF_DEVICE]);
    r->thread = r->event = OPP_GPU_NONE;
    r->op = clamp_u8(f[OPP_GF_M_OP]);
    r->mem_kind = clamp_u8(f[OPP_GF_M_MEM_KIND]);
    int64_t bytes = clamp_i64(f[OPP_GF_M_BYTES]);
    r->bytes = r->op == OPP_GPU_MEM_ALLOC ? bytes : r->op == OPP_GPU_MEM_FREE ? -bytes : 0;
    return 0;
}

static int gpu_device(struct opp_loader *ld, uint32_t pi, const struct opp_gpu_rec *g)
{
    struct opp_gpu *gpu = &ld->m->gpu;
    const uint64_t *f = g->f;
    uint32_t id = opp_clamp_u32(f[OPP_GF_V_ID]);
    /* every process describes it again: opp_loader_sort_devices keeps the
     * first (no search here: a trace may hold very many) */
    if (opp_loader_grow((void **)&gpu->devices, &ld->devices_cap, gpu->ndevices + 1,
                        sizeof *gpu->devices))
        return opp_loader_fail(ld, ENOMEM);
    gpu->devices[gpu->ndevices++] = (struct opp_gpu_device){
        .id = id,
        .name = opp_clamp_u32(f[OPP_GF_V_NAME]), /* the process's id, for now */
        .proc = pi,
        .cc_major = opp_clamp_u32(f[OPP_GF_V_CC_MAJOR]),
        .cc_minor = opp_clamp_u32(f[OPP_GF_V_CC_MINOR]),
        .sms = opp_clamp_u32(f[OPP_GF_V_SMS]),
        .threads_per_sm = opp_clamp_u32(f[OPP_GF_V_THREADS_PER_SM]),
        .regs_per_sm = opp_clamp_u32(f[OPP_GF_V_REGS_PER_SM]),
        .smem_per_sm = opp_clamp_u32(f[OPP_GF_V_SMEM_PER_SM]),
        .blocks_per_sm = opp_clamp_u32(f[OPP_GF_V_BLOCKS_PER_SM]),
        .warps_per_sm = opp_clamp_u32(f[OPP_GF_V_WARPS_PER_SM]),
        .threads_per_block = opp_clamp_u32(f[OPP_GF_V_THREADS_PER_BLOCK]),
        .global_mem = f[OPP_GF_V_GLOBAL_MEM],
    };
    return 0;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

/* A summary GPU row: one op (start 0, end its total time) standing for
 * its count, named as the records it adds up would be. */
int opp_loader_on_sgpu(void *ctx, uint32_t proc, const struct opp_tr_sgpu *r)
{
    struct opp_loader *ld = ctx;
    struct opp_model *m = ld->m;
    struct opp_process *p = opp_loader_proc(m, proc + ld->base);
    if (!p)
        return opp_loader_fail(ld, EPROTO);
    struct opp_gpu_rec g = {.type = r->type, .nfields = OPP_GPU_FIELDS_MAX};
    g.f[OPP_GF_END] = r->dur_ns;
    g.f[OPP_GF_DEVICE] = r->device;
    g.f[OPP_GF_STREAM] = r->stream;
    switch (r->type) {
    case OPP_GPU_KERNEL:
        g.f[OPP_GF_K_NAME] = r->name;
        break;
    case OPP_GPU_MEMCPY:
        g.f[OPP_GF_C_BYTES] = r->bytes;
        g.f[OPP_GF_C_KIND] = r->kind;
        g.f[OPP_GF_C_SRC_KIND] = r->src_kind;
        g.f[OPP_GF_C_DST_KIND] = r->dst_kind;
        break;
    case OPP_GPU_MEMSET:
        g.f[OPP_GF_S_BYTES] = r->bytes;
        g.f[OPP_GF_S_MEM_KIND] = r->kind;
        break;
    case OPP_GPU_SYNC:
        g.f[OPP_GF_Y_TYPE] = r->kind;
        break;
    default:
        g.f[OPP_GF_O_KIND] = r->kind;
        break;
    }
    struct opp_gpu *gpu = &m->gpu;
    size_t first = gpu->nsum;
    if (gpu_op(ld, (uint32_t)(p - m->procs), &g) || ld->failed)
        return 1;
    struct opp_gpu_sum *st = reallocarray(gpu->sum, gpu->nops, sizeof *st);
    if (!st)
        return opp_loader_fail(ld, ENOMEM);
    gpu->sum = st;
    for (size_t i = first; i + 1 < gpu->nops; i++) /* ops of a full trace read before */
        st[i] = (struct opp_gpu_sum){1, 0};
    st[gpu->nops - 1] = (struct opp_gpu_sum){r->count, r->window};
    gpu->nsum = gpu->nops;
    struct opp_gpu_op *op = &gpu->ops[gpu->nops - 1];
    op->start_ns = 0;
    op->end_ns = r->dur_ns;
    m->gpu.records += r->count;
    m->summary = 1;
    return 0;
}

int opp_loader_on_gpu(void *ctx, uint32_t proc, const struct opp_gpu_rec *g)
{
    struct opp_loader *ld = ctx;
    struct opp_model *m = ld->m;
    struct opp_process *p = opp_loader_proc(m, proc + ld->base);
    if (!p)
        return opp_loader_fail(ld, EPROTO); /* the reader only passes declared processes */
    uint32_t pi = (uint32_t)(p - m->procs);
    m->gpu.records += opp_gpu_is_activity(g->type);
    switch (g->type) {
    case OPP_GPU_STRING:
        return gpu_string(ld, pi, g);
    case OPP_GPU_KERNEL:
    case OPP_GPU_MEMCPY:
    case OPP_GPU_MEMSET:
    case OPP_GPU_SYNC:
    case OPP_GPU_OVERHEAD:
        return gpu_op(ld, pi, g);
    case OPP_GPU_MEMORY:
        return gpu_memory(ld, pi, g);
    case OPP_GPU_EXTCORR: {
        struct opp_gpu *gpu = &m->gpu;
        if (opp_loader_grow((void **)&gpu->extcorr, &ld->extcorr_cap, gpu->nextcorr + 1,
                            sizeof *gpu->extcorr))
            return opp_loader_fail(ld, ENOMEM);
        gpu->extcorr[gpu->nextcorr++] = (struct opp_gpu_extcorr){
            .external = g->f[OPP_GF_X_EXTERNAL],
            .proc = pi,
            .kind = opp_clamp_u32(g->f[OPP_GF_X_KIND]),
            .corr = opp_corr_id(g->f[OPP_GF_X_CORRELATION]),
        };
        return 0;
    }
    case OPP_GPU_DROPPED: /* each counts what was lost since the previous one */
        m->gpu.dropped_cupti = add_sat(m->gpu.dropped_cupti, g->f[OPP_GF_D_CUPTI]);
        m->gpu.dropped_ours = add_sat(m->gpu.dropped_ours, g->f[OPP_GF_D_OURS]);
        m->gpu.clients_refused = add_sat(m->gpu.clients_refused, g->f[OPP_GF_D_CLIENTS]);
        m->gpu.buffers_taken = add_sat(m->gpu.buffers_taken, g->f[OPP_GF_D_TAKEN]);
        m->gpu.unfinished = add_sat(m->gpu.unfinished, g->f[OPP_GF_D_UNFINISHED]);
        m->gpu.yielded = add_sat(m->gpu.yielded, g->f[OPP_GF_D_YIELDED]);
        m->gpu.retaken = add_sat(m->gpu.retaken, g->f[OPP_GF_D_RETAKEN]);
        m->gpu.summary_lost = add_sat(m->gpu.summary_lost, g->f[OPP_GF_D_SUMMARY_LOST]);
        return 0;
    case OPP_GPU_DEVICE:
        return gpu_device(ld, pi, g);
    case OPP_GPU_STACK:
    case OPP_GPU_MODULE: {
        uint32_t path = g->type == OPP_GPU_MODULE
                            ? opp_loader_gpu_str(m, pi, (uint32_t)g->f[OPP_GF_MD_PATH])
                            : UINT32_MAX;
        /* Python frames: their names (a frame whose string is unknown: "?") */
        const char *py[OPP_GPU_FIELDS_MAX] = {0};
        uint32_t py_sid[OPP_GPU_FIELDS_MAX];
        int any = 0;
        for (uint32_t i = OPP_GF_ST_PC0; g->type == OPP_GPU_STACK && i < g->nfields; i++)
            if ((g->f[i] & OPP_STACK_PY_MASK) == OPP_STACK_PY) {
                uint32_t sid = opp_loader_gpu_str(m, pi, (uint32_t)g->f[i]);
                py[i] = sid == UINT32_MAX ? "?" : opp_model_str(m, sid);
                py_sid[i] = sid;
                any = 1;
            }
        return opp_code_add(&m->code, pi, g, path == UINT32_MAX ? "" : opp_model_str(m, path),
                            any ? py : NULL, py_sid)
                   ? opp_loader_fail(ld, ENOMEM)
                   : 0;
    }
    default:
        m->gpu.skipped++; /* a newer writer's: readers skip what they do not know */
        return 0;
    }
}

/* Our string id of process pi's string id, or UINT32_MAX. */
uint32_t opp_loader_gpu_str(const struct opp_model *m, uint32_t pi, uint32_t id)
{
    uint64_t key = (uint64_t)pi << 32 | id;
    struct gpu_str_ent *e;
    HASH_FIND(hh, m->index->gpu_strs, &key, sizeof key, e);
    return e ? e->str : UINT32_MAX;
}

static int cmp_device(const void *pa, const void *pb)
{
    const struct opp_gpu_device *a = pa, *b = pb;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* By id, then process (processes are numbered in the order read). */
static int cmp_device_first(const void *pa, const void *pb)
{
    const struct opp_gpu_device *a = pa, *b = pb;
    int c = cmp_device(pa, pb);
    return c ? c : a->proc < b->proc ? -1 : a->proc > b->proc;
}

const struct opp_gpu_device *opp_gpu_device_find(const struct opp_model *m, uint32_t id)
{
    struct opp_gpu_device key = {.id = id};
    if (!m->gpu.ndevices)
        return NULL;
    return bsearch(&key, m->gpu.devices, m->gpu.ndevices, sizeof key, cmp_device);
}

void opp_loader_sort_devices(struct opp_gpu *gpu)
{
    if (!gpu->ndevices)
        return;
    qsort(gpu->devices, gpu->ndevices, sizeof *gpu->devices, cmp_device_first);
    size_t n = 1; /* one per id: the first process's description */
    for (size_t i = 1; i < gpu->ndevices; i++)
        if (gpu->devices[i].id != gpu->devices[n - 1].id)
            gpu->devices[n++] = gpu->devices[i];
    gpu->ndevices = n;
}
