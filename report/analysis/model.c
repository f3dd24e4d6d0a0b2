/* Loads a trace into memory (see model.h): a visitor of opp_trace_read that
 * interns names and appends each event to its thread, then the call trees. */
#include "analysis/model.h"

#ifndef _GNU_SOURCE /* qsort_r */
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* uthash reports running out of memory through this flag instead of exiting;
 * every function that adds to a table declares `int hash_oom = 0`. */
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(elt) (hash_oom = 1)
#include <uthash.h>

#include "analysis/demangle.h"
#include "analysis/symbolize.h"
#include "analysis/tree.h"
#include "info.h"
#include "ops.h"

struct str_ent {
    uint32_t id;
    UT_hash_handle hh; /* key: the string itself (model->strs[id]) */
};

struct proc_ent {
    uint32_t proc; /* key: serial in the trace */
    uint32_t index;
    UT_hash_handle hh;
};

struct thread_ent {
    uint64_t key; /* proc serial << 32 | tid */
    uint32_t index;
    UT_hash_handle hh;
};

/* A process's GPU string id -> our string id. */
struct gpu_str_ent {
    uint64_t key; /* proc index << 32 | the process's id */
    uint32_t str;
    UT_hash_handle hh;
};

struct opp_model_index {
    struct str_ent *strs;
    struct proc_ent *procs;
    struct thread_ent *threads;
    struct gpu_str_ent *gpu_strs;
    uint64_t last_key; /* events come in runs of one thread */
    uint32_t last_thread;
    int have_last;
};

struct loader {
    struct opp_model *m;
    /* Several traces in one model: this file's process serials are offset
     * by base, its times moved by shift onto the first file's clock. */
    uint32_t base;
    int64_t shift;
    int have_ref, have_shift;
    int64_t ref; /* the first file's realtime - monotonic */
    size_t procs_cap, threads_cap, strs_cap;
    size_t ops_cap, launches_cap, mem_cap, devices_cap, extcorr_cap;
    int failed; /* errno of the first failure, which stops the reader */
};

/* A time of this file on the first file's clock. */
static uint64_t shifted(const struct loader *ld, uint64_t t)
{
    return opp_clock_shift(t, ld->shift);
}

/* Grow *arr (of elements of size sz) to hold at least need; 0 or -1. */
static int grow(void **arr, size_t *cap, size_t need, size_t sz)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *p = reallocarray(*arr, n, sz);
    if (!p)
        return -1;
    *arr = p;
    *cap = n;
    return 0;
}

/* The id of s, interned; UINT32_MAX when out of memory. */
static uint32_t intern(struct loader *ld, const char *s)
{
    struct opp_model *m = ld->m;
    struct opp_model_index *ix = m->index;
    struct str_ent *e;
    size_t len = strlen(s);
    HASH_FIND(hh, ix->strs, s, len, e);
    if (e)
        return e->id;
    char *copy = strdup(s);
    e = malloc(sizeof *e);
    if (!copy || !e || grow((void **)&m->strs, &ld->strs_cap, m->nstrs + 1u, sizeof *m->strs)) {
        free(copy);
        free(e);
        return UINT32_MAX;
    }
    e->id = m->nstrs;
    m->strs[m->nstrs++] = copy;
    int hash_oom = 0;
    HASH_ADD_KEYPTR(hh, ix->strs, copy, len, e);
    if (hash_oom) {
        free(e);
        return UINT32_MAX; /* copy stays owned by m->strs */
    }
    return e->id;
}

static struct opp_process *find_proc(const struct opp_model *m, uint32_t proc)
{
    struct proc_ent *e;
    HASH_FIND(hh, m->index->procs, &proc, sizeof proc, e);
    return e ? &m->procs[e->index] : NULL;
}

static int fail(struct loader *ld, int err)
{
    if (!ld->failed)
        ld->failed = err;
    return 1; /* stop reading */
}

/* The thread (proc serial, tid), created on first sight; NULL when out of
 * memory or the process is unknown. */
static struct opp_thread *get_thread(struct loader *ld, uint32_t proc, uint32_t tid)
{
    struct opp_model *m = ld->m;
    struct opp_model_index *ix = m->index;
    uint64_t key = (uint64_t)proc << 32 | tid;
    if (ix->have_last && ix->last_key == key)
        return &m->threads[ix->last_thread];
    struct thread_ent *e;
    HASH_FIND(hh, ix->threads, &key, sizeof key, e);
    if (!e) {
        struct opp_process *p = find_proc(m, proc);
        if (!p)
            return NULL;
        char *name = strdup("");
        e = malloc(sizeof *e);
        if (!name || !e ||
            grow((void **)&m->threads, &ld->threads_cap, m->nthreads + 1, sizeof *m->threads)) {
            free(name);
            free(e);
            return NULL;
        }
        e->key = key;
        e->index = (uint32_t)m->nthreads;
        int hash_oom = 0;
        HASH_ADD(hh, ix->threads, key, sizeof key, e);
        if (hash_oom) {
            free(name);
            free(e);
            return NULL;
        }
        struct opp_thread *t = &m->threads[m->nthreads++];
        memset(t, 0, sizeof *t);
        t->proc = (uint32_t)(p - m->procs);
        t->tid = tid;
        t->name = name;
    }
    ix->have_last = 1;
    ix->last_key = key;
    ix->last_thread = e->index;
    return &m->threads[e->index];
}

static int on_process(void *ctx, const struct opp_tr_process *tp)
{
    struct loader *ld = ctx;
    struct opp_model *m = ld->m;
    if (!ld->have_shift) { /* the file's first process pairs its two clocks */
        int64_t off = opp_clock_offset(tp->start_real_ns, tp->start_ns);
        if (!ld->have_ref) {
            ld->ref = off;
            ld->have_ref = 1;
        }
        ld->shift = off - ld->ref;
        ld->have_shift = 1;
    }
    if (grow((void **)&m->procs, &ld->procs_cap, m->nprocs + 1, sizeof *m->procs))
        return fail(ld, ENOMEM);
    struct opp_process *p = &m->procs[m->nprocs];
    memset(p, 0, sizeof *p);
    p->proc = tp->proc + ld->base;
    p->pid = tp->pid;
    p->ppid = tp->ppid;
    p->parent_proc = tp->parent_proc && tp->parent_proc != UINT32_MAX ? tp->parent_proc + ld->base
                                                                     : tp->parent_proc;
    p->clock = tp->clock;
    p->start_ns = shifted(ld, tp->start_ns);
    p->start_real_ns = tp->start_real_ns;
    p->rank = p->world_size = p->local_rank = -1;
    p->exe = strdup(tp->exe);
    p->argv = calloc(tp->argc + 1u, sizeof *p->argv);
    struct proc_ent *e = malloc(sizeof *e);
    /* Counted now so that opp_model_free releases whatever was allocated. */
    m->nprocs++;
    if (!p->exe || !p->argv || !e) {
        free(e);
        return fail(ld, ENOMEM);
    }
    for (; p->argc < tp->argc; p->argc++) {
        p->argv[p->argc] = strdup(tp->argv[p->argc]);
        if (!p->argv[p->argc]) {
            free(e);
            return fail(ld, ENOMEM);
        }
    }
    e->proc = p->proc;
    e->index = (uint32_t)(m->nprocs - 1);
    int hash_oom = 0;
    HASH_ADD(hh, m->index->procs, proc, sizeof e->proc, e);
    if (hash_oom) {
        free(e);
        return fail(ld, ENOMEM);
    }
    return 0;
}

const char *opp_process_info(const struct opp_process *p, const char *key)
{
    for (uint32_t i = 0; i < p->ninfo; i++)
        if (!strcmp(p->info_keys[i], key))
            return p->info_values[i];
    return NULL;
}

static int on_info(void *ctx, uint32_t proc, uint32_t count, const char *const *keys,
                   const char *const *values)
{
    struct loader *ld = ctx;
    struct opp_process *p = find_proc(ld->m, proc + ld->base);
    if (!p || p->ninfo)
        return 0; /* one set per process instance: the first */
    p->info_keys = calloc(count + 1u, sizeof *p->info_keys);
    p->info_values = calloc(count + 1u, sizeof *p->info_values);
    if (!p->info_keys || !p->info_values)
        return fail(ld, ENOMEM);
    for (; p->ninfo < count; p->ninfo++) {
        p->info_keys[p->ninfo] = strdup(keys[p->ninfo]);
        p->info_values[p->ninfo] = strdup(values[p->ninfo]);
        if (!p->info_keys[p->ninfo] || !p->info_values[p->ninfo]) {
            p->ninfo++; /* freed with the model */
            return fail(ld, ENOMEM);
        }
    }
    static const char *const rank[] = OPP_INFO_RANK_KEYS, *const world[] = OPP_INFO_WORLD_KEYS,
                             *const local[] = OPP_INFO_LOCAL_KEYS;
    p->rank = opp_info_number(count, keys, values, rank);
    p->world_size = opp_info_number(count, keys, values, world);
    p->local_rank = opp_info_number(count, keys, values, local);
    return 0;
}

static int on_funcs(void *ctx, uint32_t proc, uint32_t count, const struct opp_tr_func *f)
{
    struct loader *ld = ctx;
    struct opp_process *p = find_proc(ld->m, proc + ld->base);
    if (!p)
        return fail(ld, EPROTO); /* the reader only passes declared processes */
    p->funcs = calloc(count ? count : 1, sizeof *p->funcs);
    if (!p->funcs)
        return fail(ld, ENOMEM);
    for (uint32_t i = 0; i < count; i++) {
        p->funcs[i].kind = f[i].kind;
        p->funcs[i].dtype = f[i].dtype;
        p->funcs[i].name = intern(ld, f[i].name);
        p->funcs[i].lib = intern(ld, f[i].lib);
        if (p->funcs[i].name == UINT32_MAX || p->funcs[i].lib == UINT32_MAX)
            return fail(ld, ENOMEM);
        p->nfuncs = i + 1;
    }
    return 0;
}

static int on_thread(void *ctx, uint32_t proc, uint32_t tid, const char *name)
{
    struct loader *ld = ctx;
    struct opp_thread *t = get_thread(ld, proc + ld->base, tid);
    char *copy = strdup(name);
    if (!t || !copy) {
        free(copy);
        return fail(ld, ENOMEM);
    }
    free(t->name);
    t->name = copy; /* the latest name wins */
    return 0;
}

static int on_event(void *ctx, const struct opp_tr_event *te)
{
    struct loader *ld = ctx;
    struct opp_thread *t = get_thread(ld, te->proc + ld->base, te->tid);
    if (!t)
        return fail(ld, ENOMEM);
    const struct opp_process *p = &ld->m->procs[t->proc];
    if (te->fn >= p->nfuncs)
        return fail(ld, EPROTO); /* the reader checks this: never happens */
    if (t->nevents >= OPP_NO_PARENT - 1 || t->nargs + te->nargs > UINT32_MAX)
        return fail(ld, EOVERFLOW);
    if (grow((void **)&t->events, &t->cap, t->nevents + 1, sizeof *t->events) ||
        grow((void **)&t->args, &t->args_cap, t->nargs + te->nargs, sizeof *t->args))
        return fail(ld, ENOMEM);
    struct opp_event *e = &t->events[t->nevents++];
    e->begin_ns = shifted(ld, te->begin_ns);
    e->end_ns = shifted(ld, te->end_ns);
    e->self_ns = 0;
    e->parent = OPP_NO_PARENT;
    e->name = p->funcs[te->fn].name;
    e->fn = te->fn;
    e->args = (uint32_t)t->nargs;
    e->depth = (uint16_t)te->depth;
    e->flags = (uint8_t)te->flags;
    e->nargs = (uint8_t)te->nargs;
    e->stack = te->stack;
    if (te->nargs) {
        memcpy(t->args + t->nargs, te->args, te->nargs * sizeof *te->args);
        t->nargs += te->nargs;
    }
    ld->m->events++;
    return 0;
}

/* A summary node: an event of its process's summary thread (tid 0), in
 * the order written (parents first), standing for its calls. */
static int on_snode(void *ctx, uint32_t proc, const struct opp_tr_snode *n)
{
    struct loader *ld = ctx;
    struct opp_thread *t = get_thread(ld, proc + ld->base, 0);
    if (!t)
        return fail(ld, ENOMEM);
    const struct opp_process *p = &ld->m->procs[t->proc];
    if (n->fn >= p->nfuncs || n->serial != t->nevents + 1 || (t->nevents && !t->stat))
        return fail(ld, EPROTO); /* the reader checks the order: never happens */
    if (t->nevents >= OPP_NO_PARENT - 1 || t->nargs + n->nargs > UINT32_MAX)
        return fail(ld, EOVERFLOW);
    size_t cap = t->cap;
    if (grow((void **)&t->events, &t->cap, t->nevents + 1, sizeof *t->events) ||
        grow((void **)&t->args, &t->args_cap, t->nargs + n->nargs, sizeof *t->args))
        return fail(ld, ENOMEM);
    if (!t->stat || t->cap != cap) {
        struct opp_sum_stat *st = reallocarray(t->stat, t->cap, sizeof *st);
        if (!st)
            return fail(ld, ENOMEM);
        t->stat = st;
    }
    struct opp_event *e = &t->events[t->nevents];
    e->begin_ns = 0;
    e->end_ns = n->total_ns;
    e->self_ns = n->self_ns;
    e->parent = n->parent ? n->parent - 1 : OPP_NO_PARENT;
    e->name = p->funcs[n->fn].name;
    e->fn = n->fn;
    e->args = (uint32_t)t->nargs;
    e->depth = n->parent ? (uint16_t)(t->events[n->parent - 1].depth + 1) : 0;
    e->flags = 0;
    e->nargs = (uint8_t)n->nargs;
    e->stack = 0;
    if (n->nargs) {
        memcpy(t->args + t->nargs, n->args, n->nargs * sizeof *n->args);
        t->nargs += n->nargs;
    }
    t->stat[t->nevents++] = (struct opp_sum_stat){n->count, n->open, n->window, n->self_cuda_ns,
                                                  n->self_mem};
    ld->m->events += n->count;
    ld->m->open_events += n->open;
    ld->m->summary = 1;
    return 0;
}

/* DROPPED chunks add up: each counts records lost since the previous one. */
static int on_dropped(void *ctx, uint32_t proc, uint32_t tid, uint64_t count)
{
    struct loader *ld = ctx;
    struct opp_thread *t = get_thread(ld, proc + ld->base, tid);
    if (!t)
        return fail(ld, ENOMEM);
    t->dropped += count;
    ld->m->dropped += count;
    return 0;
}

static int on_process_end(void *ctx, uint32_t proc, uint32_t how, uint64_t end_ns)
{
    struct loader *ld = ctx;
    struct opp_process *p = find_proc(ld->m, proc + ld->base);
    if (!p)
        return fail(ld, EPROTO);
    p->end_how = how;
    p->end_ns = shifted(ld, end_ns);
    return 0;
}

/* ---- GPU records ----
 * While loading, an op's and a device's name hold the process's string id
 * (STRING records may come after the records that use them); gpu_finish
 * turns them into our string ids once the whole trace is read. */

static uint32_t clamp_u32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* A correlation id as CUPTI gives them (32 bits, never all ones); 0, the
 * unknown one, for anything else. */
static uint32_t corr_id(uint64_t v)
{
    return v < UINT32_MAX ? (uint32_t)v : 0;
}

static uint8_t clamp_u8(uint64_t v)
{
    return v > UINT8_MAX ? UINT8_MAX : (uint8_t)v;
}

static int64_t clamp_i64(uint64_t v)
{
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

static int gpu_string(struct loader *ld, uint32_t pi, const struct opp_gpu_rec *g)
{
    char text[OPP_NAME_STR_MAX + 1];
    uint32_t n = g->slen > OPP_NAME_STR_MAX ? OPP_NAME_STR_MAX : g->slen;
    memcpy(text, g->str, n);
    text[n] = 0; /* a NUL inside ends the name */
    uint32_t id = intern(ld, text);
    if (id == UINT32_MAX)
        return fail(ld, ENOMEM);
    struct opp_model_index *ix = ld->m->index;
    uint64_t key = (uint64_t)pi << 32 | (uint32_t)g->f[0];
    struct gpu_str_ent *e;
    HASH_FIND(hh, ix->gpu_strs, &key, sizeof key, e);
    if (!e) {
        e = malloc(sizeof *e);
        if (!e)
            return fail(ld, ENOMEM);
        e->key = key;
        int hash_oom = 0;
        HASH_ADD(hh, ix->gpu_strs, key, sizeof key, e);
        if (hash_oom) {
            free(e);
            return fail(ld, ENOMEM);
        }
    }
    e->str = id; /* a later definition replaces an earlier one */
    return 0;
}

/* CUPTI's overhead kinds (1, 1 << 16, 2 << 16, 3 << 16) as 1..4. */
static uint8_t overhead_kind(uint64_t k)
{
    switch (k) {
    case 1:
        return 1;
    case 1u << 16:
        return 2;
    case 2u << 16:
        return 3;
    case 3u << 16:
        return 4;
    default:
        return 0;
    }
}

void opp_gpu_op_decode(const struct opp_gpu_rec *g, uint32_t pi, struct opp_gpu_op *op,
                       struct opp_gpu_launch *l)
{
    const uint64_t *f = g->f;
    *op = (struct opp_gpu_op){
        .start_ns = f[OPP_GF_START],
        .end_ns = f[OPP_GF_END] > f[OPP_GF_START] ? f[OPP_GF_END] : f[OPP_GF_START],
        .corr = corr_id(f[OPP_GF_CORRELATION]),
        .proc = pi,
        .device = clamp_u32(f[OPP_GF_DEVICE]),
        .stream = clamp_u32(f[OPP_GF_STREAM]),
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
            l->grid[i] = clamp_u32(f[OPP_GF_K_GRID_X + i]);
            l->block[i] = clamp_u32(f[OPP_GF_K_BLOCK_X + i]);
        }
        l->regs = clamp_u32(f[OPP_GF_K_REGS]);
        l->static_smem = clamp_u32(f[OPP_GF_K_STATIC_SMEM]);
        l->dynamic_smem = clamp_u32(f[OPP_GF_K_DYNAMIC_SMEM]);
        op->name = clamp_u32(f[OPP_GF_K_NAME]); /* the process's id */
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

static int gpu_op(struct loader *ld, uint32_t pi, const struct opp_gpu_rec *g)
{
    struct opp_gpu *gpu = &ld->m->gpu;
    if (grow((void **)&gpu->ops, &ld->ops_cap, gpu->nops + 1, sizeof *gpu->ops))
        return fail(ld, ENOMEM);
    struct opp_gpu_op op;
    struct opp_gpu_launch l;
    opp_gpu_op_decode(g, pi, &op, &l);
    op.start_ns = shifted(ld, op.start_ns);
    op.end_ns = shifted(ld, op.end_ns);
    if (g->type == OPP_GPU_KERNEL) {
        if (grow((void **)&gpu->launches, &ld->launches_cap, gpu->nlaunches + 1,
                 sizeof *gpu->launches))
            return fail(ld, ENOMEM);
        gpu->launches[gpu->nlaunches] = l;
        op.launch = (uint32_t)gpu->nlaunches++;
    }
    gpu->ops[gpu->nops++] = op;
    return 0;
}

static int gpu_memory(struct loader *ld, uint32_t pi, const struct opp_gpu_rec *g)
{
    struct opp_gpu *gpu = &ld->m->gpu;
    if (grow((void **)&gpu->mem, &ld->mem_cap, gpu->nmem + 1, sizeof *gpu->mem))
        return fail(ld, ENOMEM);
    const uint64_t *f = g->f;
    struct opp_gpu_mem *r = &gpu->mem[gpu->nmem++];
    memset(r, 0, sizeof *r);
    r->time_ns = shifted(ld, f[OPP_GF_START]);
    r->address = f[OPP_GF_M_ADDRESS];
    r->corr = corr_id(f[OPP_GF_CORRELATION]);
    r->proc = pi;
    r->device = clamp_u32(f[OPP_GF_DEVICE]);
    r->thread = r->event = OPP_GPU_NONE;
    r->op = clamp_u8(f[OPP_GF_M_OP]);
    r->mem_kind = clamp_u8(f[OPP_GF_M_MEM_KIND]);
    int64_t bytes = clamp_i64(f[OPP_GF_M_BYTES]);
    r->bytes = r->op == OPP_GPU_MEM_ALLOC ? bytes : r->op == OPP_GPU_MEM_FREE ? -bytes : 0;
    return 0;
}

static int gpu_device(struct loader *ld, uint32_t pi, const struct opp_gpu_rec *g)
{
    struct opp_gpu *gpu = &ld->m->gpu;
    const uint64_t *f = g->f;
    uint32_t id = clamp_u32(f[OPP_GF_V_ID]);
    for (size_t i = 0; i < gpu->ndevices; i++)
        if (gpu->devices[i].id == id)
            return 0; /* every process describes it again: the first wins */
    if (grow((void **)&gpu->devices, &ld->devices_cap, gpu->ndevices + 1, sizeof *gpu->devices))
        return fail(ld, ENOMEM);
    gpu->devices[gpu->ndevices++] = (struct opp_gpu_device){
        .id = id,
        .name = clamp_u32(f[OPP_GF_V_NAME]), /* the process's id, for now */
        .proc = pi,
        .cc_major = clamp_u32(f[OPP_GF_V_CC_MAJOR]),
        .cc_minor = clamp_u32(f[OPP_GF_V_CC_MINOR]),
        .sms = clamp_u32(f[OPP_GF_V_SMS]),
        .threads_per_sm = clamp_u32(f[OPP_GF_V_THREADS_PER_SM]),
        .regs_per_sm = clamp_u32(f[OPP_GF_V_REGS_PER_SM]),
        .smem_per_sm = clamp_u32(f[OPP_GF_V_SMEM_PER_SM]),
        .blocks_per_sm = clamp_u32(f[OPP_GF_V_BLOCKS_PER_SM]),
        .warps_per_sm = clamp_u32(f[OPP_GF_V_WARPS_PER_SM]),
        .threads_per_block = clamp_u32(f[OPP_GF_V_THREADS_PER_BLOCK]),
        .global_mem = f[OPP_GF_V_GLOBAL_MEM],
    };
    return 0;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

static uint32_t gpu_str_lookup(const struct opp_model *m, uint32_t pi, uint32_t id);

static int gpu_op(struct loader *ld, uint32_t pi, const struct opp_gpu_rec *g);

/* A summary GPU row: one op (start 0, end its total time) standing for
 * its count, named as the records it adds up would be. */
static int on_sgpu(void *ctx, uint32_t proc, const struct opp_tr_sgpu *r)
{
    struct loader *ld = ctx;
    struct opp_model *m = ld->m;
    struct opp_process *p = find_proc(m, proc + ld->base);
    if (!p)
        return fail(ld, EPROTO);
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
        return fail(ld, ENOMEM);
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

static int on_gpu(void *ctx, uint32_t proc, const struct opp_gpu_rec *g)
{
    struct loader *ld = ctx;
    struct opp_model *m = ld->m;
    struct opp_process *p = find_proc(m, proc + ld->base);
    if (!p)
        return fail(ld, EPROTO); /* the reader only passes declared processes */
    uint32_t pi = (uint32_t)(p - m->procs);
    m->gpu.records++;
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
        if (grow((void **)&gpu->extcorr, &ld->extcorr_cap, gpu->nextcorr + 1,
                 sizeof *gpu->extcorr))
            return fail(ld, ENOMEM);
        gpu->extcorr[gpu->nextcorr++] = (struct opp_gpu_extcorr){
            .external = g->f[OPP_GF_X_EXTERNAL],
            .proc = pi,
            .kind = clamp_u32(g->f[OPP_GF_X_KIND]),
            .corr = corr_id(g->f[OPP_GF_X_CORRELATION]),
        };
        return 0;
    }
    case OPP_GPU_DROPPED: /* each counts what was lost since the previous one */
        m->gpu.dropped_cupti = add_sat(m->gpu.dropped_cupti, g->f[OPP_GF_D_CUPTI]);
        m->gpu.dropped_ours = add_sat(m->gpu.dropped_ours, g->f[OPP_GF_D_OURS]);
        return 0;
    case OPP_GPU_DEVICE:
        return gpu_device(ld, pi, g);
    case OPP_GPU_STACK:
    case OPP_GPU_MODULE: {
        uint32_t path = g->type == OPP_GPU_MODULE
                            ? gpu_str_lookup(m, pi, (uint32_t)g->f[OPP_GF_MD_PATH])
                            : UINT32_MAX;
        return opp_code_add(&m->code, pi, g, path == UINT32_MAX ? "" : opp_model_str(m, path))
                   ? fail(ld, ENOMEM)
                   : 0;
    }
    default:
        m->gpu.skipped++; /* a newer writer's: readers skip what they do not know */
        return 0;
    }
}

/* Our string id of process pi's string id, or UINT32_MAX. */
static uint32_t gpu_str_lookup(const struct opp_model *m, uint32_t pi, uint32_t id)
{
    uint64_t key = (uint64_t)pi << 32 | id;
    struct gpu_str_ent *e;
    HASH_FIND(hh, m->index->gpu_strs, &key, sizeof key, e);
    return e ? e->str : UINT32_MAX;
}

/* Kineto's names (libkineto/src/cupti_strings.cpp). */
static const char *memcpy_kind_name(uint8_t k)
{
    static const char *n[] = {NULL,   "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                              "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
    return k < sizeof n / sizeof n[0] && n[k] ? n[k] : "<unknown>";
}

static const char *memory_kind_name(uint8_t k)
{
    static const char *n[] = {"Unknown", "Pageable",      "Pinned",        "Device",
                              "Array",   "Managed",       "Device Static", "Managed Static"};
    return k < sizeof n / sizeof n[0] ? n[k] : "Unrecognized";
}

static const char *sync_type_name(uint8_t k)
{
    static const char *n[] = {"Unknown Sync", "Event Sync", "Stream Wait Event", "Stream Sync",
                              "Context Sync"};
    return k < sizeof n / sizeof n[0] ? n[k] : "Unknown Sync";
}

static const char *overhead_kind_name(uint8_t k)
{
    static const char *n[] = {"Unknown", "Driver Compiler", "Buffer Flush", "Instrumentation",
                              "Resource"};
    return k < sizeof n / sizeof n[0] ? n[k] : "Unknown";
}

/* The string id of a kernel name: process pi's string id, demangled.
 * dem caches the demangled id of each of our string ids below ndem. */
static uint32_t kernel_name(struct loader *ld, uint32_t pi, uint32_t id, uint32_t *dem,
                            uint32_t ndem)
{
    char buf[64];
    uint32_t raw = id ? gpu_str_lookup(ld->m, pi, id) : UINT32_MAX;
    if (raw == UINT32_MAX) {
        if (id)
            snprintf(buf, sizeof buf, "<unknown kernel %" PRIu32 ">", id);
        else
            snprintf(buf, sizeof buf, "<unnamed kernel>");
        return intern(ld, buf);
    }
    if (raw < ndem && dem[raw] != UINT32_MAX)
        return dem[raw];
    char *d = opp_demangle(ld->m->strs[raw]);
    uint32_t out = d ? intern(ld, d) : raw;
    free(d);
    if (raw < ndem)
        dem[raw] = out;
    return out;
}

void opp_gpu_op_label(const struct opp_gpu_op *op, char *buf, size_t cap)
{
    switch (op->type) {
    case OPP_GPU_MEMCPY:
        snprintf(buf, cap, "Memcpy %s (%s -> %s)", memcpy_kind_name(op->kind),
                 memory_kind_name(op->src_kind), memory_kind_name(op->dst_kind));
        break;
    case OPP_GPU_MEMSET:
        snprintf(buf, cap, "Memset (%s)", memory_kind_name(op->kind));
        break;
    case OPP_GPU_SYNC:
        snprintf(buf, cap, "%s", sync_type_name(op->kind));
        break;
    default:
        snprintf(buf, cap, "Overhead (%s)", overhead_kind_name(op->kind));
        break;
    }
}

static uint32_t op_name(struct loader *ld, const struct opp_gpu_op *op)
{
    char buf[96];
    opp_gpu_op_label(op, buf, sizeof buf);
    return intern(ld, buf);
}

/* Every op's and device's name as our string id. -1 when out of memory. */
static int gpu_names(struct loader *ld)
{
    struct opp_gpu *gpu = &ld->m->gpu;
    uint32_t ndem = ld->m->nstrs;
    uint32_t *dem = malloc((ndem ? ndem : 1) * sizeof *dem);
    /* Non-kernel names depend on (type, kind, src, dst) only: a run of
     * alike copies reuses the last name instead of looking it up again. */
    uint32_t last_key = UINT32_MAX, last_name = UINT32_MAX;
    if (!dem)
        return -1;
    memset(dem, 0xff, (ndem ? ndem : 1) * sizeof *dem);
    for (size_t i = 0; i < gpu->nops; i++) {
        struct opp_gpu_op *op = &gpu->ops[i];
        if (op->type == OPP_GPU_KERNEL) {
            op->name = kernel_name(ld, op->proc, op->name, dem, ndem);
        } else {
            uint32_t key = (uint32_t)op->type << 24 | (uint32_t)op->kind << 16 |
                           (uint32_t)op->src_kind << 8 | op->dst_kind;
            if (key != last_key) {
                last_name = op_name(ld, op);
                last_key = key;
            }
            op->name = last_name;
        }
        if (op->name == UINT32_MAX) {
            free(dem);
            return -1;
        }
    }
    free(dem);
    for (size_t i = 0; i < gpu->ndevices; i++) {
        struct opp_gpu_device *d = &gpu->devices[i];
        uint32_t s = d->name ? gpu_str_lookup(ld->m, d->proc, d->name) : UINT32_MAX;
        d->name = s != UINT32_MAX ? s : intern(ld, "");
        if (d->name == UINT32_MAX)
            return -1;
    }
    return 0;
}

static int cmp_device(const void *pa, const void *pb)
{
    const struct opp_gpu_device *a = pa, *b = pb;
    return a->id < b->id ? -1 : a->id > b->id;
}

const struct opp_gpu_device *opp_gpu_device_find(const struct opp_model *m, uint32_t id)
{
    struct opp_gpu_device key = {.id = id};
    if (!m->gpu.ndevices)
        return NULL;
    return bsearch(&key, m->gpu.devices, m->gpu.ndevices, sizeof key, cmp_device);
}

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

/* An API event that carries a correlation id. */
struct corr_ent {
    uint64_t key; /* proc index << 32 | correlation id */
    uint32_t thread, event;
    uint32_t depth;
};

static int cmp_corr(const void *pa, const void *pb)
{
    const struct corr_ent *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->depth != b->depth) /* a runtime call before the driver calls inside it */
        return a->depth < b->depth ? -1 : 1;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    return a->event < b->event ? -1 : a->event > b->event;
}

/* The outermost API event of process pi with correlation id corr, or NULL. */
static const struct corr_ent *corr_find(const struct corr_ent *c, size_t n, uint32_t pi,
                                        uint32_t corr)
{
    uint64_t key = (uint64_t)pi << 32 | corr;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && c[lo].key == key ? &c[lo] : NULL;
}

/* External correlation: a library call's id (OPP_OPK_EXTID) and, from the
 * EXTCORR records, the correlation ids CUPTI gave the calls made inside it:
 * ext_map by proc index << 32 | correlation id -> id; ext_ev by (proc, id)
 * -> the event. */
struct ext_map {
    uint64_t key, ext;
};
struct ext_ev {
    uint64_t ext;
    uint32_t proc, thread, event;
};

static int cmp_ext_map(const void *pa, const void *pb)
{
    const struct ext_map *a = pa, *b = pb;
    return a->key < b->key ? -1 : a->key > b->key;
}

static int cmp_ext_ev(const void *pa, const void *pb)
{
    const struct ext_ev *a = pa, *b = pb;
    if (a->proc != b->proc)
        return a->proc < b->proc ? -1 : 1;
    return a->ext < b->ext ? -1 : a->ext > b->ext;
}

struct ext_index {
    struct ext_map *map;
    struct ext_ev *ev;
    size_t nmap, nev;
};

/* 0 or -1 (out of memory); empty when no event pushed an id. */
static int ext_index_build(const struct opp_model *m, struct ext_index *x)
{
    size_t cap = 0;
    *x = (struct ext_index){0};
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        for (size_t i = 0; i < t->nevents; i++) {
            const struct opp_event *e = &t->events[i];
            uint64_t id = opp_op_extid(opp_event_func(m, t, e)->kind, opp_event_args(t, e), e->nargs);
            if (!id)
                continue;
            if (grow((void **)&x->ev, &cap, x->nev + 1, sizeof *x->ev))
                return -1;
            x->ev[x->nev++] = (struct ext_ev){id, t->proc, (uint32_t)ti, (uint32_t)i};
        }
    }
    if (!x->nev)
        return 0;
    qsort(x->ev, x->nev, sizeof *x->ev, cmp_ext_ev);
    cap = 0;
    for (size_t i = 0; i < m->gpu.nextcorr; i++) {
        const struct opp_gpu_extcorr *r = &m->gpu.extcorr[i];
        if (r->kind != OPP_EXTCORR_KIND || !r->corr)
            continue;
        if (grow((void **)&x->map, &cap, x->nmap + 1, sizeof *x->map))
            return -1;
        x->map[x->nmap++] = (struct ext_map){(uint64_t)r->proc << 32 | r->corr, r->external};
    }
    if (x->nmap)
        qsort(x->map, x->nmap, sizeof *x->map, cmp_ext_map);
    return 0;
}

/* The library call whose pushed id CUPTI tied correlation id corr of
 * process pi to, as (thread, event); 0 when found. */
static int ext_find(const struct ext_index *x, uint32_t pi, uint32_t corr, uint32_t *thread,
                    uint32_t *event)
{
    if (!x->nmap || !corr)
        return -1;
    struct ext_map k = {(uint64_t)pi << 32 | corr, 0};
    const struct ext_map *mp = bsearch(&k, x->map, x->nmap, sizeof k, cmp_ext_map);
    if (!mp)
        return -1;
    struct ext_ev ke = {mp->ext, pi, 0, 0};
    const struct ext_ev *ev = bsearch(&ke, x->ev, x->nev, sizeof ke, cmp_ext_ev);
    if (!ev)
        return -1;
    *thread = ev->thread;
    *event = ev->event;
    return 0;
}

/* The event a GPU record (process pi, correlation id corr) belongs to: the
 * CUDA call with its correlation id, else the library call that CUPTI's
 * external correlation ties it to. 0 when found; else a record that had an
 * id is counted unattached. */
static int gpu_owner(struct opp_gpu *gpu, const struct corr_ent *c, size_t n,
                     const struct ext_index *x, uint32_t pi, uint32_t corr, uint32_t *thread,
                     uint32_t *event)
{
    const struct corr_ent *ce = corr ? corr_find(c, n, pi, corr) : NULL;
    if (ce) {
        *thread = ce->thread, *event = ce->event;
        return 0;
    }
    if (ext_find(x, pi, corr, thread, event) == 0)
        return 0;
    gpu->unattached += corr != 0;
    return -1;
}

static struct opp_event_gpu *event_gpu(struct opp_thread *t, uint32_t event)
{
    if (!t->gpu)
        t->gpu = calloc(t->nevents, sizeof *t->gpu);
    return t->gpu ? &t->gpu[event] : NULL;
}

/* Attach ops and memory records to their API events, then each event's
 * totals: self plus the children's (children come after their parent in
 * tree order). 0 or -1. */
static int gpu_attach(struct opp_model *m)
{
    struct opp_gpu *gpu = &m->gpu;
    if (!gpu->nops && !gpu->nmem && !m->summary)
        return 0;
    size_t n = 0, cap = 0;
    struct corr_ent *c = NULL;
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        for (size_t i = 0; i < t->nevents; i++) {
            const struct opp_event *e = &t->events[i];
            if (opp_event_func(m, t, e)->kind != OPP_OP_CUDA_API || e->nargs < 2)
                continue;
            uint32_t corr = corr_id(opp_event_args(t, e)[1]);
            if (!corr)
                continue;
            if (grow((void **)&c, &cap, n + 1, sizeof *c)) {
                free(c);
                return -1;
            }
            c[n++] = (struct corr_ent){(uint64_t)t->proc << 32 | corr, (uint32_t)ti,
                                       (uint32_t)i, e->depth};
        }
    }
    if (n)
        qsort(c, n, sizeof *c, cmp_corr);
    /* Work whose API call is not an event (a driver call made inside a
     * runtime call, or one we did not see) goes to the library call that
     * CUPTI's external correlation ties it to. */
    struct ext_index x;
    int rc = ext_index_build(m, &x);
    for (size_t i = 0; i < gpu->nops && !rc; i++) {
        struct opp_gpu_op *op = &gpu->ops[i];
        uint32_t th, ev;
        if (gpu_owner(gpu, c, n, &x, op->proc, op->corr, &th, &ev))
            continue;
        op->thread = th;
        op->event = ev;
        struct opp_event_gpu *eg = event_gpu(&m->threads[th], ev);
        if (!eg)
            rc = -1;
        else if (opp_gpu_op_timed(op))
            eg->self_cuda_ns += opp_gpu_op_dur(op);
    }
    for (size_t i = 0; i < gpu->nmem && !rc; i++) {
        struct opp_gpu_mem *r = &gpu->mem[i];
        uint32_t th, ev;
        if (gpu_owner(gpu, c, n, &x, r->proc, r->corr, &th, &ev))
            continue;
        r->thread = th;
        r->event = ev;
        struct opp_event_gpu *eg = event_gpu(&m->threads[th], ev);
        if (!eg)
            rc = -1;
        else
            eg->self_mem = opp_add_sat(eg->self_mem, r->bytes);
    }
    free(c);
    free(x.map);
    free(x.ev);
    /* A summary node carries its own calls' GPU work and memory. */
    for (size_t ti = 0; ti < m->nthreads && !rc; ti++) {
        struct opp_thread *t = &m->threads[ti];
        for (size_t i = 0; t->stat && i < t->nevents && !rc; i++) {
            if (!t->stat[i].self_cuda_ns && !t->stat[i].self_mem)
                continue;
            struct opp_event_gpu *eg = event_gpu(t, (uint32_t)i);
            if (!eg) {
                rc = -1;
                break;
            }
            eg->self_cuda_ns += t->stat[i].self_cuda_ns;
            eg->self_mem = opp_add_sat(eg->self_mem, t->stat[i].self_mem);
        }
    }
    for (size_t ti = 0; ti < m->nthreads && !rc; ti++) {
        struct opp_thread *t = &m->threads[ti];
        if (!t->gpu)
            continue;
        for (size_t i = 0; i < t->nevents; i++) {
            t->gpu[i].cuda_ns = t->gpu[i].self_cuda_ns;
            t->gpu[i].mem = t->gpu[i].self_mem;
        }
        for (size_t i = t->nevents; i-- > 0;) {
            uint32_t p = t->events[i].parent;
            if (p == OPP_NO_PARENT)
                continue;
            t->gpu[p].cuda_ns += t->gpu[i].cuda_ns;
            t->gpu[p].mem = opp_add_sat(t->gpu[p].mem, t->gpu[i].mem);
        }
    }
    return rc;
}

/* Everything that needs the whole trace: names, memory sizes and series,
 * attachment. 0 or -1 (out of memory). */
/* Events not named after their entry point: NVTX ranges by their message
 * (", seq = N" and what follows it in emit_nvtx's names dropped, so all
 * calls of an op group), prefixed
 * "domain:" outside the default domain; OPP_OPK_SUBNAME operators as
 * "lib::sub", cached per (process, function, sub). */
struct name_ent {
    uint64_t key;
    uint32_t name;
    UT_hash_handle hh;
};

static uint32_t nvtx_name(struct loader *ld, uint32_t pi, uint64_t msg, uint64_t dom)
{
    uint32_t m = gpu_str_lookup(ld->m, pi, clamp_u32(msg));
    uint32_t d = dom ? gpu_str_lookup(ld->m, pi, clamp_u32(dom)) : UINT32_MAX;
    char buf[OPP_NAME_STR_MAX + 300];
    opp_nvtx_label(buf, sizeof buf, d != UINT32_MAX ? ld->m->strs[d] : NULL,
                   m != UINT32_MAX ? ld->m->strs[m] : NULL);
    return intern(ld, buf);
}

static int event_names(struct loader *ld)
{
    struct opp_model *m = ld->m;
    struct name_ent *cache = NULL, *e;
    int rc = 0;
    for (size_t i = 0; i < m->nthreads && !rc; i++) {
        struct opp_thread *t = &m->threads[i];
        const struct opp_process *p = &m->procs[t->proc];
        for (size_t k = 0; k < t->nevents && !rc; k++) {
            struct opp_event *ev = &t->events[k];
            const struct opp_func *f = &p->funcs[ev->fn];
            uint32_t base = opp_kind_base(f->kind);
            const uint64_t *a = t->args + ev->args;
            uint32_t na = opp_op_args(f->kind, &a, ev->nargs);
            uint32_t name;
            if (base == OPP_OP_NVTX && na >= 1) {
                name = nvtx_name(ld, t->proc, a[0], na >= 2 ? a[1] : 0);
                if (name == UINT32_MAX) {
                    rc = -1;
                    break;
                }
                ev->name = name;
                continue;
            }
            const char *sub = opp_op_subname(f->kind, t->args + ev->args, ev->nargs);
            if (!sub)
                continue;
            uint64_t key = (uint64_t)t->proc << 32 | (uint64_t)ev->fn << 8 | a[0];
            HASH_FIND(hh, cache, &key, sizeof key, e);
            if (e) {
                name = e->name;
            } else {
                char buf[OPP_NAME_MAX * 2 + 64];
                snprintf(buf, sizeof buf, "%s::%s", m->strs[f->lib], sub);
                name = intern(ld, buf);
            }
            if (name == UINT32_MAX) {
                rc = -1;
                break;
            }
            ev->name = name;
            if (!e) {
                e = malloc(sizeof *e);
                if (!e) {
                    rc = -1;
                    break;
                }
                e->key = key;
                e->name = name;
                int hash_oom = 0;
                HASH_ADD(hh, cache, key, sizeof key, e);
                if (hash_oom) {
                    free(e);
                    rc = -1;
                }
            }
        }
    }
    OPP_HASH_FREE(cache);
    return rc;
}

static int gpu_finish(struct loader *ld)
{
    struct opp_gpu *gpu = &ld->m->gpu;
    if (event_names(ld) || gpu_names(ld))
        return -1;
    if (gpu->ndevices)
        qsort(gpu->devices, gpu->ndevices, sizeof *gpu->devices, cmp_device);
    if (gpu_memory_sizes(gpu) || gpu_memory_series(gpu))
        return -1;
    return gpu_attach(ld->m);
}

/* A call the process died inside ends when the process ended, and contains
 * everything its thread did after it began. */
static void close_open_events(struct opp_model *m)
{
    for (size_t i = 0; i < m->nthreads; i++) {
        struct opp_thread *t = &m->threads[i];
        const struct opp_process *p = &m->procs[t->proc];
        uint64_t last = p->end_how ? p->end_ns : 0;
        for (size_t k = 0; k < t->nevents; k++)
            if (t->events[k].end_ns > last)
                last = t->events[k].end_ns;
        for (size_t k = 0; k < t->nevents; k++) {
            struct opp_event *e = &t->events[k];
            if (!(e->flags & OPP_EV_OPEN))
                continue;
            m->open_events++;
            e->end_ns = last > e->begin_ns ? last : e->begin_ns;
        }
    }
}

const char *opp_end_how_name(uint32_t how)
{
    switch (how) {
    case OPP_END_EXITED:
        return "exited";
    case OPP_END_LOST:
        return "lost";
    case OPP_END_RUNNING:
        return "running";
    default:
        return "unknown";
    }
}

struct opp_model *opp_model_load(const char *path, char *err, size_t errlen)
{
    return opp_model_load_many(&path, 1, err, errlen);
}

struct opp_model *opp_model_load_many(const char *const *paths, size_t npaths, char *err,
                                      size_t errlen)
{
    const char *path = paths[0];
    struct opp_model *m = calloc(1, sizeof *m);
    if (m)
        m->index = calloc(1, sizeof *m->index);
    if (!m || !m->index) {
        free(m);
        snprintf(err, errlen, "out of memory");
        errno = ENOMEM;
        return NULL;
    }
    struct loader ld = {.m = m};
    static const struct opp_tr_visitor v = {
        .process = on_process,
        .funcs = on_funcs,
        .thread = on_thread,
        .event = on_event,
        .dropped = on_dropped,
        .process_end = on_process_end,
        .gpu = on_gpu,
        .info = on_info,
        .snode = on_snode,
        .sgpu = on_sgpu,
    };
    for (size_t i = 0; i < npaths && !ld.failed; i++) {
        struct opp_tr_summary sum;
        path = paths[i];
        ld.base = (uint32_t)i << 24; /* serials of one file stay below 2^24 */
        ld.have_shift = 0;
        ld.shift = 0;
        if (opp_trace_read(path, &v, &ld, i ? &sum : &m->sum, err, errlen) < 0) {
            opp_model_free(m);
            errno = EINVAL;
            return NULL;
        }
        if (i) { /* the first file's summary, with what the others add */
            m->sum.complete &= sum.complete;
            m->sum.chunks += sum.chunks;
            m->sum.events += sum.events;
            m->sum.gpu_records += sum.gpu_records;
            if (!m->sum.warning[0] && sum.warning[0])
                snprintf(m->sum.warning, sizeof m->sum.warning, "%.200s: %.300s", path,
                         sum.warning);
        }
    }
    if (ld.failed) {
        snprintf(err, errlen, "cannot load %s: %s", path,
                 ld.failed == EOVERFLOW ? "too many events on one thread" : strerror(ld.failed));
        opp_model_free(m);
        errno = ld.failed;
        return NULL;
    }
    close_open_events(m);
    for (size_t i = 0; i < m->nthreads; i++) {
        struct opp_thread *t = &m->threads[i];
        int rc = t->stat ? 0 : opp_tree_build(t->events, t->nevents); /* summary: built */
        if (rc) {
            snprintf(err, errlen, "cannot load %s: %s", path, strerror(-rc));
            opp_model_free(m);
            errno = -rc;
            return NULL;
        }
    }
    if (gpu_finish(&ld)) {
        snprintf(err, errlen, "cannot load %s: %s", path, strerror(ENOMEM));
        opp_model_free(m);
        errno = ENOMEM;
        return NULL;
    }
    return m;
}

void opp_model_free(struct opp_model *m)
{
    if (!m)
        return;
    if (m->index) {
        OPP_HASH_FREE(m->index->strs);
        OPP_HASH_FREE(m->index->procs);
        OPP_HASH_FREE(m->index->threads);
        OPP_HASH_FREE(m->index->gpu_strs);
        free(m->index);
    }
    for (size_t i = 0; i < m->nprocs; i++) {
        struct opp_process *p = &m->procs[i];
        free(p->exe);
        if (p->argv)
            for (uint32_t k = 0; k < p->argc; k++)
                free(p->argv[k]);
        free(p->argv);
        free(p->funcs);
        for (uint32_t k = 0; k < p->ninfo; k++)
            free(p->info_keys[k]), free(p->info_values[k]);
        free(p->info_keys);
        free(p->info_values);
    }
    free(m->procs);
    opp_code_free(m->code);
    for (size_t i = 0; i < m->nthreads; i++) {
        free(m->threads[i].name);
        free(m->threads[i].events);
        free(m->threads[i].args);
        free(m->threads[i].gpu);
        free(m->threads[i].stat);
    }
    free(m->threads);
    free(m->gpu.ops);
    free(m->gpu.launches);
    free(m->gpu.mem);
    free(m->gpu.devices);
    free(m->gpu.extcorr);
    free(m->gpu.sum);
    for (size_t i = 0; i < m->gpu.nmemseries; i++)
        free(m->gpu.memseries[i].pts);
    free(m->gpu.memseries);
    for (uint32_t i = 0; i < m->nstrs; i++)
        free(m->strs[i]);
    free(m->strs);
    free(m);
}

int opp_model_needs_calls(const struct opp_model *m, const char *what, char *err, size_t errlen)
{
    if (!m->summary)
        return 0;
    snprintf(err, errlen,
             "this is a summary trace (OPPROF_MODE=summary: calls added up by call path, "
             "without their times); %s needs every call: record without OPPROF_MODE=summary",
             what);
    return -1;
}
