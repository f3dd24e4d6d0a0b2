/* opprof advise's rules on traces built by hand: each fires where it
 * should, with its exact numbers, and stays silent just below its
 * threshold. The steps are a label "step" (--step step) of 10 ms each
 * unless a test says otherwise, ten of them from 1 s. */
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/advise.h"
#include "analysis/advise_pass.h"
#include "analysis/model.h"
#include "analysis/pass.h"
#include "testutil.h"
#include "tool/cmds.h"
#include "tracebuild.h"
#include "views/advise_view.h"
#include "oracle/loaded.h"

TU_TRACE_FIXTURE

enum { F_TORCH, F_LAUNCH, F_ALLOC, F_FREE, F_OP, NF };
enum {
    S_STEP = OPP_STR_PRELOAD,
    S_LOADER,
    S_ITEM,
    S_LSD,
    S_MUL,
    S_RELU,
    S_CLAMP,
    S_COPY,
    S_KERNEL,
    S_ALLREDUCE,
    S_MM,
    S_NCCL,
    S_LINE7,
    S_LINE8,
};
static const char *const NAMES[] = {
    "step",
    "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
    "aten::item",
    "aten::_local_scalar_dense",
    "aten::mul",
    "aten::relu",
    "aten::clamp_min",
    "aten::copy_",
    "tiny_kernel",
    "allreduce",
    "aten::mm",
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "train.py(7): <module>",
    "train.py(8): <module>",
};

#define MS 1000000ull
#define US 1000ull
#define T0 (1000 * MS)
#define NSTEPS 10
#define LABEL(name) TB_CALL(F_TORCH, 0, 0, 0, (name), OPP_TORCH_SCOPE_USER, 0)
#define TENSOR_64x64 OPP_TIN_TAG(OPP_TIN_TENSOR, OPP_DT_F32, 2), 64, 64

static const struct opp_func_desc FUNCS[NF] = {
    [F_TORCH] = {OPP_OP_TORCH, OPP_DT_NONE, "torch", "op"},
    [F_LAUNCH] = {OPP_OP_CUDA_API, OPP_DT_NONE, "cudart", "cudaLaunchKernel"},
    [F_ALLOC] = {OPP_OP_MEMORY, 0, "c10", "_ZN3c109alloc_cpuEm"},
    [F_FREE] = {OPP_OP_MEMORY, 0, "c10", "_ZN3c108free_cpuEPv"},
    [F_OP] = {OPP_OP_PLAIN, 0, "app", "allreduce"},
};

/* Events of one step, in the order they end; the step label last. */
struct evs {
    struct tb_ev e[512];
    size_t n;
};

static void ev(struct evs *s, struct tb_ev e, uint64_t begin, uint64_t end, uint32_t depth)
{
    ck_assert_uint_lt(s->n, 512);
    e.begin = begin;
    e.end = end;
    e.depth = depth;
    s->e[s->n++] = e;
}

/* A torch op (scope function) named name, on one [64, 64] tensor. */
static void op(struct evs *s, uint32_t name, uint64_t begin, uint64_t end, uint32_t depth)
{
    ev(s, (struct tb_ev)TB_CALL(F_TORCH, 0, 0, 0, name, OPP_TORCH_SCOPE_FUNCTION, 1, TENSOR_64x64),
       begin, end, depth);
}

static int nsteps = NSTEPS; /* steps process() writes */

/* What a test puts inside step i (from begin to end) at depth 1 and below. */
typedef void step_fn(struct evs *s, int i, uint64_t begin, uint64_t end);

/* The process (pid 10, RANK rank when rank >= 0), its strings, then ten
 * steps of wall[i] ns (10 ms when wall is NULL) back to back from T0;
 * fill adds each step's calls. */
static void process(struct tb *b, uint32_t proc, int rank, const uint64_t *wall, step_fn *fill)
{
    tb_process(b, .proc = proc, .pid = 10 + proc, .exe = "python3");
    tb_put_funcs(b, FUNCS, NF);
    char r[8];
    snprintf(r, sizeof r, "%d", rank);
    if (rank >= 0)
        tb_info(b, "RANK", r);
    for (uint32_t k = 0; k < sizeof NAMES / sizeof *NAMES; k++)
        tb_string(b, S_STEP + k, NAMES[k]);
    tb_stack(b, 7, 0x10, OPP_STACK_PY | S_LINE7); /* code stacks: train.py's lines */
    tb_stack(b, 8, 0x10, OPP_STACK_PY | S_LINE8);
    tb_thread(b, 100 + proc, "main");
    uint64_t t = T0;
    for (int i = 0; i < nsteps; i++) {
        uint64_t w = wall ? wall[i] : 10 * MS;
        struct evs s = {.n = 0};
        if (fill)
            fill(&s, i, t, t + w);
        ev(&s, (struct tb_ev)LABEL(S_STEP), t, t + w, 0);
        tb_put_events(b, 0, s.e, s.n);
        t += w;
    }
}

static void write_steps(const uint64_t *wall, step_fn *fill)
{
    struct tb b;
    tb_open(&b, trace);
    process(&b, 0, -1, wall, fill);
    tb_end(&b);
}

static struct opp_pass *adv_read;
static struct opp_advise_pass *adv_pass;
static struct opp_advice adv;
static const char *step_name = "step"; /* --step; NULL: the program's own */

/* advise on the trace, steps "step", th changed by the "NAME=VALUE" pairs
 * given (NULL-ended). */
static void advise_with(const char *set, ...)
{
    char err[512];
    adv_pass = opp_advise_pass_over(adv_read = tu_pass_open(trace), err, sizeof err);
    ck_assert_msg(adv_pass != NULL, "%s", err);
    double th[OPP_TH_COUNT];
    for (int i = 0; i < OPP_TH_COUNT; i++)
        th[i] = opp_advise_thresholds[i].value;
    va_list ap;
    va_start(ap, set);
    for (const char *s = set; s; s = va_arg(ap, const char *)) {
        char name[64];
        const char *eq = strchr(s, '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - s), s);
        enum opp_advise_threshold id;
        ck_assert_int_eq(opp_advise_threshold_parse(name, &id), 0);
        th[id] = atof(eq + 1);
    }
    va_end(ap);
    struct opp_agg_opts o = {0};
    ck_assert_msg(opp_advise_pass_run(adv_pass, &o, step_name, th, &adv, err, sizeof err) == 0,
                  "%s", err);
}

static void advise(void)
{
    advise_with(NULL);
}

static void done(void)
{
    opp_advice_free(&adv);
    opp_advise_pass_free(adv_pass);
    opp_pass_free(adv_read);
}

/* The finding of rule (the first), NULL when none. */
static const struct opp_finding *found(const char *rule)
{
    for (size_t i = 0; i < adv.fs.n; i++)
        if (!strcmp(adv.fs.f[i].rule, rule))
            return &adv.fs.f[i];
    return NULL;
}

/* The findings' rules, in their order, ' '-joined. */
static const char *rules(void)
{
    static char buf[1024];
    buf[0] = 0;
    for (size_t i = 0; i < adv.fs.n; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? " " : "",
                 adv.fs.f[i].rule);
    return buf;
}

static void near(double got, double want)
{
    ck_assert_msg(fabs(got - want) < 1e-9 * (fabs(want) + 1), "%.12g, not %.12g", got, want);
}

/* ---- input pipeline ---- */

static uint64_t loader_ns;

/* The trace's one process (exe), its functions and names, and its
 * thread tid (name) whose calls follow. */
static void open_trace(struct tb *b, const char *exe, uint32_t tid, const char *name)
{
    tb_open(b, trace);
    tb_process(b, .proc = 0, .pid = 10, .exe = exe);
    tb_put_funcs(b, FUNCS, NF);
    for (uint32_t k = 0; k < sizeof NAMES / sizeof *NAMES; k++)
        tb_string(b, S_STEP + k, NAMES[k]);
    tb_thread(b, tid, name);
}

static void loader(struct evs *s, int i, uint64_t begin, uint64_t end)
{
    (void)i, (void)end;
    ev(s, (struct tb_ev)LABEL(S_LOADER), begin, begin + loader_ns, 1);
}

START_TEST(input_pipeline_fires)
{
    loader_ns = 8 * MS;
    write_steps(NULL, loader);
    advise();
    ck_assert_uint_eq(adv.nsteps, NSTEPS);
    ck_assert_uint_eq(adv.wall_ns, 100 * MS);
    ck_assert_str_eq(rules(), "input_pipeline");
    const struct opp_finding *f = &adv.fs.f[0];
    ck_assert_str_eq(f->rule, "input_pipeline");
    ck_assert_str_eq(f->op, NAMES[S_LOADER - S_STEP]);
    near(f->share, 0.8);
    near(f->ms_per_step, 8.0);
    near(f->per_step, 1.0);
    ck_assert_uint_eq(f->stake_ns, 80 * MS);
    ck_assert_str_eq(f->what,
                     "Input pipeline bound: the steps wait for the DataLoader 80% of their time");
    ck_assert_str_eq(f->evidence, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__: "
                                  "8.000 ms of the 10.000 ms a step takes (mean), 80% to 80% a "
                                  "step over 10 steps");
    ck_assert_ptr_null(found("outside_ops")); /* 2 ms of 10 outside */
    done();
}
END_TEST

START_TEST(input_pipeline_silent_below)
{
    loader_ns = 990 * US; /* 9.9% */
    write_steps(NULL, loader);
    advise();
    ck_assert_ptr_null(found("input_pipeline"));
    /* the rest of the step is inside no call */
    const struct opp_finding *f = found("outside_ops");
    ck_assert_ptr_nonnull(f);
    near(f->share, 0.901);
    ck_assert_uint_eq(f->stake_ns, 90100 * US);
    done();
}
END_TEST

/* The DataLoader of another thread (listed first) is not the steps' wait. */
START_TEST(input_pipeline_other_thread_not_counted)
{
    struct tb b;
    open_trace(&b, "python3", 99, "other");
    struct evs s = {.n = 0};
    for (int i = 0; i < NSTEPS; i++)
        ev(&s, (struct tb_ev)LABEL(S_LOADER), T0 + (uint64_t)i * 10 * MS,
           T0 + (uint64_t)i * 10 * MS + 9 * MS, 0);
    tb_put_events(&b, 0, s.e, s.n);
    tb_thread(&b, 100, "main");
    uint64_t t = T0;
    for (int i = 0; i < NSTEPS; i++, t += 10 * MS) {
        struct evs st = {.n = 0};
        ev(&st, (struct tb_ev)LABEL(S_LOADER), t, t + 2 * MS, 1);
        ev(&st, (struct tb_ev)LABEL(S_STEP), t, t + 10 * MS, 0);
        tb_put_events(&b, 0, st.e, st.n);
    }
    tb_end(&b);
    advise_with("outside_share=2", NULL);
    const struct opp_finding *f = found("input_pipeline");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(f->stake_ns, 20 * MS); /* main's 2 ms a step, not other's 9 */
    near(f->share, 0.2);
    done();
}
END_TEST

/* ---- host synchronisation ---- */

static int item_every;  /* steps i with i % item_every == 0 call .item() */
static int item_device; /* each step launches a kernel first (a program on a GPU) */

static void items(struct evs *s, int i, uint64_t begin, uint64_t end)
{
    (void)end;
    if (item_device)
        ev(s, (struct tb_ev)TB_CALL(F_LAUNCH, 0, 0, 0, 0, (uint64_t)i + 1, 211), begin + 500 * US,
           begin + 510 * US, 1);
    if (i % item_every)
        return;
    ev(s, (struct tb_ev)TB_CALL(F_TORCH, 0, 0, 0, S_LSD, OPP_TORCH_SCOPE_FUNCTION, 0),
       begin + 1100 * US, begin + 1400 * US, 2);
    ev(s, (struct tb_ev)TB_CALL(F_TORCH, 0, 0, 0, S_ITEM, OPP_TORCH_SCOPE_FUNCTION, 0),
       begin + 1 * MS, begin + 1500 * US, 1);
    ev(s, (struct tb_ev)LABEL(S_LOADER), begin + 2 * MS, end, 1); /* nothing else fires */
}

START_TEST(host_sync_fires)
{
    item_every = item_device = 1;
    write_steps(NULL, items);
    advise_with("input_share=2", NULL);
    ck_assert_str_eq(rules(), "host_sync");
    const struct opp_finding *f = &adv.fs.f[0];
    ck_assert_str_eq(f->rule, "host_sync");
    ck_assert_str_eq(f->op, "aten::item"); /* not its _local_scalar_dense too */
    near(f->per_step, 1.0);
    near(f->ms_per_step, 0.5);
    near(f->share, 0.05);
    ck_assert_uint_eq(f->stake_ns, 5 * MS);
    ck_assert_str_eq(f->what, "Host synchronisation inside the step: aten::item, 1.0 a step");
    done();
}
END_TEST

/* .item() every `every` steps, a kernel launched each step or not: no
 * finding. */
static void host_sync_silent(int every, int device)
{
    item_every = every;
    item_device = device;
    write_steps(NULL, items);
    advise_with("input_share=2", NULL);
    ck_assert_str_eq(rules(), "");
    done();
}

START_TEST(host_sync_silent_below)
{
    host_sync_silent(2, 1); /* 0.5 a step */
}
END_TEST

/* A program on no GPU: its .item() reads memory, waiting for nothing. */
START_TEST(host_sync_silent_without_device)
{
    host_sync_silent(1, 0);
}
END_TEST

/* ---- elementwise operators to fuse ---- */

static int muls;
static uint64_t mul_ns;

/* muls aten::mul, then 8 aten::relu each calling aten::clamp_min (2 us
 * self each); then the loader label for the rest (nothing else fires). */
static void elementwise(struct evs *s, int i, uint64_t begin, uint64_t end)
{
    (void)i;
    uint64_t t = begin;
    for (int k = 0; k < muls; k++, t += mul_ns)
        op(s, S_MUL, t, t + mul_ns, 1);
    for (int k = 0; k < 8; k++, t += 4 * US) {
        op(s, S_CLAMP, t + 1 * US, t + 3 * US, 2);
        op(s, S_RELU, t, t + 4 * US, 1);
    }
    ev(s, (struct tb_ev)LABEL(S_LOADER), t, end, 1);
}

START_TEST(fusable_fires)
{
    muls = 16;
    mul_ns = 3 * US;
    write_steps(NULL, elementwise);
    advise_with("input_share=2", NULL);
    ck_assert_str_eq(rules(), "fusable_ops");
    const struct opp_finding *f = &adv.fs.f[0];
    ck_assert_str_eq(f->rule, "fusable_ops");
    ck_assert_str_eq(f->op, "aten::mul, aten::relu"); /* clamp_min is relu's */
    near(f->per_step, 24.0);
    /* 16 x 3 us + 8 x (2 + 2) us = 80 us a step */
    ck_assert_uint_eq(f->stake_ns, 800 * US);
    near(f->ms_per_step, 0.08);
    ck_assert_str_eq(f->what, "Many small elementwise operators on [64, 64] that torch could "
                              "fuse: 24 calls a step");
    ck_assert_str_eq(f->evidence, "3.3 us each on average (self CPU), 0.080 ms a step; a step's "
                                  "calls: aten::mul 16.0, aten::relu 8.0");
    done();
}
END_TEST

/* An elementwise torch op named name on one tensor of shape (the
 * tensor tag's dims after it). */
#define SHAPED_OP(s, name, b, e, depth, ...)                                                       \
    ev((s),                                                                                        \
       (struct tb_ev)TB_CALL(F_TORCH, 0, 0, 0, (name), OPP_TORCH_SCOPE_FUNCTION, 1, __VA_ARGS__),  \
       (b), (e), (depth))
#define TENSOR_128 OPP_TIN_TAG(OPP_TIN_TENSOR, OPP_DT_F32, 1), 128
#define TENSOR_8x8 OPP_TIN_TAG(OPP_TIN_TENSOR, OPP_DT_F32, 2), 8, 8

/* An optimizer's loop over its parameters: on [64, 64] and on [128] the
 * same operators (16 aten::mul of 3 us, and of 2 us; 8 aten::relu of 4
 * us calling aten::clamp_min of 2 us); on [8, 8] others (20 aten::relu
 * alone). */
static void per_parameter(struct evs *s, int i, uint64_t begin, uint64_t end)
{
    (void)i;
    uint64_t t = begin;
    for (int k = 0; k < 16; k++, t += 3 * US)
        SHAPED_OP(s, S_MUL, t, t + 3 * US, 1, TENSOR_64x64);
    for (int k = 0; k < 8; k++, t += 4 * US) {
        SHAPED_OP(s, S_CLAMP, t + 1 * US, t + 3 * US, 2, TENSOR_64x64);
        SHAPED_OP(s, S_RELU, t, t + 4 * US, 1, TENSOR_64x64);
    }
    for (int k = 0; k < 16; k++, t += 2 * US)
        SHAPED_OP(s, S_MUL, t, t + 2 * US, 1, TENSOR_128);
    for (int k = 0; k < 8; k++, t += 4 * US) {
        SHAPED_OP(s, S_CLAMP, t + 1 * US, t + 3 * US, 2, TENSOR_128);
        SHAPED_OP(s, S_RELU, t, t + 4 * US, 1, TENSOR_128);
    }
    for (int k = 0; k < 20; k++, t += 4 * US) {
        SHAPED_OP(s, S_CLAMP, t + 1 * US, t + 3 * US, 2, TENSOR_8x8);
        SHAPED_OP(s, S_RELU, t, t + 4 * US, 1, TENSOR_8x8);
    }
    ev(s, (struct tb_ev)LABEL(S_LOADER), t, end, 1);
}

/* The same operators at the same place on several shapes are one
 * finding naming the shapes, their numbers added up; other operators
 * another. */
START_TEST(fusable_same_ops_one_finding)
{
    write_steps(NULL, per_parameter);
    advise_with("input_share=2", NULL);
    ck_assert_str_eq(rules(), "fusable_ops fusable_ops");
    const struct opp_finding *f = &adv.fs.f[0];
    ck_assert_str_eq(f->what, "Many small elementwise operators on [64, 64] and [128] that torch "
                              "could fuse: 48 calls a step");
    ck_assert_str_eq(f->op, "aten::mul, aten::relu");
    near(f->per_step, 48.0);
    /* 80 us and 64 us a step */
    ck_assert_uint_eq(f->stake_ns, 1440 * US);
    ck_assert_str_eq(f->evidence, "3.0 us each on average (self CPU), 0.144 ms a step; a step's "
                                  "calls: aten::mul 32.0, aten::relu 16.0");
    f = &adv.fs.f[1];
    ck_assert_str_eq(f->what, "Many small elementwise operators on [8, 8] that torch could fuse: "
                              "20 calls a step");
    ck_assert_str_eq(f->op, "aten::relu");
    ck_assert_uint_eq(f->stake_ns, 800 * US);
    ck_assert_str_eq(f->evidence, "4.0 us each on average (self CPU), 0.080 ms a step; a step's "
                                  "calls: aten::relu 20.0");
    done();
}
END_TEST

/* The same operator on shapes [1] to [nshapes], 16 calls of 3 us each. */
static int nshapes;
static void many_shapes(struct evs *s, int i, uint64_t begin, uint64_t end)
{
    (void)i;
    uint64_t t = begin;
    for (int d = 1; d <= nshapes; d++)
        for (int k = 0; k < 16; k++, t += 3 * US)
            SHAPED_OP(s, S_MUL, t, t + 3 * US, 1, OPP_TIN_TAG(OPP_TIN_TENSOR, OPP_DT_F32, 1),
                      (uint64_t)d);
    ev(s, (struct tb_ev)LABEL(S_LOADER), t, end, 1);
}

/* A finding names eight shapes, then the ninth when it is the last, else
 * how many more. */
START_TEST(fusable_shapes_named)
{
    const char *want[] = {"Many small elementwise operators on [1], [2], [3], [4], [5], [6], "
                          "[7], [8] and [9] that torch could fuse: 144 calls a step",
                          "Many small elementwise operators on [10], [1], [2], [3], [4], [5], "
                          "[6], [7] and 2 more shapes that torch could fuse: 160 calls a step"};
    for (nshapes = 9; nshapes <= 10; nshapes++) {
        write_steps(NULL, many_shapes);
        advise_with("input_share=2", NULL);
        ck_assert_str_eq(rules(), "fusable_ops");
        ck_assert_str_eq(adv.fs.f[0].what, want[nshapes - 9]);
        done();
    }
}
END_TEST

/* Steps that are ranges with gaps between them (an inference loop's
 * forwards, its Python between them): ten labels "step" of 10 ms, 20 ms
 * apart, each with in aten::mul calls of 3 us, and out more in each gap. */
static void write_gapped_steps(int in, int out)
{
    struct tb b;
    open_trace(&b, "python3", 100, "main");
    for (int i = 0; i < NSTEPS; i++) {
        struct evs s = {.n = 0};
        uint64_t t = T0 + (uint64_t)i * 20 * MS, g = t + 11 * MS;
        for (int k = 0; k < in; k++)
            op(&s, S_MUL, t + (uint64_t)k * 3 * US, t + (uint64_t)(k + 1) * 3 * US, 1);
        ev(&s, (struct tb_ev)LABEL(S_STEP), t, t + 10 * MS, 0);
        for (int k = 0; k < out && i < NSTEPS - 1; k++)
            op(&s, S_MUL, g + (uint64_t)k * 3 * US, g + (uint64_t)(k + 1) * 3 * US, 0);
        tb_put_events(&b, 0, s.e, s.n);
    }
    tb_end(&b);
}

/* Only the calls inside the steps are the steps': the 20 in each gap are
 * not counted a step (36 calls, over 100% of the steps' time once there
 * are enough of them). */
START_TEST(fusable_counts_the_steps_calls_not_the_gaps)
{
    write_gapped_steps(16, 20);
    advise();
    ck_assert_uint_eq(adv.wall_ns, 100 * MS);
    ck_assert_str_eq(rules(), "outside_ops fusable_ops"); /* the steps hold little else */
    const struct opp_finding *f = found("fusable_ops");
    near(f->per_step, 16.0);
    ck_assert_uint_eq(f->stake_ns, 480 * US);
    ck_assert_str_eq(f->what, "Many small elementwise operators on [64, 64] that torch could "
                              "fuse: 16 calls a step");
    ck_assert_str_eq(f->evidence, "3.0 us each on average (self CPU), 0.048 ms a step; a step's "
                                  "calls: aten::mul 16.0");
    done();
    write_gapped_steps(8, 20); /* 8 a step, under the threshold */
    advise();
    ck_assert_str_eq(rules(), "outside_ops");
    done();
}
END_TEST

/* A Python loop over a tensor's elements (s = s + w[j] * w[j]): each
 * step 32 aten::mul of 2 us on a 0-d tensor and a number, the shape [],
 * which is a shape. */
#define TENSOR_0D OPP_TIN_TAG(OPP_TIN_TENSOR, OPP_DT_F32, 0)
#define NUMBER OPP_TIN_TAG(OPP_TIN_SCALAR, 0, 0)
static void scalar_loop(struct evs *s, int i, uint64_t begin, uint64_t end)
{
    (void)i;
    uint64_t t = begin;
    for (int k = 0; k < 32; k++, t += 2 * US)
        ev(s,
           (struct tb_ev)TB_CALL(F_TORCH, 0, 0, 0, S_MUL, OPP_TORCH_SCOPE_FUNCTION, 2, TENSOR_0D,
                                 NUMBER),
           t, t + 2 * US, 1);
    ev(s, (struct tb_ev)LABEL(S_LOADER), t, end, 1);
}

START_TEST(fusable_on_0d_tensors)
{
    write_steps(NULL, scalar_loop);
    advise_with("input_share=2", NULL);
    ck_assert_str_eq(rules(), "fusable_ops");
    const struct opp_finding *f = &adv.fs.f[0];
    ck_assert_str_eq(f->op, "aten::mul");
    near(f->per_step, 32.0);
    ck_assert_uint_eq(f->stake_ns, 640 * US);
    ck_assert_str_eq(f->what, "Many small elementwise operators on [] that torch could fuse: 32 "
                              "calls a step");
    ck_assert_str_eq(f->evidence, "2.0 us each on average (self CPU), 0.064 ms a step; a step's "
                                  "calls: aten::mul 32.0");
    done();
}
END_TEST

/* Line 7 loops over a tensor's elements: 32 aten::mul of 2 us a step on
 * 0-d tensors; line 8 multiplies a [64, 64] tensor twice, 1 ms each. */
static void two_lines(struct evs *s, int i, uint64_t begin, uint64_t end)
{
    (void)i;
    uint64_t t = begin;
    for (int k = 0; k < 32; k++, t += 2 * US) {
        ev(s,
           (struct tb_ev)TB_CALL(F_TORCH, 0, 0, 0, S_MUL, OPP_TORCH_SCOPE_FUNCTION, 2, TENSOR_0D,
                                 NUMBER),
           t, t + 2 * US, 1);
        s->e[s->n - 1].stack = 7;
    }
    for (int k = 0; k < 2; k++, t += MS) {
        op(s, S_MUL, t, t + MS, 1);
        s->e[s->n - 1].stack = 8;
    }
    ev(s, (struct tb_ev)LABEL(S_LOADER), t, end, 1);
}

/* The finding on [] names the line of aten::mul's calls on [], not the
 * line where aten::mul takes the most time on another shape. */
START_TEST(fusable_names_its_shapes_line)
{
    write_steps(NULL, two_lines);
    advise_with("input_share=2", NULL);
    ck_assert_str_eq(rules(), "fusable_ops");
    const struct opp_finding *f = &adv.fs.f[0];
    ck_assert_str_eq(f->what, "Many small elementwise operators on [] that torch could fuse: 32 "
                              "calls a step");
    ck_assert_str_eq(f->code, "train.py(7): <module>");
    done();
}
END_TEST

START_TEST(fusable_silent_below)
{
    muls = 7; /* 15 calls a step */
    mul_ns = 3 * US;
    write_steps(NULL, elementwise);
    advise_with("input_share=2", NULL);
    ck_assert_ptr_null(found("fusable_ops"));
    muls = 16; /* enough calls, but 100 us each on average */
    mul_ns = 148 * US;
    done();
    write_steps(NULL, elementwise);
    advise_with("input_share=2", NULL);
    ck_assert_ptr_null(found("fusable_ops"));
    done();
}
END_TEST

/* ---- warm-up and outlier steps ---- */

static uint64_t copy_in_7;

static void busy(struct evs *s, int i, uint64_t begin, uint64_t end)
{
    if (i == 7 && copy_in_7) {
        op(s, S_COPY, begin, begin + copy_in_7, 1);
        begin += copy_in_7;
    }
    ev(s, (struct tb_ev)LABEL(S_LOADER), begin, end, 1);
}

START_TEST(warmup_fires)
{
    const uint64_t wall[NSTEPS] = {30 * MS, 10 * MS, 10 * MS, 10 * MS, 10 * MS,
                                   10 * MS, 10 * MS, 10 * MS, 10 * MS, 10 * MS};
    copy_in_7 = 0;
    write_steps(wall, busy);
    advise_with("input_share=2", NULL);
    ck_assert_str_eq(rules(), "warmup");
    const struct opp_finding *f = &adv.fs.f[0];
    ck_assert_str_eq(f->rule, "warmup");
    ck_assert_int_eq(f->step, 0);
    ck_assert_int_eq(f->step_last, 0);
    ck_assert_uint_eq(f->stake_ns, 20 * MS);
    ck_assert_str_eq(f->what, "Warm-up: step 0 took 2.0x the p50 step or more");
    ck_assert_str_eq(f->op, NAMES[S_LOADER - S_STEP]);
    ck_assert_str_eq(f->evidence,
                     "step 0: 30.000 ms against a p50 of 10.000 ms; its largest excess: "
                     "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__, +20.000 ms self "
                     "CPU against step 1 (a p50 step)");
    done();
}
END_TEST

START_TEST(warmup_silent_below)
{
    const uint64_t wall[NSTEPS] = {19 * MS, 10 * MS, 10 * MS, 10 * MS, 10 * MS,
                                   10 * MS, 10 * MS, 10 * MS, 10 * MS, 10 * MS};
    copy_in_7 = 0;
    write_steps(wall, busy);
    advise_with("input_share=2", NULL);
    ck_assert_ptr_null(found("warmup"));
    done();
}
END_TEST

START_TEST(outlier_fires)
{
    const uint64_t wall[NSTEPS] = {10 * MS, 10 * MS, 10 * MS, 10 * MS, 10 * MS,
                                   10 * MS, 10 * MS, 25 * MS, 10 * MS, 10 * MS};
    copy_in_7 = 15 * MS;
    write_steps(wall, busy);
    advise_with("input_share=2", NULL);
    ck_assert_str_eq(rules(), "outlier_steps");
    const struct opp_finding *f = &adv.fs.f[0];
    ck_assert_str_eq(f->rule, "outlier_steps");
    ck_assert_int_eq(f->step, 7);
    ck_assert_uint_eq(f->stake_ns, 15 * MS);
    ck_assert_str_eq(f->op, "aten::copy_");
    ck_assert_str_eq(f->what, "Outlier steps: 1 of 10 steady steps took 1.5x the p50 or more "
                              "(p99 25.000 ms, p50 10.000 ms)");
    /* --from/--to: ms since the trace's first time (step 0's begin) */
    ck_assert_str_eq(f->evidence, "the worst, step 7: 25.000 ms (--from 70.000 --to 95.000); its "
                                  "largest excess: aten::copy_, +15.000 ms self CPU against step "
                                  "0 (a p50 step)");
    done();
}
END_TEST

/* Steps between the calls of an operator "step" (1 ms each, ending each
 * step, the first call before step 0), each with an aten::copy_ of 8 ms,
 * copy7 ns in step 7; step 7 takes wall7 ns, the others 10 ms. */
static const char *boundary_exe = "python3";

static void write_boundary_steps(uint64_t wall7, uint64_t copy7)
{
    struct tb b;
    open_trace(&b, boundary_exe, 100, "main");
    struct evs s = {.n = 0};
    op(&s, S_STEP, T0, T0 + 1 * MS, 0);
    uint64_t t = T0 + 1 * MS;
    for (int i = 0; i < NSTEPS; i++) {
        uint64_t w = i == 7 ? wall7 : 10 * MS;
        op(&s, S_COPY, t + 500 * US, t + 500 * US + (i == 7 ? copy7 : 8 * MS), 0);
        op(&s, S_STEP, t + w - 1 * MS, t + w, 0);
        t += w;
    }
    tb_put_events(&b, 0, s.e, s.n);
    tb_end(&b);
}

/* A step made long by time in no call (a sleep, Python's garbage
 * collector): the excess is said to be there, not the operator's that
 * grew by 0.5 ms. */
START_TEST(outlier_outside_calls)
{
    write_boundary_steps(25 * MS, 8500 * US);
    advise();
    ck_assert_uint_eq(adv.nsteps, NSTEPS);
    ck_assert_str_eq(rules(), "outlier_steps");
    const struct opp_finding *f = &adv.fs.f[0];
    ck_assert_int_eq(f->step, 7);
    ck_assert_uint_eq(f->stake_ns, 15 * MS);
    ck_assert_str_eq(f->op, "");
    ck_assert_str_eq(f->evidence,
                     "the worst, step 7: 25.000 ms (--from 71.000 --to 96.000); its largest "
                     "excess: time inside no recorded call (the loop's own Python, or waits "
                     "opprof does not see), +14.500 ms against step 0 (a p50 step)");
    done();
}
END_TEST

/* In a program that is not Python (a C training loop) the time outside
 * the calls is its own code's, not "the loop's own Python". */
START_TEST(outside_time_of_a_program_not_python)
{
    boundary_exe = "/opt/train/train_loop";
    write_boundary_steps(25 * MS, 8500 * US);
    boundary_exe = "python3";
    advise_with("outside_share=0.05", NULL);
    ck_assert_str_eq(rules(), "outlier_steps outside_ops");
    ck_assert_str_eq(found("outlier_steps")->evidence,
                     "the worst, step 7: 25.000 ms (--from 71.000 --to 96.000); its largest "
                     "excess: time inside no recorded call (the program's own code, or waits "
                     "opprof does not see), +14.500 ms against step 0 (a p50 step)");
    const struct opp_finding *f = found("outside_ops");
    ck_assert_str_eq(f->what, "10% of a step's time is inside no recorded call: the program's "
                              "own code, or waits opprof does not see");
    ck_assert_str_eq(f->try_, "look at the program's own code between the calls (a sampling "
                              "profiler such as perf shows it); move per-step work (logging, "
                              "metrics) out of the step");
    done();
}
END_TEST

/* torch.profiler's steps (ProfilerStep#N ranges), step 7 made long by
 * time in no call: that is the excess, not ProfilerStep#7's self time. */
START_TEST(outlier_outside_calls_of_profiler_steps)
{
    struct tb b;
    tb_open(&b, trace);
    tb_process(&b, .proc = 0, .pid = 10, .exe = "python3");
    tb_put_funcs(&b, FUNCS, NF);
    tb_string(&b, S_COPY, "aten::copy_");
    tb_thread(&b, 100, "main");
    uint64_t t = T0;
    for (int i = 0; i < NSTEPS; i++) {
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%d", i);
        tb_string(&b, S_NCCL + 1 + (uint32_t)i, name);
        uint64_t w = i == 7 ? 25 * MS : 10 * MS;
        struct evs s = {.n = 0};
        op(&s, S_COPY, t + 500 * US, t + 500 * US + (i == 7 ? 8500 * US : 8 * MS), 1);
        ev(&s, (struct tb_ev)LABEL(S_NCCL + 1 + (uint32_t)i), t, t + w, 0);
        tb_put_events(&b, 0, s.e, s.n);
        t += w;
    }
    tb_end(&b);
    step_name = NULL;
    advise();
    step_name = "step";
    ck_assert_str_eq(adv.steps_what, "ProfilerStep#N");
    ck_assert_str_eq(rules(), "outlier_steps");
    const struct opp_finding *f = &adv.fs.f[0];
    ck_assert_str_eq(f->op, "");
    ck_assert_str_eq(f->evidence,
                     "the worst, step 7: 25.000 ms (--from 70.000 --to 95.000); its largest "
                     "excess: time inside no recorded call (the loop's own Python, or waits "
                     "opprof does not see), +14.500 ms against step 0 (a p50 step)");
    done();
}
END_TEST

/* A trace of no call (a program that called nothing opprof records),
 * its process alive from T0 for 3 ms: the run, taken as one step, is
 * those 3 ms, not the clock's epoch to its end. */
START_TEST(no_call_run_is_its_process)
{
    struct tb b;
    tb_open(&b, trace);
    tb_process(&b, .proc = 0, .pid = 10, .exe = "true", .start = T0);
    tb_put_funcs(&b, FUNCS, NF);
    tb_process_end(&b, 0, OPP_END_EXITED, T0 + 3 * MS);
    tb_end(&b);
    step_name = NULL;
    advise();
    step_name = "step";
    ck_assert_str_eq(adv.steps_what,
                     "none (no ProfilerStep#N, optimizer step or nn.Module); the run taken as "
                     "one step");
    ck_assert_uint_eq(adv.nsteps, 0);
    ck_assert_uint_eq(adv.wall_ns, 3 * MS);
    ck_assert_uint_eq(adv.p50_ns, 3 * MS);
    ck_assert_str_eq(rules(), "");
    done();
}
END_TEST

/* The run taken as one step (a full trace without steps): the rules that
 * look at each step's own time are not run, and the text and the JSON
 * name them, as a summary trace's output names the rules it does not run. */
START_TEST(without_steps_says_rules_not_run)
{
    struct tb b;
    tb_open(&b, trace);
    tb_process(&b, .proc = 0, .pid = 10, .exe = "true", .start = T0);
    tb_put_funcs(&b, FUNCS, NF);
    tb_process_end(&b, 0, OPP_END_EXITED, T0 + 3 * MS);
    tb_end(&b);
    step_name = NULL;
    advise();
    step_name = "step";
    char *path = tu_path(dir, "out.txt");
    for (int json = 0; json <= 1; json++) {
        FILE *f = fopen(path, "w");
        ck_assert_int_eq(opp_out_advice(f, "t.trace", &adv, json), 0);
        fclose(f);
        char *text = tu_slurp(path);
        ck_assert_str_eq(
            text,
            json ? "{\"trace\": \"t.trace\", \"steps\": {\"what\": \"none (no ProfilerStep#N, "
                   "optimizer step or nn.Module); the run taken as one step\", \"count\": 0, "
                   "\"p50_ms\": 3, \"p99_ms\": 3, \"wall_ms\": 3}, \"not_run\": [\"outside_ops\", "
                   "\"warmup\", \"outlier_steps\", \"cpu_alloc_churn\", \"cuda_alloc_churn\", "
                   "\"memory_growth\"], \"lost\": [], \"findings\": []}\n"
                 : "opprof advise: t.trace\n"
                   "Steps: none (no ProfilerStep#N, optimizer step or nn.Module); the run taken "
                   "as one step: p50 3.000 ms, p99 3.000 ms, 3.000 ms in all\n"
                   "Not run without steps (they look at each step's own time; --step NAME says "
                   "what a step is): outside_ops, warmup, outlier_steps, cpu_alloc_churn, "
                   "cuda_alloc_churn, memory_growth\n"
                   "\n"
                   "No findings: no rule's threshold was reached (`opprof advise --thresholds`)\n");
        free(text);
    }
    free(path);
    done();
}
END_TEST

/* Steps that are ranges of one name ("step" labels, --step step), step 7
 * made long by time in no call: the label's own self time is that time,
 * not an operator's excess. */
START_TEST(outlier_outside_calls_of_named_range_steps)
{
    struct tb b;
    open_trace(&b, "python3", 100, "main");
    uint64_t t = T0;
    for (int i = 0; i < NSTEPS; i++) {
        uint64_t w = i == 7 ? 25 * MS : 10 * MS;
        struct evs s = {.n = 0};
        op(&s, S_COPY, t + 500 * US, t + 500 * US + (i == 7 ? 8500 * US : 8 * MS), 1);
        ev(&s, (struct tb_ev)LABEL(S_STEP), t, t + w, 0);
        tb_put_events(&b, 0, s.e, s.n);
        t += w;
    }
    tb_end(&b);
    advise();
    ck_assert_str_eq(rules(), "outlier_steps");
    const struct opp_finding *f = found("outlier_steps");
    ck_assert_str_eq(f->op, "");
    ck_assert_str_eq(f->evidence,
                     "the worst, step 7: 25.000 ms (--from 70.000 --to 95.000); its largest "
                     "excess: time inside no recorded call (the loop's own Python, or waits "
                     "opprof does not see), +14.500 ms against step 0 (a p50 step)");
    done();
}
END_TEST

/* Two ranks of steps with gaps between them, rank 1 11 ms after rank 0,
 * 16 calls in each step and 20 in each gap: each rank's calls are chosen
 * by its own steps (rank 0's fall in rank 1's gaps), within the span of
 * the steps advise reads (rank 0's): 16 a step of rank 0, and rank 1's
 * first 9 steps' 144 over rank 0's 10 steps, 30.4; none of the gaps'. */
static void gapped_rank(struct tb *b, uint32_t proc, uint64_t off)
{
    tb_process(b, .proc = proc, .pid = 10 + proc, .exe = "python3");
    tb_put_funcs(b, FUNCS, NF);
    tb_info(b, "RANK", proc ? "1" : "0");
    for (uint32_t k = 0; k < sizeof NAMES / sizeof *NAMES; k++)
        tb_string(b, S_STEP + k, NAMES[k]);
    tb_thread(b, 100 + proc, "main");
    for (int i = 0; i < NSTEPS; i++) {
        struct evs s = {.n = 0};
        uint64_t t = T0 + off + (uint64_t)i * 20 * MS, g = t + 11 * MS;
        for (int k = 0; k < 16; k++)
            op(&s, S_MUL, t + (uint64_t)k * 3 * US, t + (uint64_t)(k + 1) * 3 * US, 1);
        ev(&s, (struct tb_ev)LABEL(S_STEP), t, t + 10 * MS, 0);
        for (int k = 0; k < 20 && i < NSTEPS - 1; k++)
            op(&s, S_MUL, g + (uint64_t)k * 3 * US, g + (uint64_t)(k + 1) * 3 * US, 0);
        tb_put_events(b, 0, s.e, s.n);
    }
}

START_TEST(gapped_steps_of_two_ranks)
{
    struct tb b;
    tb_open(&b, trace);
    gapped_rank(&b, 0, 0);
    gapped_rank(&b, 1, 11 * MS);
    tb_end(&b);
    advise();
    ck_assert_str_eq(rules(), "outside_ops fusable_ops");
    ck_assert_str_eq(found("fusable_ops")->evidence, "3.0 us each on average (self CPU), 0.091 ms "
                                                     "a step; a step's calls: aten::mul 30.4");
    done();
}
END_TEST

/* The same step made long by its aten::copy_ (23 ms): the operator. */
START_TEST(outlier_op_not_outside)
{
    write_boundary_steps(25 * MS, 23 * MS);
    advise();
    ck_assert_str_eq(rules(), "outlier_steps");
    const struct opp_finding *f = &adv.fs.f[0];
    ck_assert_str_eq(f->op, "aten::copy_");
    ck_assert_str_eq(f->evidence, "the worst, step 7: 25.000 ms (--from 71.000 --to 96.000); its "
                                  "largest excess: aten::copy_, +15.000 ms self CPU against step "
                                  "0 (a p50 step)");
    done();
}
END_TEST

START_TEST(outlier_silent_below)
{
    const uint64_t wall[NSTEPS] = {10 * MS, 10 * MS, 10 * MS, 10 * MS, 10 * MS,
                                   10 * MS, 10 * MS, 14 * MS, 10 * MS, 10 * MS};
    copy_in_7 = 4 * MS;
    write_steps(wall, busy);
    advise_with("input_share=2", NULL);
    ck_assert_str_eq(rules(), "");
    done();
}
END_TEST

/* ---- what the trace lost ---- */

START_TEST(lost_data_first)
{
    struct tb b;
    tb_open(&b, trace);
    loader_ns = 8 * MS;
    process(&b, 0, -1, NULL, loader);
    tb_dropped(&b, 5);
    tb_end(&b);
    advise();
    ck_assert_str_eq(rules(), "lost_data input_pipeline");
    ck_assert_str_eq(adv.fs.f[0].rule, "lost_data");
    ck_assert_int_eq(adv.fs.f[0].lost, 1);
    ck_assert_str_eq(adv.fs.f[0].what,
                     "Records dropped (threads' rings were full: their calls are missing): 5");
    ck_assert_str_eq(adv.fs.f[1].rule, "input_pipeline");
    done();
    write_steps(NULL, loader);
    advise();
    ck_assert_ptr_null(found("lost_data"));
    done();
}
END_TEST

/* Records a signal handler's interruption lost are not a full ring's:
 * their own finding, whose advice is not a larger ring. */
START_TEST(lost_data_interrupted_apart)
{
    struct tb b;
    tb_open(&b, trace);
    loader_ns = 8 * MS;
    process(&b, 0, -1, NULL, loader);
    tb_dropped(&b, 5);
    tb_dropped_why(&b, 3, OPP_DROP_INTERRUPTED);
    tb_end(&b);
    advise();
    ck_assert_str_eq(rules(), "lost_data lost_data input_pipeline");
    ck_assert_str_eq(adv.fs.f[0].what,
                     "Records dropped (threads' rings were full: their calls are missing): 5");
    ck_assert_ptr_nonnull(strstr(adv.fs.f[0].try_, "a larger ring (OPPROF_BUFFER)"));
    ck_assert_str_eq(adv.fs.f[1].what, "Records dropped (a signal handler interrupted opprof "
                                       "recording a call: their calls are missing): 3");
    ck_assert_str_eq(adv.fs.f[1].try_, OPP_INTERRUPTED_ADVICE);
    done();
    tb_open(&b, trace);
    process(&b, 0, -1, NULL, loader);
    tb_dropped_why(&b, 3, OPP_DROP_INTERRUPTED);
    tb_end(&b);
    advise();
    ck_assert_str_eq(rules(), "lost_data input_pipeline");
    ck_assert_str_eq(adv.fs.f[0].try_, OPP_INTERRUPTED_ADVICE);
    done();
}
END_TEST

/* Calls a summary dropped at its node bound are not a full ring's: their
 * own finding, whose advice is a larger bound. */
START_TEST(lost_data_summary_bound_apart)
{
    struct tb b;
    tb_open(&b, trace);
    loader_ns = 8 * MS;
    process(&b, 0, -1, NULL, loader);
    tb_dropped(&b, 5);
    tb_at(&b, 0, OPP_DROPPED_SUMMARY);
    tb_dropped(&b, 4);
    tb_end(&b);
    advise();
    ck_assert_str_eq(rules(), "lost_data lost_data input_pipeline");
    ck_assert_str_eq(adv.fs.f[0].what,
                     "Records dropped (threads' rings were full: their calls are missing): 5");
    ck_assert_str_eq(adv.fs.f[1].what, "Calls on new call paths past the summary's bound "
                                       "(dropped: missing from it): 4");
    ck_assert_ptr_nonnull(strstr(adv.fs.f[1].try_, "OPPROF_MAX_NODES"));
    done();
}
END_TEST

/* ---- memory ---- */

static int frees; /* allocations freed within their step */

/* 4 allocations of 512 KiB a step; freed, or kept (2 MiB a step). */
static void allocs(struct evs *s, int i, uint64_t begin, uint64_t end)
{
    for (int k = 0; k < 4; k++) {
        uint64_t addr = 0x100000u * (uint64_t)(i * 4 + k + 1), t = begin + (uint64_t)k * MS;
        ev(s, (struct tb_ev)TB_CALL(F_ALLOC, 0, 0, 0, OPP_MEM_ALLOC, addr, 512 * 1024), t, t, 1);
        if (frees)
            ev(s, (struct tb_ev)TB_CALL(F_FREE, 0, 0, 0, OPP_MEM_FREE, addr, 0), t + 100 * US,
               t + 100 * US, 1);
    }
    ev(s, (struct tb_ev)LABEL(S_LOADER), begin + 4 * MS, end, 1);
}

START_TEST(memory_growth_and_churn_fire)
{
    frees = 0;
    write_steps(NULL, allocs);
    advise_with("input_share=2", "cpu_allocs_per_step=4", NULL);
    ck_assert_str_eq(rules(), "cpu_alloc_churn memory_growth");
    const struct opp_finding *f = found("cpu_alloc_churn");
    ck_assert_ptr_nonnull(f);
    near(f->per_step, 4.0);
    ck_assert_uint_eq(f->stake_ns, 0);
    f = found("memory_growth");
    ck_assert_ptr_nonnull(f);
    near(f->per_step, 2.0 * 1048576);
    ck_assert_int_eq(f->device, -1);
    ck_assert_int_eq(f->step, 0);
    ck_assert_int_eq(f->step_last, 9);
    ck_assert_str_eq(f->what, "CPU memory grows 2.00 MiB a step");
    ck_assert_str_eq(f->evidence, "2.00 MiB at the end of step 0, 20.00 MiB at the end of step 9; "
                                  "it rose in 9 of 9 steps");
    done();
}
END_TEST

/* The same findings asked again of the same pass (advise_pass.h, as the
 * HTML export asks): the CPU memory series walked again from its calls
 * sorted beyond memory, the table's join kept. The steps' first read is
 * the table's join's. */
START_TEST(memory_findings_asked_again)
{
    for (frees = 0; frees < 2; frees++) {
        write_steps(NULL, allocs);
        advise_with("input_share=2", "cpu_allocs_per_step=4", NULL);
        /* the steps' candidates in the table's join, the steps' times, the
         * rows, the memory series: four reads */
        ck_assert_uint_eq(opp_pass_reads(adv_read), 4);
        double th[OPP_TH_COUNT];
        for (int i = 0; i < OPP_TH_COUNT; i++)
            th[i] = opp_advise_thresholds[i].value;
        th[OPP_TH_INPUT_SHARE] = 2;
        th[OPP_TH_CPU_ALLOCS_PER_STEP] = 4;
        char err[512];
        struct opp_agg_opts o = {0};
        struct opp_advice pa;
        ck_assert_msg(opp_advise_pass_run(adv_pass, &o, "step", th, &pa, err, sizeof err) == 0,
                      "%s", err);
        ck_assert_uint_eq(adv.fs.n, frees ? 1 : 2); /* churn, and growth when kept */
        ck_assert_uint_eq(pa.fs.n, adv.fs.n);
        for (size_t i = 0; i < pa.fs.n; i++) {
            ck_assert_str_eq(pa.fs.f[i].rule, adv.fs.f[i].rule);
            ck_assert_str_eq(pa.fs.f[i].what, adv.fs.f[i].what);
            ck_assert_str_eq(pa.fs.f[i].evidence, adv.fs.f[i].evidence);
        }
        opp_advice_free(&pa);
        done();
    }
}
END_TEST

/* 4 allocations of 512 KiB kept in each step i that keep(i) says, the
 * others freed within their step. */
static int (*keep)(int i);

static void kept_allocs(struct evs *s, int i, uint64_t begin, uint64_t end)
{
    frees = !keep(i);
    allocs(s, i, begin, end);
}

static int odd(int i)
{
    return i % 2;
}

static int third(int i)
{
    return i == 3;
}

/* 2 MiB kept every other step (outputs kept at each log interval):
 * growth, though it rose in only 5 of 9 steps. */
START_TEST(memory_growth_every_other_step)
{
    keep = odd;
    write_steps(NULL, kept_allocs);
    advise_with("input_share=2", NULL);
    ck_assert_str_eq(rules(), "memory_growth");
    const struct opp_finding *f = found("memory_growth");
    near(f->per_step, 10.0 * 1048576 / 9);
    ck_assert_str_eq(f->what, "CPU memory grows 1.11 MiB a step");
    ck_assert_str_eq(f->evidence, "0.00 MiB at the end of step 0, 10.00 MiB at the end of step 9; "
                                  "it rose in 5 of 9 steps");
    done();
}
END_TEST

/* A rise in one step alone (a cache filled once) is no growth, though
 * its 2 MiB over 9 steps, 0.22 MiB a step, reach the threshold set. */
START_TEST(memory_rise_once_no_growth)
{
    keep = third;
    write_steps(NULL, kept_allocs);
    advise_with("input_share=2", "growth_bytes_per_step=200000", NULL);
    ck_assert_str_eq(rules(), "");
    done();
}
END_TEST

START_TEST(memory_silent_below)
{
    frees = 1;
    write_steps(NULL, allocs);
    advise_with("input_share=2", "cpu_allocs_per_step=5", NULL);
    ck_assert_str_eq(rules(), "");
    done();
}
END_TEST

/* ---- GPU idle, launch-bound ---- */

static uint64_t kernel_ns;
static uint64_t launch_gap = 40 * US; /* from one launch to the next */

/* 20 launches of 10 us a step, each running a kernel of kernel_ns. */
static void launches(struct evs *s, int i, uint64_t begin, uint64_t end)
{
    (void)end;
    for (int k = 0; k < 20; k++) {
        uint64_t t = begin + (uint64_t)k * launch_gap, corr = (uint64_t)(i * 20 + k + 1);
        ev(s, (struct tb_ev)TB_CALL(F_LAUNCH, 0, 0, 0, 0, corr, 211), t, t + 10 * US, 1);
    }
}

static void write_gpu(void)
{
    struct tb b;
    tb_open(&b, trace);
    process(&b, 0, -1, NULL, launches);
    for (int i = 0; i < NSTEPS; i++)
        for (int k = 0; k < 20; k++) {
            uint64_t t = T0 + (uint64_t)i * 10 * MS + (uint64_t)k * launch_gap + 20 * US;
            tb_kernel(&b, .name = S_KERNEL, .start = t, .end = t + kernel_ns, .stream = 7,
                      .corr = (uint64_t)(i * 20 + k + 1));
        }
    tb_gpu_chunk(&b);
    tb_end(&b);
}

START_TEST(gpu_idle_and_launch_bound_fire)
{
    kernel_ns = 2 * US;
    write_gpu();
    advise();
    /* the steps' time outside the launches is outside any call too */
    ck_assert_str_eq(rules(), "gpu_idle outside_ops launch_bound");
    const struct opp_finding *f = &adv.fs.f[0];
    ck_assert_str_eq(f->rule, "gpu_idle");
    ck_assert_uint_eq(f->stake_ns, 100 * MS - 400 * US);
    near(f->share, 0.996);
    ck_assert_int_eq(f->device, 0);
    ck_assert_int_eq(f->stream, 7); /* the device's one stream */
    f = found("launch_bound");
    ck_assert_ptr_nonnull(f);
    near(f->per_step, 20.0);
    ck_assert_uint_eq(f->stake_ns, 10 * 20 * 8 * US); /* (10 - 2) us a launch */
    ck_assert_str_eq(f->op, "cudaLaunchKernel");
    ck_assert_str_eq(f->evidence, "kernels 2.00 us each on the device, cudaLaunchKernel 10.00 us "
                                  "each on the CPU (200 calls); the most launched: tiny_kernel "
                                  "(200)");
    done();
}
END_TEST

START_TEST(gpu_idle_silent_below)
{
    kernel_ns = 400 * US; /* 20 a step, 450 us apart: busy 8 of 10 ms */
    launch_gap = 450 * US;
    write_gpu();
    launch_gap = 40 * US;
    advise();
    ck_assert_ptr_null(found("gpu_idle"));
    done();
    kernel_ns = 340 * US; /* busy 6.8 of 10 ms: idle 32% */
    launch_gap = 450 * US;
    write_gpu();
    launch_gap = 40 * US;
    advise();
    ck_assert_ptr_nonnull(found("gpu_idle"));
    near(found("gpu_idle")->share, 0.32);
    done();
}
END_TEST

/* Steps that are ranges with gaps between them (write_gapped_steps'
 * shape): a launch in each step runs a kernel of 2 ms, one in each gap a
 * kernel of 8 ms. The steps' GPU work is their calls': 2 ms of 10, idle
 * 80% (the gaps' kernels counted too, the device was busy 92% of it). */
START_TEST(gpu_idle_counts_the_steps_kernels_not_the_gaps)
{
    struct tb b;
    open_trace(&b, "python3", 100, "main");
    for (int i = 0; i < NSTEPS; i++) {
        struct evs s = {.n = 0};
        uint64_t t = T0 + (uint64_t)i * 20 * MS, g = t + 11 * MS;
        ev(&s, (struct tb_ev)TB_CALL(F_LAUNCH, 0, 0, 0, 0, 2 * i + 1, 211), t + 10 * US,
           t + 20 * US, 1);
        ev(&s, (struct tb_ev)LABEL(S_STEP), t, t + 10 * MS, 0);
        if (i < NSTEPS - 1)
            ev(&s, (struct tb_ev)TB_CALL(F_LAUNCH, 0, 0, 0, 0, 2 * i + 2, 211), g, g + 10 * US, 0);
        tb_put_events(&b, 0, s.e, s.n);
    }
    for (int i = 0; i < NSTEPS; i++) {
        uint64_t t = T0 + (uint64_t)i * 20 * MS, g = t + 11 * MS;
        tb_kernel(&b, .name = S_KERNEL, .start = t + 30 * US, .end = t + 30 * US + 2 * MS,
                  .stream = 7, .corr = (uint64_t)(2 * i + 1));
        if (i < NSTEPS - 1)
            tb_kernel(&b, .name = S_KERNEL, .start = g + 20 * US, .end = g + 20 * US + 8 * MS,
                      .stream = 7, .corr = (uint64_t)(2 * i + 2));
    }
    tb_gpu_chunk(&b);
    tb_end(&b);
    advise();
    ck_assert_uint_eq(adv.wall_ns, 100 * MS);
    const struct opp_finding *f = found("gpu_idle");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(f->stake_ns, 80 * MS);
    near(f->share, 0.8);
    ck_assert_str_eq(f->evidence, "2.000 ms of device work (10 ops) in a 10.000 ms step (mean); "
                                  "its largest gap in the trace: 8.990 ms, before tiny_kernel");
    done();
    /* the loaded model's rows over the same spans: the same GPU work */
    char err[256];
    struct opp_model *m = tu_model_load(trace, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    uint64_t first = tu_model_first_ns(m), spans[2 * NSTEPS];
    for (int i = 0; i < NSTEPS; i++) {
        spans[2 * i] = T0 + (uint64_t)i * 20 * MS - first;
        spans[2 * i + 1] = spans[2 * i] + 10 * MS;
    }
    size_t at[2] = {0, NSTEPS};
    struct opp_agg_opts o = {
        .window = 1, .to_ns = UINT64_MAX, .spans = spans, .span_at = at, .span_procs = 1};
    struct opp_agg a;
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    ck_assert_uint_eq(a.self_cuda_time_total_ns, 20 * MS);
    ck_assert_uint_eq(a.gpu_ops, 10);
    opp_agg_free(&a);
    opp_model_free(m);
}
END_TEST

START_TEST(launch_bound_silent_long_kernels)
{
    kernel_ns = 11 * US; /* longer than a launch, and than launch_kernel_us */
    write_gpu();
    advise_with("gpu_idle_share=1", NULL);
    ck_assert_ptr_null(found("launch_bound"));
    ck_assert_ptr_null(found("gpu_idle"));
    done();
}
END_TEST

/* ---- stragglers ---- */

static uint64_t rank1_ns;

static void allreduce0(struct evs *s, int i, uint64_t begin, uint64_t end)
{
    (void)i, (void)end;
    ev(s, (struct tb_ev)TB_CALL(F_OP, 0, 0, 0), begin, begin + 1 * MS, 1);
}

static void allreduce1(struct evs *s, int i, uint64_t begin, uint64_t end)
{
    (void)i, (void)end;
    ev(s, (struct tb_ev)TB_CALL(F_OP, 0, 0, 0), begin, begin + rank1_ns, 1);
}

/* Rank 1's steps longer by its longer allreduce: the steps' own time is
 * the same on both. */
static void write_ranks(void)
{
    struct tb b;
    tb_open(&b, trace);
    uint64_t wall1[NSTEPS];
    for (int i = 0; i < NSTEPS; i++)
        wall1[i] = 10 * MS + rank1_ns - 1 * MS;
    process(&b, 0, 0, NULL, allreduce0);
    process(&b, 1, 1, wall1, allreduce1);
    tb_end(&b);
}

START_TEST(straggler_fires)
{
    rank1_ns = 3 * MS;
    write_ranks();
    advise_with("outside_share=1", NULL);
    const struct opp_finding *f = found("stragglers");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->rank, 1);
    ck_assert_str_eq(f->op, "allreduce");
    ck_assert_uint_eq(f->stake_ns, 20 * MS); /* 30 ms against the median 10 */
    ck_assert_str_eq(f->what, "Straggler: rank 1 spends 3.0x the median rank's time in allreduce");
    /* a command that takes --rank */
    ck_assert_str_eq(f->try_, "look at that rank (`opprof advise TRACE --rank R`): uneven data "
                              "(shard sizes, sequence lengths), a slower host or device, work "
                              "only it does (logging, checkpoints)");
    done();
}
END_TEST

START_TEST(straggler_silent_below)
{
    rank1_ns = 1150 * US; /* 1.15x */
    write_ranks();
    advise_with("outside_share=1", NULL);
    ck_assert_ptr_null(found("stragglers"));
    done();
}
END_TEST

/* Thresholds set under 1 (--set): a warm-up or outlier step shorter than
 * the p50 adds nothing to the time at stake (it took the difference, a
 * wrapped-around number, before). */
START_TEST(ratios_under_one_stake_no_negative_time)
{
    const uint64_t wall[NSTEPS] = {30 * MS, 10 * MS, 10 * MS, 10 * MS, 10 * MS,
                                   10 * MS, 10 * MS, 10 * MS, 10 * MS, 9 * MS};
    copy_in_7 = 0;
    write_steps(wall, busy);
    advise_with("input_share=2", "warmup_ratio=0.5", "outlier_ratio=0.5", NULL);
    const struct opp_finding *f = found("warmup");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->step_last, 4); /* at most half the steps */
    ck_assert_uint_eq(f->stake_ns, 20 * MS);
    f = found("outlier_steps");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(f->stake_ns, 0); /* steps 5 to 9: 10, 10, 10, 10, 9 ms; p50 10 */
    done();
}
END_TEST

/* One step cannot show growth (there is no step to step): with steps_min
 * 0 no finding, not one of NaN bytes a step. */
START_TEST(growth_needs_two_steady_steps)
{
    frees = 0;
    nsteps = 1;
    write_steps(NULL, allocs);
    nsteps = NSTEPS;
    advise_with("input_share=2", "steps_min=0", NULL);
    ck_assert_uint_eq(adv.nsteps, 1);
    ck_assert_str_eq(rules(), "");
    done();
}
END_TEST

/* ---- tiny matrix products ---- */

static int64_t mm_n; /* 20 aten::mm a step of [[mm_n, 8], [8, mm_n]], 5 us each */

static void products(struct evs *s, int i, uint64_t begin, uint64_t end)
{
    (void)i;
    uint64_t t = begin;
    for (int k = 0; k < 20; k++, t += 5 * US)
        ev(s,
           (struct tb_ev)TB_CALL(F_TORCH, 0, 0, 0, S_MM, OPP_TORCH_SCOPE_FUNCTION, 2,
                                 OPP_TIN_TAG(OPP_TIN_TENSOR, OPP_DT_F32, 2), (uint64_t)mm_n, 8,
                                 OPP_TIN_TAG(OPP_TIN_TENSOR, OPP_DT_F32, 2), 8, (uint64_t)mm_n),
           t, t + 5 * US, 1);
    ev(s, (struct tb_ev)LABEL(S_LOADER), t, end, 1);
}

START_TEST(tiny_gemms_fire)
{
    mm_n = 4;
    write_steps(NULL, products);
    advise_with("input_share=2", NULL);
    ck_assert_str_eq(rules(), "tiny_gemms");
    const struct opp_finding *f = &adv.fs.f[0];
    near(f->per_step, 20.0);
    ck_assert_uint_eq(f->stake_ns, 1 * MS);
    ck_assert_str_eq(f->op, "aten::mm");
    /* torch's ops carry no FLOPs: 2 x 4 x 8 x 4 from the shapes */
    ck_assert_str_eq(f->evidence,
                     "the most called: aten::mm on [[4, 8], [8, 4]], 256 FLOPs and 5.0 us each");
    done();
}
END_TEST

/* Two shapes, each 10 a step: one finding, their calls added up and the
 * shapes counted in its words. */
static void two_products(struct evs *s, int i, uint64_t begin, uint64_t end)
{
    (void)i;
    uint64_t t = begin;
    for (int k = 0; k < 20; k++, t += 5 * US) {
        uint64_t n = k % 2 ? 4 : 5;
        ev(s,
           (struct tb_ev)TB_CALL(F_TORCH, 0, 0, 0, S_MM, OPP_TORCH_SCOPE_FUNCTION, 2,
                                 OPP_TIN_TAG(OPP_TIN_TENSOR, OPP_DT_F32, 2), n, 8,
                                 OPP_TIN_TAG(OPP_TIN_TENSOR, OPP_DT_F32, 2), 8, n),
           t, t + 5 * US, 1);
    }
    ev(s, (struct tb_ev)LABEL(S_LOADER), t, end, 1);
}

START_TEST(tiny_gemms_of_two_shapes)
{
    write_steps(NULL, two_products);
    advise_with("input_share=2", "tiny_gemm_per_step=10", NULL);
    ck_assert_str_eq(rules(), "tiny_gemms");
    const struct opp_finding *f = &adv.fs.f[0];
    near(f->per_step, 20.0);
    ck_assert_str_eq(f->what, "Many tiny matrix products: 20 a step, of 2 shapes");
    done();
}
END_TEST

START_TEST(tiny_gemms_silent_above_flops)
{
    mm_n = 4; /* 256 FLOPs a call, one more than the threshold here */
    write_steps(NULL, products);
    advise_with("input_share=2", "tiny_gemm_flops=255", NULL);
    ck_assert_str_eq(rules(), "");
    done();
}
END_TEST

/* ---- device allocations ---- */

/* Device memory records: 2 allocations of 1 MiB a step, freed in it. */
static void write_cuda_allocs(void)
{
    struct tb b;
    tb_open(&b, trace);
    process(&b, 0, -1, NULL, NULL);
    for (int i = 0; i < NSTEPS; i++)
        for (int k = 0; k < 2; k++) {
            uint64_t t = T0 + (uint64_t)i * 10 * MS + (uint64_t)k * 2 * MS + 1 * MS;
            uint64_t addr = 0x7f0000000000ull + (uint64_t)(i * 2 + k) * 0x100000u;
            tb_memory(&b, .start = t, .device = 0, .op = 1, .address = addr, .bytes = 1048576);
            tb_memory(&b, .start = t + 1 * MS, .device = 0, .op = 2, .address = addr,
                      .bytes = 1048576);
        }
    tb_gpu_chunk(&b);
    tb_end(&b);
}

START_TEST(cuda_alloc_churn_fires)
{
    write_cuda_allocs();
    advise_with("outside_share=2", NULL);
    ck_assert_str_eq(rules(), "cuda_alloc_churn");
    const struct opp_finding *f = &adv.fs.f[0];
    near(f->per_step, 2.0);
    ck_assert_int_eq(f->device, 0);
    ck_assert_str_eq(f->what, "Device allocations inside the step: 2.0 a steady step on device 0");
    done();
    write_cuda_allocs();
    advise_with("outside_share=2", "cuda_allocs_per_step=2.5", NULL);
    ck_assert_str_eq(rules(), "");
    done();
}
END_TEST

/* ---- communication not overlapped ---- */

static uint64_t nccl_end; /* each step's all-reduce runs from 2 ms to this */

/* A step: a compute kernel on stream 7 from 1 to 3 ms, an all-reduce on
 * stream 8 from 2 ms to nccl_end. */
static void write_comm(void)
{
    struct tb b;
    tb_open(&b, trace);
    process(&b, 0, -1, NULL, NULL);
    for (int i = 0; i < NSTEPS; i++) {
        uint64_t t = T0 + (uint64_t)i * 10 * MS;
        tb_kernel(&b, .name = S_KERNEL, .start = t + 1 * MS, .end = t + 3 * MS, .stream = 7);
        tb_kernel(&b, .name = S_NCCL, .start = t + 2 * MS, .end = t + nccl_end, .stream = 8);
    }
    tb_gpu_chunk(&b);
    tb_end(&b);
}

START_TEST(comm_exposed_fires)
{
    nccl_end = 6 * MS; /* 4 ms, 3 of them with no compute */
    write_comm();
    advise_with("outside_share=2", "gpu_idle_share=2", NULL);
    ck_assert_str_eq(rules(), "comm_exposed");
    const struct opp_finding *f = &adv.fs.f[0];
    ck_assert_uint_eq(f->stake_ns, 30 * MS);
    ck_assert_int_eq(f->device, 0);
    near(f->per_step, 1.0);
    ck_assert_str_eq(f->op, NAMES[S_NCCL - S_STEP]);
    ck_assert_str_eq(f->what, "Communication not overlapped with compute: 75% of the NCCL "
                              "kernels' time runs with no compute kernel beside it");
    ck_assert_str_eq(f->evidence, "NCCL kernels 40.000 ms, compute kernels 20.000 ms, device busy "
                                  "50.000 ms (the union of its streams): 30.000 ms exposed");
    done();
}
END_TEST

START_TEST(comm_exposed_silent_below)
{
    nccl_end = 3500 * US; /* 1.5 ms, 0.5 of it alone: 33% */
    write_comm();
    advise_with("outside_share=2", "gpu_idle_share=2", NULL);
    ck_assert_str_eq(rules(), "");
    done();
}
END_TEST

/* ---- the command ---- */

static int run(char **out, char **err, ...)
{
    char *argv[16] = {"advise"};
    int n = 1;
    va_list ap;
    va_start(ap, err);
    for (char *a; n < 15 && (a = va_arg(ap, char *));)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    return tu_call(cmd_advise, argv, dir, out, err);
}

/* The text: the steps looked at, then each finding's what, where, how
 * much, evidence and what to try. */
START_TEST(command_text)
{
    loader_ns = 8 * MS;
    write_steps(NULL, loader);
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, trace, "--step", "step", NULL), 0);
    ck_assert_str_eq(err, "");
    const char *body = strstr(out, "\nSteps: ");
    ck_assert_ptr_nonnull(body);
    ck_assert_str_eq(
        body,
        "\nSteps: step, 10: p50 10.000 ms, p99 10.000 ms, 100.000 ms in all\n"
        "\n"
        "1. Input pipeline bound: the steps wait for the DataLoader 80% of their time "
        "[input_pipeline]\n"
        "   where:    enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__\n"
        "   how much: 80.0% of the steps' time, 8.000 ms a step (80.000 ms in all), 1.0 calls a "
        "step\n"
        "   evidence: enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__: 8.000 ms of the "
        "10.000 ms a step takes (mean), 80% to 80% a step over 10 steps\n"
        "   try:      more DataLoader workers (num_workers), persistent_workers=True and a larger "
        "prefetch_factor (pin_memory=True for a GPU); make the Dataset's __getitem__ cheaper "
        "(decode once and cache, batch the transforms); `opprof report --by-process` shows the "
        "workers' own time\n");
    free(out), free(err);
}
END_TEST

/* A byte amount a step in MiB, as the finding's own words say it. */
START_TEST(memory_growth_text)
{
    frees = 0;
    write_steps(NULL, allocs);
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, trace, "--step", "step", "--set", "input_share=2", NULL), 0);
    ck_assert_str_eq(err, "");
    const char *body = strstr(out, "[memory_growth]\n");
    ck_assert_ptr_nonnull(body);
    ck_assert_str_eq(body, "[memory_growth]\n"
                           "   where:    step 0 to 9\n"
                           "   how much: 2.00 MiB a step\n"
                           "   evidence: 2.00 MiB at the end of step 0, 20.00 MiB at the end of "
                           "step 9; it rose in 9 of 9 steps\n"
                           "   try:      something keeps tensors from step to step: a loss kept "
                           "with its graph (total += loss instead of loss.item() or "
                           "loss.detach()), lists of outputs, caches; `opprof export memory` "
                           "draws the timeline\n");
    free(out), free(err);
}
END_TEST

/* A step name that only another process's calls have: exit 2, one line
 * naming the process that has them, from advise and from report --step
 * (the first process is pid 10, a worker without steps; pid 11 has the
 * steps). */
START_TEST(command_step_in_another_process)
{
    struct tb b;
    open_trace(&b, "python3", 100, "main");
    struct evs s = {.n = 0};
    op(&s, S_MUL, T0, T0 + MS, 0);
    tb_put_events(&b, 0, s.e, s.n);
    process(&b, 1, -1, NULL, NULL);
    tb_end(&b);
    static const struct {
        const char *args[4], *err;
    } cases[] = {
        {{"--step", "step"},
         "--step 'step': no call of that name in pid 10, the first process (pid 11 has some: "
         "--pid 11)\n"},
        {{"--step", "step", "--pid", "10"},
         "--step 'step': no call of that name in pid 10 (pid 11 has some)\n"},
        {{"--step", "step", "--tid", "100"},
         "--step 'step': no call of that name in thread 100 (pid 11 has some)\n"},
    };
    for (int cmd = 0; cmd < 2; cmd++)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            if (!cmd && cases[i].args[2] && !strcmp(cases[i].args[2], "--tid"))
                continue; /* advise has no --tid */
            char *argv[8] = {cmd ? "report" : "advise", (char *)trace};
            for (int k = 0; k < 4 && cases[i].args[k]; k++)
                argv[2 + k] = (char *)cases[i].args[k];
            char *out, *err, want[256];
            ck_assert_int_eq(tu_call(cmd ? cmd_report : cmd_advise, argv, dir, &out, &err), 2);
            snprintf(want, sizeof want, "opprof %s: %s", argv[0], cases[i].err);
            ck_assert_str_eq(err, want);
            ck_assert_str_eq(out, "");
            free(out), free(err);
        }
    /* the process that has them: its steps */
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, trace, "--step", "step", "--pid", "11", NULL), 0);
    ck_assert_ptr_nonnull(strstr(out, "10 steps"));
    free(out), free(err);
}
END_TEST

/* Names and values the trace or the table does not have: exit 2, one line. */
START_TEST(command_errors)
{
    loader_ns = 8 * MS;
    write_steps(NULL, loader);
    static const struct {
        const char *args[4], *err;
    } cases[] = {
        {{"--step", "nosuch"}, "--step 'nosuch': no call of that name in "},
        {{"--rank", "7"}, "--rank 7: no process of "},
        {{"--pid", "99"}, "--pid 99: no process with that pid in the trace"},
        {{"--rank", "1.5"}, "--rank wants a rank number from 0, not '1.5'"},
        {{"--set", "nosuch=1"},
         "--set: no threshold 'nosuch' (`opprof advise --thresholds` "
         "lists them)"},
        {{"--set", "input_share=x"}, "--set input_share wants a number (0 or more), not 'x'"},
        {{"--set", "input_share=2", "--set", "input_share=3"},
         "--set input_share given twice ('input_share=2' and 'input_share=3'): give it once"},
        {{"-f", "xml"}, "unknown format 'xml' (one of: text, json)"},
        /* the thresholds' table is of no trace, in one format */
        {{"--thresholds"},
         "--thresholds prints the rules' thresholds and exits: no TRACE, "
         "--format, --step, --pid or --rank with it, only --set"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out, *err;
        const char *const *a = cases[i].args;
        ck_assert_int_eq(run(&out, &err, trace, a[0], a[1], a[2], a[3], NULL), 2);
        ck_assert_int_eq(tu_count_lines(err, "opprof advise: "), 1);
        ck_assert_msg(strstr(err, cases[i].err), "%s", err);
        ck_assert_str_eq(out, "");
        free(out), free(err);
    }
    /* no trace, or two: one line each, no help text */
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, NULL), 2);
    ck_assert_str_eq(err, "opprof advise: which trace? (usage: opprof advise TRACE [options])\n");
    free(out), free(err);
    ck_assert_int_eq(run(&out, &err, trace, trace, NULL), 2);
    ck_assert_str_eq(err, "opprof advise: one trace at a time (usage: opprof advise TRACE "
                          "[options])\n");
    free(out), free(err);
    /* --thresholds with what only a trace's advice takes: one line */
    ck_assert_int_eq(run(&out, &err, "--thresholds", "-f", "json", NULL), 2);
    ck_assert_str_eq(err, "opprof advise: --thresholds prints the rules' thresholds and exits: no "
                          "TRACE, --format, --step, --pid or --rank with it, only --set\n");
    ck_assert_str_eq(out, "");
    free(out), free(err);
    ck_assert_int_eq(run(&out, &err, "--rank", "1", "--thresholds", NULL), 2);
    ck_assert_int_eq(tu_count_lines(err, "opprof advise: --thresholds prints"), 1);
    free(out), free(err);
    /* the thresholds' table, with a value --set */
    ck_assert_int_eq(run(&out, &err, "--thresholds", "--set", "fuse_per_step=8", NULL), 0);
    ck_assert_ptr_nonnull(strstr(out, "\n| `fuse_per_step` | 8 | calls | fusable_ops | "));
    ck_assert_int_eq(tu_count_lines(out, "| `"), OPP_TH_COUNT);
    free(out), free(err);
}
END_TEST

/* ---- the output ---- */

START_TEST(json_output)
{
    loader_ns = 8 * MS;
    write_steps(NULL, loader);
    advise();
    char *path = tu_path(dir, "out.json");
    FILE *f = fopen(path, "w");
    ck_assert_int_eq(opp_out_advice(f, "t.trace", &adv, 1), 0);
    fclose(f);
    char *text = tu_slurp(path);
    ck_assert_str_eq(
        text,
        "{\"trace\": \"t.trace\", \"steps\": {\"what\": \"step\", \"count\": 10, \"p50_ms\": 10, "
        "\"p99_ms\": 10, \"wall_ms\": 100}, \"lost\": [], \"findings\": [\n"
        "  {\"rank\": 1, \"rule\": \"input_pipeline\", \"what\": \"Input pipeline bound: the "
        "steps wait for the DataLoader 80% of their time\", \"where\": {\"op\": "
        "\"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__\"}, \"share\": 0.8, "
        "\"ms_per_step\": 8, \"per_step\": 1, \"per_step_unit\": \"calls\", \"stake_ms\": 80, "
        "\"evidence\": \"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__: 8.000 ms of "
        "the 10.000 ms a step takes (mean), 80% to 80% a step over 10 steps\", \"try\": \"more "
        "DataLoader workers (num_workers), persistent_workers=True and a larger prefetch_factor "
        "(pin_memory=True for a GPU); make the Dataset's __getitem__ cheaper (decode once and "
        "cache, batch the transforms); `opprof report --by-process` shows the workers' own "
        "time\"}\n]}\n");
    free(text);
    free(path);
    done();
}
END_TEST

Suite *suite_advise(void)
{
    Suite *s = suite_create("advise");
    TCase *tc = tcase_create("rules");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, input_pipeline_fires);
    tcase_add_test(tc, no_call_run_is_its_process);
    tcase_add_test(tc, without_steps_says_rules_not_run);
    tcase_add_test(tc, input_pipeline_silent_below);
    tcase_add_test(tc, input_pipeline_other_thread_not_counted);
    tcase_add_test(tc, host_sync_fires);
    tcase_add_test(tc, host_sync_silent_below);
    tcase_add_test(tc, host_sync_silent_without_device);
    tcase_add_test(tc, fusable_fires);
    tcase_add_test(tc, fusable_on_0d_tensors);
    tcase_add_test(tc, fusable_names_its_shapes_line);
    tcase_add_test(tc, fusable_silent_below);
    tcase_add_test(tc, fusable_same_ops_one_finding);
    tcase_add_test(tc, fusable_shapes_named);
    tcase_add_test(tc, fusable_counts_the_steps_calls_not_the_gaps);
    tcase_add_test(tc, warmup_fires);
    tcase_add_test(tc, warmup_silent_below);
    tcase_add_test(tc, outlier_fires);
    tcase_add_test(tc, outlier_silent_below);
    tcase_add_test(tc, outlier_outside_calls);
    tcase_add_test(tc, outlier_op_not_outside);
    tcase_add_test(tc, outlier_outside_calls_of_profiler_steps);
    tcase_add_test(tc, outlier_outside_calls_of_named_range_steps);
    tcase_add_test(tc, gapped_steps_of_two_ranks);
    tcase_add_test(tc, outside_time_of_a_program_not_python);
    tcase_add_test(tc, lost_data_first);
    tcase_add_test(tc, lost_data_interrupted_apart);
    tcase_add_test(tc, lost_data_summary_bound_apart);
    tcase_add_test(tc, memory_growth_and_churn_fire);
    tcase_add_test(tc, memory_findings_asked_again);
    tcase_add_test(tc, memory_silent_below);
    tcase_add_test(tc, memory_growth_every_other_step);
    tcase_add_test(tc, memory_rise_once_no_growth);
    tcase_add_test(tc, gpu_idle_and_launch_bound_fire);
    tcase_add_test(tc, gpu_idle_silent_below);
    tcase_add_test(tc, launch_bound_silent_long_kernels);
    tcase_add_test(tc, gpu_idle_counts_the_steps_kernels_not_the_gaps);
    tcase_add_test(tc, comm_exposed_fires);
    tcase_add_test(tc, comm_exposed_silent_below);
    tcase_add_test(tc, straggler_fires);
    tcase_add_test(tc, straggler_silent_below);
    tcase_add_test(tc, ratios_under_one_stake_no_negative_time);
    tcase_add_test(tc, growth_needs_two_steady_steps);
    tcase_add_test(tc, tiny_gemms_fire);
    tcase_add_test(tc, tiny_gemms_of_two_shapes);
    tcase_add_test(tc, tiny_gemms_silent_above_flops);
    tcase_add_test(tc, cuda_alloc_churn_fires);
    tcase_add_test(tc, command_text);
    tcase_add_test(tc, memory_growth_text);
    tcase_add_test(tc, command_errors);
    tcase_add_test(tc, command_step_in_another_process);
    tcase_add_test(tc, json_output);
    suite_add_tcase(s, tc);
    return s;
}
