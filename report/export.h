/* Exports of a trace to formats other tools read (`opprof export`). Each
 * streams the trace file, so memory does not grow with its events. */
#ifndef OPP_EXPORT_H
#define OPP_EXPORT_H

#include <stddef.h>
#include <stdio.h>

/* Chrome trace JSON as Kineto writes it (Perfetto, chrome://tracing, HTA).
 * 0 when written (err may still hold a warning: the trace was cut short and
 * what was readable is exported), -1 with err set. */
int opp_export_chrome(const char *trace, FILE *out, char *err, size_t errlen);

#endif
