/* Summary mode's bounded maps of ids (summary_internal.h): correlation
 * and external ids to the calls that own GPU work, addresses to the bytes
 * of live blocks; the oldest entry goes when one is full, unless it is
 * still needed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "summary_internal.h"

/* The map's arrays freed, m left empty: freeing it again is harmless. */
void opp_bmap_free(struct bmap *m)
{
    free(m->e);
    free(m->heads);
    m->e = NULL;
    m->heads = NULL;
    m->cap = m->next = m->used = 0;
}

/* 0, or -1 (out of memory) with m empty (nothing to free, cap 0). */
static int bmap_alloc(struct bmap *m, uint32_t cap)
{
    m->e = calloc(cap, sizeof *m->e);
    m->heads = malloc(cap * sizeof *m->heads);
    if (!m->e || !m->heads) {
        opp_bmap_free(m);
        return -1;
    }
    memset(m->heads, 0xff, cap * sizeof *m->heads);
    m->cap = cap;
    m->next = 0;
    m->used = 0;
    return 0;
}

int opp_bmap_init(struct bmap *m, int (*needed)(struct opp_sum *s, const struct ment *e))
{
    m->needed = needed;
    return bmap_alloc(m, MAP_CAP);
}

struct ment *opp_bmap_find(struct bmap *m, uint64_t a, uint64_t b)
{
    for (uint32_t i = m->heads[opp_sum_mix(a, b) & (m->cap - 1)]; i != UINT32_MAX;
         i = m->e[i].hnext)
        if (m->e[i].a == a && m->e[i].b == b)
            return &m->e[i];
    return NULL;
}

static void bmap_unlink(struct bmap *m, uint32_t i)
{
    uint32_t *p = &m->heads[opp_sum_mix(m->e[i].a, m->e[i].b) & (m->cap - 1)];
    while (*p != i)
        p = &m->e[*p].hnext;
    *p = m->e[i].hnext;
    m->e[i].used = 0;
    m->used--;
}

/* The entries packed oldest first into cap slots (the ring goes on after
 * them): the same room when at most half is used (the rest were holes
 * left by deletions), else twice. 0 or -1 (out of memory: the map is as
 * it was). */
static int bmap_repack(struct bmap *m)
{
    struct bmap g;
    if (bmap_alloc(&g, m->used <= m->cap / 2 ? m->cap : m->cap * 2))
        return -1;
    for (uint32_t k = 0; k < m->cap; k++) {
        const struct ment *o = &m->e[(m->next + k) & (m->cap - 1)];
        if (!o->used)
            continue;
        uint32_t h = opp_sum_mix(o->a, o->b) & (g.cap - 1);
        g.e[g.next] = (struct ment){o->a, o->b, o->v, g.heads[h], 1};
        g.heads[h] = g.next++;
        g.used++;
    }
    g.needed = m->needed;
    opp_bmap_free(m);
    *m = g;
    return 0;
}

/* Whether the map's oldest entry is still needed, so the map is repacked
 * (or grows) rather than lose it (the map's own rule). */
static int needed(struct opp_sum *s, const struct bmap *m, const struct ment *e)
{
    return e->used && m->needed && m->needed(s, e);
}

static int still_needed(struct opp_sum *s, const struct bmap *m, const struct ment *e)
{
    return m->cap < s->map_max && needed(s, m, e);
}

void opp_sum_map_max(struct opp_sum *s, uint32_t cap)
{
    s->map_max = cap;
}

/* Insert or replace. The map is repacked (or grows) rather than lose an
 * entry still needed. */
int opp_bmap_put(struct opp_sum *s, struct bmap *m, uint64_t a, uint64_t b, uint64_t v,
                 uint64_t *gone)
{
    struct ment *e = opp_bmap_find(m, a, b);
    if (e) {
        *gone = e->v;
        e->v = v;
        return 1;
    }
    if (still_needed(s, m, &m->e[m->next]))
        bmap_repack(m); /* out of memory: the oldest goes */
    uint32_t i = m->next;
    m->next = (m->next + 1) & (m->cap - 1);
    if (needed(s, m, &m->e[i])) { /* the map is as large as it grows */
        struct sproc *p = opp_sum_proc_find(s, (uint32_t)m->e[i].a);
        s->lost++;
        if (p)
            p->lost++;
    }
    int let_go = m->e[i].used;
    if (let_go) {
        *gone = m->e[i].v;
        bmap_unlink(m, i);
    }
    uint32_t h = opp_sum_mix(a, b) & (m->cap - 1);
    m->e[i] = (struct ment){a, b, v, m->heads[h], 1};
    m->heads[h] = i;
    m->used++;
    return let_go;
}

void opp_bmap_del(struct bmap *m, struct ment *e)
{
    bmap_unlink(m, (uint32_t)(e - m->e));
}

/* An allocation (op OPP_MEM_ALLOC) or free (OPP_MEM_FREE) of the block at
 * addr, in m's map of the live blocks of each process: + bytes allocated,
 * - bytes freed (a free without a size takes its allocation's), 0 for any
 * other op. CPU and device memory alike. */
int64_t opp_sum_block_bytes(struct opp_sum *s, struct bmap *m, uint32_t proc, uint64_t op,
                            uint64_t addr, uint64_t size)
{
    int64_t b = size > INT64_MAX ? INT64_MAX : (int64_t)size;
    if (op == OPP_MEM_ALLOC) {
        uint64_t gone;
        opp_bmap_put(s, m, proc, addr, (uint64_t)b, &gone);
        return b;
    }
    if (op != OPP_MEM_FREE)
        return 0;
    struct ment *e = opp_bmap_find(m, proc, addr);
    if (e) {
        if (!b)
            b = (int64_t)e->v;
        opp_bmap_del(m, e);
    }
    return -b;
}
