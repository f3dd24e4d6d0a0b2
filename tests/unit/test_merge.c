/* Traces from several hosts in one model (opp_model_load_many): process
 * serials kept apart, times moved onto the first trace's clock through each
 * trace's (realtime, monotonic) pair, with a known offset. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/aggregate.h"
#include "analysis/ranks.h"
#include "tool/cmds.h"
#include "analysis/model.h"
#include "testutil.h"
#include "tracebuild.h"
#include "oracle/loaded.h"

/* One host's trace: process serial 1 (pid), started at mono ns `start`
 * with realtime `real`; one cblas_ddot [begin, end] on thread pid; rank
 * label. A CLOCK chunk first, as the collector writes one, when clock. */
static void write_host_clock(const char *path, int clock, uint32_t pid, uint64_t start,
                             uint64_t real, uint64_t begin, uint64_t end, const char *rank)
{
    struct tb b;
    tb_open(&b, path);
    if (clock)
        tb_clock(&b, 1, 2, 3);
    tb_process(&b, .proc = 1, .pid = pid, .start = start, .real = real, .exe = "train");
    tb_funcs(&b, {OPP_OP_DOT, OPP_DT_F64, "blas", "cblas_ddot"});
    tb_info(&b, "RANK", rank);
    tb_thread(&b, pid, NULL);
    tb_events(&b, TB_CALL(0, begin, end, 0, 100));
    tb_process_end(&b, 1, OPP_END_EXITED, end + 10);
    tb_end(&b);
}

static void write_host(const char *path, uint32_t pid, uint64_t start, uint64_t real,
                       uint64_t begin, uint64_t end, const char *rank)
{
    write_host_clock(path, 0, pid, start, real, begin, end, rank);
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

/* Traces read as one are at most 256 (the k-th one's process serials
 * are offset by k << 24): report and export take 256 and refuse one more
 * in the same line. */
START_TEST(merged_traces_at_most_256)
{
    char *paths[257], *argv[262], *out, *errs;
    struct stat st;
    ck_assert_int_eq(stat(a, &st), 0);
    size_t len = (size_t)st.st_size;
    char *data = malloc(len);
    FILE *in = fopen(a, "rb");
    ck_assert_ptr_nonnull(in);
    ck_assert_uint_eq(fread(data, 1, len, in), len);
    fclose(in);
    for (int i = 0; i < 257; i++) {
        char name[32];
        snprintf(name, sizeof name, "m%d.trace", i);
        paths[i] = tu_path(dir, name);
        FILE *f = fopen(paths[i], "wb");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(data, 1, len, f), len);
        fclose(f);
    }
    for (int n = 256; n <= 257; n++) {
        int k = 0;
        argv[k++] = "report";
        for (int i = 0; i < n; i++)
            argv[k++] = paths[i];
        argv[k++] = "--format";
        argv[k++] = "csv";
        argv[k] = NULL;
        ck_assert_int_eq(tu_call(cmd_report, argv, dir, &out, &errs), (n == 256 ? 0 : 2));
        ck_assert_str_eq(errs, n == 256 ? "" : "opprof report: at most 256 traces at a time\n");
        free(out), free(errs);
    }
    argv[0] = "export", argv[1] = "chrome";
    for (int i = 0; i < 257; i++)
        argv[2 + i] = paths[i];
    argv[259] = "-o", argv[260] = "/dev/null", argv[261] = NULL;
    ck_assert_int_eq(tu_call(cmd_export, argv, dir, &out, &errs), 2);
    ck_assert_str_eq(errs, "opprof export: at most 256 traces at a time\n");
    free(out), free(errs), free(data);
    for (int i = 0; i < 257; i++)
        free(paths[i]);
}
END_TEST

/* A trace whose first process says it started past INT64_MAX ns of the
 * wall clock (the year 2262: a damaged clock, not one to shift the other
 * trace's times by) is damaged there, by report and by export alike:
 * nothing of it can be read when that is its first chunk; else what came
 * before is read, with a warning. */
START_TEST(damaged_clock_refused)
{
    char *c = tu_path(dir, "c.trace"), *out, *errs, *want;
    write_host_clock(c, 0, 30, 500, (1ull << 63) + 1000, 1500, 1800, "2");
    const char *cmd[] = {"report", "export"};
    for (int i = 0; i < 2; i++) {
        char *rep[] = {"report", a, c, "--format", "csv", NULL};
        char *ex[] = {"export", "chrome", a, c, "-o", "/dev/null", NULL};
        int rc = i ? tu_call(cmd_export, ex, dir, &out, &errs)
                   : tu_call(cmd_report, rep, dir, &out, &errs);
        ck_assert_int_eq(rc, 1);
        ck_assert_str_eq(out, "");
        ck_assert_int_gt(asprintf(&want,
                                  "opprof %s: %s: nothing in the trace can be read: trace "
                                  "damaged at byte 24: process 1 has a damaged clock\n",
                                  cmd[i], c),
                         0);
        ck_assert_str_eq(errs, want);
        free(out), free(errs), free(want);
    }
    write_host_clock(c, 1, 30, 500, (1ull << 63) + 1000, 1500, 1800, "2");
    char *rep[] = {"report", a, c, "--format", "csv", NULL};
    ck_assert_int_eq(tu_call(cmd_report, rep, dir, &out, &errs), 0);
    ck_assert_str_eq(out, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,"
                          "flops\ncblas_ddot,blas,1,1.000,1.000,1.000,200\n");
    ck_assert_int_gt(asprintf(&want,
                              "opprof report: warning: %s: trace damaged at byte 64: process 1 "
                              "has a damaged clock\n",
                              c),
                     0);
    ck_assert_str_eq(errs, want);
    free(out), free(errs), free(want), free(c);
}
END_TEST

/* Clocks at the ends of what a trace may say: the first trace's offset
 * -INT64_MAX, the second's INT64_MAX. The second's times move as far as
 * they can (INT64_MAX), nothing overflows. */
START_TEST(extreme_clocks_saturate)
{
    char *x = tu_path(dir, "x.trace"), *y = tu_path(dir, "y.trace");
    write_host(x, 10, INT64_MAX, 0, 2000, 3000, "0");
    write_host(y, 20, 0, INT64_MAX, 1500, 1800, "1");
    const char *paths[] = {x, y};
    char err[512];
    struct opp_model *two = tu_model_load_many(paths, 2, err, sizeof err);
    ck_assert_msg(two != NULL, "%s", err);
    ck_assert_uint_eq(two->nprocs, 2);
    ck_assert_uint_eq(two->procs[0].start_ns, INT64_MAX);
    ck_assert_uint_eq(two->procs[1].start_ns, 0); /* 0: unknown, kept */
    ck_assert_uint_eq(two->threads[0].events[0].begin_ns, 2000);
    ck_assert_uint_eq(two->threads[1].events[0].begin_ns, INT64_MAX);
    ck_assert_uint_eq(two->threads[1].events[0].end_ns, INT64_MAX);
    opp_model_free(two);
    free(x), free(y);
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
    tcase_add_test(tc, merged_traces_at_most_256);
    tcase_add_test(tc, damaged_clock_refused);
    tcase_add_test(tc, extreme_clocks_saturate);
    suite_add_tcase(s, tc);
    TCase *ranks = tcase_create("ranks");
    tcase_add_test(ranks, rank_without_calls);
    suite_add_tcase(s, ranks);
    return s;
}
