/* Folded stacks (torch's export_stacks) and a self-contained SVG flame
 * graph, from the merged call-path tree (callpath_tree.h). */
#include "exports/export.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "views/fmt.h"

static uint64_t self_of(const struct opp_ct_node *n, int cuda)
{
    return cuda ? n->self_cuda_ns : n->self_ns;
}

int opp_export_folded(const struct opp_model *m, const struct opp_calltree *ct, int cuda,
                      FILE *out)
{
    char *buf = NULL;
    size_t cap = 0;
    int rc = 0;
    for (size_t i = 0; i < ct->n && !rc; i++) {
        uint64_t us = self_of(&ct->nodes[i], cuda) / 1000;
        if (!us)
            continue;
        ssize_t len = opp_calltree_path(m, ct, (uint32_t)i, &buf, &cap);
        if (len < 0)
            rc = -1;
        else
            fprintf(out, "%s %" PRIu64 "\n", buf, us);
    }
    free(buf);
    return rc || ferror(out) ? -1 : 0;
}

/* ---- flame graph ---- */

#define FG_WIDTH 1200.0
#define FG_FRAME 17
#define FG_PAD 10.0
#define FG_TOP 48

struct fg {
    const struct opp_model *m;
    const struct opp_calltree *ct;
    uint64_t *incl;     /* inclusive value per node */
    uint32_t *first, *next; /* children lists, sorted by name */
    double scale;       /* px per ns */
    uint64_t total;
    uint32_t max_depth;
    FILE *out;
};

static int cmp_name(const struct fg *g, uint32_t a, uint32_t b)
{
    return strcmp(opp_model_str(g->m, g->ct->nodes[a].name), opp_model_str(g->m, g->ct->nodes[b].name));
}

/* Warm colours like flamegraph.pl's, stable per name. */
static void colour(const char *s, char out[8])
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    snprintf(out, 8, "#%02x%02x%02x", 205 + (h & 0x31), 90 + (h >> 8) % 120, (h >> 16) % 55);
}

static void frame(struct fg *g, const char *name, uint64_t value, double x, uint32_t depth)
{
    double w = (double)value * g->scale;
    if (w < 0.3)
        return; /* too thin to see: flamegraph.pl's minwidth */
    double y = FG_TOP + (double)(g->max_depth - depth) * FG_FRAME;
    char c[8], t[OPP_FMT_MAX], pct[OPP_FMT_MAX];
    colour(name, c);
    fputs("<g><title>", g->out);
    opp_xml_text(g->out, name);
    fprintf(g->out, " (%s, %s)</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\" rx=\"2\"/>",
            opp_fmt_time(t, (double)value), opp_fmt_percent(pct, (double)value, (double)g->total),
            x, y, w, FG_FRAME - 1, c);
    size_t fit = w > 12 ? (size_t)((w - 6) / 7) : 0;
    if (fit >= 3) {
        fprintf(g->out, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + 12);
        if (opp_utf8_chars(name) > fit) { /* its first fit - 2 characters and ".." */
            opp_xml_textn(g->out, name, opp_utf8_prefix(name, fit - 2));
            fputs("..", g->out);
        } else {
            opp_xml_text(g->out, name);
        }
        fputs("</text>", g->out);
    }
    fputs("</g>\n", g->out);
}

static void draw(struct fg *g, uint32_t node, double x)
{
    const struct opp_ct_node *n = &g->ct->nodes[node];
    frame(g, opp_model_str(g->m, n->name), g->incl[node], x, n->depth + 1);
    for (uint32_t c = g->first[node]; c != OPP_CT_ROOT; c = g->next[c]) {
        draw(g, c, x);
        x += (double)g->incl[c] * g->scale;
    }
}

/* Insert child c into node p's list (or the roots'), keeping names sorted. */
static void link_child(struct fg *g, uint32_t *head, uint32_t c)
{
    uint32_t *at = head;
    while (*at != OPP_CT_ROOT && cmp_name(g, *at, c) < 0)
        at = &g->next[*at];
    g->next[c] = *at;
    *at = c;
}

int opp_export_flamegraph(const struct opp_model *m, const struct opp_calltree *ct, int cuda,
                          const char *title, FILE *out)
{
    struct fg g = {.m = m, .ct = ct, .out = out};
    size_t n = ct->n ? ct->n : 1;
    g.incl = calloc(n, sizeof *g.incl);
    g.first = malloc(n * sizeof *g.first);
    g.next = malloc(n * sizeof *g.next);
    if (!g.incl || !g.first || !g.next) {
        free(g.incl), free(g.first), free(g.next);
        return -1;
    }
    /* inclusive = self + children's inclusive: children come after parents */
    for (size_t i = ct->n; i-- > 0;) {
        g.incl[i] += self_of(&ct->nodes[i], cuda);
        if (ct->nodes[i].parent != OPP_CT_ROOT)
            g.incl[ct->nodes[i].parent] += g.incl[i];
        else
            g.total += g.incl[i];
        if (ct->nodes[i].depth > g.max_depth)
            g.max_depth = ct->nodes[i].depth;
    }
    uint32_t roots = OPP_CT_ROOT;
    for (size_t i = 0; i < ct->n; i++)
        g.first[i] = OPP_CT_ROOT;
    for (size_t i = ct->n; i-- > 0;) /* reverse, so equal names keep their order */
        link_child(&g, ct->nodes[i].parent == OPP_CT_ROOT ? &roots : &g.first[ct->nodes[i].parent],
                   (uint32_t)i);
    g.max_depth += 1; /* the "all" frame below the roots */
    g.scale = g.total ? (FG_WIDTH - 2 * FG_PAD) / (double)g.total : 0;
    double height = FG_TOP + (g.max_depth + 1) * FG_FRAME + 30;
    fprintf(out,
            "<?xml version=\"1.0\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
            "xmlns=\"http://www.w3.org/2000/svg\">\n"
            "<style>text{font:12px monospace;fill:#000;pointer-events:none}"
            "g:hover rect{stroke:#000;stroke-width:0.8}</style>\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
            "<text x=\"%.0f\" y=\"24\" style=\"font-size:17px\" text-anchor=\"middle\">",
            FG_WIDTH, height, FG_WIDTH, height, FG_WIDTH / 2);
    opp_xml_text(out, title);
    fprintf(out, "</text>\n<text x=\"%.0f\" y=\"%.0f\">hover a frame for its name, time and "
                 "share</text>\n",
            FG_PAD, height - 10);
    if (g.total) {
        frame(&g, "all", g.total, FG_PAD, 0);
        double x = FG_PAD;
        for (uint32_t c = roots; c != OPP_CT_ROOT; c = g.next[c]) {
            draw(&g, c, x);
            x += (double)g.incl[c] * g.scale;
        }
    }
    fputs("</svg>\n", out);
    free(g.incl), free(g.first), free(g.next);
    return ferror(out) ? -1 : 0;
}
