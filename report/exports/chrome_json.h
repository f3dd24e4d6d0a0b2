/* The Chrome export's text (chrome.h): numbers and strings written by
 * hand, inline, since fprintf's format parsing was most of an export's
 * time. */
#ifndef OPP_EXPORTS_CHROME_JSON_H
#define OPP_EXPORTS_CHROME_JSON_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gpu.h"
#include "ops.h"
#include "views/fmt.h"

/* Numbers by hand: fprintf's format parsing was most of an export's time. */
static inline void put_u64(FILE *f, uint64_t v)
{
    char b[24], *p = b + sizeof b;
    do
        *--p = (char)('0' + v % 10);
    while (v /= 10);
    fwrite(p, 1, (size_t)(b + sizeof b - p), f);
}

/* Microseconds since the base, three decimals, as Kineto writes them. */
static inline void put_us(FILE *f, uint64_t ns, uint64_t base)
{
    uint64_t d = ns > base ? ns - base : 0, r = d % 1000;
    put_u64(f, d / 1000);
    char frac[4] = {'.', (char)('0' + r / 100), (char)('0' + r / 10 % 10), (char)('0' + r % 10)};
    fwrite(frac, 1, 4, f);
}

/* One event is built here and written with one fwrite: a few hundred
 * small stdio calls per event were most of an export's time. */
struct sb {
    char *p, *end;
    char buf[OPP_NAME_STR_MAX + OPP_SHAPES_MAX * OPP_RANK_MAX * 24 + 1024];
};

static inline void sb_init(struct sb *b)
{
    b->p = b->buf;
    b->end = b->buf + sizeof b->buf;
}

static inline void sb_mem(struct sb *b, const char *s, size_t n)
{
    if (n > (size_t)(b->end - b->p))
        n = (size_t)(b->end - b->p); /* never: the buffer holds the largest event */
    memcpy(b->p, s, n);
    b->p += n;
}

#define SB_LIT(b, lit) sb_mem((b), lit, sizeof lit - 1)

static inline void sb_str(struct sb *b, const char *s)
{
    sb_mem(b, s, strlen(s));
}

static inline void sb_u64(struct sb *b, uint64_t v)
{
    /* the digits end at t + 20 (a u64 has at most 20), and 20 bytes are
     * copied from the first: a copy of a constant size is a few moves, one
     * of the digits' own length a call of memcpy at each number */
    char t[40], *q = t + 20;
    do
        *--q = (char)('0' + v % 10);
    while (v /= 10);
    size_t n = (size_t)(t + 20 - q);
    if (b->end - b->p < 20) {
        sb_mem(b, q, n);
        return;
    }
    memcpy(b->p, q, 20);
    b->p += n;
}

static inline void sb_i64(struct sb *b, int64_t v)
{
    if (v < 0) {
        SB_LIT(b, "-");
        sb_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        sb_u64(b, (uint64_t)v);
    }
}

static inline void sb_us(struct sb *b, uint64_t ns, uint64_t base)
{
    uint64_t d = ns > base ? ns - base : 0, r = d % 1000;
    sb_u64(b, d / 1000);
    char frac[4] = {'.', (char)('0' + r / 100), (char)('0' + r / 10 % 10), (char)('0' + r % 10)};
    sb_mem(b, frac, 4);
}

/* A JSON string: plain printable ASCII is copied; anything else goes
 * through opp_json_str (written to f after what the buffer holds). */
static inline void sb_json(struct sb *b, FILE *f, const char *s)
{
    size_t n = 0;
    for (const unsigned char *u = (const unsigned char *)s; *u; u++, n++)
        if (*u < 0x20 || *u >= 0x80 || *u == '"' || *u == '\\')
            break;
    if (!s[n] && n + 2 < (size_t)(b->end - b->p)) {
        SB_LIT(b, "\"");
        sb_mem(b, s, n);
        SB_LIT(b, "\"");
        return;
    }
    fwrite(b->buf, 1, (size_t)(b->p - b->buf), f);
    sb_init(b);
    opp_json_str(f, s);
}

/* opp_shapes_format's text, without snprintf. */
static inline void sb_shapes(struct sb *b, const struct opp_shapes *s)
{
    SB_LIT(b, "[");
    for (int i = 0; i < s->n; i++) {
        if (i)
            SB_LIT(b, ", ");
        SB_LIT(b, "[");
        for (int j = 0; j < s->rank[i]; j++) {
            if (j)
                SB_LIT(b, ", ");
            sb_i64(b, s->dim[i][j]);
        }
        SB_LIT(b, "]");
    }
    SB_LIT(b, "]");
}

#endif
