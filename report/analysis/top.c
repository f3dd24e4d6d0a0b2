/* `opprof top`'s numbers (top.h): each snapshot's rows added up by group
 * key (sorted, then merged), the interval the difference of two. */
#include "analysis/top.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/step_times.h"

#define OPP_TOP_SORT_NAME_STR(e, s) s,
static const char *const sort_names[] = {OPP_TOP_SORT_KEYS(OPP_TOP_SORT_NAME_STR)};

const char *opp_top_sort_name(enum opp_top_sort s)
{
    return (unsigned)s < OPP_TOP_NSORT ? sort_names[s] : NULL;
}

const char *opp_top_group_name(enum opp_top_group g)
{
    static const char *const names[] = {"name", "library", "layer"};
    return (unsigned)g < OPP_TOP_NGROUP ? names[g] : NULL;
}

struct grouped {
    const char *name, *lib;
    struct opp_top_sums sum;
};

static int cmp_key(const struct grouped *a, const struct grouped *b)
{
    int c = strcmp(a->name, b->name);
    return c ? c : strcmp(a->lib, b->lib);
}

static int cmp_grouped(const void *a, const void *b)
{
    return cmp_key(a, b);
}

static void add(struct opp_top_sums *to, const struct opp_top_sums *x)
{
    to->calls += x->calls;
    to->self_ns += x->self_ns;
    to->total_ns += x->total_ns;
    to->gpu_ns += x->gpu_ns;
    to->mem += x->mem;
}

/* s's rows by group key, sorted by it, one entry each: *n of them. */
static struct grouped *group(const struct opp_top_snap *s, enum opp_top_group g, size_t *n)
{
    struct grouped *v = malloc((s->nrows ? s->nrows : 1) * sizeof *v);
    if (!v)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < s->nrows; i++) {
        const struct opp_top_row *r = &s->rows[i];
        int layer = g == OPP_TOP_BY_LAYER;
        if (layer ? !r->module : r->module == 2) /* the time outside modules: a layer's only */
            continue;
        v[m++] = (struct grouped){
            g == OPP_TOP_BY_LIB ? r->lib : r->name,
            r->lib,
            {r->calls, layer ? r->layer_ns : r->self_ns, r->total_ns, r->gpu_ns, r->mem}};
    }
    qsort(v, m, sizeof *v, cmp_grouped);
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        if (k && !cmp_key(&v[k - 1], &v[i]))
            add(&v[k - 1].sum, &v[i].sum);
        else
            v[k++] = v[i];
    }
    *n = k;
    return v;
}

static uint64_t sub(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

static uint64_t key_of(const struct opp_top_sums *x, enum opp_top_sort s)
{
    switch (s) {
    case OPP_TOP_SORT_SELF:
        return x->self_ns;
    case OPP_TOP_SORT_CALLS:
        return x->calls;
    case OPP_TOP_SORT_GPU:
        return x->gpu_ns;
    case OPP_TOP_SORT_MEM:
        return x->mem > 0 ? (uint64_t)x->mem : 0;
    default:
        return x->total_ns;
    }
}

/* The interval's key, then the run's, largest first; then the name. */
static int cmp_line(const void *a, const void *b, void *ctx)
{
    const struct opp_top_line *x = a, *y = b;
    enum opp_top_sort sort_by = *(const enum opp_top_sort *)ctx;
    if (sort_by != OPP_TOP_SORT_NAME) {
        uint64_t kx = key_of(&x->last, sort_by), ky = key_of(&y->last, sort_by);
        if (kx != ky)
            return kx < ky ? 1 : -1;
        kx = key_of(&x->all, sort_by), ky = key_of(&y->all, sort_by);
        if (kx != ky)
            return kx < ky ? 1 : -1;
    }
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->lib, y->lib);
}

/* The latencies of the steps that ended in the interval (the newest
 * cur->nlat at most). */
static void interval_steps(const struct opp_top_snap *prev, const struct opp_top_snap *cur,
                           struct opp_top_view *v)
{
    v->steps = cur->steps;
    v->last_steps = sub(cur->steps, prev ? prev->steps : 0);
    uint64_t n = v->last_steps < cur->nlat ? v->last_steps : cur->nlat;
    uint64_t lat[OPP_TOP_LAT_MAX];
    memcpy(lat, cur->lat_ns + (cur->nlat - n), n * sizeof *lat);
    struct opp_dist d;
    opp_dist_of(lat, (size_t)n, &d);
    v->p50_ns = d.p50;
    v->p90_ns = d.p90;
}

int opp_top_compute(const struct opp_top_snap *prev, const struct opp_top_snap *cur,
                    enum opp_top_group g, enum opp_top_sort s, struct opp_top_view *out)
{
    memset(out, 0, sizeof *out);
    size_t nc = 0, np = 0;
    struct grouped *c = group(cur, g, &nc);
    struct grouped *p = prev ? group(prev, g, &np) : NULL;
    out->lines = malloc((nc ? nc : 1) * sizeof *out->lines);
    if (!c || (prev && !p) || !out->lines) {
        free(c);
        free(p);
        opp_top_view_free(out);
        return -ENOMEM;
    }
    size_t j = 0;
    for (size_t i = 0; i < nc; i++) {
        while (j < np && cmp_key(&p[j], &c[i]) < 0)
            j++;
        const struct opp_top_sums *b = j < np && !cmp_key(&p[j], &c[i]) ? &p[j].sum : NULL;
        struct opp_top_line *l = &out->lines[out->n++];
        l->name = c[i].name;
        l->lib = c[i].lib;
        l->all = c[i].sum;
        l->last = l->all;
        if (b) {
            l->last.calls = sub(l->all.calls, b->calls);
            l->last.self_ns = sub(l->all.self_ns, b->self_ns);
            l->last.total_ns = sub(l->all.total_ns, b->total_ns);
            l->last.gpu_ns = sub(l->all.gpu_ns, b->gpu_ns);
            l->last.mem = l->all.mem - b->mem;
        }
        add(&out->last_sum, &l->last);
        add(&out->all_sum, &l->all);
        out->gpu |= l->all.gpu_ns > 0;
        out->mem |= l->all.mem != 0 || l->last.mem != 0;
    }
    free(c);
    free(p);
    qsort_r(out->lines, out->n, sizeof *out->lines, cmp_line, &s);
    out->secs = prev && cur->now_ns > prev->now_ns ? (double)(cur->now_ns - prev->now_ns) / 1e9 : 0;
    out->idle = prev && !out->last_sum.calls;
    out->events = cur->events;
    out->last_events = sub(cur->events, prev ? prev->events : 0);
    out->dropped = cur->dropped;
    out->interrupted = cur->interrupted < cur->dropped ? cur->interrupted : cur->dropped;
    out->procs = cur->procs;
    out->threads = cur->threads;
    out->recording = cur->recording;
    out->from_start = cur->from_start != 0;
    out->left_out = cur->left_out;
    out->step_name = cur->step_name;
    out->gpu |= cur->gpu_ns > 0;
    interval_steps(prev, cur, out);
    return 0;
}

void opp_top_view_free(struct opp_top_view *v)
{
    free(v->lines);
    v->lines = NULL;
    v->n = 0;
}
