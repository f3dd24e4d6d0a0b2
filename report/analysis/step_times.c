/* What the steps' readers share (see step_times.h): the program's own
 * steps said, the main process, latency, a schedule's windows. */
#include "analysis/step_times.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "torch_rules.h"

void opp_steps_default_what(enum opp_default_steps which, const char *name, char *what,
                            size_t cap_what)
{
    switch (which) {
    case OPP_STEPS_PROFILER:
        snprintf(what, cap_what, OPP_PROFILER_STEP "N");
        break;
    case OPP_STEPS_TRAINING:
        snprintf(what, cap_what, "training iterations (to each %s)", name);
        break;
    case OPP_STEPS_INFERENCE:
        snprintf(what, cap_what, "inferences (outermost nn.Module forwards: %s)", name);
        break;
    case OPP_STEPS_NONE:
        snprintf(what, cap_what, "none (no " OPP_PROFILER_STEP "N, optimizer step or nn.Module)");
        break;
    }
}

int opp_steps_main_process(const struct opp_model *m, struct opp_agg_opts *o, size_t ntraces)
{
    if (m->nprocs < 2 || o->filter_pid || o->filter_tid || o->filter_rank || ntraces > 1)
        return 0;
    for (size_t p = 0; p < m->nprocs; p++)
        if (m->procs[p].rank >= 0)
            return 0; /* ranks of a job: peers, each with its steps (--rank for one) */
    o->filter_pid = 1;
    o->pid = m->procs[0].pid;
    return 1;
}

int opp_step_name_missing(const struct opp_model *m, const struct opp_step_name *f,
                          const struct opp_agg_opts *o, int in_main, const char *name,
                          const char *trace, char *msg, size_t cap)
{
    if (!name || f->held)
        return 0;
    int n = snprintf(msg, cap, "--step '%s': no call of that name in ", name);
    size_t at = n > 0 && (size_t)n < cap ? (size_t)n : cap - 1;
    if (!f->named) {
        snprintf(msg + at, cap - at, "%s (`opprof report %s` lists its operators and ranges)",
                 trace, trace);
        return 1;
    }
    uint32_t pid = f->proc < m->nprocs ? m->procs[f->proc].pid : 0;
    if (in_main) {
        snprintf(msg + at, cap - at,
                 "pid %" PRIu32 ", the first process (pid %" PRIu32 " has some: --pid %" PRIu32 ")",
                 o->pid, pid, pid);
        return 1;
    }
    char sel[96] = "", *s = sel; /* what the filters select, as given */
    const char *sep = "";
    if (o->filter_pid)
        s += snprintf(s, sizeof sel - (size_t)(s - sel), "pid %" PRIu32, o->pid), sep = ", ";
    if (o->filter_tid)
        s += snprintf(s, sizeof sel - (size_t)(s - sel), "%sthread %" PRIu32, sep, o->tid),
            sep = ", ";
    if (o->filter_rank)
        snprintf(s, sizeof sel - (size_t)(s - sel), "%srank %" PRId64, sep, o->rank);
    snprintf(msg + at, cap - at, "%s (pid %" PRIu32 " has some)", sel, pid);
    return 1;
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

static int cmp_pstep(const void *a, const void *b)
{
    const struct opp_pstep *x = a, *y = b;
    return x->n != y->n ? (x->n > y->n) - (x->n < y->n) : (x->begin > y->begin) - (x->begin < y->begin);
}

int opp_profiler_step_number(const char *name, uint64_t *num)
{
    size_t at = sizeof OPP_PROFILER_STEP - 1;
    if (strncmp(name, OPP_PROFILER_STEP, at) || !name[at])
        return 0;
    const char *end;
    *num = 0;
    for (end = name + at; *end >= '0' && *end <= '9' && *num < UINT64_MAX / 10; end++)
        *num = *num * 10 + (uint64_t)(*end - '0');
    return !*end;
}

int opp_profiler_windows_of(struct opp_pstep *ps, size_t np, struct opp_window **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!np)
        return 0;
    qsort(ps, np, sizeof *ps, cmp_pstep);
    struct opp_window *w = calloc(np, sizeof *w);
    if (!w)
        return -ENOMEM;
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
