/* The by-rank table (see ranks.h): one aggregate per rank, its rows merged
 * by name through a hash table, then sorted. */
#include "analysis/ranks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/loader.h"

struct row_ent {
    size_t row; /* index in the table's rows */
    UT_hash_handle hh; /* key: the row's name */
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_row(const void *a, const void *b)
{
    const struct opp_rank_row *x = a, *y = b;
    if (x->max != y->max)
        return x->max < y->max ? 1 : -1;
    return strcmp(x->key, y->key);
}

static int cmp_rank(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int opp_rank_files(const struct opp_model *m, int64_t rank, uint32_t files[2])
{
    int held = 0;
    for (size_t i = 0; i < m->nprocs && held < 2; i++) {
        if (m->procs[i].rank != rank)
            continue;
        uint32_t f = m->procs[i].proc >> 24; /* a file's serials are offset by its index << 24 */
        if (!held || f != files[0])
            files[held++] = f;
    }
    return held;
}

void opp_rank_twice_said(char *buf, size_t cap, const char *a, const char *b, int64_t rank)
{
    snprintf(buf, cap, "%s and %s both hold rank %" PRId64 ": give each rank's trace once", a, b,
             rank);
}

/* The ranks of m's processes, ascending, each once; the others counted.
 * A rank in two traces (a copy of one, another run's) is -EEXIST: added
 * up as one rank, it would be twice as slow. */
static int collect_ranks(const struct opp_model *m, struct opp_rank_table *t)
{
    t->ranks = malloc((m->nprocs ? m->nprocs : 1) * sizeof *t->ranks);
    if (!t->ranks)
        return -ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < m->nprocs; i++) {
        if (m->procs[i].rank < 0)
            t->unranked++;
        else
            t->ranks[n++] = m->procs[i].rank;
    }
    qsort(t->ranks, n, sizeof *t->ranks, cmp_rank);
    for (size_t i = 0; i < n; i++) {
        if (t->nranks && t->ranks[t->nranks - 1] == t->ranks[i])
            continue;
        t->ranks[t->nranks++] = t->ranks[i];
        if (opp_rank_files(m, t->ranks[i], t->twice_files) == 2) {
            t->twice_rank = t->ranks[i];
            free(t->ranks); /* the table says only which */
            t->ranks = NULL;
            t->nranks = 0;
            return -EEXIST;
        }
    }
    return t->nranks ? 0 : -ENOENT;
}

/* The row named key, appended (its values zero) on first sight; NULL when
 * out of memory. */
static struct opp_rank_row *row_of(struct opp_rank_table *t, struct row_ent **index, size_t *cap,
                                   const char *key)
{
    struct row_ent *e;
    HASH_FIND_STR(*index, key, e);
    if (e)
        return &t->rows[e->row];
    if (opp_loader_grow((void **)&t->rows, cap, t->nrows + 1, sizeof *t->rows))
        return NULL;
    struct opp_rank_row *r = &t->rows[t->nrows];
    *r = (struct opp_rank_row){.key = key, .v = calloc(t->nranks, sizeof *r->v)};
    e = malloc(sizeof *e);
    if (!r->v || !e) {
        free(r->v);
        free(e);
        return NULL;
    }
    e->row = t->nrows++;
    if (OPP_HASH_ADD_KEYPTR(*index, r->key, strlen(r->key), e)) {
        free(e);
        return NULL; /* the row stays, counted, and is freed with the table */
    }
    return r;
}

/* Min, median, max and the slowest rank of every row. */
static int spread(struct opp_rank_table *t)
{
    size_t nr = t->nranks;
    double *tmp = malloc(nr * sizeof *tmp);
    if (!tmp)
        return -ENOMEM;
    for (size_t i = 0; i < t->nrows; i++) {
        struct opp_rank_row *r = &t->rows[i];
        memcpy(tmp, r->v, nr * sizeof *tmp);
        qsort(tmp, nr, sizeof *tmp, cmp_double);
        r->min = tmp[0];
        r->max = tmp[nr - 1];
        r->median = tmp[(nr - 1) / 2];
        r->slowest = 0;
        for (size_t k = 1; k < nr; k++)
            if (r->v[k] > r->v[r->slowest])
                r->slowest = k;
    }
    free(tmp);
    return 0;
}

int opp_rank_table_build(const struct opp_model *m, const struct opp_agg_opts *o,
                         opp_rank_aggregate_fn aggregate, void *ctx, struct opp_rank_table *t)
{
    *t = (struct opp_rank_table){0};
    int rc = collect_ranks(m, t);
    if (rc == -EEXIST)
        return rc;
    struct row_ent *index = NULL;
    size_t cap = 0;
    struct opp_agg_opts *ro = rc ? NULL : calloc(t->nranks, sizeof *ro);
    struct opp_agg *a = rc ? NULL : calloc(t->nranks, sizeof *a);
    if (!rc && (!ro || !a))
        rc = -ENOMEM;
    for (size_t ri = 0; ri < t->nranks && !rc; ri++) {
        ro[ri] = *o;
        ro[ri].limit = 0;
        ro[ri].filter_rank = 1;
        ro[ri].rank = t->ranks[ri];
    }
    if (!rc && !(rc = aggregate(ctx, ro, t->nranks, a))) {
        for (size_t ri = 0; ri < t->nranks; ri++) {
            for (size_t i = 0; i < a[ri].nrows && !rc; i++) {
                struct opp_rank_row *r = row_of(t, &index, &cap, a[ri].rows[i].key);
                if (r)
                    r->v[ri] += opp_row_metric(&a[ri].rows[i], o->sort);
                else
                    rc = -ENOMEM;
            }
            opp_agg_free(&a[ri]);
        }
    }
    free(ro);
    free(a);
    OPP_HASH_FREE(index);
    if (!rc)
        rc = spread(t);
    if (rc) {
        opp_rank_table_free(t);
        return rc;
    }
    if (t->nrows) /* none: ranked processes without calls */
        qsort(t->rows, t->nrows, sizeof *t->rows, cmp_row);
    return 0;
}

void opp_rank_table_free(struct opp_rank_table *t)
{
    for (size_t i = 0; i < t->nrows; i++)
        free(t->rows[i].v);
    free(t->rows);
    free(t->ranks);
    *t = (struct opp_rank_table){0};
}
