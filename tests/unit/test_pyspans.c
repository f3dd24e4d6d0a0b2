/* Python function slices from sampled frames (report/exports/pyspans.c):
 * exact slices for a hand-made sequence of calls on two threads. */
#include <check.h>
#include <stdint.h>

#include "exports/pyspans.h"
#include "failalloc.h"

struct got {
    int n;
    struct {
        uint64_t thread;
        uint32_t frame;
        uint64_t begin, end;
    } s[16];
};

static int keep(void *ctx, uint64_t thread, uint32_t frame, uint64_t begin, uint64_t end)
{
    struct got *g = ctx;
    ck_assert_int_lt(g->n, 16);
    g->s[g->n].thread = thread, g->s[g->n].frame = frame;
    g->s[g->n].begin = begin, g->s[g->n].end = end;
    g->n++;
    return 0;
}

static void is(const struct got *g, int i, uint64_t thread, uint32_t frame, uint64_t begin,
               uint64_t end)
{
    ck_assert_uint_eq(g->s[i].thread, thread);
    ck_assert_uint_eq(g->s[i].frame, frame);
    ck_assert_uint_eq(g->s[i].begin, begin);
    ck_assert_uint_eq(g->s[i].end, end);
}

START_TEST(slices)
{
    struct opp_pyspans ps = {0};
    struct got g = {0};
    /* thread 1: <module>(1) > f(2) for two calls, then <module>(1) > h(4);
     * a child call arrives before its parent (ends come first) */
    const uint32_t f[] = {1, 2}, h[] = {1, 4};
    ck_assert_int_eq(opp_pyspans_add(&ps, 1, f, 2, 20, 30, keep, &g), 0);
    ck_assert_int_eq(opp_pyspans_add(&ps, 1, f, 2, 10, 40, keep, &g), 0);
    ck_assert_int_eq(opp_pyspans_add(&ps, 1, f, 2, 50, 60, keep, &g), 0);
    ck_assert_int_eq(g.n, 0);
    /* thread 2 is its own */
    const uint32_t other[] = {7};
    ck_assert_int_eq(opp_pyspans_add(&ps, 2, other, 1, 15, 25, keep, &g), 0);
    ck_assert_int_eq(opp_pyspans_add(&ps, 1, h, 2, 70, 80, keep, &g), 0);
    ck_assert_int_eq(g.n, 1);
    is(&g, 0, 1, 2, 10, 60); /* f: both calls, one slice (sampled, not traced) */
    ck_assert_int_eq(opp_pyspans_flush(&ps, keep, &g), 0);
    ck_assert_int_eq(g.n, 4);
    /* the rest, innermost first per thread (threads in any order) */
    int t1 = g.s[1].thread == 1 ? 1 : 3, t2 = t1 == 1 ? 3 : 1;
    is(&g, t1, 1, 4, 70, 80);
    is(&g, t1 + 1, 1, 1, 10, 80);
    is(&g, t2, 2, 7, 15, 25);
    /* emptied: a new call starts afresh */
    g.n = 0;
    ck_assert_int_eq(opp_pyspans_add(&ps, 1, h, 1, 90, 95, keep, &g), 0);
    ck_assert_int_eq(opp_pyspans_flush(&ps, keep, &g), 0);
    ck_assert_int_eq(g.n, 1);
    is(&g, 0, 1, 1, 90, 95);
}
END_TEST

/* A thread's first call when memory runs out: its entry, the hash
 * table or the table's buckets (the first, second and third allocation)
 * failing is -1 with nothing kept, never the tool's exit; the next call
 * starts the thread afresh. */
START_TEST(out_of_memory)
{
    struct opp_pyspans ps = {0};
    struct got g = {0};
    const uint32_t f[] = {1, 2};
    for (long k = 0; k < 3; k++) {
        tu_alloc_fail(k, 0);
        int rc = opp_pyspans_add(&ps, 1, f, 2, 10, 20, keep, &g);
        ck_assert_int_eq(tu_alloc_failed(), 1);
        ck_assert_int_eq(rc, -1);
        ck_assert_ptr_null(ps.threads);
    }
    ck_assert_int_eq(opp_pyspans_add(&ps, 1, f, 2, 10, 20, keep, &g), 0);
    ck_assert_int_eq(opp_pyspans_flush(&ps, keep, &g), 0);
    ck_assert_int_eq(g.n, 2);
    is(&g, 0, 1, 2, 10, 20);
    is(&g, 1, 1, 1, 10, 20);
}
END_TEST

Suite *suite_pyspans(void)
{
    Suite *s = suite_create("pyspans");
    TCase *tc = tcase_create("pyspans");
    tcase_add_test(tc, slices);
    tcase_add_test(tc, out_of_memory);
    suite_add_tcase(s, tc);
    return s;
}
