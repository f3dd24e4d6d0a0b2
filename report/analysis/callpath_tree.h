/* The operator hierarchy merged by call path over every selected thread
 * (as the pass hands the calls over: table_stream.h): one node per
 * distinct path of names from a root call down (the same name under
 * different parents is different nodes). The base of folded stacks,
 * flame graphs and the tree view. */
#ifndef OPP_CALLPATH_TREE_H
#define OPP_CALLPATH_TREE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "analysis/aggregate.h"
#include "analysis/model.h"

#define OPP_CT_ROOT UINT32_MAX

struct opp_ct_node {
    uint32_t parent; /* node index, or OPP_CT_ROOT for a root call */
    uint32_t name;   /* model string id */
    uint32_t depth;  /* 0 for root calls */
    uint64_t calls;
    uint64_t self_ns, total_ns;           /* CPU, torch's meanings */
    uint64_t self_cuda_ns, cuda_total_ns; /* GPU work attached (model.h) */
};

struct opp_calltree {
    struct opp_ct_node *nodes; /* a parent always before its children */
    size_t n;
};

void opp_calltree_free(struct opp_calltree *ct);

/* Each node's children, by CPU total descending (ties: by name, so that
 * a trace and its summary order them alike; then first seen), as
 * lists: first[i] is node i's first child, next[c] the child after c,
 * OPP_CT_ROOT ending a list; roots the first root call; grand the roots'
 * CPU total. */
struct opp_ct_order {
    uint32_t *first, *next;
    uint32_t roots;
    uint64_t grand;
};
/* 0, or -ENOMEM. */
int opp_calltree_order(const struct opp_model *m, const struct opp_calltree *ct,
                       struct opp_ct_order *o);
void opp_calltree_order_free(struct opp_ct_order *o);

/* "a;b;c" for node i, outermost first, each frame in folded-stack syntax:
 * ';', white space, control characters, U+0085, U+2028 and U+2029 as '_',
 * bytes that are not UTF-8 as U+FFFD; in *buf, grown as it needs (*cap its
 * size; both may start NULL and 0). Returns the length, or -ENOMEM. */
ssize_t opp_calltree_path(const struct opp_model *m, const struct opp_calltree *ct, uint32_t i,
                          char **buf, size_t *cap);

#endif
