/* Call trees of one thread's events (see thread_tree.h). */
#ifndef _GNU_SOURCE /* qsort_r */
#define _GNU_SOURCE
#endif
#include "analysis/thread_tree.h"

#include <errno.h>
#include <stdlib.h>

static int cmp_tree_order(const void *pa, const void *pb, void *ctx)
{
    const struct opp_event *ev = ctx;
    uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
    const struct opp_event *a = &ev[ia], *b = &ev[ib];
    if (a->begin_ns != b->begin_ns)
        return a->begin_ns < b->begin_ns ? -1 : 1;
    if (a->end_ns != b->end_ns)
        return a->end_ns > b->end_ns ? -1 : 1;
    if (a->depth != b->depth)
        return a->depth < b->depth ? -1 : 1;
    return ia < ib ? -1 : ia > ib;
}

/* ev[i] = old ev[perm[i]] for every i, in place, following the cycles. */
static void apply_perm(struct opp_event *ev, uint32_t *perm, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (perm[i] == i)
            continue;
        struct opp_event first = ev[i];
        size_t j = i;
        while (perm[j] != i) {
            size_t k = perm[j];
            ev[j] = ev[k];
            perm[j] = (uint32_t)j;
            j = k;
        }
        ev[j] = first;
        perm[j] = (uint32_t)j;
    }
}

/* Whether e (which sorts after p) nests inside p. */
static int nests_in(const struct opp_event *e, const struct opp_event *p)
{
    if (e->end_ns > p->end_ns || e->begin_ns > p->end_ns)
        return 0;
    if (e->begin_ns == p->end_ns)
        return e->depth > p->depth;
    return 1;
}

int opp_tree_build(struct opp_event *ev, size_t n)
{
    if (n >= OPP_NO_PARENT)
        return -EOVERFLOW;
    if (n == 0)
        return 0;
    uint32_t *perm = malloc(n * sizeof *perm);
    if (!perm)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    qsort_r(perm, n, sizeof *perm, cmp_tree_order, ev);
    apply_perm(ev, perm, n);

    /* perm is free again: it becomes the stack of the events that may still
     * contain the next one (at most n deep). */
    uint32_t *stack = perm;
    size_t depth = 0;
    for (size_t i = 0; i < n; i++) {
        ev[i].parent = OPP_NO_PARENT;
        while (depth > 0) {
            uint32_t p = stack[depth - 1];
            if (nests_in(&ev[i], &ev[p])) {
                ev[i].parent = p;
                break;
            }
            depth--;
        }
        stack[depth++] = (uint32_t)i;
    }
    free(stack);

    /* Children come after their parent: walking backwards, each event's
     * self_ns already holds the sum of its children's durations. */
    for (size_t i = 0; i < n; i++)
        ev[i].self_ns = 0;
    for (size_t i = n; i-- > 0;) {
        uint64_t dur = opp_event_dur(&ev[i]);
        uint64_t children = ev[i].self_ns;
        ev[i].self_ns = dur > children ? dur - children : 0;
        if (ev[i].parent != OPP_NO_PARENT)
            ev[ev[i].parent].self_ns += dur;
    }
    return 0;
}

/* Each event marked folded in kids, with the index after compaction of
 * its nearest ancestor not folded. */
static int lift_folded(const struct opp_event *ev, size_t cnt, const uint8_t *kids,
                       uint8_t folded,
                       int (*lift)(const struct opp_event *child, uint32_t owner, void *ctx),
                       void *ctx)
{
    uint32_t *pos = malloc(cnt * sizeof *pos);
    if (!pos)
        return -1;
    uint32_t kept = 0;
    for (size_t i = 0; i < cnt; i++) {
        pos[i] = kept;
        kept += !(kids[i] & folded);
    }
    int rc = 0;
    for (size_t i = 0; i < cnt && !rc; i++) {
        if (!(kids[i] & folded))
            continue;
        uint32_t p = ev[i].parent;
        while (kids[p] & folded)
            p = ev[p].parent;
        rc = lift(&ev[i], pos[p], ctx);
    }
    free(pos);
    return rc;
}

int opp_tree_fold(struct opp_event *ev, size_t *n,
                  int (*folds)(const struct opp_event *child, const struct opp_event *parent,
                               unsigned counted, void *ctx),
                  int (*uncounted)(const struct opp_event *child, void *ctx),
                  int (*lift)(const struct opp_event *child, uint32_t owner, void *ctx), void *ctx)
{
    size_t cnt = *n;
    if (cnt < 2)
        return 0;
    /* children per event: 0, 1, or 2 for "more"; then FOLDED marks the
     * events to remove, all decided before the array is compacted (which
     * moves the parents that later decisions would read) */
    enum { FOLDED = 0x80, COUNT = 0x7f };
    uint8_t *kids = calloc(cnt, 1);
    if (!kids)
        return -ENOMEM;
    for (size_t i = 0; i < cnt; i++)
        if (ev[i].parent != OPP_NO_PARENT && kids[ev[i].parent] < 2 &&
            !(uncounted && uncounted(&ev[i], ctx)))
            kids[ev[i].parent]++;
    for (size_t i = 0; i < cnt; i++) {
        uint32_t p = ev[i].parent;
        if (p != OPP_NO_PARENT && !(uncounted && uncounted(&ev[i], ctx)) &&
            folds(&ev[i], &ev[p], kids[p] & COUNT, ctx))
            kids[i] |= FOLDED; /* folded into its parent */
    }
    if (lift && lift_folded(ev, cnt, kids, FOLDED, lift, ctx)) {
        free(kids);
        return -ENOMEM;
    }
    size_t out = 0;
    for (size_t i = 0; i < cnt; i++)
        if (!(kids[i] & FOLDED))
            ev[out++] = ev[i];
    free(kids);
    if (out == cnt)
        return 0;
    *n = out;
    return opp_tree_build(ev, out);
}
