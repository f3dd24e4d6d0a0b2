/* Traces from several hosts in one model (opp_model_load_many): process
 * serials kept apart, times moved onto the first trace's clock through each
 * trace's (realtime, monotonic) pair, with a known offset. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/aggregate.h"
#include "analysis/ranks.h"
#include "tool/cmds.h"
#include "analysis/model.h"
#include "testutil.h"
#include "tracebuild.h"
#include "oracle/loaded.h"

/* One host's trace: process serial 1 (pid), started at mono ns `start`
 * with realtime `real`; one cblas_ddot [begin, end] on thread pid; rank label. */
static void write_host(const char *path, uint32_t pid, uint64_t start, uint64_t real,
                       uint64_t begin, uint64_t end, const char *rank)
{
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 1, .pid = pid, .start = start, .real = real, .exe = "train");
    tb_funcs(&b, {OPP_OP_DOT, OPP_DT_F64, "blas", "cblas_ddot"});
    tb_info(&b, "RANK", rank);
    tb_thread(&b, pid, NULL);
    tb_events(&b, TB_CALL(0, begin, end, 0, 100));
    tb_process_end(&b, 1, OPP_END_EXITED, end + 10);
    tb_end(&b);
}

static char *dir, *a, *b;
static struct opp_model *m;

/* host A: realtime = mono + 1e9; host B: realtime = mono + 1e9 + 7000,
 * so B's mono 1500 is A's mono 8500 */
static void setup(void)
{
    dir = tu_tmpdir();
    a = tu_path(dir, "a.trace");
    b = tu_path(dir, "b.trace");
    write_host(a, 10, 1000, 1000000000 + 1000, 2000, 3000, "0");
    write_host(b, 20, 500, 1000000000 + 500 + 7000, 1500, 1800, "1");
    const char *paths[] = {a, b};
    char err[512];
    m = tu_model_load_many(paths, 2, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
}

static void teardown(void)
{
    opp_model_free(m);
    m = NULL;
    tu_rmdir(dir);
    free(dir), free(a), free(b);
}

START_TEST(processes_kept_apart)
{
    ck_assert_uint_eq(m->nprocs, 2);
    ck_assert_uint_eq(m->procs[0].pid, 10);
    ck_assert_uint_eq(m->procs[1].pid, 20);
    ck_assert_uint_ne(m->procs[0].proc, m->procs[1].proc);
    ck_assert_int_eq(m->procs[1].rank, 1);
    ck_assert_uint_eq(m->nthreads, 2);
    ck_assert(m->sum.complete);
}
END_TEST

START_TEST(times_on_first_trace_clock)
{
    ck_assert_uint_eq(m->procs[1].start_ns, 7500);
    ck_assert_uint_eq(m->procs[1].end_ns, 8810);
    ck_assert_uint_eq(m->threads[0].events[0].begin_ns, 2000);
    ck_assert_uint_eq(m->threads[1].events[0].begin_ns, 8500);
    ck_assert_uint_eq(m->threads[1].events[0].end_ns, 8800);
}
END_TEST

START_TEST(rows_of_both_hosts)
{
    struct opp_agg_opts o = {0};
    struct opp_agg ag;
    ck_assert_int_eq(tu_aggregate(m, &o, &ag), 0);
    ck_assert_uint_eq(ag.nrows, 1);
    ck_assert_uint_eq(ag.rows[0].count, 2);
    ck_assert_uint_eq(ag.rows[0].cpu_time_total_ns, 1000 + 300);
    opp_agg_free(&ag);
}
END_TEST

/* The same through the command line, a column per host's rank. */
START_TEST(command_by_rank)
{
    char *out, *errs;
    char *argv[] = {"report", a, b, "--by-rank", "--sort", "count", "--format", "json", NULL};
    ck_assert_int_eq(tu_call(cmd_report, argv, dir, &out, &errs), 0);
    ck_assert_str_eq(out, "{\"metric\": \"count\", \"ranks\": [0, 1], \"rows\": [\n"
                          "  {\"key\": \"cblas_ddot\", \"values\": [1, 1], \"min\": 1, \"median\": 1, "
                          "\"max\": 1, \"slowest_rank\": 0}\n]}\n");
    free(out), free(errs);
}
END_TEST

/* A rank whose process made no call: a column and no row (the empty
 * table once went to qsort as a null pointer). */
/* One trace named twice (by the same path, or through a link) would add
 * up twice: a usage error, refused in one line, by report and by export
 * alike. */
START_TEST(same_trace_twice_refused)
{
    char *link = tu_path(dir, "link.trace"), *out, *errs, *want;
    ck_assert_int_eq(symlink(a, link), 0);
    const char *twice[][2] = {{a, a}, {a, link}};
    for (int i = 0; i < 2; i++) {
        char *argv[] = {"report", (char *)twice[i][0], (char *)twice[i][1], NULL};
        ck_assert_int_eq(tu_call(cmd_report, argv, dir, &out, &errs), 2);
        ck_assert_str_eq(out, "");
        ck_assert_int_gt(asprintf(&want,
                                  "opprof report: %s and %s are the same trace: give it once\n",
                                  twice[i][0], twice[i][1]),
                         0);
        ck_assert_str_eq(errs, want);
        free(out), free(errs), free(want);
    }
    char *ex[] = {"export", "chrome", a, link, "-o", "/dev/null", NULL};
    ck_assert_int_eq(tu_call(cmd_export, ex, dir, &out, &errs), 2);
    ck_assert_int_gt(
        asprintf(&want, "opprof export: %s and %s are the same trace: give it once\n", a, link), 0);
    ck_assert_str_eq(errs, want);
    free(out), free(errs), free(want), free(link);
}
END_TEST

START_TEST(rank_without_calls)
{
    char *d = tu_tmpdir(), *path = tu_path(d, "r.trace");
    struct tb tb;
    tb_open(&tb, path);
    tb_process(&tb, .proc = 1, .pid = 10, .exe = "train");
    tb_funcs(&tb, {OPP_OP_DOT, OPP_DT_F64, "blas", "cblas_ddot"});
    tb_info(&tb, "RANK", "3");
    tb_end(&tb);
    char err[512];
    struct opp_model *one = tu_model_load(path, err, sizeof err);
    ck_assert_msg(one != NULL, "%s", err);
    struct opp_agg_opts o = {0};
    struct opp_rank_table t;
    ck_assert_int_eq(opp_rank_table_build(one, &o, tu_rank_aggregates, one, &t), 0);
    ck_assert_uint_eq(t.nranks, 1);
    ck_assert_int_eq(t.ranks[0], 3);
    ck_assert_uint_eq(t.nrows, 0);
    opp_rank_table_free(&t);
    opp_model_free(one);
    tu_rmdir(d);
    free(d), free(path);
}
END_TEST

Suite *suite_merge(void)
{
    Suite *s = suite_create("merge");
    TCase *tc = tcase_create("hosts");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, processes_kept_apart);
    tcase_add_test(tc, times_on_first_trace_clock);
    tcase_add_test(tc, rows_of_both_hosts);
    tcase_add_test(tc, command_by_rank);
    tcase_add_test(tc, same_trace_twice_refused);
    suite_add_tcase(s, tc);
    TCase *ranks = tcase_create("ranks");
    tcase_add_test(ranks, rank_without_calls);
    suite_add_tcase(s, ranks);
    return s;
}
