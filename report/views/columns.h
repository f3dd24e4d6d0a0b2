/* Text tables laid out like torch's key_averages().table(), shared by the
 * report's table, the GPU view and the diff table: every column
 * right-aligned and followed by two spaces; names cut like torch's. */
#ifndef OPP_COLUMNS_H
#define OPP_COLUMNS_H

#include <stdio.h>

#define OPP_NAME_MAX_WIDTH 55 /* torch's max_name_column_width */
#define OPP_COLUMN_WIDTH 12   /* torch's DEFAULT_COLUMN_WIDTH */

static inline int opp_imax(int a, int b)
{
    return a > b ? a : b;
}

static inline int opp_imin(int a, int b)
{
    return a < b ? a : b;
}

/* A line of dashes under every column that is on (on[c]), or the cells of
 * one line; columns not on are left out. */
void opp_col_sep(FILE *f, int n, const int *width, const int *on);
void opp_col_line(FILE *f, int n, const int *width, const int *on, const char *const *cells);

/* A name as torch shows it: cut to 52 characters and "..." when it would
 * not fit in 55. buf: at least OPP_NAME_MAX_WIDTH + 1 bytes. */
const char *opp_cut_name(const char *name, char *buf);

#endif
