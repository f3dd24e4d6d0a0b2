/* The collector's live aggregate for `opprof top` (collector/top_agg.c) and
 * its snapshot on the wire (common/topsnap.c): exact calls, self and
 * total time, memory, GPU time and steps from calls given as the
 * collector drains them (each thread's in the order they returned). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "gpu.h"
#include "top_agg.h"
#include "ring.h"
#include "trace.h"

enum { F_OUTER, F_INNER, F_TORCH, F_MEM, F_NVTX, F_CUDA, NF };

static const struct opp_func_desc funcs[NF] = {
    [F_OUTER] = {OPP_OP_PLAIN, 0, "blas", "outer"},
    [F_INNER] = {OPP_OP_PLAIN, 0, "blas", "inner"},
    [F_TORCH] = {OPP_OP_TORCH, 0, "torch", "torch_op"},
    [F_MEM] = {OPP_OP_MEMORY, 0, "libc", "malloc"},
    [F_NVTX] = {OPP_OP_NVTX, 0, "nvtx", "nvtx_range"},
    [F_CUDA] = {OPP_OP_CUDA_API, 0, "cudart", "cudaLaunchKernel"},
};

static struct opp_top_agg *L;
static struct opp_top_snap snap;

static void setup(void)
{
    L = opp_top_agg_new();
    ck_assert_ptr_nonnull(L);
    ck_assert_int_eq(opp_top_agg_proc(L, 1, OPP_CLOCK_MONOTONIC, NF, funcs), 0);
    memset(&snap, 0, sizeof snap);
}

static void teardown(void)
{
    opp_top_agg_free(L);
}

static void call(uint32_t tid, uint32_t fn, uint32_t depth, uint64_t b, uint64_t e)
{
    opp_top_agg_call(L, 1, tid, fn, depth, b, e, 0, NULL, 0);
}

static void string(uint64_t id, const char *s)
{
    struct opp_gpu_rec g = {
        .type = OPP_GPU_STRING, .nfields = 1, .f = {id}, .str = s, .slen = (uint32_t)strlen(s)};
    opp_top_agg_gpu(L, 1, &g);
}

static void torch_op(uint32_t tid, uint32_t depth, uint64_t name, uint64_t scope, uint64_t b,
                     uint64_t e)
{
    uint64_t a[OPP_COL_TORCH_FIRST] = {name, scope, 0};
    opp_top_agg_call(L, 1, tid, F_TORCH, depth, b, e, OPP_COL_TORCH_FIRST, a, 0);
}

static void nvtx_range(uint32_t tid, uint64_t msg, uint64_t b, uint64_t e)
{
    uint64_t a[OPP_COL_NVTX_COLS] = {[OPP_COL_NVTX_MSG] = msg};
    opp_top_agg_call(L, 1, tid, F_NVTX, 0, b, e, OPP_COL_NVTX_COLS, a, 1);
}

static void memory(uint32_t tid, uint32_t depth, uint64_t op, uint64_t addr, uint64_t bytes)
{
    uint64_t a[OPP_COL_MEM_COLS] = {op, addr, bytes};
    opp_top_agg_call(L, 1, tid, F_MEM, depth, 5, 5, OPP_COL_MEM_COLS, a, 0);
}

static const struct opp_top_row *row(const char *name)
{
    ck_assert_int_eq(opp_top_agg_snapshot(L, &snap), 0);
    for (size_t i = 0; i < snap.nrows; i++)
        if (!strcmp(snap.rows[i].name, name))
            return &snap.rows[i];
    return NULL;
}

START_TEST(self_time_is_duration_less_direct_children)
{
    /* outer [0,100] holds inner [10,20] and inner [30,50], which holds inner [35,40] */
    call(7, F_INNER, 1, 10, 20);
    call(7, F_INNER, 2, 35, 40);
    call(7, F_INNER, 1, 30, 50);
    call(7, F_OUTER, 0, 0, 100);
    const struct opp_top_row *o = row("outer");
    ck_assert_ptr_nonnull(o);
    ck_assert_uint_eq(o->calls, 1);
    ck_assert_uint_eq(o->total_ns, 100);
    ck_assert_uint_eq(o->self_ns, 70);
    const struct opp_top_row *i = row("inner");
    ck_assert_uint_eq(i->calls, 3);
    ck_assert_uint_eq(i->total_ns, 10 + 5 + 20);
    ck_assert_uint_eq(i->self_ns, 10 + 5 + 15);
    ck_assert_str_eq(i->lib, "blas");
    ck_assert_uint_eq(snap.nrows, 2);
    ck_assert_str_eq(snap.rows[0].name, "outer"); /* by CPU total */
}
END_TEST

START_TEST(threads_keep_their_own_children)
{
    /* thread 8's depth-1 call is no child of thread 7's depth-0 call */
    call(8, F_INNER, 1, 10, 40);
    call(7, F_OUTER, 0, 0, 100);
    call(8, F_OUTER, 0, 0, 50);
    const struct opp_top_row *o = row("outer");
    ck_assert_uint_eq(o->calls, 2);
    ck_assert_uint_eq(o->total_ns, 150);
    ck_assert_uint_eq(o->self_ns, 100 + 20);
}
END_TEST

START_TEST(torch_ops_named_by_strings_that_come_later)
{
    torch_op(7, 0, 0x80000001u, OPP_TORCH_SCOPE_FUNCTION, 0, 10);
    torch_op(7, 0, 0x80000002u, OPP_TORCH_SCOPE_FUNCTION, 10, 30);
    torch_op(7, 0, 0x80000001u, OPP_TORCH_SCOPE_FUNCTION, 30, 35);
    ck_assert_ptr_null(row("aten::mm"));
    string(0x80000001u, "aten::mm");
    string(0x80000002u, "aten::add");
    const struct opp_top_row *mm = row("aten::mm");
    ck_assert_ptr_nonnull(mm);
    ck_assert_uint_eq(mm->calls, 2);
    ck_assert_uint_eq(mm->total_ns, 15);
    ck_assert_uint_eq(row("aten::add")->calls, 1);
    ck_assert_str_eq(row("aten::add")->lib, "torch");
}
END_TEST

/* torch.profiler's fold: an operator whose only child has its name is
 * one call, the child's self time its own; two such children are not. */
START_TEST(torch_fold_of_an_only_child_of_the_same_name)
{
    string(0x80000001u, "aten::div_");
    string(0x80000002u, "aten::mul_");
    torch_op(7, 2, 0x80000002u, OPP_TORCH_SCOPE_FUNCTION, 12, 14);
    torch_op(7, 1, 0x80000001u, OPP_TORCH_SCOPE_FUNCTION, 10, 20);
    memory(7, 1, OPP_MEM_ALLOC, 0x10, 8); /* memory aside */
    torch_op(7, 0, 0x80000001u, OPP_TORCH_SCOPE_FUNCTION, 5, 30);
    const struct opp_top_row *dv = row("aten::div_");
    ck_assert_uint_eq(dv->calls, 1);
    ck_assert_uint_eq(dv->total_ns, 25);
    ck_assert_uint_eq(dv->self_ns, 23); /* 25 less its grandchild's 2 */
    ck_assert_uint_eq(row("aten::mul_")->calls, 1);
    /* the time outside modules counts the folded child's self time once */
    string(0x80000009u, "nn.Module: Net_0");
    torch_op(7, 0, 0x80000009u, OPP_TORCH_SCOPE_MODULE, 30, 31);
    ck_assert_uint_eq(row("(outside nn.Module)")->layer_ns, 25);
    /* two children of the same name: three calls */
    torch_op(7, 1, 0x80000001u, OPP_TORCH_SCOPE_FUNCTION, 40, 45);
    torch_op(7, 1, 0x80000001u, OPP_TORCH_SCOPE_FUNCTION, 50, 55);
    torch_op(7, 0, 0x80000001u, OPP_TORCH_SCOPE_FUNCTION, 35, 60);
    dv = row("aten::div_");
    ck_assert_uint_eq(dv->calls, 4);
    ck_assert_uint_eq(dv->total_ns, 25 + 35);
    ck_assert_uint_eq(dv->self_ns, 23 + 25);
}
END_TEST

/* A layer's time: the self time of the calls inside an nn.Module forward
 * and in no module inside it; what is inside none, the outside row's. */
START_TEST(layers_hold_the_self_time_inside_them)
{
    string(0x80000001u, "nn.Module: Net_0");
    string(0x80000002u, "nn.Module: Linear_0");
    string(0x80000003u, "aten::relu");
    string(0x80000004u, "aten::mm");
    torch_op(7, 1, 0x80000003u, OPP_TORCH_SCOPE_FUNCTION, 10, 20); /* relu: self 10 */
    torch_op(7, 2, 0x80000004u, OPP_TORCH_SCOPE_FUNCTION, 30, 35); /* mm: self 5 */
    torch_op(7, 1, 0x80000002u, OPP_TORCH_SCOPE_MODULE, 25, 40);   /* Linear: self 10 */
    torch_op(7, 0, 0x80000001u, OPP_TORCH_SCOPE_MODULE, 0, 50);    /* Net: self 25 */
    torch_op(7, 0, 0x80000003u, OPP_TORCH_SCOPE_FUNCTION, 60, 67); /* outside: 7 */
    ck_assert_uint_eq(row("nn.Module: Net_0")->layer_ns, 25 + 10);
    ck_assert_uint_eq(row("nn.Module: Net_0")->module, 1);
    ck_assert_uint_eq(row("nn.Module: Linear_0")->layer_ns, 10 + 5);
    ck_assert_uint_eq(row("aten::relu")->module, 0);
    const struct opp_top_row *o = row("(outside nn.Module)");
    ck_assert_ptr_nonnull(o);
    ck_assert_uint_eq(o->layer_ns, 7);
    ck_assert_uint_eq(o->module, 2);
    ck_assert_uint_eq(o->calls, 0);
}
END_TEST

/* A DataLoader worker (a process of no nn.Module) beside the training
 * process: its self time is outside every layer, so in the outside rows
 * (one a process), which with the layers add up to the whole self time. */
START_TEST(layers_and_outside_add_up_over_processes)
{
    ck_assert_int_eq(opp_top_agg_proc(L, 2, OPP_CLOCK_MONOTONIC, NF, funcs), 0);
    string(0x80000001u, "nn.Module: Net_0");
    string(0x80000003u, "aten::relu");
    torch_op(7, 1, 0x80000003u, OPP_TORCH_SCOPE_FUNCTION, 10, 20); /* relu: self 10 */
    torch_op(7, 0, 0x80000001u, OPP_TORCH_SCOPE_MODULE, 0, 50);    /* Net: self 40 */
    torch_op(7, 0, 0x80000003u, OPP_TORCH_SCOPE_FUNCTION, 60, 67); /* outside: 7 */
    opp_top_agg_call(L, 2, 9, F_OUTER, 0, 0, 40, 0, NULL, 0);     /* the worker's: 40 */
    ck_assert_int_eq(opp_top_agg_snapshot(L, &snap), 0);
    uint64_t outside = 0, layers = 0, self = 0;
    size_t nout = 0;
    for (size_t i = 0; i < snap.nrows; i++) {
        const struct opp_top_row *r = &snap.rows[i];
        if (r->module == 2)
            outside += r->layer_ns, nout++;
        else if (r->module == 1)
            layers += r->layer_ns;
        self += r->self_ns;
    }
    ck_assert_uint_eq(nout, 2);
    ck_assert_uint_eq(outside, 7 + 40);
    ck_assert_uint_eq(layers, 50);
    ck_assert_uint_eq(outside + layers, self);
}
END_TEST

START_TEST(memory_goes_to_the_call_it_was_made_in)
{
    memory(7, 1, OPP_MEM_ALLOC, 0x1000, 1000);
    memory(7, 1, OPP_MEM_ALLOC, 0x2000, 500);
    memory(7, 1, OPP_MEM_FREE, 0x1000, 0); /* its size is its allocation's */
    call(7, F_OUTER, 0, 0, 100);
    ck_assert_int_eq(row("outer")->mem, 500);
    ck_assert_ptr_null(row("[memory]")); /* inside an operator: no row of its own */
    call(7, F_OUTER, 0, 200, 300);       /* nothing allocated in this one */
    ck_assert_int_eq(row("outer")->mem, 500);
    memory(7, 0, OPP_MEM_ALLOC, 0x3000, 64); /* outside any: a row, as torch has it */
    const struct opp_top_row *m = row("[memory]");
    ck_assert_uint_eq(m->calls, 1);
    ck_assert_int_eq(m->mem, 64);
}
END_TEST

START_TEST(gpu_time_goes_to_the_launching_call)
{
    uint64_t a[OPP_COL_CUDA_COLS] = {0, 7, 0}; /* status, correlation id 7, cbid */
    opp_top_agg_call(L, 1, 7, F_CUDA, 0, 0, 10, OPP_COL_CUDA_COLS, a, 0);
    struct opp_gpu_rec k = {.type = OPP_GPU_KERNEL, .nfields = OPP_GF_K_COUNT};
    k.f[OPP_GF_START] = 100;
    k.f[OPP_GF_END] = 140;
    k.f[OPP_GF_CORRELATION] = 7;
    opp_top_agg_gpu(L, 1, &k);
    k.f[OPP_GF_CORRELATION] = 9; /* no call of ours: in the total only */
    opp_top_agg_gpu(L, 1, &k);
    ck_assert_uint_eq(row("cudaLaunchKernel")->gpu_ns, 40);
    ck_assert_uint_eq(snap.gpu_ns, 80);
}
END_TEST

/* As on an H200 training run: thousands of launches before CUPTI hands
 * their kernels over (a flush every 200 ms). Each kernel still finds its
 * launch: correlation ids are consecutive, so the last CORR_SLOTS of a
 * process never share a slot. */
START_TEST(gpu_time_of_many_launches_before_a_flush)
{
    for (uint64_t c = 1; c <= 6000; c++) {
        uint64_t a[OPP_COL_CUDA_COLS] = {0, c, 0};
        opp_top_agg_call(L, 1, 7, F_CUDA, 0, c * 10, c * 10 + 5, OPP_COL_CUDA_COLS, a, 0);
    }
    struct opp_gpu_rec k = {.type = OPP_GPU_KERNEL, .nfields = OPP_GF_K_COUNT};
    for (uint64_t c = 1; c <= 6000; c++) {
        k.f[OPP_GF_START] = c * 100;
        k.f[OPP_GF_END] = c * 100 + 3;
        k.f[OPP_GF_CORRELATION] = c;
        opp_top_agg_gpu(L, 1, &k);
    }
    ck_assert_uint_eq(row("cudaLaunchKernel")->gpu_ns, 18000);
    ck_assert_uint_eq(snap.gpu_ns, 18000);
}
END_TEST

START_TEST(profiler_steps_are_their_ranges)
{
    string(0x80000005u, "ProfilerStep#3");
    string(0x80000006u, "ProfilerStep#4");
    nvtx_range(7, 0x80000005u, 0, 10);
    call(7, F_INNER, 0, 12, 14);
    nvtx_range(7, 0x80000006u, 10, 30);
    /* one row, as the report's (torch's key_averages: ProfilerStep*) */
    const struct opp_top_row *r = row("ProfilerStep*");
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->calls, 2);
    ck_assert_uint_eq(r->total_ns, 30);
    ck_assert_uint_eq(r->self_ns, 0); /* a range has no self time */
    ck_assert_ptr_null(row("ProfilerStep#3"));
    ck_assert_ptr_null(row("ProfilerStep#4"));
    ck_assert_uint_eq(snap.nrows, 2); /* and inner */
    ck_assert_str_eq(snap.step_name, "ProfilerStep#N");
    ck_assert_uint_eq(snap.steps, 2);
    ck_assert_uint_eq(snap.nlat, 2);
    ck_assert_uint_eq(snap.lat_ns[0], 10);
    ck_assert_uint_eq(snap.lat_ns[1], 20);
}
END_TEST

/* torch.profiler's steps: a string id each (ProfilerStep#N). They count
 * into one row as they come, whichever of a step's string and its call
 * comes first: the rows are the names', not one a step, and each step is
 * counted. */
START_TEST(profiler_steps_count_into_one_row_as_they_come)
{
    enum { STEPS = 3000 };
    string(0x80000001u, "aten::add");
    string(0x80000002u, "aten::empty");
    uint64_t total = 0;
    for (uint64_t i = 0; i < STEPS; i++) {
        uint64_t id = 0x80001000u + i, b = i * 100, e = b + 50 + i % 7;
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%u", (unsigned)i);
        if (i % 2)
            string(id, name);
        torch_op(7, 1, 0x80000001u, OPP_TORCH_SCOPE_FUNCTION, b + 10, b + 20);
        torch_op(7, 1, 0x80000002u, OPP_TORCH_SCOPE_FUNCTION, b + 30, b + 33);
        torch_op(7, 0, id, OPP_TORCH_SCOPE_USER, b, e);
        if (!(i % 2)) /* after its call */
            string(id, name);
        total += e - b;
    }
    /* aten::add, aten::empty, the step row, and the time outside nn.Module's */
    ck_assert_uint_eq(opp_top_agg_rows(L), 4);
    const struct opp_top_row *r = row("ProfilerStep*");
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->calls, STEPS);
    ck_assert_uint_eq(r->total_ns, total);
    ck_assert_uint_eq(r->self_ns, total - STEPS * (10 + 3));
    ck_assert_str_eq(r->lib, "torch");
    ck_assert_uint_eq(row("aten::add")->calls, STEPS);
    ck_assert_uint_eq(snap.nrows, 3);
    ck_assert_str_eq(snap.step_name, "ProfilerStep#N");
    ck_assert_uint_eq(snap.steps, STEPS);
}
END_TEST

/* A range pushed with a NULL message (string id 0): named as the report
 * names it, not as one whose name is still to come. */
START_TEST(nvtx_range_without_message_is_unnamed)
{
    nvtx_range(7, 0, 0, 10);
    nvtx_range(7, 0x80000007u, 10, 30); /* its string not come */
    const struct opp_top_row *r = row("(unnamed range)");
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->calls, 1);
    ck_assert_uint_eq(r->total_ns, 10);
    r = row("(name not come yet)");
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->calls, 1);
    ck_assert_uint_eq(r->total_ns, 20);
    ck_assert_uint_eq(snap.nrows, 2);
}
END_TEST

START_TEST(optimizer_steps_end_iterations)
{
    string(0x80000001u, "Optimizer.step#SGD.step");
    /* a wrapping optimizer's step holds its inner one's: one step, not two */
    torch_op(7, 0, 0x80000001u, OPP_TORCH_SCOPE_USER, 80, 100);
    torch_op(7, 1, 0x80000001u, OPP_TORCH_SCOPE_USER, 230, 240);
    torch_op(7, 0, 0x80000001u, OPP_TORCH_SCOPE_USER, 220, 250);
    torch_op(7, 0, 0x80000001u, OPP_TORCH_SCOPE_USER, 400, 450);
    call(7, F_OUTER, 0, 500, 600);
    ck_assert_ptr_nonnull(row("Optimizer.step#SGD.step"));
    ck_assert_str_eq(snap.step_name, "Optimizer.step#N");
    ck_assert_uint_eq(snap.steps, 3);
    ck_assert_uint_eq(snap.nlat, 2); /* the first's start is not known */
    ck_assert_uint_eq(snap.lat_ns[0], 150);
    ck_assert_uint_eq(snap.lat_ns[1], 200);
}
END_TEST

/* An optimizer step drained from the ring before its name's string came
 * on the socket is a step once the name comes (how long it took unknown). */
START_TEST(steps_before_their_name_counted)
{
    torch_op(7, 0, 0x80000001u, OPP_TORCH_SCOPE_USER, 80, 100);
    string(0x80000001u, "Optimizer.step#SGD.step");
    torch_op(7, 0, 0x80000001u, OPP_TORCH_SCOPE_USER, 220, 250);
    torch_op(7, 0, 0x80000001u, OPP_TORCH_SCOPE_USER, 400, 450);
    call(7, F_OUTER, 0, 500, 600);
    ck_assert_ptr_nonnull(row("Optimizer.step#SGD.step")); /* the snapshot */
    ck_assert_str_eq(snap.step_name, "Optimizer.step#N");
    ck_assert_uint_eq(snap.steps, 3);
    ck_assert_uint_eq(snap.nlat, 1); /* the third, after the second's end */
    ck_assert_uint_eq(snap.lat_ns[0], 200);
}
END_TEST

/* Every optimizer step drained before the string came (a slow collector
 * reads the socket after the ring of a short run's last iterations): no
 * call comes after the name, and each is a step all the same. */
START_TEST(steps_all_before_their_name_counted)
{
    torch_op(7, 0, 0x80000001u, OPP_TORCH_SCOPE_USER, 80, 100);
    torch_op(7, 0, 0x80000001u, OPP_TORCH_SCOPE_USER, 220, 250);
    torch_op(7, 0, 0x80000001u, OPP_TORCH_SCOPE_USER, 400, 450);
    torch_op(7, 0, 0x80000002u, OPP_TORCH_SCOPE_USER, 500, 550);
    string(0x80000001u, "Optimizer.step#SGD.step");
    string(0x80000002u, "Optimizer.zero_grad#SGD.zero_grad");
    const struct opp_top_row *r = row("Optimizer.step#SGD.step");
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->calls, 3);
    ck_assert_str_eq(snap.step_name, "Optimizer.step#N");
    ck_assert_uint_eq(snap.steps, 3);
    ck_assert_uint_eq(snap.nlat, 0); /* how long each took is not known */
}
END_TEST

/* Steps inside a call (the agent's ranges for OPPROF_STEP=torch are at
 * the optimizer's step's depth), half of them drained before their
 * string came: each is a step, as when its string came first. */
START_TEST(profiler_steps_inside_a_call_before_their_name_counted)
{
    enum { STEPS = 10 };
    for (uint64_t i = 0; i < STEPS; i++) {
        uint64_t id = 0x80001000u + i, b = i * 100;
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%u", (unsigned)i);
        if (i % 2)
            string(id, name);
        torch_op(7, 1, id, OPP_TORCH_SCOPE_USER, b + 10, b + 20);
        call(7, F_OUTER, 0, b, b + 50);
        if (!(i % 2)) /* after its call */
            string(id, name);
    }
    const struct opp_top_row *r = row("ProfilerStep*");
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->calls, STEPS);
    ck_assert_str_eq(snap.step_name, "ProfilerStep#N");
    ck_assert_uint_eq(snap.steps, STEPS);
}
END_TEST

START_TEST(tsc_ticks_become_ns)
{
    ck_assert_int_eq(opp_top_agg_proc(L, 2, OPP_CLOCK_TSC, NF, funcs), 0);
    opp_top_agg_clock(L, &(struct opp_clock_sample){.tsc = 1000, .mono_ns = 5000});
    opp_top_agg_clock(L, &(struct opp_clock_sample){.tsc = 3000, .mono_ns = 6000});
    opp_top_agg_call(L, 2, 1, F_OUTER, 0, 10000, 10400, 0, NULL, 0); /* 400 ticks: 200 ns */
    const struct opp_top_row *o = row("outer");
    ck_assert_uint_eq(o->proc, 2);
    ck_assert_uint_eq(o->total_ns, 200);
}
END_TEST

/* A better rate from a later clock sample turns the ticks that came since
 * into ns, not those already shown: without a call, the row stays as it
 * was (the interval between two snapshots is nothing). */
START_TEST(later_rate_does_not_rescale_what_was_shown)
{
    ck_assert_int_eq(opp_top_agg_proc(L, 2, OPP_CLOCK_TSC, NF, funcs), 0);
    opp_top_agg_clock(L, &(struct opp_clock_sample){.tsc = 1000, .mono_ns = 5000});
    opp_top_agg_clock(L, &(struct opp_clock_sample){.tsc = 3000, .mono_ns = 6000});
    opp_top_agg_call(L, 2, 1, F_OUTER, 0, 10000, 10400, 0, NULL, 0); /* 400 ticks: 200 ns */
    ck_assert_uint_eq(row("outer")->total_ns, 200);
    /* 4 ns a tick from here */
    opp_top_agg_clock(L, &(struct opp_clock_sample){.tsc = 4000, .mono_ns = 17000});
    const struct opp_top_row *o = row("outer");
    ck_assert_uint_eq(o->total_ns, 200);
    ck_assert_uint_eq(o->self_ns, 200);
    opp_top_agg_call(L, 2, 1, F_OUTER, 0, 20000, 20100, 0, NULL, 0); /* 100 ticks: 400 ns */
    o = row("outer");
    ck_assert_uint_eq(o->calls, 2);
    ck_assert_uint_eq(o->total_ns, 600);
    ck_assert_uint_eq(o->self_ns, 600);
}
END_TEST

/* An ended process keeps its rows (names and library), not its tables:
 * what comes for it after is not counted. */
START_TEST(ended_process_keeps_its_rows)
{
    torch_op(7, 0, 0x80000001u, OPP_TORCH_SCOPE_FUNCTION, 0, 10);
    string(0x80000001u, "aten::mm");
    call(7, F_INNER, 0, 10, 30);
    opp_top_agg_proc_end(L, 1);
    call(7, F_INNER, 0, 40, 50);
    string(0x80000002u, "aten::add");
    const struct opp_top_row *mm = row("aten::mm");
    ck_assert_ptr_nonnull(mm);
    ck_assert_str_eq(mm->lib, "torch");
    ck_assert_uint_eq(mm->calls, 1);
    const struct opp_top_row *in = row("inner");
    ck_assert_str_eq(in->lib, "blas");
    ck_assert_uint_eq(in->calls, 1);
    ck_assert_uint_eq(in->total_ns, 20);
    ck_assert_uint_eq(snap.nrows, 2);
}
END_TEST

START_TEST(snapshot_reads_back_the_same)
{
    call(7, F_INNER, 1, 10, 20);
    call(7, F_OUTER, 0, 0, 100);
    memory(7, 0, OPP_MEM_ALLOC, 0x10, 64);
    ck_assert_int_eq(opp_top_agg_snapshot(L, &snap), 0);
    snap.now_ns = 123;
    snap.events = 3;
    snap.dropped = 5;
    snap.interrupted = 2;
    snap.procs = 1;
    snap.threads = 2;
    snap.recording = 1;
    static uint8_t msg[4096];
    struct opp_wbuf w;
    opp_wbuf_init(&w, msg, sizeof msg);
    opp_top_put(&w, &snap);
    ck_assert_int_eq(w.overflow, 0);
    struct opp_top_snap got;
    ck_assert_int_eq(opp_top_get(msg, w.len, &got), 0);
    ck_assert_uint_eq(got.now_ns, 123);
    ck_assert_uint_eq(got.events, 3);
    ck_assert_uint_eq(got.dropped, 5);
    ck_assert_uint_eq(got.interrupted, 2);
    ck_assert_uint_eq(got.threads, 2);
    ck_assert_uint_eq(got.nrows, 3);
    ck_assert_uint_eq(got.left_out, 0);
    for (size_t i = 0; i < got.nrows; i++) {
        ck_assert_str_eq(got.rows[i].name, snap.rows[i].name);
        ck_assert_str_eq(got.rows[i].lib, snap.rows[i].lib);
        ck_assert_uint_eq(got.rows[i].calls, snap.rows[i].calls);
        ck_assert_uint_eq(got.rows[i].self_ns, snap.rows[i].self_ns);
        ck_assert_uint_eq(got.rows[i].total_ns, snap.rows[i].total_ns);
        ck_assert_int_eq(got.rows[i].mem, snap.rows[i].mem);
    }
    opp_top_free(&got);
    /* what does not fit is counted; the cut message still reads */
    opp_wbuf_init(&w, msg, 120);
    opp_top_put(&w, &snap);
    ck_assert_int_eq(w.overflow, 0);
    ck_assert_int_eq(opp_top_get(msg, w.len, &got), 0);
    ck_assert_uint_eq(got.nrows + got.left_out, 3);
    ck_assert_uint_lt(got.nrows, 3);
    opp_top_free(&got);
    /* a damaged one is refused */
    ck_assert_int_eq(opp_top_get(msg, w.len - 1, &got), -1);
}
END_TEST

Suite *suite_top_agg(void)
{
    Suite *s = suite_create("top_agg");
    TCase *tc = tcase_create("aggregate");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, self_time_is_duration_less_direct_children);
    tcase_add_test(tc, threads_keep_their_own_children);
    tcase_add_test(tc, torch_ops_named_by_strings_that_come_later);
    tcase_add_test(tc, memory_goes_to_the_call_it_was_made_in);
    tcase_add_test(tc, layers_and_outside_add_up_over_processes);
    tcase_add_test(tc, torch_fold_of_an_only_child_of_the_same_name);
    tcase_add_test(tc, layers_hold_the_self_time_inside_them);
    tcase_add_test(tc, gpu_time_goes_to_the_launching_call);
    tcase_add_test(tc, gpu_time_of_many_launches_before_a_flush);
    tcase_add_test(tc, profiler_steps_are_their_ranges);
    tcase_add_test(tc, profiler_steps_count_into_one_row_as_they_come);
    tcase_add_test(tc, nvtx_range_without_message_is_unnamed);
    tcase_add_test(tc, optimizer_steps_end_iterations);
    tcase_add_test(tc, steps_before_their_name_counted);
    tcase_add_test(tc, steps_all_before_their_name_counted);
    tcase_add_test(tc, profiler_steps_inside_a_call_before_their_name_counted);
    tcase_add_test(tc, tsc_ticks_become_ns);
    tcase_add_test(tc, later_rate_does_not_rescale_what_was_shown);
    tcase_add_test(tc, ended_process_keeps_its_rows);
    tcase_add_test(tc, snapshot_reads_back_the_same);
    suite_add_tcase(s, tc);
    return s;
}
