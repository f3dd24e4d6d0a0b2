/* The report suites' trace (test_report.c, test_report_outputs.c,
 * test_report_command.c): written with the builder into a temporary
 * directory and loaded before each test (setup), gone after (teardown). */
#ifndef OPP_TEST_REPORT_TRACE_H
#define OPP_TEST_REPORT_TRACE_H

#include <check.h>
#include <stdlib.h>

#include "analysis/aggregate.h"
#include "analysis/model.h"
#include "testutil.h"
#include "tracebuild.h"
#include "oracle/loaded.h"

/* The trace: process 0: pid 100, threads 100 "main" and 101 "worker" (5 dropped);
 * process 1: pid 200, a child, thread 200;
 * process 2: pid 100 again (it exec'd), thread 100, which died inside a
 * cblas_dgemm. Times are CLOCK_MONOTONIC ns. */

#define NN ('N' | 'N' << 8)

enum { F_DGEMM, F_DGEMM_F77, F_SGEMV, F_DDOT, F_ZGEMM };

static inline void write_trace(const char *path)
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
              TB_CALL(F_SGEMV, 8000, 8200, 0, 50, 40, 'N'), TB_CALL(F_DDOT, 9000, 9100, 0, 1000),
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

static inline void setup(void)
{
    dir = tu_tmpdir();
    ck_assert_ptr_nonnull(dir);
    trace = tu_path(dir, "t.opprof");
    write_trace(trace);
    char err[512];
    model = tu_model_load(trace, err, sizeof err);
    ck_assert_msg(model != NULL, "%s", err);
}

static inline void teardown(void)
{
    opp_model_free(model);
    model = NULL;
    tu_rmdir(dir);
    free(trace);
    free(dir);
}

static inline void aggregate(const struct opp_agg_opts *o, struct opp_agg *a)
{
    ck_assert_int_eq(tu_aggregate(model, o, a), 0);
}

#endif
