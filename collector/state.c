/* The collector's state (state.h) and its one-line messages. */
#include "state.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

struct collector_state collector;
int collector_finished;

void opp_coll_logmsg(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = sizeof line - 2;
    line[n++] = '\n';
    ssize_t w = write(2, "opprof-collector: ", 18);
    w = write(2, line, (size_t)n);
    (void)w;
}
