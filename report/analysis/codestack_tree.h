/* The code-frame tree of a trace recorded with OPPROF_STACKS (the program's
 * functions, where callpath_tree.h has the operators): each event
 * with a code stack contributes its self time (and self CUDA time) at the
 * path of its symbolized frames, outermost first, then the operator's name
 * as the leaf (torch's export_stacks with Python frames); equal paths
 * merge. Node names index the tree's own string table (names). Built call
 * by call as a pass hands the calls over (table_stream.h): its nodes in
 * the order their first calls come in tree order, whatever the order the
 * calls came in. */
#ifndef OPP_CODESTACK_TREE_H
#define OPP_CODESTACK_TREE_H

#include "analysis/callpath_tree.h"

struct opp_code;

struct opp_codetree {
    struct opp_calltree ct;
    char **names;
    uint32_t nnames;
};

void opp_codetree_free(struct opp_codetree *t);

/* A call as the tree takes it: its code stack (id of process index proc),
 * its name, its numbers (calls, self and total, CUDA self and total) and
 * its place in tree order (thread index, then tree order on
 * the thread: begin, the longer first, the shallower, the first to
 * arrive). */
struct opp_codetree_call {
    uint32_t proc, stack;
    const char *name;
    uint64_t self_ns, total_ns, self_cuda_ns, cuda_total_ns;
    uint32_t thread, depth, seq;
    uint64_t begin, end;
};
struct opp_codetree_acc;
struct opp_codetree_acc *opp_codetree_acc_new(struct opp_codetree *t);
/* Call c added at its path (code: the model's code stacks). 0 or -ENOMEM. */
int opp_codetree_acc_add(struct opp_codetree_acc *x, struct opp_code *code,
                         const struct opp_codetree_call *c);
/* The tree in t, its nodes in that order, x gone: 0 or
 * -ENOMEM (t then freed). */
int opp_codetree_acc_finish(struct opp_codetree_acc *x);
/* x and its tree gone (after an error). */
void opp_codetree_acc_drop(struct opp_codetree_acc *x);

#endif
