/* The GPU view's numbers found as a full trace is read, a consumer of the
 * pass (gpu_stream.h). */
#include "analysis/gpu_stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/extsort.h"
#include "analysis/gpu_join.h"
#include "analysis/pass.h"
#include "analysis/stream_meta.h"
#include "gpu.h"

#define SORT_MEM (8u << 20) /* bytes each of the three sorts keeps in memory */

/* An op as the join keeps it. */
struct gop {
    uint64_t start, end, seq; /* seq: its place among the trace's ops */
    uint32_t name, proc, device, stream;
    double occupancy; /* kernels: of its launch on its device; < 0: unknown */
    uint32_t type, pad;
};

/* The selected ops by device, by stream, and the kernels by name, each
 * then by start and place (gpu_stats.c's orders). */
struct dev_rec {
    uint32_t device, name;
    uint64_t start, seq, end;
    uint32_t kernel, pad;
};
struct stream_rec {
    uint32_t proc, device, stream, kernel;
    uint64_t start, seq, end;
};
struct kern_rec {
    uint32_t name, has_delay;
    uint64_t start, seq, dur;
    int64_t delay;
    double occupancy;
};

struct opp_gpu_stream {
    struct opp_pass *pass;
    struct opp_stream_meta *meta; /* the pass's first read */
    uint32_t *dem, ndem;
    uint64_t nops;
    struct opp_extsort *dev, *str, *kern;
    const struct opp_agg_opts *o;
    int failed; /* -errno */
};

static int cmp_dev(const void *pa, const void *pb)
{
    const struct dev_rec *a = pa, *b = pb;
    OPP_SORT_BY(a->device, b->device);
    OPP_SORT_BY(a->start, b->start);
    OPP_SORT_BY(a->seq, b->seq);
    return 0;
}

static int cmp_stream(const void *pa, const void *pb)
{
    const struct stream_rec *a = pa, *b = pb;
    OPP_SORT_BY(a->proc, b->proc);
    OPP_SORT_BY(a->device, b->device);
    OPP_SORT_BY(a->stream, b->stream);
    OPP_SORT_BY(a->start, b->start);
    OPP_SORT_BY(a->seq, b->seq);
    return 0;
}

static int cmp_kern(const void *pa, const void *pb)
{
    const struct kern_rec *a = pa, *b = pb;
    OPP_SORT_BY(a->name, b->name);
    OPP_SORT_BY(a->start, b->start);
    OPP_SORT_BY(a->seq, b->seq);
    return 0;
}

static int fail(struct opp_gpu_stream *g, int rc)
{
    if (!g->failed)
        g->failed = rc;
    return 1;
}

/* r (of process index pi) as the join keeps it in *o: 0, 1 when the join
 * takes no op of r, or -ENOMEM. Memory, sync and overhead records are
 * joined for the count of those of no call. */
static int gop_of(struct opp_gpu_stream *g, uint32_t pi, const struct opp_gpu_rec *r,
                  struct gop *o)
{
    if (r->type == OPP_GPU_KERNEL || r->type == OPP_GPU_MEMCPY || r->type == OPP_GPU_MEMSET) {
        struct opp_gpu_op op;
        struct opp_gpu_launch l;
        opp_gpu_op_decode(r, pi, &op, &l);
        *o = (struct gop){op.start_ns, op.end_ns, g->nops++, 0,       pi,
                          op.device,   op.stream, -1,        op.type, 0};
        if (op.type == OPP_GPU_KERNEL)
            o->occupancy = opp_gpu_occupancy(opp_gpu_device_find(g->meta->ld.m, op.device), &l);
        o->name = opp_loader_op_name(&g->meta->ld, &op, g->dem, g->ndem);
        return o->name == UINT32_MAX ? -ENOMEM : 0;
    }
    if (r->type == OPP_GPU_MEMORY || r->type == OPP_GPU_SYNC || r->type == OPP_GPU_OVERHEAD) {
        *o = (struct gop){.proc = pi, .type = r->type};
        return 0;
    }
    return 1;
}

/* What the join keeps of record r (the pass's op): 0, 1 (none of it), or
 * -ENOMEM. */
static int keep_op(void *ctx, uint32_t pi, const struct opp_gpu_rec *r, void *op)
{
    struct gop o;
    int rc = gop_of(ctx, pi, r, &o);
    if (!rc)
        memcpy(op, &o, sizeof o);
    return rc;
}

/* The sorts' files gone (a failed sort's, so that the others keep the
 * room). */
static void drop_files(struct opp_gpu_stream *g)
{
    opp_extsort_free(g->dev);
    opp_extsort_free(g->str);
    opp_extsort_free(g->kern);
    g->dev = g->str = g->kern = NULL;
}

/* A joined op: into the sorts when the filters select it. */
static void each(void *ctx, const struct opp_gpu_call *c, const void *op)
{
    struct opp_gpu_stream *g = ctx;
    struct gop x;
    memcpy(&x, op, sizeof x); /* where the join keeps it: unaligned */
    const struct gop *o = &x;
    const struct opp_model *m = g->meta->ld.m;
    if (g->failed ||
        (o->type != OPP_GPU_KERNEL && o->type != OPP_GPU_MEMCPY && o->type != OPP_GPU_MEMSET) ||
        !opp_agg_selects(m, g->o, o->proc, c ? c->thread : OPP_GPU_NONE))
        return;
    int kernel = o->type == OPP_GPU_KERNEL, rc;
    rc = opp_extsort_add(g->dev, &(struct dev_rec){o->device, o->name, o->start, o->seq, o->end,
                                                   (uint32_t)kernel, 0});
    if (!rc)
        rc = opp_extsort_add(g->str,
                             &(struct stream_rec){o->proc, o->device, o->stream, (uint32_t)kernel,
                                                  o->start, o->seq, o->end});
    if (!rc && kernel) {
        int64_t delay = c ? (int64_t)(o->start - c->end) : 0; /* two's complement */
        rc = opp_extsort_add(g->kern, &(struct kern_rec){o->name, c != NULL, o->start, o->seq,
                                                         o->end - o->start, delay, o->occupancy});
    }
    if (rc) {
        fail(g, rc);
        drop_files(g);
    }
}

struct opp_gpu_stream *opp_gpu_stream_over(struct opp_pass *p, char *err, size_t errlen)
{
    struct opp_gpu_stream *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    g->pass = p;
    g->meta = opp_pass_meta(p);
    return g;
}

static void drop_sorts(struct opp_gpu_stream *g)
{
    drop_files(g);
    free(g->dem);
    g->dem = NULL;
}

/* Empty sorts (and ids of demangled names) for one join. 0 or -ENOMEM. */
static int make_sorts(struct opp_gpu_stream *g)
{
    drop_sorts(g);
    g->nops = 0;
    g->failed = 0;
    g->dem = opp_loader_dem_new(g->meta->ld.m, &g->ndem);
    g->dev = opp_extsort_new(sizeof(struct dev_rec), cmp_dev, SORT_MEM);
    g->str = opp_extsort_new(sizeof(struct stream_rec), cmp_stream, SORT_MEM);
    g->kern = opp_extsort_new(sizeof(struct kern_rec), cmp_kern, SORT_MEM);
    return !g->dem || !g->dev || !g->str || !g->kern ? -ENOMEM : 0;
}

/* A read of the pass, its GPU work joined into the sorts (a failure of
 * the sorts in g->failed). 0; 1 when the trace cannot be read this way,
 * -1 on error (err says why). */
static int read_ops(struct opp_gpu_stream *g, char *err, size_t errlen)
{
    if (make_sorts(g))
        return opp_err_oom(err, errlen);
    const struct opp_pass_consumer c = {
        .ctx = g, .op_bytes = sizeof(struct gop), .op = keep_op, .owned = each};
    int rc = opp_pass_run(g->pass, &c, err, errlen);
    if (!rc)
        g->meta->ld.m->gpu.unattached = opp_pass_unattached(g->pass);
    return rc;
}

/* Sweeps of the three sorts (gpu_stats.c's code, op by op). */
static int devices(struct opp_gpu_stream *g, struct opp_gpu_stats *s, size_t *cap)
{
    const struct opp_model *m = g->meta->ld.m;
    int rc = opp_extsort_done(g->dev);
    struct opp_gpu_dev_stats *d = NULL;
    struct opp_gpu_sweep w = {0};
    const struct dev_rec *r;
    while (!rc && (r = opp_extsort_next(g->dev))) {
        if (!d || d->device != r->device) {
            if (d)
                opp_gpu_dev_done(d, &w, s);
            if (!(d = opp_gpu_dev_new(m, s, cap, r->device)))
                return -ENOMEM;
            w = (struct opp_gpu_sweep){0};
        }
        opp_gpu_dev_op(d, &w, r->start, r->end, (int)r->kernel, r->name);
    }
    if (d)
        opp_gpu_dev_done(d, &w, s);
    return rc ? rc : opp_extsort_error(g->dev);
}

static int streams(struct opp_gpu_stream *g, struct opp_gpu_stats *s)
{
    int rc = opp_extsort_done(g->str);
    size_t cap = 0;
    struct opp_gpu_stream_stats *st = NULL;
    struct opp_gpu_sweep w = {0};
    const struct stream_rec *r;
    while (!rc && (r = opp_extsort_next(g->str))) {
        if (!st || st->proc != r->proc || st->device != r->device || st->stream != r->stream) {
            if (st)
                opp_gpu_stream_done(st, &w);
            if (opp_loader_grow((void **)&s->streams, &cap, s->nstreams + 1, sizeof *s->streams))
                return -ENOMEM;
            st = &s->streams[s->nstreams++];
            *st = (struct opp_gpu_stream_stats){
                .proc = r->proc, .device = r->device, .stream = r->stream};
            w = (struct opp_gpu_sweep){0};
        }
        opp_gpu_stream_op(st, &w, r->start, r->end, (int)r->kernel);
    }
    if (st)
        opp_gpu_stream_done(st, &w);
    return rc ? rc : opp_extsort_error(g->str);
}

static int kernels(struct opp_gpu_stream *g, struct opp_kernel_stats **out, size_t *nout)
{
    const struct opp_model *m = g->meta->ld.m;
    int rc = opp_extsort_done(g->kern);
    size_t cap = 0;
    struct opp_kernel_stats *k = NULL;
    struct opp_kernel_acc a = {0};
    uint32_t name = 0;
    const struct kern_rec *r;
    while (!rc && (r = opp_extsort_next(g->kern))) {
        if (!k || name != r->name) {
            if (k)
                opp_kernel_done(k, &a);
            if (opp_loader_grow((void **)out, &cap, *nout + 1, sizeof **out))
                return -ENOMEM;
            k = &(*out)[(*nout)++];
            *k = (struct opp_kernel_stats){.name = opp_model_str(m, r->name)};
            a = (struct opp_kernel_acc){0};
            name = r->name;
        }
        opp_kernel_op(k, &a, r->dur, r->occupancy, (int)r->has_delay, r->delay);
    }
    if (k)
        opp_kernel_done(k, &a);
    opp_kernel_stats_sort(*out, *nout);
    return rc ? rc : opp_extsort_error(g->kern);
}

int opp_gpu_stream_stats(struct opp_gpu_stream *g, const struct opp_agg_opts *o,
                         struct opp_gpu_stats *s, struct opp_kernel_stats **k, size_t *nk,
                         char *err, size_t errlen)
{
    struct opp_kernel_stats *unasked = NULL; /* k NULL: read, then dropped */
    size_t nunasked;
    if (!k)
        k = &unasked, nk = &nunasked;
    memset(s, 0, sizeof *s);
    *k = NULL;
    *nk = 0;
    g->o = o;
    size_t cap = 0;
    int read = g->meta->gpu_ops || g->meta->ld.m->gpu.nmem || g->meta->open_calls;
    if (read) {
        int got = read_ops(g, err, errlen);
        if (got) /* the sorts' own failure first: the pass takes it for its own */
            return opp_pass_said(got, g->failed, err, errlen);
    }
    int rc = read ? g->failed : 0;
    if (!rc && g->meta->gpu_ops)
        rc = devices(g, s, &cap);
    if (!rc)
        rc = opp_gpu_stats_memory(g->meta->ld.m, s, &cap);
    if (!rc && g->meta->gpu_ops)
        rc = streams(g, s);
    if (!rc && g->meta->gpu_ops)
        rc = kernels(g, k, nk);
    if (!rc) {
        free(unasked);
        return 0;
    }
    opp_gpu_stats_free(s);
    free(*k);
    *k = NULL;
    *nk = 0;
    return opp_pass_said(0, rc, err, errlen);
}

/* What a read of the busy pixels draws into. */
struct busy {
    const struct opp_gpu_stats *s;
    size_t npx;
    uint8_t *px;
    uint64_t nops;
};

/* Op r drawn on its stream's pixels; none kept for the join (1). */
static int busy_op(void *ctx, uint32_t pi, const struct opp_gpu_rec *r, void *op)
{
    struct busy *b = ctx;
    (void)op;
    if (r->type == OPP_GPU_SYNC || r->type == OPP_GPU_OVERHEAD)
        b->nops++;
    if (r->type != OPP_GPU_KERNEL && r->type != OPP_GPU_MEMCPY && r->type != OPP_GPU_MEMSET)
        return 1;
    b->nops++;
    struct opp_gpu_op g;
    struct opp_gpu_launch l;
    opp_gpu_op_decode(r, pi, &g, &l);
    const struct opp_gpu_stats *s = b->s;
    size_t i =
        OPP_PARTITION_POINT(s->nstreams, k,
                            s->streams[k].proc != g.proc       ? s->streams[k].proc < g.proc
                            : s->streams[k].device != g.device ? s->streams[k].device < g.device
                                                               : s->streams[k].stream < g.stream);
    const struct opp_gpu_stream_stats *st = &s->streams[i];
    if (i == s->nstreams || st->proc != g.proc || st->device != g.device || st->stream != g.stream)
        return 1;
    uint64_t t0 = 0, t1 = 0;
    for (size_t d = 0; d < s->ndevs; d++)
        if (s->devs[d].device == st->device) {
            t0 = s->devs[d].first_ns;
            t1 = s->devs[d].last_ns;
        }
    if (g.start_ns < t0 || g.end_ns > t1)
        return 1;
    double span = t1 > t0 ? (double)(t1 - t0) : 1;
    uint8_t *px = b->px + i * b->npx;
    size_t a = (size_t)((double)(g.start_ns - t0) / span * (double)b->npx);
    size_t e = (size_t)((double)(g.end_ns - t0) / span * (double)b->npx + 0.999);
    for (size_t p = a; p < e && p < b->npx; p++)
        px[p] = 1;
    if (a < b->npx && a == e)
        px[a] = 1;
    return 1;
}

static void busy_owned(void *ctx, const struct opp_gpu_call *c, const void *op)
{
    (void)ctx, (void)c, (void)op; /* none kept */
}

int opp_gpu_stream_busy(struct opp_gpu_stream *g, const struct opp_gpu_stats *s, size_t npx,
                        uint8_t **px, uint64_t *nops, char *err, size_t errlen)
{
    struct busy b = {.s = s, .npx = npx, .px = calloc(s->nstreams * npx + 1, 1)};
    *px = NULL;
    *nops = 0;
    if (!b.px)
        return opp_err_oom(err, errlen);
    const struct opp_pass_consumer c = {.ctx = &b, .op = busy_op, .owned = busy_owned};
    int rc = opp_pass_run(g->pass, &c, err, errlen);
    if (rc) {
        free(b.px);
        return rc;
    }
    *px = b.px;
    *nops = b.nops;
    return 0;
}

void opp_gpu_stream_free(struct opp_gpu_stream *g)
{
    if (!g)
        return;
    drop_sorts(g);
    free(g);
}
