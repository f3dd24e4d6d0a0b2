/* Summary mode's aggregation written (summary_internal.h): a process's
 * call paths and GPU rows as SUMMARY and SUMMARY_GPU chunks, then the
 * process forgotten (what its maps lost, as a GPU DROPPED record); and the
 * counts for a person. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "summary_internal.h"
#include "trace.h"
#include "util.h"

#define NODE_FIXED (4u * 4u + 7u * 8u)

static int flush(struct opp_tw *w, struct opp_wbuf *b, uint32_t proc, uint32_t *count,
                 uint32_t first)
{
    if (!*count)
        return 0;
    memcpy(b->p + 4, count, 4);
    memcpy(b->p + 8, &first, 4);
    int rc = opp_tw_chunk(w, OPP_CHUNK_SUMMARY, b->p, (uint32_t)b->len);
    b->len = 0;
    opp_put_u32(b, proc);
    opp_put_u32(b, 0);
    opp_put_u32(b, 0);
    opp_put_u32(b, 0);
    *count = 0;
    return rc;
}

int opp_sum_write(struct opp_sum *s, uint32_t proc, struct opp_tw *w)
{
    struct sproc *p = opp_sum_proc_find(s, proc);
    if (!p)
        return 0;
    for (struct sthread *t = s->threads, *nx; t; t = nx) {
        nx = t->next;
        if (t->proc == proc)
            opp_sum_thread_end(s, proc, t->tid);
    }
    size_t cap = 1u << 20;
    uint8_t *mem = malloc(cap);
    /* serial[id]: the node's number in the file, its parent's first */
    uint32_t *serial = calloc(s->nnodes, sizeof *serial);
    uint32_t *stack = malloc((size_t)s->nnodes * sizeof *stack);
    int rc = 0;
    if (!mem || !serial || !stack) {
        rc = -ENOMEM;
        goto out;
    }
    struct opp_wbuf b;
    opp_wbuf_init(&b, mem, cap);
    opp_put_u32(&b, proc);
    opp_put_u32(&b, 0);
    opp_put_u32(&b, 0);
    opp_put_u32(&b, 0);
    uint32_t count = 0, next = 1, first = 1;
    size_t sp = 0;
    for (uint32_t c = s->n[p->root].first; c; c = s->n[c].next)
        stack[sp++] = c;
    while (sp) {
        uint32_t id = stack[--sp];
        struct node *x = &s->n[id];
        if (b.len + NODE_FIXED + 8u * x->nargs > cap && (rc = flush(w, &b, proc, &count, first)))
            goto out;
        if (!count)
            first = next;
        serial[id] = next++;
        opp_put_u32(&b, x->parent == p->root ? 0 : serial[x->parent]);
        opp_put_u32(&b, x->window);
        opp_put_u32(&b, x->fn);
        opp_put_u32(&b, x->nargs);
        opp_put_u64(&b, x->count);
        opp_put_u64(&b, x->total);
        opp_put_u64(&b, x->self);
        opp_put_u64(&b, x->open);
        opp_put_u64(&b, x->self_cuda);
        opp_put_u64(&b, (uint64_t)x->self_mem);
        opp_put_u64(&b, (uint64_t)x->cpu_mem);
        for (uint32_t i = 0; i < x->nargs; i++)
            opp_put_u64(&b, x->args[i]);
        count++;
        for (uint32_t c = x->first; c; c = s->n[c].next)
            stack[sp++] = c;
    }
    if ((rc = flush(w, &b, proc, &count, first)))
        goto out;
    /* GPU rows, as many chunks as they need */
    for (size_t i = 0; i < p->nrows;) {
        b.len = 0;
        opp_put_u32(&b, proc);
        opp_put_u32(&b, 0);
        uint32_t n = 0;
        for (; i < p->nrows && b.len + 8u * 4u + 3u * 8u <= cap; i++, n++) {
            const struct grow_row *r = &p->rows[i];
            opp_put_u32(&b, r->window);
            opp_put_u32(&b, r->type);
            opp_put_u32(&b, r->name);
            opp_put_u32(&b, r->kind);
            opp_put_u32(&b, r->src);
            opp_put_u32(&b, r->dst);
            opp_put_u32(&b, r->device);
            opp_put_u32(&b, r->stream);
            opp_put_u64(&b, r->count);
            opp_put_u64(&b, r->dur);
            opp_put_u64(&b, r->bytes);
        }
        memcpy(b.p + 4, &n, 4);
        if ((rc = opp_tw_chunk(w, OPP_CHUNK_SUMMARY_GPU, b.p, (uint32_t)b.len)))
            goto out;
    }
    if (p->dropped &&
        (rc = opp_tw_dropped(w, proc, OPP_DROPPED_SUMMARY, p->dropped, OPP_DROP_FULL)))
        goto out;
    if (p->lost) { /* said as a GPU DROPPED record's field (common/gpu.h) */
        struct opp_gpu_rec d = {.type = OPP_GPU_DROPPED, .nfields = OPP_GF_D_COUNT};
        d.f[OPP_GF_D_SUMMARY_LOST] = p->lost;
        b.len = 0;
        opp_put_u32(&b, 1);        /* one record */
        (void)opp_gpu_put(&b, &d); /* fits: b holds 1 MiB */
        if ((rc = opp_tw_gpu(w, proc, b.p, (uint32_t)b.len)))
            goto out;
    }
out:
    free(mem);
    free(serial);
    free(stack);
    /* forget the process: its nodes go (map entries keep stubs alive; a
     * stub of a forgotten node forwards to nothing) */
    for (uint32_t id = 1; id < s->nnodes; id++) {
        struct node *x = &s->n[id];
        if (x->state != N_LIVE || x->proc != proc)
            continue;
        opp_sum_hash_del(s, id);
        if (x->refs) {
            s->live--;
            x->state = N_STUB;
            x->fwd = NONE;
            x->first = NONE;
            free(x->args);
            x->args = NULL;
        } else {
            opp_sum_node_release(s, id);
        }
    }
    opp_sum_node_release(s, p->root);
    struct sproc **pp = &s->procs;
    while (*pp != p)
        pp = &(*pp)->next;
    *pp = p->next;
    if (s->last_p == p)
        s->last_p = NULL;
    opp_sum_proc_free(p);
    return rc;
}

void opp_sum_stats(const struct opp_sum *s, struct opp_sum_stats *out)
{
    out->calls = s->calls;
    out->nodes = s->live;
    out->dropped = s->dropped;
    out->unattached = s->unattached;
    out->lost = s->lost;
    out->map_slots = (uint64_t)s->corr.cap + s->ext.cap + s->extc.cap + s->addr.cap + s->cpu.cap;
}

void opp_sum_lost_said(char *buf, size_t cap, uint64_t lost)
{
    snprintf(buf, cap,
             "%llu CUDA launches awaiting their GPU records, or CPU blocks still allocated, "
             "were let go at the summary's bound (2^22 a map): their GPU time, or their frees' "
             "sizes, are not in it",
             (unsigned long long)lost);
}

uint32_t opp_sum_nodes_of(const char *s, int *bad)
{
    *bad = 0;
    if (!s || !*s)
        return OPP_SUM_NODES_DEFAULT;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno || v < 1 || v > (long)OPP_SUM_NODES_MAX) {
        *bad = 1;
        return OPP_SUM_NODES_DEFAULT;
    }
    return (uint32_t)v;
}

void opp_sum_dropped_said(char *buf, size_t cap, uint64_t dropped, uint32_t max_nodes)
{
    snprintf(buf, cap,
             "%llu call%s on new call paths past the summary's bound of %u call path%s "
             "(OPPROF_MAX_NODES, default %u) %s dropped",
             (unsigned long long)dropped, dropped == 1 ? "" : "s", max_nodes,
             max_nodes == 1 ? "" : "s", OPP_SUM_NODES_DEFAULT, dropped == 1 ? "was" : "were");
}
