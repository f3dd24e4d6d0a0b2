/* tool/options.c: the one reader of every command's numbers, the number
 * options that store them, the rule of every string option and of every
 * option that keeps one value given twice. */
#include <check.h>
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tool/options.h"

/* arg read in [lo, hi] (whole or not): its value, or -1 refused. */
static double num(const char *arg, double lo, double hi, int whole)
{
    double v = -7;
    return opp_option_number(arg, lo, hi, whole, &v) ? -1 : v;
}

START_TEST(numbers_in_decimal)
{
    ck_assert_double_eq(num("0", 0, 10, 1), 0);
    ck_assert_double_eq(num("10", 0, 10, 1), 10);
    ck_assert_double_eq(num("1e2", 0, 1000, 1), 100);
    ck_assert_double_eq(num("2.5", 0, 10, 0), 2.5);
    ck_assert_double_eq(num(".5", 0, 10, 0), 0.5);
    ck_assert_double_eq(num("1E-3", 0, 10, 0), 0.001);
    ck_assert_double_eq(num("4.0", 0, 10, 1), 4);
    ck_assert_double_eq(num("5.", 0, 10, 1), 5);
    ck_assert_double_eq(num("4294967295", 0, 4294967295.0, 1), 4294967295.0);
}
END_TEST

START_TEST(what_is_refused)
{
    const char *bad[] = {"",   " 5", "5 ",  "+5", "-5",  "0x10", "inf",   "nan",  "1e",
                         "e5", ".",  "1,5", "5-", "--5", "1e+",  "1e999", "5abc", "\t5"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(num(bad[i], 0, DBL_MAX, 0) == -1, "'%s' taken", bad[i]);
    ck_assert_double_eq(num("11", 0, 10, 1), -1);  /* above hi */
    ck_assert_double_eq(num("0", 1, 10, 1), -1);   /* below lo */
    ck_assert_double_eq(num("2.5", 0, 10, 1), -1); /* not whole */
    ck_assert_double_eq(num("4294967296", 0, 4294967295.0, 1), -1);
}
END_TEST

/* One target of each kind, each followed by a guard that a store of the
 * wrong width would overwrite. */
#define GUARD 0x5a5a5a5a5a5a5a5aull
static struct targets {
    uint32_t u32;
    uint32_t g32;
    uint64_t u64, g64;
    size_t size, gsize;
    double dbl;
    uint64_t gdbl;
    uint64_t ms;
    uint64_t gms;
    double us;
    uint64_t gus;
    int u32_given, ms_given;
    int format, format_given;
    int flag, sets;   /* --flag; --set NAME, each argument counted */
    const char *step; /* --step [NAME]: its argument, or "" without */
    const char *internal; /* --internal X, left out of the help */
} got;

static void reset(void)
{
    memset(&got, 0, sizeof got);
    got.g32 = (uint32_t)GUARD;
    got.g64 = got.gsize = got.gdbl = got.gms = got.gus = GUARD;
}

static int opt_set(const struct opp_option *o, const char *arg)
{
    (void)o, (void)arg;
    got.sets++;
    return 0;
}

static int opt_step(const struct opp_option *o, const char *arg)
{
    (void)o;
    got.step = arg ? arg : "";
    return 0;
}

/* A command of one number option per kind, a choice, a flag, a repeatable
 * option and one whose argument may be left out. */
static int cmd_numbers(int argc, char **argv)
{
    const struct opp_option options[] = {
        OPP_OPT_NUMBER_GIVEN(0, "u32", &got.u32, &got.u32_given, "N", "", OPP_NUMBER_U32, 0,
                             UINT32_MAX, "a number to 4294967295"),
        OPP_OPT_NUMBER(0, "u64", &got.u64, "N", "", OPP_NUMBER_U64, 0, 1e18, "a number"),
        OPP_OPT_NUMBER('n', "size", &got.size, "N", "", OPP_NUMBER_SIZE, 1, 1e15,
                       "a positive number"),
        OPP_OPT_NUMBER(0, "double", &got.dbl, "X", "", OPP_NUMBER_DOUBLE, 0, 100,
                       "a percentage from 0 to 100"),
        OPP_OPT_NUMBER_GIVEN(0, "ms", &got.ms, &got.ms_given, "MS", "", OPP_NUMBER_MS_NS, 0, 1.8e13,
                             "milliseconds (0 or more)"),
        OPP_OPT_NUMBER(0, "us", &got.us, "US", "", OPP_NUMBER_US_NS, 0, DBL_MAX,
                       "microseconds (0 or more)"),
        OPP_OPT_CHOICE('f', "format", &got.format, &got.format_given, "FMT", "", "table", "csv",
                       "json"),
        OPP_OPT_FLAG(0, "flag", &got.flag, ""),
        OPP_OPT_REPEATABLE(0, "set", NULL, "NAME", "", opt_set),
        {.type = OPP_OPTION_CALLBACK,
         .long_name = "step",
         .argh = "NAME",
         .help = "",
         .fn = opt_step,
         .flags = OPP_OPTION_OPTARG},
        {.type = OPP_OPTION_STRING,
         .long_name = "internal",
         .value = &got.internal,
         .argh = "X",
         .help = "",
         .flags = OPP_OPTION_HIDDEN},
        OPP_OPT_END(),
    };
    const struct opp_command cmd = {.name = "test", .usage = "", .col = 20, .options = options};
    int first;
    return opp_options_parse(&cmd, argc, argv, &first);
}

/* cmd_numbers called with one option and its value: its result, with
 * what it said on stderr in *err (malloc'd). */
static int call(const char *opt, const char *value, char **err)
{
    char *argv[] = {"test", (char *)opt, (char *)value, NULL};
    char *dir = tu_tmpdir(), *out;
    reset();
    int rc = tu_call(cmd_numbers, argv, dir, &out, err);
    ck_assert_str_eq(out, "");
    free(out);
    tu_rmdir(dir);
    free(dir);
    return rc;
}

static void guards_kept(void)
{
    ck_assert_uint_eq(got.g32, (uint32_t)GUARD);
    ck_assert_uint_eq(got.g64, GUARD);
    ck_assert_uint_eq(got.gsize, GUARD);
    ck_assert_uint_eq(got.gdbl, GUARD);
    ck_assert_uint_eq(got.gms, GUARD);
    ck_assert_uint_eq(got.gus, GUARD);
}

START_TEST(number_options_store_their_kind)
{
    char *err;
    ck_assert_int_eq(call("--u32", "4294967295", &err), 0);
    ck_assert_str_eq(err, "");
    ck_assert_uint_eq(got.u32, UINT32_MAX);
    ck_assert_int_eq(got.u32_given, 1);
    guards_kept();
    free(err);

    ck_assert_int_eq(call("--u64", "1e18", &err), 0);
    ck_assert_uint_eq(got.u64, 1000000000000000000ull);
    ck_assert_int_eq(got.u32_given, 0);
    guards_kept();
    free(err);

    ck_assert_int_eq(call("-n", "12", &err), 0);
    ck_assert_uint_eq(got.size, 12);
    guards_kept();
    free(err);

    ck_assert_int_eq(call("--size=7", NULL, &err), 0);
    ck_assert_uint_eq(got.size, 7);
    free(err);

    ck_assert_int_eq(call("--double", "2.5", &err), 0);
    ck_assert_double_eq(got.dbl, 2.5);
    guards_kept();
    free(err);

    /* milliseconds to nanoseconds, rounded to the nearest */
    ck_assert_int_eq(call("--ms", "2.0000006", &err), 0);
    ck_assert_uint_eq(got.ms, 2000001);
    ck_assert_int_eq(got.ms_given, 1);
    guards_kept();
    free(err);
    ck_assert_int_eq(call("--ms", "1.7e13", &err), 0);
    ck_assert_uint_eq(got.ms, 17000000000000000000ull);
    free(err);

    ck_assert_int_eq(call("--us", "1.5", &err), 0);
    ck_assert_double_eq(got.us, 1500.0);
    guards_kept();
    free(err);
}
END_TEST

START_TEST(number_options_refuse_in_one_wording)
{
    struct {
        const char *opt, *value, *err;
    } bad[] = {
        {"--u32", "4294967296",
         "opprof test: --u32 wants a number to 4294967295, not '4294967296'\n"},
        {"--u32", "-1", "opprof test: --u32 wants a number to 4294967295, not '-1'\n"},
        {"--u64", "1e19", "opprof test: --u64 wants a number, not '1e19'\n"},
        {"--size", "0", "opprof test: --size wants a positive number, not '0'\n"},
        {"-n", "2.5", "opprof test: --size wants a positive number, not '2.5'\n"},
        {"--size", "", "opprof test: --size wants a positive number, not ''\n"},
        {"--double", "100.5",
         "opprof test: --double wants a percentage from 0 to 100, not '100.5'\n"},
        {"--ms", "x", "opprof test: --ms wants milliseconds (0 or more), not 'x'\n"},
        {"--ms", "1.9e13", "opprof test: --ms wants milliseconds (0 or more), not '1.9e13'\n"},
        {"--us", "1e999", "opprof test: --us wants microseconds (0 or more), not '1e999'\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *err;
        ck_assert_msg(call(bad[i].opt, bad[i].value, &err) == 2, "%s %s taken", bad[i].opt,
                      bad[i].value);
        ck_assert_str_eq(err, bad[i].err);
        free(err);
        /* nothing stored, nothing said given */
        ck_assert_uint_eq(got.u32, 0);
        ck_assert_uint_eq(got.u64, 0);
        ck_assert_uint_eq(got.size, 0);
        ck_assert_double_eq(got.dbl, 0);
        ck_assert_uint_eq(got.ms, 0);
        ck_assert_double_eq(got.us, 0);
        ck_assert_int_eq(got.u32_given, 0);
        ck_assert_int_eq(got.ms_given, 0);
        guards_kept();
    }
}
END_TEST

/* A choice option: the word's index stored and said given; another word
 * refused naming the words it takes, nothing stored. */
START_TEST(choice_options)
{
    char *err;
    ck_assert_int_eq(call("--format", "json", &err), 0);
    ck_assert_int_eq(got.format, 2);
    ck_assert_int_eq(got.format_given, 1);
    ck_assert_str_eq(err, "");
    free(err);
    ck_assert_int_eq(call("-f", "table", &err), 0);
    ck_assert_int_eq(got.format, 0);
    ck_assert_int_eq(got.format_given, 1);
    free(err);
    ck_assert_int_eq(call("--format", "xml", &err), 2);
    ck_assert_str_eq(err, "opprof test: unknown format 'xml' (one of: table, csv, json)\n");
    ck_assert_int_eq(got.format, 0);
    ck_assert_int_eq(got.format_given, 0);
    free(err);
}
END_TEST

/* fn called with argv after its name (NULL-ended, at most 7): its result,
 * what it said on stderr in *err (malloc'd). */
static int call_args(int (*fn)(int, char **), const char *const *args, char **err)
{
    char *argv[9] = {"test"};
    for (int i = 0; args[i]; i++)
        argv[i + 1] = (char *)args[i];
    char *dir = tu_tmpdir(), *out;
    int rc = tu_call(fn, argv, dir, &out, err);
    ck_assert_str_eq(out, "");
    free(out);
    tu_rmdir(dir);
    free(dir);
    return rc;
}

/* Every option that keeps a value (a number, a choice, a callback's
 * argument), given twice, even alike or as -f and --format=, is a usage
 * error in one line, the first value kept, the second never read; a flag
 * given twice is the flag, a repeatable option takes each. */
/* A long option given as the start of several names is named ambiguous,
 * with the names it may be, in one line (getopt_long says it as an
 * unknown one); the start of one name is that option, unless the help
 * leaves it out. */
START_TEST(long_option_abbreviations)
{
    char *err;
    ck_assert_int_eq(call("--u", "5", &err), 2);
    ck_assert_str_eq(err, "opprof test: option '--u' is ambiguous (--u32, --u64, --us)\n");
    free(err);
    ck_assert_int_eq(call("--s=5", NULL, &err), 2);
    ck_assert_str_eq(err, "opprof test: option '--s' is ambiguous (--size, --set, --step)\n");
    free(err);
    ck_assert_int_eq(call("--nosuch", NULL, &err), 2);
    ck_assert_str_eq(err, "opprof test: unknown option '--nosuch' (see 'opprof test --help')\n");
    free(err);
    ck_assert_int_eq(call("--u3", "7", &err), 0);
    ck_assert_str_eq(err, "");
    ck_assert_uint_eq(got.u32, 7);
    free(err);
    /* one left out of the help by its whole name only: the start of it
     * is unknown, not that option */
    ck_assert_int_eq(call("--internal", "5", &err), 0);
    ck_assert_str_eq(got.internal, "5");
    free(err);
    ck_assert_int_eq(call("--internal=6", NULL, &err), 0);
    ck_assert_str_eq(got.internal, "6");
    free(err);
    ck_assert_int_eq(call("--int", "5", &err), 2);
    ck_assert_str_eq(err, "opprof test: unknown option '--int' (see 'opprof test --help')\n");
    ck_assert_ptr_null(got.internal);
    free(err);
    ck_assert_int_eq(call("--inter=5", NULL, &err), 2);
    ck_assert_str_eq(err, "opprof test: unknown option '--inter' (see 'opprof test --help')\n");
    free(err);
}
END_TEST

START_TEST(valued_options_given_once)
{
    struct {
        const char *args[7], *err;
    } bad[] = {
        {{"--size", "5", "--size", "9"},
         "opprof test: --size given twice ('5' and '9'): give it once\n"},
        {{"-n", "5", "--size=5"}, "opprof test: --size given twice ('5' and '5'): give it once\n"},
        {{"--size", "5", "-n", "0"},
         "opprof test: --size given twice ('5' and '0'): give it once\n"},
        {{"--ms", "1", "--u32", "2", "--ms", "3"},
         "opprof test: --ms given twice ('1' and '3'): give it once\n"},
        {{"-f", "json", "-f", "csv"},
         "opprof test: --format given twice ('json' and 'csv'): give it once\n"},
        {{"--format=csv", "--flag", "-f", "csv"},
         "opprof test: --format given twice ('csv' and 'csv'): give it once\n"},
        {{"--step", "a", "--step", "b"},
         "opprof test: --step given twice ('a' and 'b'): give it once\n"},
        {{"--step=a", "--step"},
         "opprof test: --step given twice ('a' and no NAME): give it once\n"},
        {{"--step", "--step=b"},
         "opprof test: --step given twice (no NAME and 'b'): give it once\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *err;
        reset();
        ck_assert_msg(call_args(cmd_numbers, bad[i].args, &err) == 2, "%s taken", bad[i].err);
        ck_assert_str_eq(err, bad[i].err);
        free(err);
    }
    /* the first value kept: the second neither stored nor handled */
    char *err;
    reset();
    ck_assert_int_eq(call_args(cmd_numbers, (const char *[]){"-n", "5", "-n", "x", NULL}, &err), 2);
    ck_assert_uint_eq(got.size, 5);
    free(err);
    reset();
    ck_assert_int_eq(
        call_args(cmd_numbers, (const char *[]){"--step", "a", "--step", "b", NULL}, &err), 2);
    ck_assert_str_eq(got.step, "a");
    free(err);

    /* a flag twice, --set three times, --step twice without its NAME */
    reset();
    ck_assert_int_eq(
        call_args(cmd_numbers,
                  (const char *[]){"--flag", "--set", "a", "--flag", "--set=a", "--set=b", NULL},
                  &err),
        0);
    ck_assert_str_eq(err, "");
    ck_assert_int_eq(got.flag, 1);
    ck_assert_int_eq(got.sets, 3);
    free(err);
    reset();
    ck_assert_int_eq(call_args(cmd_numbers, (const char *[]){"--step", "--step", NULL}, &err), 0);
    ck_assert_str_eq(err, "");
    ck_assert_str_eq(got.step, "");
    free(err);
}
END_TEST

static const char *out_got, *lib_got;

/* A command of two string options. */
static int cmd_strings(int argc, char **argv)
{
    const struct opp_option options[] = {
        OPP_OPT_STRING('o', "output", &out_got, "OUT", ""),
        OPP_OPT_STRING(0, "lib", &lib_got, "NAME", ""),
        OPP_OPT_END(),
    };
    const struct opp_command cmd = {.name = "test", .usage = "", .col = 20, .options = options};
    int first;
    return opp_options_parse(&cmd, argc, argv, &first);
}

/* cmd_strings with argv after its name (call_args). */
static int call_strings(const char *const *args, char **err)
{
    out_got = lib_got = NULL;
    return call_args(cmd_strings, args, err);
}

/* A string option is stored once given; given twice (even alike, even
 * as -o and --output=) or empty, it is a usage error in one line, as for
 * every command. */
START_TEST(string_options_given_once_not_empty)
{
    char *err;
    ck_assert_int_eq(call_strings((const char *[]){"-o", "a", "--lib", "x", NULL}, &err), 0);
    ck_assert_str_eq(err, "");
    ck_assert_str_eq(out_got, "a");
    ck_assert_str_eq(lib_got, "x");
    free(err);
    struct {
        const char *args[6], *err;
    } bad[] = {
        {{"-o", "a", "-o", "b"}, "opprof test: --output given twice ('a' and 'b'): give it once\n"},
        {{"--output=a", "-o", "a"},
         "opprof test: --output given twice ('a' and 'a'): give it once\n"},
        {{"--lib", "x", "-o", "a", "--lib=y"},
         "opprof test: --lib given twice ('x' and 'y'): give it once\n"},
        {{"-o", ""}, "opprof test: --output wants OUT, not ''\n"},
        {{"--output="}, "opprof test: --output wants OUT, not ''\n"},
        {{"--lib", "", "-o", "a"}, "opprof test: --lib wants NAME, not ''\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_int_eq(call_strings(bad[i].args, &err), 2);
        ck_assert_str_eq(err, bad[i].err);
        free(err);
    }
}
END_TEST

Suite *suite_options(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("numbers");
    tcase_add_test(tc, numbers_in_decimal);
    tcase_add_test(tc, what_is_refused);
    tcase_add_test(tc, number_options_store_their_kind);
    tcase_add_test(tc, number_options_refuse_in_one_wording);
    tcase_add_test(tc, choice_options);
    tcase_add_test(tc, string_options_given_once_not_empty);
    tcase_add_test(tc, valued_options_given_once);
    tcase_add_test(tc, long_option_abbreviations);
    suite_add_tcase(s, tc);
    return s;
}
