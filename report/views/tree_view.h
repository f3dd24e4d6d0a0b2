/* The tree view of `opprof report --tree` (tree_view.c): a call-path tree
 * (analysis/callpath_tree.h) as indented text. */
#ifndef OPP_TREE_VIEW_H
#define OPP_TREE_VIEW_H

#include <stdio.h>

#include "analysis/callpath_tree.h"

struct opp_tree_opts {
    uint32_t max_depth;   /* levels shown; 0 = all */
    double min_share_pct; /* hide call paths whose CPU total is below this share of
                             the roots' CPU total */
    size_t max_paths;     /* lines shown at most, in the order shown; 0 = all */
};

/* A header, one line per shown call path (children under their parent,
 * indented two spaces a level, by CPU total descending), and a footer line.
 * 0, -EIO or -ENOMEM. */
int opp_out_tree(FILE *f, const struct opp_model *m, const struct opp_calltree *ct,
                 const struct opp_tree_opts *o);

#endif
