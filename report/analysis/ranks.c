/* The by-rank table (see ranks.h): one aggregate per rank, its rows merged
 * by name through a hash table, then sorted. */
#include "analysis/ranks.h"

#include <errno.h>
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

struct rank_file {
    int64_t rank;
    uint32_t file; /* the trace it came from, of those merged in one model */
};

static int cmp_rank_file(const void *a, const void *b)
{
    const struct rank_file *x = a, *y = b;
    if (x->rank != y->rank)
        return (x->rank > y->rank) - (x->rank < y->rank);
    return (x->file > y->file) - (x->file < y->file);
}

/* The ranks of m's processes, ascending, each once; the others counted.
 * A rank in two traces (a copy of one, another run's) is -EEXIST: added
 * up as one rank, it would be twice as slow. */
static int collect_ranks(const struct opp_model *m, struct opp_rank_table *t)
{
    struct rank_file *rf = malloc((m->nprocs ? m->nprocs : 1) * sizeof *rf);
    t->ranks = malloc((m->nprocs ? m->nprocs : 1) * sizeof *t->ranks);
    if (!rf || !t->ranks) {
        free(rf);
        return -ENOMEM;
    }
    size_t n = 0;
    for (size_t i = 0; i < m->nprocs; i++) {
        if (m->procs[i].rank < 0)
            t->unranked++;
        else /* a file's process serials are offset by its index << 24 (loader.h) */
            rf[n++] = (struct rank_file){m->procs[i].rank, m->procs[i].proc >> 24};
    }
    qsort(rf, n, sizeof *rf, cmp_rank_file);
    for (size_t i = 0; i < n; i++) {
        if (t->nranks && t->ranks[t->nranks - 1] == rf[i].rank) {
            if (rf[i].file != rf[i - 1].file) {
                t->twice_rank = rf[i].rank;
                t->twice_files[0] = rf[i - 1].file;
                t->twice_files[1] = rf[i].file;
                free(rf);
                free(t->ranks); /* the table says only which */
                t->ranks = NULL;
                t->nranks = 0;
                return -EEXIST;
            }
            continue;
        }
        t->ranks[t->nranks++] = rf[i].rank;
    }
    free(rf);
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
