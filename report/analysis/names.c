/* Names given once the whole trace is read (loader.h): kernels by their
 * demangled names, other GPU ops by Kineto's, devices, NVTX ranges by their
 * messages, torch operators by theirs, memory instants as torch names them
 * ("[memory]") and sub-named operators as "lib::sub". */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/demangle.h"
#include "analysis/loader.h"
#include "ops.h"
#include "torch_rules.h"

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
    /* Kineto's names for the first five */
    static const char *n[] = {"Unknown", "Driver Compiler", "Buffer Flush", "Instrumentation",
                              "Resource", "Runtime Triggered Module Loading",
                              "Lazy Function Loading", "Command Buffer Full",
                              "Activity Buffer Request", "UVM Activity Init"};
    return k < sizeof n / sizeof n[0] ? n[k] : "Unknown";
}

/* The string id of a kernel name: process pi's string id, demangled.
 * dem caches the demangled id of each of our string ids below ndem. */
static uint32_t kernel_name(struct opp_loader *ld, uint32_t pi, uint32_t id, uint32_t *dem,
                            uint32_t ndem)
{
    char buf[64];
    uint32_t raw = id ? opp_loader_gpu_str(ld->m, pi, id) : UINT32_MAX;
    if (raw == UINT32_MAX) {
        if (id)
            snprintf(buf, sizeof buf, "<unknown kernel %" PRIu32 ">", id);
        else
            snprintf(buf, sizeof buf, "<unnamed kernel>");
        return opp_loader_intern(ld, buf);
    }
    if (raw < ndem && dem[raw] != UINT32_MAX)
        return dem[raw];
    char *d = opp_demangle(ld->m->strs[raw]);
    uint32_t out = d ? opp_loader_intern(ld, d) : raw;
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

static uint32_t op_name(struct opp_loader *ld, const struct opp_gpu_op *op)
{
    char buf[96];
    opp_gpu_op_label(op, buf, sizeof buf);
    return opp_loader_intern(ld, buf);
}

uint32_t opp_loader_op_name(struct opp_loader *ld, const struct opp_gpu_op *op, uint32_t *dem,
                            uint32_t ndem)
{
    return op->type == OPP_GPU_KERNEL ? kernel_name(ld, op->proc, op->name, dem, ndem)
                                      : op_name(ld, op);
}

/* Every op's and device's name as our string id. -1 when out of memory. */
uint32_t *opp_loader_dem_new(const struct opp_model *m, uint32_t *ndem)
{
    *ndem = m->nstrs;
    uint32_t *dem = malloc((*ndem ? *ndem : 1) * sizeof *dem);
    if (dem)
        memset(dem, 0xff, (*ndem ? *ndem : 1) * sizeof *dem);
    return dem;
}

int opp_loader_gpu_names(struct opp_loader *ld)
{
    struct opp_gpu *gpu = &ld->m->gpu;
    uint32_t ndem, *dem = opp_loader_dem_new(ld->m, &ndem);
    /* Non-kernel names depend on (type, kind, src, dst) only: a run of
     * alike copies reuses the last name instead of looking it up again. */
    uint32_t last_key = UINT32_MAX, last_name = UINT32_MAX;
    if (!dem)
        return -1;
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
        uint32_t s = d->name ? opp_loader_gpu_str(ld->m, d->proc, d->name) : UINT32_MAX;
        d->name = s != UINT32_MAX ? s : opp_loader_intern(ld, "");
        if (d->name == UINT32_MAX)
            return -1;
    }
    return 0;
}

/* Events not named after their entry point: memory instants "[memory]"
 * (torch's name for them); torch operators by their name; NVTX ranges by their message
 * (", seq = N" and what follows it in emit_nvtx's names dropped, so all
 * calls of an op group), prefixed
 * "domain:" outside the default domain; OPP_OPK_SUBNAME operators as
 * "lib::sub" and LAPACK workspace queries as "name (workspace query)"
 * (opp_op_label), cached per (process, function, sub). */
struct name_ent {
    uint64_t key;
    uint32_t name;
    UT_hash_handle hh;
};

static uint32_t nvtx_name(struct opp_loader *ld, uint32_t pi, uint64_t msg, uint64_t dom)
{
    uint32_t m = opp_loader_gpu_str(ld->m, pi, opp_clamp_u32(msg));
    uint32_t d = dom ? opp_loader_gpu_str(ld->m, pi, opp_clamp_u32(dom)) : UINT32_MAX;
    char buf[OPP_NAME_STR_MAX + 300];
    opp_nvtx_label(buf, sizeof buf, d != UINT32_MAX ? ld->m->strs[d] : NULL,
                   m != UINT32_MAX ? ld->m->strs[m] : NULL);
    return opp_loader_intern(ld, buf);
}

#define GPU_STR_CACHE 256 /* torch ops' names by their process's string id, direct-mapped */

struct opp_name_cache {
    struct name_ent *ents;
    uint32_t memory; /* "[memory]"'s string id + 1; 0: not interned yet */
    struct {
        uint64_t key; /* (process index << 32 | its string id) + 1; 0: none */
        uint32_t str;
    } gpu_str[GPU_STR_CACHE];
};

/* opp_loader_gpu_str's answer, the last ones kept: a model's strings do
 * not change once its first read is over. */
static uint32_t gpu_str(const struct opp_model *m, struct opp_name_cache *c, uint32_t pi,
                        uint32_t id)
{
    uint64_t key = ((uint64_t)pi << 32 | id) + 1;
    size_t slot = (id ^ pi * 31u) % GPU_STR_CACHE;
    if (c->gpu_str[slot].key == key)
        return c->gpu_str[slot].str;
    uint32_t str = opp_loader_gpu_str(m, pi, id);
    c->gpu_str[slot].key = key;
    c->gpu_str[slot].str = str;
    return str;
}

/* A relabeled call's name (opp_op_label), cached per (process, function, sub). */
static uint32_t sub_name(struct opp_loader *ld, struct opp_name_cache *c, uint32_t pi, uint32_t fn,
                         const uint64_t *args, uint32_t nargs, uint32_t subid)
{
    struct name_ent *e;
    uint64_t key = (uint64_t)pi << 32 | (uint64_t)fn << 8 | subid;
    HASH_FIND(hh, c->ents, &key, sizeof key, e);
    if (e)
        return e->name;
    const struct opp_func *f = &ld->m->procs[pi].funcs[fn];
    char buf[OPP_NAME_MAX * 2 + 64];
    opp_op_label(f->kind, args, nargs, ld->m->strs[f->lib], ld->m->strs[f->name], buf, sizeof buf);
    uint32_t name = opp_loader_intern(ld, buf);
    e = name == UINT32_MAX ? NULL : malloc(sizeof *e);
    if (!e)
        return UINT32_MAX;
    e->key = key;
    e->name = name;
    if (OPP_HASH_ADD(c->ents, key, sizeof key, e)) {
        free(e);
        return UINT32_MAX;
    }
    return name;
}

uint32_t opp_loader_event_name(struct opp_loader *ld, struct opp_name_cache **cache, uint32_t pi,
                               uint32_t fn, const uint64_t *args, uint32_t nargs)
{
    struct opp_model *m = ld->m;
    const struct opp_func *f = &m->procs[pi].funcs[fn];
    uint32_t base = opp_kind_base(f->kind);
    const uint64_t *a = args;
    uint32_t na = opp_op_args(f->kind, &a, nargs);
    if (base == OPP_OP_NVTX && na > OPP_COL_NVTX_MSG)
        return nvtx_name(ld, pi, a[OPP_COL_NVTX_MSG],
                         na > OPP_COL_NVTX_DOMAIN ? a[OPP_COL_NVTX_DOMAIN] : 0);
    if (base == OPP_OP_TORCH && na > OPP_COL_TORCH_NAME) {
        if (!*cache && !(*cache = calloc(1, sizeof **cache)))
            return UINT32_MAX;
        /* a string of the model is interned already: its id is its own */
        uint32_t str = gpu_str(m, *cache, pi, opp_clamp_u32(a[OPP_COL_TORCH_NAME]));
        return str != UINT32_MAX ? str : opp_loader_intern(ld, "(unnamed op)");
    }
    uint32_t sub = base == OPP_OP_MEMORY ? 0 : opp_op_relabel(f->kind, args, nargs);
    if (base != OPP_OP_MEMORY && !sub)
        return f->name;
    if (!*cache && !(*cache = calloc(1, sizeof **cache)))
        return UINT32_MAX;
    if (base == OPP_OP_MEMORY) { /* one name for them all, looked up once */
        if (!(*cache)->memory)
            (*cache)->memory = opp_loader_intern(ld, "[memory]") + 1; /* UINT32_MAX: 0 */
        return (*cache)->memory - 1;
    }
    return sub_name(ld, *cache, pi, fn, args, nargs, sub);
}

void opp_loader_name_cache_free(struct opp_name_cache *c)
{
    if (c)
        OPP_HASH_FREE(c->ents);
    free(c);
}

/* A summary's node of torch.profiler's steps holds them all (summary.h:
 * the first step's string keys it): named as the table keys them, in the
 * tree and the stacks too. */
static uint32_t summary_name(struct opp_loader *ld, uint32_t name)
{
    const char *s = opp_model_str(ld->m, name);
    return opp_profiler_step(s) ? opp_loader_intern(ld, OPP_PROFILER_STEP_ROW) : name;
}

int opp_loader_event_names(struct opp_loader *ld)
{
    struct opp_model *m = ld->m;
    struct opp_name_cache *cache = NULL;
    int rc = 0;
    for (size_t i = 0; i < m->nthreads && !rc; i++) {
        struct opp_thread *t = &m->threads[i];
        for (size_t k = 0; k < t->nevents && !rc; k++) {
            struct opp_event *ev = &t->events[k];
            uint32_t name = opp_loader_event_name(ld, &cache, t->proc, ev->fn,
                                                  opp_event_args(t, ev), ev->nargs);
            if (name != UINT32_MAX && t->stat) /* a summary's node */
                name = summary_name(ld, name);
            if (name == UINT32_MAX)
                rc = -1;
            else
                ev->name = name;
        }
    }
    opp_loader_name_cache_free(cache);
    return rc;
}
