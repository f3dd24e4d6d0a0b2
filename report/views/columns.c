/* Text table columns like torch's (see columns.h). */
#include "views/columns.h"

#include <string.h>

#include "views/fmt.h"

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

void opp_col_cell(FILE *f, const char *cell, int width, int left)
{
    size_t w = opp_text_width(cell, (size_t)(width > 0 ? width : 0));
    if (left)
        fputs(cell, f);
    for (size_t k = w; k < (size_t)(width > 0 ? width : 0); k++)
        putc(' ', f);
    if (!left)
        fputs(cell, f);
}

void opp_col_line(FILE *f, int n, const int *width, const int *on, const char *const *cells)
{
    for (int c = 0; c < n; c++)
        if (on[c]) {
            opp_col_cell(f, cells[c], width[c], 0);
            fputs("  ", f);
        }
    putc('\n', f);
}

const char *opp_cut_name(const char *name, char *buf)
{
    opp_text_put(buf, name, OPP_NAME_MAX_WIDTH - 3, NULL);
    if (opp_text_width(name, OPP_NAME_MAX_WIDTH - 3) >= OPP_NAME_MAX_WIDTH - 3)
        memcpy(buf + strlen(buf), "...", 4); /* torch's rule: 52 or more are cut */
    return buf;
}
