/* The report tool's messages on stderr (say.h). */
#include "views/say.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "views/fmt.h"

void opp_say(const char *fmt, ...)
{
    char line[1024], *text = line;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof line && (text = malloc((size_t)n + 1))) {
        va_start(ap, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    opp_text_fput(stderr, text ? text : line);
    fputc('\n', stderr);
    if (text != line)
        free(text);
}
