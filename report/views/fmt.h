/* Text formats shared by every output of the report tool: torch's time and
 * percentage formats, JSON strings and CSV fields. */
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
 * characters as \u00XX, bytes that are not valid UTF-8 as \ufffd. */
void opp_json_str(FILE *f, const char *s);

/* s as a CSV field (RFC 4180): quoted when asked or when it holds a comma,
 * a quote or a line break; quotes doubled. */
void opp_csv_field(FILE *f, const char *s, int quote);

/* XML text (SVG): '<', '>', '&' escaped, control characters dropped. */
void opp_xml_char(FILE *f, char ch);
void opp_xml_text(FILE *f, const char *s);

#endif
