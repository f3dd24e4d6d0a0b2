/* The merged call-path tree (see callpath_tree.h): one hash lookup per event,
 * keyed by (parent node, name). */
#include "analysis/callpath_tree.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(elt) (hash_oom = 1)
#include <uthash.h>

struct ct_ent {
    uint64_t key; /* parent node << 32 | name */
    uint32_t node;
    UT_hash_handle hh;
};

static int add_node(struct opp_calltree *ct, size_t *cap, uint32_t parent, uint32_t name)
{
    if (ct->n == *cap) {
        size_t n = *cap ? *cap * 2 : 256;
        void *p = reallocarray(ct->nodes, n, sizeof *ct->nodes);
        if (!p)
            return -1;
        ct->nodes = p;
        *cap = n;
    }
    ct->nodes[ct->n] = (struct opp_ct_node){
        .parent = parent,
        .name = name,
        .depth = parent == OPP_CT_ROOT ? 0 : ct->nodes[parent].depth + 1,
    };
    return (int)ct->n++;
}

int opp_calltree_build(const struct opp_model *m, const struct opp_agg_opts *o,
                       struct opp_calltree *ct)
{
    memset(ct, 0, sizeof *ct);
    struct ct_ent *map = NULL, *e;
    size_t cap = 0, node_cap = 0;
    uint32_t *node_of = NULL; /* per event of the current thread */
    int hash_oom = 0, rc = 0;
    for (size_t ti = 0; ti < m->nthreads && !rc; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        if (!opp_agg_selects(m, o, t->proc, (uint32_t)ti) || !t->nevents)
            continue;
        if (t->nevents > node_cap) {
            uint32_t *p = reallocarray(node_of, t->nevents, sizeof *node_of);
            if (!p) {
                rc = -ENOMEM;
                break;
            }
            node_of = p;
            node_cap = t->nevents;
        }
        for (size_t k = 0; k < t->nevents; k++) {
            const struct opp_event *ev = &t->events[k];
            /* tree order: the parent's node is known */
            uint32_t parent = ev->parent == OPP_NO_PARENT ? OPP_CT_ROOT : node_of[ev->parent];
            uint64_t key = (uint64_t)parent << 32 | ev->name;
            HASH_FIND(hh, map, &key, sizeof key, e);
            if (!e) {
                int id = add_node(ct, &cap, parent, ev->name);
                e = id < 0 ? NULL : malloc(sizeof *e);
                if (!e) {
                    rc = -ENOMEM;
                    break;
                }
                e->key = key;
                e->node = (uint32_t)id;
                HASH_ADD(hh, map, key, sizeof e->key, e);
                if (hash_oom) {
                    free(e);
                    rc = -ENOMEM;
                    break;
                }
            }
            node_of[k] = e->node;
            struct opp_ct_node *nd = &ct->nodes[e->node];
            nd->calls += opp_event_calls(t, k);
            nd->self_ns += ev->self_ns;
            nd->total_ns += ev->end_ns - ev->begin_ns;
            if (t->gpu) {
                nd->self_cuda_ns += t->gpu[k].self_cuda_ns;
                nd->cuda_total_ns += t->gpu[k].cuda_ns;
            }
        }
    }
    OPP_HASH_FREE(map);
    free(node_of);
    if (rc)
        opp_calltree_free(ct);
    return rc;
}

void opp_calltree_free(struct opp_calltree *ct)
{
    free(ct->nodes);
    ct->nodes = NULL;
    ct->n = 0;
}

/* Whether node a comes before node b among siblings. */
static int ahead(const struct opp_model *m, const struct opp_calltree *ct, uint32_t a, uint32_t b)
{
    const struct opp_ct_node *x = &ct->nodes[a], *y = &ct->nodes[b];
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns;
    return strcmp(opp_model_str(m, x->name), opp_model_str(m, y->name)) <= 0;
}

int opp_calltree_order(const struct opp_model *m, const struct opp_calltree *ct,
                       struct opp_ct_order *o)
{
    size_t n = ct->n ? ct->n : 1;
    *o = (struct opp_ct_order){.first = malloc(n * sizeof *o->first),
                               .next = malloc(n * sizeof *o->next), .roots = OPP_CT_ROOT};
    if (!o->first || !o->next) {
        opp_calltree_order_free(o);
        return -ENOMEM;
    }
    for (size_t i = 0; i < ct->n; i++) {
        o->first[i] = OPP_CT_ROOT;
        if (ct->nodes[i].parent == OPP_CT_ROOT)
            o->grand += ct->nodes[i].total_ns;
    }
    for (size_t i = 0; i < ct->n; i++) { /* parents come first */
        uint32_t *at = ct->nodes[i].parent == OPP_CT_ROOT ? &o->roots : &o->first[ct->nodes[i].parent];
        while (*at != OPP_CT_ROOT && ahead(m, ct, *at, (uint32_t)i))
            at = &o->next[*at];
        o->next[i] = *at;
        *at = (uint32_t)i;
    }
    return 0;
}

void opp_calltree_order_free(struct opp_ct_order *o)
{
    free(o->first);
    free(o->next);
    o->first = o->next = NULL;
}

/* Frame s in folded-stack syntax, written to out unless NULL: ';', white
 * space and what a reader may take for a line break (control characters,
 * U+0085, U+2028, U+2029) as '_', each byte that is not UTF-8 as U+FFFD,
 * and an empty name as '_'. Returns its length. */
static size_t folded_frame(const char *s, char *out)
{
    size_t len = 0;
    uint32_t cp;
    if (!*s) { /* an empty name (a range named "") is a frame all the same */
        if (out)
            *out = '_';
        return 1;
    }
    while (*s) {
        int n = opp_utf8_next(s, &cp);
        const char *put = s;
        size_t k = (size_t)n;
        if (!n) {
            put = OPP_UTF8_REPLACEMENT;
            k = sizeof OPP_UTF8_REPLACEMENT - 1;
            n = 1;
        } else if (cp == ';' || cp == ' ' || cp < 0x20 || cp == 0x7f || cp == 0x85 ||
                   cp == 0x2028 || cp == 0x2029) {
            put = "_";
            k = 1;
        }
        if (out)
            memcpy(out + len, put, k);
        len += k;
        s += n;
    }
    return len;
}

ssize_t opp_calltree_path(const struct opp_model *m, const struct opp_calltree *ct, uint32_t i,
                          char **buf, size_t *cap)
{
    size_t len = 0;
    for (uint32_t k = i; k != OPP_CT_ROOT; k = ct->nodes[k].parent)
        len += folded_frame(opp_model_str(m, ct->nodes[k].name), NULL) + (k != i); /* ';' */
    if (len >= SSIZE_MAX)
        return -ENOMEM;
    if (len + 1 > *cap) {
        size_t n = len + 1 > *cap * 2 ? len + 1 : *cap * 2;
        char *p = realloc(*buf, n);
        if (!p)
            return -ENOMEM;
        *buf = p;
        *cap = n;
    }
    size_t at = len;
    (*buf)[len] = 0;
    for (uint32_t k = i; k != OPP_CT_ROOT; k = ct->nodes[k].parent) {
        const char *s = opp_model_str(m, ct->nodes[k].name);
        at -= folded_frame(s, NULL);
        folded_frame(s, *buf + at);
        if (ct->nodes[k].parent != OPP_CT_ROOT)
            (*buf)[--at] = ';';
    }
    return (ssize_t)len;
}
