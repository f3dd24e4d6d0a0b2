/* The pass over a trace (report/analysis/pass.c) with a consumer that
 * writes down what it is handed: the order of the calls and their
 * children's time, top-level calls, calls a process died inside, torch's
 * folding, a thread whose calls came out of the order they returned, GPU
 * work recorded late joined to its calls, a consumer of the files' order.
 * Traces built by hand. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pass.h"
#include "gpu.h"
#include "testutil.h"
#include "tracebuild.h"

TU_TRACE_FIXTURE

enum { F_TORCH, F_LAUNCH, F_WORK, F_NVTX, NF };
enum { S_MM = OPP_STR_PRELOAD, S_STEP, S_RANGE, S_GEMM };

static const struct opp_func_desc FUNCS[NF] = {
    [F_TORCH] = TB_FN_TORCH,
    [F_LAUNCH] = TB_FN_LAUNCH,
    [F_WORK] = {OPP_OP_GEMM, OPP_DT_F64, "blas", "cblas_dgemm"},
    [F_NVTX] = {OPP_OP_NVTX, 0, "nvtx", "nvtx_range"},
};

/* Its entry points, and the strings S_MM on. */
static const struct tb_python PY = {
    FUNCS, NF, (const char *const[]){"aten::mm", "train_step", "range", "gemm", NULL}};

/* What the consumer was handed. */
struct seen {
    uint64_t begin, end, kids;
    uint32_t seq, folded, nkids, fn, nargs;
    uint64_t arg3; /* its fourth argument, or UINT64_MAX */
    int args;      /* it came with its arguments */
    uint8_t flags;
};

struct log {
    struct seen call[32], top[32];
    int ncall, ntop, begins;
    uint64_t owner_of[4]; /* by op tag: its owner's seq + 1, or 0: no call */
    int nowned;
    char order[64]; /* a consumer of the files' order: P process, T thread, C call, K kernel,
                       S string; and its rest (on_funcs) */
    int norder;
    const char *names[4]; /* the threads' names as given */
    int nnames;
    uint64_t kernel_start;
};

static void on_begin(void *ctx)
{
    struct log *l = ctx;
    l->begins++;
    l->ncall = l->ntop = 0;
}

static struct seen seen(const struct opp_pass_call *c)
{
    return (struct seen){.begin = c->begin,
                         .end = c->end,
                         .kids = c->kids_ns,
                         .seq = c->seq,
                         .folded = c->folded,
                         .nkids = c->nkids,
                         .fn = c->fn,
                         .nargs = c->nargs,
                         .arg3 = c->args && c->nargs > 3 ? c->args[3] : UINT64_MAX,
                         .args = c->args != NULL,
                         .flags = c->flags};
}

static int on_call(void *ctx, const struct opp_pass_call *c)
{
    struct log *l = ctx;
    ck_assert_int_lt(l->ncall, 32);
    l->call[l->ncall++] = seen(c);
    return 0;
}

static int on_top(void *ctx, const struct opp_pass_call *c)
{
    struct log *l = ctx;
    ck_assert_int_lt(l->ntop, 32);
    l->top[l->ntop++] = seen(c);
    return 0;
}

/* An op's tag: its kernel's start / 1000. */
static int on_op(void *ctx, uint32_t proc, const struct opp_gpu_rec *g, void *op)
{
    uint64_t tag = g->f[OPP_GF_START] / 1000;
    memcpy(op, &tag, sizeof tag);
    return 0;
}

static void on_owned(void *ctx, const struct opp_gpu_call *c, const void *op)
{
    struct log *l = ctx;
    uint64_t tag;
    memcpy(&tag, op, sizeof tag);
    ck_assert_uint_lt(tag, 4);
    l->owner_of[tag] = c ? c->seq + 1 : 0;
    l->nowned++;
}

/* The pass over the trace into l; its model's open_events in *open. */
static void run_pass(struct log *l, uint64_t *open)
{
    memset(l, 0, sizeof *l);
    char err[512] = "";
    enum opp_stream_refused why = OPP_STREAM_CANNOT;
    struct opp_pass *p = opp_pass_open((const char *[]){trace}, 1, &why, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    ck_assert_int_eq(why, OPP_STREAM_ERROR);
    const struct opp_pass_consumer c = {.ctx = l,
                                        .begin = on_begin,
                                        .call = on_call,
                                        .top = on_top,
                                        .op_bytes = sizeof(uint64_t),
                                        .op = on_op,
                                        .owned = on_owned};
    ck_assert_msg(opp_pass_run(p, &c, err, sizeof err) == 0, "%s", err);
    if (open)
        *open = opp_pass_model(p)->open_events;
    opp_pass_free(p);
}

static void seen_is(const struct seen *s, uint32_t seq, uint64_t begin, uint64_t end, uint64_t kids)
{
    ck_assert_uint_eq(s->seq, seq);
    ck_assert_uint_eq(s->begin, begin);
    ck_assert_uint_eq(s->end, end);
    ck_assert_uint_eq(s->kids, kids);
}

/* Calls in the order they returned, each with its children's time; the
 * top-level ones told after, in time order. */
START_TEST(children_first_with_their_time)
{
    const struct tb_ev ev[] = {TB_CALL(F_WORK, 100, 200, 1), TB_CALL(F_WORK, 300, 450, 1),
                               TB_CALL(F_TORCH, 50, 500, 0, TB_LABEL(S_STEP)),
                               TB_CALL(F_WORK, 600, 700, 0)};
    tb_python_calls(trace, &PY, ev, 4, NULL, 0, 0);
    struct log l;
    run_pass(&l, NULL);
    ck_assert_int_eq(l.begins, 1);
    ck_assert_int_eq(l.ncall, 4);
    seen_is(&l.call[0], 0, 100, 200, 0);
    seen_is(&l.call[1], 1, 300, 450, 0);
    seen_is(&l.call[2], 2, 50, 500, 100 + 150);
    ck_assert_uint_eq(l.call[2].flags, OPP_PASS_LABEL);
    ck_assert_uint_eq(l.call[2].folded, OPP_PASS_NONE);
    seen_is(&l.call[3], 3, 600, 700, 0);
    /* its two children before it; what it recorded, while call runs */
    ck_assert_uint_eq(l.call[0].nkids, 0);
    ck_assert_uint_eq(l.call[2].nkids, 2);
    ck_assert_uint_eq(l.call[3].nkids, 0);
    ck_assert_uint_eq(l.call[2].fn, F_TORCH);
    ck_assert_uint_eq(l.call[2].nargs, 4);
    ck_assert_uint_eq(l.call[2].arg3, 0);
    ck_assert_uint_eq(l.call[0].fn, F_WORK);
    ck_assert_uint_eq(l.call[0].nargs, 0);
    ck_assert_int_eq(l.ntop, 2);
    ck_assert_uint_eq(l.top[0].seq, 2);
    ck_assert_uint_eq(l.top[1].seq, 3);
    ck_assert_int_eq(l.top[0].args, 0); /* the reader's, gone by then */
}
END_TEST

/* An NVTX range is recorded when it ends, at the depth of the calls it
 * encloses: those are not top-level, and are its children. */
START_TEST(nvtx_range_recorded_at_its_end)
{
    const struct tb_ev ev[] = {TB_CALL(F_WORK, 10, 20, 0), TB_CALL(F_WORK, 30, 40, 0),
                               TB_CALL(F_NVTX, 5, 50, 0, S_RANGE), TB_CALL(F_WORK, 60, 70, 0)};
    tb_python_calls(trace, &PY, ev, 4, NULL, 0, 0);
    struct log l;
    run_pass(&l, NULL);
    ck_assert_int_eq(l.begins, 1); /* nested as they came: one read */
    ck_assert_int_eq(l.ncall, 4);
    seen_is(&l.call[2], 2, 5, 50, 20);
    ck_assert_int_eq(l.ntop, 2);
    ck_assert_uint_eq(l.top[0].seq, 2);
    ck_assert_uint_eq(l.top[1].seq, 3);
}
END_TEST

/* Calls a process died inside, written last, outermost first: taken in
 * innermost first, each ending where the process did (not at the end the
 * agent wrote), the completed call inside them their child. */
START_TEST(process_died_inside_calls)
{
    const struct tb_ev ev[] = {TB_CALL(F_WORK, 300, 400, 2)};
    const struct tb_ev open[] = {TB_OPEN(F_TORCH, 100, 450, 0, TB_LABEL(S_STEP)),
                                 TB_OPEN(F_WORK, 200, 450, 1)};
    tb_python_calls(trace, &PY, ev, 1, open, 2, 900);
    struct log l;
    uint64_t nopen;
    run_pass(&l, &nopen);
    ck_assert_int_eq(l.begins, 1);
    ck_assert_int_eq(l.ncall, 3);
    seen_is(&l.call[0], 0, 300, 400, 0);
    seen_is(&l.call[1], 2, 200, 900, 100);
    ck_assert_uint_eq(l.call[1].flags, OPP_PASS_OPEN);
    seen_is(&l.call[2], 1, 100, 900, 700);
    ck_assert_uint_eq(l.call[2].flags, OPP_PASS_OPEN | OPP_PASS_LABEL);
    ck_assert_uint_eq(l.call[1].nkids, 1);
    ck_assert_uint_eq(l.call[2].nkids, 1);
    ck_assert_uint_eq(l.call[2].nargs, 4); /* kept with it until the end */
    ck_assert_int_eq(l.call[2].args, 1);
    ck_assert_int_eq(l.ntop, 1);
    ck_assert_uint_eq(l.top[0].seq, 1);
    ck_assert_uint_eq(nopen, 2);
}
END_TEST

/* torch folds an only child of its name into it: the parent names it and
 * has its children's time; a call with two children of its name folds
 * none. The folded child's GPU work (by its external id) is the parent's;
 * the calls a process died inside are counted less the folded one. */
START_TEST(torch_same_name_fold)
{
    const struct tb_ev ev[] = {TB_CALL(F_LAUNCH, 200, 300, 2, TB_API(101, 211)),
                               TB_CALL(F_TORCH, 150, 450, 1, TB_TORCH(S_MM, 6)),
                               TB_CALL(F_TORCH, 100, 500, 0, TB_TORCH(S_MM, 5)),
                               TB_CALL(F_TORCH, 1100, 1200, 1, TB_TORCH(S_MM, 7)),
                               TB_CALL(F_TORCH, 1300, 1400, 1, TB_TORCH(S_MM, 8)),
                               TB_CALL(F_TORCH, 1000, 1500, 0, TB_TORCH(S_MM, 9))};
    const struct tb_ev open[] = {TB_OPEN(F_TORCH, 2000, 2000, 0, TB_TORCH(S_MM, 10)),
                                 TB_OPEN(F_TORCH, 2100, 2100, 1, TB_TORCH(S_MM, 0))};
    struct tb b;
    tb_open_python(&b, trace, &PY);
    tb_put_events(&b, 0, ev, 6);
    tb_put_events(&b, 0, open, 2);
    tb_python_strings(&b, &PY);
    tb_kernel(&b, .name = S_GEMM, .start = 1000, .end = 1100, .stream = 7, .corr = 101);
    tb_kernel(&b, .name = S_GEMM, .start = 2000, .end = 2010, .stream = 7, .corr = 201);
    tb_extcorr(&b, OPP_EXTCORR_KIND, 6, 201);
    tb_gpu_chunk(&b);
    tb_process_end(&b, 0, OPP_END_LOST, 3000);
    tb_end(&b);
    struct log l;
    uint64_t nopen;
    run_pass(&l, &nopen);
    ck_assert_int_eq(l.begins, 1);
    ck_assert_int_eq(l.ncall, 8);
    seen_is(&l.call[1], 1, 150, 450, 100);
    ck_assert_uint_eq(l.call[1].folded, OPP_PASS_NONE);
    seen_is(&l.call[2], 2, 100, 500, 100); /* the launch, its folded child's child */
    ck_assert_uint_eq(l.call[2].folded, 1);
    ck_assert_uint_eq(l.call[2].nkids, 1); /* the one it folds */
    ck_assert_uint_eq(l.call[2].arg3, 5);
    seen_is(&l.call[5], 5, 1000, 1500, 200);
    ck_assert_uint_eq(l.call[5].folded, OPP_PASS_NONE);
    ck_assert_uint_eq(l.call[5].nkids, 2);
    seen_is(&l.call[6], 7, 2100, 3000, 0); /* died inside both: the inner folds */
    seen_is(&l.call[7], 6, 2000, 3000, 0);
    ck_assert_uint_eq(l.call[7].folded, 7);
    ck_assert_uint_eq(l.call[6].arg3, 0);
    ck_assert_uint_eq(l.call[7].arg3, 10);
    ck_assert_uint_eq(l.call[7].nkids, 1);
    ck_assert_uint_eq(nopen, 1);
    ck_assert_int_eq(l.nowned, 2);
    ck_assert_uint_eq(l.owner_of[1], 0 + 1); /* the launch, by correlation id */
    ck_assert_uint_eq(l.owner_of[2], 2 + 1); /* ext 6 -> the parent of the folded mm */
}
END_TEST

/* GPU records written after the process ended (a late flush) go to the
 * calls that launched them; an op of no call to none. */
START_TEST(late_gpu_records_joined)
{
    struct tb b;
    tb_open_python(&b, trace, &PY);
    tb_events(&b, TB_CALL(F_LAUNCH, 100, 200, 1, TB_API(101, 211)),
              TB_CALL(F_TORCH, 50, 300, 0, TB_TORCH(S_MM, 0)),
              TB_CALL(F_LAUNCH, 400, 500, 0, TB_API(102, 211)));
    tb_string(&b, S_MM, "aten::mm");
    tb_process_end(&b, 0, OPP_END_EXITED, 600);
    tb_at(&b, 0, 10);
    tb_string(&b, S_GEMM, "gemm");
    tb_kernel(&b, .name = S_GEMM, .start = 1000, .end = 1100, .stream = 7, .corr = 101);
    tb_kernel(&b, .name = S_GEMM, .start = 2000, .end = 2050, .stream = 7, .corr = 102);
    tb_kernel(&b, .name = S_GEMM, .start = 3000, .end = 3010, .stream = 7, .corr = 999);
    tb_gpu_chunk(&b);
    tb_end(&b);
    struct log l;
    run_pass(&l, NULL);
    ck_assert_int_eq(l.nowned, 3);
    ck_assert_uint_eq(l.owner_of[1], 0 + 1);
    ck_assert_uint_eq(l.owner_of[2], 2 + 1);
    ck_assert_uint_eq(l.owner_of[3], 0); /* corr 999: no call */
}
END_TEST

/* A chunk written late: a call inside one handed over before it. The
 * thread is kept whole and the read made again: each call after its
 * children as the loaded tree nests them, the top-level ones in time
 * order. */
START_TEST(out_of_order_thread_kept_whole)
{
    const struct tb_ev ev[] = {TB_CALL(F_WORK, 1000, 2000, 0), TB_CALL(F_WORK, 2100, 2900, 0)};
    const struct tb_ev late[] = {TB_CALL(F_WORK, 1200, 1500, 1), TB_CALL(F_WORK, 3000, 4000, 0)};
    tb_python_calls(trace, &PY, ev, 2, late, 2, 0);
    struct log l;
    run_pass(&l, NULL);
    ck_assert_int_eq(l.begins, 2);
    ck_assert_int_eq(l.ncall, 4);
    seen_is(&l.call[0], 2, 1200, 1500, 0);
    seen_is(&l.call[1], 0, 1000, 2000, 300);
    seen_is(&l.call[2], 1, 2100, 2900, 0);
    seen_is(&l.call[3], 3, 3000, 4000, 0);
    ck_assert_uint_eq(l.call[0].nkids, 0);
    ck_assert_uint_eq(l.call[1].nkids, 1);
    ck_assert_uint_eq(l.call[2].nkids, 0);
    ck_assert_uint_eq(l.call[1].fn, F_WORK);
    ck_assert_uint_eq(l.call[1].nargs, 0);
    ck_assert_int_eq(l.ntop, 3);
    ck_assert_uint_eq(l.top[0].seq, 0);
    ck_assert_uint_eq(l.top[1].seq, 1);
    ck_assert_uint_eq(l.top[2].seq, 3);
}
END_TEST

static void order(struct log *l, char what)
{
    ck_assert_int_lt(l->norder, 63);
    l->order[l->norder++] = what;
}

static int on_read(void *ctx, const struct opp_pass_call *c)
{
    order(ctx, 'C');
    return on_call(ctx, c);
}

static int on_process(void *ctx, uint32_t proc, const struct opp_tr_process *tp)
{
    ck_assert_uint_eq(proc, 0);
    ck_assert_uint_eq(tp->pid, 10);
    order(ctx, 'P');
    return 0;
}

static int on_thread(void *ctx, uint32_t thread, const char *name)
{
    struct log *l = ctx;
    ck_assert_uint_eq(thread, 0);
    ck_assert_int_lt(l->nnames, 4);
    l->names[l->nnames++] = strdup(name);
    order(ctx, 'T');
    return 0;
}

static int on_record(void *ctx, uint32_t proc, const struct opp_gpu_rec *g)
{
    struct log *l = ctx;
    if (g->type == OPP_GPU_KERNEL)
        l->kernel_start = g->f[OPP_GF_START];
    order(ctx, g->type == OPP_GPU_KERNEL ? 'K' : g->type == OPP_GPU_STRING ? 'S' : '?');
    return 0;
}

/* The records the pass has no hook for, to rest: F funcs, I info, D
 * dropped, E process end, X process status. */
static int on_funcs(void *ctx, uint32_t proc, uint32_t count, const struct opp_tr_func *f)
{
    ck_assert_uint_eq(proc, 0);
    ck_assert_uint_gt(count, F_WORK);
    ck_assert_str_eq(f[F_WORK].name, "cblas_dgemm");
    order(ctx, 'F');
    return 0;
}

static int on_info(void *ctx, uint32_t proc, uint32_t count, const char *const *keys,
                   const char *const *values)
{
    ck_assert_uint_eq(proc, 0);
    ck_assert_uint_eq(count, 1);
    ck_assert_str_eq(keys[0], "RANK");
    ck_assert_str_eq(values[0], "3");
    order(ctx, 'I');
    return 0;
}

static int on_dropped(void *ctx, uint32_t proc, uint32_t tid, uint64_t count, uint32_t why)
{
    ck_assert_uint_eq(why, OPP_DROP_FULL);
    ck_assert_uint_eq(proc, 0);
    ck_assert_uint_eq(tid, 10);
    ck_assert_uint_eq(count, 7);
    order(ctx, 'D');
    return 0;
}

static int on_process_end(void *ctx, uint32_t proc, uint32_t how, uint64_t end_ns)
{
    ck_assert_uint_eq(proc, 0);
    ck_assert_uint_eq(how, OPP_END_LOST);
    ck_assert_uint_eq(end_ns, 5000);
    order(ctx, 'E');
    return 0;
}

static int on_process_status(void *ctx, uint32_t proc, uint32_t how, uint32_t code)
{
    ck_assert_uint_eq(proc, 0);
    ck_assert_uint_eq(how, OPP_EXIT_SIGNAL);
    ck_assert_uint_eq(code, 9);
    order(ctx, 'X');
    return 0;
}

/* A consumer of the files' order (the Chrome export's): one read, nothing
 * nested, kept whole or folded, each record as the file has it: the
 * process, the thread's names, each call as read (a chunk written late,
 * which a nesting read keeps whole, in its place; calls a process died
 * inside outermost first, ended where the process ended), GPU records
 * among them, and the records it has no hook for to rest as they are. */
START_TEST(files_order_as_written)
{
    const struct tb_ev ev[] = {TB_CALL(F_WORK, 1000, 2000, 0), TB_CALL(F_WORK, 2100, 2900, 0)};
    const struct tb_ev late[] = {TB_CALL(F_WORK, 1200, 1500, 1)};
    const struct tb_ev open[] = {TB_OPEN(F_TORCH, 3000, 3450, 0, TB_TORCH(S_MM, 1)),
                                 TB_OPEN(F_TORCH, 3100, 3450, 1, TB_TORCH(S_MM, 2))};
    struct tb b;
    tb_open_python(&b, trace, &PY);
    tb_info(&b, "RANK", "3");
    tb_put_events(&b, 0, ev, 2);
    tb_kernel(&b, .name = S_GEMM, .start = 1100, .end = 1300, .stream = 7, .corr = 101);
    tb_thread(&b, 10, "renamed");
    tb_dropped(&b, 7);
    tb_put_events(&b, 0, late, 1);
    tb_put_events(&b, 0, open, 2);
    tb_string(&b, S_MM, "aten::mm");
    tb_gpu_chunk(&b);
    tb_process_end(&b, 0, OPP_END_LOST, 5000);
    tb_process_status(&b, 0, OPP_EXIT_SIGNAL, 9);
    tb_end(&b);
    struct log l = {0};
    char err[512] = "";
    enum opp_stream_refused why;
    struct opp_pass *p = opp_pass_open((const char *[]){trace}, 1, &why, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    const struct opp_pass_consumer c = {
        .ctx = &l,
        .begin = on_begin,
        .read = on_read,
        .process = on_process,
        .thread = on_thread,
        .record = on_record,
        .rest = &(const struct opp_tr_visitor){.funcs = on_funcs,
                                               .info = on_info,
                                               .dropped = on_dropped,
                                               .process_end = on_process_end,
                                               .process_status = on_process_status}};
    ck_assert_msg(opp_pass_run(p, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(opp_pass_model(p)->open_events, 2); /* none folded */
    opp_pass_free(p);
    ck_assert_int_eq(l.begins, 1);
    ck_assert_str_eq(l.order, "PFTICCKTDCCCSEX");
    ck_assert_int_eq(l.ncall, 5);
    seen_is(&l.call[0], 0, 1000, 2000, 0);
    seen_is(&l.call[1], 1, 2100, 2900, 0);
    seen_is(&l.call[2], 2, 1200, 1500, 0);
    seen_is(&l.call[3], 3, 3000, 5000, 0);
    seen_is(&l.call[4], 4, 3100, 5000, 0);
    ck_assert_uint_eq(l.call[3].flags, OPP_PASS_OPEN);
    ck_assert_uint_eq(l.call[4].folded, OPP_PASS_NONE);
    ck_assert_uint_eq(l.call[4].arg3, 2);
    ck_assert_uint_eq(l.ntop, 0);
    ck_assert_uint_eq(l.kernel_start, 1100);
    ck_assert_int_eq(l.nnames, 2);
    ck_assert_str_eq(l.names[0], "main");
    ck_assert_str_eq(l.names[1], "renamed");
    free((char *)l.names[0]);
    free((char *)l.names[1]);
}
END_TEST

/* A call that took no time, settled as top-level, where the next one
 * begins: the loaded tree puts the longer first and nests the instant in
 * it, so the thread is kept whole and the read made again, not the two
 * handed over as top-level siblings (the fuzzer's trace: the table by
 * stack had one row where the loaded model had two). */
START_TEST(instant_where_the_next_call_begins)
{
    const struct tb_ev ev[] = {TB_CALL(F_WORK, 1000, 1000, 0), TB_CALL(F_WORK, 1000, 2000, 0)};
    tb_python_calls(trace, &PY, ev, 2, NULL, 0, 0);
    struct log l;
    run_pass(&l, NULL);
    ck_assert_int_eq(l.begins, 2);
    ck_assert_int_eq(l.ncall, 2);
    seen_is(&l.call[0], 0, 1000, 1000, 0);
    seen_is(&l.call[1], 1, 1000, 2000, 0);
    ck_assert_uint_eq(l.call[0].nkids, 0);
    ck_assert_uint_eq(l.call[1].nkids, 1);
    ck_assert_int_eq(l.ntop, 1);
    ck_assert_uint_eq(l.top[0].seq, 1);
}
END_TEST

Suite *suite_pass(void)
{
    Suite *s = suite_create("pass");
    TCase *tc = tcase_create("pass");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, children_first_with_their_time);
    tcase_add_test(tc, nvtx_range_recorded_at_its_end);
    tcase_add_test(tc, process_died_inside_calls);
    tcase_add_test(tc, torch_same_name_fold);
    tcase_add_test(tc, late_gpu_records_joined);
    tcase_add_test(tc, out_of_order_thread_kept_whole);
    tcase_add_test(tc, instant_where_the_next_call_begins);
    tcase_add_test(tc, files_order_as_written);
    suite_add_tcase(s, tc);
    return s;
}
