/* Text tables laid out like torch's key_averages().table(), shared by the
 * report's table, the GPU view and the diff table: every column
 * right-aligned and followed by two spaces; names cut like torch's. */
#ifndef OPP_COLUMNS_H
#define OPP_COLUMNS_H

#include <stdio.h>

#include "views/fmt.h"

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
 * one line; columns not on are left out. Cells are text as fmt.h's
 * opp_text_* write it: one column a character. */
void opp_col_sep(FILE *f, int n, const int *width, const int *on);
void opp_col_line(FILE *f, int n, const int *width, const int *on, const char *const *cells);

/* One cell, padded to width columns: on the left (right-aligned), or on
 * the right when left. */
void opp_col_cell(FILE *f, const char *cell, int width, int left);

/* A name as torch shows it, as terminal text (fmt.h's opp_text_put): cut
 * to 52 characters and "..." when it would not fit in 55. Returns buf. */
#define OPP_CUT_NAME_BUF OPP_TEXT_BUF(OPP_NAME_MAX_WIDTH)
const char *opp_cut_name(const char *name, char *buf);

#endif
