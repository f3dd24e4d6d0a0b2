/* UTF-8 decoding (see utf8.h). */
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

int opp_utf8_next(const char *str, uint32_t *cp)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned c = s[0];
    int n;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4;
    else
        return 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) || (c == 0xf0 && s[1] < 0x90) ||
        (c == 0xf4 && s[1] > 0x8f))
        return 0;
    uint32_t v = c & (0x7fu >> n);
    for (int i = 1; i < n; i++)
        v = v << 6 | (s[i] & 0x3fu);
    *cp = v;
    return n;
}

int opp_utf8_valid(const char *s)
{
    uint32_t cp;
    while (*s) {
        int n = opp_utf8_next(s, &cp);
        if (!n)
            return 0;
        s += n;
    }
    return 1;
}

char *opp_utf8_fixed(const char *s)
{
    uint32_t cp;
    size_t len = 0;
    for (const char *p = s; *p;) {
        int n = opp_utf8_next(p, &cp);
        len += n ? (size_t)n : sizeof OPP_UTF8_REPLACEMENT - 1;
        p += n ? n : 1;
    }
    char *out = malloc(len + 1), *o = out;
    if (!out)
        return NULL;
    while (*s) {
        int n = opp_utf8_next(s, &cp);
        if (n) {
            memcpy(o, s, (size_t)n);
            o += n;
            s += n;
        } else {
            memcpy(o, OPP_UTF8_REPLACEMENT, sizeof OPP_UTF8_REPLACEMENT - 1);
            o += sizeof OPP_UTF8_REPLACEMENT - 1;
            s++;
        }
    }
    *o = 0;
    return out;
}
