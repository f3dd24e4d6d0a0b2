/* Call trees (report/analysis/thread_tree.c): exact parents and self times of hand-built
 * events, in the order torch.profiler would nest them. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/thread_tree.h"
#include "torch_rules.h"

#define NONE UINT32_MAX

/* The name field carries a test id, so that events can be found after the
 * sort. */
static struct opp_event ev(uint32_t id, uint64_t begin, uint64_t end, uint16_t depth,
                           uint8_t flags)
{
    return (struct opp_event){.begin_ns = begin, .end_ns = end, .name = id, .depth = depth,
                              .flags = flags, .parent = 12345, .self_ns = 777};
}

struct want {
    uint32_t id, parent_id;
    uint64_t self;
};

/* Build the tree of in[0..n) (given in that order, and also reversed when
 * reverse is set: the result must not depend on it) and compare with w, in
 * tree order. */
static void check_tree(const struct opp_event *in, size_t n, const struct want *w, int reverse)
{
    for (int pass = 0; pass < 1 + !!reverse; pass++) {
        struct opp_event e[16];
        ck_assert_uint_le(n, 16);
        for (size_t i = 0; i < n; i++)
            e[i] = in[pass ? n - 1 - i : i];
        ck_assert_int_eq(opp_tree_build(e, n), 0);
        for (size_t i = 0; i < n; i++) {
            ck_assert_msg(e[i].name == w[i].id, "pass %d position %zu: event %u, want %u", pass,
                          i, e[i].name, w[i].id);
            uint32_t pid = e[i].parent == OPP_NO_PARENT ? NONE : e[e[i].parent].name;
            ck_assert_msg(pid == w[i].parent_id, "pass %d event %u: parent %u, want %u", pass,
                          w[i].id, pid, w[i].parent_id);
            ck_assert_msg(e[i].parent == OPP_NO_PARENT || e[i].parent < i,
                          "event %u: parent after child", w[i].id);
            ck_assert_msg(e[i].self_ns == w[i].self, "pass %d event %u: self %llu, want %llu",
                          pass, w[i].id, (unsigned long long)e[i].self_ns,
                          (unsigned long long)w[i].self);
        }
    }
}

START_TEST(nesting)
{
    /* As recorded: in the order the calls ended. */
    struct opp_event in[] = {
        ev(2, 10, 30, 1, 0),
        ev(4, 50, 60, 2, 0),
        ev(3, 40, 90, 1, 0),
        ev(1, 0, 100, 0, 0),
    };
    struct want w[] = {
        {1, NONE, 30}, /* 100 - 20 - 50 */
        {2, 1, 20},
        {3, 1, 40}, /* 50 - 10 */
        {4, 3, 10},
    };
    check_tree(in, 4, w, 1);
}
END_TEST

START_TEST(siblings)
{
    /* Back to back at the same depth: touching is not containing. */
    struct opp_event in[] = {
        ev(1, 0, 10, 0, 0),
        ev(2, 10, 20, 0, 0),
        ev(3, 20, 30, 0, 0),
        ev(4, 30, 30, 0, 0),
    };
    struct want w[] = {{1, NONE, 10}, {2, NONE, 10}, {3, NONE, 10}, {4, NONE, 0}};
    check_tree(in, 4, w, 1);
}
END_TEST

START_TEST(recursion)
{
    /* A calls A calls A: each is its own event, nested. */
    struct opp_event in[] = {
        ev(3, 20, 30, 2, 0),
        ev(2, 10, 60, 1, 0),
        ev(1, 0, 100, 0, 0),
    };
    struct want w[] = {{1, NONE, 50}, {2, 1, 40}, {3, 2, 10}};
    check_tree(in, 3, w, 1);
}
END_TEST

START_TEST(equal_timestamps)
{
    /* Identical intervals: the recorded depth says which is outside. */
    struct opp_event in[] = {
        ev(3, 0, 50, 2, 0),
        ev(2, 0, 50, 1, 0),
        ev(1, 0, 50, 0, 0),
        ev(4, 50, 80, 0, 0),
    };
    struct want w[] = {{1, NONE, 0}, {2, 1, 0}, {3, 2, 50}, {4, NONE, 30}};
    check_tree(in, 4, w, 1);

    /* Same begin, different ends: the longer one is the parent. */
    struct opp_event in2[] = {ev(2, 0, 10, 1, 0), ev(1, 0, 40, 0, 0)};
    struct want w2[] = {{1, NONE, 30}, {2, 1, 10}};
    check_tree(in2, 2, w2, 1);
}
END_TEST

START_TEST(zero_length)
{
    struct opp_event in[] = {
        ev(3, 0, 0, 1, 0),     /* at the parent's start */
        ev(2, 50, 50, 1, 0),   /* inside */
        ev(4, 100, 100, 1, 0), /* at its end, one deeper: inside */
        ev(1, 0, 100, 0, 0),
        ev(6, 200, 200, 1, 0), /* zero-length inside zero-length */
        ev(5, 200, 200, 0, 0),
        ev(7, 300, 400, 0, 0),
        ev(8, 400, 400, 0, 0), /* at 7's end, same depth: after it */
    };
    struct want w[] = {
        {1, NONE, 100}, {3, 1, 0}, {2, 1, 0}, {4, 1, 0},
        {5, NONE, 0},   {6, 5, 0}, {7, NONE, 100}, {8, NONE, 0},
    };
    check_tree(in, 8, w, 1);

    /* Two zero-length calls at the same instant and depth: siblings, in the
     * order they were recorded. */
    struct opp_event in2[] = {ev(1, 5, 5, 0, 0), ev(2, 5, 5, 0, 0)};
    struct want w2[] = {{1, NONE, 0}, {2, NONE, 0}};
    check_tree(in2, 2, w2, 0);
    struct opp_event in2r[] = {in2[1], in2[0]};
    struct want w2r[] = {{2, NONE, 0}, {1, NONE, 0}};
    check_tree(in2r, 2, w2r, 0);
}
END_TEST

START_TEST(partial_overlap)
{
    /* B starts inside A but ends after it: not nested. C, inside both, goes
     * to B, the innermost one still open (torch pops A when B arrives). */
    struct opp_event in[] = {
        ev(1, 0, 50, 0, 0),
        ev(3, 35, 40, 1, 0),
        ev(2, 30, 80, 0, 0),
    };
    struct want w[] = {{1, NONE, 50}, {2, NONE, 45}, {3, 2, 5}};
    check_tree(in, 3, w, 1);

    /* Overlapping children add up to more than their parent: self is 0,
     * not negative. */
    struct opp_event in2[] = {ev(1, 0, 10, 0, 0), ev(2, 0, 8, 1, 0), ev(3, 2, 10, 1, 0)};
    struct want w2[] = {{1, NONE, 0}, {2, 1, 8}, {3, 1, 8}};
    check_tree(in2, 3, w2, 1);
}
END_TEST

START_TEST(open_events)
{
    /* The process died at 1000 inside 1 (depth 0) and 3 (depth 1): both end
     * at the process's end and contain what their thread did after. */
    struct opp_event in[] = {
        ev(2, 100, 200, 1, 0),
        ev(4, 400, 500, 2, 0),
        ev(1, 0, 1000, 0, OPP_EV_OPEN),
        ev(3, 300, 1000, 1, OPP_EV_OPEN),
    };
    struct want w[] = {
        {1, NONE, 200}, /* 1000 - 100 - 700 */
        {2, 1, 100},
        {3, 1, 600}, /* 700 - 100 */
        {4, 3, 100},
    };
    check_tree(in, 4, w, 1);
}
END_TEST

START_TEST(empty_and_one)
{
    ck_assert_int_eq(opp_tree_build(NULL, 0), 0);
    struct opp_event one = ev(1, 5, 9, 3, 0);
    ck_assert_int_eq(opp_tree_build(&one, 1), 0);
    ck_assert_uint_eq(one.parent, OPP_NO_PARENT);
    ck_assert_uint_eq(one.self_ns, 4);
}
END_TEST

/* A deep chain and many siblings, in recorded (end) order: each level's
 * self time is exact. */
/* torch's _remove_dup_nodes: an only child of the same operator, here ids
 * with the same tens digit (10 and 11: aten::div_ and the aten::div_ it
 * redispatches to). */
static int same_tens(const struct opp_event *c, const struct opp_event *p, unsigned counted,
                     void *ctx)
{
    (void)ctx;
    return counted == 1 && c->name / 10 == p->name / 10;
}

START_TEST(fold_same_op)
{
    struct opp_event e[] = {
        ev(1, 0, 100, 0, 0),   /* a module */
        ev(10, 10, 60, 1, 0),  /* div_ */
        ev(11, 20, 55, 2, 0),  /* div_ inside div_, its only child: folded */
        ev(30, 25, 40, 3, 0),  /* aten::to: goes to the outer div_ */
        ev(31, 42, 50, 3, 0),  /* a second child of the inner div_, different name */
        ev(20, 70, 90, 1, 0),  /* two same-named children: neither is folded */
        ev(21, 72, 80, 2, 0),
        ev(22, 81, 89, 2, 0),
    };
    size_t n = 8;
    ck_assert_int_eq(opp_tree_build(e, n), 0);
    ck_assert_int_eq(opp_tree_fold(e, &n, same_tens, NULL, NULL, NULL), 0);
    ck_assert_uint_eq(n, 7);
    const struct want w[] = {{1, NONE, 30}, {10, 1, 27}, {30, 10, 15}, {31, 10, 8},
                             {20, 1, 4},    {21, 20, 8}, {22, 20, 8}};
    for (size_t i = 0; i < n; i++) {
        ck_assert_uint_eq(e[i].name, w[i].id);
        ck_assert_uint_eq(e[i].parent == OPP_NO_PARENT ? NONE : e[e[i].parent].name,
                          w[i].parent_id);
        ck_assert_uint_eq(e[i].self_ns, w[i].self);
    }
    /* nothing to fold: unchanged */
    ck_assert_int_eq(opp_tree_fold(e, &n, same_tens, NULL, NULL, NULL), 0);
    ck_assert_uint_eq(n, 7);
}
END_TEST

/* Memory instants (here ids from 90) are not children for the fold, and
 * a fold after another one still compares the right parent. */
static int instant(const struct opp_event *c, void *ctx)
{
    (void)ctx;
    return c->name >= 90;
}

/* What lift sees: each removed event, and where its owner is after the
 * compaction (a pair, then a chain of three: the two inner ones go to the
 * outermost, which the pair's removal moved). */
struct lifted {
    uint32_t name[4], owner[4];
    size_t n;
};

static int record_lift(const struct opp_event *c, uint32_t owner, void *ctx)
{
    struct lifted *l = ctx;
    l->name[l->n] = c->name;
    l->owner[l->n++] = owner;
    return 0;
}

START_TEST(fold_lifts_to_kept_ancestor)
{
    struct opp_event e[] = {
        ev(1, 0, 100, 0, 0),  ev(20, 2, 8, 1, 0),   ev(21, 3, 7, 2, 0),
        ev(10, 10, 60, 1, 0), ev(11, 20, 55, 2, 0), ev(12, 25, 50, 3, 0),
    };
    size_t n = 6;
    struct lifted l = {.n = 0};
    ck_assert_int_eq(opp_tree_build(e, n), 0);
    ck_assert_int_eq(opp_tree_fold(e, &n, same_tens, NULL, record_lift, &l), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(l.n, 3);
    const uint32_t name[] = {21, 11, 12}, owner[] = {1, 2, 2};
    for (size_t i = 0; i < l.n; i++) {
        ck_assert_uint_eq(l.name[i], name[i]);
        ck_assert_uint_eq(l.owner[i], owner[i]);
    }
    ck_assert_uint_eq(e[1].name, 20);
    ck_assert_uint_eq(e[2].name, 10);
}
END_TEST

START_TEST(fold_uncounted_children)
{
    const struct opp_event in[] = {
        ev(10, 0, 100, 0, 0),   ev(11, 10, 50, 1, 0),   /* folded */
        ev(20, 200, 300, 0, 0), ev(90, 201, 201, 1, 0), /* an instant beside... */
        ev(21, 210, 290, 1, 0),                         /* ...the only counted child: folded */
        ev(91, 250, 250, 2, 0),                         /* goes to 20 */
    };
    struct opp_event e[6];
    size_t n = 6;
    memcpy(e, in, sizeof in);
    ck_assert_int_eq(opp_tree_build(e, n), 0);
    ck_assert_int_eq(opp_tree_fold(e, &n, same_tens, instant, NULL, NULL), 0);
    const struct want w[] = {{10, NONE, 100}, {20, NONE, 100}, {90, 20, 0}, {91, 20, 0}};
    ck_assert_uint_eq(n, 4);
    for (size_t i = 0; i < n; i++) {
        ck_assert_uint_eq(e[i].name, w[i].id);
        ck_assert_uint_eq(e[i].parent == OPP_NO_PARENT ? NONE : e[e[i].parent].name,
                          w[i].parent_id);
        ck_assert_uint_eq(e[i].self_ns, w[i].self);
    }
    /* counted as children, the instant keeps 21 from folding */
    n = 6;
    memcpy(e, in, sizeof in);
    ck_assert_int_eq(opp_tree_build(e, n), 0);
    ck_assert_int_eq(opp_tree_fold(e, &n, same_tens, NULL, NULL, NULL), 0);
    ck_assert_uint_eq(n, 5);
}
END_TEST

START_TEST(large)
{
    enum { DEPTH = 1000, LEAVES = 5000 };
    size_t n = DEPTH + LEAVES;
    struct opp_event *e = calloc(n, sizeof *e);
    ck_assert_ptr_nonnull(e);
    /* Leaves first (they end first): [10*i+1, 10*i+5] at depth DEPTH. */
    for (size_t i = 0; i < LEAVES; i++)
        e[i] = ev((uint32_t)(DEPTH + i), 10 * i + 1, 10 * i + 5, DEPTH, 0);
    /* Then the chain, innermost first: level d spans [0 - .., 10*LEAVES + d]. */
    for (size_t d = 0; d < DEPTH; d++) {
        size_t level = DEPTH - 1 - d;
        e[LEAVES + d] = ev((uint32_t)level, 0, 10 * LEAVES + (DEPTH - level), (uint16_t)level, 0);
    }
    ck_assert_int_eq(opp_tree_build(e, n), 0);
    for (size_t i = 0; i < DEPTH; i++) {
        ck_assert_uint_eq(e[i].name, i);
        ck_assert_uint_eq(e[i].parent, i ? i - 1 : OPP_NO_PARENT);
        uint64_t want = i + 1 < DEPTH ? 1 : 10 * LEAVES + 1 - 4 * LEAVES;
        ck_assert_uint_eq(e[i].self_ns, want);
    }
    for (size_t i = DEPTH; i < n; i++) {
        ck_assert_uint_eq(e[i].parent, DEPTH - 1);
        ck_assert_uint_eq(e[i].self_ns, 4);
    }
    free(e);
}
END_TEST

/* torch's rule itself (torch_rules.h), which every reader of calls asks:
 * an only child (memory instants not counted), both torch operators, the
 * same name; a kind's flags do not change what it is. */
START_TEST(torch_fold_rule)
{
    const uint32_t T = OPP_OP_TORCH, TX = OPP_OP_TORCH | OPP_OPK_EXTID;
    ck_assert_int_eq(opp_torch_folds(1, T, 7, T, 7), 1);
    ck_assert_int_eq(opp_torch_folds(1, TX, 7, T, 7), 1);
    ck_assert_int_eq(opp_torch_folds(0, T, 7, T, 7), 0);
    ck_assert_int_eq(opp_torch_folds(2, T, 7, T, 7), 0);
    ck_assert_int_eq(opp_torch_folds(1, T, 7, T, 8), 0);
    ck_assert_int_eq(opp_torch_folds(1, OPP_OP_GEMM, 7, T, 7), 0);
    ck_assert_int_eq(opp_torch_folds(1, T, 7, OPP_OP_GEMM, 7), 0);
    ck_assert_int_eq(opp_fold_counts(OPP_OP_MEMORY), 0);
    ck_assert_int_eq(opp_fold_counts(T), 1);
    ck_assert_int_eq(opp_fold_counts(OPP_OP_GEMM), 1);
    /* names by string id + 1, else by entry point; none for another kind */
    const uint64_t args[OPP_COL_TORCH_NAME + 1] = {[OPP_COL_TORCH_NAME] = 41};
    ck_assert_uint_eq(opp_torch_call_name(T, 3, args, OPP_COL_TORCH_NAME + 1), 42);
    ck_assert_uint_eq(opp_torch_call_name(T, 3, args, 0), (1ull << 63) | 3);
    ck_assert_uint_eq(opp_torch_call_name(OPP_OP_GEMM, 3, args, OPP_COL_TORCH_NAME + 1), 0);
}
END_TEST

Suite *suite_tree(void)
{
    Suite *s = suite_create("tree");
    TCase *tc = tcase_create("tree");
    tcase_add_test(tc, nesting);
    tcase_add_test(tc, siblings);
    tcase_add_test(tc, recursion);
    tcase_add_test(tc, equal_timestamps);
    tcase_add_test(tc, zero_length);
    tcase_add_test(tc, partial_overlap);
    tcase_add_test(tc, open_events);
    tcase_add_test(tc, empty_and_one);
    tcase_add_test(tc, large);
    tcase_add_test(tc, fold_same_op);
    tcase_add_test(tc, fold_lifts_to_kept_ancestor);
    tcase_add_test(tc, fold_uncounted_children);
    tcase_add_test(tc, torch_fold_rule);
    suite_add_tcase(s, tc);
    return s;
}
