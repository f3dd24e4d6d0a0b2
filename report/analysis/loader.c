/* The loader's shared helpers (loader.h): growing arrays, interning
 * names, finding a process by its serial, the first failure, several
 * files in one model. */
#include "analysis/loader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int opp_err_oom(char *err, size_t errlen)
{
    snprintf(err, errlen, "out of memory");
    return -1;
}

int opp_loader_grow_to(void **arr, size_t *cap, size_t need, size_t sz)
{
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *p = reallocarray(*arr, n, sz);
    if (!p)
        return -ENOMEM;
    *arr = p;
    *cap = n;
    return 0;
}

int opp_loader_grow_zeroed(void **arr, size_t *n, size_t need, size_t sz)
{
    if (need <= *n)
        return 0;
    char *p = reallocarray(*arr, need, sz);
    if (!p)
        return -1;
    memset(p + *n * sz, 0, (need - *n) * sz);
    *arr = p;
    *n = need;
    return 0;
}

uint32_t opp_loader_intern(struct opp_loader *ld, const char *s)
{
    struct opp_model *m = ld->m;
    struct opp_model_index *ix = m->index;
    struct str_ent *e;
    size_t len = strlen(s);
    HASH_FIND(hh, ix->strs, s, len, e);
    if (e)
        return e->id;
    char *copy = strdup(s);
    e = malloc(sizeof *e);
    if (!copy || !e ||
        opp_loader_grow((void **)&m->strs, &ld->strs_cap, m->nstrs + 1u, sizeof *m->strs)) {
        free(copy);
        free(e);
        return UINT32_MAX;
    }
    e->id = m->nstrs;
    m->strs[m->nstrs++] = copy;
    if (OPP_HASH_ADD_KEYPTR(ix->strs, copy, len, e)) {
        free(e);
        return UINT32_MAX; /* copy stays owned by m->strs */
    }
    return e->id;
}

struct opp_process *opp_loader_proc(const struct opp_model *m, uint32_t proc)
{
    struct proc_ent *e;
    HASH_FIND(hh, m->index->procs, &proc, sizeof proc, e);
    return e ? &m->procs[e->index] : NULL;
}

int opp_loader_fail(struct opp_loader *ld, int err)
{
    if (!ld->failed)
        ld->failed = err;
    return 1; /* stop reading */
}

void opp_loader_next_file(struct opp_loader *ld, size_t i)
{
    ld->base = (uint32_t)i << 24; /* serials of one file stay below 2^24 */
    ld->have_shift = 0;
    ld->shift = 0;
}

void opp_loader_add_summary(struct opp_model *m, const struct opp_tr_summary *sum, const char *path)
{
    m->sum.complete &= sum->complete;
    m->sum.held |= sum->held && sum->complete;
    m->sum.chunks += sum->chunks;
    m->sum.events += sum->events;
    m->sum.gpu_records += sum->gpu_records;
    if (!m->sum.warning[0] && sum->warning[0])
        snprintf(m->sum.warning, sizeof m->sum.warning, "%.200s: %.300s", path, sum->warning);
}
