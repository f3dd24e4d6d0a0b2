/* The report's model and key_averages: the suites' trace (report_trace.h)
 * loaded (analysis/load.c) and aggregated like key_averages
 * (aggregate.c), with exact numbers throughout. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/aggregate.h"
#include "analysis/pass.h"
#include "tool/cmds.h"
#include "views/columns.h"
#include "views/fmt.h"
#include "analysis/model.h"
#include "views/output.h"
#include "report_trace.h"
#include "testutil.h"
#include "oracle/loaded.h"

/* ---- the model ---- */

START_TEST(model_counts)
{
    const struct opp_model *m = model;
    ck_assert_int_eq(m->sum.complete, 1);
    ck_assert_str_eq(m->sum.warning, "");
    ck_assert_uint_eq(m->events, 11);
    ck_assert_uint_eq(m->dropped, 5);
    ck_assert_uint_eq(m->open_events, 1);
}
END_TEST

START_TEST(model_processes)
{
    const struct opp_model *m = model;
    ck_assert_uint_eq(m->nprocs, 3);
    ck_assert_uint_eq(m->procs[0].pid, 100);
    ck_assert_uint_eq(m->procs[0].ppid, 1);
    ck_assert_str_eq(m->procs[0].exe, "/usr/bin/prog");
    ck_assert_uint_eq(m->procs[0].argc, 3);
    ck_assert_str_eq(m->procs[0].argv[2], "3");
    ck_assert_ptr_null(m->procs[0].argv[3]);
    ck_assert_uint_eq(m->procs[0].end_how, OPP_END_EXITED);
    ck_assert_uint_eq(m->procs[0].end_ns, 30000);
    ck_assert_uint_eq(m->procs[1].proc, 1);
    ck_assert_uint_eq(m->procs[1].parent_proc, 0);
    ck_assert_uint_eq(m->procs[1].start_ns, 100);
    ck_assert_uint_eq(m->procs[1].end_how, OPP_END_RUNNING);
    ck_assert_uint_eq(m->procs[2].pid, 100);
    ck_assert_uint_eq(m->procs[2].end_how, OPP_END_LOST);
    char buf[64];
    ck_assert_str_eq(opp_process_end_name(&m->procs[2]), "cut");
    ck_assert_str_eq(opp_process_end_text(&m->procs[1], buf, sizeof buf), "running");
    ck_assert_str_eq(opp_process_end_name(&(struct opp_process){0}), "unknown");
}
END_TEST

/* PROCESS_STATUS (its parent reaped it) says how a process without goodbye
 * ended, in either order with PROCESS_END; one that claims no real status
 * ends the trace there. */
START_TEST(model_process_status)
{
    char *path = tu_path(dir, "status.trace");
    struct tb b;
    tb_open(&b, path);
    for (uint32_t p = 0; p < 4; p++)
        tb_process(&b, .proc = p, .pid = 200 + p, .ppid = 1, .exe = "w");
    tb_process_end(&b, 0, OPP_END_LOST, 100);
    tb_process_status(&b, 0, OPP_EXIT_STATUS, 0);
    tb_process_status(&b, 1, OPP_EXIT_SIGNAL, 15);
    tb_process_end(&b, 1, OPP_END_LOST, 100);
    tb_process_end(&b, 2, OPP_END_EXITED, 100);
    tb_process_status(&b, 2, OPP_EXIT_STATUS, 255);
    tb_process_end(&b, 3, OPP_END_LOST, 100);
    uint32_t bad[4] = {3, OPP_EXIT_SIGNAL, 0, 0}; /* signal 0 */
    tb_chunk(&b, OPP_CHUNK_PROCESS_STATUS, bad, sizeof bad);
    tb_end(&b);
    char err[512], buf[64];
    struct opp_model *m = tu_model_load(path, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    ck_assert_str_eq(opp_process_end_text(&m->procs[0], buf, sizeof buf), "exited with status 0");
    ck_assert_str_eq(opp_process_end_text(&m->procs[1], buf, sizeof buf),
                     "killed by signal 15 (SIGTERM)");
    ck_assert_str_eq(opp_process_end_text(&m->procs[2], buf, sizeof buf), "exited with status 255");
    ck_assert_str_eq(opp_process_end_text(&m->procs[3], buf, sizeof buf), "cut");
    ck_assert_int_eq(m->sum.complete, 0);
    opp_model_free(m);
    free(path);
}
END_TEST

/* A parent that connected after its child (processes connect at their
 * first record) is the child's parent, in the loaded model and in the
 * pass's; serials as the collector gives them (from 1, parent 0: none
 * known when the child said hello). */
START_TEST(model_parent_connected_later)
{
    char *path = tu_path(dir, "parents.trace");
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 1, .pid = 300, .ppid = 200, .parent = 0, .exe = "child");
    tb_process(&b, .proc = 2, .pid = 200, .ppid = 1, .parent = 0, .exe = "parent");
    tb_process(&b, .proc = 3, .pid = 301, .ppid = 200, .parent = 2, .exe = "child2");
    tb_process(&b, .proc = 4, .pid = 400, .ppid = 999, .parent = 0, .exe = "orphan");
    tb_process(&b, .proc = 5, .pid = 200, .ppid = 1, .parent = 0, .exe = "pid-again");
    /* its pid's process is its own child (the pid taken again): none */
    tb_process(&b, .proc = 6, .pid = 500, .ppid = 600, .parent = 0, .exe = "c");
    tb_process(&b, .proc = 7, .pid = 600, .ppid = 500, .parent = 6, .exe = "cc");
    /* its pid's process started after it: none */
    tb_process(&b, .proc = 8, .pid = 800, .ppid = 900, .parent = 0, .start = 100, .exe = "d");
    tb_process(&b, .proc = 9, .pid = 900, .ppid = 1, .parent = 0, .start = 200, .exe = "late");
    tb_end(&b);
    char err[512];
    struct opp_model *m = tu_model_load(path, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    struct opp_pass *p = tu_pass_open(path);
    const struct opp_model *models[] = {m, opp_pass_model(p)};
    for (int k = 0; k < 2; k++) {
        const struct opp_model *x = models[k];
        ck_assert_uint_eq(x->nprocs, 9);
        ck_assert_uint_eq(x->procs[0].parent_proc, 2); /* the first pid 200 after it */
        ck_assert_uint_eq(x->procs[5].parent_proc, 0);
        ck_assert_uint_eq(x->procs[6].parent_proc, 6);
        ck_assert_uint_eq(x->procs[7].parent_proc, 0);
        ck_assert_uint_eq(x->procs[1].parent_proc, 0); /* pid 1 is not in the trace */
        ck_assert_uint_eq(x->procs[2].parent_proc, 2);
        ck_assert_uint_eq(x->procs[3].parent_proc, 0);
        ck_assert_uint_eq(x->procs[4].parent_proc, 0);
    }
    opp_pass_free(p);
    opp_model_free(m);
    free(path);
}
END_TEST

START_TEST(model_function_tables)
{
    const struct opp_model *m = model;
    ck_assert_uint_eq(m->procs[0].nfuncs, 5);
    ck_assert_str_eq(opp_model_str(m, m->procs[0].funcs[F_ZGEMM].name), "cblas_zgemm");
    ck_assert_uint_eq(m->procs[0].funcs[F_ZGEMM].dtype, OPP_DT_C128);
    /* Names are interned across processes. */
    ck_assert_uint_eq(m->procs[1].funcs[0].name, m->procs[0].funcs[F_DGEMM_F77].name);
    ck_assert_uint_eq(m->procs[2].funcs[1].name, m->procs[0].funcs[F_DGEMM].name);
}
END_TEST

START_TEST(model_threads)
{
    const struct opp_model *m = model;
    /* Threads in order of appearance; the latest name wins. */
    ck_assert_uint_eq(m->nthreads, 4);
    const struct opp_thread *t = m->threads;
    ck_assert_uint_eq(t[0].tid, 100);
    ck_assert_str_eq(t[0].name, "main");
    ck_assert_uint_eq(t[0].nevents, 7);
    ck_assert_uint_eq(t[0].dropped, 0);
    ck_assert_uint_eq(t[1].tid, 101);
    ck_assert_str_eq(t[1].name, "worker");
    ck_assert_uint_eq(t[1].dropped, 5);
    ck_assert_uint_eq(t[2].tid, 200);
    ck_assert_uint_eq(opp_thread_process(m, &t[2])->pid, 200);
    ck_assert_uint_eq(t[3].tid, 100);
    ck_assert_uint_eq(t[3].proc, 2);
    ck_assert_str_eq(t[3].name, "other");
}
END_TEST

START_TEST(model_event_tree)
{
    const struct opp_model *m = model;
    const struct opp_thread *t = m->threads;
    /* Thread 0 in tree order: cblas_dgemm [1000,4000] holds dgemm_. */
    const struct opp_event *e = t[0].events;
    ck_assert_str_eq(opp_model_str(m, e[0].name), "cblas_dgemm");
    ck_assert_uint_eq(e[0].parent, OPP_NO_PARENT);
    ck_assert_uint_eq(e[0].self_ns, 200);
    ck_assert_str_eq(opp_model_str(m, e[1].name), "dgemm_");
    ck_assert_uint_eq(e[1].parent, 0);
    ck_assert_uint_eq(e[1].depth, 1);
    ck_assert_uint_eq(e[1].self_ns, 2800);
    ck_assert_uint_eq(e[1].nargs, 4);
    const uint64_t *a = opp_event_args(&t[0], &e[1]);
    ck_assert_uint_eq(a[0], 300);
    ck_assert_uint_eq(a[3], NN);
    ck_assert_uint_eq(e[6].begin_ns, 10000);
    ck_assert_uint_eq(opp_event_func(m, &t[0], &e[6])->kind, OPP_OP_GEMM);
}
END_TEST

START_TEST(model_open_call_ends_with_process)
{
    const struct opp_model *m = model;
    const struct opp_thread *t = m->threads;
    /* The call the process died in ends when the process did. */
    const struct opp_event *open = &t[3].events[1];
    ck_assert_uint_eq(open->flags, OPP_EV_OPEN);
    ck_assert_uint_eq(open->begin_ns, 21000);
    ck_assert_uint_eq(open->end_ns, 21500);
    ck_assert_uint_eq(open->self_ns, 500);
    ck_assert_uint_eq(open->nargs, 0);
}
END_TEST

/* ---- aggregation ---- */

struct want_row {
    const char *key;
    uint64_t count, self, total, flops;
    const char *shapes;
};

static void check_rows(const struct opp_agg *a, const struct want_row *w, size_t n)
{
    ck_assert_uint_eq(a->nrows, n);
    for (size_t i = 0; i < n; i++) {
        const struct opp_row *r = &a->rows[i];
        ck_assert_msg(!strcmp(r->key, w[i].key), "row %zu: %s, want %s", i, r->key, w[i].key);
        ck_assert_str_eq(r->lib, "blas");
        ck_assert_msg(r->count == w[i].count, "%s: count %llu", r->key,
                      (unsigned long long)r->count);
        ck_assert_msg(r->self_cpu_time_total_ns == w[i].self, "%s: self %llu", r->key,
                      (unsigned long long)r->self_cpu_time_total_ns);
        ck_assert_msg(r->cpu_time_total_ns == w[i].total, "%s: total %llu", r->key,
                      (unsigned long long)r->cpu_time_total_ns);
        ck_assert_msg(r->flops == w[i].flops, "%s: flops %llu", r->key,
                      (unsigned long long)r->flops);
        ck_assert_str_eq(r->shapes_str, w[i].shapes ? w[i].shapes : "");
    }
}

START_TEST(key_averages)
{
    struct opp_agg a;
    struct opp_agg_opts o = {0};
    aggregate(&o, &a);
    const struct want_row w[] = {
        {"dgemm_", 2, 4800, 4800, 12000000 + 524288, NULL},
        {"cblas_dgemm", 4, 2200, 5000, 24002000, NULL},
        {"cblas_zgemm", 1, 1900, 1900, 192, NULL}, /* complex: 8 * 2 * 3 * 4 */
        {"cblas_ddot", 3, 800, 800, 2000 + 1000 + 20, NULL},
        {"cblas_sgemv", 1, 200, 200, 4000, NULL}, /* 2 * 50 * 40 */
    };
    check_rows(&a, w, 5);
    ck_assert_uint_eq(a.nrows_all, 5);
    ck_assert_uint_eq(a.events, 11);
    ck_assert_uint_eq(a.self_cpu_time_total_ns, 9900);
    ck_assert_uint_eq(a.rows[0].shapes.n, 0);
    opp_agg_free(&a);
}
END_TEST

START_TEST(percentages_of_self_cpu_total)
{
    struct opp_agg a;
    struct opp_agg_opts o = {0};
    aggregate(&o, &a);
    /* torch: both percentages divide by the Self CPU time total. */
    char buf[OPP_FMT_MAX];
    double total = (double)a.self_cpu_time_total_ns;
    ck_assert_str_eq(opp_fmt_percent(buf, (double)a.rows[0].self_cpu_time_total_ns, total),
                     "48.48%");
    ck_assert_str_eq(opp_fmt_percent(buf, (double)a.rows[1].self_cpu_time_total_ns, total),
                     "22.22%");
    ck_assert_str_eq(opp_fmt_percent(buf, (double)a.rows[1].cpu_time_total_ns, total), "50.51%");
    ck_assert_str_eq(opp_fmt_time(buf, opp_row_avg_ns(&a.rows[1])), "1.250us");
    opp_agg_free(&a);
}
END_TEST

static void check_order(enum opp_sort_key key, const char *const *names, size_t n)
{
    struct opp_agg a;
    struct opp_agg_opts o = {.sort = key};
    aggregate(&o, &a);
    ck_assert_uint_eq(a.nrows, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(!strcmp(a.rows[i].key, names[i]), "sort %d row %zu: %s, want %s", key, i,
                      a.rows[i].key, names[i]);
    ck_assert_uint_eq(a.self_cpu_time_total_ns, 9900);
    opp_agg_free(&a);
}

START_TEST(sort_key_names)
{
    enum opp_sort_key k;
    ck_assert_int_eq(opp_sort_key_parse("cpu_time_total", &k), 0);
    ck_assert_int_eq(k, OPP_SORT_CPU_TIME_TOTAL);
    ck_assert_int_eq(opp_sort_key_parse("self_cpu_time_total", &k), 0);
    ck_assert_int_eq(k, OPP_SORT_SELF_CPU_TIME_TOTAL);
    ck_assert_int_eq(opp_sort_key_parse("count", &k), 0);
    ck_assert_int_eq(k, OPP_SORT_COUNT);
    ck_assert_int_eq(opp_sort_key_parse("cuda_time_total", &k), 0);
    ck_assert_int_eq(k, OPP_SORT_CUDA_TIME_TOTAL);
    ck_assert_int_eq(opp_sort_key_parse("device_time_total", &k), -EINVAL);
    ck_assert_int_eq(opp_sort_key_parse("", &k), -EINVAL);
}
END_TEST

START_TEST(sort_orders)
{
    const char *by_total[] = {"cblas_dgemm", "dgemm_", "cblas_zgemm", "cblas_ddot", "cblas_sgemv"};
    check_order(OPP_SORT_CPU_TIME_TOTAL, by_total, 5);
    /* Ties (three rows of 1 call) by name. */
    const char *by_count[] = {"cblas_dgemm", "cblas_ddot", "dgemm_", "cblas_sgemv", "cblas_zgemm"};
    check_order(OPP_SORT_COUNT, by_count, 5);
    const char *by_avg[] = {"dgemm_", "cblas_zgemm", "cblas_dgemm", "cblas_ddot", "cblas_sgemv"};
    check_order(OPP_SORT_CPU_TIME, by_avg, 5);
    const char *by_flops[] = {"cblas_dgemm", "dgemm_", "cblas_sgemv", "cblas_ddot", "cblas_zgemm"};
    check_order(OPP_SORT_FLOPS, by_flops, 5);
}
END_TEST

START_TEST(limit)
{
    struct opp_agg a;
    struct opp_agg_opts o = {.limit = 2};
    aggregate(&o, &a);
    const struct want_row w[] = {
        {"dgemm_", 2, 4800, 4800, 12524288, NULL},
        {"cblas_dgemm", 4, 2200, 5000, 24002000, NULL},
    };
    check_rows(&a, w, 2);
    ck_assert_uint_eq(a.nrows_all, 5);
    ck_assert_uint_eq(a.self_cpu_time_total_ns, 9900); /* over every row, like torch */
    opp_agg_free(&a);

    o.limit = 99;
    aggregate(&o, &a);
    ck_assert_uint_eq(a.nrows, 5);
    opp_agg_free(&a);
}
END_TEST

#define S300 "[[300, 200], [200, 100], [300, 100]]"

START_TEST(group_by_shape)
{
    struct opp_agg a;
    struct opp_agg_opts o = {.group_by_shape = 1};
    aggregate(&o, &a);
    const struct want_row w[] = {
        {"dgemm_", 1, 2800, 2800, 12000000, S300},
        {"dgemm_", 1, 2000, 2000, 524288, "[[64, 64], [64, 64], [64, 64]]"},
        {"cblas_zgemm", 1, 1900, 1900, 192, "[[2, 4], [4, 3], [2, 3]]"},
        {"cblas_dgemm", 2, 1200, 4000, 24000000, S300},
        {"cblas_dgemm", 1, 500, 500, 0, "[]"}, /* the open call: no arguments */
        {"cblas_dgemm", 1, 500, 500, 2000, "[[10, 10], [10, 10], [10, 10]]"},
        {"cblas_ddot", 1, 400, 400, 20, "[[10], [10]]"},
        {"cblas_ddot", 1, 300, 300, 1000, "[[500], [500]]"},
        {"cblas_sgemv", 1, 200, 200, 4000, "[[50, 40], [40], [50]]"},
        {"cblas_ddot", 1, 100, 100, 2000, "[[1000], [1000]]"},
    };
    check_rows(&a, w, 10);
    ck_assert_uint_eq(a.self_cpu_time_total_ns, 9900);
    const struct opp_shapes *s = &a.rows[0].shapes;
    ck_assert_int_eq(s->n, 3);
    ck_assert_int_eq(s->rank[1], 2);
    ck_assert_int_eq(s->dim[1][0], 200);
    ck_assert_int_eq(s->dim[1][1], 100);
    opp_agg_free(&a);
}
END_TEST

START_TEST(filter_pid)
{
    struct opp_agg a;
    /* pid 100: both instances (processes 0 and 2), not the child. */
    struct opp_agg_opts o = {.filter_pid = 1, .pid = 100};
    aggregate(&o, &a);
    const struct want_row w100[] = {
        {"dgemm_", 1, 2800, 2800, 12000000, NULL},
        {"cblas_dgemm", 4, 2200, 5000, 24002000, NULL},
        {"cblas_zgemm", 1, 1900, 1900, 192, NULL},
        {"cblas_ddot", 3, 800, 800, 3020, NULL},
        {"cblas_sgemv", 1, 200, 200, 4000, NULL},
    };
    check_rows(&a, w100, 5);
    ck_assert_uint_eq(a.self_cpu_time_total_ns, 7900);
    ck_assert_uint_eq(a.events, 10);
    opp_agg_free(&a);

    o = (struct opp_agg_opts){.filter_pid = 1, .pid = 200};
    aggregate(&o, &a);
    const struct want_row w200[] = {{"dgemm_", 1, 2000, 2000, 524288, NULL}};
    check_rows(&a, w200, 1);
    ck_assert_uint_eq(a.self_cpu_time_total_ns, 2000);
    opp_agg_free(&a);
}
END_TEST

START_TEST(filter_tid)
{
    struct opp_agg a;
    /* tid 100: thread 100 of both pid-100 instances. */
    struct opp_agg_opts o = {.filter_tid = 1, .tid = 100};
    aggregate(&o, &a);
    const struct want_row wt100[] = {
        {"dgemm_", 1, 2800, 2800, 12000000, NULL},
        {"cblas_dgemm", 4, 2200, 5000, 24002000, NULL},
        {"cblas_zgemm", 1, 1900, 1900, 192, NULL},
        {"cblas_ddot", 2, 500, 500, 2020, NULL},
        {"cblas_sgemv", 1, 200, 200, 4000, NULL},
    };
    check_rows(&a, wt100, 5);
    ck_assert_uint_eq(a.self_cpu_time_total_ns, 7600);
    opp_agg_free(&a);
}
END_TEST

START_TEST(filter_pid_and_tid)
{
    struct opp_agg a;
    struct opp_agg_opts o = {.filter_pid = 1, .pid = 100, .filter_tid = 1, .tid = 101};
    aggregate(&o, &a);
    const struct want_row w101[] = {{"cblas_ddot", 1, 300, 300, 1000, NULL}};
    check_rows(&a, w101, 1);
    opp_agg_free(&a);
}
END_TEST

START_TEST(filter_unknown_pid)
{
    struct opp_agg a;
    struct opp_agg_opts o = {.filter_pid = 1, .pid = 999};
    aggregate(&o, &a);
    ck_assert_uint_eq(a.nrows, 0);
    ck_assert_uint_eq(a.events, 0);
    ck_assert_uint_eq(a.self_cpu_time_total_ns, 0);
    opp_agg_free(&a);
}
END_TEST

Suite *suite_report(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("report");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, model_counts);
    tcase_add_test(tc, model_processes);
    tcase_add_test(tc, model_process_status);
    tcase_add_test(tc, model_parent_connected_later);
    tcase_add_test(tc, model_function_tables);
    tcase_add_test(tc, model_threads);
    tcase_add_test(tc, model_event_tree);
    tcase_add_test(tc, model_open_call_ends_with_process);
    tcase_add_test(tc, key_averages);
    tcase_add_test(tc, percentages_of_self_cpu_total);
    tcase_add_test(tc, sort_key_names);
    tcase_add_test(tc, sort_orders);
    tcase_add_test(tc, limit);
    tcase_add_test(tc, group_by_shape);
    tcase_add_test(tc, filter_pid);
    tcase_add_test(tc, filter_tid);
    tcase_add_test(tc, filter_pid_and_tid);
    tcase_add_test(tc, filter_unknown_pid);
    suite_add_tcase(s, tc);
    return s;
}
