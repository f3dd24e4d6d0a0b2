/* tool/options.c: the one reader of every command's numbers. */
#include <check.h>
#include <float.h>

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

Suite *suite_options(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("numbers");
    tcase_add_test(tc, numbers_in_decimal);
    tcase_add_test(tc, what_is_refused);
    suite_add_tcase(s, tc);
    return s;
}
