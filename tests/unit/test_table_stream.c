/* The table and --tree's call paths added up in one pass
 * (report/analysis/table_stream.c): each trace's rows and paths as
 * expected, and as opp_aggregate and opp_calltree_build make them of the
 * loaded model: torch's fold of an op's only same-named child,
 * calls a process died inside, a thread whose calls came out of the order
 * they returned, GPU records written late owned by their calls; grouped
 * by stack, the operators around each call (which come after it), torch's
 * fold and Python frames; the code-frame tree. Traces built by hand. */
#include <check.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/codestack_tree.h"
#include "analysis/pass.h"
#include "analysis/step_times.h"
#include "analysis/table_stream.h"
#include "gpu.h"
#include "testutil.h"
#include "tracebuild.h"
#include "oracle/loaded.h"

TU_TRACE_FIXTURE

enum { F_TORCH, F_LAUNCH, F_WORK, NF };
enum { S_MM = OPP_STR_PRELOAD, S_STEP, S_GEMM };
#define TORCH(name, ext) (name), OPP_TORCH_SCOPE_FUNCTION, 0, (ext)
#define LABEL(name) (name), OPP_TORCH_SCOPE_USER, 0, 0
#define API(corr) 0, (corr), 211

static const struct opp_func_desc FUNCS[NF] = {
    [F_TORCH] = {OPP_OP_TORCH | OPP_OPK_EXTID, OPP_DT_NONE, "torch", "op"},
    [F_LAUNCH] = {OPP_OP_CUDA_API, OPP_DT_NONE, "cudart", "cudaLaunchKernel"},
    [F_WORK] = {OPP_OP_GEMM, OPP_DT_F64, "blas", "cblas_dgemm"},
};

/* The trace's process (pid 10) and its thread 10, started. */
static void start(struct tb *b)
{
    tb_open(b, trace);
    tb_process(b, .proc = 0, .pid = 10, .ppid = 1, .parent = UINT32_MAX, .real = 1,
               .exe = "/usr/bin/python3");
    tb_put_funcs(b, FUNCS, NF);
    tb_thread(b, 10, "main");
}

static void strings(struct tb *b)
{
    tb_string(b, S_MM, "aten::mm");
    tb_string(b, S_STEP, "train_step");
    tb_string(b, S_GEMM, "gemm");
}

/* Call tree ct's nodes as lines "path calls self total self_cuda cuda",
 * sorted, in one string. */
static char *paths(const struct opp_model *m, const struct opp_calltree *ct)
{
    char **line = calloc(ct->n + 1, sizeof *line), *buf = NULL, *out;
    size_t cap = 0, len = 0;
    for (size_t i = 0; i < ct->n; i++) {
        const struct opp_ct_node *n = &ct->nodes[i];
        ck_assert_int_ge(opp_calltree_path(m, ct, (uint32_t)i, &buf, &cap), 0);
        ck_assert_int_gt(asprintf(&line[i], "%s %lu %lu %lu %lu %lu\n", buf,
                                  (unsigned long)n->calls, (unsigned long)n->self_ns,
                                  (unsigned long)n->total_ns, (unsigned long)n->self_cuda_ns,
                                  (unsigned long)n->cuda_total_ns),
                         0);
    }
    for (size_t i = 1; i < ct->n; i++) /* sorted */
        for (size_t k = i; k > 0 && strcmp(line[k - 1], line[k]) > 0; k--) {
            char *t = line[k];
            line[k] = line[k - 1];
            line[k - 1] = t;
        }
    FILE *f = open_memstream(&out, &len);
    for (size_t i = 0; i < ct->n; i++) {
        fputs(line[i], f);
        free(line[i]);
    }
    fclose(f);
    free(line);
    free(buf);
    return out;
}

/* --tree's call paths of the trace, read in one pass, are want and the
 * loaded model's. */
static void tree_is(const char *want)
{
    char err[512] = "";
    struct opp_pass *pass = tu_pass_open(trace);
    struct opp_table_stream *s = opp_table_stream_over(pass, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    const struct opp_agg_opts o = {0};
    struct opp_calltree a, l;
    ck_assert_msg(opp_table_stream_calltree(s, &o, &a, err, sizeof err) == 0, "%s", err);
    struct opp_model *m = tu_model_load(trace, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    ck_assert_int_eq(tu_calltree_build(m, &o, &l), 0);
    char *pa = paths(opp_pass_model(pass), &a), *pl = paths(m, &l);
    ck_assert_str_eq(pa, want);
    ck_assert_str_eq(pl, want);
    free(pa), free(pl);
    opp_calltree_free(&a);
    opp_calltree_free(&l);
    opp_model_free(m);
    opp_table_stream_free(s);
    opp_pass_free(pass);
}

struct want {
    const char *key;
    uint64_t count, self_ns, total_ns, self_cuda_ns, cuda_ns;
};

/* Aggregate a's rows are w[0..n). */
static void rows_in(const struct opp_agg *a, const struct want *w, size_t n)
{
    ck_assert_uint_eq(a->nrows, n);
    for (size_t i = 0; i < n; i++) {
        const struct opp_row *r = &a->rows[i];
        ck_assert_str_eq(r->key, w[i].key);
        ck_assert_uint_eq(r->count, w[i].count);
        ck_assert_uint_eq(r->self_cpu_time_total_ns, w[i].self_ns);
        ck_assert_uint_eq(r->cpu_time_total_ns, w[i].total_ns);
        ck_assert_uint_eq(r->self_cuda_time_total_ns, w[i].self_cuda_ns);
        ck_assert_uint_eq(r->cuda_time_total_ns, w[i].cuda_ns);
    }
}

/* The table of the trace with options o, added up in one pass, is
 * w[0..n) (grouped by stack: the rows' stacks[0..n), outermost first) and
 * what the loaded model gives. */
static void rows_stacked(const struct opp_agg_opts *o, const struct want *w,
                         const char *const *stacks, size_t n)
{
    char err[512] = "";
    struct opp_pass *pass = tu_pass_open(trace);
    struct opp_table_stream *s = opp_table_stream_over(pass, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    struct opp_agg a, l;
    ck_assert_msg(opp_table_stream_aggregate(s, o, &a, err, sizeof err) == 0, "%s", err);
    struct opp_model *m = tu_model_load(trace, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    ck_assert_int_eq(tu_aggregate(m, o, &l), 0);
    rows_in(&a, w, n);
    ck_assert_uint_eq(l.nrows, n);
    for (size_t i = 0; i < n; i++) {
        const struct opp_row *r = &a.rows[i], *x = &l.rows[i];
        ck_assert_str_eq(r->key, x->key);
        ck_assert_str_eq(r->lib, x->lib);
        ck_assert_uint_eq(r->device_type, x->device_type);
        ck_assert_uint_eq(r->count, x->count);
        ck_assert_uint_eq(r->self_cpu_time_total_ns, x->self_cpu_time_total_ns);
        ck_assert_uint_eq(r->cpu_time_total_ns, x->cpu_time_total_ns);
        ck_assert_uint_eq(r->self_cuda_time_total_ns, x->self_cuda_time_total_ns);
        ck_assert_uint_eq(r->cuda_time_total_ns, x->cuda_time_total_ns);
        ck_assert_uint_eq(r->flops, x->flops);
        if (stacks)
            ck_assert_str_eq(r->stack_str, stacks[i]);
        else
            ck_assert_ptr_null(r->stack_str);
        if (x->stack_str)
            ck_assert_str_eq(r->stack_str, x->stack_str);
        else
            ck_assert_ptr_null(r->stack_str);
    }
    ck_assert_uint_eq(a.self_cpu_time_total_ns, l.self_cpu_time_total_ns);
    ck_assert_uint_eq(a.self_cuda_time_total_ns, l.self_cuda_time_total_ns);
    ck_assert_uint_eq(a.events, l.events);
    ck_assert_uint_eq(a.gpu_ops, l.gpu_ops);
    ck_assert_int_eq(a.gpu, l.gpu);
    ck_assert_uint_eq(opp_pass_model(pass)->open_events, m->open_events);
    opp_agg_free(&a);
    opp_agg_free(&l);
    opp_model_free(m);
    opp_table_stream_free(s);
    opp_pass_free(pass);
}

static void rows_with(const struct opp_agg_opts *o, const struct want *w, size_t n)
{
    rows_stacked(o, w, NULL, n);
}

/* The table sorted by self CPU time. */
static void rows_are(const struct want *w, size_t n)
{
    const struct opp_agg_opts o = {0};
    rows_with(&o, w, n);
}

/* An op whose only child has its name: one call, its child's children
 * its own (the launch); the launch's kernel in its CUDA total. */
START_TEST(torch_fold_of_an_only_same_named_child)
{
    struct tb b;
    start(&b);
    tb_events(&b, TB_CALL(F_LAUNCH, 200, 300, 2, API(101)),
              TB_CALL(F_TORCH, 150, 450, 1, TORCH(S_MM, 6)),
              TB_CALL(F_TORCH, 100, 500, 0, TORCH(S_MM, 5)));
    strings(&b);
    tb_kernel(&b, .name = S_GEMM, .start = 1000, .end = 1100, .stream = 7, .corr = 101);
    tb_gpu_chunk(&b);
    tb_end(&b);
    const struct want w[] = {{"aten::mm", 1, 300, 400, 0, 100},
                             {"cudaLaunchKernel", 1, 100, 100, 100, 100},
                             {"gemm", 1, 0, 0, 100, 100}};
    rows_are(w, 3);
    tree_is("aten::mm 1 300 400 0 100\n"
            "aten::mm;cudaLaunchKernel 1 100 100 100 100\n");
}
END_TEST

/* Calls the process died inside end where it did (900): the step's
 * child ran from 200 on, the completed call inside that. */
START_TEST(calls_a_process_died_inside)
{
    struct tb b;
    start(&b);
    tb_events(&b, TB_CALL(F_WORK, 300, 400, 2));
    tb_events(&b, TB_OPEN(F_TORCH, 100, 450, 0, LABEL(S_STEP)), TB_OPEN(F_WORK, 200, 450, 1));
    strings(&b);
    tb_process_end(&b, 0, OPP_END_LOST, 900);
    tb_end(&b);
    const struct want w[] = {{"cblas_dgemm", 2, 100 + 600, 100 + 700, 0, 0},
                             {"train_step", 1, 100, 800, 0, 0}};
    rows_are(w, 2);
    tree_is("train_step 1 100 800 0 0\n"
            "train_step;cblas_dgemm 1 600 700 0 0\n"
            "train_step;cblas_dgemm;cblas_dgemm 1 100 100 0 0\n");
}
END_TEST

/* An op its process died inside (ext 41) around a completed op of its name
 * (ext 40), whose external id places a kernel: with no other child the
 * completed op folds into it and the kernel is the open op's; when the
 * process also died inside a second child (written after it), nothing
 * folds and the kernel is the completed op's. The join knows which at
 * the thread's next call, as the loaded model does. */
static void open_op_around(int second_child, const struct want *w, size_t n)
{
    struct tb b;
    start(&b);
    tb_events(&b, TB_CALL(F_TORCH, 150, 450, 1, TORCH(S_MM, 40)));
    if (second_child)
        tb_events(&b, TB_OPEN(F_TORCH, 100, 500, 0, TORCH(S_MM, 41)), TB_OPEN(F_WORK, 460, 500, 1));
    else
        tb_events(&b, TB_OPEN(F_TORCH, 100, 500, 0, TORCH(S_MM, 41)));
    strings(&b);
    tb_extcorr(&b, OPP_EXTCORR_KIND, 40, 70);
    tb_kernel(&b, .name = S_GEMM, .start = 1000, .end = 1100, .stream = 7, .corr = 70);
    tb_gpu_chunk(&b);
    tb_process_end(&b, 0, OPP_END_LOST, 900);
    tb_end(&b);
    rows_are(w, n);
}

START_TEST(open_op_folds_its_only_child)
{
    const struct want w[] = {{"aten::mm", 1, 800, 800, 100, 100}, {"gemm", 1, 0, 0, 100, 100}};
    open_op_around(0, w, 2);
}
END_TEST

START_TEST(open_op_with_a_second_open_child)
{
    const struct want w[] = {{"cblas_dgemm", 1, 440, 440, 0, 0},
                             {"aten::mm", 2, 300 + 60, 300 + 800, 100, 200},
                             {"gemm", 1, 0, 0, 100, 100}};
    open_op_around(1, w, 3);
}
END_TEST

/* A chunk written late: a call inside one handed over before it. The
 * pass keeps the thread whole; the call is still its parent's child. */
START_TEST(out_of_order_returns)
{
    struct tb b;
    start(&b);
    tb_events(&b, TB_CALL(F_WORK, 1000, 2000, 0), TB_CALL(F_WORK, 2100, 2900, 0));
    tb_events(&b, TB_CALL(F_WORK, 1200, 1500, 1), TB_CALL(F_WORK, 3000, 4000, 0));
    strings(&b);
    tb_end(&b);
    const struct want w[] = {{"cblas_dgemm", 4, 700 + 800 + 300 + 1000, 3100, 0, 0}};
    rows_are(w, 1);
    tree_is("cblas_dgemm 3 2500 2800 0 0\n"
            "cblas_dgemm;cblas_dgemm 1 300 300 0 0\n");
}
END_TEST

/* A launch in a chunk written late, inside a call handed over before it:
 * the thread is kept whole from the first read (the GPU join's) on, and
 * its kernel's time is the launch's and, in CUDA total, its parent's. */
START_TEST(out_of_order_launch)
{
    struct tb b;
    start(&b);
    tb_events(&b, TB_CALL(F_WORK, 1000, 2000, 0), TB_CALL(F_WORK, 2100, 2900, 0));
    tb_events(&b, TB_CALL(F_LAUNCH, 1200, 1500, 1, API(101)), TB_CALL(F_WORK, 3000, 4000, 0));
    strings(&b);
    tb_kernel(&b, .name = S_GEMM, .start = 5000, .end = 5100, .stream = 7, .corr = 101);
    tb_gpu_chunk(&b);
    tb_end(&b);
    const struct want w[] = {{"cblas_dgemm", 3, 700 + 800 + 1000, 2800, 0, 100},
                             {"cudaLaunchKernel", 1, 300, 300, 100, 100},
                             {"gemm", 1, 0, 0, 100, 100}};
    rows_are(w, 3);
    tree_is("cblas_dgemm 3 2500 2800 0 100\n"
            "cblas_dgemm;cudaLaunchKernel 1 300 300 100 100\n");
}
END_TEST

/* GPU records written after the process ended go to the calls that
 * launched them (the launch inside aten::mm: its CUDA total too); an op
 * of no call is a row of its own and no call's. */
/* A launch inside aten::mm, one after it, and their kernels written
 * after the process ended, with a third kernel of no call. */
static void late_gpu_trace(void)
{
    struct tb b;
    start(&b);
    tb_events(&b, TB_CALL(F_LAUNCH, 100, 200, 1, API(101)),
              TB_CALL(F_TORCH, 50, 300, 0, TORCH(S_MM, 0)),
              TB_CALL(F_LAUNCH, 400, 500, 0, API(102)));
    strings(&b);
    tb_process_end(&b, 0, OPP_END_EXITED, 600);
    tb_at(&b, 0, 10);
    tb_kernel(&b, .name = S_GEMM, .start = 1000, .end = 1100, .stream = 7, .corr = 101);
    tb_kernel(&b, .name = S_GEMM, .start = 2000, .end = 2050, .stream = 7, .corr = 102);
    tb_kernel(&b, .name = S_GEMM, .start = 3000, .end = 3010, .stream = 7, .corr = 999);
    tb_gpu_chunk(&b);
    tb_end(&b);
}

static const struct want late_rows[] = {{"cudaLaunchKernel", 2, 200, 200, 150, 150},
                                        {"aten::mm", 1, 150, 250, 0, 100},
                                        {"gemm", 3, 0, 0, 160, 160}};
static const char late_paths[] = "aten::mm 1 150 250 0 100\n"
                                 "aten::mm;cudaLaunchKernel 1 100 100 100 100\n"
                                 "cudaLaunchKernel 1 100 100 50 50\n";
/* --from 0 --to 0.0003 (ms since the first call, at 50): the calls that
 * begin before 350, with their kernels' time though those ran later, as
 * the loaded model gives it; the kernels are no rows */
static const struct opp_agg_opts late_window = {.window = 1, .from_ns = 0, .to_ns = 300};
static const struct want late_in[] = {{"aten::mm", 1, 150, 250, 0, 100},
                                      {"cudaLaunchKernel", 1, 100, 100, 100, 100}};

/* GPU records written after the process ended go to the calls that
 * launched them (the launch inside aten::mm: its CUDA total too); an op
 * of no call is a row of its own and no call's. */
START_TEST(late_gpu_records_owned_by_their_call)
{
    late_gpu_trace();
    rows_are(late_rows, 3);
    tree_is(late_paths);
    rows_with(&late_window, late_in, 2);
}
END_TEST

/* Questions asked of one stream (advise's, the HTML export's) share the
 * GPU join: one read joins, then one read a question, each answer as
 * when it is asked alone, the kernels' rows too (--match finds a
 * kernel's name in any of them); asked together (opp_table_stream_ask),
 * one read for them all. */
START_TEST(questions_share_one_join)
{
    late_gpu_trace();
    char err[512] = "";
    struct opp_pass *pass = tu_pass_open(trace);
    struct opp_table_stream *s = opp_table_stream_over(pass, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    const struct opp_agg_opts all = {0};
    struct opp_agg a;
    struct opp_calltree ct;
    for (int round = 0; round < 2; round++) {
        ck_assert_msg(opp_table_stream_aggregate(s, &all, &a, err, sizeof err) == 0, "%s", err);
        rows_in(&a, late_rows, 3);
        opp_agg_free(&a);
        ck_assert_msg(opp_table_stream_aggregate(s, &late_window, &a, err, sizeof err) == 0, "%s",
                      err);
        rows_in(&a, late_in, 2);
        opp_agg_free(&a);
        ck_assert_msg(opp_table_stream_calltree(s, &all, &ct, err, sizeof err) == 0, "%s", err);
        char *p = paths(opp_pass_model(pass), &ct);
        ck_assert_str_eq(p, late_paths);
        free(p);
        opp_calltree_free(&ct);
    }
    regex_t re;
    ck_assert_int_eq(regcomp(&re, "^gem", REG_EXTENDED | REG_NOSUB), 0);
    const struct opp_agg_opts m = {.match = &re};
    ck_assert_msg(opp_table_stream_aggregate(s, &m, &a, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(opp_table_stream_matched(s), 1);
    const struct want gemm[] = {{"gemm", 3, 0, 0, 160, 160}};
    rows_in(&a, gemm, 1);
    opp_agg_free(&a);
    regfree(&re);
    ck_assert_uint_eq(opp_pass_reads(pass), 1 + 7);
    /* the three asked at once: one read more, the same answers */
    struct opp_agg b;
    const struct opp_table_q q[] = {{&all, &a, NULL}, {&late_window, &b, NULL}, {&all, NULL, &ct}};
    ck_assert_msg(opp_table_stream_ask(s, q, 3, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(opp_pass_reads(pass), 1 + 8);
    rows_in(&a, late_rows, 3);
    rows_in(&b, late_in, 2);
    char *p = paths(opp_pass_model(pass), &ct);
    ck_assert_str_eq(p, late_paths);
    free(p);
    opp_calltree_free(&ct);
    opp_agg_free(&a);
    opp_agg_free(&b);
    opp_table_stream_free(s);
    opp_pass_free(pass);
}
END_TEST

/* A schedule's windows (--window K) found in a read: runs of consecutive
 * ProfilerStep#N, as the loaded model's; a step folded into a same-named
 * parent is one step. */
START_TEST(schedule_windows_in_a_read)
{
    enum { S_P1 = S_GEMM + 1, S_P2, S_P5 };
    struct tb b;
    start(&b);
    tb_events(&b, TB_CALL(F_WORK, 110, 120, 1), TB_CALL(F_TORCH, 100, 200, 0, LABEL(S_P1)),
              TB_CALL(F_TORCH, 310, 390, 1, LABEL(S_P2)),
              TB_CALL(F_TORCH, 300, 400, 0, LABEL(S_P2)),
              TB_CALL(F_TORCH, 900, 1000, 0, LABEL(S_P5)));
    strings(&b);
    tb_string(&b, S_P1, "ProfilerStep#1");
    tb_string(&b, S_P2, "ProfilerStep#2");
    tb_string(&b, S_P5, "ProfilerStep#5");
    tb_end(&b);
    char err[512] = "";
    struct opp_pass *pass = tu_pass_open(trace);
    struct opp_table_stream *s = opp_table_stream_over(pass, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    struct opp_window *w, *lw;
    size_t nw, nlw;
    ck_assert_msg(opp_table_stream_windows(s, &w, &nw, err, sizeof err) == 0, "%s", err);
    struct opp_model *m = tu_model_load(trace, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    ck_assert_int_eq(tu_profiler_windows(m, &lw, &nlw), 0);
    const struct opp_window want[] = {{1, 2, 100, 400}, {5, 5, 900, 1000}};
    ck_assert_uint_eq(nw, 2);
    ck_assert_uint_eq(nlw, 2);
    for (size_t i = 0; i < 2; i++) {
        ck_assert_uint_eq(w[i].first_step, want[i].first_step);
        ck_assert_uint_eq(w[i].last_step, want[i].last_step);
        ck_assert_uint_eq(w[i].begin_ns, want[i].begin_ns);
        ck_assert_uint_eq(w[i].end_ns, want[i].end_ns);
        ck_assert_mem_eq(&w[i], &lw[i], sizeof w[i]);
    }
    ck_assert_uint_eq(opp_pass_first_ns(pass), tu_model_first_ns(m));
    free(w);
    free(lw);
    opp_model_free(m);
    opp_table_stream_free(s);
    opp_pass_free(pass);
}
END_TEST

enum { S_LIN = S_GEMM + 1, S_PY_STEP, S_PY_MAIN };

/* train_step [100, 1000] holds aten::linear [200, 800], which holds
 * aten::mm [300, 700], which holds a dgemm [400, 600]; a dgemm [850, 950]
 * in train_step and one [1100, 1200] in none. Self: 200 each, the last
 * two dgemms 100. */
static void write_nested(void)
{
    struct tb b;
    start(&b);
    tb_events(&b, TB_CALL(F_WORK, 400, 600, 3), TB_CALL(F_TORCH, 300, 700, 2, TORCH(S_MM, 0)),
              TB_CALL(F_TORCH, 200, 800, 1, TORCH(S_LIN, 0)), TB_CALL(F_WORK, 850, 950, 1),
              TB_CALL(F_TORCH, 100, 1000, 0, LABEL(S_STEP)), TB_CALL(F_WORK, 1100, 1200, 0));
    strings(&b);
    tb_string(&b, S_LIN, "aten::linear");
    tb_end(&b);
}

/* --group-by-stack N: each call's N innermost operators around it, which
 * the pass hands over after it: the rows as the loaded model's. */
START_TEST(group_by_stack_nested_operators)
{
    write_nested();
    const struct opp_agg_opts one = {.group_by_stack = 1};
    const struct want w1[] = {
        {"aten::linear", 1, 200, 600, 0, 0}, {"aten::mm", 1, 200, 400, 0, 0},
        {"cblas_dgemm", 1, 200, 200, 0, 0},  {"train_step", 1, 200, 900, 0, 0},
        {"cblas_dgemm", 1, 100, 100, 0, 0},  {"cblas_dgemm", 1, 100, 100, 0, 0}};
    const char *const w1_stacks[] = {"train_step", "aten::linear", "aten::mm", "",
                                     "",           "train_step"};
    rows_stacked(&one, w1, w1_stacks, 6);
    const struct opp_agg_opts two = {.group_by_stack = 2};
    const char *const w2_stacks[] = {
        "train_step", "train_step;aten::linear", "aten::linear;aten::mm", "", "", "train_step"};
    rows_stacked(&two, w1, w2_stacks, 6); /* the same rows, deeper stacks */
    const struct opp_agg_opts all = {.group_by_stack = 16};
    const char *const w16_stacks[] = {
        "train_step", "train_step;aten::linear", "train_step;aten::linear;aten::mm", "", "",
        "train_step"};
    rows_stacked(&all, w1, w16_stacks, 6);
    /* --from: train_step (at 0 of the trace's time) left out, its name
     * still in the stacks of the calls inside it */
    const struct opp_agg_opts from = {
        .group_by_stack = 2, .window = 1, .from_ns = 50, .to_ns = UINT64_MAX};
    const struct want wf[] = {{"aten::linear", 1, 200, 600, 0, 0},
                              {"aten::mm", 1, 200, 400, 0, 0},
                              {"cblas_dgemm", 1, 200, 200, 0, 0},
                              {"cblas_dgemm", 1, 100, 100, 0, 0},
                              {"cblas_dgemm", 1, 100, 100, 0, 0}};
    const char *const wf_stacks[] = {"train_step", "train_step;aten::linear",
                                     "aten::linear;aten::mm", "", "train_step"};
    rows_stacked(&from, wf, wf_stacks, 5);
}
END_TEST

/* An op folded into its only same-named child is one frame: the calls
 * inside the child are the op's, its name once in their stacks. */
START_TEST(group_by_stack_torch_fold)
{
    struct tb b;
    start(&b);
    tb_events(&b, TB_CALL(F_LAUNCH, 300, 400, 3, API(101)), TB_CALL(F_WORK, 500, 600, 3),
              TB_CALL(F_TORCH, 200, 900, 2, TORCH(S_MM, 0)),
              TB_CALL(F_TORCH, 150, 950, 1, TORCH(S_MM, 0)),
              TB_CALL(F_TORCH, 100, 1000, 0, LABEL(S_STEP)));
    strings(&b);
    tb_end(&b);
    const struct opp_agg_opts one = {.group_by_stack = 1};
    const struct want w1[] = {{"aten::mm", 1, 600, 800, 0, 0},
                              {"cblas_dgemm", 1, 100, 100, 0, 0},
                              {"cudaLaunchKernel", 1, 100, 100, 0, 0},
                              {"train_step", 1, 100, 900, 0, 0}};
    const char *const w1_stacks[] = {"train_step", "aten::mm", "aten::mm", ""};
    rows_stacked(&one, w1, w1_stacks, 4);
    const struct opp_agg_opts two = {.group_by_stack = 2};
    const struct want w2[] = {{"aten::mm", 1, 600, 800, 0, 0},
                              {"cblas_dgemm", 1, 100, 100, 0, 0},
                              {"cudaLaunchKernel", 1, 100, 100, 0, 0},
                              {"train_step", 1, 100, 900, 0, 0}};
    const char *const w2_stacks[] = {"train_step", "train_step;aten::mm", "train_step;aten::mm",
                                     ""};
    rows_stacked(&two, w2, w2_stacks, 4);
}
END_TEST

/* A call whose code stack has Python frames (OPPROF_STACKS in a Python
 * program) is keyed by them, as many as it has up to N; a call whose
 * stack has none, or that has no stack, by the operators around it. */
START_TEST(group_by_stack_python_frames)
{
    struct tb b;
    start(&b);
    strings(&b);
    tb_string(&b, S_PY_STEP, "train.py(10): step");
    tb_string(&b, S_PY_MAIN, "train.py(20): main");
    tb_stack(&b, 5, 0x10, OPP_STACK_PY | S_PY_STEP, OPP_STACK_PY | S_PY_MAIN);
    tb_stack(&b, 6, 0x20);
    tb_events(&b, {F_WORK, 300, 500, 2, .stack = 6}, TB_CALL(F_WORK, 550, 600, 2),
              {F_TORCH, 200, 800, 1, .stack = 5, .nargs = 4, .args = {TORCH(S_MM, 0)}},
              TB_CALL(F_TORCH, 100, 1000, 0, LABEL(S_STEP)));
    tb_end(&b);
    const struct opp_agg_opts one = {.group_by_stack = 1};
    const struct want w1[] = {{"aten::mm", 1, 350, 600, 0, 0},
                              {"train_step", 1, 300, 900, 0, 0},
                              {"cblas_dgemm", 2, 250, 250, 0, 0}};
    const char *const w1_stacks[] = {"train.py(10): step", "", "aten::mm"};
    rows_stacked(&one, w1, w1_stacks, 3);
    const struct opp_agg_opts three = {.group_by_stack = 3};
    const struct want w3[] = {{"aten::mm", 1, 350, 600, 0, 0},
                              {"train_step", 1, 300, 900, 0, 0},
                              {"cblas_dgemm", 2, 250, 250, 0, 0}};
    const char *const w3_stacks[] = {"train.py(20): main;train.py(10): step", "",
                                     "train_step;aten::mm"};
    rows_stacked(&three, w3, w3_stacks, 3);
}
END_TEST

/* Code-frame tree t of m's trace as lines "path calls self total
 * self_cuda cuda", in the order of its nodes. */
static char *frames_of(const struct opp_model *m, const struct opp_codetree *t)
{
    struct opp_model names = *m;
    names.strs = t->names;
    names.nstrs = t->nnames;
    char *buf = NULL, *out;
    size_t cap = 0, len = 0;
    FILE *f = open_memstream(&out, &len);
    for (size_t i = 0; i < t->ct.n; i++) {
        const struct opp_ct_node *n = &t->ct.nodes[i];
        ck_assert_int_ge(opp_calltree_path(&names, &t->ct, (uint32_t)i, &buf, &cap), 0);
        fprintf(f, "%s %lu %lu %lu %lu %lu\n", buf, (unsigned long)n->calls,
                (unsigned long)n->self_ns, (unsigned long)n->total_ns,
                (unsigned long)n->self_cuda_ns, (unsigned long)n->cuda_total_ns);
    }
    fclose(f);
    free(buf);
    return out;
}

/* The code-frame tree in one pass: each call at its frames' path (the
 * children, which come first, after their parent as the loaded model
 * makes the nodes), a folded child none, a kernel's time its launch's:
 * want, and the loaded model's, node for node. */
START_TEST(code_frames_in_the_loaded_order)
{
    struct tb b;
    start(&b);
    strings(&b);
    tb_string(&b, S_PY_STEP, "train.py(10): step");
    tb_stack(&b, 5, 0x10, 0x20);
    tb_stack(&b, 6, 0x30, 0x20);
    tb_stack(&b, 7, 0x10, OPP_STACK_PY | S_PY_STEP);
    tb_events(&b, {F_WORK, 300, 400, 1, .stack = 6},
              {F_TORCH, 200, 500, 0, .stack = 5, .nargs = 4, .args = {TORCH(S_MM, 0)}},
              {F_LAUNCH, 600, 700, 0, .stack = 5, .nargs = 3, .args = {API(101)}},
              {F_WORK, 870, 900, 2, .stack = 6},
              {F_TORCH, 850, 950, 1, .stack = 7, .nargs = 4, .args = {TORCH(S_MM, 0)}},
              {F_TORCH, 800, 1000, 0, .stack = 7, .nargs = 4, .args = {TORCH(S_MM, 0)}});
    tb_thread(&b, 11, "worker");
    tb_events(&b, {F_WORK, 50, 150, 0, .stack = 6}, TB_CALL(F_WORK, 160, 170, 0));
    tb_kernel(&b, .name = S_GEMM, .start = 2000, .end = 2040, .stream = 7, .corr = 101);
    tb_gpu_chunk(&b);
    tb_end(&b);
    char err[512] = "";
    struct opp_pass *pass = tu_pass_open(trace);
    struct opp_table_stream *s = opp_table_stream_over(pass, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    ck_assert_int_eq(opp_pass_meta(pass)->stacked_calls != 0, 1);
    struct opp_codetree a, l;
    ck_assert_msg(opp_table_stream_codetree(s, &a, err, sizeof err) == 0, "%s", err);
    struct opp_model *m = tu_model_load(trace, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    ck_assert_int_eq(tu_codetree_build(m, &l), 0);
    char *pa = frames_of(opp_pass_model(pass), &a), *pl = frames_of(m, &l);
    const char *want = "0x20 0 0 0 0 0\n"
                       "0x20;0x10 0 0 0 0 0\n"
                       "0x20;0x10;aten::mm 1 200 300 0 0\n"
                       "0x20;0x30 0 0 0 0 0\n"
                       "0x20;0x30;cblas_dgemm 3 230 230 0 0\n"
                       "0x20;0x10;cudaLaunchKernel 1 100 100 40 40\n"
                       "train.py(10):_step 0 0 0 0 0\n"
                       "train.py(10):_step;0x10 0 0 0 0 0\n"
                       "train.py(10):_step;0x10;aten::mm 1 170 200 0 0\n"
                       "cblas_dgemm 1 10 10 0 0\n";
    ck_assert_str_eq(pl, want);
    ck_assert_str_eq(pa, want);
    free(pa), free(pl);
    opp_codetree_free(&a);
    opp_codetree_free(&l);
    opp_model_free(m);
    opp_table_stream_free(s);
    opp_pass_free(pass);
}
END_TEST

Suite *suite_table_stream(void)
{
    Suite *s = suite_create("table_stream");
    TCase *tc = tcase_create("table_stream");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, torch_fold_of_an_only_same_named_child);
    tcase_add_test(tc, calls_a_process_died_inside);
    tcase_add_test(tc, open_op_folds_its_only_child);
    tcase_add_test(tc, open_op_with_a_second_open_child);
    tcase_add_test(tc, out_of_order_returns);
    tcase_add_test(tc, out_of_order_launch);
    tcase_add_test(tc, late_gpu_records_owned_by_their_call);
    tcase_add_test(tc, questions_share_one_join);
    tcase_add_test(tc, schedule_windows_in_a_read);
    tcase_add_test(tc, group_by_stack_nested_operators);
    tcase_add_test(tc, group_by_stack_torch_fold);
    tcase_add_test(tc, group_by_stack_python_frames);
    tcase_add_test(tc, code_frames_in_the_loaded_order);
    suite_add_tcase(s, tc);
    return s;
}
