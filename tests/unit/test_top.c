/* `opprof top`'s numbers (report/analysis/top.c) and screen text
 * (report/views/top_view.c) from two snapshots: the interval is their
 * difference, rows add up across processes or by library, sorted by the
 * key asked for. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/top.h"
#include "views/top_view.h"

static struct opp_top_row prev_rows[] = {
    {"dgemm_", "blas", 1, 10, 1000, 1000, 0, 0, 0, 0},
    {"ddot_", "blas", 1, 100, 200, 200, 0, 0, 0, 0},
};
static struct opp_top_row cur_rows[] = {
    {"dgemm_", "blas", 1, 30, 3000, 3000, 0, 4096, 0, 0},
    {"ddot_", "blas", 1, 400, 800, 800, 0, 0, 0, 0},
    {"ddot_", "blas", 2, 50, 100, 100, 0, 0, 0, 0}, /* another process: added up */
    {"cudaLaunchKernel", "cudart", 1, 5, 50, 50, 7000, 0, 0, 0},
};

static struct opp_top_snap snap(uint64_t now, struct opp_top_row *rows, size_t n, uint64_t steps,
                                uint32_t nlat)
{
    struct opp_top_snap s = {.now_ns = now,
                             .events = steps * 10,
                             .procs = 2,
                             .threads = 3,
                             .recording = 1,
                             .from_start = 1,
                             .steps = steps,
                             .nlat = nlat,
                             .step_name = "ProfilerStep#N",
                             .nrows = n,
                             .rows = rows};
    for (uint32_t i = 0; i < nlat; i++)
        s.lat_ns[i] = (i + 1) * 1000000ull;
    return s;
}

START_TEST(interval_is_the_difference)
{
    struct opp_top_snap p = snap(1000000000ull, prev_rows, 2, 4, 4);
    struct opp_top_snap c = snap(3000000000ull, cur_rows, 4, 10, 10);
    struct opp_top_view v;
    ck_assert_int_eq(opp_top_compute(&p, &c, OPP_TOP_BY_NAME, OPP_TOP_SORT_CALLS, &v), 0);
    ck_assert_uint_eq(v.n, 3);
    ck_assert_double_eq(v.secs, 2.0);
    ck_assert_str_eq(v.lines[0].name, "ddot_");
    ck_assert_uint_eq(v.lines[0].all.calls, 450);
    ck_assert_uint_eq(v.lines[0].last.calls, 350);
    ck_assert_uint_eq(v.lines[0].last.total_ns, 700);
    ck_assert_str_eq(v.lines[1].name, "dgemm_");
    ck_assert_uint_eq(v.lines[1].last.calls, 20);
    ck_assert_int_eq(v.lines[1].last.mem, 4096);
    ck_assert_str_eq(v.lines[2].name, "cudaLaunchKernel");
    ck_assert_uint_eq(v.lines[2].last.gpu_ns, 7000); /* new since: all of it */
    ck_assert_int_eq(v.gpu, 1);
    ck_assert_uint_eq(v.last_steps, 6);
    ck_assert_uint_eq(v.p50_ns, 7000000); /* nearest rank of the interval's 5..10 ms */
    ck_assert_uint_eq(v.p90_ns, 10000000);
    opp_top_view_free(&v);
}
END_TEST

START_TEST(by_library_and_by_total)
{
    struct opp_top_snap c = snap(3000000000ull, cur_rows, 4, 0, 0);
    struct opp_top_view v;
    ck_assert_int_eq(opp_top_compute(NULL, &c, OPP_TOP_BY_LIB, OPP_TOP_SORT_TOTAL, &v), 0);
    ck_assert_uint_eq(v.n, 2);
    ck_assert_str_eq(v.lines[0].name, "blas");
    ck_assert_uint_eq(v.lines[0].all.calls, 480);
    ck_assert_uint_eq(v.lines[0].all.total_ns, 3900);
    ck_assert_str_eq(v.lines[1].name, "cudart");
    ck_assert_double_eq(v.secs, 0);
    opp_top_view_free(&v);
}
END_TEST

/* By library, the names ("blas", "cudart") are narrower than the
 * heading: the column is as wide as "Library", so the rows line up under
 * the headings. */
START_TEST(library_heading_sets_the_width)
{
    struct opp_top_snap c = snap(3000000000ull, cur_rows, 4, 0, 0);
    struct opp_top_view v;
    ck_assert_int_eq(opp_top_compute(NULL, &c, OPP_TOP_BY_LIB, OPP_TOP_SORT_TOTAL, &v), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    struct opp_top_show o = {.sort = OPP_TOP_SORT_TOTAL, .group = OPP_TOP_BY_LIB};
    ck_assert_int_eq(opp_out_top(f, &v, &o), 0);
    fclose(f);
    const char *want =
        "opprof top: recording, 2 processes, 3 threads\n"
        "records: 0, dropped: 0\n"
        "         since the start                                                      "
        "               |  since the start\n"
        "-------  ------------  ------------  ------------  ------------  ------------ "
        " ------------  |  ------------  ------------  ------------  ------------\n"
        "Library       Calls/s    Self CPU %      Self CPU    *CPU total      GPU time "
        " Self CPU Mem  |         Calls      Self CPU     CPU total      GPU time\n"
        "-------  ------------  ------------  ------------  ------------  ------------ "
        " ------------  |  ------------  ------------  ------------  ------------\n"
        "   blas             -        98.73%       3.900us       3.900us       0.000us "
        "      4.00 Kb  |           480       3.900us       3.900us       0.000us\n"
        " cudart             -         1.27%       0.050us       0.050us       7.000us "
        "          0 b  |             5       0.050us       0.050us       7.000us\n"
        "-------  ------------  ------------  ------------  ------------  ------------ "
        " ------------  |  ------------  ------------  ------------  ------------\n"
        "Self CPU time total: 3.950us (last interval), 3.950us (since the start)\n";
    ck_assert_str_eq(text, want);
    free(text);
    opp_top_view_free(&v);
}
END_TEST

/* By layer: a line per nn.Module with its layer's self time, and the
 * time outside any; by name, that last one is no operator. */
START_TEST(by_layer)
{
    struct opp_top_row rows[] = {
        {"nn.Module: Net_0", "torch", 1, 10, 100, 1000, 0, 0, 600, 1},
        {"(outside nn.Module)", "", 1, 0, 0, 0, 0, 0, 400, 2},
        {"aten::mm", "torch", 1, 20, 500, 500, 0, 0, 0, 0},
    };
    struct opp_top_snap c = snap(3000000000ull, rows, 3, 0, 0);
    struct opp_top_view v;
    ck_assert_int_eq(opp_top_compute(NULL, &c, OPP_TOP_BY_LAYER, OPP_TOP_SORT_SELF, &v), 0);
    ck_assert_uint_eq(v.n, 2);
    ck_assert_str_eq(v.lines[0].name, "nn.Module: Net_0");
    ck_assert_uint_eq(v.lines[0].all.self_ns, 600);
    ck_assert_uint_eq(v.lines[0].all.calls, 10);
    ck_assert_str_eq(v.lines[1].name, "(outside nn.Module)");
    ck_assert_uint_eq(v.lines[1].all.self_ns, 400);
    opp_top_view_free(&v);
    ck_assert_int_eq(opp_top_compute(NULL, &c, OPP_TOP_BY_NAME, OPP_TOP_SORT_SELF, &v), 0);
    ck_assert_uint_eq(v.n, 2);
    ck_assert_str_eq(v.lines[0].name, "aten::mm");
    ck_assert_str_eq(v.lines[1].name, "nn.Module: Net_0");
    ck_assert_uint_eq(v.lines[1].all.self_ns, 100);
    opp_top_view_free(&v);
}
END_TEST

START_TEST(screen_text)
{
    struct opp_top_snap p = snap(1000000000ull, prev_rows, 2, 4, 4);
    struct opp_top_snap c = snap(3000000000ull, cur_rows, 2, 10, 10);
    struct opp_top_view v;
    ck_assert_int_eq(opp_top_compute(&p, &c, OPP_TOP_BY_NAME, OPP_TOP_SORT_TOTAL, &v), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    struct opp_top_show o = {.sort = OPP_TOP_SORT_TOTAL, .keys = 1};
    ck_assert_int_eq(opp_out_top(f, &v, &o), 0);
    fclose(f);
    const char *want = "opprof top: recording, 2 processes, 3 threads, last 2.0 s\n"
                       "records: 100 (30/s), dropped: 0\n"
                       "steps (ProfilerStep#N): 10, 3.00/s, latency p50 7.000ms p90 10.000ms\n"
                       "        last interval                                                      "
                       "   |  since the start\n"
                       "------  ------------  ------------  ------------  ------------  "
                       "------------  |  ------------  ------------  ------------\n"
                       "  Name       Calls/s    Self CPU %      Self CPU    *CPU total  Self CPU "
                       "Mem  |         Calls      Self CPU     CPU total\n"
                       "------  ------------  ------------  ------------  ------------  "
                       "------------  |  ------------  ------------  ------------\n"
                       "dgemm_          10.0        76.92%       2.000us       2.000us       4.00 "
                       "Kb  |            30       3.000us       3.000us\n"
                       " ddot_         150.0        23.08%       0.600us       0.600us           0 "
                       "b  |           400       0.800us       0.800us\n"
                       "------  ------------  ------------  ------------  ------------  "
                       "------------  |  ------------  ------------  ------------\n"
                       "Self CPU time total: 2.600us (last interval), 3.800us (since the start)\n"
                       "keys: s sort (total)  g group (name)  p pause  q quit\n";
    ck_assert_str_eq(text, want);
    free(text);
    opp_top_view_free(&v);
}
END_TEST

/* The records dropped, apart by why when a signal handler's interruption
 * lost some (a larger OPPROF_BUFFER keeps only the full rings'). */
START_TEST(drops_said_apart)
{
    const uint64_t dropped[] = {5, 5}, interrupted[] = {0, 2};
    const char *want[] = {"records: 0, dropped: 5\n",
                          "records: 0, dropped: 5 (3 buffers full, 2 interrupted by a signal "
                          "handler)\n"};
    for (int i = 0; i < 2; i++) {
        struct opp_top_snap c = snap(3000000000ull, cur_rows, 4, 0, 0);
        c.dropped = dropped[i], c.interrupted = interrupted[i];
        struct opp_top_view v;
        ck_assert_int_eq(opp_top_compute(NULL, &c, OPP_TOP_BY_NAME, OPP_TOP_SORT_TOTAL, &v), 0);
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        struct opp_top_show o = {.sort = OPP_TOP_SORT_TOTAL};
        ck_assert_int_eq(opp_out_top(f, &v, &o), 0);
        fclose(f);
        const char *nl = strchr(text, '\n');
        ck_assert_ptr_nonnull(nl);
        ck_assert_msg(!strncmp(nl + 1, want[i], strlen(want[i])), "%s", text);
        free(text);
        opp_top_view_free(&v);
    }
}
END_TEST

/* The lines around the rows, as the screen fits the table to its height:
 * what the text holds besides them, with and without steps and keys. */
START_TEST(lines_around_the_rows)
{
    struct opp_top_snap p = snap(1000000000ull, prev_rows, 2, 4, 4);
    for (int steps = 0; steps < 2; steps++)
        for (int keys = 0; keys < 2; keys++) {
            struct opp_top_snap c = snap(3000000000ull, cur_rows, 4, steps ? 10 : 0, 0);
            struct opp_top_view v;
            ck_assert_int_eq(opp_top_compute(&p, &c, OPP_TOP_BY_NAME, OPP_TOP_SORT_TOTAL, &v), 0);
            char *text = NULL;
            size_t len = 0;
            FILE *f = open_memstream(&text, &len);
            struct opp_top_show o = {.rows = 2, .keys = keys};
            ck_assert_int_eq(opp_out_top(f, &v, &o), 0);
            fclose(f);
            size_t lines = 0;
            for (size_t i = 0; i < len; i++)
                lines += text[i] == '\n';
            ck_assert_uint_eq(opp_top_lines_around(&v, &o), 8 + steps + keys);
            ck_assert_uint_eq(lines, 2 + opp_top_lines_around(&v, &o));
            free(text);
            opp_top_view_free(&v);
        }
}
END_TEST

/* An interval without a call (the program idle, or the run ended just
 * after the table before) says so: no percentage of no time (NaN). */
START_TEST(interval_without_calls)
{
    struct opp_top_snap p = snap(1000000000ull, prev_rows, 2, 0, 0);
    struct opp_top_snap c = snap(2000000000ull, prev_rows, 2, 0, 0);
    struct opp_top_view v;
    ck_assert_int_eq(opp_top_compute(&p, &c, OPP_TOP_BY_NAME, OPP_TOP_SORT_TOTAL, &v), 0);
    ck_assert_int_eq(v.idle, 1);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    struct opp_top_show o = {.sort = OPP_TOP_SORT_TOTAL, .ended = 1};
    ck_assert_int_eq(opp_out_top(f, &v, &o), 0);
    fclose(f);
    const char *want = "opprof top: run ended, last 1.0 s\n"
                       "records: 0 (0/s), dropped: 0\n"
                       "        last interval: no calls                                 |  since "
                       "the start\n"
                       "------  ------------  ------------  ------------  ------------  |  "
                       "------------  ------------  ------------\n"
                       "  Name       Calls/s    Self CPU %      Self CPU    *CPU total  |         "
                       "Calls      Self CPU     CPU total\n"
                       "------  ------------  ------------  ------------  ------------  |  "
                       "------------  ------------  ------------\n"
                       "dgemm_           0.0             -       0.000us       0.000us  |         "
                       "   10       1.000us       1.000us\n"
                       " ddot_           0.0             -       0.000us       0.000us  |         "
                       "  100       0.200us       0.200us\n"
                       "------  ------------  ------------  ------------  ------------  |  "
                       "------------  ------------  ------------\n"
                       "Self CPU time total: 0.000us (last interval), 1.200us (since the start)\n";
    ck_assert_str_eq(text, want);
    free(text);
    opp_top_view_free(&v);
}
END_TEST

Suite *suite_top(void)
{
    Suite *s = suite_create("top");
    TCase *tc = tcase_create("top");
    tcase_add_test(tc, interval_is_the_difference);
    tcase_add_test(tc, by_library_and_by_total);
    tcase_add_test(tc, library_heading_sets_the_width);
    tcase_add_test(tc, drops_said_apart);
    tcase_add_test(tc, screen_text);
    tcase_add_test(tc, lines_around_the_rows);
    tcase_add_test(tc, interval_without_calls);
    tcase_add_test(tc, by_layer);
    suite_add_tcase(s, tc);
    return s;
}
