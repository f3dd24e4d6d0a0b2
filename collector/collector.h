/* The collector: one process serving every profiled process of a run over
 * a Unix socket, draining their shared rings into one trace file. */
#ifndef OPP_COLLECTOR_H
#define OPP_COLLECTOR_H

#include "options.h"

/* "full" or "summary" into *summary; -1 for anything else. */
int opp_collector_mode(const char *s, int *summary);

/* Serve until the run is over; 0 when the trace was finished. */
int opp_collector_run(const struct opp_collector_opts *o);

#endif
