/* Summary mode's GPU records (summary_internal.h): each op added up to
 * the call that launched it (by correlation or external id) and to its
 * process's GPU rows. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "summary_internal.h"
#include "format.h"
#include "util.h"

static uint32_t gpu_node(struct opp_sum *s, uint32_t proc, uint64_t corr)
{
    if (!corr)
        return NONE;
    struct ment *e = opp_bmap_find(&s->corr, proc, corr);
    uint32_t id = e ? opp_sum_resolve(s, (uint32_t)e->v) : NONE;
    if (!id) {
        struct ment *x = opp_bmap_find(&s->extc, proc, corr);
        struct ment *n = x ? opp_bmap_find(&s->ext, proc, x->v) : NULL;
        id = n ? opp_sum_resolve(s, (uint32_t)n->v) : NONE;
    }
    if (!id)
        s->unattached++;
    return id;
}

static int gpu_row(struct sproc *p, const struct grow_row *k, uint64_t dur, uint64_t bytes)
{
    for (size_t i = 0; i < p->nrows; i++) {
        struct grow_row *r = &p->rows[i];
        if (r->window == k->window && r->type == k->type && r->name == k->name &&
            r->kind == k->kind && r->src == k->src && r->dst == k->dst && r->device == k->device &&
            r->stream == k->stream) {
            r->count++;
            r->dur += dur;
            r->bytes += bytes;
            return 0;
        }
    }
    if (p->nrows == p->rows_cap) {
        size_t nc = p->rows_cap ? p->rows_cap * 2 : 16;
        struct grow_row *nr = realloc(p->rows, nc * sizeof *nr);
        if (!nr)
            return -ENOMEM;
        p->rows = nr;
        p->rows_cap = nc;
    }
    struct grow_row *r = &p->rows[p->nrows++];
    *r = *k;
    r->count = 1;
    r->dur = dur;
    r->bytes = bytes;
    return 0;
}

static uint32_t u32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

int opp_sum_gpu_keeps(uint32_t type)
{
    return type < OPP_GPU_KERNEL || type > OPP_GPU_EXTCORR;
}

int opp_sum_op_of(struct opp_sum *s, uint32_t proc, const struct opp_gpu_rec *g,
                  struct opp_sum_op *op)
{
    struct sproc *p = opp_sum_proc_find(s, proc);
    if (opp_sum_gpu_keeps(g->type) || g->type == OPP_GPU_EXTCORR)
        return 0;
    const uint64_t *f = g->f;
    /* How far the device's work has come back: kernels, copies and sets
     * (memory, sync and overhead records come at call time) */
    if (p &&
        (g->type == OPP_GPU_KERNEL || g->type == OPP_GPU_MEMCPY || g->type == OPP_GPU_MEMSET) &&
        f[OPP_GF_CORRELATION] != UINT64_MAX && f[OPP_GF_CORRELATION] > p->gpu_corr_max)
        p->gpu_corr_max = f[OPP_GF_CORRELATION];
    *op = (struct opp_sum_op){.type = g->type};
    if (g->type == OPP_GPU_MEMORY) {
        op->mem = opp_sum_block_bytes(s, &s->addr, proc, f[OPP_GF_M_OP], f[OPP_GF_M_ADDRESS],
                                      f[OPP_GF_M_BYTES]);
        return 1;
    }
    op->dur = f[OPP_GF_END] > f[OPP_GF_START] ? f[OPP_GF_END] - f[OPP_GF_START] : 0;
    op->device = u32(f[OPP_GF_DEVICE]);
    op->stream = u32(f[OPP_GF_STREAM]);
    if (g->type == OPP_GPU_KERNEL) {
        op->name = u32(f[OPP_GF_K_NAME]);
    } else if (g->type == OPP_GPU_MEMCPY) {
        op->bytes = f[OPP_GF_C_BYTES];
        op->kind = u32(f[OPP_GF_C_KIND]);
        op->src = u32(f[OPP_GF_C_SRC_KIND]);
        op->dst = u32(f[OPP_GF_C_DST_KIND]);
    } else if (g->type == OPP_GPU_MEMSET) {
        op->bytes = f[OPP_GF_S_BYTES];
        op->kind = u32(f[OPP_GF_S_MEM_KIND]);
    } else if (g->type == OPP_GPU_SYNC) {
        op->kind = u32(f[OPP_GF_Y_TYPE]);
    } else {
        op->kind = u32(f[OPP_GF_O_KIND]);
    }
    return 1;
}

/* op added up, owned by node id (NONE: by no call). */
static int op_add(struct opp_sum *s, struct sproc *p, uint32_t id, const struct opp_sum_op *op)
{
    if (op->type == OPP_GPU_MEMORY) {
        if (id)
            s->n[id].self_mem = opp_add_sat(s->n[id].self_mem, op->mem);
        return 0;
    }
    if (id &&
        (op->type == OPP_GPU_KERNEL || op->type == OPP_GPU_MEMCPY || op->type == OPP_GPU_MEMSET))
        s->n[id].self_cuda += op->dur;
    struct grow_row k = {.window = id ? s->n[id].window : p->window,
                         .type = op->type,
                         .name = op->name,
                         .kind = op->kind,
                         .src = op->src,
                         .dst = op->dst,
                         .device = op->device,
                         .stream = op->stream};
    return gpu_row(p, &k, op->dur, op->bytes) ? -ENOMEM : 0;
}

void opp_sum_joined(struct opp_sum *s)
{
    s->joined = 1;
}

void opp_sum_given_bytes(struct opp_sum *s, int64_t bytes)
{
    s->given = 1;
    s->given_bytes = bytes;
    s->again = NULL; /* a call with bytes given is counted by opp_sum_call */
}

int opp_sum_op_add(struct opp_sum *s, uint32_t proc, const struct opp_sum_op *op, int owned)
{
    struct sproc *p = opp_sum_proc_find(s, proc);
    return p ? op_add(s, p, owned ? s->just : NONE, op) : 0;
}

int opp_sum_gpu(struct opp_sum *s, uint32_t proc, const struct opp_gpu_rec *g)
{
    struct sproc *p = opp_sum_proc_find(s, proc);
    if (!p)
        return 0;
    if (g->type == OPP_GPU_STRING) /* learnt, and kept as it is */
        return opp_sum_string(s, proc, g->f[0], g->str, g->slen);
    if (g->type == OPP_GPU_EXTCORR) {
        const uint64_t *f = g->f;
        uint64_t gone;
        if (f[OPP_GF_X_KIND] == OPP_EXTCORR_KIND && f[OPP_GF_X_CORRELATION])
            opp_bmap_put(s, &s->extc, proc, f[OPP_GF_X_CORRELATION], f[OPP_GF_X_EXTERNAL], &gone);
        return 1;
    }
    struct opp_sum_op op;
    if (!opp_sum_op_of(s, proc, g, &op))
        return 0;
    uint32_t id = g->type == OPP_GPU_OVERHEAD ? NONE : gpu_node(s, proc, g->f[OPP_GF_CORRELATION]);
    return op_add(s, p, id, &op) ? -ENOMEM : 1;
}
