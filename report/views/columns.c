/* Text table columns like torch's (see columns.h). */
#include "views/columns.h"

#include <string.h>

void opp_col_sep(FILE *f, int n, const int *width, const int *on)
{
    for (int c = 0; c < n; c++) {
        if (!on[c])
            continue;
        for (int k = 0; k < width[c]; k++)
            putc('-', f);
        fputs("  ", f);
    }
    putc('\n', f);
}

void opp_col_line(FILE *f, int n, const int *width, const int *on, const char *const *cells)
{
    for (int c = 0; c < n; c++)
        if (on[c])
            fprintf(f, "%*s  ", width[c], cells[c]);
    putc('\n', f);
}

const char *opp_cut_name(const char *name, char *buf)
{
    if (strlen(name) < OPP_NAME_MAX_WIDTH - 3)
        return name;
    snprintf(buf, OPP_NAME_MAX_WIDTH + 1, "%.*s...", OPP_NAME_MAX_WIDTH - 3, name);
    return buf;
}
