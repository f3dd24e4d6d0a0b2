/* Time and percentage formats, and names as each output shows them:
 * JSON, CSV, XML, terminal text, path components (see fmt.h). */
#include "views/fmt.h"

#include <stdlib.h>
#include <string.h>

#include "utf8.h"

const char *opp_fmt_time(char buf[OPP_FMT_MAX], double ns)
{
    double us = opp_ns_to_us(ns);
    if (us >= 1e6)
        snprintf(buf, OPP_FMT_MAX, "%.3fs", us / 1e6);
    else if (us >= 1e3)
        snprintf(buf, OPP_FMT_MAX, "%.3fms", us / 1e3);
    else
        snprintf(buf, OPP_FMT_MAX, "%.3fus", us);
    return buf;
}

const char *opp_fmt_time_signed(char buf[OPP_FMT_MAX], double ns)
{
    if (ns >= 0)
        return opp_fmt_time(buf, ns);
    char mag[OPP_FMT_MAX];
    snprintf(buf, OPP_FMT_MAX, "-%s", opp_fmt_time(mag, -ns));
    return buf;
}

const char *opp_fmt_memory(char buf[OPP_FMT_MAX], int64_t bytes)
{
    const double kb = 1024, mb = 1024 * kb, gb = 1024 * mb;
    double b = (double)bytes, mag = b < 0 ? -b : b;
    if (mag >= gb)
        snprintf(buf, OPP_FMT_MAX, "%.2f Gb", b / gb);
    else if (mag >= mb)
        snprintf(buf, OPP_FMT_MAX, "%.2f Mb", b / mb);
    else if (mag >= kb)
        snprintf(buf, OPP_FMT_MAX, "%.2f Kb", b / kb);
    else
        snprintf(buf, OPP_FMT_MAX, "%lld b", (long long)bytes);
    return buf;
}

const char *opp_fmt_percent(char buf[OPP_FMT_MAX], double part, double total)
{
    if (total == 0)
        snprintf(buf, OPP_FMT_MAX, "NaN");
    else
        snprintf(buf, OPP_FMT_MAX, "%.2f%%", part * 100.0 / total);
    return buf;
}

void opp_put_us(FILE *f, double ns)
{
    fprintf(f, "%.3f", opp_ns_to_us(ns));
}

void opp_json_str(FILE *f, const char *s)
{
    uint32_t cp;
    if (!s) {
        fputs("null", f);
        return;
    }
    putc('"', f);
    while (*s) {
        int n = opp_utf8_next(s, &cp);
        if (n == 0) {
            fputs("\\ufffd", f);
            s++;
        } else if (*s == '"' || *s == '\\') {
            putc('\\', f);
            putc(*s++, f);
        } else if (cp < 0x20) {
            fprintf(f, "\\u%04x", (unsigned)cp);
            s++;
        } else {
            fwrite(s, 1, (size_t)n, f);
            s += n;
        }
    }
    putc('"', f);
}

/* Whether a spreadsheet would take a field starting with c for a formula. */
static int formula_start(char c)
{
    return c == '=' || c == '+' || c == '-' || c == '@' || c == '\t' || c == '\r';
}

void opp_csv_field(FILE *f, const char *s, int quote)
{
    uint32_t cp;
    int formula = formula_start(*s);
    if (!quote && !formula && !s[strcspn(s, ",\"\r\n")] && opp_utf8_valid(s)) {
        fputs(s, f);
        return;
    }
    putc('"', f);
    if (formula)
        putc('\'', f);
    while (*s) {
        int n = opp_utf8_next(s, &cp);
        if (n == 0) {
            fputs(OPP_UTF8_REPLACEMENT, f);
            s++;
            continue;
        }
        if (*s == '"')
            putc('"', f);
        fwrite(s, 1, (size_t)n, f);
        s += n;
    }
    putc('"', f);
}

void opp_xml_textn(FILE *f, const char *s, size_t len)
{
    uint32_t cp;
    const char *end = s + len;
    while (s < end && *s) {
        int n = opp_utf8_next(s, &cp);
        if (n == 0 || s + n > end || cp == 0xfffe || cp == 0xffff) {
            fputs(OPP_UTF8_REPLACEMENT, f);
            s += n && s + n <= end ? n : 1;
        } else if (cp == '<') {
            fputs("&lt;", f), s++;
        } else if (cp == '>') {
            fputs("&gt;", f), s++;
        } else if (cp == '&') {
            fputs("&amp;", f), s++;
        } else if (cp < 0x20 && cp != '\t') {
            s++; /* other control characters are not allowed in XML */
        } else {
            fwrite(s, 1, (size_t)n, f);
            s += n;
        }
    }
}

void opp_xml_text(FILE *f, const char *s)
{
    opp_xml_textn(f, s, strlen(s));
}

size_t opp_utf8_prefix(const char *s, size_t chars)
{
    uint32_t cp;
    const char *p = s;
    for (; *p && chars; chars--) {
        int n = opp_utf8_next(p, &cp);
        p += n ? n : 1;
    }
    return (size_t)(p - s);
}

size_t opp_utf8_chars(const char *s)
{
    uint32_t cp;
    size_t k = 0;
    for (; *s; k++) {
        int n = opp_utf8_next(s, &cp);
        s += n ? n : 1;
    }
    return k;
}

/* ---- text for a terminal ---- */

/* What a terminal would act on rather than show: C0 and C1 controls, DEL,
 * the line and paragraph separators, the bidirectional controls. */
static int acts(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x200e || cp == 0x200f ||
           cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

/* The character at s as text: its bytes (*len, in *out) and columns. */
struct text_char {
    const char *out;
    int len, cols, step; /* step: bytes of s it stands for */
    char esc[8];
};

static void text_char(const char *s, struct text_char *t)
{
    uint32_t cp;
    int n = opp_utf8_next(s, &cp);
    t->step = n ? n : 1;
    if (n && !acts(cp)) {
        t->out = s;
        t->len = n;
        t->cols = 1;
        return;
    }
    t->out = t->esc;
    if (!n)
        t->len = snprintf(t->esc, sizeof t->esc, "\\x%02x", (unsigned char)*s);
    else if (cp == '\n' || cp == '\r' || cp == '\t')
        t->len = snprintf(t->esc, sizeof t->esc, "\\%c", cp == '\n' ? 'n' : cp == '\r' ? 'r' : 't');
    else if (cp < 0x80)
        t->len = snprintf(t->esc, sizeof t->esc, "\\x%02x", (unsigned)cp);
    else
        t->len = snprintf(t->esc, sizeof t->esc, "\\u%04x", (unsigned)cp);
    t->cols = t->len;
}

size_t opp_text_width(const char *s, size_t limit)
{
    struct text_char t;
    size_t w = 0;
    for (; *s && w <= limit; s += t.step) {
        text_char(s, &t);
        w += (size_t)t.cols;
    }
    return w;
}

size_t opp_text_put(char *buf, const char *s, size_t cols, const char **rest)
{
    struct text_char t;
    size_t w = 0, len = 0;
    for (; *s; s += t.step) {
        text_char(s, &t);
        if (w + (size_t)t.cols > cols)
            break;
        memcpy(buf + len, t.out, (size_t)t.len);
        len += (size_t)t.len;
        w += (size_t)t.cols;
    }
    buf[len] = 0;
    if (rest)
        *rest = s;
    return w;
}

const char *opp_text_fit(char *buf, const char *s, size_t max)
{
    const char *rest;
    opp_text_put(buf, s, max, &rest);
    if (*rest && max >= 3) {
        opp_text_put(buf, s, max - 3, NULL);
        memcpy(buf + strlen(buf), "...", 4);
    }
    return buf;
}

void opp_text_fput(FILE *f, const char *s)
{
    struct text_char t;
    for (; *s; s += t.step) {
        text_char(s, &t);
        fwrite(t.out, 1, (size_t)t.len, f);
    }
}

void opp_path_component(char *buf, size_t cap, const char *s)
{
    if (!cap)
        return;
    size_t n = 0;
    for (; *s && n + 1 < cap; s++, n++) {
        char c = *s;
        int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '-' || c == '_' || (c == '.' && n > 0);
        buf[n] = keep ? c : '_';
    }
    if (!n && cap > 1)
        buf[n++] = '_';
    buf[n] = 0;
}
