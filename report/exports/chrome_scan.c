/* The Chrome export's first read (chrome.h), of traces with GPU work: each
 * file's devices, and the correlation ids that have both a call and GPU
 * work. */
#include "exports/chrome.h"

#include <errno.h>
#include <stdlib.h>

#include "ops.h"

int opp_chrome_note_pid(struct chrome *x, size_t file, uint64_t id)
{
    uint64_t key = opp_chrome_pid_key(file, id);
    struct xpid *e;
    HASH_FIND(hh, x->pids, &key, sizeof key, e);
    if (e)
        return 0;
    e = calloc(1, sizeof *e);
    if (!e)
        return -ENOMEM;
    e->key = key;
    if (OPP_HASH_ADD(x->pids, key, sizeof e->key, e)) {
        free(e);
        return -ENOMEM;
    }
    return 0;
}

/* Set bit c: 0, or -ENOMEM. */
static int bits_set(struct bits *b, uint64_t c)
{
    struct bpage *pg = opp_bits_page(b, c);
    if (!pg) {
        pg = calloc(1, sizeof *pg);
        if (!pg)
            return -ENOMEM;
        pg->key = c >> 16;
        if (OPP_HASH_ADD(b->pages, key, sizeof pg->key, pg)) {
            free(pg);
            return -ENOMEM;
        }
        b->last = pg;
    }
    pg->w[(c & 0xffff) / 64] |= 1ull << (c % 64);
    return 0;
}

/* Arrows end only at GPU work whose call is in the trace. */
static int s_call(void *ctx, const struct opp_pass_call *c)
{
    struct chrome *x = ctx;
    uint32_t pi = x->m->threads[c->thread].proc;
    if (opp_kind_base(c->kind) != OPP_OP_CUDA_API || c->nargs <= OPP_COL_CUDA_CORR)
        return 0;
    uint64_t corr = c->args[OPP_COL_CUDA_CORR];
    return corr ? bits_set(&x->procs[pi].has_call, corr) : 0;
}

static int s_gpu(void *ctx, uint32_t pi, const struct opp_gpu_rec *g)
{
    struct chrome *x = ctx;
    if (g->type < OPP_GPU_KERNEL || g->type > OPP_GPU_OVERHEAD)
        return 0;
    int rc = opp_chrome_note_pid(x, opp_chrome_file(x, pi), g->f[OPP_GF_DEVICE]);
    /* Arrows start only at calls whose GPU work is in the trace. */
    uint64_t corr = g->f[OPP_GF_CORRELATION];
    if (!rc && g->type != OPP_GPU_MEMORY && corr)
        rc = bits_set(&x->procs[pi].has_gpu, corr);
    return rc;
}

const struct opp_pass_consumer opp_chrome_scan = {.read = s_call, .record = s_gpu};
