/* Steps and latency, and the windows a schedule recorded (see step_times.h). */
#include "analysis/step_times.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

static int push(struct opp_steps *s, size_t *cap, struct opp_step st)
{
    if (s->n == *cap) {
        size_t n = *cap ? *cap * 2 : 64;
        void *p = reallocarray(s->steps, n, sizeof *s->steps);
        if (!p)
            return -ENOMEM;
        s->steps = p;
        *cap = n;
    }
    s->steps[s->n++] = st;
    return 0;
}

static uint64_t cuda_of(const struct opp_thread *t, size_t k)
{
    return t->gpu ? t->gpu[k].cuda_ns : 0;
}

int opp_steps_find(const struct opp_model *m, const struct opp_agg_opts *o, const char *name,
                   struct opp_steps *out)
{
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    /* Ranges when the name's calls are NVTX ranges (the first one decides). */
    int decided = 0;
    for (size_t ti = 0; ti < m->nthreads && !decided; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        for (size_t k = 0; k < t->nevents; k++)
            if (!strcmp(opp_model_str(m, t->events[k].name), name)) {
                out->ranges = opp_kind_base(opp_event_func(m, t, &t->events[k])->kind) == OPP_OP_NVTX;
                decided = 1;
                break;
            }
    }
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        if (!opp_agg_selects(m, o, t->proc, (uint32_t)ti))
            continue;
        if (out->ranges) {
            for (size_t k = 0; k < t->nevents; k++) {
                const struct opp_event *e = &t->events[k];
                if (strcmp(opp_model_str(m, e->name), name))
                    continue;
                uint64_t wall = e->end_ns - e->begin_ns;
                struct opp_step st = {e->begin_ns, e->end_ns, wall - e->self_ns, cuda_of(t, k),
                                      (uint32_t)ti};
                if (push(out, &cap, st))
                    return -ENOMEM;
            }
            continue;
        }
        /* Boundaries: events are in tree order (begin ascending), so the
         * calls of a step are those beginning after the previous boundary's
         * end and up to this boundary's begin, plus the boundary. */
        uint64_t prev_end = 0;
        int have_prev = 0;
        size_t from = 0;
        for (size_t k = 0; k < t->nevents; k++) {
            const struct opp_event *e = &t->events[k];
            if (strcmp(opp_model_str(m, e->name), name))
                continue;
            if (have_prev) {
                struct opp_step st = {prev_end, e->end_ns, 0, 0, (uint32_t)ti};
                for (size_t j = from; j <= k; j++) {
                    const struct opp_event *c = &t->events[j];
                    if (c->parent != OPP_NO_PARENT || c->begin_ns < prev_end)
                        continue; /* only top-level calls: their totals hold the rest */
                    st.cpu_ns += c->end_ns - c->begin_ns;
                    st.gpu_ns += cuda_of(t, j);
                }
                if (push(out, &cap, st))
                    return -ENOMEM;
            }
            prev_end = e->end_ns;
            have_prev = 1;
            from = k + 1;
        }
    }
    return 0;
}

void opp_steps_free(struct opp_steps *s)
{
    free(s->steps);
    s->steps = NULL;
    s->n = 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t rank_pct(const uint64_t *v, size_t n, unsigned pct)
{
    size_t r = (n * pct + 99) / 100; /* nearest rank, 1-based */
    return v[r ? r - 1 : 0];
}

void opp_dist_of(uint64_t *v, size_t n, struct opp_dist *d)
{
    memset(d, 0, sizeof *d);
    if (!n)
        return;
    qsort(v, n, sizeof *v, cmp_u64);
    unsigned __int128 sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    d->count = n;
    d->mean = (uint64_t)(sum / n);
    d->p50 = rank_pct(v, n, 50);
    d->p90 = rank_pct(v, n, 90);
    d->p99 = rank_pct(v, n, 99);
    d->max = v[n - 1];
}

struct pstep {
    uint64_t n, begin, end;
};

static int cmp_pstep(const void *a, const void *b)
{
    const struct pstep *x = a, *y = b;
    return x->n != y->n ? (x->n > y->n) - (x->n < y->n) : (x->begin > y->begin) - (x->begin < y->begin);
}

int opp_profiler_windows(const struct opp_model *m, struct opp_window **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    struct pstep *ps = NULL;
    size_t np = 0, cap = 0;
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        for (size_t k = 0; k < t->nevents; k++) {
            const char *name = opp_model_str(m, t->events[k].name), *end;
            if (strncmp(name, "ProfilerStep#", 13) || !name[13])
                continue;
            uint64_t num = 0;
            for (end = name + 13; *end >= '0' && *end <= '9' && num < UINT64_MAX / 10; end++)
                num = num * 10 + (uint64_t)(*end - '0');
            if (*end)
                continue;
            if (np == cap) {
                size_t c = cap ? cap * 2 : 64;
                struct pstep *p = reallocarray(ps, c, sizeof *p);
                if (!p) {
                    free(ps);
                    return -ENOMEM;
                }
                ps = p;
                cap = c;
            }
            ps[np++] = (struct pstep){num, t->events[k].begin_ns, t->events[k].end_ns};
        }
    }
    if (!np)
        return 0;
    qsort(ps, np, sizeof *ps, cmp_pstep);
    struct opp_window *w = calloc(np, sizeof *w);
    if (!w) {
        free(ps);
        return -ENOMEM;
    }
    size_t nw = 0;
    for (size_t i = 0; i < np; i++) {
        struct opp_window *cur = nw ? &w[nw - 1] : NULL;
        if (cur && (ps[i].n == cur->last_step || ps[i].n == cur->last_step + 1)) {
            cur->last_step = ps[i].n;
            cur->begin_ns = ps[i].begin < cur->begin_ns ? ps[i].begin : cur->begin_ns;
            cur->end_ns = ps[i].end > cur->end_ns ? ps[i].end : cur->end_ns;
        } else {
            w[nw++] = (struct opp_window){ps[i].n, ps[i].n, ps[i].begin, ps[i].end};
        }
    }
    free(ps);
    *out = w;
    *n = nw;
    return 0;
}

uint32_t opp_summary_windows(const struct opp_model *m)
{
    uint32_t nw = 0;
    for (size_t i = 0; i < m->nthreads; i++)
        for (size_t k = 0; m->threads[i].stat && k < m->threads[i].nevents; k++)
            if (m->threads[i].stat[k].window > nw)
                nw = m->threads[i].stat[k].window;
    return nw;
}
