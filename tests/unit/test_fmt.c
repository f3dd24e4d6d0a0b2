/* views/fmt.c: times and percentages as torch writes them, and names made
 * safe for each output (JSON, CSV, XML, a terminal, a file name). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/columns.h"
#include "views/fmt.h"
#include "utf8.h"

START_TEST(format_times_and_percents)
{
    char buf[OPP_FMT_MAX];
    ck_assert_str_eq(opp_fmt_time(buf, 0), "0.000us");
    ck_assert_str_eq(opp_fmt_time(buf, 999), "0.999us");
    ck_assert_str_eq(opp_fmt_time(buf, 999999), "999.999us");
    ck_assert_str_eq(opp_fmt_time(buf, 1000000), "1.000ms");
    ck_assert_str_eq(opp_fmt_time(buf, 999999000), "999.999ms");
    ck_assert_str_eq(opp_fmt_time(buf, 1000000000), "1.000s");
    ck_assert_str_eq(opp_fmt_time(buf, 1234567890123.0), "1234.568s");
    ck_assert_str_eq(opp_fmt_percent(buf, 1, 3), "33.33%");
    ck_assert_str_eq(opp_fmt_percent(buf, 0, 0), "NaN");
}
END_TEST

START_TEST(json_and_csv_escaping)
{
    char *out;
    size_t len;
    FILE *f = open_memstream(&out, &len);
    /* Quote, backslash, controls, é, then broken UTF-8: a lone 0xff, an
     * overlong NUL (c0 80), a surrogate (ed a0 80), a cut sequence (e2 82). */
    opp_json_str(f, "a\"b\\c\n\x01\x7f\xc3\xa9|\xff|\xc0\x80|\xed\xa0\x80|\xe2\x82");
    fputc(' ', f);
    opp_json_str(f, "\xf0\x9f\x98\x80\xf4\x90\x80\x80");
    fputc(' ', f);
    opp_csv_field(f, "plain", 0);
    fputc(' ', f);
    opp_csv_field(f, "a,\"b\"", 0);
    fputc(' ', f);
    opp_csv_field(f, "x", 1);
    fclose(f);
    ck_assert_str_eq(out, "\"a\\\"b\\\\c\\u000a\\u0001\x7f\xc3\xa9|\\ufffd|\\ufffd\\ufffd|"
                          "\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\" "
                          "\"\xf0\x9f\x98\x80\\ufffd\\ufffd\\ufffd\\ufffd\" "
                          "plain \"a,\"\"b\"\"\" \"x\"");
    free(out);
}
END_TEST

/* CSV: a field a spreadsheet would take for a formula quoted with a "'"
 * first; bytes that are not UTF-8 as U+FFFD (then quoted). */
START_TEST(csv_formulas_and_bad_utf8)
{
    char *out;
    size_t len;
    FILE *f = open_memstream(&out, &len);
    const char *in[] = {
        "=cmd|' /C calc'!A0", "+1", "-x", "@SUM(A1)", "\tx", "\rx", "a=b", "bad\xff", "\"=\"", ""};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        opp_csv_field(f, in[i], 0);
        fputc('|', f);
    }
    fclose(f);
    ck_assert_str_eq(out, "\"'=cmd|' /C calc'!A0\"|\"'+1\"|\"'-x\"|\"'@SUM(A1)\"|\"'\tx\"|"
                          "\"'\rx\"|a=b|\"bad\xef\xbf\xbd\"|\"\"\"=\"\"\"||");
    free(out);
}
END_TEST

/* XML: markup escaped, control characters but tab left out, U+FFFD for
 * what XML does not allow; the _n form never ends inside a character. */
START_TEST(xml_text_is_xml)
{
    char *out;
    size_t len;
    FILE *f = open_memstream(&out, &len);
    opp_xml_text(f, "<a&b>\t\x1b\n\xff\xef\xbf\xbe\xef\xbf\xbf\xef\xbf\xbd\xc3\xa9\x7f");
    fputc('|', f);
    opp_xml_textn(f, "ab\xc3\xa9", 3); /* cut inside the é */
    fclose(f);
    ck_assert_str_eq(out, "&lt;a&amp;b&gt;\t\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                          "\xc3\xa9\x7f|ab\xef\xbf\xbd");
    ck_assert_uint_eq(opp_utf8_chars("a\xc3\xa9\xff"
                                     "b"),
                      4);
    ck_assert_uint_eq(opp_utf8_prefix("a\xc3\xa9\xff"
                                      "b",
                                      2),
                      3);
    free(out);
}
END_TEST

/* A name cut to fit ends before the character it cut (opp_utf8_whole);
 * any other byte is kept. */
START_TEST(utf8_whole_drops_a_cut_character)
{
    ck_assert_uint_eq(opp_utf8_whole("abc", 3), 3);
    ck_assert_uint_eq(opp_utf8_whole("", 0), 0);
    ck_assert_uint_eq(opp_utf8_whole("a\xc3\xa9", 3), 3);
    ck_assert_uint_eq(opp_utf8_whole("a\xc3\xa9", 2), 1);
    ck_assert_uint_eq(opp_utf8_whole("\xe7\xba\xbf", 1), 0);
    ck_assert_uint_eq(opp_utf8_whole("\xe7\xba\xbf", 2), 0);
    ck_assert_uint_eq(opp_utf8_whole("\xe7\xba\xbf", 3), 3);
    ck_assert_uint_eq(opp_utf8_whole("x\xf0\x9f\x94\xa5", 4), 1);
    ck_assert_uint_eq(opp_utf8_whole("x\xf0\x9f\x94\xa5", 5), 5);
    /* not UTF-8: kept as it is */
    ck_assert_uint_eq(opp_utf8_whole("a\x80\x80", 3), 3);
    ck_assert_uint_eq(opp_utf8_whole("a\x80\x80\x80\x80", 5), 5);
    ck_assert_uint_eq(opp_utf8_whole("a\xff", 2), 2);
    ck_assert_uint_eq(opp_utf8_whole("\xc3\xa9\xa9", 3), 3);
}
END_TEST

/* Terminal text: what a terminal acts on escaped, one column a character;
 * cut by columns, never inside an escape. */
START_TEST(text_escapes_controls)
{
    char buf[OPP_TEXT_BUF(64)];
    const char *s = "a\x1b[2J\r\n\t\x7f\xc2\x9b\xe2\x80\xae\xe2\x80\xa8\xff\xc3\xa9z";
    const char *want = "a\\x1b[2J\\r\\n\\t\\x7f\\u009b\\u202e\\u2028\\xff\xc3\xa9z";
    const char *rest;
    ck_assert_uint_eq(opp_text_put(buf, s, 64, &rest), 42);
    ck_assert_str_eq(buf, want);
    ck_assert_str_eq(rest, "");
    ck_assert_uint_eq(opp_text_width(s, SIZE_MAX), 42);
    ck_assert_uint_eq(opp_text_width(s, 3), 5); /* counts no further than past 3 */
    /* 3 columns: "a" and no part of "\x1b" */
    ck_assert_uint_eq(opp_text_put(buf, s, 3, &rest), 1);
    ck_assert_str_eq(buf, "a");
    ck_assert_str_eq(rest, s + 1);
    ck_assert_str_eq(opp_text_fit(buf, "abcdef", 6), "abcdef");
    ck_assert_str_eq(opp_text_fit(buf, "abc\ndef", 6), "abc...");
    ck_assert_str_eq(opp_text_fit(buf,
                                  "\x1b"
                                  "bcdefgh",
                                  7),
                     "\\x1b...");
    /* torch's cut: 52 characters or more shown as 52 and "..." */
    char name[OPP_CUT_NAME_BUF], long_name[60];
    memset(long_name, 'x', 51);
    long_name[51] = 0;
    ck_assert_str_eq(opp_cut_name(long_name, name), long_name);
    strcpy(long_name + 50, "\n");
    ck_assert_uint_eq(strlen(opp_cut_name(long_name, name)), 55);
    ck_assert_str_eq(name + 50, "\\n...");
    char *out;
    size_t len;
    FILE *f = open_memstream(&out, &len);
    opp_text_fput(f, "x\x1b]0;t\x07");
    opp_col_cell(f, "\xc3\xa9", 3, 0);
    opp_col_cell(f, "\xc3\xa9", 3, 1);
    fputc('|', f);
    fclose(f);
    ck_assert_str_eq(out, "x\\x1b]0;t\\x07  \xc3\xa9\xc3\xa9  |");
    free(out);
}
END_TEST

/* A name as one file name: nothing but [A-Za-z0-9._-], never a leading
 * '.', never empty, cut to fit. */
START_TEST(path_component_is_one)
{
    char buf[16];
    opp_path_component(buf, sizeof buf, "../../x/evil");
    ck_assert_str_eq(buf, "_._.._x_evil");
    opp_path_component(buf, sizeof buf, "node-7.local");
    ck_assert_str_eq(buf, "node-7.local");
    opp_path_component(buf, sizeof buf, "");
    ck_assert_str_eq(buf, "_");
    opp_path_component(buf, sizeof buf, "..");
    ck_assert_str_eq(buf, "_.");
    opp_path_component(buf, sizeof buf, "a\xff\x1b b");
    ck_assert_str_eq(buf, "a___b");
    opp_path_component(buf, sizeof buf, "0123456789abcdefghij");
    ck_assert_str_eq(buf, "0123456789abcde");
}
END_TEST

Suite *suite_fmt(void)
{
    Suite *s = suite_create("fmt");
    TCase *tc = tcase_create("fmt");
    tcase_add_test(tc, format_times_and_percents);
    tcase_add_test(tc, json_and_csv_escaping);
    tcase_add_test(tc, csv_formulas_and_bad_utf8);
    tcase_add_test(tc, xml_text_is_xml);
    tcase_add_test(tc, utf8_whole_drops_a_cut_character);
    tcase_add_test(tc, text_escapes_controls);
    tcase_add_test(tc, path_component_is_one);
    suite_add_tcase(s, tc);
    return s;
}
