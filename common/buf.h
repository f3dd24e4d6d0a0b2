/* Bounds-checked byte buffers for the wire and file formats: writers over a
 * fixed buffer (no allocation, usable in the preload after fork) and readers
 * that never read past their end. Errors are sticky flags, checked once. */
#ifndef OPP_BUF_H
#define OPP_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct opp_wbuf {
    uint8_t *p;
    size_t len, cap;
    int overflow;
};

struct opp_rbuf {
    const uint8_t *p;
    size_t len, pos;
    int bad;
};

static inline void opp_wbuf_init(struct opp_wbuf *w, void *mem, size_t cap)
{
    w->p = mem;
    w->len = 0;
    w->cap = cap;
    w->overflow = 0;
}

static inline void opp_put_bytes(struct opp_wbuf *w, const void *src, size_t n)
{
    if (w->overflow || n > w->cap - w->len) {
        w->overflow = 1;
        return;
    }
    memcpy(w->p + w->len, src, n);
    w->len += n;
}

static inline void opp_put_u32(struct opp_wbuf *w, uint32_t v) { opp_put_bytes(w, &v, 4); }
static inline void opp_put_u64(struct opp_wbuf *w, uint64_t v) { opp_put_bytes(w, &v, 8); }

/* Unsigned LEB128 where the caller knows 10 bytes are free. */
static inline __attribute__((always_inline)) void opp_put_varint_room(struct opp_wbuf *w,
                                                                      uint64_t v)
{
    uint8_t *q = w->p + w->len;
    while (v > 0x7f) {
        *q++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *q++ = (uint8_t)v;
    w->len = (size_t)(q - w->p);
}

/* Unsigned LEB128: at most 10 bytes. */
static inline void opp_put_varint(struct opp_wbuf *w, uint64_t v)
{
    if (w->overflow || w->cap - w->len < 10) {
        uint8_t tmp[10];
        size_t n = 0;
        do {
            tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
            v >>= 7;
        } while (v);
        opp_put_bytes(w, tmp, n);
        return;
    }
    opp_put_varint_room(w, v);
}

/* u32 length, then the bytes (no terminator). */
static inline void opp_put_str(struct opp_wbuf *w, const char *s, size_t n)
{
    opp_put_u32(w, (uint32_t)n);
    opp_put_bytes(w, s, n);
}

static inline void opp_rbuf_init(struct opp_rbuf *r, const void *mem, size_t len)
{
    r->p = mem;
    r->len = len;
    r->pos = 0;
    r->bad = 0;
}

static inline size_t opp_rbuf_left(const struct opp_rbuf *r) { return r->len - r->pos; }

static inline int opp_get_bytes(struct opp_rbuf *r, void *dst, size_t n)
{
    if (r->bad || n > r->len - r->pos) {
        r->bad = 1;
        memset(dst, 0, n);
        return -1;
    }
    memcpy(dst, r->p + r->pos, n);
    r->pos += n;
    return 0;
}

static inline uint32_t opp_get_u32(struct opp_rbuf *r)
{
    uint32_t v;
    opp_get_bytes(r, &v, 4);
    return v;
}

static inline uint64_t opp_get_u64(struct opp_rbuf *r)
{
    uint64_t v;
    opp_get_bytes(r, &v, 8);
    return v;
}

static inline uint64_t opp_get_varint(struct opp_rbuf *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (r->bad || r->pos >= r->len) {
            r->bad = 1;
            return 0;
        }
        uint8_t b = r->p[r->pos++];
        if (shift == 63 && b > 1) { /* would overflow 64 bits */
            r->bad = 1;
            return 0;
        }
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    r->bad = 1;
    return 0;
}

/* A string of at most max bytes; points into the buffer (not terminated). */
static inline const char *opp_get_str(struct opp_rbuf *r, size_t max, size_t *n)
{
    uint32_t len = opp_get_u32(r);
    if (r->bad || len > max || len > r->len - r->pos) {
        r->bad = 1;
        *n = 0;
        return "";
    }
    const char *s = (const char *)r->p + r->pos;
    r->pos += len;
    *n = len;
    return s;
}

#endif
