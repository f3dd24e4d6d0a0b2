/* The code-frame tree (codestack_tree.h). */
#ifndef _GNU_SOURCE /* qsort_r */
#define _GNU_SOURCE
#endif
#include "analysis/codestack_tree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/loader.h"
#include "analysis/symbolize.h"

#define FRAMES_MAX 32

struct name_ent {
    uint32_t id;
    UT_hash_handle hh; /* keyed by the string, t->names[id] */
};

struct node_ent {
    uint64_t key; /* parent << 32 | name */
    uint32_t node;
    UT_hash_handle hh;
};

/* Where the calls first made a node: the first call's place (thread,
 * then tree order), then the node's depth on its path. */
struct first {
    uint64_t begin, end;
    uint32_t thread, edepth, seq, depth;
};

struct opp_codetree_acc {
    struct opp_codetree *t;
    struct name_ent *names;
    struct node_ent *nodes;
    struct first *first; /* by node */
    size_t cap_names, cap_nodes, cap_first;
};

static int name_id(struct opp_codetree_acc *b, const char *s, uint32_t *id)
{
    struct name_ent *e;
    HASH_FIND_STR(b->names, s, e);
    if (e) {
        *id = e->id;
        return 0;
    }
    struct opp_codetree *t = b->t;
    if (opp_loader_grow((void **)&t->names, &b->cap_names, t->nnames + 1, sizeof *t->names) ||
        !(e = malloc(sizeof *e)) || !(t->names[t->nnames] = strdup(s))) {
        free(e);
        return -ENOMEM;
    }
    e->id = *id = t->nnames++;
    if (OPP_HASH_ADD_KEYPTR(b->names, t->names[e->id], strlen(t->names[e->id]), e)) {
        free(t->names[--t->nnames]);
        free(e);
        return -ENOMEM;
    }
    return 0;
}

/* a sorts before b: by thread, then tree order, then depth */
static int before(const struct first *a, const struct first *b)
{
    if (a->thread != b->thread)
        return a->thread < b->thread;
    if (a->begin != b->begin)
        return a->begin < b->begin;
    if (a->end != b->end)
        return a->end > b->end;
    if (a->edepth != b->edepth)
        return a->edepth < b->edepth;
    if (a->seq != b->seq)
        return a->seq < b->seq;
    return a->depth < b->depth;
}

static int node_of(struct opp_codetree_acc *b, uint32_t parent, uint32_t name,
                   const struct first *at, uint32_t *out)
{
    uint64_t key = (uint64_t)parent << 32 | name;
    struct node_ent *e;
    HASH_FIND(hh, b->nodes, &key, sizeof key, e);
    if (e) {
        *out = e->node;
        if (before(at, &b->first[e->node]))
            b->first[e->node] = *at;
        return 0;
    }
    struct opp_calltree *ct = &b->t->ct;
    if (opp_loader_grow((void **)&ct->nodes, &b->cap_nodes, ct->n + 1, sizeof *ct->nodes) ||
        opp_loader_grow((void **)&b->first, &b->cap_first, ct->n + 1, sizeof *b->first) ||
        !(e = malloc(sizeof *e)))
        return -ENOMEM;
    struct opp_ct_node *n = &ct->nodes[ct->n];
    memset(n, 0, sizeof *n);
    n->parent = parent;
    n->name = name;
    n->depth = parent == OPP_CT_ROOT ? 0 : ct->nodes[parent].depth + 1;
    b->first[ct->n] = *at;
    e->key = key;
    e->node = *out = (uint32_t)ct->n++;
    if (OPP_HASH_ADD(b->nodes, key, sizeof key, e)) {
        ct->n--;
        free(e);
        return -ENOMEM;
    }
    return 0;
}

struct opp_codetree_acc *opp_codetree_acc_new(struct opp_codetree *t)
{
    memset(t, 0, sizeof *t);
    struct opp_codetree_acc *x = calloc(1, sizeof *x);
    if (x)
        x->t = t;
    return x;
}

int opp_codetree_acc_add(struct opp_codetree_acc *x, struct opp_code *code,
                         const struct opp_codetree_call *c)
{
    const char *frames[FRAMES_MAX];
    int n = opp_code_frames(code, c->proc, c->stack, frames, FRAMES_MAX);
    struct first at = {
        .begin = c->begin, .end = c->end, .thread = c->thread, .edepth = c->depth, .seq = c->seq};
    uint32_t node = OPP_CT_ROOT, id;
    int rc;
    for (int k = n; k-- > 0; at.depth++) /* outermost first */
        if ((rc = name_id(x, frames[k], &id)) || (rc = node_of(x, node, id, &at, &node)))
            return rc;
    if ((rc = name_id(x, c->name, &id)) || (rc = node_of(x, node, id, &at, &node)))
        return rc;
    struct opp_ct_node *y = &x->t->ct.nodes[node];
    y->calls++;
    y->self_ns += c->self_ns;
    y->total_ns += c->total_ns;
    y->self_cuda_ns += c->self_cuda_ns;
    y->cuda_total_ns += c->cuda_total_ns;
    return 0;
}

static void acc_free(struct opp_codetree_acc *x)
{
    OPP_HASH_FREE(x->names);
    OPP_HASH_FREE(x->nodes);
    free(x->first);
    free(x);
}

static int cmp_first(const void *pa, const void *pb, void *ctx)
{
    const struct first *f = ctx;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return before(&f[a], &f[b]) ? -1 : before(&f[b], &f[a]) ? 1 : 0;
}

int opp_codetree_acc_finish(struct opp_codetree_acc *x)
{
    struct opp_calltree *ct = &x->t->ct;
    size_t n = ct->n;
    uint32_t *order = malloc((n ? n : 1) * sizeof *order), *at = malloc((n ? n : 1) * sizeof *at);
    struct opp_ct_node *nodes = malloc((n ? n : 1) * sizeof *nodes);
    int rc = order && at && nodes ? 0 : -ENOMEM;
    if (!rc) {
        /* a parent's first call is its child's, or earlier: it stays first */
        for (size_t i = 0; i < n; i++)
            order[i] = (uint32_t)i;
        qsort_r(order, n, sizeof *order, cmp_first, x->first);
        for (size_t i = 0; i < n; i++)
            at[order[i]] = (uint32_t)i;
        for (size_t i = 0; i < n; i++) {
            nodes[i] = ct->nodes[order[i]];
            if (nodes[i].parent != OPP_CT_ROOT)
                nodes[i].parent = at[nodes[i].parent];
        }
        free(ct->nodes);
        ct->nodes = nodes;
        nodes = NULL;
    }
    free(order);
    free(at);
    free(nodes);
    struct opp_codetree *t = x->t;
    acc_free(x);
    if (rc)
        opp_codetree_free(t);
    return rc;
}

void opp_codetree_acc_drop(struct opp_codetree_acc *x)
{
    if (!x)
        return;
    opp_codetree_free(x->t);
    acc_free(x);
}

void opp_codetree_free(struct opp_codetree *t)
{
    opp_calltree_free(&t->ct);
    for (uint32_t i = 0; i < t->nnames; i++)
        free(t->names[i]);
    free(t->names);
    t->names = NULL;
    t->nnames = 0;
}
