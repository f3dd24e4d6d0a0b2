/* Names from the traced program are hostile input: a trace (written by the
 * trace builder) whose operator, library, thread, process, label and
 * kernel names hold quotes, backslashes, control characters, bytes that
 * are not UTF-8, U+FFFE, markup, SQL, ';' and line breaks, spreadsheet
 * formulas and a 1 MB name; each output of the real `opprof` read back by
 * its real consumer (Python's json, xml.etree and sqlite3; the folded
 * format's one count a line; a terminal: no raw control bytes). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "tracebuild.h"
#include "utf8.h"

TU_TRACE_FIXTURE

#define BIG_LEN (1u << 20) /* the 1 MB names */
#define CHAIN 20           /* calls nested under "semi;colon", the big names by turns */

enum {
    S_STEP1 = OPP_STR_PRELOAD,
    S_STEP2,
    S_QUOTE,
    S_ESC,
    S_CRLF,
    S_BAD,
    S_NONCHAR,
    S_MARKUP,
    S_SQL,
    S_SEMI,
    S_BIG,
    S_BIG2,
    S_C1,
    S_BIDI,
    S_AT,
    S_KERNEL = 1
};

static const struct {
    uint32_t id;
    const char *s;
} names[] = {
    {S_STEP1, "ProfilerStep#1"},
    {S_STEP2, "ProfilerStep#2"},
    {S_QUOTE, "q\"uo'te\\back\tslash"},
    {S_ESC, "esc\x1b]0;pwned\x07title\x1b[2J"},
    {S_CRLF, "row\r\nforged  99.99%\x7f"},
    {S_BAD, "bad\xff\xfe\xc3(utf8\xe2\x82"},
    {S_NONCHAR, "non\xef\xbf\xbe"
                "char\xef\xbf\xbf"},
    {S_MARKUP, "<script>alert(1)</script>&amp;<![CDATA[x]]>"},
    {S_SQL, "x'); DROP TABLE strings;--"},
    {S_SEMI, "semi;colon name\nnewline"},
    {S_C1, "csi\xc2\x9b"
           "31mred\xc2\x85"
           "nel"},
    {S_BIDI, "bidi\xe2\x80\xae"
             "evil\xe2\x80\xa8sep"},
    {S_AT, "@SUM(A1)"},
    {S_KERNEL, "kern\x1b[1m\xff<&>\n"},
};

#define FORMULA "=cmd|' /C calc'!A0"

/* A torch operator named by string id, or (id 0) a call of the CPU
 * function named FORMULA. */
static struct tb_ev op(uint32_t id, uint64_t begin, uint64_t end, uint32_t depth)
{
    if (!id)
        return (struct tb_ev)TB_CALL(1, begin, end, depth, 1000);
    return (struct tb_ev)TB_CALL(0, begin, end, depth, id, OPP_TORCH_SCOPE_FUNCTION, 0);
}

/* The hostile trace: one process of a host "../../../escaped/evil", two
 * ProfilerStep#N windows, the names above nested under them (ns):
 *   ProfilerStep#1 [0, 1000000]
 *     QUOTE [1000, 20000] > ESC [2000, 10000] > CRLF [3000, 5000]
 *     BAD [20000, 30000] > NONCHAR [21000, 25000]
 *     MARKUP [30000, 40000], SQL [40000, 45000]
 *     SEMI [45000, 200000] > BIG, BIG2, BIG... (CHAIN deep, each 4 us
 *       self) > FORMULA [90000, 100000]
 *     C1 [200000, 205000], BIDI [205000, 210000], FORMULA [210000, 220000]
 *   ProfilerStep#2 [1000000, 2000000] > AT [1000000, 1500000]
 * with FORMULA a CPU function of a library named "li\e[2Jb", the thread
 * and the process named with escapes, and a kernel. */
static void hostile_trace(const char *path)
{
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 1, .pid = 4242, .exe = "/bin/ev\x1b]0;il\x07",
               .argv = {"ev\nil", "--x=\xff", "=1+2"});
    tb_info(&b, "host", "../../../escaped/evil", "RANK", "0");
    tb_funcs(&b, {OPP_OP_TORCH, 0, "torch", "torch_op"},
             {OPP_OP_DOT, OPP_DT_F64, "li\x1b[2Jb", FORMULA});
    tb_thread(&b, 100, "thr\x1b[31m\xff\n");
    struct tb_ev ev[64];
    size_t n = 0;
    ev[n++] = op(S_CRLF, 3000, 5000, 3);
    ev[n++] = op(S_ESC, 2000, 10000, 2);
    ev[n++] = op(S_QUOTE, 1000, 20000, 1);
    ev[n++] = op(S_NONCHAR, 21000, 25000, 2);
    ev[n++] = op(S_BAD, 20000, 30000, 1);
    ev[n++] = op(S_MARKUP, 30000, 40000, 1);
    ev[n++] = op(S_SQL, 40000, 45000, 1);
    ev[n++] = op(0, 90000, 100000, 2 + CHAIN);
    for (int k = CHAIN - 1; k >= 0; k--)
        ev[n++] = op(k % 2 ? S_BIG2 : S_BIG, 46000 + 2000 * (uint64_t)k,
                     190000 - 2000 * (uint64_t)k, 2 + (uint32_t)k);
    ev[n++] = op(S_SEMI, 45000, 200000, 1);
    ev[n++] = op(S_C1, 200000, 205000, 1);
    ev[n++] = op(S_BIDI, 205000, 210000, 1);
    ev[n++] = op(0, 210000, 220000, 1);
    ev[n++] = op(S_STEP1, 0, 1000000, 0);
    ev[n++] = op(S_AT, 1000000, 1500000, 1);
    ev[n++] = op(S_STEP2, 1000000, 2000000, 0);
    tb_put_events(&b, 0, ev, n);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        tb_string(&b, names[i].id, names[i].s);
    char *big = malloc(BIG_LEN + 1);
    ck_assert_ptr_nonnull(big);
    memset(big, 'B', BIG_LEN);
    memcpy(big, "big\x1b[2J", 7);
    big[BIG_LEN] = 0;
    tb_string(&b, S_BIG, big);
    big[2] = 'G';
    tb_string(&b, S_BIG2, big);
    free(big);
    tb_kernel(&b, .start = 10000, .end = 15000, .device = 0, .stream = 7, .corr = 0,
              .name = S_KERNEL);
    tb_end(&b);
}

static const char *python(void)
{
    return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

/* `opprof ARGS...` on the hostile trace (TRACE in args stands for it):
 * its exit code, stdout in *out and stderr in *err (malloc'd). */
static int opprof(char **out, char **err, const char *const *args)
{
    hostile_trace(trace);
    char *argv[16], *o = tu_path(dir, "out"), *e = tu_path(dir, "err");
    int n = 0;
    argv[n++] = (char *)tu_tool("opprof");
    for (; *args && n < 15; args++)
        argv[n++] = (char *)(strcmp(*args, "TRACE") ? *args : trace);
    argv[n] = NULL;
    int code = tu_code(tu_run(argv, NULL, o, e));
    *out = tu_slurp(o);
    *err = tu_slurp(e);
    free(o), free(e);
    return code;
}
#define OPPROF(out, err, ...) opprof((out), (err), (const char *const[]){__VA_ARGS__, NULL})

/* tests/py/names_check.py KIND PATH: what it printed (exit code 0). */
static char *check(const char *kind, const char *path)
{
    char script[4200];
    snprintf(script, sizeof script, "%s/tests/py/names_check.py", getenv("OPPROF_SRC"));
    char *o = tu_path(dir, "check"), *e = tu_path(dir, "check.err");
    char *argv[] = {(char *)python(), script, (char *)kind, (char *)path, NULL};
    int code = tu_code(tu_run(argv, NULL, o, e));
    char *err = tu_slurp(e);
    ck_assert_msg(code == 0, "%s %s: %s", kind, path, err);
    char *s = tu_slurp(o);
    free(err), free(o), free(e);
    return s;
}

/* NULL when text is UTF-8 holding nothing a terminal would act on but line
 * breaks, else where the first such thing is. */
static const char *raw_control(const char *text)
{
    uint32_t cp;
    for (const char *p = text; *p;) {
        int n = opp_utf8_next(p, &cp);
        if (!n || (cp < 0x20 && cp != '\n') || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 ||
            cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
            return p;
        p += n;
    }
    return NULL;
}
#define CK_NO_RAW_CONTROL(text)                                                                    \
    do {                                                                                           \
        const char *at_ = raw_control(text);                                                       \
        ck_assert_msg(!at_, "raw control at byte %td: %.40s", at_ - (text), at_);                  \
    } while (0)

/* The lines of the first table in text (from its first line of dashes to
 * its last before a line that is not the table's), when each takes as
 * many characters; -1 when they do not. */
static int table_lines(const char *text)
{
    const char *p = strstr(text, "---");
    uint32_t cp;
    long width = -1;
    int lines = 0;
    while (p && *p && *p != '\n') {
        const char *eol = strchr(p, '\n');
        long w = 0;
        for (const char *q = p; q < eol; q += opp_utf8_next(q, &cp) ? opp_utf8_next(q, &cp) : 1)
            w++;
        if (width >= 0 && w != width)
            return -1;
        width = w;
        lines++;
        if (lines > 3 && !strncmp(p, "---", 3))
            break;
        p = eol + 1;
    }
    return lines;
}

/* Each name as the text views show it. */
static const char *const shown[] = {
    "q\"uo'te\\back\\tslash",
    "esc\\x1b]0;pwned\\x07title\\x1b[2J",
    "row\\r\\nforged  99.99%\\x7f",
    "bad\\xff\\xfe\\xc3(utf8\\xe2\\x82",
    "non\xef\xbf\xbe"
    "char\xef\xbf\xbf",
    "<script>alert(1)</script>&amp;<![CDATA[x]]>",
    "x'); DROP TABLE strings;--",
    "semi;colon name\\nnewline",
    "csi\\u009b31mred\\u0085nel",
    "bidi\\u202eevil\\u2028sep",
    FORMULA,
};

static void ck_shown(const char *text, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(strstr(text, shown[i]), "%s not shown", shown[i]);
}

/* The table: every control character escaped, every row as wide as the
 * others, the 1 MB names cut like any other at 52 characters (16 rows:
 * ProfilerStep#1 and #2 are one, torch's ProfilerStep*). */
START_TEST(table_escapes_names)
{
    char *out, *err;
    ck_assert_int_eq(OPPROF(&out, &err, "report", "TRACE"), 0);
    ck_assert_str_eq(err, "");
    CK_NO_RAW_CONTROL(out);
    ck_assert_int_eq(table_lines(out), 3 + 16 + 1);
    ck_shown(out, sizeof shown / sizeof shown[0]);
    ck_assert(strstr(out, "  kern\\x1b[1m\\xff<&>\\n  "));
    ck_assert(strstr(out, "\nbig\\x1b[2JBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB...  "));
    free(out), free(err);
    /* the library column, and the statuses' table of the failed calls */
    ck_assert_int_eq(OPPROF(&out, &err, "report", "TRACE", "--show-lib"), 0);
    CK_NO_RAW_CONTROL(out);
    ck_assert_int_eq(table_lines(out), 3 + 16 + 1);
    ck_assert(strstr(out, "  li\\x1b[2Jb  \n"));
    free(out), free(err);
}
END_TEST

START_TEST(stack_column_escapes_names)
{
    char *out, *err;
    ck_assert_int_eq(OPPROF(&out, &err, "report", "TRACE", "--group-by-stack", "3"), 0);
    CK_NO_RAW_CONTROL(out);
    ck_assert_int_eq(table_lines(out), 3 + 20 + 1);
    ck_assert(strstr(
        out, "  ProfilerStep#1;q\"uo'te\\back\\tslash;esc\\x1b]0;pwned\\x07title\\x1b[2J  "));
    free(out), free(err);
}
END_TEST

/* The tree: escaped, each line as wide as the others (the name column
 * padded by characters). */
START_TEST(tree_escapes_names)
{
    char *out, *err;
    ck_assert_int_eq(OPPROF(&out, &err, "report", "TRACE", "--tree"), 0);
    CK_NO_RAW_CONTROL(out);
    ck_shown(out, sizeof shown / sizeof shown[0]);
    ck_assert(strstr(out, "\n      row\\r\\nforged  99.99%\\x7f                                  "
                          "      1       2.000us       2.000us     0.10%\n"));
    ck_assert(strstr(out, "\n    non\xef\xbf\xbe"
                          "char\xef\xbf\xbf"));
    /* every line but the last (the footer) takes 110 characters */
    uint32_t cp;
    int lines = 0;
    for (const char *p = out; *p; p++, lines++) {
        const char *eol = strchr(p, '\n');
        if (!eol[1])
            break;
        long w = 0;
        for (; p < eol; p += opp_utf8_next(p, &cp))
            w++;
        ck_assert_msg(w == 110, "line %d: %ld characters", lines + 1, w);
    }
    ck_assert_int_eq(lines, 36);
    free(out), free(err);
}
END_TEST

START_TEST(diff_escapes_names)
{
    char *out, *err;
    ck_assert_int_eq(OPPROF(&out, &err, "diff", "TRACE", "TRACE"), 0);
    CK_NO_RAW_CONTROL(out);
    ck_assert_int_eq(table_lines(out), 3 + 16 + 1);
    ck_shown(out, sizeof shown / sizeof shown[0]);
    free(out), free(err);
}
END_TEST

/* The gate's line names the operators --op gave as the table shows them. */
START_TEST(diff_gate_escapes_names)
{
    char *out, *err;
    ck_assert_int_eq(OPPROF(&out, &err, "diff", "TRACE", "TRACE", "--op",
                            "esc\x1b]0;pwned\x07title\x1b[2J", "--fail-above", "0"),
                     0);
    CK_NO_RAW_CONTROL(out);
    ck_assert_msg(strstr(out, "\nGate: fails above +0.00% (esc\\x1b]0;pwned\\x07title\\x1b[2J); "
                              "an operator under "),
                  "%s", out);
    ck_assert_str_eq(err, "");
    free(out), free(err);
}
END_TEST

START_TEST(gpu_view_escapes_names)
{
    char *out, *err;
    ck_assert_int_eq(OPPROF(&out, &err, "report", "TRACE", "--gpu"), 0);
    CK_NO_RAW_CONTROL(out);
    ck_assert_int_eq(table_lines(out), 3 + 1 + 1);
    ck_assert(strstr(out, "\nkern\\x1b[1m\\xff<&>\\n             1  "));
    free(out), free(err);
}
END_TEST

/* --by-rank and --step: the names escaped there too. */
START_TEST(by_rank_and_steps_escape_names)
{
    char *out, *err;
    ck_assert_int_eq(OPPROF(&out, &err, "report", "TRACE", "--by-rank", "--limit", "100"), 0);
    CK_NO_RAW_CONTROL(out);
    ck_shown(out, 3);
    ck_assert(strstr(out, "\nbig\\x1b[2JBBBBBBBBBBBBBBBBBBBBBBBBBBB...      40.000us  "));
    free(out), free(err);
    ck_assert_int_eq(OPPROF(&out, &err, "report", "TRACE", "--step", "semi;colon name\nnewline"),
                     0);
    CK_NO_RAW_CONTROL(out);
    const char *line = "Steps: semi;colon name\\nnewline (a step ends at each call), 0 steps\n";
    ck_assert_msg(!strncmp(out, line, strlen(line)), "%s", out);
    free(out), free(err);
}
END_TEST

#define BIG "'big\\x1b[2JBBBBBBBBBBBBBBBBB'+4072" /* the names as names_check.py shows them */
#define BIG2 "'biG\\x1b[2JBBBBBBBBBBBBBBBBB'+4072"
/* The rows of the names (steps: the steps' row or rows). */
#define ROWS(k, steps)                                                                             \
    k " '<script>alert(1)</script'+19\n" k " \"=cmd|' /C calc'!A0\"\n" k " '@SUM(A1)'\n" steps k   \
      " 'bad\\ufffd\\ufffd\\ufffd(utf8\\ufffd\\ufffd'\n" k " " BIG2 "\n" k                         \
      " 'bidi\\u202eevil\\u2028sep'\n" k " " BIG "\n" k " 'csi\\x9b31mred\\x85nel'\n" k            \
      " 'esc\\x1b]0;pwned\\x07title\\x1b[2J'\n" k " 'kern\\x1b[1m\\ufffd<&>\\n'\n" k               \
      " 'non\\ufffechar\\uffff'\n" k " 'q\"uo\\'te\\\\back\\tslash'\n" k                           \
      " 'row\\r\\nforged  99.99%\\x7f'\n" k " 'semi;colon name\\nnewline'\n" k                     \
      " \"x'); DROP TABLE strings;\"+2\n"

/* JSON (the report's and the Chrome trace) keeps each name, cut at 4096
 * bytes, with U+FFFD for what is not UTF-8. */
START_TEST(json_keeps_names)
{
    char *out, *err, *json = tu_path(dir, "r.json");
    ck_assert_int_eq(OPPROF(&out, &err, "report", "TRACE", "--format", "json"), 0);
    FILE *f = fopen(json, "w");
    ck_assert_ptr_nonnull(f);
    fputs(out, f);
    fclose(f);
    char *s = check("json", json);
    ck_assert_str_eq(
        s, ROWS("row", "row 'ProfilerStep*'\n") "lib ''\nlib 'li\\x1b[2Jb'\nlib 'torch'\n"
                       "process '--x=\\ufffd'\nprocess '../../../escaped/evil'\n"
                       "process '/bin/ev\\x1b]0;il\\x07'\nprocess '=1+2'\nprocess 'ev\\nil'\n"
                       "thread 'thr\\x1b[31m\\ufffd\\n'\n");
    free(s), free(out), free(err);
    ck_assert_int_eq(OPPROF(&out, &err, "export", "chrome", "TRACE", "-o", json), 0);
    s = check("chrome", json);
    ck_assert_str_eq(s, ROWS("X", "X 'ProfilerStep#1'\nX 'ProfilerStep#2'\n") "M 'GPU 0'\nM 'ev\\x1b]0;il\\x07 (pid 4242)'\nM 'stream 7'\n"
                                  "M 'thr\\x1b[31m\\ufffd\\n'\n");
    free(s), free(out), free(err), free(json);
}
END_TEST

/* --window K into a directory: the file is named after the trace's host
 * as one path component, in that directory, whatever the host says. */
START_TEST(window_file_stays_in_its_directory)
{
    char *out, *err, *sub = tu_path(dir, "a/b/c/"), *escaped = tu_path(dir, "escaped");
    ck_assert_int_eq(OPPROF(&out, &err, "export", "chrome", "TRACE", "--window", "1", "-o", sub),
                     0);
    char *want = tu_path(dir, "a/b/c/_._.._.._escaped_evil_4242.0.pt.trace.json"), line[8192];
    snprintf(line, sizeof line, "opprof export: window 1 -> %s\n", want);
    ck_assert_str_eq(err, line);
    struct stat st;
    ck_assert_int_eq(stat(want, &st), 0);
    ck_assert_int_eq(stat(escaped, &st), -1);
    ck_assert_int_eq(tu_count_files(dir, "evil"), 0); /* nothing beside a/ */
    free(out), free(err), free(sub), free(escaped), free(want);
}
END_TEST

/* The flame graph is XML: U+FFFD for what is not UTF-8 and for U+FFFE and
 * U+FFFF, control characters left out. */
START_TEST(flamegraph_is_xml)
{
    char *out, *err, *svg = tu_path(dir, "f.svg");
    ck_assert_int_eq(OPPROF(&out, &err, "export", "flamegraph", "TRACE", "-o", svg), 0);
    char *s = check("svg", svg);
    ck_assert_str_eq(s, "frames 36\n"
                        "frame '<script>alert(1)</script'+19\nframe \"=cmd|' /C calc'!A0\"\n"
                        "frame '@SUM(A1)'\nframe 'ProfilerStep#1'\nframe 'ProfilerStep#2'\n"
                        "frame 'all'\nframe 'bad\\ufffd\\ufffd\\ufffd(utf8\\ufffd\\ufffd'\n"
                        "frame 'biG[2JBBBBBBBBBBBBBBBBBB'+4071\nframe 'bidi\\u202eevil\\u2028sep'\n"
                        "frame 'big[2JBBBBBBBBBBBBBBBBBB'+4071\nframe 'csi\\x9b31mred\\x85nel'\n"
                        "frame 'esc]0;pwnedtitle[2J'\nframe 'non\\ufffdchar\\ufffd'\n"
                        "frame 'q\"uo\\'te\\\\back\\tslash'\nframe 'rowforged  99.99%\\x7f'\n"
                        "frame 'semi;colon namenewline'\nframe \"x'); DROP TABLE strings;\"+2\n");
    free(s), free(out), free(err), free(svg);
}
END_TEST

/* The HTML page is UTF-8 as its inline flame graph is: U+FFFD for what
 * is not, control characters left out, markup and quotes escaped. */
START_TEST(html_is_utf8)
{
    char *out, *err, *page = tu_path(dir, "p.html");
    ck_assert_int_eq(OPPROF(&out, &err, "export", "html", "TRACE", "-o", page), 0);
    char *s = check("html", page);
    ck_assert_str_eq(s, "row '<script>alert(1)</script'+19\nrow \"=cmd|' /C calc'!A0\"\n"
                        "row '@SUM(A1)'\nrow 'ProfilerStep*'\n"
                        "row 'bad\\ufffd\\ufffd\\ufffd(utf8\\ufffd\\ufffd'\n"
                        "row 'biG[2JBBBBBBBBBBBBBBBBBB'+4071\nrow 'bidi\\u202eevil\\u2028sep'\n"
                        "row 'big[2JBBBBBBBBBBBBBBBBBB'+4071\nrow 'csi\\x9b31mred\\x85nel'\n"
                        "row 'esc]0;pwnedtitle[2J'\nrow 'kern[1m\\ufffd<&>'\n"
                        "row 'non\\ufffdchar\\ufffd'\nrow 'q\"uo\\'te\\\\back\\tslash'\n"
                        "row 'rowforged  99.99%\\x7f'\nrow 'semi;colon namenewline'\n"
                        "row \"x'); DROP TABLE strings;\"+2\n"
                        "node '<script>alert(1)</script'+19\nnode \"=cmd|' /C calc'!A0\"\n"
                        "node '@SUM(A1)'\nnode 'ProfilerStep#1'\nnode 'ProfilerStep#2'\n"
                        "node 'bad\\ufffd\\ufffd\\ufffd(utf8\\ufffd\\ufffd'\n"
                        "node 'biG[2JBBBBBBBBBBBBBBBBBB'+4071\nnode 'bidi\\u202eevil\\u2028sep'\n"
                        "node 'big[2JBBBBBBBBBBBBBBBBBB'+4071\nnode 'csi\\x9b31mred\\x85nel'\n"
                        "node 'esc]0;pwnedtitle[2J'\nnode 'non\\ufffdchar\\ufffd'\n"
                        "node 'q\"uo\\'te\\\\back\\tslash'\nnode 'rowforged  99.99%\\x7f'\n"
                        "node 'semi;colon namenewline'\nnode \"x'); DROP TABLE strings;\"+2\n");
    free(s), free(out), free(err), free(page);
}
END_TEST

/* Folded stacks: one count a line, every path kept however long (the
 * deepest here is 82,000 bytes), all of the 2 ms of self time. */
START_TEST(folded_one_count_a_line)
{
    char *out, *err, *txt = tu_path(dir, "s.txt");
    ck_assert_int_eq(OPPROF(&out, &err, "export", "stacks", "TRACE", "-o", txt), 0);
    char *s = check("folded", txt);
    ck_assert_str_eq(s, "lines 35 total 2000 deepest 23 longest 82000\n"
                        "frame '<script>alert(1)</script'+19\nframe \"=cmd|'_/C_calc'!A0\"\n"
                        "frame '@SUM(A1)'\nframe 'ProfilerStep#1'\nframe 'ProfilerStep#2'\n"
                        "frame 'bad\\ufffd\\ufffd\\ufffd(utf8\\ufffd\\ufffd'\n"
                        "frame 'biG_[2JBBBBBBBBBBBBBBBBB'+4072\nframe 'bidi\\u202eevil_sep'\n"
                        "frame 'big_[2JBBBBBBBBBBBBBBBBB'+4072\nframe 'csi\\x9b31mred_nel'\n"
                        "frame 'esc_]0_pwned_title_[2J'\nframe 'non\\ufffechar\\uffff'\n"
                        "frame 'q\"uo\\'te\\\\back_slash'\nframe 'row__forged__99.99%_'\n"
                        "frame 'semi_colon_name_newline'\nframe \"x')__DROP_TABLE_strings_\"+2\n");
    free(s), free(out), free(err), free(txt);
}
END_TEST

/* SQLite: every text column decodes as UTF-8 (U+FFFD for what is not). */
START_TEST(sqlite_text_is_utf8)
{
    char *out, *err, *db = tu_path(dir, "d.db");
    ck_assert_int_eq(OPPROF(&out, &err, "export", "sqlite", "TRACE", "-o", db), 0);
    char *s = check("sqlite", db);
    ck_assert_str_eq(
        s, "table cpu_ops 35\ntable gpu_memory 0\ntable gpu_ops 1\ntable meta 11\n"
           "table processes 1\ntable steps 2\ntable strings 21\ntable threads 1\n"
           "string '<script>alert(1)</script'+19\nstring \"=cmd|' /C calc'!A0\"\n"
           "string '@SUM(A1)'\nstring 'ProfilerStep#1'\nstring 'ProfilerStep#2'\n"
           "string '[[1000], [1000]]'\n"
           "string 'bad\\ufffd\\ufffd\\ufffd(utf8\\ufffd\\ufffd'\nstring " BIG2 "\n"
           "string 'bidi\\u202eevil\\u2028sep'\nstring " BIG "\n"
           "string 'csi\\x9b31mred\\x85nel'\nstring 'esc\\x1b]0;pwned\\x07title\\x1b[2J'\n"
           "string 'kern\\x1b[1m\\ufffd<&>\\n'\nstring 'li\\x1b[2Jb'\n"
           "string 'non\\ufffechar\\uffff'\nstring 'q\"uo\\'te\\\\back\\tslash'\n"
           "string 'row\\r\\nforged  99.99%\\x7f'\nstring 'semi;colon name\\nnewline'\n"
           "string 'torch'\nstring 'torch_op'\nstring \"x'); DROP TABLE strings;\"+2\n"
           "process '../../../escaped/evil'\nprocess '/bin/ev\\x1b]0;il\\x07'\n"
           "process 'ev\\nil --x=\\ufffd =1+2'\nthread 'thr\\x1b[31m\\ufffd\\n'\n");
    free(s), free(out), free(err), free(db);
}
END_TEST

/* CSV: UTF-8, quoted where it must be, formulas made text with a "'". */
START_TEST(csv_quotes_formulas)
{
    char *out, *err, *csv = tu_path(dir, "r.csv");
    ck_assert_int_eq(OPPROF(&out, &err, "report", "TRACE", "--format", "csv"), 0);
    ck_assert(strstr(out, "\n\"'=cmd|' /C calc'!A0\",li\x1b[2Jb,2,"));
    ck_assert(strstr(out, "\n\"'@SUM(A1)\",torch,1,"));
    FILE *f = fopen(csv, "w");
    ck_assert_ptr_nonnull(f);
    fputs(out, f);
    fclose(f);
    char *s = check("csv", csv);
    ck_assert_str_eq(s, "columns 15 rows 16 ragged 0\n"
                        "key \"'=cmd|' /C calc'!A0\"\nkey \"'@SUM(A1)\"\n"
                        "key '<script>alert(1)</script'+19\nkey 'ProfilerStep*'\n"
                        "key 'bad\\ufffd\\ufffd\\ufffd(utf8\\ufffd\\ufffd'\n"
                        "key " BIG2 "\nkey 'bidi\\u202eevil\\u2028sep'\nkey " BIG "\n"
                        "key 'csi\\x9b31mred\\x85nel'\nkey 'esc\\x1b]0;pwned\\x07title\\x1b[2J'\n"
                        "key 'kern\\x1b[1m\\ufffd<&>\\n'\nkey 'non\\ufffechar\\uffff'\n"
                        "key 'q\"uo\\'te\\\\back\\tslash'\nkey 'row\\r\\nforged  99.99%\\x7f'\n"
                        "key 'semi;colon name\\nnewline'\nkey \"x'); DROP TABLE strings;\"+2\n"
                        "lib ''\nlib 'li\\x1b[2Jb'\nlib 'torch'\n");
    free(s), free(out), free(err), free(csv);
}
END_TEST

/* What follows `from` up to `to` on each line of text holding `line`, a
 * line each (malloc'd). */
static char *picked(const char *text, const char *line, const char *from, const char *to)
{
    size_t cap = strlen(text) + 1, n = 0;
    char *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    for (const char *p = text; *p;) {
        const char *eol = strchr(p, '\n');
        if (!eol)
            eol = p + strlen(p);
        const char *at = strstr(p, line), *a = strstr(p, from), *b = a ? strstr(a, to) : NULL;
        if (at && at < eol && a && a < eol && b && b < eol) {
            a += strlen(from);
            memcpy(out + n, a, (size_t)(b - a));
            n += (size_t)(b - a);
            out[n++] = '\n';
        }
        p = *eol ? eol + 1 : eol;
    }
    out[n] = 0;
    return out;
}

/* Threads of a real program name themselves (prctl(PR_SET_NAME) before
 * their first call): each name is kept as its bytes, UTF-8 or not, the
 * kernel's cut of a longer one ending before the character it cut, and
 * each output shows them as it shows any name: the report's JSON and the
 * Chrome trace as JSON strings, SQLite as UTF-8 text. */
START_TEST(thread_names_kept)
{
    char *argv[] = {(char *)tu_tool("opprof"),
                    "run",
                    "-q",
                    "-o",
                    trace,
                    "--",
                    (char *)tu_build("tests/progs/scenarios"),
                    "named",
                    "1",
                    "w\xc3\xb6rker",                                             /* wörker */
                    "a\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1", /* 15 bytes */
                    "\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1",
                    "\xe7\xba\xbf\xe7\xa8\x8b-\xf0\x9f\x94\xa5", /* 线程-🔥 */
                    "bad\xffname",
                    "esc\x1b[2J",
                    NULL};
    char *o = tu_path(dir, "out"), *json = tu_path(dir, "r.json"), *db = tu_path(dir, "d.db");
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, o, NULL)), 0);
    char *text = tu_slurp(o);
    ck_assert_str_eq(text, "named 6\n");
    free(text);
    /* the kernel kept 15 bytes of the nine ñ: seven, and half of the eighth */
    const char *utf8 = "w\xc3\xb6rker\n"
                       "a\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\n"
                       "\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\n"
                       "\xe7\xba\xbf\xe7\xa8\x8b-\xf0\x9f\x94\xa5\n";

    char *rep[] = {(char *)tu_tool("opprof"), "report", trace, "--format", "json", NULL};
    ck_assert_int_eq(tu_code(tu_run(rep, NULL, json, NULL)), 0);
    text = tu_slurp(json);
    char *got = picked(text, "\"tid\": ", "\"name\": \"", "\", \"events\"");
    char want[512];
    snprintf(want, sizeof want, "%sbad\\ufffdname\nesc\\u001b[2J\n", utf8);
    ck_assert_str_eq(got, want);
    free(got), free(text);
    /* the names as Python reads them back, whichever output */
    const char *read_back = "thread 'a\\xf1\\xf1\\xf1\\xf1\\xf1\\xf1\\xf1'\n"
                            "thread 'bad\\ufffdname'\nthread 'esc\\x1b[2J'\n"
                            "thread 'w\\xf6rker'\n"
                            "thread '\\xf1\\xf1\\xf1\\xf1\\xf1\\xf1\\xf1'\n"
                            "thread '\\u7ebf\\u7a0b-\\U0001f525'\n";
    char *s = check("json", json);
    ck_assert_ptr_nonnull(strstr(s, read_back));
    free(s);

    char *chrome[] = {(char *)tu_tool("opprof"), "export", "chrome", trace, "-o", json, NULL};
    ck_assert_int_eq(tu_code(tu_run(chrome, NULL, NULL, NULL)), 0);
    text = tu_slurp(json);
    got = picked(text, "\"name\": \"thread_name\"", "\"args\": {\"name\": \"", "\"}}");
    ck_assert_str_eq(got, want);
    free(got), free(text);

    char *sqlite[] = {(char *)tu_tool("opprof"), "export", "sqlite", trace, "-o", db, NULL};
    ck_assert_int_eq(tu_code(tu_run(sqlite, NULL, NULL, NULL)), 0);
    s = check("sqlite", db);
    ck_assert_ptr_nonnull(strstr(s, read_back));
    free(s);
    free(o), free(json), free(db);
}
END_TEST

Suite *suite_names(void)
{
    Suite *s = suite_create("names");
    TCase *tc = tcase_create("outputs");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, table_escapes_names);
    tcase_add_test(tc, stack_column_escapes_names);
    tcase_add_test(tc, tree_escapes_names);
    tcase_add_test(tc, diff_escapes_names);
    tcase_add_test(tc, diff_gate_escapes_names);
    tcase_add_test(tc, gpu_view_escapes_names);
    tcase_add_test(tc, by_rank_and_steps_escape_names);
    tcase_add_test(tc, json_keeps_names);
    tcase_add_test(tc, window_file_stays_in_its_directory);
    tcase_add_test(tc, flamegraph_is_xml);
    tcase_add_test(tc, html_is_utf8);
    tcase_add_test(tc, folded_one_count_a_line);
    tcase_add_test(tc, sqlite_text_is_utf8);
    tcase_add_test(tc, csv_quotes_formulas);
    tcase_add_test(tc, thread_names_kept);
    suite_add_tcase(s, tc);
    return s;
}
