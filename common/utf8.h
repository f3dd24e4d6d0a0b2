/* UTF-8 as names arrive from a traced program: any bytes. One character
 * at a time, for the outputs that must show them (report/views/fmt.h), and
 * where a name is cut to fit. */
#ifndef OPP_UTF8_H
#define OPP_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* U+FFFD, what the outputs show for a byte that is not UTF-8. */
#define OPP_UTF8_REPLACEMENT "\xef\xbf\xbd"

/* The n bytes at s less a last character cut short: a name cut to fit
 * ends before the character it cut. Any other byte is kept (a name may
 * hold any). Inline: the preload cuts names too. */
static inline size_t opp_utf8_whole(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = n;
    while (i > 0 && n - i < 3 && (u[i - 1] & 0xc0) == 0x80)
        i--;
    if (i == 0 || u[i - 1] < 0xc0 || u[i - 1] >= 0xf8)
        return n; /* no lead byte before the continuation bytes */
    size_t want = u[i - 1] >= 0xf0 ? 4 : u[i - 1] >= 0xe0 ? 3 : 2;
    return n - (i - 1) < want ? i - 1 : n;
}

/* Bytes in the well-formed UTF-8 sequence at s (1 to 4), its code point in
 * *cp; 0 if there is none (overlong forms, surrogates and values past
 * U+10FFFF are not). s is NUL-terminated, so the continuation checks stop
 * at its end. */
int opp_utf8_next(const char *s, uint32_t *cp);

/* Whether s is well-formed UTF-8 throughout. */
int opp_utf8_valid(const char *s);

/* A copy of s (malloc'd) with U+FFFD for each byte that is not UTF-8, or
 * NULL when out of memory. */
char *opp_utf8_fixed(const char *s);

#endif
