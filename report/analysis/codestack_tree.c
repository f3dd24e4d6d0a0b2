/* The code-frame tree (codestack_tree.h). */
#include "analysis/codestack_tree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

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

struct build {
    struct opp_codetree *t;
    struct name_ent *names;
    struct node_ent *nodes;
    size_t cap_names, cap_nodes;
};

static int name_id(struct build *b, const char *s, uint32_t *id)
{
    struct name_ent *e;
    HASH_FIND_STR(b->names, s, e);
    if (e) {
        *id = e->id;
        return 0;
    }
    struct opp_codetree *t = b->t;
    if (t->nnames == b->cap_names) {
        size_t cap = b->cap_names ? b->cap_names * 2 : 256;
        char **n = realloc(t->names, cap * sizeof *n);
        if (!n)
            return -ENOMEM;
        t->names = n, b->cap_names = cap;
    }
    if (!(e = malloc(sizeof *e)) || !(t->names[t->nnames] = strdup(s))) {
        free(e);
        return -ENOMEM;
    }
    e->id = *id = t->nnames++;
    HASH_ADD_KEYPTR(hh, b->names, t->names[e->id], strlen(t->names[e->id]), e);
    return 0;
}

static int node_of(struct build *b, uint32_t parent, uint32_t name, uint32_t *out)
{
    uint64_t key = (uint64_t)parent << 32 | name;
    struct node_ent *e;
    HASH_FIND(hh, b->nodes, &key, sizeof key, e);
    if (e) {
        *out = e->node;
        return 0;
    }
    struct opp_calltree *ct = &b->t->ct;
    if (ct->n == b->cap_nodes) {
        size_t cap = b->cap_nodes ? b->cap_nodes * 2 : 256;
        struct opp_ct_node *n = realloc(ct->nodes, cap * sizeof *n);
        if (!n)
            return -ENOMEM;
        ct->nodes = n, b->cap_nodes = cap;
    }
    if (!(e = malloc(sizeof *e)))
        return -ENOMEM;
    struct opp_ct_node *n = &ct->nodes[ct->n];
    memset(n, 0, sizeof *n);
    n->parent = parent;
    n->name = name;
    n->depth = parent == OPP_CT_ROOT ? 0 : ct->nodes[parent].depth + 1;
    e->key = key;
    e->node = *out = (uint32_t)ct->n++;
    HASH_ADD(hh, b->nodes, key, sizeof key, e);
    return 0;
}

static int add_event(struct build *b, const struct opp_model *m, const struct opp_thread *th,
                     size_t i)
{
    const struct opp_event *e = &th->events[i];
    const char *frames[FRAMES_MAX];
    int n = opp_code_frames(m->code, th->proc, e->stack, frames, FRAMES_MAX);
    uint32_t node = OPP_CT_ROOT, id;
    int rc;
    for (int k = n; k-- > 0;) /* outermost first */
        if ((rc = name_id(b, frames[k], &id)) || (rc = node_of(b, node, id, &node)))
            return rc;
    if ((rc = name_id(b, opp_model_str(m, e->name), &id)) || (rc = node_of(b, node, id, &node)))
        return rc;
    struct opp_ct_node *x = &b->t->ct.nodes[node];
    uint64_t total = e->end_ns - e->begin_ns;
    x->calls++;
    x->self_ns += e->self_ns;
    x->total_ns += total;
    if (th->gpu) {
        x->self_cuda_ns += th->gpu[i].self_cuda_ns;
        x->cuda_total_ns += th->gpu[i].cuda_ns;
    }
    return 0;
}

int opp_codetree_build(const struct opp_model *m, struct opp_codetree *t)
{
    memset(t, 0, sizeof *t);
    int any = 0;
    for (size_t k = 0; k < m->nthreads && !any; k++)
        for (size_t i = 0; i < m->threads[k].nevents && !any; i++)
            any = m->threads[k].events[i].stack != 0;
    if (!any)
        return 1;
    struct build b = {.t = t};
    int rc = 0;
    for (size_t k = 0; k < m->nthreads && !rc; k++)
        for (size_t i = 0; i < m->threads[k].nevents && !rc; i++)
            rc = add_event(&b, m, &m->threads[k], i);
    OPP_HASH_FREE(b.names);
    OPP_HASH_FREE(b.nodes);
    if (rc)
        opp_codetree_free(t);
    return rc;
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
