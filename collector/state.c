/* The collector's state (state.h) and its one-line messages. */
#include "state.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct collector_state collector;
int collector_finished;

void opp_coll_say(const char *line, size_t n)
{
    struct pollfd p = {.fd = 2, .events = POLLOUT};
    int rc;
    while ((rc = poll(&p, 1, OPP_COLL_SAY_MS)) < 0 && errno == EINTR)
        ;
    if (rc != 1 || !(p.revents & POLLOUT))
        return;
    ssize_t w = write(2, line, n);
    (void)w;
}

void opp_coll_logmsg(const char *fmt, ...)
{
    static const char prefix[] = "opprof-collector: ";
    char line[512 + sizeof prefix];
    memcpy(line, prefix, sizeof prefix - 1);
    size_t cap = sizeof line - (sizeof prefix - 1);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line + sizeof prefix - 1, cap - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > cap - 2)
        n = (int)cap - 2;
    size_t len = sizeof prefix - 1 + (size_t)n;
    line[len++] = '\n';
    opp_coll_say(line, len);
}
