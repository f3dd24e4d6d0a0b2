/* Summary mode's aggregation (common/summary_calls.c): calls fed in the order a
 * thread returns from them, written as SUMMARY chunks, read back through
 * the model. Exact counts, times, call paths and bounds. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "analysis/model.h"
#include "analysis/pass.h"
#include "analysis/table_stream.h"
#include "summary.h"
#include "summary_internal.h"
#include "failalloc.h"
#include "testutil.h"
#include "tool/cmds.h"
#include "tracebuild.h"
#include "oracle/loaded.h"

enum { F_STEP, F_CONV, F_GEMM, F_LAUNCH, F_DIV, F_ADD, F_MEM, NF };

static char *dir, *path;

static void setup(void)
{
    dir = tu_tmpdir();
    path = tu_path(dir, "s.trace");
}

static void teardown(void)
{
    tu_rmdir(dir);
    free(dir);
    free(path);
}

static const struct opp_func_desc FUNCS[NF] = {
    [F_STEP] = {OPP_OP_PLAIN, OPP_DT_NONE, "app", "step"},
    [F_CONV] = {OPP_OP_PLAIN, OPP_DT_NONE, "app", "conv"},
    [F_GEMM] = {OPP_OP_GEMM, OPP_DT_F32, "blas", "sgemm_"},
    [F_LAUNCH] = {OPP_OP_CUDA_API, OPP_DT_NONE, "cudart", "cudaLaunchKernel"},
    [F_DIV] = {OPP_OP_TORCH, OPP_DT_NONE, "torch", "aten::div_"},
    [F_ADD] = {OPP_OP_TORCH, OPP_DT_NONE, "torch", "aten::add"},
    [F_MEM] = {OPP_OP_MEMORY, OPP_DT_NONE, "c10", "c10::alloc_cpu"},
};

/* A trace of process 1 with FUNCS at file, its chunks to come. */
static void open_trace_at(struct tb *b, const char *file)
{
    tb_open(b, file);
    tb_process(b, .proc = 1, .pid = 10, .ppid = 1, .real = 1, .exe = "/bin/train",
               .argv = {"train"});
    tb_put_funcs(b, FUNCS, NF);
}

static void open_trace(struct tb *b)
{
    open_trace_at(b, path);
}

static void begin(struct tb *b, struct opp_sum *s)
{
    open_trace(b);
    ck_assert_int_eq(opp_sum_proc(s, 1, NF, FUNCS), 0);
}

/* The summary's chunks, then the END chunk; the trace at file loaded. */
static struct opp_model *finish_at(struct tb *b, struct opp_sum *s, const char *file)
{
    ck_assert_int_eq(opp_sum_write(s, 1, &b->w), 0);
    tb_end(b);
    char err[512];
    struct opp_model *m = tu_model_load(file, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    return m;
}

static struct opp_model *finish(struct tb *b, struct opp_sum *s)
{
    return finish_at(b, s, path);
}

/* The event of the summary thread with this name and parent name. */
static const struct opp_event *node(const struct opp_model *m, const char *name,
                                    const char *parent, size_t *index)
{
    const struct opp_thread *t = &m->threads[0];
    for (size_t i = 0; i < t->nevents; i++) {
        const struct opp_event *e = &t->events[i];
        const char *pn = e->parent == OPP_NO_PARENT ? "" : opp_model_str(m, t->events[e->parent].name);
        if (!strcmp(opp_model_str(m, e->name), name) && !strcmp(pn, parent)) {
            *index = i;
            return e;
        }
    }
    ck_abort_msg("no node %s under '%s'", name, parent);
    return NULL;
}

/* step { conv { sgemm(64) } sgemm(64) sgemm(32) } N times: children wait
 * for their parent and join its node; the number of nodes does not grow. */
START_TEST(loop_of_steps)
{
    struct opp_sum *s = opp_sum_new(1000);
    ck_assert_ptr_nonnull(s);
    struct tb b;
    begin(&b, s);
    uint64_t g64[4] = {64, 64, 64, 'N' | 'N' << 8}, g32[4] = {32, 32, 32, 'N' | 'N' << 8};
    struct opp_sum_stats st;
    for (uint64_t k = 0, t = 0; k < 1000; k++, t += 100) {
        ck_assert_int_eq(opp_sum_call(s, 1, 7, F_GEMM, 2, t + 2, t + 5, 4, g64, 0), 0);
        ck_assert_int_eq(opp_sum_call(s, 1, 7, F_CONV, 1, t + 1, t + 10, 0, NULL, 0), 0);
        ck_assert_int_eq(opp_sum_call(s, 1, 7, F_GEMM, 1, t + 20, t + 30, 4, g64, 0), 0);
        ck_assert_int_eq(opp_sum_call(s, 1, 7, F_GEMM, 1, t + 40, t + 44, 4, g32, 0), 0);
        ck_assert_int_eq(opp_sum_call(s, 1, 7, F_STEP, 0, t, t + 50, 0, NULL, 0), 0);
        if (k == 0) {
            opp_sum_stats(s, &st);
            ck_assert_uint_eq(st.nodes, 5);
        }
    }
    opp_sum_stats(s, &st);
    ck_assert_uint_eq(st.nodes, 5); /* step, conv, conv>sgemm, sgemm 64, sgemm 32 */
    ck_assert_uint_eq(st.calls, 5000);
    ck_assert_uint_eq(st.dropped, 0);
    struct opp_model *m = finish(&b, s);
    opp_sum_free(s);
    ck_assert(m->summary);
    ck_assert_uint_eq(m->nthreads, 1);
    ck_assert_uint_eq(m->threads[0].nevents, 5);
    size_t i;
    const struct opp_event *e = node(m, "step", "", &i);
    ck_assert_uint_eq(tu_event_calls(&m->threads[0], i), 1000);
    ck_assert_uint_eq(opp_event_dur(e), 50000);
    ck_assert_uint_eq(e->self_ns, 1000 * (50 - 9 - 10 - 4));
    e = node(m, "conv", "step", &i);
    ck_assert_uint_eq(opp_event_dur(e), 9000);
    ck_assert_uint_eq(e->self_ns, 6000);
    ck_assert_uint_eq(e->depth, 1);
    e = node(m, "sgemm_", "conv", &i);
    ck_assert_uint_eq(tu_event_calls(&m->threads[0], i), 1000);
    ck_assert_uint_eq(e->depth, 2);
    ck_assert_uint_eq(e->self_ns, 3000);
    ck_assert_uint_eq(m->events, 5000);
    opp_model_free(m);
}
END_TEST

/* What a thread's ring holds, in order, as the collector hands it over:
 * a call, the start of a schedule window, a MEMORY call's bytes given for
 * the next call, or the thread's end. again: for a call that is the one
 * before again but for its times, whether opp_sum_again counts it (1) or
 * refuses it (0); -1: not such a call. */
enum { R_CALL, R_WINDOW, R_GIVEN, R_END };
struct rec {
    int what;
    uint32_t fn, depth;
    uint64_t begin, end;
    const uint64_t *args;
    uint32_t nargs;
    unsigned flags;
    int again;
};

/* recs into s, each call through opp_sum_call, or (fast) a call again
 * through opp_sum_again when it takes it, as rec.again says it must. */
static void feed(struct opp_sum *s, const struct rec *recs, size_t n, int fast)
{
    const struct rec *last = NULL;
    for (size_t k = 0; k < n; k++) {
        const struct rec *r = &recs[k];
        if (r->what == R_WINDOW) {
            ck_assert_int_eq(opp_sum_window(s, 1, 7, r->fn), 0);
            continue;
        }
        if (r->what == R_GIVEN) {
            opp_sum_given_bytes(s, 0);
            continue;
        }
        if (r->what == R_END) {
            opp_sum_thread_end(s, 1, 7);
            continue;
        }
        if (r->again >= 0) { /* the table says what it is: check it */
            ck_assert_ptr_nonnull(last);
            ck_assert_msg(
                r->fn == last->fn && r->depth == last->depth && r->nargs == last->nargs &&
                    r->flags == last->flags &&
                    (!r->nargs || !memcmp(r->args, last->args, r->nargs * sizeof *r->args)),
                "record %zu is not the call before again", k);
        }
        last = r;
        if (fast && r->again >= 0) {
            ck_assert_msg(opp_sum_again(s, r->begin, r->end) == r->again,
                          "record %zu: opp_sum_again should %s it", k,
                          r->again ? "count" : "refuse");
            if (r->again)
                continue;
        }
        ck_assert_int_eq(
            opp_sum_call(s, 1, 7, r->fn, r->depth, r->begin, r->end, r->nargs, r->args, r->flags),
            0);
    }
}

/* The same records counted through opp_sum_call alone and with the calls
 * again through opp_sum_again: the same nodes, counts, totals and self
 * times (the parents' too), byte for byte in the file. Calls again it
 * must refuse: after a MEMORY call (its bytes), a window's start (another
 * call path), a call that had children or folded one, a CUDA call with a
 * correlation id, bytes given, the thread's end. */
START_TEST(calls_again_as_counted_one_by_one)
{
    uint64_t g64[4] = {64, 64, 64, 'N' | 'N' << 8};
    uint64_t alloc[3] = {OPP_MEM_ALLOC, 0x1000, 64}, api[3] = {0, 5, 211};
#define CALL(fn, depth, b, e, again, ...)                                                          \
    {                                                                                              \
        R_CALL, fn, depth, b, e, __VA_ARGS__, again                                                \
    }
    const struct rec recs[] = {
        /* step { sgemm sgemm sgemm conv } step step, twice */
        CALL(F_GEMM, 1, 10, 20, -1, g64, 4, 0),
        CALL(F_GEMM, 1, 20, 35, 1, g64, 4, 0),
        CALL(F_GEMM, 1, 35, 40, 1, g64, 4, 0),
        CALL(F_CONV, 1, 40, 60, -1, NULL, 0, 0),
        CALL(F_STEP, 0, 0, 100, -1, NULL, 0, 0),
        CALL(F_STEP, 0, 100, 130, 0, NULL, 0, 0), /* the one before had children */
        CALL(F_STEP, 0, 130, 135, 1, NULL, 0, 0),
        CALL(F_GEMM, 1, 1010, 1020, -1, g64, 4, 0),
        CALL(F_GEMM, 1, 1020, 1035, 1, g64, 4, 0),
        CALL(F_GEMM, 1, 1035, 1040, 1, g64, 4, 0),
        CALL(F_CONV, 1, 1040, 1060, -1, NULL, 0, 0),
        CALL(F_STEP, 0, 1000, 1100, -1, NULL, 0, 0),
        CALL(F_STEP, 0, 1100, 1130, 0, NULL, 0, 0),
        CALL(F_STEP, 0, 1130, 1135, 1, NULL, 0, 0),
        /* memory, a window between, a range */
        CALL(F_MEM, 0, 2000, 2000, -1, alloc, 3, 0),
        CALL(F_MEM, 0, 2001, 2001, 0, alloc, 3, 0),
        CALL(F_CONV, 0, 2010, 2020, -1, NULL, 0, 0),
        {.what = R_WINDOW, .fn = 1 /* the window */},
        CALL(F_CONV, 0, 2020, 2030, 0, NULL, 0, 0),
        CALL(F_CONV, 0, 2030, 2045, 1, NULL, 0, 0),
        CALL(F_STEP, 0, 2000, 2050, -1, NULL, 0, OPP_SUM_RANGE),
        CALL(F_STEP, 0, 2050, 2090, 1, NULL, 0, OPP_SUM_RANGE),
        /* a launch's correlation id, torch's fold */
        CALL(F_LAUNCH, 0, 3000, 3001, -1, api, 3, 0),
        CALL(F_LAUNCH, 0, 3001, 3002, 0, api, 3, 0),
        CALL(F_DIV, 1, 3010, 3020, -1, NULL, 0, 0),
        CALL(F_DIV, 0, 3005, 3030, -1, NULL, 0, 0),
        CALL(F_DIV, 0, 3030, 3040, 0, NULL, 0, 0), /* the one before folded its child */
        CALL(F_DIV, 0, 3040, 3050, 1, NULL, 0, 0),
        /* past the deepest depth kept; bytes given; the thread's end */
        CALL(F_CONV, 70, 3100, 3110, -1, NULL, 0, 0),
        CALL(F_CONV, 70, 3110, 3120, 1, NULL, 0, 0),
        {.what = R_GIVEN},
        CALL(F_CONV, 70, 3120, 3130, 0, NULL, 0, 0),
        CALL(F_CONV, 70, 3130, 3140, 1, NULL, 0, 0),
        {.what = R_END},
        CALL(F_CONV, 70, 3140, 3150, 0, NULL, 0, 0),
    };
#undef CALL
    const size_t n = sizeof recs / sizeof *recs;
    char *pa = tu_path(dir, "one_by_one.trace"), *pb = tu_path(dir, "again.trace");
    struct opp_model *m[2];
    struct opp_sum_stats st[2];
    for (int fast = 0; fast < 2; fast++) {
        struct opp_sum *s = opp_sum_new(1000);
        ck_assert_ptr_nonnull(s);
        struct tb b;
        open_trace_at(&b, fast ? pb : pa);
        ck_assert_int_eq(opp_sum_proc(s, 1, NF, FUNCS), 0);
        feed(s, recs, n, fast);
        opp_sum_stats(s, &st[fast]);
        m[fast] = finish_at(&b, s, fast ? pb : pa);
        opp_sum_free(s);
    }
    ck_assert_uint_eq(st[1].calls, st[0].calls);
    ck_assert_uint_eq(st[1].nodes, st[0].nodes);
    const struct opp_thread *a = &m[0]->threads[0], *b = &m[1]->threads[0];
    ck_assert_uint_eq(m[1]->events, m[0]->events);
    ck_assert_uint_eq(b->nevents, a->nevents);
    for (size_t i = 0; i < a->nevents; i++) {
        const struct opp_event *x = &a->events[i], *y = &b->events[i];
        const char *name = opp_model_str(m[0], x->name);
        ck_assert_str_eq(opp_model_str(m[1], y->name), name);
        ck_assert_msg(y->parent == x->parent && y->depth == x->depth, "%s: parent", name);
        ck_assert_msg(b->stat[i].count == a->stat[i].count, "%s: %llu calls, not %llu", name,
                      (unsigned long long)b->stat[i].count, (unsigned long long)a->stat[i].count);
        ck_assert_msg(opp_event_dur(y) == opp_event_dur(x), "%s: total", name);
        ck_assert_msg(y->self_ns == x->self_ns, "%s: self %llu, not %llu", name,
                      (unsigned long long)y->self_ns, (unsigned long long)x->self_ns);
        ck_assert_uint_eq(b->stat[i].window, a->stat[i].window);
        ck_assert_int_eq(b->stat[i].cpu_mem, a->stat[i].cpu_mem);
    }
    char *fa = tu_slurp(pa), *fb = tu_slurp(pb);
    struct stat sa, sb;
    ck_assert_int_eq(stat(pa, &sa), 0);
    ck_assert_int_eq(stat(pb, &sb), 0);
    ck_assert_int_eq(sb.st_size, sa.st_size);
    ck_assert_int_eq(memcmp(fa, fb, (size_t)sa.st_size), 0);
    /* and what they are */
    size_t i;
    const struct opp_event *e = node(m[1], "sgemm_", "step", &i);
    ck_assert_uint_eq(tu_event_calls(b, i), 6);
    ck_assert_uint_eq(opp_event_dur(e), 2 * 30);
    ck_assert_uint_eq(e->self_ns, 2 * 30);
    e = node(m[1], "step", "", &i);
    ck_assert_uint_eq(tu_event_calls(b, i), 6);
    ck_assert_uint_eq(opp_event_dur(e), 2 * (100 + 30 + 5));
    ck_assert_uint_eq(e->self_ns, 2 * ((100 - 30 - 20) + 30 + 5));
    /* conv at the top, by window: window 1's two at depth 0 and four
     * past the deepest kept (the thread's end moved them up); window 0's
     * before the window and after the thread's end */
    uint64_t conv[2][2] = {{0}}; /* [window]: calls, total */
    for (i = 0; i < b->nevents; i++)
        if (!strcmp(opp_model_str(m[1], b->events[i].name), "conv") &&
            b->events[i].parent == OPP_NO_PARENT) {
            ck_assert_uint_le(b->stat[i].window, 1);
            conv[b->stat[i].window][0] += b->stat[i].count;
            conv[b->stat[i].window][1] += opp_event_dur(&b->events[i]);
        }
    ck_assert_uint_eq(conv[1][0], 6);
    ck_assert_uint_eq(conv[1][1], 10 + 15 + 4 * 10);
    ck_assert_uint_eq(conv[0][0], 2);
    ck_assert_uint_eq(conv[0][1], 10 + 10);
    ck_assert_uint_eq(st[1].calls, 32);
    ck_assert_uint_eq(m[1]->events, 32 - 1); /* the folded div_ is not counted */
    opp_model_free(m[0]);
    opp_model_free(m[1]);
    free(fa), free(fb), free(pa), free(pb);
}
END_TEST

/* A string of process 1, for the summary (as the collector hands it the
 * records it keeps) and into the trace. */
static void string_of(struct tb *b, struct opp_sum *s, uint64_t id, const char *text)
{
    struct opp_gpu_rec g = {.type = OPP_GPU_STRING,
                            .nfields = 1,
                            .f = {id},
                            .str = text,
                            .slen = (uint32_t)strlen(text)};
    ck_assert_int_eq(opp_sum_gpu(s, 1, &g), 0); /* kept as it is */
    tb_string(b, id, text);
    tb_gpu_chunk(b);
}

/* torch.profiler's steps, a string id each (ProfilerStep#N), each holding
 * an aten::add: the steps are one node, keyed by the first step's string
 * as the report's table keys them (ProfilerStep*), whichever of a step's
 * string and its call comes first, so the nodes do not grow with the
 * steps (nor does the bound drop calls). */
START_TEST(profiler_steps_are_one_node)
{
    enum { STEPS = 3000, ADD = 1, STEP0 = 0x100 };
    struct opp_sum *s = opp_sum_new(100);
    struct tb b;
    begin(&b, s);
    string_of(&b, s, ADD, "aten::add");
    uint64_t total = 0;
    for (uint64_t i = 0; i < STEPS; i++) {
        uint64_t add[3] = {ADD, OPP_TORCH_SCOPE_FUNCTION, 0};
        uint64_t step[3] = {STEP0 + i, OPP_TORCH_SCOPE_USER, 0};
        uint64_t t = i * 100, end = t + 50 + i % 7;
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%u", (unsigned)i);
        if (i % 2)
            string_of(&b, s, STEP0 + i, name);
        ck_assert_int_eq(opp_sum_call(s, 1, 7, F_ADD, 1, t + 10, t + 20, 3, add, 0), 0);
        ck_assert_int_eq(opp_sum_call(s, 1, 7, F_DIV, 0, t, end, 3, step, 0), 0);
        if (!(i % 2)) /* after its call */
            string_of(&b, s, STEP0 + i, name);
        total += end - t;
    }
    struct opp_sum_stats st;
    opp_sum_stats(s, &st);
    ck_assert_uint_eq(st.nodes, 2); /* the steps, aten::add in them */
    ck_assert_uint_eq(st.dropped, 0);
    struct opp_model *m = finish(&b, s);
    opp_sum_free(s);
    const struct opp_thread *t = &m->threads[0];
    ck_assert_uint_eq(t->nevents, 2);
    size_t i;
    const struct opp_event *e = node(m, "ProfilerStep*", "", &i);
    ck_assert_uint_eq(tu_event_calls(t, i), STEPS);
    ck_assert_uint_eq(opp_event_dur(e), total);
    ck_assert_uint_eq(e->self_ns, total - STEPS * 10);
    e = node(m, "aten::add", "ProfilerStep*", &i);
    ck_assert_uint_eq(tu_event_calls(t, i), STEPS);
    ck_assert_uint_eq(opp_event_dur(e), STEPS * 10);
    ck_assert_uint_eq(m->events, 2 * STEPS);
    opp_model_free(m);
}
END_TEST

/* Steps inside a call (the agent's ranges for OPPROF_STEP=torch are at
 * the depth of the optimizer's step), each string after its step's call,
 * the first after the second's: one node. */
START_TEST(profiler_steps_inside_a_call_are_one_node)
{
    enum { STEPS = 300, STEP0 = 0x100 };
    struct opp_sum *s = opp_sum_new(100);
    struct tb b;
    begin(&b, s);
    for (uint64_t i = 0; i < STEPS; i++) {
        uint64_t step[3] = {STEP0 + i, OPP_TORCH_SCOPE_USER, 0}, t = i * 100;
        ck_assert_int_eq(opp_sum_call(s, 1, 7, F_DIV, 1, t + 10, t + 20, 3, step, 0), 0);
        ck_assert_int_eq(opp_sum_call(s, 1, 7, F_CONV, 0, t, t + 50, 0, NULL, 0), 0);
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%u", (unsigned)i);
        if (i == 1) { /* the first string: the steps' name */
            string_of(&b, s, STEP0 + 1, name);
            string_of(&b, s, STEP0, "ProfilerStep#0");
        } else if (i > 1) {
            string_of(&b, s, STEP0 + i, name);
        }
    }
    struct opp_sum_stats st;
    opp_sum_stats(s, &st);
    ck_assert_uint_eq(st.nodes, 2); /* conv, the steps in it */
    struct opp_model *m = finish(&b, s);
    opp_sum_free(s);
    const struct opp_thread *t = &m->threads[0];
    ck_assert_uint_eq(t->nevents, 2);
    size_t i;
    const struct opp_event *e = node(m, "ProfilerStep*", "conv", &i);
    ck_assert_uint_eq(tu_event_calls(t, i), STEPS);
    ck_assert_uint_eq(opp_event_dur(e), STEPS * 10);
    ck_assert_uint_eq(m->events, 2 * STEPS);
    opp_model_free(m);
}
END_TEST

/* torch's folding and CPU memory, as the report gives a full trace's:
 *   div_ [0,100] { div_ [10,90] { div_ [20,80] { add [30,40], alloc 64 B } } }
 *   div_ [200,300] { div_ [210,250], add [260,270] }
 *   add [400,410] { free of the 64 B block }
 * The chain of one-child div_s is one div_ holding the add and the
 * allocation; a div_ with two children keeps both; the free takes the
 * allocation's size. */
START_TEST(torch_fold_and_cpu_memory)
{
    struct opp_sum *s = opp_sum_new(1000);
    struct tb b;
    begin(&b, s);
    uint64_t alloc[3] = {OPP_MEM_ALLOC, 0x1000, 64}, freed[3] = {OPP_MEM_FREE, 0x1000, 0};
    const struct {
        uint32_t fn, depth;
        uint64_t begin, end;
        const uint64_t *args;
    } calls[] = {
        {F_ADD, 3, 30, 40, NULL},   {F_MEM, 3, 50, 50, alloc},  {F_DIV, 2, 20, 80, NULL},
        {F_DIV, 1, 10, 90, NULL},   {F_DIV, 0, 0, 100, NULL},   {F_DIV, 1, 210, 250, NULL},
        {F_ADD, 1, 260, 270, NULL}, {F_DIV, 0, 200, 300, NULL}, {F_MEM, 1, 405, 405, freed},
        {F_ADD, 0, 400, 410, NULL},
    };
    for (size_t k = 0; k < sizeof calls / sizeof *calls; k++)
        ck_assert_int_eq(opp_sum_call(s, 1, 7, calls[k].fn, calls[k].depth, calls[k].begin,
                                      calls[k].end, calls[k].args ? 3 : 0, calls[k].args, 0),
                         0);
    struct opp_model *m = finish(&b, s);
    opp_sum_free(s);
    const struct opp_thread *t = &m->threads[0];
    ck_assert_uint_eq(t->nevents, 6); /* div_, div_>div_, div_>add, div_>[memory], add, add>[memory] */
    ck_assert(opp_model_has_cpu_mem(m));
    size_t i;
    const struct opp_event *e = node(m, "aten::div_", "", &i);
    ck_assert_uint_eq(tu_event_calls(t, i), 2);
    ck_assert_uint_eq(opp_event_dur(e), 200);
    ck_assert_uint_eq(e->self_ns, (100 - 10) + (100 - 40 - 10));
    ck_assert_int_eq(t->cpumem[i].self, 64);
    ck_assert_int_eq(t->cpumem[i].total, 64);
    e = node(m, "aten::div_", "aten::div_", &i);
    ck_assert_uint_eq(tu_event_calls(t, i), 1);
    ck_assert_uint_eq(opp_event_dur(e), 40);
    e = node(m, "aten::add", "aten::div_", &i);
    ck_assert_uint_eq(tu_event_calls(t, i), 2);
    ck_assert_uint_eq(e->depth, 1);
    node(m, "[memory]", "aten::div_", &i);
    ck_assert_int_eq(t->cpumem[i].self, 64);
    e = node(m, "aten::add", "", &i);
    ck_assert_uint_eq(tu_event_calls(t, i), 1);
    ck_assert_int_eq(t->cpumem[i].self, -64);
    ck_assert_uint_eq(m->events, 8); /* the two folded div_ calls are not counted */
    opp_model_free(m);
}
END_TEST

/* Launches whose GPU records have not come yet stay in the map of
 * correlation ids up to its bound, 2^22; each one past it is counted as
 * lost (its GPU work would reach no call), not left out silently. */
START_TEST(launches_past_the_bound_are_counted)
{
    struct opp_sum *s = opp_sum_new(1000);
    ck_assert_int_eq(opp_sum_proc(s, 1, NF, FUNCS), 0);
    int rc = 0; /* checked once: an assertion per call costs a message each */
    for (uint64_t k = 1; k <= (1u << 22) + 10; k++) {
        uint64_t a[3] = {0, k, 211}; /* status, correlation id, cbid */
        rc |= opp_sum_call(s, 1, 7, F_LAUNCH, 0, 2 * k, 2 * k + 1, 3, a, 0);
    }
    ck_assert_int_eq(rc, 0);
    struct opp_sum_stats st;
    opp_sum_stats(s, &st);
    ck_assert_uint_eq(st.lost, 10);
    opp_sum_free(s);
}
END_TEST

/* The same past a bound made 2^18 (the maps' first size, so that 2^18 +
 * 10 launches do it, not 2^22): the 10 launches let go are counted, the
 * summary trace carries them (its process's GPU DROPPED record), and the
 * report of it says so. */
START_TEST(launches_lost_are_in_the_trace)
{
    struct opp_sum *s = opp_sum_new(1000);
    ck_assert_ptr_nonnull(s);
    opp_sum_map_max(s, 1u << 18);
    struct tb b;
    begin(&b, s);
    int rc = 0; /* checked once: an assertion per call costs a message each */
    for (uint64_t k = 1; k <= (1u << 18) + 10; k++) {
        uint64_t a[3] = {0, k, 211}; /* status, correlation id, cbid */
        rc |= opp_sum_call(s, 1, 7, F_LAUNCH, 0, 2 * k, 2 * k + 1, 3, a, 0);
    }
    ck_assert_int_eq(rc, 0);
    struct opp_sum_stats st;
    opp_sum_stats(s, &st);
    ck_assert_uint_eq(st.lost, 10);
    ck_assert_uint_eq(st.map_slots, 4u << 18); /* none grew; no CPU block map */
    struct opp_model *m = finish(&b, s);
    opp_sum_free(s);
    ck_assert_uint_eq(m->gpu.summary_lost, 10);
    ck_assert_uint_eq(m->events, (1u << 18) + 10);
    opp_model_free(m);
    char *o, *e, *ra[] = {"report", path, NULL};
    ck_assert_int_eq(tu_call(cmd_report, ra, dir, &o, &e), 0);
    ck_assert_str_eq(e, "opprof report: warning: 10 CUDA launches awaiting their GPU records, or "
                        "CPU blocks still allocated, were let go at the summary's bound (2^22 a "
                        "map): their GPU time, or their frees' sizes, are not in it; a full trace "
                        "(OPPROF_MODE=full) has them\n");
    free(o), free(e);
    char *rj[] = {"report", path, "-f", "json", NULL};
    ck_assert_int_eq(tu_call(cmd_report, rj, dir, &o, &e), 0);
    ck_assert_msg(strstr(o, "\n  \"dropped\": 0,\n  \"dropped_full\": 0,\n  "
                            "\"dropped_interrupted\": 0,\n  \"dropped_node_bound\": 0,\n  "
                            "\"summary_lost\": 10,\n") != NULL,
                  "%s", o);
    free(o), free(e);
}
END_TEST

/* One block allocated first and freed last, 600,000 short-lived blocks in
 * between (the live-block map's ring of 2^18 wraps 4 times over one live
 * entry and many holes): the last free still takes its size, and the map
 * is repacked in place rather than doubled at each wrap (to 2^20). */
START_TEST(cpu_blocks_map_stays_small)
{
    struct opp_sum *s = opp_sum_new(1000);
    struct tb b;
    begin(&b, s);
    uint64_t a[3] = {OPP_MEM_ALLOC, 0x10, 4096};
    ck_assert_int_eq(opp_sum_call(s, 1, 7, F_MEM, 1, 1, 1, 3, a, 0), 0);
    int rc = 0; /* checked once: an assertion per call costs a message each */
    for (uint64_t k = 0; k < 600000; k++) {
        uint64_t at = 10 + 4 * k, al[3] = {OPP_MEM_ALLOC, 0x100000 + k * 64, 64},
                 fr[3] = {OPP_MEM_FREE, 0x100000 + k * 64, 0};
        rc |= opp_sum_call(s, 1, 7, F_MEM, 1, at, at, 3, al, 0);
        rc |= opp_sum_call(s, 1, 7, F_MEM, 1, at + 1, at + 1, 3, fr, 0);
    }
    ck_assert_int_eq(rc, 0);
    uint64_t f[3] = {OPP_MEM_FREE, 0x10, 0};
    ck_assert_int_eq(opp_sum_call(s, 1, 7, F_MEM, 1, 9000000, 9000000, 3, f, 0), 0);
    ck_assert_int_eq(opp_sum_call(s, 1, 7, F_STEP, 0, 0, 9000001, 0, NULL, 0), 0);
    struct opp_sum_stats st;
    opp_sum_stats(s, &st);
    ck_assert_uint_eq(st.map_slots, 5u << 18); /* each map as it began */
    struct opp_model *m = finish(&b, s);
    opp_sum_free(s);
    const struct opp_thread *t = &m->threads[0];
    size_t i;
    node(m, "step", "", &i);
    ck_assert_int_eq(t->cpumem[i].self, 0); /* every block allocated was freed */
    ck_assert_int_eq(t->cpumem[i].total, 0);
    opp_model_free(m);
}
END_TEST

/* Siblings with equal CPU totals (sgemm_ and conv under step, sgemm_ seen
 * first): the tree orders them by name, loaded or summarised alike. */
START_TEST(tree_ties_by_name)
{
    struct tb b;
    open_trace(&b);
    tb_thread(&b, 7, "main");
    tb_events(&b, TB_CALL(F_GEMM, 10, 20, 1, 8, 8, 8, 0), TB_CALL(F_CONV, 30, 40, 1),
              TB_CALL(F_STEP, 0, 50, 0));
    tb_end(&b);
    char *a[] = {"report", path, "--tree", "--no-stream", NULL};
    char *c[] = {"report", path, "--tree", "--stream", NULL};
    char *oa, *d = tu_call_differ(cmd_report, a, c, dir, &oa, NULL, NULL);
    ck_assert_msg(!d, "%s", d);
    char *conv = strstr(oa, "  conv "), *gemm = strstr(oa, "  sgemm_ ");
    ck_assert_ptr_nonnull(conv);
    ck_assert_ptr_nonnull(gemm);
    ck_assert(conv < gemm);
    free(oa);
}
END_TEST

/* A process killed inside aten::div_ inside aten::div_: torch folds the
 * inner one, so one call was running, loaded or summarised. */
START_TEST(open_calls_after_fold)
{
    struct tb b;
    open_trace(&b);
    tb_thread(&b, 7, "main");
    tb_events(&b, TB_CALL(F_ADD, 20, 30, 2), TB_OPEN(F_DIV, 10, 40, 1), TB_OPEN(F_DIV, 0, 40, 0));
    tb_end(&b);
    char *a[] = {"report", path, "--no-stream", NULL}, *c[] = {"report", path, "--stream", NULL};
    char *ea, *ec, *d = tu_call_differ(cmd_report, a, c, dir, NULL, &ea, &ec);
    ck_assert_msg(!d, "%s", d);
    ck_assert_str_eq(ec, ea);
    ck_assert_ptr_nonnull(strstr(ea, "warning: 1 call was still running"));
    free(ea), free(ec);
}
END_TEST

/* A kernel whose launch joined its parent's node after it arrived (the
 * node it was filed under merged away): the work still lands on the merged
 * node, and on its parents' CUDA totals. */
START_TEST(gpu_after_merge)
{
    struct opp_sum *s = opp_sum_new(1000);
    struct tb b;
    begin(&b, s);
    for (uint64_t k = 0; k < 3; k++) {
        uint64_t api[3] = {0, 100 + k, 211}; /* status, correlation id, cbid */
        uint64_t t = k * 100;
        ck_assert_int_eq(opp_sum_call(s, 1, 7, F_LAUNCH, 1, t + 1, t + 2, 3, api, 0), 0);
        ck_assert_int_eq(opp_sum_call(s, 1, 7, F_STEP, 0, t, t + 10, 0, NULL, 0), 0);
    }
    for (uint64_t k = 0; k < 3; k++) {
        struct opp_gpu_rec g =
            TB_KERNEL(.start = 1000, .end = 1000 + 7 * (k + 1), .corr = 100 + k, .name = 1);
        ck_assert_int_eq(opp_sum_gpu(s, 1, &g), 1);
    }
    struct opp_gpu_rec lost = TB_KERNEL(.end = 5, .corr = 999, .name = 1);
    ck_assert_int_eq(opp_sum_gpu(s, 1, &lost), 1);
    struct opp_sum_stats st;
    opp_sum_stats(s, &st);
    ck_assert_uint_eq(st.unattached, 1);
    ck_assert_uint_eq(st.nodes, 2);
    struct opp_model *m = finish(&b, s);
    opp_sum_free(s);
    size_t i;
    node(m, "cudaLaunchKernel", "step", &i);
    const struct opp_thread *t = &m->threads[0];
    ck_assert_ptr_nonnull(t->gpu);
    ck_assert_uint_eq(t->gpu[i].self_cuda_ns, 7 + 14 + 21);
    node(m, "step", "", &i);
    ck_assert_uint_eq(t->gpu[i].self_cuda_ns, 0);
    ck_assert_uint_eq(t->gpu[i].cuda_ns, 42);
    /* one kernel row: 4 launches, 47 ns */
    ck_assert_uint_eq(m->gpu.nops, 1);
    ck_assert_uint_eq(opp_gpu_op_count(&m->gpu, 0), 4);
    ck_assert_uint_eq(opp_gpu_op_dur(&m->gpu.ops[0]), 47);
    opp_model_free(m);
}
END_TEST

/* GPU records that come late: 300,000 launches (more than the correlation
 * map's first 2^18 entries) before any of their kernels is handed over,
 * as when CUPTI's buffers come only when full or at exit. Every kernel
 * still finds its launch (the map grows while its oldest entry waits).
 * The ids cross 2^32, as the agent's extended ones do. */
START_TEST(late_gpu_records_find_their_calls)
{
    struct opp_sum *s = opp_sum_new(1000);
    struct tb b;
    begin(&b, s);
    const uint64_t n = 300000, base = (1ull << 32) - 1000;
    int rc = 0, added = 0; /* checked once: a check a call is slow under the sanitizers */
    for (uint64_t k = 0; k < n; k++) {
        uint64_t api[3] = {0, base + k, 211};
        rc |= opp_sum_call(s, 1, 7, F_LAUNCH, 0, k * 10, k * 10 + 5, 3, api, 0);
    }
    for (uint64_t k = 0; k < n; k++) {
        struct opp_gpu_rec g = TB_KERNEL(.start = 1, .end = 3, .corr = base + k, .name = 1);
        added += opp_sum_gpu(s, 1, &g) == 1;
    }
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(added, n);
    struct opp_sum_stats st;
    opp_sum_stats(s, &st);
    ck_assert_uint_eq(st.unattached, 0);
    struct opp_model *m = finish(&b, s);
    opp_sum_free(s);
    size_t i;
    node(m, "cudaLaunchKernel", "", &i);
    ck_assert_uint_eq(m->threads[0].gpu[i].self_cuda_ns, 2 * n);
    opp_model_free(m);
}
END_TEST

/* GPU work handed over with its call (opp_sum_joined, as `opprof
 * summarize` does once it has joined a trace's ops to their calls): the
 * launches' ids are not kept, so 300,000 launches leave the maps at their
 * first size and lose nothing; work taken right after a launch whose node
 * merges away later still lands on the merged node; a block's bytes as
 * opp_sum_op_of looked them up; work of no call counts in the GPU rows
 * only. */
START_TEST(joined_ops_need_no_map)
{
    struct opp_sum *s = opp_sum_new(1000);
    opp_sum_joined(s);
    struct opp_sum_stats st0;
    opp_sum_stats(s, &st0);
    struct tb b;
    begin(&b, s);
    struct opp_sum_op op;
    struct opp_gpu_rec k = TB_KERNEL(.start = 1, .end = 3, .corr = 1, .name = 1);
    ck_assert_int_eq(opp_sum_op_of(s, 1, &k, &op), 1);
    const uint64_t n = 300000;
    int rc = 0; /* checked once: a check a call is slow under the sanitizers */
    for (uint64_t i = 0; i < n; i++) {
        uint64_t api[3] = {0, 1 + i, 211};
        rc |= opp_sum_call(s, 1, 7, F_LAUNCH, 1, i * 10 + 1, i * 10 + 5, 3, api, 0);
        rc |= opp_sum_op_add(s, 1, &op, 1);
        rc |= opp_sum_call(s, 1, 7, F_STEP, 0, i * 10, i * 10 + 9, 0, NULL, 0);
    }
    ck_assert_int_eq(rc, 0);
    struct opp_gpu_rec alloc = TB_MEMORY(.start = 5, .op = 1, .bytes = 512, .address = 0x40);
    struct opp_gpu_rec release = TB_MEMORY(.start = 6, .op = 2, .address = 0x40);
    struct opp_sum_op a, r;
    ck_assert_int_eq(opp_sum_op_of(s, 1, &alloc, &a), 1);
    ck_assert_int_eq(opp_sum_op_of(s, 1, &release, &r), 1);
    ck_assert_int_eq(a.mem, 512);
    ck_assert_int_eq(r.mem, -512);
    uint64_t api[3] = {0, 0, 211};
    ck_assert_int_eq(opp_sum_call(s, 1, 7, F_LAUNCH, 0, n * 10, n * 10 + 1, 3, api, 0), 0);
    ck_assert_int_eq(opp_sum_op_add(s, 1, &a, 1), 0);
    ck_assert_int_eq(opp_sum_op_add(s, 1, &op, 0), 0);
    struct opp_gpu_rec ext = {.type = OPP_GPU_EXTCORR};
    ck_assert_int_eq(opp_sum_op_of(s, 1, &ext, &op), 0);
    struct opp_sum_stats st;
    opp_sum_stats(s, &st);
    ck_assert_uint_eq(st.lost, 0);
    ck_assert_uint_eq(st.map_slots, st0.map_slots);
    struct opp_model *m = finish(&b, s);
    opp_sum_free(s);
    size_t i;
    const struct opp_thread *t = &m->threads[0];
    node(m, "cudaLaunchKernel", "step", &i);
    ck_assert_uint_eq(t->gpu[i].self_cuda_ns, 2 * n);
    node(m, "step", "", &i);
    ck_assert_uint_eq(t->gpu[i].cuda_ns, 2 * n);
    node(m, "cudaLaunchKernel", "", &i);
    ck_assert_uint_eq(t->gpu[i].self_cuda_ns, 0);
    ck_assert_int_eq(t->gpu[i].self_mem, 512);
    ck_assert_uint_eq(m->gpu.nops, 1);
    ck_assert_uint_eq(opp_gpu_op_count(&m->gpu, 0), n + 1);
    ck_assert_uint_eq(opp_gpu_op_dur(&m->gpu.ops[0]), 2 * (n + 1));
    opp_model_free(m);
}
END_TEST

/* Past max_nodes a new call path is dropped and counted; known paths go on. */
START_TEST(bounded_nodes)
{
    struct opp_sum *s = opp_sum_new(2);
    struct tb b;
    begin(&b, s);
    uint64_t g[4] = {8, 8, 8, 'N' | 'N' << 8};
    for (uint64_t k = 0; k < 10; k++) {
        g[0] = 8 + k; /* a new shape each time: a new call path */
        ck_assert_int_eq(opp_sum_call(s, 1, 7, F_GEMM, 0, k, k + 1, 4, g, 0), 0);
        ck_assert_int_eq(opp_sum_call(s, 1, 7, F_CONV, 0, k, k + 1, 0, NULL, 0), 0);
    }
    struct opp_sum_stats st;
    opp_sum_stats(s, &st);
    ck_assert_uint_eq(st.nodes, 2);
    ck_assert_uint_eq(st.dropped, 9);
    struct opp_model *m = finish(&b, s);
    opp_sum_free(s);
    size_t i;
    node(m, "conv", "", &i);
    ck_assert_uint_eq(tu_event_calls(&m->threads[0], i), 10);
    ck_assert_uint_eq(m->dropped, 9);
    opp_model_free(m);
}
END_TEST

/* A SUMMARY chunk whose node names a parent after itself is damage: the
 * reader stops there and says so; nothing of it is delivered. */
START_TEST(damaged_chunk)
{
    struct opp_sum *s = opp_sum_new(10);
    struct tb b;
    begin(&b, s);
    uint8_t p[16 + 72] = {0}; /* one whole node (version 7) */
    uint32_t v[4] = {1, 1, 1, 0};
    memcpy(p, v, 16);
    uint32_t n[4] = {5 /* parent after itself */, 0, F_STEP, 0};
    memcpy(p + 16, n, 16);
    uint64_t c = 1;
    memcpy(p + 32, &c, 8);
    tb_chunk(&b, OPP_CHUNK_SUMMARY, p, sizeof p);
    tb_end(&b);
    opp_sum_free(s);
    char err[512];
    struct opp_model *m = tu_model_load(path, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    ck_assert_uint_eq(m->nthreads, 0);
    ck_assert_ptr_nonnull(strstr(m->sum.warning, "summary"));
    ck_assert(!m->sum.complete);
    opp_model_free(m);
}
END_TEST

/* What a read of a summary's pass handed over: each call's name, count,
 * children, time and self time, and the seq of each top-level one. */
struct handed {
    const struct opp_model *m;
    char names[8][16];
    uint64_t count[8], dur[8], self[8];
    uint32_t nkids[8], seq[8], tops[8];
    size_t n, ntops;
};

static int hand_call(void *ctx, const struct opp_pass_call *x)
{
    struct handed *h = ctx;
    ck_assert_uint_lt(h->n, 8);
    ck_assert_ptr_nonnull(x->stat);
    snprintf(h->names[h->n], sizeof h->names[h->n], "%s", opp_model_str(h->m, x->name));
    h->count[h->n] = x->stat->count;
    h->dur[h->n] = x->end - x->begin;
    h->self[h->n] = x->end - x->begin - x->kids_ns;
    h->nkids[h->n] = x->nkids;
    h->seq[h->n++] = x->seq;
    return 0;
}

static int hand_top(void *ctx, const struct opp_pass_call *x)
{
    struct handed *h = ctx;
    h->tops[h->ntops++] = x->seq;
    return 0;
}

/* A summary read as a pass: each node a call of its count, its children
 * (in the order written) handed over before it, its self time what is
 * not its children's, each root then top-level; the table stream adds
 * them up by their counts. */
START_TEST(nodes_as_counted_calls)
{
    struct opp_sum *s = opp_sum_new(1000);
    ck_assert_ptr_nonnull(s);
    struct tb b;
    begin(&b, s);
    uint64_t g64[4] = {64, 64, 64, 'N' | 'N' << 8}, g32[4] = {32, 32, 32, 'N' | 'N' << 8};
    for (uint64_t k = 0, t = 0; k < 10; k++, t += 100) {
        ck_assert_int_eq(opp_sum_call(s, 1, 7, F_GEMM, 2, t + 2, t + 5, 4, g64, 0), 0);
        ck_assert_int_eq(opp_sum_call(s, 1, 7, F_CONV, 1, t + 1, t + 10, 0, NULL, 0), 0);
        ck_assert_int_eq(opp_sum_call(s, 1, 7, F_GEMM, 1, t + 20, t + 30, 4, g64, 0), 0);
        ck_assert_int_eq(opp_sum_call(s, 1, 7, F_GEMM, 1, t + 40, t + 44, 4, g32, 0), 0);
        ck_assert_int_eq(opp_sum_call(s, 1, 7, F_STEP, 0, t, t + 50, 0, NULL, 0), 0);
    }
    ck_assert_int_eq(opp_sum_write(s, 1, &b.w), 0);
    tb_end(&b);
    opp_sum_free(s);
    char err[512];
    const char *paths[] = {path};
    enum opp_stream_refused why;
    ck_assert_ptr_null(opp_pass_open(paths, 1, &why, err, sizeof err));
    ck_assert_int_eq(why, OPP_STREAM_SUMMARY_FILE);
    struct opp_pass *p = opp_pass_open_summary(paths, 1, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    struct handed h = {.m = opp_pass_model(p)};
    const struct opp_pass_consumer c = {.ctx = &h, .call = hand_call, .top = hand_top};
    ck_assert_int_eq(opp_pass_run(p, &c, err, sizeof err), 0);
    ck_assert_uint_eq(h.n, 5);
    /* step's children in the order written, each after its own: conv
     * right after its sgemm_ */
    static const char *const names[] = {"sgemm_", "conv", "sgemm_", "sgemm_", "step"};
    static const uint32_t nkids[] = {0, 1, 0, 0, 3};
    static const uint64_t dur[] = {30, 90, 100, 40, 500}, self[] = {30, 60, 100, 40, 270};
    size_t at[5];
    for (size_t k = 0; k < 5; k++) {
        at[k] = 5;
        for (size_t i = 0; i < 5; i++)
            if (!strcmp(h.names[i], names[k]) && h.dur[i] == dur[k])
                at[k] = i;
        ck_assert_uint_lt(at[k], 5);
        ck_assert_uint_eq(h.count[at[k]], 10);
        ck_assert_uint_eq(h.nkids[at[k]], nkids[k]);
        ck_assert_uint_eq(h.self[at[k]], self[k]);
        ck_assert_uint_eq(h.seq[k], k);
    }
    ck_assert_uint_eq(at[1], at[0] + 1);
    ck_assert_uint_eq(at[4], 4);
    ck_assert_uint_eq(h.ntops, 1);
    ck_assert_uint_eq(h.tops[0], 4);
    struct opp_table_stream *st = opp_table_stream_over(p, err, sizeof err);
    ck_assert_ptr_nonnull(st);
    struct opp_agg_opts o = {.sort = OPP_SORT_COUNT};
    struct opp_agg a;
    ck_assert_msg(opp_table_stream_aggregate(st, &o, &a, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(a.nrows, 3);
    ck_assert_str_eq(a.rows[0].key, "sgemm_");
    ck_assert_uint_eq(a.rows[0].count, 30);
    ck_assert_uint_eq(a.rows[0].self_cpu_time_total_ns, 170);
    ck_assert_uint_eq(a.events, 50);
    ck_assert_uint_eq(a.self_cpu_time_total_ns, 500);
    opp_agg_free(&a);
    opp_table_stream_free(st);
    opp_pass_free(p);
}
END_TEST

/* Each allocation of opp_sum_new failing in turn (ten: the summary, the
 * four maps' two arrays each, the hash's heads): NULL and ENOMEM, what
 * it had made freed once; the eleventh try has them all. */
START_TEST(new_summary_out_of_memory_at_each_allocation)
{
    long k = 0;
    for (;; k++) {
        tu_alloc_fail(k, 0);
        errno = 0;
        struct opp_sum *s = opp_sum_new(1000);
        int failed = tu_alloc_failed();
        if (!failed) {
            ck_assert_ptr_nonnull(s);
            opp_sum_free(s);
            break;
        }
        ck_assert_msg(s == NULL, "allocation %ld failed, and a summary came", k);
        ck_assert_int_eq(errno, ENOMEM);
    }
    ck_assert_int_eq(k, 10);
}
END_TEST

/* The map of CPU blocks is made at the first MEMORY call: either of its
 * arrays failing fails that call (-ENOMEM) and leaves no map, which the
 * summary's end frees once, or the next call makes. */
START_TEST(cpu_blocks_map_out_of_memory)
{
    for (long k = 0; k < 3; k++)
        for (int again = 0; again < 2; again++) {
            struct opp_sum *s = opp_sum_new(1000);
            ck_assert_ptr_nonnull(s);
            ck_assert_int_eq(opp_sum_proc(s, 1, NF, FUNCS), 0);
            uint64_t a[3] = {OPP_MEM_ALLOC, 0x10, 4096};
            tu_alloc_fail(k, 1u << 20); /* the map's arrays, the only allocations of a MiB */
            int rc = opp_sum_call(s, 1, 7, F_MEM, 0, 1, 1, 3, a, 0);
            int failed = tu_alloc_failed();
            struct opp_sum_stats st;
            opp_sum_stats(s, &st);
            ck_assert_int_eq(failed, k < 2);
            ck_assert_int_eq(rc, k < 2 ? -ENOMEM : 0);
            ck_assert_uint_eq(st.map_slots, (k < 2 ? 4u : 5u) << 18);
            if (again) {
                ck_assert_int_eq(opp_sum_call(s, 1, 7, F_MEM, 0, 2, 2, 3, a, 0), 0);
                opp_sum_stats(s, &st);
                ck_assert_uint_eq(st.map_slots, 5u << 18);
                ck_assert_uint_eq(st.nodes, 1);
            }
            opp_sum_free(s);
        }
}
END_TEST

/* `opprof summarize` when a map of its summary finds no memory (each of
 * the eight arrays of a MiB or more in turn): one line, exit 1, no
 * output file. */
START_TEST(summarize_out_of_memory)
{
    struct tb b;
    open_trace(&b);
    tb_thread(&b, 7, "main");
    tb_events(&b, TB_CALL(F_STEP, 10, 20, 0));
    tb_end(&b);
    char *out = tu_path(dir, "s.sum"), *o, *e;
    char *sa[] = {"summarize", path, "-o", out, NULL};
    for (long k = 0; k < 8; k++) {
        tu_alloc_fail(k, 1u << 20);
        int rc = tu_call(cmd_summarize, sa, dir, &o, &e);
        ck_assert_int_eq(tu_alloc_failed(), 1);
        ck_assert_int_eq(rc, 1);
        ck_assert_str_eq(o, "");
        ck_assert_str_eq(e, "opprof summarize: out of memory\n");
        ck_assert_int_eq(access(out, F_OK), -1);
        free(o);
        free(e);
    }
    free(out);
}
END_TEST

enum { R_RANGE, R_DDOT };

/* A trace at path of process 10's thread, whose entry points are an NVTX
 * range (R_RANGE) and cblas_ddot (R_DDOT), its events next. */
static void ranges_trace(struct tb *b)
{
    tb_open(b, path);
    tb_process(b, .proc = 0, .pid = 10, .ppid = 1, .parent = UINT32_MAX, .real = 1,
               .exe = "/bin/loop");
    tb_funcs(b, [R_RANGE] = {OPP_OP_NVTX, OPP_DT_NONE, "nvtx", "nvtx_range"},
             [R_DDOT] = {OPP_OP_PLAIN, OPP_DT_NONE, "blas", "cblas_ddot"});
    tb_thread(b, 10, "main");
}

/* `opprof summarize` of a trace whose range recorded when it ended (a
 * schedule's ProfilerStep#N, an NVTX start/end range) is around calls of
 * its depth: the summary cannot nest them in it, so the range has no self
 * time there, as a summary-mode run gives it, and the command says so in
 * a line; a trace without such a range gets no such line (its range, around
 * nothing, is a call as any other). */
START_TEST(summarize_says_ranges_around_calls)
{
    for (int around = 0; around < 2; around++) {
        struct tb b;
        ranges_trace(&b);
        /* around: the range [5, 60) after two calls inside it, at its depth;
         * else the range [1, 4) before them */
        if (around)
            tb_events(&b, TB_CALL(R_DDOT, 10, 20, 0), TB_CALL(R_DDOT, 40, 50, 0),
                      TB_CALL(R_RANGE, 5, 60, 0, OPP_STR_PRELOAD, 0, 0, 0, 0));
        else
            tb_events(&b, TB_CALL(R_RANGE, 1, 4, 0, OPP_STR_PRELOAD, 0, 0, 0, 0),
                      TB_CALL(R_DDOT, 10, 20, 0), TB_CALL(R_DDOT, 40, 50, 0));
        tb_string(&b, OPP_STR_PRELOAD, "ProfilerStep#1");
        tb_end(&b);
        char *out = tu_path(dir, "s.sum"), *o, *e, *want;
        char *sa[] = {"summarize", path, "-o", out, NULL};
        ck_assert_int_eq(tu_call(cmd_summarize, sa, dir, &o, &e), 0);
        ck_assert_str_eq(o, "");
        if (around)
            ck_assert_int_gt(
                asprintf(&want,
                         "opprof summarize: 3 calls into %s\n"
                         "opprof summarize: %s has ranges recorded when they ended (NVTX "
                         "start/end, a schedule's ProfilerStep#N) around calls: %s cannot nest "
                         "those calls in them, so the ranges have no self time there, as in a "
                         "summary-mode run (`opprof report %s` nests them)\n",
                         out, path, out, path),
                0);
        else
            ck_assert_int_gt(asprintf(&want, "opprof summarize: 3 calls into %s\n", out), 0);
        ck_assert_str_eq(e, want);
        free(o), free(e), free(want);
        char err[512];
        struct opp_model *m = tu_model_load(out, err, sizeof err);
        ck_assert_msg(m != NULL, "%s", err);
        size_t i;
        ck_assert_uint_eq(node(m, "ProfilerStep*", "", &i)->self_ns, around ? 0 : 3);
        opp_model_free(m);
        free(out);
    }
}
END_TEST

/* Two start/end ranges that overlap, around one call of their depth: the
 * second began before the first ended, so it was recorded at its end too;
 * both have no self time in the summary, as a summary-mode run gives
 * them. */
START_TEST(summarize_overlapping_ranges)
{
    struct tb b;
    ranges_trace(&b);
    tb_events(&b, TB_CALL(R_DDOT, 30, 35, 0),
              TB_CALL(R_RANGE, 10, 40, 0, OPP_STR_PRELOAD, 0, 0, 0, 0),
              TB_CALL(R_RANGE, 20, 60, 0, OPP_STR_PRELOAD + 1, 0, 0, 0, 0));
    tb_string(&b, OPP_STR_PRELOAD, "r1");
    tb_string(&b, OPP_STR_PRELOAD + 1, "r2");
    tb_end(&b);
    char *out = tu_path(dir, "s.sum"), *o, *e;
    char *sa[] = {"summarize", path, "-o", out, NULL};
    ck_assert_int_eq(tu_call(cmd_summarize, sa, dir, &o, &e), 0);
    free(o), free(e);
    char err[512];
    struct opp_model *m = tu_model_load(out, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    size_t i;
    ck_assert_uint_eq(node(m, "r1", "", &i)->self_ns, 0);
    ck_assert_uint_eq(node(m, "r2", "", &i)->self_ns, 0);
    ck_assert_uint_eq(node(m, "cblas_ddot", "", &i)->self_ns, 5);
    opp_model_free(m);
    free(out);
}
END_TEST

Suite *suite_summary(void)
{
    Suite *s = suite_create("summary");
    TCase *tc = tcase_create("summary");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, loop_of_steps);
    tcase_add_test(tc, profiler_steps_are_one_node);
    tcase_add_test(tc, profiler_steps_inside_a_call_are_one_node);
    tcase_add_test(tc, nodes_as_counted_calls);
    tcase_add_test(tc, calls_again_as_counted_one_by_one);
    tcase_add_test(tc, torch_fold_and_cpu_memory);
    tcase_add_test(tc, cpu_blocks_map_stays_small);
    tcase_add_test(tc, launches_lost_are_in_the_trace);
    tcase_add_test(tc, tree_ties_by_name);
    tcase_add_test(tc, open_calls_after_fold);
    tcase_add_test(tc, gpu_after_merge);
    tcase_add_test(tc, late_gpu_records_find_their_calls);
    tcase_add_test(tc, joined_ops_need_no_map);
    tcase_add_test(tc, bounded_nodes);
    tcase_add_test(tc, damaged_chunk);
    tcase_add_test(tc, new_summary_out_of_memory_at_each_allocation);
    tcase_add_test(tc, cpu_blocks_map_out_of_memory);
    tcase_add_test(tc, summarize_out_of_memory);
    tcase_add_test(tc, summarize_says_ranges_around_calls);
    tcase_add_test(tc, summarize_overlapping_ranges);
    suite_add_tcase(s, tc);
    /* 2^22 launches: seconds, more under the sanitizers */
    TCase *big = tcase_create("bounds");
    tcase_set_timeout(big, 120);
    tcase_add_test(big, launches_past_the_bound_are_counted);
    suite_add_tcase(s, big);
    return s;
}
