/* The by-rank view (see ranks.h): one aggregate per rank, merged by name. */
#include "views/ranks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "views/fmt.h"

struct rrow {
    const char *key;
    double *v; /* per rank */
    double min, median, max;
    size_t slowest; /* index of the rank */
};

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_rrow(const void *a, const void *b)
{
    const struct rrow *x = a, *y = b;
    if (x->max != y->max)
        return x->max < y->max ? 1 : -1;
    return strcmp(x->key, y->key);
}

static int is_time(enum opp_sort_key k)
{
    return k != OPP_SORT_COUNT && k != OPP_SORT_FLOPS && k != OPP_SORT_SELF_CUDA_MEMORY_USAGE &&
           k != OPP_SORT_CUDA_MEMORY_USAGE;
}

static void cell(FILE *f, double v, enum opp_sort_key k, int json)
{
    char b[OPP_FMT_MAX];
    if (json)
        fprintf(f, is_time(k) ? "%.3f" : "%.0f", is_time(k) ? v / 1000.0 : v);
    else if (is_time(k))
        fprintf(f, "  %12s", opp_fmt_time(b, v));
    else
        fprintf(f, "  %12.0f", v);
}

int opp_out_by_rank(FILE *f, const struct opp_model *m, const struct opp_agg_opts *o, int json)
{
    int64_t *ranks = malloc((m->nprocs ? m->nprocs : 1) * sizeof *ranks);
    if (!ranks)
        return -ENOMEM;
    size_t nr = 0, unranked = 0;
    for (size_t i = 0; i < m->nprocs; i++) {
        if (m->procs[i].rank < 0) {
            unranked++;
            continue;
        }
        size_t k = 0;
        while (k < nr && ranks[k] != m->procs[i].rank)
            k++;
        if (k == nr)
            ranks[nr++] = m->procs[i].rank;
    }
    if (!nr) {
        free(ranks);
        return -ENOENT;
    }
    qsort(ranks, nr, sizeof *ranks, cmp_i64);
    struct rrow *rows = NULL;
    size_t nrows = 0, cap = 0;
    int rc = 0;
    for (size_t ri = 0; ri < nr && !rc; ri++) {
        struct opp_agg_opts ro = *o;
        ro.limit = 0;
        ro.filter_rank = 1;
        ro.rank = ranks[ri];
        struct opp_agg a;
        if ((rc = opp_aggregate(m, &ro, &a)))
            break;
        for (size_t i = 0; i < a.nrows && !rc; i++) {
            size_t k = 0;
            while (k < nrows && strcmp(rows[k].key, a.rows[i].key))
                k++;
            if (k == nrows) {
                if (nrows == cap) {
                    size_t n = cap ? cap * 2 : 64;
                    struct rrow *p = reallocarray(rows, n, sizeof *p);
                    if (!p) {
                        rc = -ENOMEM;
                        break;
                    }
                    rows = p;
                    cap = n;
                }
                rows[nrows].key = a.rows[i].key; /* points into the model */
                rows[nrows].v = calloc(nr, sizeof *rows[nrows].v);
                if (!rows[nrows].v) {
                    rc = -ENOMEM;
                    break;
                }
                nrows++;
            }
            rows[k].v[ri] += opp_row_metric(&a.rows[i], o->sort);
        }
        opp_agg_free(&a);
    }
    double *tmp = rc ? NULL : malloc(nr * sizeof *tmp);
    if (!rc && !tmp)
        rc = -ENOMEM;
    for (size_t i = 0; i < nrows && !rc; i++) {
        struct rrow *r = &rows[i];
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
    if (!rc) {
        qsort(rows, nrows, sizeof *rows, cmp_rrow);
        size_t shown = o->limit && o->limit < nrows ? o->limit : nrows;
        static const char *const names[] = {
            "self_cpu_time_total", "cpu_time_total", "cpu_time", "count", "flops",
            "self_cuda_time_total", "cuda_time_total", "cuda_time", "self_cuda_memory_usage",
            "cuda_memory_usage"};
        if (json) {
            fprintf(f, "{\"metric\": \"%s\", \"ranks\": [", names[o->sort]);
            for (size_t k = 0; k < nr; k++)
                fprintf(f, "%s%" PRId64, k ? ", " : "", ranks[k]);
            fputs("], \"rows\": [", f);
            for (size_t i = 0; i < shown; i++) {
                fputs(i ? ",\n  {\"key\": " : "\n  {\"key\": ", f);
                opp_json_str(f, rows[i].key);
                fputs(", \"values\": [", f);
                for (size_t k = 0; k < nr; k++) {
                    if (k)
                        fputs(", ", f);
                    cell(f, rows[i].v[k], o->sort, 1);
                }
                const char *lab[] = {"min", "median", "max"};
                const double val[] = {rows[i].min, rows[i].median, rows[i].max};
                for (int j = 0; j < 3; j++) {
                    fprintf(f, "%s\"%s\": ", j ? ", " : "], ", lab[j]);
                    cell(f, val[j], o->sort, 1);
                }
                fprintf(f, ", \"slowest_rank\": %" PRId64 "}", ranks[rows[i].slowest]);
            }
            fputs(shown ? "\n]}\n" : "]}\n", f);
        } else {
            fprintf(f, "%s per rank (%zu ranks", names[o->sort], nr);
            if (unranked)
                fprintf(f, "; %zu process%s without a rank left out", unranked,
                        unranked == 1 ? "" : "es");
            fputs(")\n", f);
            fprintf(f, "%-40s", "Name");
            char h[32];
            for (size_t k = 0; k < nr; k++) {
                snprintf(h, sizeof h, "Rank %" PRId64, ranks[k]);
                fprintf(f, "  %12s", h);
            }
            fprintf(f, "  %12s  %12s  %12s  %8s\n", "Min", "Median", "Max", "Slowest");
            for (size_t i = 0; i < shown; i++) {
                const struct rrow *r = &rows[i];
                int w = (int)strlen(r->key) > 40 ? 37 : 40;
                fprintf(f, "%-*.*s%s", w, w, r->key, w == 37 ? "..." : "");
                for (size_t k = 0; k < nr; k++)
                    cell(f, r->v[k], o->sort, 0);
                cell(f, r->min, o->sort, 0);
                cell(f, r->median, o->sort, 0);
                cell(f, r->max, o->sort, 0);
                fprintf(f, "  %8" PRId64 "\n", ranks[r->slowest]);
            }
        }
        if (ferror(f))
            rc = -EIO;
    }
    for (size_t i = 0; i < nrows; i++)
        free(rows[i].v);
    free(rows);
    free(tmp);
    free(ranks);
    return rc;
}
