/* What the installed BLAS and LAPACK export, read at test time (nm -D),
 * against the tables: every BLAS function (libblas.so.3's exports and
 * libopenblas.so.0's cblas_*) and every LAPACK routine of the families
 * numpy.linalg calls is a row of tables/blas.h or tables/lapack.h, or is
 * listed in OPP_BLAS_LEFT_OUT with its reason. A library that gains an
 * export fails here until the export is recorded or listed. */
#include <check.h>
#include <dlfcn.h>
#include <link.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>

#include "tables/blas.h"
#include "tables/lapack.h"

#define ROW_NAME(lib, name, ...) #name,
static const char *const blas_rows[] = {OPP_BLAS_FUNCS(ROW_NAME, _)};
static const char *const lapack_rows[] = {OPP_LAPACK_FUNCS(ROW_NAME, _)};
#undef ROW_NAME
#define LEFT_OUT(names, why) " " names " "
static const char left_out[] = OPP_BLAS_LEFT_OUT(LEFT_OUT);
#undef LEFT_OUT

/* The LAPACK families: numpy's _umath_linalg imports, in s/d/c/z. */
#define LAPACK_FAMILIES "^[sdcz](gesv|getrf|potrf|syevd|heevd|gesdd|geev|gelsd|geqrf|orgqr|ungqr)_$"

static int in(const char *const *rows, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rows[i], name))
            return 1;
    return 0;
}

static int listed_left_out(const char *name)
{
    char key[300];
    snprintf(key, sizeof key, " %s ", name);
    return strstr(left_out, key) != NULL;
}

/* Calls want(name, ctx) for each function soname defines (nm -D), with
 * its path from the dynamic linker; the count of names, -1 when the
 * library is not installed. */
static int exports(const char *soname, void (*want)(const char *name, void *ctx), void *ctx)
{
    void *h = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
    struct link_map *lm = NULL;
    if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm) || !lm || !lm->l_name[0])
        return -1;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s'", lm->l_name);
    FILE *p = popen(cmd, "r");
    ck_assert_msg(p != NULL, "cannot run %s", cmd);
    char line[512], type[8], name[300];
    int n = 0;
    while (fgets(line, sizeof line, p))
        if (sscanf(line, "%*s %7s %299s", type, name) == 2 && strchr("TtWi", type[0])) {
            want(name, ctx);
            n++;
        }
    ck_assert_msg(pclose(p) == 0, "%s failed", cmd);
    return n;
}

struct check {
    const char *lib;
    int cblas_only;  /* only its cblas_ names */
    regex_t *family; /* only names matching it */
    int checked;
};

static void check_blas(const char *name, void *ctx)
{
    struct check *c = ctx;
    if (c->cblas_only && strncmp(name, "cblas_", 6))
        return;
    c->checked++;
    ck_assert_msg(
        in(blas_rows, sizeof blas_rows / sizeof *blas_rows, name) || listed_left_out(name),
        "%s exports %s: neither a row of tables/blas.h nor in OPP_BLAS_LEFT_OUT", c->lib, name);
}

static void check_lapack(const char *name, void *ctx)
{
    struct check *c = ctx;
    if (regexec(c->family, name, 0, NULL, 0))
        return;
    c->checked++;
    ck_assert_msg(in(lapack_rows, sizeof lapack_rows / sizeof *lapack_rows, name),
                  "%s exports %s, of the LAPACK families numpy calls, not in tables/lapack.h",
                  c->lib, name);
}

START_TEST(every_blas_export_is_recorded_or_left_out)
{
    struct check lib = {"libblas.so.3", 0, NULL, 0}, cblas = {"libopenblas.so.0", 1, NULL, 0};
    ck_assert_int_gt(exports(lib.lib, check_blas, &lib), 0);
    ck_assert_int_gt(exports(cblas.lib, check_blas, &cblas), 0);
    /* OpenBLAS 0.3.21: 384 and 170; the rows are 296 */
    ck_assert_int_ge(lib.checked, 300);
    ck_assert_int_ge(cblas.checked, 150);
    ck_assert_uint_eq(sizeof blas_rows / sizeof *blas_rows, 296);
}
END_TEST

START_TEST(every_lapack_export_of_the_families_is_recorded)
{
    regex_t re;
    ck_assert_int_eq(regcomp(&re, LAPACK_FAMILIES, REG_EXTENDED | REG_NOSUB), 0);
    struct check ob = {"libopenblas.so.0", 0, &re, 0}, lp = {"liblapack.so.3", 0, &re, 0};
    ck_assert_int_gt(exports(ob.lib, check_lapack, &ob), 0);
    ck_assert_int_gt(exports(lp.lib, check_lapack, &lp), 0);
    /* 7 routines in s/d/c/z, syevd and orgqr in s/d, heevd and ungqr in c/z */
    ck_assert_int_eq(ob.checked, 36);
    ck_assert_int_eq(lp.checked, 36);
    ck_assert_uint_eq(sizeof lapack_rows / sizeof *lapack_rows, 36);
    regfree(&re);
}
END_TEST

/* The left-out list names no row: a name is recorded or left out, not both. */
START_TEST(no_row_is_also_left_out)
{
    for (size_t i = 0; i < sizeof blas_rows / sizeof *blas_rows; i++)
        ck_assert_msg(!listed_left_out(blas_rows[i]), "%s is a row and left out", blas_rows[i]);
}
END_TEST

Suite *suite_blas_exports(void)
{
    Suite *s = suite_create("blas_exports");
    TCase *tc = tcase_create("exports");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, every_blas_export_is_recorded_or_left_out);
    tcase_add_test(tc, every_lapack_export_of_the_families_is_recorded);
    tcase_add_test(tc, no_row_is_also_left_out);
    suite_add_tcase(s, tc);
    return s;
}
