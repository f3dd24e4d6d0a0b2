/* The tests' loaded model's steps (loaded.h): the steps found among the
 * loaded calls by the rules step_stream.c follows as it reads. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle/loaded.h"
#include "ops.h"
#include "torch_rules.h"

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

/* A torch operator's scope (enum opp_torch_scope), -1 for other events. */
static int torch_scope(const struct opp_model *m, const struct opp_thread *t,
                       const struct opp_event *e)
{
    return opp_op_torch_scope(opp_event_func(m, t, e)->kind, opp_event_args(t, e), e->nargs);
}

static int is_range(const struct opp_model *m, const struct opp_thread *t,
                    const struct opp_event *e)
{
    return opp_call_is_range(opp_event_func(m, t, e)->kind, torch_scope(m, t, e));
}

static int range_step(struct opp_steps *out, size_t *cap, const struct opp_thread *t, size_t k,
                      size_t ti)
{
    const struct opp_event *e = &t->events[k];
    uint64_t wall = e->end_ns - e->begin_ns;
    struct opp_step st = {e->begin_ns, e->end_ns, wall - e->self_ns, cuda_of(t, k), (uint32_t)ti};
    return push(out, cap, st);
}

/* The top-level calls of thread t that begin in [from, to]: their CPU and
 * CUDA totals into st. */
static void top_level_in(const struct opp_thread *t, size_t first, size_t last, uint64_t from,
                         struct opp_step *st)
{
    for (size_t j = first; j <= last; j++) {
        const struct opp_event *c = &t->events[j];
        if (c->parent != OPP_NO_PARENT || c->begin_ns < from)
            continue;
        st->cpu_ns += c->end_ns - c->begin_ns;
        st->gpu_ns += cuda_of(t, j);
    }
}

int tu_steps_find(const struct opp_model *m, const struct opp_agg_opts *o, const char *name,
                  struct opp_steps *out)
{
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    /* Ranges when the name's calls are ranges (the first one decides). */
    int decided = 0;
    for (size_t ti = 0; ti < m->nthreads && !decided; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        for (size_t k = 0; k < t->nevents; k++)
            if (!strcmp(opp_model_str(m, t->events[k].name), name)) {
                out->ranges = is_range(m, t, &t->events[k]);
                out->found = (struct opp_step_name){.named = 1, .proc = t->proc};
                decided = 1;
                break;
            }
    }
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        if (!opp_agg_selects(m, o, t->proc, (uint32_t)ti))
            continue;
        for (size_t k = 0; k < t->nevents && !out->found.held; k++)
            out->found.held = !strcmp(opp_model_str(m, t->events[k].name), name);
        if (out->ranges) {
            for (size_t k = 0; k < t->nevents; k++)
                if (!strcmp(opp_model_str(m, t->events[k].name), name) &&
                    range_step(out, &cap, t, k, ti))
                    return -ENOMEM;
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
            if (have_prev && e->end_ns <= prev_end)
                continue; /* inside the one before in time: its end marks the step */
            if (have_prev) {
                struct opp_step st = {prev_end, e->end_ns, 0, 0, (uint32_t)ti};
                top_level_in(t, from, k, prev_end, &st);
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

static int prefixed(const struct opp_model *m, const struct opp_event *e, const char *p)
{
    return !strncmp(opp_model_str(m, e->name), p, strlen(p));
}

/* Whether any selected thread has an event that pick says is one. */
static const struct opp_event *find_any(const struct opp_model *m, const struct opp_agg_opts *o,
                                        int (*pick)(const struct opp_model *,
                                                    const struct opp_thread *,
                                                    const struct opp_event *),
                                        const struct opp_thread **tp)
{
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        if (!opp_agg_selects(m, o, t->proc, (uint32_t)ti))
            continue;
        for (size_t k = 0; k < t->nevents; k++)
            if (pick(m, t, &t->events[k])) {
                *tp = t;
                return &t->events[k];
            }
    }
    return NULL;
}

static int is_profiler_step(const struct opp_model *m, const struct opp_thread *t,
                            const struct opp_event *e)
{
    (void)t;
    return prefixed(m, e, OPP_PROFILER_STEP);
}

/* An optimizer's step inside no other's (a wrapping optimizer, Lookahead
 * or ZeRO, steps its inner one: one step per iteration). */
static int is_optimizer_step(const struct opp_model *m, const struct opp_thread *t,
                             const struct opp_event *e)
{
    if (torch_scope(m, t, e) != OPP_TORCH_SCOPE_USER || !prefixed(m, e, OPP_OPTIMIZER_STEP))
        return 0;
    for (uint32_t p = e->parent; p != OPP_NO_PARENT; p = t->events[p].parent)
        if (prefixed(m, &t->events[p], OPP_OPTIMIZER_STEP))
            return 0;
    return 1;
}

/* An nn.Module forward inside no other. */
static int is_outer_module(const struct opp_model *m, const struct opp_thread *t,
                           const struct opp_event *e)
{
    if (torch_scope(m, t, e) != OPP_TORCH_SCOPE_MODULE)
        return 0;
    for (uint32_t p = e->parent; p != OPP_NO_PARENT; p = t->events[p].parent)
        if (torch_scope(m, t, &t->events[p]) == OPP_TORCH_SCOPE_MODULE)
            return 0;
    return 1;
}

/* Training: step k ends where the thread's k-th optimizer step ends and
 * begins where step k-1 ended (data loading included, as in torch's
 * ProfilerStep); the first begins at the thread's first top-level label or
 * nn.Module forward (not at the set-up before the loop). */
static int training_steps(const struct opp_model *m, const struct opp_thread *t, size_t ti,
                          struct opp_steps *out, size_t *cap)
{
    uint64_t from_ns = UINT64_MAX;
    size_t from = 0;
    for (size_t k = 0; k < t->nevents; k++) {
        const struct opp_event *e = &t->events[k];
        int sc = torch_scope(m, t, e);
        if (from_ns == UINT64_MAX && e->parent == OPP_NO_PARENT &&
            (sc == OPP_TORCH_SCOPE_USER || sc == OPP_TORCH_SCOPE_MODULE)) {
            from_ns = e->begin_ns;
            from = k;
        }
        if (!is_optimizer_step(m, t, e))
            continue;
        if (from_ns == UINT64_MAX) /* no label or module before it: the step itself */
            from_ns = e->begin_ns, from = k;
        struct opp_step st = {from_ns, e->end_ns, 0, 0, (uint32_t)ti};
        top_level_in(t, from, k, from_ns, &st);
        if (!st.cpu_ns) /* a step nested in a label: the label began before from_ns */
            st.cpu_ns = e->end_ns - e->begin_ns;
        if (push(out, cap, st))
            return -ENOMEM;
        from_ns = e->end_ns;
        from = k + 1;
    }
    return 0;
}

int tu_steps_default(const struct opp_model *m, const struct opp_agg_opts *o, struct opp_steps *out,
                     char *what, size_t cap_what)
{
    memset(out, 0, sizeof *out);
    const struct opp_thread *t0;
    const struct opp_event *e;
    int (*pick)(const struct opp_model *, const struct opp_thread *, const struct opp_event *);
    if ((e = find_any(m, o, is_profiler_step, &t0))) {
        opp_steps_default_what(OPP_STEPS_PROFILER, NULL, what, cap_what);
        pick = is_profiler_step;
    } else if ((e = find_any(m, o, is_optimizer_step, &t0))) {
        opp_steps_default_what(OPP_STEPS_TRAINING, opp_model_str(m, e->name), what, cap_what);
        pick = NULL;
    } else if ((e = find_any(m, o, is_outer_module, &t0))) {
        opp_steps_default_what(OPP_STEPS_INFERENCE, opp_model_str(m, e->name), what, cap_what);
        pick = is_outer_module;
    } else {
        opp_steps_default_what(OPP_STEPS_NONE, NULL, what, cap_what);
        return 0;
    }
    out->ranges = pick != NULL;
    size_t cap = 0;
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        if (!opp_agg_selects(m, o, t->proc, (uint32_t)ti))
            continue;
        if (!pick) {
            if (training_steps(m, t, ti, out, &cap))
                return -ENOMEM;
            continue;
        }
        for (size_t k = 0; k < t->nevents; k++)
            if (pick(m, t, &t->events[k]) && range_step(out, &cap, t, k, ti))
                return -ENOMEM;
    }
    return 0;
}

int tu_profiler_windows(const struct opp_model *m, struct opp_window **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    struct opp_pstep *ps = NULL;
    size_t np = 0, cap = 0;
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        for (size_t k = 0; k < t->nevents; k++) {
            uint64_t num;
            if (!opp_profiler_step_number(opp_model_str(m, t->events[k].name), &num))
                continue;
            if (np == cap) {
                size_t c = cap ? cap * 2 : 64;
                struct opp_pstep *p = reallocarray(ps, c, sizeof *p);
                if (!p) {
                    free(ps);
                    return -ENOMEM;
                }
                ps = p;
                cap = c;
            }
            ps[np++] = (struct opp_pstep){num, t->events[k].begin_ns, t->events[k].end_ns};
        }
    }
    int rc = opp_profiler_windows_of(ps, np, out, n);
    free(ps);
    return rc;
}
