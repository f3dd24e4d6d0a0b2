/* `opprof top`'s screen, as text: a few lines of counts (records, drops,
 * processes, threads, steps) and the table of operators, the last
 * interval's and since the start. The same text goes to the terminal
 * (ncurses) and, as snapshots, to a log. */
#ifndef OPP_TOP_VIEW_H
#define OPP_TOP_VIEW_H

#include <stdio.h>

#include "analysis/top.h"

struct opp_top_show {
    size_t rows;            /* table rows at most (0: every one) */
    enum opp_top_sort sort; /* marked in the heading */
    enum opp_top_group group;
    int paused; /* the display is paused (the keys' p) */
    int ended;  /* the run is over: the last snapshot */
    int lost;   /* the collector went, or stopped answering, before the run's end */
    int keys;   /* a line of the keys last */
};

/* 0, or -EIO on a write error. */
int opp_out_top(FILE *f, const struct opp_top_view *v, const struct opp_top_show *o);
/* The lines opp_out_top writes besides the table's rows. */
size_t opp_top_lines_around(const struct opp_top_view *v, const struct opp_top_show *o);

#endif
