/* A summary trace read as a pass (pass.h): the model loaded whole
 * (load.c), each read handing each thread's nodes over as counted calls,
 * children first. */
#include "analysis/pass.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pass_internal.h"
#include "ops.h"

/* Node i of thread ti (of the model m) as a counted call, nkids of its
 * children handed over before it. */
static struct opp_pass_call node_call(const struct opp_model *m, uint32_t ti, uint32_t i,
                                      uint32_t seq, uint32_t nkids, uint64_t at)
{
    const struct opp_thread *t = &m->threads[ti];
    const struct opp_event *e = &t->events[i];
    uint32_t kind = opp_event_func(m, t, e)->kind;
    const uint64_t *args = opp_event_args(t, e);
    struct opp_pass_call x = {.end = e->end_ns,
                              .kids_ns = e->end_ns - e->self_ns,
                              .thread = ti,
                              .seq = seq,
                              .name = e->name,
                              .kind = kind,
                              .folded = OPP_PASS_NONE,
                              .scope = opp_op_torch_scope(kind, args, e->nargs),
                              .depth = e->depth,
                              .fn = e->fn,
                              .nkids = nkids,
                              .nargs = e->nargs,
                              .args = args,
                              .at = at,
                              .stat = &t->stat[i]};
    if (x.scope == OPP_TORCH_SCOPE_USER || x.scope == OPP_TORCH_SCOPE_MODULE)
        x.flags |= OPP_PASS_LABEL;
    return x;
}

/* Thread ti's nodes handed to c, each after its children (in the order
 * written), each root to top after it; kid, next, nkids and up: room for
 * a node's first child, next sibling, children and a path. 0, or a
 * consumer's -errno. */
static int summary_thread(struct opp_pass *p, const struct opp_pass_consumer *c, uint32_t ti,
                          uint32_t *kid, uint32_t *next, uint32_t *nkids, uint32_t *up)
{
    const struct opp_model *m = p->meta.ld.m;
    const struct opp_thread *t = &m->threads[ti];
    uint32_t n = (uint32_t)t->nevents, seq = 0;
    for (uint32_t i = 0; i < n; i++) {
        kid[i] = next[i] = OPP_NO_PARENT;
        nkids[i] = 0;
    }
    for (uint32_t i = n; i-- > 0;) { /* prepended: in the order written */
        uint32_t par = t->events[i].parent;
        if (par != OPP_NO_PARENT) {
            next[i] = kid[par];
            kid[par] = i;
            nkids[par]++;
        }
    }
    for (uint32_t r = 0; r < n; r++) {
        if (t->events[r].parent != OPP_NO_PARENT)
            continue;
        /* up[0..depth): the path down; kid[] of each consumed as it is walked */
        uint32_t depth = 0, at = r;
        for (;;) {
            while (kid[at] != OPP_NO_PARENT) {
                up[depth++] = at;
                uint32_t k = kid[at];
                kid[at] = next[k];
                next[k] = OPP_NO_PARENT;
                at = k;
            }
            struct opp_pass_call x = node_call(m, ti, at, seq++, nkids[at], p->at++);
            int rc = c->call ? c->call(c->ctx, &x) : 0;
            if (!rc && at == r && c->top)
                rc = c->top(c->ctx, &x);
            if (rc)
                return rc;
            if (at == r)
                break;
            at = up[--depth];
        }
    }
    return 0;
}

/* A read of a summary trace: its nodes as counted calls handed to c
 * (opp_pass_run). */
static int summary_run(struct opp_pass *p, const struct opp_pass_consumer *c, char *err,
                       size_t errlen)
{
    const struct opp_model *m = p->meta.ld.m;
    size_t most = 1;
    for (size_t i = 0; i < m->nthreads; i++)
        if (m->threads[i].nevents > most)
            most = m->threads[i].nevents;
    uint32_t *kid = malloc(most * sizeof *kid), *next = malloc(most * sizeof *next),
             *nkids = malloc(most * sizeof *nkids), *up = malloc(most * sizeof *up);
    int rc = kid && next && nkids && up ? 0 : -ENOMEM;
    p->at = 0;
    p->reads++;
    if (!rc && c->begin)
        c->begin(c->ctx);
    for (size_t i = 0; i < m->nthreads && !rc; i++)
        if (m->threads[i].stat)
            rc = summary_thread(p, c, (uint32_t)i, kid, next, nkids, up);
    free(kid);
    free(next);
    free(nkids);
    free(up);
    if (rc == -ENOMEM || rc == -EPROTO || !rc)
        return opp_pass_said(rc ? -1 : 0, rc, err, errlen);
    snprintf(err, errlen, "cannot read %s: %s", p->path, strerror(-rc));
    return -1;
}

struct opp_pass *opp_pass_open_summary(const char *const *paths, size_t npaths, char *err,
                                       size_t errlen)
{
    struct opp_pass *p = opp_pass_new(paths, npaths, err, errlen);
    if (!p)
        return NULL;
    p->run = summary_run;
    if (!(p->meta.ld.m = opp_model_load_many(paths, npaths, err, errlen))) {
        free(p);
        return NULL;
    }
    return p;
}
