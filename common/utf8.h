/* UTF-8 as names arrive from a traced program: any bytes. One character
 * at a time, for the outputs that must show them (report/views/fmt.h). */
#ifndef OPP_UTF8_H
#define OPP_UTF8_H

#include <stdint.h>

/* U+FFFD, what the outputs show for a byte that is not UTF-8. */
#define OPP_UTF8_REPLACEMENT "\xef\xbf\xbd"

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
