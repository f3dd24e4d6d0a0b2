/* Time, percentage, JSON and CSV formatting (see fmt.h). */
#include "views/fmt.h"

#include <string.h>

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

/* Bytes in the well-formed UTF-8 sequence at s (1 to 4), 0 if there is none
 * (overlong forms, surrogates and values past U+10FFFF are not). s is
 * NUL-terminated, so the continuation checks stop at its end. */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    int n;
    if (c < 0x80)
        return 1;
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
    if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) ||
        (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
        return 0;
    return n;
}

void opp_put_us(FILE *f, double ns)
{
    fprintf(f, "%.3f", opp_ns_to_us(ns));
}

void opp_json_str(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    putc('"', f);
    while (*s) {
        int n = utf8_len(s);
        if (n == 0) {
            fputs("\\ufffd", f);
            s++;
        } else if (*s == '"' || *s == '\\') {
            putc('\\', f);
            putc(*s++, f);
        } else if (*s < 0x20) {
            fprintf(f, "\\u%04x", *s++);
        } else {
            fwrite(s, 1, (size_t)n, f);
            s += n;
        }
    }
    putc('"', f);
}

void opp_csv_field(FILE *f, const char *s, int quote)
{
    if (!quote && !s[strcspn(s, ",\"\r\n")]) {
        fputs(s, f);
        return;
    }
    putc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            putc('"', f);
        putc(*s, f);
    }
    putc('"', f);
}

void opp_xml_char(FILE *f, char ch)
{
    if (ch == '<')
        fputs("&lt;", f);
    else if (ch == '>')
        fputs("&gt;", f);
    else if (ch == '&')
        fputs("&amp;", f);
    else if ((unsigned char)ch >= 0x20 || ch == '\t')
        fputc(ch, f); /* other control characters are not allowed in XML */
}

void opp_xml_text(FILE *f, const char *s)
{
    for (; *s; s++)
        opp_xml_char(f, *s);
}
