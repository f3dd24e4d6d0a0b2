/* The merged call-path tree (see callpath_tree.h): its nodes in the
 * order shown and a node's path as a folded stack. */
#include "analysis/callpath_tree.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

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
