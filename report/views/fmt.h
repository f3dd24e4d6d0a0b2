/* Text formats shared by every output of the report tool: torch's time and
 * percentage formats; and names, which come from the traced program and may
 * hold any bytes, as each output shows them: JSON strings, CSV fields, XML
 * text, terminal text, path components. */
#ifndef OPP_FMT_H
#define OPP_FMT_H

#include <stdint.h>
#include <stdio.h>

#define OPP_FMT_MAX 48

static inline double opp_ns_to_us(double ns)
{
    return ns / 1000.0;
}

/* torch's _format_time: "1.234s" from 1 s up, "1.234ms" from 1 ms up, else
 * "1.234us". Returns buf. */
const char *opp_fmt_time(char buf[OPP_FMT_MAX], double ns);

/* time that may be negative: "-" and opp_fmt_time of its magnitude. */
const char *opp_fmt_time_signed(char buf[OPP_FMT_MAX], double ns);

/* torch's _format_memory: "1.50 Gb", "2.00 Mb", "3.25 Kb" (powers of
 * 1024, two decimals) or "512 b". Returns buf. */
const char *opp_fmt_memory(char buf[OPP_FMT_MAX], int64_t bytes);

/* torch's _format_time_share: "12.34%" of total; "NaN" when total is 0. */
const char *opp_fmt_percent(char buf[OPP_FMT_MAX], double part, double total);

/* ns as microseconds, "%.3f" (the CSV and JSON numbers). */
void opp_put_us(FILE *f, double ns);

/* s as a JSON string, quotes included: '"' and '\' escaped, control
 * characters as \u00XX, bytes that are not valid UTF-8 as \ufffd; NULL as
 * null. */
void opp_json_str(FILE *f, const char *s);

/* s as a CSV field (RFC 4180): quoted when asked, when it holds a comma, a
 * quote or a line break, or when it is not UTF-8 (each byte that is not
 * as U+FFFD); quotes doubled. A field that a spreadsheet would take for a
 * formula (starting with '=', '+', '-', '@', tab or CR) is quoted with a
 * "'" put first (OWASP's advice on CSV injection). */
void opp_csv_field(FILE *f, const char *s, int quote);

/* XML text (SVG): '<', '>', '&' escaped, control characters but tab left
 * out, bytes that are not UTF-8 and U+FFFE, U+FFFF (not allowed in XML) as
 * U+FFFD. _n: the first len bytes of s only. */
void opp_xml_text(FILE *f, const char *s);
void opp_xml_textn(FILE *f, const char *s, size_t len);

/* Characters of s (a byte that is not UTF-8 is one), and the bytes of its
 * first `chars` characters. */
size_t opp_utf8_chars(const char *s);
size_t opp_utf8_prefix(const char *s, size_t chars);

/* Text for a terminal (the table, the tree, the diff, every text view):
 * what a terminal would act on rather than show (C0 and C1 controls, DEL,
 * the line and paragraph separators, the bidirectional controls) escaped
 * as "\n", "\r", "\t", "\x1b", "\u009b", "\u202e"; each byte that is
 * not UTF-8 as "\xff". Every character of the result takes one column. */
#define OPP_TEXT_BUF(cols) (4 * (size_t)(cols) + 1) /* bytes that many columns may take */
/* The columns of s shown so, counted no further than past limit. */
size_t opp_text_width(const char *s, size_t limit);
/* s shown so in buf (OPP_TEXT_BUF(cols) bytes), no more than cols columns
 * of it (an escape is never cut); the columns written; *rest (unless NULL)
 * where in s it stopped. */
size_t opp_text_put(char *buf, const char *s, size_t cols, const char **rest);
/* s shown so in buf (OPP_TEXT_BUF(max) bytes): whole when it fits in max
 * columns, else its first max - 3 and "...". Returns buf. */
const char *opp_text_fit(char *buf, const char *s, size_t max);
/* All of s shown so. */
void opp_text_fput(FILE *f, const char *s);

/* s as one file name (cap bytes, NUL included): letters, digits, '-', '_'
 * and '.' (not first) kept, anything else, '/' first, as '_'; never empty. */
void opp_path_component(char *buf, size_t cap, const char *s);

#endif
