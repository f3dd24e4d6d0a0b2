/* torch's table options that opprof lacked: group_by_stack_n (our frames
 * are the enclosing operators), the CPU memory sort keys (on a trace
 * without MEMORY events every row 0; with them: test_cpu_memory.c), a time
 * window and a name regex; on a trace written by hand, exact rows. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/aggregate.h"
#include "tool/cmds.h"
#include "analysis/model.h"
#include "views/output.h"
#include "testutil.h"
#include "tracebuild.h"
#include "oracle/loaded.h"

#define US 1000ull
#define T0 (5000000000ull) /* the first event, 5 s into the clock */
#define NN ('N' | 'N' << 8)

enum { F_STEP, F_INNER, F_DGEMM };

/* "step" [0, 1000 us] holds dgemm [100, 400] and "inner" [500, 900], which
 * holds dgemm [600, 700]; a second "step" [2000, 2600] holds dgemm
 * [2100, 2300]. Self: step 300 + 400, inner 300, dgemm 300 + 100 + 200. */
#define AT(us) (T0 + (us) * US)
#define SHAPE 8, 8, 8, NN
static void write_trace(const char *path)
{
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 1, .pid = 10, .exe = "p");
    tb_funcs(&b, [F_STEP] = {OPP_OP_PLAIN, 0, "app", "step"},
             [F_INNER] = {OPP_OP_PLAIN, 0, "app", "inner"},
             [F_DGEMM] = {OPP_OP_GEMM, OPP_DT_F64, "blas", "cblas_dgemm"});
    tb_thread(&b, 10, NULL);
    tb_events(&b, TB_CALL(F_DGEMM, AT(100), AT(400), 1, SHAPE),
              TB_CALL(F_DGEMM, AT(600), AT(700), 2, SHAPE), TB_CALL(F_INNER, AT(500), AT(900), 1),
              TB_CALL(F_STEP, AT(0), AT(1000), 0), TB_CALL(F_DGEMM, AT(2100), AT(2300), 1, SHAPE),
              TB_CALL(F_STEP, AT(2000), AT(2600), 0));
    tb_end(&b);
}

static char *dir, *trace;
static struct opp_model *m;

static void setup(void)
{
    dir = tu_tmpdir();
    trace = tu_path(dir, "f.trace");
    write_trace(trace);
    char err[512];
    m = tu_model_load(trace, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
}

static void teardown(void)
{
    opp_model_free(m);
    tu_rmdir(dir);
    free(dir), free(trace);
}

struct want {
    const char *key, *stack;
    uint64_t count, self_us;
};

static void rows_are(const struct opp_agg_opts *o, const struct want *w, size_t n)
{
    struct opp_agg a;
    ck_assert_int_eq(tu_aggregate(m, o, &a), 0);
    ck_assert_uint_eq(a.nrows, n);
    for (size_t i = 0; i < n; i++) {
        const struct opp_row *r = &a.rows[i];
        ck_assert_msg(!strcmp(r->key, w[i].key), "row %zu: %s, want %s", i, r->key, w[i].key);
        if (w[i].stack)
            ck_assert_str_eq(r->stack_str, w[i].stack);
        else
            ck_assert_ptr_null(r->stack_str);
        ck_assert_uint_eq(r->count, w[i].count);
        ck_assert_uint_eq(r->self_cpu_time_total_ns, w[i].self_us * US);
    }
    opp_agg_free(&a);
}

START_TEST(group_by_stack_one_frame)
{
    struct opp_agg_opts o = {.group_by_stack = 1};
    const struct want one[] = {
        {"step", "", 2, 700},
        {"cblas_dgemm", "step", 2, 500},
        {"inner", "step", 1, 300},
        {"cblas_dgemm", "inner", 1, 100},
    };
    rows_are(&o, one, 4);
}
END_TEST

START_TEST(group_by_stack_two_frames)
{
    struct opp_agg_opts o = {.group_by_stack = 2};
    const struct want two[] = {
        {"step", "", 2, 700},
        {"cblas_dgemm", "step", 2, 500},
        {"inner", "step", 1, 300},
        {"cblas_dgemm", "step;inner", 1, 100},
    };
    rows_are(&o, two, 4);
}
END_TEST

START_TEST(group_by_stack_and_shape_by_count)
{
    /* with shapes too, and sorted by calls: ties by name, then stack */
    struct opp_agg_opts o = {.group_by_stack = 2, .group_by_shape = 1, .sort = OPP_SORT_COUNT};
    const struct want by_count[] = {
        {"cblas_dgemm", "step", 2, 500},
        {"step", "", 2, 700},
        {"cblas_dgemm", "step;inner", 1, 100},
        {"inner", "step", 1, 300},
    };
    rows_are(&o, by_count, 4);
}
END_TEST

START_TEST(group_by_stack_table_and_csv)
{
    /* the table: a Stack column after the others; the CSV's stack field */
    struct opp_agg a;
    struct opp_agg_opts o = {.group_by_stack = 2, .limit = 2, .sort = OPP_SORT_COUNT};
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    struct opp_out_opts oo = {.group_by_stack = 2};
    char *out;
    CAPTURE(out, opp_out_table(f, &a, &oo));
    ck_assert_str_eq(out,
        "---------------  ------------  ------------  ------------  ------------  ------------  ------------  --------  \n"
        "           Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls     Stack  \n"
        "---------------  ------------  ------------  ------------  ------------  ------------  ------------  --------  \n"
        "    cblas_dgemm        31.25%     500.000us        31.25%     500.000us     250.000us             2      step  \n"
        "           step        43.75%     700.000us       100.00%       1.600ms     800.000us             2            \n"
        "---------------  ------------  ------------  ------------  ------------  ------------  ------------  --------  \n"
        "Self CPU time total: 1.600ms\n");
    free(out);
    CAPTURE(out, opp_out_csv(f, &a, &oo));
    ck_assert_str_eq(out, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,stack,flops\n"
                          "cblas_dgemm,blas,2,500.000,500.000,250.000,step,2048\n"
                          "step,app,2,700.000,1600.000,800.000,,0\n");
    free(out);
    opp_agg_free(&a);
}
END_TEST

START_TEST(group_by_stack_json)
{
    struct opp_agg a;
    struct opp_agg_opts o = {.group_by_stack = 2, .sort = OPP_SORT_SELF_CPU_TIME_TOTAL};
    struct opp_out_opts oo = {.group_by_stack = 2};
    char *out;
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    CAPTURE(out, opp_out_json(f, "f.trace", m, &a, &oo));
    ck_assert_ptr_nonnull(strstr(out, "{\"key\": \"cblas_dgemm\", \"lib\": \"blas\", \"count\": 1, "
                                      "\"self_cpu_time_total\": 100.000, \"cpu_time_total\": "
                                      "100.000, \"cpu_time\": 100.000, \"stack\": [\"step\", "
                                      "\"inner\"], \"flops\": 1024}"));
    ck_assert_ptr_nonnull(strstr(out, "\"stack\": [], \"flops\": 0}"));
    free(out);
    opp_agg_free(&a);
}
END_TEST

START_TEST(cpu_memory_sort_keys)
{
    enum opp_sort_key k;
    ck_assert_int_eq(opp_sort_key_parse("cpu_memory_usage", &k), 0);
    ck_assert_int_eq(k, OPP_SORT_CPU_MEMORY_USAGE);
    ck_assert_int_eq(opp_sort_key_parse("self_cpu_memory_usage", &k), 0);
    ck_assert_int_eq(k, OPP_SORT_SELF_CPU_MEMORY_USAGE);
    ck_assert_int_ne(opp_sort_key_parse("cpu_memory", &k), 0);
    ck_assert_ptr_nonnull(strstr(opp_sort_key_list(), ", cpu_memory_usage, self_cpu_memory_usage"));
}
END_TEST

START_TEST(cpu_memory_rows_by_name)
{
    /* no MEMORY events: every row 0, by name */
    struct opp_agg_opts o = {.sort = OPP_SORT_SELF_CPU_MEMORY_USAGE};
    const struct want w[] = {{"cblas_dgemm", NULL, 3, 600}, {"inner", NULL, 1, 300},
                             {"step", NULL, 2, 700}};
    rows_are(&o, w, 3);
}
END_TEST

START_TEST(cpu_memory_no_column)
{
    /* no MEMORY events: no memory column appears */
    char *out, *err;
    char *argv[] = {"report", trace, "--sort", "cpu_memory_usage", NULL};
    ck_assert_int_eq(tu_call(cmd_report, argv, dir, &out, &err), 0);
    ck_assert_ptr_null(strstr(out, "Mem"));
    ck_assert_ptr_nonnull(strstr(out, "Calls  \n-"));
    ck_assert_ptr_nonnull(strstr(out, "\n    cblas_dgemm  "));
    ck_assert(strstr(out, "cblas_dgemm") < strstr(out, "  inner  "));
    free(out), free(err);
}
END_TEST

START_TEST(time_window)
{
    ck_assert_uint_eq(tu_model_first_ns(m), T0);
    /* [500 us, 2050 us): inner, the dgemm inside it, the second step */
    struct opp_agg_opts o = {.window = 1, .from_ns = 500 * US, .to_ns = 2050 * US};
    const struct want w[] = {{"step", NULL, 1, 400}, {"inner", NULL, 1, 300},
                             {"cblas_dgemm", NULL, 1, 100}};
    rows_are(&o, w, 3);
}
END_TEST

START_TEST(time_window_end_open)
{
    /* the end is open: a call beginning at 2000 us is out of [0, 2000) */
    struct opp_agg_opts o = {.window = 1, .from_ns = 0, .to_ns = 2000 * US};
    const struct want w2[] = {{"cblas_dgemm", NULL, 2, 400}, {"inner", NULL, 1, 300},
                              {"step", NULL, 1, 300}}; /* ties by name */
    rows_are(&o, w2, 3);
}
END_TEST

START_TEST(name_match)
{
    regex_t re;
    ck_assert_int_eq(regcomp(&re, "^(cblas_|inn)", REG_EXTENDED | REG_NOSUB), 0);
    struct opp_agg_opts o = {.match = &re};
    const struct want w3[] = {{"cblas_dgemm", NULL, 3, 600}, {"inner", NULL, 1, 300}};
    rows_are(&o, w3, 2);
    regfree(&re);
}
END_TEST

START_TEST(name_match_none)
{
    regex_t re;
    ck_assert_int_eq(regcomp(&re, "nothing", REG_EXTENDED | REG_NOSUB), 0);
    struct opp_agg_opts o = {.match = &re};
    rows_are(&o, NULL, 0);
    regfree(&re);
}
END_TEST

START_TEST(command_window_and_match)
{
    /* the command: milliseconds, both filters at once */
    char *out, *err;
    char *argv[] = {"report", trace, "--from", "0.5", "--to", "2.05", "--match", "gemm$",
                    "--format", "csv", NULL};
    ck_assert_int_eq(tu_call(cmd_report, argv, dir, &out, &err), 0);
    ck_assert_str_eq(out, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,flops\n"
                          "cblas_dgemm,blas,1,100.000,100.000,100.000,1024\n");
    ck_assert_str_eq(err, "");
    free(out), free(err);
}
END_TEST

/* A name the trace does not have is an error naming how to list what it
 * has, exit 2, not an empty answer: --match, --step (loaded and
 * streamed), a --from past the trace's end. A regex that matches names
 * the other filters leave out is an empty answer, as is a --from inside
 * the trace. */
START_TEST(command_unknown_names)
{
    char *out, *err, want[1024];
    char *match[] = {"report", trace, "--match", "^gemm", NULL};
    ck_assert_int_eq(tu_call(cmd_report, match, dir, &out, &err), 2);
    ck_assert_str_eq(err, "opprof report: --match '^gemm': no operator or kernel name in the trace "
                          "matches (the table without --match lists them)\n");
    ck_assert_str_eq(out, "");
    free(out), free(err);
    char *outside[] = {"report", trace, "--match", "^inner$", "--from", "1", "-f", "csv", NULL};
    ck_assert_int_eq(tu_call(cmd_report, outside, dir, &out, &err), 0);
    ck_assert_str_eq(out, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,flops\n");
    free(out), free(err);
    char *past[] = {"report", trace, "--from", "2.7", NULL};
    ck_assert_int_eq(tu_call(cmd_report, past, dir, &out, &err), 2);
    snprintf(want, sizeof want, "opprof report: --from 2.7 ms is past the end of %s (2.600 ms)\n",
             trace);
    ck_assert_str_eq(err, want);
    ck_assert_str_eq(out, "");
    free(out), free(err);
    snprintf(want, sizeof want, "opprof report: --step 'stepp': no call of that name in %s "
             "(`opprof report %s` lists its operators and ranges)\n", trace, trace);
    for (int streamed = 0; streamed < 2; streamed++) {
        char *step[] = {"report", trace, "--step", "stepp", streamed ? "--stream" : NULL, NULL};
        ck_assert_int_eq(tu_call(cmd_report, step, dir, &out, &err), 2);
        ck_assert_str_eq(err, want);
        ck_assert_str_eq(out, "");
        free(out), free(err);
        char *known[] = {"report", trace, "--step", "step", streamed ? "--stream" : NULL, NULL};
        ck_assert_int_eq(tu_call(cmd_report, known, dir, &out, &err), 0);
        ck_assert_ptr_nonnull(strstr(out, "Steps: step (a step ends at each call), 1 step\n"));
        free(out), free(err);
    }
}
END_TEST

/* --match's percentages are shares of the whole (the calls it chose
 * from: 1600 us of self time), not of the rows it kept: step's CPU total
 * is 100%, not 1600 / 700 = 228.57% */
START_TEST(command_match_shares)
{
    char *out, *err;
    char *argv[] = {"report", trace, "--match", "^step$", NULL};
    ck_assert_int_eq(tu_call(cmd_report, argv, dir, &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "\n    step        43.75%     700.000us       100.00%       "
                                      "1.600ms     800.000us             2  \n"));
    ck_assert_ptr_nonnull(strstr(out, "\nSelf CPU time total: 700.000us of 1.600ms before --match "
                                      "(the percentages' base)\n"));
    free(out), free(err);
}
END_TEST

/* The help is printed as written: "PCT%", not a format's "PCT%%". */
START_TEST(command_help)
{
    char *out, *err;
    char *argv[] = {"report", "--help", NULL};
    ck_assert_int_eq(tu_call(cmd_report, argv, dir, &out, &err), 0);
    ck_assert_ptr_nonnull(
        strstr(out, "--min-share PCT   --tree: hide paths under PCT% of the roots' CPU total\n"));
    ck_assert_ptr_null(strstr(out, "%%"));
    free(out), free(err);
}
END_TEST

/* A trace without a call (the program called nothing opprof interposes,
 * or was not preloaded): the empty table, and a line on what to check. */
START_TEST(command_empty_trace_hint)
{
    char *empty = tu_path(dir, "empty.trace"), *out, *err, want[1024];
    struct tb b;
    tb_open(&b, empty);
    tb_process(&b, .proc = 1, .pid = 10, .exe = "p");
    tb_funcs(&b, [0] = {OPP_OP_GEMM, OPP_DT_F64, "blas", "cblas_dgemm"});
    tb_thread(&b, 10, NULL);
    tb_end(&b);
    char *argv[] = {"report", empty, "-f", "csv", NULL};
    ck_assert_int_eq(tu_call(cmd_report, argv, dir, &out, &err), 0);
    ck_assert_str_eq(out, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,flops\n");
    snprintf(want, sizeof want,
             "opprof report: %s holds no call: check that the program calls a library opprof "
             "interposes (BLAS, LAPACK, oneDNN, XNNPACK, the CUDA libraries, NCCL, NVTX) through "
             "the dynamic linker, or is a PyTorch program; that it was preloaded (not setuid, "
             "OPPROF_DISABLE unset); that it recorded (OPPROF_PAUSED waits for `opprof ctl "
             "start`, a schedule records its active steps only)\n",
             empty);
    ck_assert_str_eq(err, want);
    free(out), free(err);
    /* cut before its first call: said so, not the hint */
    char *cut = tu_path(dir, "cut.trace");
    tb_open(&b, cut);
    tb_process(&b, .proc = 1, .pid = 10, .exe = "p");
    tb_funcs(&b, [0] = {OPP_OP_GEMM, OPP_DT_F64, "blas", "cblas_dgemm"});
    tb_thread(&b, 10, NULL);
    tb_close(&b); /* no end: cut */
    char *cut_argv[] = {"report", cut, "-f", "csv", NULL};
    ck_assert_int_eq(tu_call(cmd_report, cut_argv, dir, &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(err, "warning: "));
    snprintf(want, sizeof want,
             "opprof report: %s holds no call in what could be read of it (the warning above)\n",
             cut);
    ck_assert_msg(strstr(err, want) && !strstr(err, "check that"), "%s", err);
    free(out), free(err), free(cut);
    /* a trace with calls: no such line */
    char *full[] = {"report", trace, "-f", "csv", NULL};
    ck_assert_int_eq(tu_call(cmd_report, full, dir, &out, &err), 0);
    ck_assert_str_eq(err, "");
    free(out), free(err), free(empty);
}
END_TEST

START_TEST(bad_options)
{
    const struct {
        char *argv[8];
        const char *msg;
    } cases[] = {
        {{"report", trace, "--from", "2", "--to", "1", NULL},
         "opprof report: --from must be before --to\n"},
        {{"report", trace, "--to", "-1", NULL},
         "opprof report: --to wants milliseconds (0 or more), not '-1'\n"},
        {{"report", trace, "--from", "x", NULL},
         "opprof report: --from wants milliseconds (0 or more), not 'x'\n"},
        {{"report", trace, "--match", "(", NULL}, "opprof report: --match '(': "},
        {{"report", trace, "--match", "", NULL}, "opprof report: --match wants REGEX, not ''\n"},
        {{"report", trace, "--match", "a", "--match", "b", NULL},
         "opprof report: --match given twice ('a' and 'b'): give it once\n"},
        {{"report", trace, "--group-by-stack", "0", NULL},
         "opprof report: --group-by-stack wants a depth from 1 to 16, not '0'\n"},
        {{"report", trace, "--group-by-stack", "17", NULL},
         "opprof report: --group-by-stack wants a depth from 1 to 16, not '17'\n"},
        {{"report", trace, "--tree", "--match", "x", NULL},
         "opprof report: --from, --to, --window, --match and --lib go with the table\n"},
        {{"report", trace, "--gpu", "--from", "1", NULL},
         "opprof report: --from, --to, --window, --match and --lib go with the table\n"},
        {{"report", trace, "--window", "0", NULL},
         "opprof report: --window wants a window number from 1, not '0'\n"},
        {{"report", trace, "--step", "step", "-n", "3", NULL},
         "opprof report: --limit goes with the table, --gpu (kernels), --tree (call paths), "
         "--by-rank (operators), not --step\n"},
        {{"report", trace, "--window", "1", "--from", "1", NULL},
         "opprof report: --window is a time window already: no --from/--to with it\n"},
        {{"report", trace, "--tree", "--sort", "count", NULL},
         "opprof report: --sort goes with the table and --by-rank, not --tree\n"},
        {{"report", trace, "--by-process", "-s", "count", NULL},
         "opprof report: --sort goes with the table and --by-rank, not --by-process\n"},
        {{"report", trace, "--by-rank", "--flops", NULL},
         "opprof report: --group-by-shape, --group-by-stack, --flops and --show-lib go with the "
         "table, not --by-rank\n"},
        {{"report", trace, "--step", "--group-by-shape", NULL},
         "opprof report: --group-by-shape, --group-by-stack, --flops and --show-lib go with the "
         "table, not --step\n"},
        {{"report", trace, "--gpu", "--show-lib", NULL},
         "opprof report: --group-by-shape, --group-by-stack, --flops and --show-lib go with the "
         "table, not --gpu\n"},
        /* calls of one library: the views that do not add calls up take none */
        {{"report", trace, "--tree", "--lib", "blas", NULL},
         "opprof report: --from, --to, --window, --match and --lib go with the table\n"},
        {{"report", trace, "--step", "--lib", "blas", NULL},
         "opprof report: --from, --to, --window, --match and --lib go with the table\n"},
        {{"report", trace, "--gpu", "--lib", "cudart", NULL},
         "opprof report: --from, --to, --window, --match and --lib go with the table\n"},
        /* a grouping of the table's rows, which these views do not show */
        {{"report", trace, "--by-rank", "--group-by-stack", "2", NULL},
         "opprof report: --group-by-shape, --group-by-stack, --flops and --show-lib go with the "
         "table, not --by-rank\n"},
        {{"report", trace, "--by-process", "--group-by-stack", "2", NULL},
         "opprof report: --group-by-shape, --group-by-stack, --flops and --show-lib go with the "
         "table, not --by-process\n"},
        {{"report", trace, "--tree", "--group-by-stack", "2", NULL},
         "opprof report: --group-by-shape, --group-by-stack, --flops and --show-lib go with the "
         "table, not --tree\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out, *err;
        char **argv = (char **)cases[i].argv;
        ck_assert_int_eq(tu_call(cmd_report, argv, dir, &out, &err), 2);
        ck_assert_msg(!strncmp(err, cases[i].msg, strlen(cases[i].msg)), "%s", err);
        ck_assert_int_eq(tu_count_lines(err, "opprof report: "), 1);
        ck_assert_str_eq(out, "");
        free(out), free(err);
    }
}
END_TEST

Suite *suite_report_filters(void)
{
    Suite *s = suite_create("report_filters");
    TCase *tc = tcase_create("filters");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, group_by_stack_one_frame);
    tcase_add_test(tc, group_by_stack_two_frames);
    tcase_add_test(tc, group_by_stack_and_shape_by_count);
    tcase_add_test(tc, group_by_stack_table_and_csv);
    tcase_add_test(tc, group_by_stack_json);
    tcase_add_test(tc, cpu_memory_sort_keys);
    tcase_add_test(tc, cpu_memory_rows_by_name);
    tcase_add_test(tc, cpu_memory_no_column);
    tcase_add_test(tc, time_window);
    tcase_add_test(tc, time_window_end_open);
    tcase_add_test(tc, name_match);
    tcase_add_test(tc, name_match_none);
    tcase_add_test(tc, command_window_and_match);
    tcase_add_test(tc, command_unknown_names);
    tcase_add_test(tc, command_match_shares);
    tcase_add_test(tc, command_help);
    tcase_add_test(tc, command_empty_trace_hint);
    tcase_add_test(tc, bad_options);
    suite_add_tcase(s, tc);
    return s;
}
