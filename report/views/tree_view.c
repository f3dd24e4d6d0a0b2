/* `opprof report --tree`: the merged operator hierarchy (callpath_tree.h),
 * indented, children by CPU total descending, with calls, self/total CPU
 * time and share, and the CUDA columns when the trace has GPU work. */
#include "views/tree_view.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "views/columns.h"
#include "views/fmt.h"

#define NAME_WIDTH 60

struct tv {
    const struct opp_model *m;
    const struct opp_calltree *ct;
    const struct opp_tree_opts *o;
    struct opp_ct_order ord;
    int cuda;
    FILE *f;
    size_t shown;
};

static void line(struct tv *v, uint32_t i)
{
    const struct opp_ct_node *n = &v->ct->nodes[i];
    char name[OPP_TEXT_BUF(NAME_WIDTH)], a[OPP_FMT_MAX], b[OPP_FMT_MAX], c[OPP_FMT_MAX];
    size_t ind = 2 * (size_t)n->depth;
    if (ind > NAME_WIDTH - 8)
        ind = NAME_WIDTH - 8;
    memset(name, ' ', ind);
    opp_text_fit(name + ind, opp_model_str(v->m, n->name), NAME_WIDTH - ind);
    opp_col_cell(v->f, name, NAME_WIDTH, 1);
    fprintf(v->f, "  %10" PRIu64 "  %12s  %12s  %8s", n->calls, opp_fmt_time(a, (double)n->self_ns),
            opp_fmt_time(b, (double)n->total_ns),
            opp_fmt_percent(c, (double)n->total_ns, (double)v->ord.grand));
    if (v->cuda)
        fprintf(v->f, "  %12s  %12s", opp_fmt_time(a, (double)n->self_cuda_ns),
                opp_fmt_time(b, (double)n->cuda_total_ns));
    fputc('\n', v->f);
    v->shown++;
}

static int shown(const struct tv *v, uint32_t i)
{
    const struct opp_ct_node *n = &v->ct->nodes[i];
    if ((v->o->max_depth && n->depth >= v->o->max_depth) ||
        (v->o->max_paths && v->shown >= v->o->max_paths))
        return 0;
    return !v->ord.grand ||
           (double)n->total_ns * 100.0 >= v->o->min_share_pct * (double)v->ord.grand;
}

static void walk(struct tv *v, uint32_t i)
{
    line(v, i);
    for (uint32_t c = v->ord.first[i]; c != OPP_CT_ROOT; c = v->ord.next[c])
        if (shown(v, c))
            walk(v, c);
}

int opp_out_tree(FILE *f, const struct opp_model *m, const struct opp_calltree *ct,
                 const struct opp_tree_opts *o)
{
    struct tv v = {.m = m, .ct = ct, .o = o, .f = f};
    if (opp_calltree_order(m, ct, &v.ord))
        return -ENOMEM;
    for (size_t i = 0; i < ct->n; i++)
        if (ct->nodes[i].cuda_total_ns)
            v.cuda = 1;
    fprintf(f, "%-*s  %10s  %12s  %12s  %8s", NAME_WIDTH, "Name", "Calls", "Self CPU", "CPU total",
            "Share");
    if (v.cuda)
        fprintf(f, "  %12s  %12s", "Self CUDA", "CUDA total");
    fputc('\n', f);
    for (uint32_t c = v.ord.roots; c != OPP_CT_ROOT; c = v.ord.next[c])
        if (shown(&v, c))
            walk(&v, c);
    char t[OPP_FMT_MAX];
    fprintf(f, "%zu of %zu call paths shown; CPU total of the roots: %s\n", v.shown, ct->n,
            opp_fmt_time(t, (double)v.ord.grand));
    opp_calltree_order_free(&v.ord);
    return ferror(f) ? -EIO : 0;
}
