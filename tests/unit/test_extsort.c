/* Records sorted beyond memory (report/analysis/extsort.c): in memory, in
 * many runs merged back from a temporary file, and refused with the error
 * when there is no room for that file. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "analysis/extsort.h"

struct rec {
    uint64_t key;
    uint32_t seq, pad;
};

static int cmp_rec(const void *pa, const void *pb)
{
    const struct rec *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* n records with keys from a fixed sequence (repeats included) through a
 * sorter holding `hold` in memory: each comes back once, in order, and
 * again so after a rewind. */
static void sorts(uint32_t n, size_t hold)
{
    struct opp_extsort *s = opp_extsort_new(sizeof(struct rec), cmp_rec, hold * sizeof(struct rec));
    ck_assert_ptr_nonnull(s);
    uint64_t x = 12345;
    for (uint32_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        struct rec r = {x >> 54, i, 0}; /* 1024 keys: repeats */
        ck_assert_int_eq(opp_extsort_add(s, &r), 0);
    }
    ck_assert_uint_eq(opp_extsort_count(s), n);
    ck_assert_int_eq(opp_extsort_done(s), 0);
    for (int pass = 0; pass < 2; pass++) { /* read, then read again from the first */
        if (pass)
            ck_assert_int_eq(opp_extsort_rewind(s), 0);
        uint8_t *seen = calloc(n ? n : 1, 1);
        ck_assert_ptr_nonnull(seen);
        struct rec prev = {0, 0, 0};
        uint32_t got = 0;
        const struct rec *r;
        while ((r = opp_extsort_next(s))) {
            if (got)
                ck_assert_int_lt(cmp_rec(&prev, r), 0);
            ck_assert_uint_lt(r->seq, n);
            ck_assert(!seen[r->seq]);
            seen[r->seq] = 1;
            prev = *r;
            got++;
        }
        ck_assert_int_eq(opp_extsort_error(s), 0);
        ck_assert_uint_eq(got, n);
        ck_assert_ptr_null(opp_extsort_next(s)); /* and stays at the end */
        free(seen);
    }
    opp_extsort_free(s);
}

START_TEST(in_memory) { sorts(1000, 1000); }
END_TEST

START_TEST(empty) { sorts(0, 10); }
END_TEST

/* 100000 records, 1000 at a time: 100 runs merged; 1 at a time: every
 * record a run of its own */
START_TEST(many_runs) { sorts(100000, 1000); }
END_TEST

START_TEST(runs_of_one) { sorts(3000, 1); }
END_TEST

/* Records come back whole whatever their bytes: random 64-bit keys (the
 * differences between neighbours as large as they get), in a record of
 * 20 bytes (its last word partial), 7 at a time. */
struct rec20 {
    uint32_t hi, lo, seq, mid, tail;
};

static int cmp_rec20(const void *pa, const void *pb)
{
    const struct rec20 *a = pa, *b = pb;
    if (a->hi != b->hi)
        return a->hi < b->hi ? -1 : 1;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

static struct rec20 rec20_of(uint64_t x, uint32_t i)
{
    return (struct rec20){(uint32_t)(x >> 32), (uint32_t)x, i, (uint32_t)(x >> 13),
                          (uint32_t)(x >> 17) | 0x80000000u};
}

START_TEST(any_bytes)
{
    ck_assert_uint_eq(sizeof(struct rec20), 20);
    struct opp_extsort *s = opp_extsort_new(20, cmp_rec20, 7 * 20);
    ck_assert_ptr_nonnull(s);
    uint64_t x = 99, want = 0;
    enum { N = 5000 };
    for (uint32_t i = 0; i < N; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        struct rec20 r = rec20_of(x, i);
        want += r.hi ^ r.lo ^ r.mid ^ r.tail;
        ck_assert_int_eq(opp_extsort_add(s, &r), 0);
    }
    ck_assert_int_eq(opp_extsort_done(s), 0);
    struct rec20 prev = {0, 0, 0, 0, 0};
    uint64_t sum = 0;
    uint32_t got = 0;
    const struct rec20 *r;
    while ((r = opp_extsort_next(s))) {
        if (got)
            ck_assert_int_lt(cmp_rec20(&prev, r), 0);
        sum += r->hi ^ r->lo ^ r->mid ^ r->tail;
        prev = *r;
        got++;
    }
    ck_assert_int_eq(opp_extsort_error(s), 0);
    ck_assert_uint_eq(got, N);
    ck_assert_uint_eq(sum, want);
    opp_extsort_free(s);
}
END_TEST

/* Runs are written as each record's differences from the one before:
 * 100000 records of keys and seqs 0, 1, 2 ... in 100 runs of 1000 take
 * a byte a word but for each run's first record (from zeros: 2000 k
 * twice, zigzagged, 1, 2 or 3 bytes), 200380 bytes, not 1600000. */
START_TEST(runs_encoded)
{
    struct opp_extsort *s = opp_extsort_new(sizeof(struct rec), cmp_rec, 1000 * sizeof(struct rec));
    ck_assert_ptr_nonnull(s);
    for (uint32_t i = 0; i < 100000; i++)
        ck_assert_int_eq(opp_extsort_add(s, &(struct rec){i, i, 0}), 0);
    ck_assert_int_eq(opp_extsort_done(s), 0);
    ck_assert_uint_eq(opp_extsort_file_bytes(s), 100 * 1998 + 2 + 8 * 4 + 91 * 6);
    const struct rec *r;
    uint32_t got = 0;
    while ((r = opp_extsort_next(s))) {
        ck_assert_uint_eq(r->key, got);
        ck_assert_uint_eq(r->seq, got);
        got++;
    }
    ck_assert_uint_eq(got, 100000);
    opp_extsort_free(s);
}
END_TEST

static unsigned compares;

static int cmp_counted(const void *a, const void *b)
{
    compares++;
    return cmp_rec(a, b);
}

/* Records that come in order are not sorted again: 3000 in memory take
 * a compare each as they come but the first (2999); in runs of 1000, the
 * same but each run's first (2997), and the merge's heap of 3 (2). */
START_TEST(in_order_not_sorted)
{
    for (int spill = 0; spill < 2; spill++) {
        size_t hold = spill ? 1000 : 3000;
        struct opp_extsort *s =
            opp_extsort_new(sizeof(struct rec), cmp_counted, hold * sizeof(struct rec));
        ck_assert_ptr_nonnull(s);
        compares = 0;
        for (uint32_t i = 0; i < 3000; i++)
            ck_assert_int_eq(opp_extsort_add(s, &(struct rec){i / 2, i, 0}), 0);
        ck_assert_int_eq(opp_extsort_done(s), 0);
        ck_assert_uint_eq(compares, spill ? 2997 + 2 : 2999);
        uint32_t got = 0;
        const struct rec *r;
        while ((r = opp_extsort_next(s)))
            ck_assert_uint_eq(r->seq, got++);
        ck_assert_uint_eq(got, 3000);
        opp_extsort_free(s);
    }
}
END_TEST

START_TEST(no_room_for_the_runs)
{
    setenv("TMPDIR", "/nonexistent-opprof-test", 1);
    struct opp_extsort *s = opp_extsort_new(sizeof(struct rec), cmp_rec, 2 * sizeof(struct rec));
    ck_assert_ptr_nonnull(s);
    struct rec r = {1, 0, 0};
    ck_assert_int_eq(opp_extsort_add(s, &r), 0);
    ck_assert_int_eq(opp_extsort_add(s, &r), 0);
    ck_assert_int_eq(opp_extsort_add(s, &r), -ENOENT); /* the first run cannot be written */
    ck_assert_int_eq(opp_extsort_add(s, &r), -ENOENT);
    ck_assert_int_eq(opp_extsort_done(s), -ENOENT);
    ck_assert_ptr_null(opp_extsort_next(s));
    ck_assert_int_eq(opp_extsort_error(s), -ENOENT);
    opp_extsort_free(s);
    unsetenv("TMPDIR");
}
END_TEST

Suite *suite_extsort(void)
{
    Suite *s = suite_create("extsort");
    TCase *tc = tcase_create("sort");
    tcase_add_test(tc, in_memory);
    tcase_add_test(tc, empty);
    tcase_add_test(tc, many_runs);
    tcase_add_test(tc, runs_of_one);
    tcase_add_test(tc, any_bytes);
    tcase_add_test(tc, runs_encoded);
    tcase_add_test(tc, in_order_not_sorted);
    tcase_add_test(tc, no_room_for_the_runs);
    suite_add_tcase(s, tc);
    return s;
}
