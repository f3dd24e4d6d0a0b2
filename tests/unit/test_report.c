/* Over 600 lines: one suite, the model, key_averages and the table, CSV and JSON of one trace. */
/* The report: a trace built with the writer, loaded (analysis/load.c),
 * aggregated like key_averages (aggregate.c) and shown as table, CSV and
 * JSON (views/, tool/cmd_report.c), with exact numbers throughout. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/aggregate.h"
#include "tool/cmds.h"
#include "views/columns.h"
#include "views/fmt.h"
#include "analysis/model.h"
#include "views/output.h"
#include "testutil.h"
#include "tracebuild.h"

/* ---- the trace ----
 * process 0: pid 100, threads 100 "main" and 101 "worker" (5 dropped);
 * process 1: pid 200, a child, thread 200;
 * process 2: pid 100 again (it exec'd), thread 100, which died inside a
 * cblas_dgemm. Times are CLOCK_MONOTONIC ns. */

#define NN ('N' | 'N' << 8)

enum { F_DGEMM, F_DGEMM_F77, F_SGEMV, F_DDOT, F_ZGEMM };

static void write_trace(const char *path)
{
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 0, .pid = 100, .ppid = 1, .parent = UINT32_MAX, .start = 0, .real = 1,
               .exe = "/usr/bin/prog", .argv = {"prog", "--n", "3"});
    tb_funcs(&b, [F_DGEMM] = {OPP_OP_GEMM, OPP_DT_F64, "blas", "cblas_dgemm"},
             [F_DGEMM_F77] = {OPP_OP_GEMM, OPP_DT_F64, "blas", "dgemm_"},
             [F_SGEMV] = {OPP_OP_GEMV, OPP_DT_F32, "blas", "cblas_sgemv"},
             [F_DDOT] = {OPP_OP_DOT, OPP_DT_F64, "blas", "cblas_ddot"},
             [F_ZGEMM] = {OPP_OP_GEMM, OPP_DT_C128, "blas", "cblas_zgemm"});
    /* labels as a torchrun worker sends them: rank from RANK, a bad number skipped */
    tb_info(&b, "host", "node7", "RANK", "x1", "SLURM_PROCID", "5", "WORLD_SIZE", "8");
    tb_thread(&b, 100, "prog");
    tb_thread(&b, 101, "worker");
    tb_thread(&b, 100, "main");
    /* In the order the calls ended. */
    tb_events(&b, TB_CALL(F_DGEMM_F77, 1100, 3900, 1, 300, 100, 200, NN),
              TB_CALL(F_DGEMM, 1000, 4000, 0, 300, 100, 200, NN),
              TB_CALL(F_DGEMM, 5000, 6000, 0, 300, 100, 200, NN),
              TB_CALL(F_DGEMM, 7000, 7500, 0, 10, 10, 10, NN),
              TB_CALL(F_SGEMV, 8000, 8200, 0, 50, 40, 'N'),
              TB_CALL(F_DDOT, 9000, 9100, 0, 1000),
              TB_CALL(F_ZGEMM, 10000, 11900, 0, 2, 3, 4, NN));
    tb_thread(&b, 101, NULL);
    tb_events(&b, TB_CALL(F_DDOT, 2000, 2300, 0, 500));
    tb_dropped(&b, 3);

    tb_process(&b, .proc = 1, .pid = 200, .ppid = 100, .parent = 0, .start = 100, .real = 1,
               .exe = "/usr/bin/child", .argv = {"child"});
    tb_funcs(&b, {OPP_OP_GEMM, OPP_DT_F64, "blas", "dgemm_"});
    tb_thread(&b, 200, "child");
    tb_events(&b, TB_CALL(0, 1000, 3000, 0, 64, 64, 64, NN));
    tb_at(&b, 0, 101);
    tb_dropped(&b, 2);

    tb_process(&b, .proc = 2, .pid = 100, .ppid = 1, .parent = 0, .start = 200, .real = 1,
               .exe = "/usr/bin/other", .argv = {"other"});
    tb_funcs(&b, {OPP_OP_DOT, OPP_DT_F64, "blas", "cblas_ddot"},
             {OPP_OP_GEMM, OPP_DT_F64, "blas", "cblas_dgemm"});
    tb_thread(&b, 100, "other");
    tb_events(&b, TB_CALL(0, 20000, 20400, 0, 10),
              TB_OPEN(1, 21000, 21000, 0)); /* died inside it */
    tb_process_end(&b, 2, OPP_END_LOST, 21500);
    tb_process_end(&b, 0, OPP_END_EXITED, 30000);
    tb_process_end(&b, 1, OPP_END_RUNNING, 31000);
    tb_end(&b);
}

static char *dir, *trace;
static struct opp_model *model;

static void setup(void)
{
    dir = tu_tmpdir();
    ck_assert_ptr_nonnull(dir);
    trace = tu_path(dir, "t.opprof");
    write_trace(trace);
    char err[512];
    model = opp_model_load(trace, err, sizeof err);
    ck_assert_msg(model != NULL, "%s", err);
}

static void teardown(void)
{
    opp_model_free(model);
    model = NULL;
    tu_rmdir(dir);
    free(trace);
    free(dir);
}

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
    struct opp_model *m = opp_model_load(path, err, sizeof err);
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

static void aggregate(const struct opp_agg_opts *o, struct opp_agg *a)
{
    ck_assert_int_eq(opp_aggregate(model, o, a), 0);
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

/* ---- outputs ---- */

#define SEP15 "---------------  "
#define SEP12 "------------  "
#define SEP7 SEP15 SEP12 SEP12 SEP12 SEP12 SEP12 SEP12

START_TEST(table)
{
    struct opp_agg a;
    struct opp_agg_opts o = {0};
    struct opp_out_opts oo = {0};
    aggregate(&o, &a);
    char *out;
    CAPTURE(out, opp_out_table(f, &a, &oo));
    /* torch has no ns unit: sub-microsecond times are fractions of us;
     * the rows add up the trace's processes, said above them. */
    const char *want =
        "3 processes added up (the whole job's cost): --pid PID for one, --by-process for each\n"
        SEP7 "\n"
        "           Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  \n"
        SEP7 "\n"
        "         dgemm_        48.48%       4.800us        48.48%       4.800us       2.400us             2  \n"
        "    cblas_dgemm        22.22%       2.200us        50.51%       5.000us       1.250us             4  \n"
        "    cblas_zgemm        19.19%       1.900us        19.19%       1.900us       1.900us             1  \n"
        "     cblas_ddot         8.08%       0.800us         8.08%       0.800us       0.267us             3  \n"
        "    cblas_sgemv         2.02%       0.200us         2.02%       0.200us       0.200us             1  \n"
        SEP7 "\n"
        "Self CPU time total: 9.900us\n";
    ck_assert_str_eq(out, want);
    free(out);
    opp_agg_free(&a);
}
END_TEST

START_TEST(table_shapes_flops)
{
    struct opp_agg a;
    struct opp_agg_opts o = {.filter_pid = 1, .pid = 200, .group_by_shape = 1};
    struct opp_out_opts oo = {.group_by_shape = 1, .flops = 1};
    aggregate(&o, &a);
    char *out;
    CAPTURE(out, opp_out_table(f, &a, &oo));
    /* Name: 6 + 4 wide; Input Shapes: 30 + 4; 524288 FLOPs shown in K. */
#define SEP_SF "----------  " SEP12 SEP12 SEP12 SEP12 SEP12 SEP12 \
               "----------------------------------  " SEP12 SEP12 "\n"
    const char *want =
        SEP_SF
        "      Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls"
        "                        Input Shapes  Total KFLOPs       GFLOP/s  \n"
        SEP_SF
        "    dgemm_       100.00%       2.000us       100.00%       2.000us       2.000us             1"
        "      [[64, 64], [64, 64], [64, 64]]       524.288       262.144  \n"
        SEP_SF
        "Self CPU time total: 2.000us\n";
    ck_assert_str_eq(out, want);
    free(out);
    opp_agg_free(&a);
}
END_TEST

START_TEST(table_flops_none_leaves_columns_out)
{
    char *out;
    /* --flops where no row has any: torch leaves the columns out. */
    struct opp_row r = {.key = "cblas_dscal", .lib = "blas", .count = 1,
                        .self_cpu_time_total_ns = 7600, .cpu_time_total_ns = 7600};
    struct opp_agg a = {.rows = &r, .nrows = 1, .nrows_all = 1, .self_cpu_time_total_ns = 7600,
                        .self_cpu_base_ns = 7600};
    struct opp_out_opts oo = {.flops = 1};
    CAPTURE(out, opp_out_table(f, &a, &oo));
    ck_assert_ptr_null(strstr(out, "FLOP"));
    ck_assert_ptr_nonnull(strstr(out, "# of Calls  \n"));
    ck_assert_ptr_nonnull(strstr(out, "\nSelf CPU time total: 7.600us\n"));
    free(out);
}
END_TEST

START_TEST(table_long_name)
{
    /* 59 characters: cut to 52 and "...", in a column of 55. */
    struct opp_row r = {.key = "a_very_long_entry_point_name_that_goes_on_and_on_and_on_xyz",
                        .lib = "blas", .count = 1, .self_cpu_time_total_ns = 1500000000,
                        .cpu_time_total_ns = 1500000000};
    ck_assert_uint_eq(strlen(r.key), 59);
    struct opp_agg a = {.rows = &r, .nrows = 1, .nrows_all = 1,
                        .self_cpu_time_total_ns = 1500000000, .self_cpu_base_ns = 1500000000};
    struct opp_out_opts oo = {0};
    char *out;
    CAPTURE(out, opp_out_table(f, &a, &oo));
    ck_assert_ptr_nonnull(strstr(out, "\na_very_long_entry_point_name_that_goes_on_and_on_and..."
                                      "       100.00%        1.500s       100.00%        1.500s"
                                      "        1.500s             1  \n"));
    ck_assert_ptr_nonnull(strstr(out, "\nSelf CPU time total: 1.500s\n"));
    free(out);
}
END_TEST

START_TEST(csv_group_by_shape)
{
    struct opp_agg a;
    struct opp_agg_opts o = {.filter_pid = 1, .pid = 200, .group_by_shape = 1};
    struct opp_out_opts oo = {.group_by_shape = 1};
    aggregate(&o, &a);
    char *out;
    CAPTURE(out, opp_out_csv(f, &a, &oo));
    ck_assert_str_eq(out, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,"
                          "input_shapes,flops\n"
                          "dgemm_,blas,1,2.000,2.000,2.000,\"[[64, 64], [64, 64], [64, 64]]\","
                          "524288\n");
    free(out);
    opp_agg_free(&a);
}
END_TEST

START_TEST(csv_sorted_limited)
{
    struct opp_agg a;
    char *out;
    struct opp_agg_opts o = {.sort = OPP_SORT_COUNT, .limit = 2};
    struct opp_out_opts oo = {0};
    aggregate(&o, &a);
    CAPTURE(out, opp_out_csv(f, &a, &oo));
    ck_assert_str_eq(out, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,"
                          "flops\n"
                          "cblas_dgemm,blas,4,2.200,5.000,1.250,24002000\n"
                          "cblas_ddot,blas,3,0.800,0.800,0.267,3020\n");
    free(out);
    opp_agg_free(&a);
}
END_TEST

START_TEST(json_group_by_shape)
{
    struct opp_agg a;
    struct opp_agg_opts o = {.group_by_shape = 1, .limit = 4};
    struct opp_out_opts oo = {.group_by_shape = 1};
    aggregate(&o, &a);
    char *out;
    CAPTURE(out, opp_out_json(f, "dir/t \"1\".opprof", model, &a, &oo));
    const char *want[] = {
        "{\n  \"trace\": \"dir/t \\\"1\\\".opprof\",\n",
        /* one process still ran when the trace was finished: partial */
        "\n  \"complete\": false,\n  \"processes_cut\": 1,\n  \"warning\": null,\n"
        "  \"self_cpu_time_total\": 9.900,\n",
        "\n  \"processes\": [\n    {\"pid\": 100, \"ppid\": 1, \"cmdline\": [\"prog\", \"--n\", "
        "\"3\"], \"exe\": \"/usr/bin/prog\", \"end\": \"exited\", \"host\": \"node7\", "
        "\"rank\": 5, \"local_rank\": null, \"world_size\": 8},\n",
        "\n    {\"pid\": 200, \"ppid\": 100, \"cmdline\": [\"child\"], "
        "\"exe\": \"/usr/bin/child\", "
        "\"end\": \"running\", \"host\": null, \"rank\": null, \"local_rank\": null, "
        "\"world_size\": null},\n",
        "\n    {\"pid\": 100, \"ppid\": 1, \"cmdline\": [\"other\"], \"exe\": \"/usr/bin/other\", "
        "\"end\": \"cut\", \"host\": null, \"rank\": null, \"local_rank\": null, "
        "\"world_size\": null}\n  ],\n",
        "\n  \"threads\": [\n    {\"pid\": 100, \"tid\": 100, \"name\": \"main\", \"events\": 7, "
        "\"dropped\": 0},\n",
        "\n    {\"pid\": 100, \"tid\": 101, \"name\": \"worker\", \"events\": 1, "
        "\"dropped\": 5},\n",
        "\n    {\"pid\": 100, \"tid\": 100, \"name\": \"other\", \"events\": 2, \"dropped\": 0}\n"
        "  ],\n",
        "\n  \"events\": 11,\n  \"dropped\": 5,\n",
        "\n  \"rows\": [\n    {\"key\": \"dgemm_\", \"lib\": \"blas\", \"count\": 1, "
        "\"self_cpu_time_total\": 2.800, \"cpu_time_total\": 2.800, \"cpu_time\": 2.800, "
        "\"input_shapes\": [[300, 200], [200, 100], [300, 100]], \"flops\": 12000000},\n",
        "\n    {\"key\": \"cblas_dgemm\", \"lib\": \"blas\", \"count\": 2, "
        "\"self_cpu_time_total\": 1.200, \"cpu_time_total\": 4.000, \"cpu_time\": 2.000, "
        "\"input_shapes\": [[300, 200], [200, 100], [300, 100]], \"flops\": 24000000}\n  ],\n  "
        "\"errors\": 0,\n  \"statuses\": []\n}\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(out, want[i]) != NULL, "missing:\n%s\nin:\n%s", want[i], out);
    ck_assert_ptr_null(strstr(out, "\"key\": \"cblas_ddot\"")); /* past the limit */
    ck_assert_ptr_nonnull(strstr(out, "\"key\": \"dgemm_\", \"lib\": \"blas\", \"count\": 1, "
                                      "\"self_cpu_time_total\": 2.000"));
    free(out);
    opp_agg_free(&a);
}
END_TEST

START_TEST(json_empty_selection)
{
    struct opp_agg a;
    char *out;
    /* Without grouping there are no input_shapes. */
    struct opp_agg_opts o = {.filter_pid = 1, .pid = 999};
    struct opp_out_opts oo = {0};
    aggregate(&o, &a);
    CAPTURE(out, opp_out_json(f, "t", model, &a, &oo));
    ck_assert_ptr_nonnull(strstr(out, "\n  \"rows\": [],\n  \"errors\": 0,\n  \"statuses\": []\n}\n"));
    ck_assert_ptr_nonnull(strstr(out, "\n  \"self_cpu_time_total\": 0.000,\n"));
    free(out);
    opp_agg_free(&a);
}
END_TEST

START_TEST(format_times_and_percents)
{
    char buf[OPP_FMT_MAX];
    ck_assert_str_eq(opp_fmt_time(buf, 0), "0.000us");
    ck_assert_str_eq(opp_fmt_time(buf, 999), "0.999us");
    ck_assert_str_eq(opp_fmt_time(buf, 999999), "999.999us");
    ck_assert_str_eq(opp_fmt_time(buf, 1000000), "1.000ms");
    ck_assert_str_eq(opp_fmt_time(buf, 999999000), "999.999ms");
    ck_assert_str_eq(opp_fmt_time(buf, 1000000000), "1.000s");
    ck_assert_str_eq(opp_fmt_time(buf, 1234567890123.0), "1234.568s");
    ck_assert_str_eq(opp_fmt_percent(buf, 1, 3), "33.33%");
    ck_assert_str_eq(opp_fmt_percent(buf, 0, 0), "NaN");
}
END_TEST

START_TEST(json_and_csv_escaping)
{
    char *out;
    size_t len;
    FILE *f = open_memstream(&out, &len);
    /* Quote, backslash, controls, é, then broken UTF-8: a lone 0xff, an
     * overlong NUL (c0 80), a surrogate (ed a0 80), a cut sequence (e2 82). */
    opp_json_str(f, "a\"b\\c\n\x01\x7f\xc3\xa9|\xff|\xc0\x80|\xed\xa0\x80|\xe2\x82");
    fputc(' ', f);
    opp_json_str(f, "\xf0\x9f\x98\x80\xf4\x90\x80\x80");
    fputc(' ', f);
    opp_csv_field(f, "plain", 0);
    fputc(' ', f);
    opp_csv_field(f, "a,\"b\"", 0);
    fputc(' ', f);
    opp_csv_field(f, "x", 1);
    fclose(f);
    ck_assert_str_eq(out, "\"a\\\"b\\\\c\\u000a\\u0001\x7f\xc3\xa9|\\ufffd|\\ufffd\\ufffd|"
                          "\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\" "
                          "\"\xf0\x9f\x98\x80\\ufffd\\ufffd\\ufffd\\ufffd\" "
                          "plain \"a,\"\"b\"\"\" \"x\"");
    free(out);
}
END_TEST

/* CSV: a field a spreadsheet would take for a formula quoted with a "'"
 * first; bytes that are not UTF-8 as U+FFFD (then quoted). */
START_TEST(csv_formulas_and_bad_utf8)
{
    char *out;
    size_t len;
    FILE *f = open_memstream(&out, &len);
    const char *in[] = {
        "=cmd|' /C calc'!A0", "+1", "-x", "@SUM(A1)", "\tx", "\rx", "a=b", "bad\xff", "\"=\"", ""};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        opp_csv_field(f, in[i], 0);
        fputc('|', f);
    }
    fclose(f);
    ck_assert_str_eq(out, "\"'=cmd|' /C calc'!A0\"|\"'+1\"|\"'-x\"|\"'@SUM(A1)\"|\"'\tx\"|"
                          "\"'\rx\"|a=b|\"bad\xef\xbf\xbd\"|\"\"\"=\"\"\"||");
    free(out);
}
END_TEST

/* XML: markup escaped, control characters but tab left out, U+FFFD for
 * what XML does not allow; the _n form never ends inside a character. */
START_TEST(xml_text_is_xml)
{
    char *out;
    size_t len;
    FILE *f = open_memstream(&out, &len);
    opp_xml_text(f, "<a&b>\t\x1b\n\xff\xef\xbf\xbe\xef\xbf\xbf\xef\xbf\xbd\xc3\xa9\x7f");
    fputc('|', f);
    opp_xml_textn(f, "ab\xc3\xa9", 3); /* cut inside the é */
    fclose(f);
    ck_assert_str_eq(out, "&lt;a&amp;b&gt;\t\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                          "\xc3\xa9\x7f|ab\xef\xbf\xbd");
    ck_assert_uint_eq(opp_utf8_chars("a\xc3\xa9\xff"
                                     "b"),
                      4);
    ck_assert_uint_eq(opp_utf8_prefix("a\xc3\xa9\xff"
                                      "b",
                                      2),
                      3);
    free(out);
}
END_TEST

/* Terminal text: what a terminal acts on escaped, one column a character;
 * cut by columns, never inside an escape. */
START_TEST(text_escapes_controls)
{
    char buf[OPP_TEXT_BUF(64)];
    const char *s = "a\x1b[2J\r\n\t\x7f\xc2\x9b\xe2\x80\xae\xe2\x80\xa8\xff\xc3\xa9z";
    const char *want = "a\\x1b[2J\\r\\n\\t\\x7f\\u009b\\u202e\\u2028\\xff\xc3\xa9z";
    const char *rest;
    ck_assert_uint_eq(opp_text_put(buf, s, 64, &rest), 42);
    ck_assert_str_eq(buf, want);
    ck_assert_str_eq(rest, "");
    ck_assert_uint_eq(opp_text_width(s, SIZE_MAX), 42);
    ck_assert_uint_eq(opp_text_width(s, 3), 5); /* counts no further than past 3 */
    /* 3 columns: "a" and no part of "\x1b" */
    ck_assert_uint_eq(opp_text_put(buf, s, 3, &rest), 1);
    ck_assert_str_eq(buf, "a");
    ck_assert_str_eq(rest, s + 1);
    ck_assert_str_eq(opp_text_fit(buf, "abcdef", 6), "abcdef");
    ck_assert_str_eq(opp_text_fit(buf, "abc\ndef", 6), "abc...");
    ck_assert_str_eq(opp_text_fit(buf,
                                  "\x1b"
                                  "bcdefgh",
                                  7),
                     "\\x1b...");
    /* torch's cut: 52 characters or more shown as 52 and "..." */
    char name[OPP_CUT_NAME_BUF], long_name[60];
    memset(long_name, 'x', 51);
    long_name[51] = 0;
    ck_assert_str_eq(opp_cut_name(long_name, name), long_name);
    strcpy(long_name + 50, "\n");
    ck_assert_uint_eq(strlen(opp_cut_name(long_name, name)), 55);
    ck_assert_str_eq(name + 50, "\\n...");
    char *out;
    size_t len;
    FILE *f = open_memstream(&out, &len);
    opp_text_fput(f, "x\x1b]0;t\x07");
    opp_col_cell(f, "\xc3\xa9", 3, 0);
    opp_col_cell(f, "\xc3\xa9", 3, 1);
    fputc('|', f);
    fclose(f);
    ck_assert_str_eq(out, "x\\x1b]0;t\\x07  \xc3\xa9\xc3\xa9  |");
    free(out);
}
END_TEST

/* A name as one file name: nothing but [A-Za-z0-9._-], never a leading
 * '.', never empty, cut to fit. */
START_TEST(path_component_is_one)
{
    char buf[16];
    opp_path_component(buf, sizeof buf, "../../x/evil");
    ck_assert_str_eq(buf, "_._.._x_evil");
    opp_path_component(buf, sizeof buf, "node-7.local");
    ck_assert_str_eq(buf, "node-7.local");
    opp_path_component(buf, sizeof buf, "");
    ck_assert_str_eq(buf, "_");
    opp_path_component(buf, sizeof buf, "..");
    ck_assert_str_eq(buf, "_.");
    opp_path_component(buf, sizeof buf, "a\xff\x1b b");
    ck_assert_str_eq(buf, "a___b");
    opp_path_component(buf, sizeof buf, "0123456789abcdefghij");
    ck_assert_str_eq(buf, "0123456789abcde");
}
END_TEST

/* ---- the command ---- */

/* Run cmd_report with stdout and stderr captured. */
static int run_report(char **argv, char **out, char **err)
{
    int rc = tu_call(cmd_report, argv, dir, out, err);
    ck_assert_int_ne(rc, -1000);
    return rc;
}

/* The trace cut inside its END chunk; its size before. */
static long cut_trace(void)
{
    FILE *f = fopen(trace, "r+");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    fclose(f);
    ck_assert_int_eq(truncate(trace, size - 10), 0);
    return size;
}

/* A trace cut inside its END chunk: the report of what was read, and the
 * warnings. */
START_TEST(command_cut_trace_warns)
{
    char *out, *err;
    long size = cut_trace();
    char *a1[] = {"report", trace, "--sort", "count", "--limit", "1", "--format", "csv", NULL};
    ck_assert_int_eq(run_report(a1, &out, &err), 0);
    ck_assert_str_eq(out, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,"
                          "flops\ncblas_dgemm,blas,4,2.200,5.000,1.250,24002000\n");
    char want[512];
    snprintf(want, sizeof want,
             "opprof report: warning: trace cut at byte %ld: last chunk has 14 of its 24 bytes\n"
             "opprof report: warning: 5 records were dropped (buffers full): a larger "
             "OPPROF_BUFFER (slots per thread) makes room; OPPROF_DROP=block waits instead of "
             "dropping\n"
             "opprof report: warning: 1 calls were still running when their process died: "
             "shown with the process's end time\n"
             "opprof report: warning: 1 process was still running when the trace was finished: "
             "what it did after that is not in it\n",
             size - 40);
    ck_assert_str_eq(err, want);
    free(out);
    free(err);
}
END_TEST

START_TEST(command_table_only_on_stdout)
{
    char *out, *err;
    char *a2[] = {"report", "--pid", "200", trace, "--group-by-shape", NULL};
    ck_assert_int_eq(run_report(a2, &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "      [[64, 64], [64, 64], [64, 64]]  \n"));
    ck_assert_ptr_nonnull(strstr(out, "\nSelf CPU time total: 2.000us\n"));
    ck_assert(!strncmp(out, "----------  ", 12)); /* nothing before the table */
    free(out);
    free(err);
}
END_TEST

START_TEST(command_json_of_cut_trace)
{
    char *out, *err;
    cut_trace();
    char *a3[] = {"report", trace, "--format", "json", "--tid", "101", NULL};
    ck_assert_int_eq(run_report(a3, &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"complete\": false,\n  \"processes_cut\": 1,\n  \"warning\": \"trace cut at byte"));
    ck_assert_ptr_nonnull(strstr(out, "\n  \"self_cpu_time_total\": 0.300,\n"));
    free(out);
    free(err);
}
END_TEST

START_TEST(command_usage_errors)
{
    char *out, *err;
    /* Usage errors: exit 2, one line. */
    struct {
        char *argv[6];
        const char *err;
    } bad[] = {
        {{"report", trace, "--sort", "device_time_total", NULL},
         "opprof report: unknown sort key 'device_time_total' (one of: self_cpu_time_total, "
         "cpu_time_total, cpu_time, count, flops, self_cuda_time_total, cuda_time_total, "
         "cuda_time, self_cuda_memory_usage, cuda_memory_usage, cpu_memory_usage, "
         "self_cpu_memory_usage)\n"},
        {{"report", trace, "--limit", "ten", NULL},
         "opprof report: --limit wants a positive number of rows, not 'ten'\n"},
        {{"report", trace, "--limit", "0", NULL},
         "opprof report: --limit wants a positive number of rows, not '0'\n"},
        {{"report", trace, "--pid", "12x", NULL},
         "opprof report: --pid wants a number, not '12x'\n"},
        {{"report", trace, "--format", "xml", NULL},
         "opprof report: unknown format 'xml' (one of: table, csv, json)\n"},
        {{"report", trace, "--frobnicate", NULL},
         "opprof report: unknown option '--frobnicate' (see 'opprof report --help')\n"},
        {{"report", trace, "--sort", NULL}, "opprof report: option '--sort' wants a value\n"},
        {{"report", NULL}, "opprof report: which trace? (usage: opprof report TRACE [options])\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(run_report(bad[i].argv, &out, &err), 2);
        ck_assert_str_eq(out, "");
        ck_assert_str_eq(err, bad[i].err);
        free(out);
        free(err);
    }
}
END_TEST

START_TEST(command_not_a_trace)
{
    char *out, *err;
    char want[512];
    /* Not a trace: exit 1. */
    char *notes = tu_path(dir, "notes");
    FILE *f = fopen(notes, "w");
    fputs("not a trace\n", f);
    fclose(f);
    char *a4[] = {"report", notes, NULL};
    ck_assert_int_eq(run_report(a4, &out, &err), 1);
    snprintf(want, sizeof want, "opprof report: %s is not an opprof trace (bad magic)\n", notes);
    ck_assert_str_eq(err, want);
    ck_assert_str_eq(out, "");
    free(out);
    free(err);
    free(notes);
}
END_TEST

START_TEST(command_help)
{
    char *out, *err;
    char *a5[] = {"report", "--help", NULL};
    ck_assert_int_eq(run_report(a5, &out, &err), 0);
    ck_assert(!strncmp(out, "usage: opprof report TRACE", 26));
    ck_assert_str_eq(err, "");
    free(out);
    free(err);
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
    tcase_add_test(tc, table);
    tcase_add_test(tc, table_shapes_flops);
    tcase_add_test(tc, table_flops_none_leaves_columns_out);
    tcase_add_test(tc, table_long_name);
    tcase_add_test(tc, csv_group_by_shape);
    tcase_add_test(tc, csv_sorted_limited);
    tcase_add_test(tc, json_group_by_shape);
    tcase_add_test(tc, json_empty_selection);
    tcase_add_test(tc, format_times_and_percents);
    tcase_add_test(tc, json_and_csv_escaping);
    tcase_add_test(tc, csv_formulas_and_bad_utf8);
    tcase_add_test(tc, xml_text_is_xml);
    tcase_add_test(tc, text_escapes_controls);
    tcase_add_test(tc, path_component_is_one);
    tcase_add_test(tc, command_cut_trace_warns);
    tcase_add_test(tc, command_table_only_on_stdout);
    tcase_add_test(tc, command_json_of_cut_trace);
    tcase_add_test(tc, command_usage_errors);
    tcase_add_test(tc, command_not_a_trace);
    tcase_add_test(tc, command_help);
    suite_add_tcase(s, tc);
    return s;
}
