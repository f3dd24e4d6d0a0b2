/* --tree's call paths as the table stream's read hands the calls over
 * (table_internal.h): each call's subtree merged by call path as its
 * parent takes it in, a top-level call's into the tree. */
#include <stdlib.h>
#include <string.h>

#include "analysis/table_internal.h"

/* Call paths merged (--tree): a call's subtree (node 0 the call) until
 * its parent comes, and the whole tree's (roots' parent OPP_CT_ROOT),
 * nodes keyed by (parent node, name) as callpath_tree.c keys them. */
struct pnode {
    uint32_t parent, name;
    uint64_t calls, self, total, self_cuda, cuda;
};

struct pent {
    uint64_t key;
    uint32_t node;
    UT_hash_handle hh;
};

struct ptree {
    struct pnode *n;
    size_t nn, cap;
    struct pent *map;
};

struct ptree *opp_tpaths_new(void)
{
    return calloc(1, sizeof(struct ptree));
}

void opp_tpaths_clear(struct ptree *t)
{
    OPP_HASH_FREE(t->map);
    t->nn = 0;
}

/* The node of name under parent in t, made on first sight: its index,
 * or -1 when out of memory. */
static int64_t ptree_at(struct ptree *t, uint32_t parent, uint32_t name)
{
    uint64_t key = (uint64_t)parent << 32 | name;
    struct pent *e;
    HASH_FIND(hh, t->map, &key, sizeof key, e);
    if (e)
        return e->node;
    if (opp_loader_grow((void **)&t->n, &t->cap, t->nn + 1, sizeof *t->n) ||
        !(e = malloc(sizeof *e)))
        return -1;
    e->key = key;
    e->node = (uint32_t)t->nn;
    if (OPP_HASH_ADD(t->map, key, sizeof e->key, e)) {
        free(e);
        return -1;
    }
    t->n[t->nn] = (struct pnode){.parent = parent, .name = name};
    return (int64_t)t->nn++;
}

static void pnode_add(struct pnode *n, const struct pnode *x)
{
    n->calls += x->calls;
    n->self += x->self;
    n->total += x->total;
    n->self_cuda += x->self_cuda;
    n->cuda += x->cuda;
}

void opp_tpaths_free(struct ptree *t)
{
    if (!t)
        return;
    OPP_HASH_FREE(t->map);
    free(t->n);
    free(t);
}

/* Call e as a node (its own numbers). */
static struct pnode ent_node(const struct ent *e)
{
    return (struct pnode){.parent = OPP_CT_ROOT,
                          .name = e->name,
                          .calls = e->calls,
                          .self = e->self_ns,
                          .total = e->span,
                          .self_cuda = e->gpu.self_cuda_ns,
                          .cuda = e->gpu.cuda_ns};
}

/* Call e's subtree merged into t under node at (OPP_CT_ROOT: as a root);
 * folded: e is gone, its children are at's. 0 or -ENOMEM. */
int opp_tpaths_merge(struct ptree *t, uint32_t at, const struct ent *e, int folded)
{
    if (!e->pt) {
        if (folded)
            return 0;
        struct pnode x = ent_node(e);
        int64_t id = ptree_at(t, at, e->name);
        if (id < 0)
            return -ENOMEM;
        pnode_add(&t->n[id], &x);
        return 0;
    }
    const struct ptree *f = e->pt;
    uint32_t *map = malloc(f->nn * sizeof *map);
    if (!map)
        return -ENOMEM;
    for (size_t i = 0; i < f->nn; i++) {
        if (!i && folded) {
            map[0] = at;
            continue;
        }
        int64_t id = ptree_at(t, i ? map[f->n[i].parent] : at, f->n[i].name);
        if (id < 0) {
            free(map);
            return -ENOMEM;
        }
        pnode_add(&t->n[id], &f->n[i]);
        map[i] = (uint32_t)id;
    }
    free(map);
    return 0;
}

/* Call e's subtree: it and its children c[0..n) (folded: that one's
 * seq). 0 or -ENOMEM. */
int opp_tpaths_subtree(struct ent *e, const struct ent *c, uint32_t n, uint32_t folded)
{
    if (!n)
        return 0;
    struct ptree *t = calloc(1, sizeof *t);
    struct pnode x = ent_node(e);
    int64_t root = t ? ptree_at(t, OPP_CT_ROOT, e->name) : -1;
    if (root < 0) {
        opp_tpaths_free(t);
        return -ENOMEM;
    }
    pnode_add(&t->n[root], &x);
    for (uint32_t k = 0; k < n; k++)
        if (opp_tpaths_merge(t, (uint32_t)root, &c[k], c[k].seq == folded)) {
            opp_tpaths_free(t);
            return -ENOMEM;
        }
    e->pt = t;
    return 0;
}

/* The call paths t merged into ct (freed, whatever rc, the read's). rc,
 * or -1 (out of memory, said in err). */
int opp_tpaths_calltree(struct ptree *t, struct opp_calltree *ct, int rc, char *err, size_t errlen)
{
    memset(ct, 0, sizeof *ct);
    if (!rc && t->nn && !(ct->nodes = calloc(t->nn, sizeof *ct->nodes)))
        rc = opp_err_oom(err, errlen);
    for (size_t i = 0; !rc && i < t->nn; i++) {
        const struct pnode *n = &t->n[i];
        ct->nodes[i] = (struct opp_ct_node){
            .parent = n->parent,
            .name = n->name,
            .depth = n->parent == OPP_CT_ROOT ? 0 : ct->nodes[n->parent].depth + 1,
            .calls = n->calls,
            .self_ns = n->self,
            .total_ns = n->total,
            .self_cuda_ns = n->self_cuda,
            .cuda_total_ns = n->cuda};
    }
    if (!rc)
        ct->n = t->nn;
    opp_tpaths_free(t);
    return rc;
}