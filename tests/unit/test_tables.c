/* The interposition tables (preload/tables/), walked entry by entry: each
 * signature class expands, through stand-ins for the wrapper bodies of
 * preload/core/internal.h, to a description of the wrapper it defines
 * instead of the wrapper. Checked: the values recorded fit the kind's
 * columns and the status flag, a recorded status has names, and where a
 * library is installed on this machine, every entry point of its table
 * resolves in it. (That the forwarded arguments match the prototype the
 * compiler checks: the real function is called through the prototype.) */
#include <check.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "ops.h"

/* Arguments in a parenthesized list, 1 to 40 ("()" counts 1, like "(void)"). */
#define NARG(...) NARG_(__VA_ARGS__, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, \
                        25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, \
                        5, 4, 3, 2, 1)
#define NARG_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, \
              a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31, a32, a33, a34, a35, a36, \
              a37, a38, a39, a40, n, ...)                                                          \
    n

struct wrapper {
    int defined;  /* 0: the class defines no wrapper (NVTX's callbacks) */
    int returns;  /* a value (r_), which a status can be taken from */
    int ncapture; /* values recorded, -1: known only at run time (a fill) */
    const char *capture;
};

/* The text of a macro argument once expanded. */
#define STR(...) STR_(__VA_ARGS__)
#define STR_(...) #__VA_ARGS__

/* The wrapper bodies, as descriptions. */
#define OPP_WRAP_VOID(name, params, args, capture)                                                 \
    {1, 0, NARG capture, STR(capture)}
#define OPP_WRAP_RET(ret, name, params, args, capture)                                             \
    {1, 1, NARG capture, STR(capture)}
#define OPP_WRAP_RET_PREP(ret, name, params, args, prep, capture)                                  \
    {1, 1, NARG capture, STR(capture)}
#define OPP_WRAP_RET_FILL(ret, name, params, args, fill) {1, 1, -1, STR(fill)}
#define NVTX_CB(name) {0, 0, 0, ""}
#define TORCH_CB(name) {0, 0, 0, ""}
#define C10_ALLOC(name, ...) {0, 0, 0, ""} /* written by hand (torch/memory.c) */
#define C10_FREE(name, ...) {0, 0, 0, ""}
#define C10_REPORT(name, ...) {0, 0, 0, ""}

#include "tables/funcs.h"

struct entry {
    const char *lib, *name, *sonames;
    uint32_t kind, flags;
    int extcorr;
    struct wrapper w;
};

#define ENTRY(lib, name, kind, flags, dtype, cls, ...)                                             \
    {#lib, #name, NULL, OPP_OP_##kind, OPP_FL_##flags, OPP_LIBEXT_##lib, cls(name, ##__VA_ARGS__)},
static struct entry entries[] = {OPP_ALL_FUNCS(ENTRY)};
#define NENTRIES (sizeof entries / sizeof *entries)

struct lib {
    const char *name, *sonames;
    long missing;
    const char *missing_name;
};
static const struct lib libs[] = {
#define LIB(X, lib, table, extcorr, sonames, missing, missing_name)                                \
    {#lib, sonames, missing, missing_name},
    OPP_LIBS(LIB, _)
#undef LIB
};
/* Their calls return a status, but for a few (cuda/symbols.c). */
static const struct lib cuda_domains[] = {
#define CUDA(lib, missing, missing_name) {#lib, "", missing, missing_name},
    OPP_CUDA_MISSING(CUDA)
#undef CUDA
};

/* Values a kind records after the status: at least, at most (its
 * columns, common/format.h). */
static void layout(uint32_t kind, int *min, int *max)
{
    switch (kind) {
    case OPP_OP_PLAIN: *min = 0, *max = 0; return;
    case OPP_OP_GEMM: *min = OPP_COL_GEMM_BATCH, *max = OPP_COL_GEMM_COLS; return;
    case OPP_OP_GEMV: *min = OPP_COL_GEMV_COLS, *max = OPP_COL_GEMV_COLS; return;
    case OPP_OP_DOT: case OPP_OP_AXPY: case OPP_OP_SCAL:
        *min = OPP_COL_VEC_COLS, *max = OPP_COL_VEC_COLS; return;
    case OPP_OP_TENSORS: *min = OPP_COL_TENSORS_FIRST, *max = OPP_MAX_ARGS; return;
    case OPP_OP_COLL: *min = OPP_COL_COLL_OP + 1, *max = OPP_COL_COLL_COLS; return;
    default: *min = 1, *max = 0; return; /* no other kind belongs in a library table */
    }
}

/* The report names a failed call's status from common/status_names.h:
 * every library whose calls record a status has its names there. */
START_TEST(recorded_statuses_have_names)
{
    int libs_with_status = 0;
    for (size_t k = 0; k < sizeof libs / sizeof *libs; k++) {
        int status = 0;
        for (size_t i = 0; i < NENTRIES; i++)
            status |= !strcmp(entries[i].lib, libs[k].name) && (entries[i].flags & OPP_OPK_STATUS);
        if (!status)
            continue;
        libs_with_status++;
        ck_assert_msg(opp_status_name(libs[k].name, 0) != NULL,
                      "%s records statuses that common/status_names.h does not name", libs[k].name);
    }
    ck_assert_int_ge(libs_with_status, 2); /* oneDNN and XNNPACK, always built */
}
END_TEST

/* A call whose real function is missing returns its library's own "not
 * initialised" status, as the library names it: never 0, success, for a
 * library whose calls return a status (the CUDA domains too, every call of
 * the driver's and most of the runtime's returning one). */
START_TEST(missing_calls_return_a_named_failure)
{
    size_t nlibs = sizeof libs / sizeof *libs, ncuda = sizeof cuda_domains / sizeof *cuda_domains;
    for (size_t k = 0; k < nlibs + ncuda; k++) {
        const struct lib *l = k < nlibs ? &libs[k] : &cuda_domains[k - nlibs];
        int status = k >= nlibs, any = k >= nlibs;
        for (size_t i = 0; i < NENTRIES; i++) {
            int its = !strcmp(entries[i].lib, l->name);
            any |= its;
            status |= its && (entries[i].flags & OPP_OPK_STATUS);
        }
        if (!any)
            continue; /* not built here (a GPU library without its headers) */
        if (!status) {
            ck_assert_msg(l->missing == 0 && !l->missing_name,
                          "%s returns no status, yet declares one for missing calls", l->name);
            continue;
        }
        const char *named = opp_status_name(l->name, l->missing);
        ck_assert_msg(l->missing != 0 && l->missing_name && named &&
                          !strcmp(named, l->missing_name),
                      "%s: missing calls return %ld, declared %s, named %s", l->name, l->missing,
                      l->missing_name ? l->missing_name : "nothing", named ? named : "nothing");
    }
}
END_TEST

START_TEST(recorded_values_fit_the_kind)
{
    for (size_t i = 0; i < NENTRIES; i++) {
        const struct entry *e = &entries[i];
        if (!e->w.defined || e->w.ncapture < 0)
            continue;
        int status = (e->flags & OPP_OPK_STATUS) != 0, min, max;
        layout(e->kind, &min, &max);
        int own = e->w.ncapture - status;
        ck_assert_msg(own >= min && own <= max, "%s: %d values after the status, kind wants %d to %d",
                      e->name, own, min, max);
        ck_assert_msg((unsigned)e->w.ncapture + (unsigned)e->extcorr <= OPP_MAX_ARGS,
                      "%s: %d values and the correlation id", e->name, e->w.ncapture);
    }
}
END_TEST

/* The first recorded value is the returned status exactly when the row
 * says so (flag S): it is computed from r_. */
START_TEST(status_flag_matches_the_first_recorded_value)
{
    for (size_t i = 0; i < NENTRIES; i++) {
        const struct entry *e = &entries[i];
        if (!e->w.defined)
            continue;
        char first[256];
        const char *c = e->w.capture;
        size_t n = 0;
        int depth = 0;
        for (const char *p = c; *p && n < sizeof first - 1; p++) {
            depth += (*p == '(') - (*p == ')');
            if (*p == ',' && depth == 1 && e->w.ncapture >= 0)
                break;
            first[n++] = *p;
        }
        first[n] = 0;
        int uses_r = 0;
        for (const char *p = first; (p = strstr(p, "r_")); p += 2)
            uses_r |= (p == first || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') ||
                                       (p[-1] >= 'A' && p[-1] <= 'Z') || (p[-1] >= '0' && p[-1] <= '9')));
        int status = (e->flags & OPP_OPK_STATUS) != 0;
        ck_assert_msg(!status || e->w.returns, "%s: flag S on a void function", e->name);
        ck_assert_msg(status == uses_r, "%s: flag S %d, first recorded value %s", e->name, status,
                      first);
    }
}
END_TEST

START_TEST(names_resolve_in_the_installed_libraries)
{
    int checked = 0;
    for (size_t k = 0; k < sizeof libs / sizeof *libs; k++) {
        if (!libs[k].sonames[0])
            continue; /* NVTX: callbacks, not symbols */
        char names[256], *save = NULL;
        snprintf(names, sizeof names, "%s", libs[k].sonames);
        void *h = NULL;
        const char *so = NULL;
        for (char *s = strtok_r(names, ":", &save); s && !h; s = strtok_r(NULL, ":", &save))
            if ((h = dlopen(s, RTLD_LAZY | RTLD_LOCAL)))
                so = s;
        int rows = 0;
        for (size_t i = 0; i < NENTRIES; i++)
            rows += !strcmp(entries[i].lib, libs[k].name);
        if (!h) {
            if (rows)
                printf("tables: %s (%s) is not installed: its %d names not checked\n", libs[k].name,
                       libs[k].sonames, rows);
            continue;
        }
        for (size_t i = 0; i < NENTRIES; i++) {
            if (strcmp(entries[i].lib, libs[k].name))
                continue;
            ck_assert_msg(dlsym(h, entries[i].name) != NULL, "%s is not in %s", entries[i].name, so);
            checked++;
        }
        /* not closed: a C++ library's static allocations stay reachable */
    }
    /* OpenBLAS is a dependency of the build: its table at least. */
    ck_assert_int_ge(checked, 28);
}
END_TEST

Suite *suite_tables(void)
{
    Suite *s = suite_create("tables");
    TCase *tc = tcase_create("tables");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, recorded_statuses_have_names);
    tcase_add_test(tc, missing_calls_return_a_named_failure);
    tcase_add_test(tc, recorded_values_fit_the_kind);
    tcase_add_test(tc, status_flag_matches_the_first_recorded_value);
    tcase_add_test(tc, names_resolve_in_the_installed_libraries);
    suite_add_tcase(s, tc);
    return s;
}
