/* `opprof report --by-rank`: the rank table as text or JSON (see by_rank.h). */
#include "views/by_rank.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "views/columns.h"
#include "views/fmt.h"

static void cell(FILE *f, double v, enum opp_sort_key k, int json)
{
    enum opp_unit u = opp_sort_key_unit(k);
    int time = u == OPP_UNIT_NS || u == OPP_UNIT_NS_PER_CALL;
    char b[OPP_FMT_MAX];
    if (json)
        fprintf(f, time ? "%.3f" : "%.0f", time ? v / 1000.0 : v);
    else if (time)
        fprintf(f, "  %12s", opp_fmt_time(b, v));
    else
        fprintf(f, "  %12.0f", v);
}

static void out_json(FILE *f, const struct opp_rank_table *t, enum opp_sort_key key, size_t shown)
{
    fprintf(f, "{\"metric\": \"%s\", \"ranks\": [", opp_sort_key_name(key));
    for (size_t k = 0; k < t->nranks; k++)
        fprintf(f, "%s%" PRId64, k ? ", " : "", t->ranks[k]);
    fputs("], \"rows\": [", f);
    for (size_t i = 0; i < shown; i++) {
        const struct opp_rank_row *r = &t->rows[i];
        fputs(i ? ",\n  {\"key\": " : "\n  {\"key\": ", f);
        opp_json_str(f, r->key);
        fputs(", \"values\": [", f);
        for (size_t k = 0; k < t->nranks; k++) {
            if (k)
                fputs(", ", f);
            cell(f, r->v[k], key, 1);
        }
        const char *lab[] = {"min", "median", "max"};
        const double val[] = {r->min, r->median, r->max};
        for (int j = 0; j < 3; j++) {
            fprintf(f, "%s\"%s\": ", j ? ", " : "], ", lab[j]);
            cell(f, val[j], key, 1);
        }
        fprintf(f, ", \"slowest_rank\": %" PRId64 "}", t->ranks[r->slowest]);
    }
    fputs(shown ? "\n]}\n" : "]}\n", f);
}

static void out_text(FILE *f, const struct opp_rank_table *t, enum opp_sort_key key, size_t shown)
{
    fprintf(f, "%s per rank (%zu rank%s", opp_sort_key_name(key), t->nranks,
            t->nranks == 1 ? "" : "s");
    if (t->unranked)
        fprintf(f, "; %zu process%s without a rank left out", t->unranked,
                t->unranked == 1 ? "" : "es");
    fputs(")\n", f);
    fprintf(f, "%-40s", "Name");
    char h[32];
    for (size_t k = 0; k < t->nranks; k++) {
        snprintf(h, sizeof h, "Rank %" PRId64, t->ranks[k]);
        fprintf(f, "  %12s", h);
    }
    fprintf(f, "  %12s  %12s  %12s  %8s\n", "Min", "Median", "Max", "Slowest");
    for (size_t i = 0; i < shown; i++) {
        const struct opp_rank_row *r = &t->rows[i];
        char name[OPP_TEXT_BUF(40)];
        opp_col_cell(f, opp_text_fit(name, r->key, 40), 40, 1);
        for (size_t k = 0; k < t->nranks; k++)
            cell(f, r->v[k], key, 0);
        cell(f, r->min, key, 0);
        cell(f, r->median, key, 0);
        cell(f, r->max, key, 0);
        fprintf(f, "  %8" PRId64 "\n", t->ranks[r->slowest]);
    }
}

int opp_out_by_rank(FILE *f, const struct opp_rank_table *t, enum opp_sort_key key, size_t limit,
                    int json)
{
    size_t shown = limit && limit < t->nrows ? limit : t->nrows;
    if (json)
        out_json(f, t, key, shown);
    else
        out_text(f, t, key, shown);
    return ferror(f) ? -EIO : 0;
}
