/* The code-frame tree of a trace recorded with OPPROF_STACKS (the program's
 * functions, where callpath_tree.h has the operators): each event
 * with a code stack contributes its self time (and self CUDA time) at the
 * path of its symbolized frames, outermost first, then the operator's name
 * as the leaf (torch's export_stacks with Python frames); equal paths
 * merge. Node names index the tree's own string table (names). */
#ifndef OPP_CODESTACK_TREE_H
#define OPP_CODESTACK_TREE_H

#include "analysis/callpath_tree.h"

struct opp_codetree {
    struct opp_calltree ct;
    char **names;
    uint32_t nnames;
};

/* 0; 1 when no event of m has a code stack (ct is then empty); -ENOMEM. */
int opp_codetree_build(const struct opp_model *m, struct opp_codetree *t);
void opp_codetree_free(struct opp_codetree *t);

#endif
