/* Messages to a person: one line each (control bytes escaped as \xNN),
 * straight to fd 2 (no stdio, no allocation: any thread, any time). */
#include "core/base.h"

#include <string.h>
#include <unistd.h>

void opp_agent_say(const char *a, const char *b, const char *c)
{
    char line[1024];
    size_t n = 0;
    const char *parts[] = {"opprof: ", a, b, c, "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        for (const char *p = parts[i]; p && *p && n < sizeof line - 5; p++) {
            unsigned char ch = (unsigned char)*p;
            if (i == 4 || (ch >= 0x20 && ch != 0x7f)) {
                line[n++] = (char)ch;
                continue;
            } /* a control byte a setting's value brought: escaped, one line */
            line[n++] = '\\';
            line[n++] = 'x';
            line[n++] = "0123456789abcdef"[ch >> 4];
            line[n++] = "0123456789abcdef"[ch & 15];
        }
    if (line[n - 1] != '\n')
        line[n++] = '\n';
    ssize_t w = write(2, line, n);
    (void)w;
}

void opp_say_err(const char *what, int err)
{
    opp_agent_say(what, err ? ": " : "", err ? strerror(err) : "");
}
