/* Two traces compared row by row (see diff.h): both aggregates sorted by
 * identity and merged, then sorted by the size of the change. */
#include "analysis/diff.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const metric_names[] = {"self_cpu", "cpu_total", "self_cuda", "cuda_total"};
static const char *const class_names[] = {"added", "removed", "slower", "faster", "same"};

int opp_diff_metric_parse(const char *name, enum opp_diff_metric *out)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, metric_names[i])) {
            *out = (enum opp_diff_metric)i;
            return 0;
        }
    return -EINVAL;
}

const char *opp_diff_metric_name(enum opp_diff_metric m)
{
    return (unsigned)m < 4 ? metric_names[m] : "?";
}

const char *opp_diff_class_name(enum opp_diff_class c)
{
    return (unsigned)c < OPP_DIFF_NCLASSES ? class_names[c] : "?";
}

static void side_of(const struct opp_row *r, struct opp_diff_side *s)
{
    s->count = r->count;
    s->self_cpu_ns = r->self_cpu_time_total_ns;
    s->cpu_total_ns = r->cpu_time_total_ns;
    s->self_cuda_ns = r->self_cuda_time_total_ns;
    s->cuda_total_ns = r->cuda_time_total_ns;
}

/* Kernel, copy and memset rows have no CPU time: a CPU metric compares
 * their device time instead. */
static double metric_of(enum opp_diff_metric m, uint32_t device_type, const struct opp_diff_side *s)
{
    if (device_type == OPP_DEVICE_CUDA && m == OPP_DIFF_SELF_CPU)
        m = OPP_DIFF_SELF_CUDA;
    if (device_type == OPP_DEVICE_CUDA && m == OPP_DIFF_CPU_TOTAL)
        m = OPP_DIFF_CUDA_TOTAL;
    switch (m) {
    case OPP_DIFF_SELF_CPU:
        return (double)s->self_cpu_ns;
    case OPP_DIFF_CPU_TOTAL:
        return (double)s->cpu_total_ns;
    case OPP_DIFF_SELF_CUDA:
        return (double)s->self_cuda_ns;
    case OPP_DIFF_CUDA_TOTAL:
        return (double)s->cuda_total_ns;
    }
    return 0;
}

enum opp_diff_class opp_diff_classify(const struct opp_diff *d, double va, double vb)
{
    double change = vb - va, limit = d->same_pct / 100.0 * va;
    if (limit < d->same_ns)
        limit = d->same_ns;
    if (fabs(change) <= limit)
        return OPP_DIFF_SAME;
    return change > 0 ? OPP_DIFF_SLOWER : OPP_DIFF_FASTER;
}

static double percent(double va, double vb)
{
    return va > 0 ? (vb - va) / va * 100.0 : NAN;
}

static int cmp_identity(const char *ka, uint32_t da, const char *sa, const char *kb, uint32_t db,
                        const char *sb)
{
    int c = strcmp(ka, kb);
    if (!c && da != db)
        c = da < db ? -1 : 1;
    return c ? c : strcmp(sa, sb);
}

static int cmp_row_identity(const void *pa, const void *pb)
{
    const struct opp_row *a = pa, *b = pb;
    return cmp_identity(a->key, a->device_type, a->shapes_str, b->key, b->device_type,
                        b->shapes_str);
}

static int cmp_change(const void *pa, const void *pb)
{
    const struct opp_diff_row *a = pa, *b = pb;
    double ca = fabs(a->change), cb = fabs(b->change);
    if (ca != cb)
        return ca > cb ? -1 : 1;
    return cmp_identity(a->key, a->device_type, a->shapes, b->key, b->device_type, b->shapes);
}

int opp_diff_aggs(struct opp_agg *a, struct opp_agg *b, int gpu, const struct opp_diff_opts *o,
                  struct opp_diff *d)
{
    memset(d, 0, sizeof *d);
    d->metric = o->metric;
    d->same_pct = o->same_given ? (o->same_pct > 0 ? o->same_pct : 0) : 1.0;
    d->same_ns = o->same_given ? (o->same_ns > 0 ? o->same_ns : 0) : 1000.0;
    d->gpu = gpu;
    d->agg_a = *a;
    d->agg_b = *b;
    memset(a, 0, sizeof *a);
    memset(b, 0, sizeof *b);
    struct opp_agg *A = &d->agg_a, *B = &d->agg_b;
    if (A->nrows)
        qsort(A->rows, A->nrows, sizeof *A->rows, cmp_row_identity);
    if (B->nrows)
        qsort(B->rows, B->nrows, sizeof *B->rows, cmp_row_identity);
    d->rows = calloc(A->nrows + B->nrows + 1, sizeof *d->rows);
    if (!d->rows)
        goto oom;
    size_t i = 0, j = 0;
    while (i < A->nrows || j < B->nrows) {
        const struct opp_row *ra = i < A->nrows ? &A->rows[i] : NULL;
        const struct opp_row *rb = j < B->nrows ? &B->rows[j] : NULL;
        int c = !ra ? 1
                : !rb ? -1
                      : cmp_identity(ra->key, ra->device_type, ra->shapes_str, rb->key,
                                     rb->device_type, rb->shapes_str);
        struct opp_diff_row *r = &d->rows[d->n++];
        const struct opp_row *id = c <= 0 ? ra : rb;
        r->key = id->key;
        r->shapes = id->shapes_str;
        r->device_type = id->device_type;
        if (c <= 0) {
            r->in_a = 1;
            side_of(ra, &r->a);
            i++;
        }
        if (c >= 0) {
            r->in_b = 1;
            side_of(rb, &r->b);
            j++;
        }
        r->va = metric_of(d->metric, r->device_type, &r->a);
        r->vb = metric_of(d->metric, r->device_type, &r->b);
        r->change = r->vb - r->va;
        r->percent = percent(r->va, r->vb);
        r->cls = !r->in_a ? OPP_DIFF_ADDED
                 : !r->in_b ? OPP_DIFF_REMOVED
                            : opp_diff_classify(d, r->va, r->vb);
        d->classes[r->cls]++;
    }
    if (d->n)
        qsort(d->rows, d->n, sizeof *d->rows, cmp_change);
    int cuda = d->metric == OPP_DIFF_SELF_CUDA || d->metric == OPP_DIFF_CUDA_TOTAL;
    d->total_a = (double)(cuda ? A->self_cuda_time_total_ns : A->self_cpu_time_total_ns);
    d->total_b = (double)(cuda ? B->self_cuda_time_total_ns : B->self_cpu_time_total_ns);
    d->total_change = d->total_b - d->total_a;
    d->total_percent = percent(d->total_a, d->total_b);
    d->total_cls = opp_diff_classify(d, d->total_a, d->total_b);
    return 0;
oom:
    opp_diff_free(d);
    return -ENOMEM;
}

void opp_diff_free(struct opp_diff *d)
{
    free(d->rows);
    opp_agg_free(&d->agg_a);
    opp_agg_free(&d->agg_b);
    memset(d, 0, sizeof *d);
}

/* A regression's size in percent; INFINITY when A had none. */
static double slowed(enum opp_diff_class cls, double pct)
{
    if (cls != OPP_DIFF_SLOWER && cls != OPP_DIFF_ADDED)
        return -INFINITY;
    return isnan(pct) ? INFINITY : pct;
}

void opp_diff_regressions(const struct opp_diff *d, const struct opp_diff_gate *g,
                          struct opp_diff_gate_result *res)
{
    double top = -INFINITY;
    memset(res, 0, sizeof *res);
    double t = g->nnames ? -INFINITY : slowed(d->total_cls, d->total_percent);
    if (t > g->pct) {
        res->nreg++;
        top = t;
        res->worst_total = 1;
    }
    for (size_t i = 0; i < d->n; i++) {
        const struct opp_diff_row *r = &d->rows[i];
        int named = !g->nnames;
        for (size_t k = 0; k < g->nnames && !named; k++)
            named = !strcmp(g->names[k], r->key);
        /* without names, a new operator alone is not a regression: the
         * total says what it cost */
        if (!named || (!g->nnames && r->cls == OPP_DIFF_ADDED))
            continue;
        double s = slowed(r->cls, r->percent);
        if (!(s > g->pct))
            continue;
        if (r->vb < g->min_ns || r->b.count < g->min_calls) {
            res->under_floor++;
            continue;
        }
        res->nreg++;
        if (s > top) {
            top = s;
            res->worst = r;
            res->worst_total = 0;
        }
    }
}
