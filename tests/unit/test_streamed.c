/* The streamed engines called directly, on traces built by hand: the GPU
 * join (gpu_join.c), each GPU op with its owning call as a summary reads
 * them (owned_ops.c), a trace summarised (summarize.c), its steps
 * (step_stream.c) and GPU statistics (gpu_stream.c) as it is read. Each
 * with its exact numbers, which are the loaded model's too. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gpu_join.h"
#include "analysis/gpu_stats.h"
#include "analysis/gpu_stream.h"
#include "analysis/model.h"
#include "analysis/owned_ops.h"
#include "analysis/pass.h"
#include "analysis/step_stream.h"
#include "analysis/step_times.h"
#include "analysis/summarize.h"
#include "gpu.h"
#include "summary.h"
#include "testutil.h"
#include "tracebuild.h"
#include "oracle/loaded.h"

TU_TRACE_FIXTURE

enum { F_TORCH, F_LAUNCH, F_SYNC, NF };
enum { S_MM = OPP_STR_PRELOAD, S_STEP, S_GEMM, S_RELU };

static const struct opp_func_desc FUNCS[NF] = {
    [F_TORCH] = TB_FN_TORCH,
    [F_LAUNCH] = TB_FN_LAUNCH,
    [F_SYNC] = {OPP_OP_CUDA_API, OPP_DT_NONE, "cudart", "cudaDeviceSynchronize"},
};

/* Process 0 (pid 10), thread 10, two training steps, its GPU records
 * written after its end (a late flush):
 *   train_step [1000, 2000]
 *     aten::mm [1100, 1500] ext 5
 *       aten::mm [1150, 1450] ext 6 (its only child, of its name: folded)
 *         cudaLaunchKernel [1200, 1300] corr 101 -> gemm [1400, 1700]
 *       (ext 6 -> corr 201, no call of its own)  -> gemm [1800, 1820]
 *     cudaDeviceSynchronize [1600, 1900] corr 102
 *   train_step [3000, 4000]
 *     aten::mm [3100, 3500] ext 7
 *       cudaLaunchKernel [3200, 3300] corr 103   -> gemm [3400, 3450]
 *   corr 999, no call                            -> relu [5000, 5010]
 * Process 1 (pid 11), thread 11, killed at 900 inside train_step and the
 * aten::mm in it (written last, outermost first, as the collector does):
 *   train_step [100, 900) { aten::mm [200, 900) ext 8 {
 *     cudaLaunchKernel [300, 400] corr 301 -> gemm [500, 600]
 *     (ext 8 -> corr 302)                  -> gemm [700, 760] } } */
static void write_trace(void)
{
    struct tb b;
    tb_open(&b, trace);
    tb_process(&b, .proc = 0, .pid = 10, .ppid = 1, .parent = UINT32_MAX, .real = 1,
               .exe = "/usr/bin/python3", .argv = {"python3", "train.py"});
    tb_put_funcs(&b, FUNCS, NF);
    tb_thread(&b, 10, "main");
    tb_events(&b, TB_CALL(F_LAUNCH, 1200, 1300, 3, TB_API(101, 211)),
              TB_CALL(F_TORCH, 1150, 1450, 2, TB_TORCH(S_MM, 6)),
              TB_CALL(F_TORCH, 1100, 1500, 1, TB_TORCH(S_MM, 5)),
              TB_CALL(F_SYNC, 1600, 1900, 1, TB_API(102, 165)),
              TB_CALL(F_TORCH, 1000, 2000, 0, TB_LABEL(S_STEP)),
              TB_CALL(F_LAUNCH, 3200, 3300, 2, TB_API(103, 211)),
              TB_CALL(F_TORCH, 3100, 3500, 1, TB_TORCH(S_MM, 7)),
              TB_CALL(F_TORCH, 3000, 4000, 0, TB_LABEL(S_STEP)));
    tb_string(&b, S_MM, "aten::mm");
    tb_string(&b, S_STEP, "train_step");
    tb_process_end(&b, 0, OPP_END_EXITED, 6000);

    tb_process(&b, .proc = 1, .pid = 11, .ppid = 1, .parent = UINT32_MAX, .real = 1,
               .exe = "/usr/bin/python3", .argv = {"python3", "train.py"});
    tb_put_funcs(&b, FUNCS, NF);
    tb_string(&b, S_MM, "aten::mm");
    tb_string(&b, S_STEP, "train_step");
    tb_string(&b, S_GEMM, "gemm");
    tb_thread(&b, 11, "main");
    tb_events(&b, TB_CALL(F_LAUNCH, 300, 400, 2, TB_API(301, 211)),
              TB_OPEN(F_TORCH, 100, 900, 0, TB_LABEL(S_STEP)),
              TB_OPEN(F_TORCH, 200, 900, 1, TB_TORCH(S_MM, 8)));
    tb_kernel(&b, .name = S_GEMM, .start = 500, .end = 600, .stream = 7, .corr = 301);
    tb_kernel(&b, .name = S_GEMM, .start = 700, .end = 760, .stream = 7, .corr = 302);
    tb_extcorr(&b, OPP_EXTCORR_KIND, 8, 302);
    tb_gpu_chunk(&b);
    tb_process_end(&b, 1, OPP_END_LOST, 900);

    tb_at(&b, 0, 10);
    tb_string(&b, S_GEMM, "gemm");
    tb_string(&b, S_RELU, "relu");
    tb_kernel(&b, .name = S_GEMM, .start = 1400, .end = 1700, .stream = 7, .corr = 101);
    tb_kernel(&b, .name = S_GEMM, .start = 1800, .end = 1820, .stream = 7, .corr = 201);
    tb_kernel(&b, .name = S_GEMM, .start = 3400, .end = 3450, .stream = 7, .corr = 103);
    tb_kernel(&b, .name = S_RELU, .start = 5000, .end = 5010, .stream = 7, .corr = 999);
    tb_extcorr(&b, OPP_EXTCORR_KIND, 6, 201);
    tb_gpu_chunk(&b);
    tb_end(&b);
}

static struct opp_model *load(const char *path)
{
    char err[512];
    struct opp_model *m = tu_model_load(path, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    return m;
}

/* ---- the GPU join ---- */

/* What opp_gpu_join_run handed back: per op tag, its owner's mark. */
struct joined {
    uint64_t owner[16]; /* by op tag; UINT64_MAX: no call, 0: not handed back */
    int n;
};

static void take(void *ctx, const struct opp_gpu_call *c, const void *op)
{
    struct joined *j = ctx;
    uint64_t tag;
    memcpy(&tag, op, sizeof tag);
    ck_assert_uint_lt(tag, 16);
    j->owner[tag] = c ? c->at : UINT64_MAX;
    j->n++;
}

static void join_call(struct opp_gpu_join *j, uint32_t proc, uint32_t kind, const uint64_t *a,
                      uint32_t na, uint64_t begin, uint64_t end, uint32_t seq, uint32_t depth,
                      uint32_t open, uint64_t at)
{
    struct opp_gpu_call c = {.begin = begin,
                             .end = end,
                             .thread = proc,
                             .seq = seq,
                             .depth = depth,
                             .open = open,
                             .at = at};
    ck_assert_int_eq(opp_gpu_join_call(j, proc, 0, kind, a, na, &c), 0);
}

/* An op goes to the outermost CUDA call of its process with its
 * correlation id; else to the call of its external id, which for a torch
 * op folded into its same-named parent is the parent; an op of another
 * process, or of no call, to none (counted when it had an id). Ops given
 * before their calls. */
START_TEST(join_owners)
{
    struct opp_gpu_join *j = opp_gpu_join_new(sizeof(uint64_t));
    ck_assert_ptr_nonnull(j);
    const uint32_t torch = OPP_OP_TORCH | OPP_OPK_EXTID;
    static const uint64_t corrs[][2] = {{1, 101}, {2, 201}, {3, 202}, {4, 999}, {5, 0}, {6, 300}};
    for (size_t i = 0; i < sizeof corrs / sizeof *corrs; i++)
        ck_assert_int_eq(opp_gpu_join_op(j, 0, corrs[i][1], &corrs[i][0]), 0);
    uint64_t other = 7;
    ck_assert_int_eq(opp_gpu_join_op(j, 1, 101, &other), 0);
    struct opp_gpu_rec x6 = {.type = OPP_GPU_EXTCORR}, x5 = x6;
    x6.f[OPP_GF_X_KIND] = OPP_EXTCORR_KIND, x6.f[OPP_GF_X_EXTERNAL] = 6;
    x6.f[OPP_GF_X_CORRELATION] = 201;
    x5.f[OPP_GF_X_KIND] = OPP_EXTCORR_KIND, x5.f[OPP_GF_X_EXTERNAL] = 5;
    x5.f[OPP_GF_X_CORRELATION] = 202;
    ck_assert_int_eq(opp_gpu_join_extcorr(j, 0, &x6), 0);
    ck_assert_int_eq(opp_gpu_join_extcorr(j, 0, &x5), 0);

    const uint64_t launch101[] = {TB_API(101, 211)}, launch300[] = {TB_API(300, 211)},
                   mm6[] = {TB_TORCH(S_MM, 6)}, mm5[] = {TB_TORCH(S_MM, 5)};
    join_call(j, 0, OPP_OP_CUDA_API, launch101, 3, 1200, 1300, 0, 2, 0, 100);
    join_call(j, 0, torch, mm6, 4, 1150, 1450, 1, 1, 0, 101);
    join_call(j, 0, torch, mm5, 4, 1100, 1500, 2, 0, 0, 102);
    join_call(j, 0, OPP_OP_CUDA_API, launch300, 3, 2100, 2200, 3, 1, 0, 103);
    join_call(j, 0, OPP_OP_CUDA_API, launch300, 3, 2000, 2300, 4, 0, 0, 104);

    struct joined got = {0};
    uint64_t unattached = 0;
    ck_assert_int_eq(opp_gpu_join_run(j, take, &got, &unattached), 0);
    ck_assert_int_eq(got.n, 7);
    ck_assert_uint_eq(got.owner[1], 100);        /* its launch */
    ck_assert_uint_eq(got.owner[2], 102);        /* ext 6's mm, folded into ext 5's */
    ck_assert_uint_eq(got.owner[3], 102);        /* ext 5's mm */
    ck_assert_uint_eq(got.owner[4], UINT64_MAX); /* no call has 999 */
    ck_assert_uint_eq(got.owner[5], UINT64_MAX); /* no id */
    ck_assert_uint_eq(got.owner[6], 104);        /* the outermost call of 300 */
    ck_assert_uint_eq(got.owner[7], UINT64_MAX); /* process 1 has no call of 101 */
    ck_assert_uint_eq(unattached, 2);
    opp_gpu_join_free(j);
}
END_TEST

/* A process killed inside aten::mm inside aten::mm (the collector writes
 * those outermost first): the inner one folds into the outer, and the
 * work of its external id is the outer's. */
START_TEST(join_open_calls_fold)
{
    struct opp_gpu_join *j = opp_gpu_join_new(sizeof(uint64_t));
    const uint32_t torch = OPP_OP_TORCH | OPP_OPK_EXTID;
    uint64_t tag = 1;
    ck_assert_int_eq(opp_gpu_join_op(j, 0, 401, &tag), 0);
    struct opp_gpu_rec x = {.type = OPP_GPU_EXTCORR};
    x.f[OPP_GF_X_KIND] = OPP_EXTCORR_KIND, x.f[OPP_GF_X_EXTERNAL] = 9;
    x.f[OPP_GF_X_CORRELATION] = 401;
    ck_assert_int_eq(opp_gpu_join_extcorr(j, 0, &x), 0);
    const uint64_t outer[] = {TB_TORCH(S_MM, 8)}, inner[] = {TB_TORCH(S_MM, 9)};
    join_call(j, 0, torch, outer, 4, 100, 900, 0, 0, 1, 200);
    join_call(j, 0, torch, inner, 4, 200, 900, 1, 1, 1, 201);
    struct joined got = {0};
    uint64_t unattached = 0;
    ck_assert_int_eq(opp_gpu_join_run(j, take, &got, &unattached), 0);
    ck_assert_int_eq(got.n, 1);
    ck_assert_uint_eq(got.owner[1], 200);
    ck_assert_uint_eq(unattached, 0);
    opp_gpu_join_free(j);
}
END_TEST

/* ---- the ops of a trace with their calls (owned_ops.c) ---- */

/* Calls numbered in the trace's order (process 0's 0 to 7, process 1's
 * returned launch 8), those process 1 died inside from OPP_OWNED_OPEN_AT,
 * the innermost first: each op handed out with the call that owns it,
 * right after it; relu, of no call, last. */
START_TEST(owned_ops_in_call_order)
{
    write_trace();
    struct opp_sum *sum = opp_sum_new(1000);
    ck_assert_ptr_nonnull(sum);
    struct opp_owned_ops *o;
    char err[512] = "";
    enum opp_stream_refused why;
    const char *paths[] = {trace};
    struct opp_pass *pass = opp_pass_open(paths, 1, &why, err, sizeof err);
    ck_assert_msg(pass != NULL, "%s", err);
    ck_assert_msg(opp_owned_ops_read(&o, pass, sum, err, sizeof err) == 0, "%s", err);
    static const struct {
        uint64_t at, dur;
        uint32_t proc;
    } want[] = {
        {0, 300, 0},                /* gemm of launch 101 (call 0) */
        {2, 20, 0},                 /* gemm of ext 6, lifted to the outer mm (call 2) */
        {5, 50, 0},                 /* gemm of launch 103 */
        {8, 100, 1},                /* process 1's launch */
        {OPP_OWNED_OPEN_AT, 60, 1}, /* ext 8's: the mm it died inside */
        {UINT64_MAX, 10, 0},        /* relu */
    };
    const struct opp_owned_op *x;
    size_t n = 0;
    /* asked as a summary asks, after each call k: the ops of k; at the end
     * those of no call */
    static const uint64_t calls[] = {
        0, 1, 2, 3, 4, 5, 6, 7, 8, OPP_OWNED_OPEN_AT, OPP_OWNED_OPEN_AT + 1, UINT64_MAX};
    for (size_t c = 0; c < sizeof calls / sizeof *calls; c++)
        while ((x = opp_owned_ops_next(o, calls[c]))) {
            ck_assert_uint_lt(n, sizeof want / sizeof *want);
            ck_assert_uint_eq(x->at, calls[c]);
            ck_assert_uint_eq(x->at, want[n].at);
            ck_assert_uint_eq(x->op.dur, want[n].dur);
            ck_assert_uint_eq(x->proc, want[n].proc);
            n++;
        }
    ck_assert_uint_eq(n, sizeof want / sizeof *want);
    ck_assert_int_eq(opp_owned_ops_error(o), 0);
    opp_owned_ops_free(o);
    opp_pass_free(pass);
    opp_sum_free(sum);
}
END_TEST

/* ---- a summary of it (summarize.c) ---- */

static const struct opp_event *find(const struct opp_model *m, uint32_t th, const char *name,
                                    uint32_t depth, size_t *index)
{
    const struct opp_thread *t = &m->threads[th];
    for (size_t i = 0; i < t->nevents; i++)
        if (t->events[i].depth == depth && !strcmp(opp_model_str(m, t->events[i].name), name)) {
            *index = i;
            return &t->events[i];
        }
    ck_abort_msg("no %s at depth %u", name, depth);
    return NULL;
}

/* The summary has the loaded trace's calls less the folded one, its CUDA
 * times (the folded mm's work on its parent), the open calls with their
 * process's end, and says which thread folded what. */
START_TEST(summarize_folds_and_keeps_open_calls)
{
    write_trace();
    char *sum = tu_path(dir, "sum.trace"), err[512] = "";
    struct opp_summarized res;
    ck_assert_msg(opp_summarize(trace, sum, NULL, 1000, &res, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(res.calls, 11);
    ck_assert_uint_eq(res.dropped, 0);
    ck_assert_int_eq(res.complete, 1);
    ck_assert_int_eq(res.ranges_enclose, 0);
    ck_assert_uint_eq(res.lost, 0);
    ck_assert_str_eq(res.warning, "");

    struct opp_model *l = load(trace), *s = load(sum);
    ck_assert(s->summary);
    ck_assert_uint_eq(l->events, 11);            /* records read */
    ck_assert_uint_eq(l->threads[0].nevents, 7); /* the folded mm left out */
    ck_assert_uint_eq(l->threads[1].nevents, 3);
    ck_assert_uint_eq(s->events, 10);            /* calls added up: the folded mm not among them */
    ck_assert_uint_eq(s->threads[0].nevents, 4); /* train_step, mm, its launch, the sync */
    ck_assert_uint_eq(s->open_events, l->open_events);
    ck_assert_uint_eq(l->open_events, 2);
    size_t i;
    const struct opp_event *e = find(s, 0, "aten::mm", 1, &i);
    ck_assert_uint_eq(tu_event_calls(&s->threads[0], i), 2);
    ck_assert_uint_eq(opp_event_dur(e), 400 + 400);
    ck_assert_uint_eq(s->threads[0].gpu[i].cuda_ns, 300 + 20 + 50);
    ck_assert_uint_eq(s->threads[0].gpu[i].self_cuda_ns, 20);
    e = find(s, 0, "train_step", 0, &i);
    ck_assert_uint_eq(tu_event_calls(&s->threads[0], i), 2);
    ck_assert_uint_eq(opp_event_dur(e), 2000);
    ck_assert_uint_eq(e->self_ns, (1000 - 400 - 300) + (1000 - 400));
    e = find(s, 1, "aten::mm", 1, &i);
    ck_assert_uint_eq(opp_event_dur(e), 700); /* [200, 900): to its process's end */
    ck_assert_uint_eq(s->threads[1].gpu[i].cuda_ns, 100 + 60);
    opp_model_free(l);
    opp_model_free(s);
    free(sum);
}
END_TEST

/* An NVTX range recorded when it ended (a schedule's ProfilerStep#N)
 * around the calls of its depth before it: loaded, they are its children;
 * a summary nests by depth and cannot: it says so, keeps the range
 * childless with no self time, as the collector's summary has such a
 * range (OPP_SUM_RANGE), and the calls at the top. */
START_TEST(summarize_ranges_around_calls)
{
    enum { F_RANGE, F_DDOT };
    struct tb b;
    tb_open(&b, trace);
    tb_process(&b, .proc = 0, .pid = 10, .ppid = 1, .parent = UINT32_MAX, .real = 1,
               .exe = "/bin/loop");
    tb_funcs(&b, [F_RANGE] = {OPP_OP_NVTX, OPP_DT_NONE, "nvtx", "nvtx_range"},
             [F_DDOT] = {OPP_OP_PLAIN, OPP_DT_NONE, "blas", "cblas_ddot"});
    tb_thread(&b, 10, "main");
    tb_events(&b, TB_CALL(F_DDOT, 10, 20, 0), TB_CALL(F_DDOT, 40, 50, 0),
              TB_CALL(F_RANGE, 5, 60, 0, OPP_STR_PRELOAD, 0, 0, 0, 0), TB_CALL(F_DDOT, 70, 75, 0));
    tb_string(&b, OPP_STR_PRELOAD, "ProfilerStep#1");
    tb_end(&b);
    char *sum = tu_path(dir, "sum.trace"), err[512] = "";
    struct opp_summarized res;
    ck_assert_msg(opp_summarize(trace, sum, NULL, 1000, &res, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(res.ranges_enclose, 1);
    ck_assert_uint_eq(res.calls, 4);

    struct opp_model *l = load(trace), *s = load(sum);
    size_t i;
    const struct opp_event *e = find(l, 0, "ProfilerStep#1", 0, &i);
    ck_assert_uint_eq(e->self_ns, 55 - 10 - 10);
    size_t nested = 0;
    for (size_t k = 0; k < l->threads[0].nevents; k++)
        nested += l->threads[0].events[k].parent == i;
    ck_assert_uint_eq(nested, 2);
    e = find(s, 0, "ProfilerStep*", 0, &i); /* a summary's node of every step */
    ck_assert_uint_eq(e->self_ns, 0);
    e = find(s, 0, "cblas_ddot", 0, &i);
    ck_assert_uint_eq(tu_event_calls(&s->threads[0], i), 3);
    ck_assert_uint_eq(s->threads[0].nevents, 2);
    opp_model_free(l);
    opp_model_free(s);
    free(sum);
}
END_TEST

/* ---- steps as it is read (step_stream.c) ---- */

static void steps_equal(const struct opp_steps *a, const struct opp_steps *b)
{
    ck_assert_int_eq(a->ranges, b->ranges);
    ck_assert_int_eq(a->found.named, b->found.named);
    ck_assert_int_eq(a->found.held, b->found.held);
    ck_assert_uint_eq(a->found.proc, b->found.proc);
    ck_assert_uint_eq(a->n, b->n);
    for (size_t k = 0; k < a->n; k++) {
        ck_assert_uint_eq(a->steps[k].begin_ns, b->steps[k].begin_ns);
        ck_assert_uint_eq(a->steps[k].end_ns, b->steps[k].end_ns);
        ck_assert_uint_eq(a->steps[k].cpu_ns, b->steps[k].cpu_ns);
        ck_assert_uint_eq(a->steps[k].gpu_ns, b->steps[k].gpu_ns);
        ck_assert_uint_eq(a->steps[k].thread, b->steps[k].thread);
    }
}

/* train_step, a torch label, is a range: each call a step, CPU its total
 * less its self time, GPU its CUDA total (the folded mm's work in it);
 * the one its process died in ends with the process. The same loaded. */
START_TEST(step_stream_ranges)
{
    write_trace();
    char err[512] = "", what[OPP_NAME_MAX + 64];
    struct opp_pass *pass = tu_pass_open(trace);
    struct opp_step_stream *ss = opp_step_stream_over(pass, err, sizeof err);
    ck_assert_msg(ss != NULL, "%s", err);
    struct opp_agg_opts o = {0};
    struct opp_steps got, want;
    ck_assert_msg(
        opp_step_stream_steps(ss, &o, "train_step", &got, what, sizeof what, err, sizeof err) == 0,
        "%s", err);
    struct opp_model *m = load(trace);
    ck_assert_int_eq(tu_steps_find(m, &o, "train_step", &want), 0);
    ck_assert_uint_eq(want.n, 3);
    ck_assert_int_eq(want.ranges, 1);
    const struct opp_step exact[] = {
        {1000, 2000, 400 + 300, 300 + 20, 0},
        {3000, 4000, 400, 50, 0},
        {100, 900, 700, 100 + 60, 1},
    };
    for (size_t k = 0; k < 3; k++) {
        ck_assert_uint_eq(want.steps[k].begin_ns, exact[k].begin_ns);
        ck_assert_uint_eq(want.steps[k].end_ns, exact[k].end_ns);
        ck_assert_uint_eq(want.steps[k].cpu_ns, exact[k].cpu_ns);
        ck_assert_uint_eq(want.steps[k].gpu_ns, exact[k].gpu_ns);
        ck_assert_uint_eq(want.steps[k].thread, exact[k].thread);
    }
    steps_equal(&got, &want);
    opp_steps_free(&got);
    opp_steps_free(&want);
    opp_model_free(m);
    opp_step_stream_free(ss);
    opp_pass_free(pass);
}
END_TEST

/* cudaLaunchKernel marks boundaries: a step from the end of one call to
 * the end of the next on its thread, holding the calls that begin in it. */
START_TEST(step_stream_boundaries)
{
    write_trace();
    char err[512] = "", what[OPP_NAME_MAX + 64];
    struct opp_pass *pass = tu_pass_open(trace);
    struct opp_step_stream *ss = opp_step_stream_over(pass, err, sizeof err);
    ck_assert_msg(ss != NULL, "%s", err);
    struct opp_agg_opts o = {0};
    struct opp_steps got, want;
    ck_assert_msg(opp_step_stream_steps(ss, &o, "cudaLaunchKernel", &got, what, sizeof what, err,
                                        sizeof err) == 0,
                  "%s", err);
    struct opp_model *m = load(trace);
    ck_assert_int_eq(tu_steps_find(m, &o, "cudaLaunchKernel", &want), 0);
    ck_assert_int_eq(want.ranges, 0);
    ck_assert_uint_eq(want.n, 1);
    ck_assert_uint_eq(want.steps[0].begin_ns, 1300);
    ck_assert_uint_eq(want.steps[0].end_ns, 3300);
    steps_equal(&got, &want);
    opp_steps_free(&got);
    opp_steps_free(&want);
    opp_model_free(m);
    opp_step_stream_free(ss);
    opp_pass_free(pass);
}
END_TEST

/* A thread whose calls are out of the order they returned (a call that
 * ended before the one written before it, and does not nest in it): the
 * pass builds its tree as the loaded model does, the same steps. */
START_TEST(step_stream_out_of_order)
{
    struct tb b;
    tb_open_python(&b, trace, &(struct tb_python){FUNCS, NF, NULL});
    tb_events(&b, TB_CALL(F_SYNC, 500, 900, 0, TB_API(1, 165)));
    tb_events(&b, TB_CALL(F_SYNC, 100, 300, 0, TB_API(2, 165)));
    tb_end(&b);
    char err[512] = "", what[OPP_NAME_MAX + 64];
    struct opp_pass *pass = tu_pass_open(trace);
    struct opp_step_stream *ss = opp_step_stream_over(pass, err, sizeof err);
    ck_assert_msg(ss != NULL, "%s", err);
    struct opp_agg_opts o = {0};
    struct opp_steps got, want;
    ck_assert_msg(opp_step_stream_steps(ss, &o, "cudaDeviceSynchronize", &got, what, sizeof what,
                                        err, sizeof err) == 0,
                  "%s", err);
    ck_assert_uint_eq(got.n, 1); /* from the end of the first to the end of the second */
    ck_assert_uint_eq(got.steps[0].begin_ns, 300);
    ck_assert_uint_eq(got.steps[0].end_ns, 900);
    ck_assert_uint_eq(got.steps[0].cpu_ns, 400);
    struct opp_model *m = load(trace);
    ck_assert_int_eq(tu_steps_find(m, &o, "cudaDeviceSynchronize", &want), 0);
    steps_equal(&got, &want);
    opp_steps_free(&got);
    opp_steps_free(&want);
    opp_model_free(m);
    opp_step_stream_free(ss);
    opp_pass_free(pass);
}
END_TEST

/* ---- GPU statistics as it is read (gpu_stream.c) ---- */

/* Kernels grouped by name, the records that came after their process
 * ended included. */
START_TEST(gpu_stream_late_records)
{
    write_trace();
    char err[512] = "";
    struct opp_pass *pass = tu_pass_open(trace);
    struct opp_gpu_stream *g = opp_gpu_stream_over(pass, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    struct opp_agg_opts o = {0};
    struct opp_gpu_stats s;
    struct opp_kernel_stats *k;
    size_t nk;
    ck_assert_msg(opp_gpu_stream_stats(g, &o, &s, &k, &nk, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(s.ops, 6);
    ck_assert_uint_eq(s.kernels, 6);
    ck_assert_uint_eq(s.kernel_ns, 300 + 20 + 50 + 10 + 100 + 60);
    ck_assert_uint_eq(s.nstreams, 2); /* stream 7 of each process */
    ck_assert_uint_eq(nk, 2);
    ck_assert_str_eq(k[0].name, "gemm");
    ck_assert_uint_eq(k[0].count, 5);
    ck_assert_uint_eq(k[0].total_ns, 530);
    ck_assert_uint_eq(k[0].delays, 5);        /* each attached to a call */
    ck_assert_int_eq(k[0].delay_max_ns, 300); /* 201's: 1800 - the mm's end */
    ck_assert(k[0].delay_sum_ns == 400);
    ck_assert_str_eq(k[1].name, "relu");
    ck_assert_uint_eq(k[1].count, 1);
    ck_assert_uint_eq(k[1].total_ns, 10);
    ck_assert_uint_eq(k[1].delays, 0); /* no call launched it */
    free(k);
    opp_gpu_stats_free(&s);
    opp_gpu_stream_free(g);
    opp_pass_free(pass);
}
END_TEST

Suite *suite_streamed(void)
{
    Suite *s = suite_create("streamed");
    TCase *tc = tcase_create("streamed");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, join_owners);
    tcase_add_test(tc, join_open_calls_fold);
    tcase_add_test(tc, owned_ops_in_call_order);
    tcase_add_test(tc, summarize_folds_and_keeps_open_calls);
    tcase_add_test(tc, summarize_ranges_around_calls);
    tcase_add_test(tc, step_stream_ranges);
    tcase_add_test(tc, step_stream_boundaries);
    tcase_add_test(tc, step_stream_out_of_order);
    tcase_add_test(tc, gpu_stream_late_records);
    suite_add_tcase(s, tc);
    return s;
}
