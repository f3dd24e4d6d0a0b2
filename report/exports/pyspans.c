/* Python function slices from sampled frames (see pyspans.h). */
#include "exports/pyspans.h"

#include <stdlib.h>

#include "analysis/loader.h"

#define DEPTH_MAX 32 /* frames followed per thread; deeper ones are not sliced */

struct span {
    uint32_t frame;
    uint64_t begin, end;
};

struct opp_pyspans_thread {
    uint64_t key;
    int n;
    struct span s[DEPTH_MAX];
    UT_hash_handle hh;
};

/* End the slices of t from depth k up, innermost first. */
static int close_from(struct opp_pyspans_thread *t, int k, opp_pyspan_emit *emit, void *ctx)
{
    while (t->n > k) {
        const struct span *s = &t->s[--t->n];
        int rc = emit(ctx, t->key, s->frame, s->begin, s->end);
        if (rc)
            return rc;
    }
    return 0;
}

int opp_pyspans_add(struct opp_pyspans *ps, uint64_t thread, const uint32_t *frames, int n,
                    uint64_t begin, uint64_t end, opp_pyspan_emit *emit, void *ctx)
{
    struct opp_pyspans_thread *t;
    HASH_FIND(hh, ps->threads, &thread, sizeof thread, t);
    if (!t) {
        if (!(t = calloc(1, sizeof *t)))
            return -1;
        t->key = thread;
        if (OPP_HASH_ADD(ps->threads, key, sizeof t->key, t)) {
            free(t);
            return -1;
        }
    }
    if (n > DEPTH_MAX)
        n = DEPTH_MAX;
    int k = 0;
    while (k < n && k < t->n && t->s[k].frame == frames[k])
        k++;
    int rc = close_from(t, k, emit, ctx);
    if (rc)
        return rc;
    for (int i = 0; i < k; i++) {
        if (begin < t->s[i].begin)
            t->s[i].begin = begin;
        if (end > t->s[i].end)
            t->s[i].end = end;
    }
    for (int i = k; i < n; i++)
        t->s[t->n++] = (struct span){frames[i], begin, end};
    return 0;
}

int opp_pyspans_flush(struct opp_pyspans *ps, opp_pyspan_emit *emit, void *ctx)
{
    struct opp_pyspans_thread *t, *tmp;
    int rc = 0;
    HASH_ITER(hh, ps->threads, t, tmp) {
        if (!rc)
            rc = close_from(t, 0, emit, ctx);
        HASH_DEL(ps->threads, t);
        free(t);
    }
    return rc;
}
