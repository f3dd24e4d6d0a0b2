/* End to end: NVTX annotations. tests/nvtx/nvtx_app.c (NVTX v3, header-only:
 * built with the toolkit's headers, needs no GPU) runs under the real
 * preload, which is its NVTX injection library; every range, mark, domain,
 * registered string and thread name must be in the trace exactly, nested
 * as the program nested them. Without the toolkit the tests say SKIP. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include "analysis/aggregate.h"
#include "analysis/callpath_tree.h"
#include "views/steps.h"
#include "tool/cmds.h"
#include "analysis/model.h"
#include "testutil.h"
#include "oracle/loaded.h"

#define APP "tests/nvtx/nvtx_app"
#define APP_EVENTS 250u /* main 10, workers 3 x 12, ender 1, deep 200 + 3 */

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void)
{
    tu_rmdir(dir);
    free(dir);
}

static int built(const char *test)
{
    if (access(tu_build(APP), X_OK) == 0)
        return 1;
    fprintf(stderr, "SKIP %s: %s was not built (no CUDA toolkit headers at CUDA_HOME when building)\n",
            test, tu_build(APP));
    return 0;
}

/* Runs the app with and without the preload (plus extra, e.g. a preset
 * NVTX_INJECTION64_PATH, in both): same output, exit 0. The trace, and
 * what the preloaded run wrote on stderr in *err. */
static struct opp_model *run_app(const char *extra, char **err)
{
    char *trace = tu_path(dir, "t.trace"), *o1 = tu_path(dir, "plain.out"),
         *o2 = tu_path(dir, "pre.out"), *e2 = tu_path(dir, "pre.err");
    char *argv[] = {(char *)tu_build(APP), NULL};
    if (!extra)
        extra = "NVTX_INJECTION64_PATH="; /* unset: the preload sets it */
    char *bare[] = {"LD_PRELOAD=", (char *)extra, NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, bare, o1, NULL)), 0);
    struct tu_env te;
    ck_assert_int_eq(tu_code(tu_run(argv, tu_preload_env(&te, trace, extra), o2, e2)), 0);
    char *plain = tu_slurp(o1), *pre = tu_slurp(o2);
    ck_assert_ptr_nonnull(plain);
    ck_assert_ptr_nonnull(pre);
    ck_assert_str_eq(pre, plain);
    ck_assert_int_eq(strncmp(plain, "nvtx_app: ", 10), 0);
    *err = tu_slurp(e2);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    free(plain), free(pre), free(trace), free(o1), free(o2), free(e2);
    return m;
}

static const struct opp_thread *thread(const struct opp_model *m, const char *name)
{
    const struct opp_thread *found = NULL;
    for (size_t i = 0; i < m->nthreads; i++)
        if (!strcmp(m->threads[i].name, name)) {
            ck_assert_msg(!found, "two threads named %s", name);
            found = &m->threads[i];
        }
    ck_assert_msg(found != NULL, "no thread named %s", name);
    return found;
}

static const char *ev_name(const struct opp_model *m, const struct opp_event *e)
{
    return opp_model_str(m, e->name);
}

static unsigned count(const struct opp_model *m, const struct opp_thread *t, const char *name)
{
    unsigned n = 0;
    for (size_t i = 0; i < t->nevents; i++)
        n += !strcmp(ev_name(m, &t->events[i]), name);
    return n;
}

/* The only event of t named name. */
static const struct opp_event *one(const struct opp_model *m, const struct opp_thread *t,
                                   const char *name)
{
    ck_assert_msg(count(m, t, name) == 1, "%s: %u events", name, count(m, t, name));
    for (size_t i = 0; i < t->nevents; i++)
        if (!strcmp(ev_name(m, &t->events[i]), name))
            return &t->events[i];
    return NULL;
}

static const char *parent_name(const struct opp_model *m, const struct opp_thread *t,
                               const struct opp_event *e)
{
    return e->parent == OPP_NO_PARENT ? "" : ev_name(m, &t->events[e->parent]);
}

/* Self time is the total minus the direct children's totals, exactly. */
static void self_is_total_minus_children(const struct opp_thread *t)
{
    for (size_t i = 0; i < t->nevents; i++) {
        uint64_t children = 0;
        for (size_t k = 0; k < t->nevents; k++)
            if (t->events[k].parent == i)
                children += opp_event_dur(&t->events[k]);
        ck_assert_uint_eq(t->events[i].self_ns, opp_event_dur(&t->events[i]) - children);
    }
}

static const struct opp_row *row(const struct opp_agg *a, const char *key)
{
    for (size_t i = 0; i < a->nrows; i++)
        if (!strcmp(a->rows[i].key, key))
            return &a->rows[i];
    return NULL;
}

START_TEST(ranges_exact)
{
    if (!built("ranges_exact"))
        return;
    char *err;
    struct opp_model *m = run_app(NULL, &err);
    ck_assert_ptr_null(strstr(err, "NVTX"));
    ck_assert_uint_eq(m->nprocs, 1);
    ck_assert_uint_eq(m->events, APP_EVENTS);
    ck_assert_uint_eq(m->dropped, 0);
    ck_assert_uint_eq(m->nthreads, 6); /* named by nvtxNameOsThreadA/W; "not-a-thread" by nobody */
    for (size_t i = 0; i < m->nthreads; i++)
        self_is_total_minus_children(&m->threads[i]);

    /* Workers: 4 x "outer" { "inner", "inner" }, push/pop on three threads. */
    for (int w = 0; w < 3; w++) {
        char name[16];
        snprintf(name, sizeof name, "nvtx-w%d", w);
        const struct opp_thread *t = thread(m, name);
        ck_assert_uint_eq(t->nevents, 12);
        ck_assert_uint_eq(count(m, t, "outer"), 4);
        ck_assert_uint_eq(count(m, t, "inner"), 8);
        for (size_t i = 0; i < t->nevents; i++) {
            const struct opp_event *e = &t->events[i];
            if (!strcmp(ev_name(m, e), "inner")) {
                ck_assert_str_eq(parent_name(m, t, e), "outer");
                ck_assert_uint_eq(e->depth, 1);
                continue;
            }
            ck_assert_uint_eq(e->parent, OPP_NO_PARENT);
            ck_assert_uint_eq(e->depth, 0);
            unsigned kids = 0;
            uint64_t kid_ns = 0;
            for (size_t k = 0; k < t->nevents; k++)
                if (t->events[k].parent == i) {
                    kids++;
                    kid_ns += opp_event_dur(&t->events[k]);
                }
            ck_assert_uint_eq(kids, 2);
            ck_assert_uint_eq(e->self_ns, opp_event_dur(e) - kid_ns);
            ck_assert_uint_gt(e->self_ns, 0); /* spin(50) + spin(10) of its own */
        }
    }

    /* Main: ranges, emit_nvtx-style names, a mark, a domain with a
     * registered string, a wide-char range, a start/end range. */
    const struct opp_thread *t = thread(m, "nvtx-main");
    ck_assert_uint_eq(t->nevents, 10);
    const struct opp_event *mainr = one(m, t, "main");
    ck_assert_uint_eq(mainr->parent, OPP_NO_PARENT);
    ck_assert_str_eq(parent_name(m, t, one(m, t, "(unnamed range)")), "");
    ck_assert_uint_eq(count(m, t, "aten::conv2d"), 3); /* ", seq = N[, op_id = M]" stripped */
    for (size_t i = 0; i < t->nevents; i++)
        if (!strcmp(ev_name(m, &t->events[i]), "aten::conv2d"))
            ck_assert_str_eq(parent_name(m, t, &t->events[i]), "main");
    const struct opp_event *mk = one(m, t, "checkpoint");
    ck_assert_uint_eq(mk->end_ns, mk->begin_ns); /* a mark: zero length */
    ck_assert_str_eq(parent_name(m, t, mk), "main");
    const struct opp_event *reg = one(m, t, "mydomain:registered-op");
    ck_assert_str_eq(parent_name(m, t, reg), "main");
    const struct opp_func *f = opp_event_func(m, t, reg);
    ck_assert_uint_eq(f->kind, OPP_OP_NVTX);
    ck_assert_str_eq(opp_model_str(m, f->lib), "nvtx");
    ck_assert_uint_eq(reg->nargs, 5);
    const uint64_t *a = opp_event_args(t, reg);
    ck_assert_uint_eq(a[2], 7);  /* category */
    ck_assert_uint_eq(a[3], 42); /* payload */
    ck_assert_uint_eq(a[4], 1);  /* NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 */
    ck_assert_uint_ge(a[0], 0x80000000u);
    ck_assert_uint_ge(a[1], 0x80000000u);
    ck_assert_str_eq(parent_name(m, t, one(m, t, "wide-r\xc3\xa4nge")), "mydomain:registered-op");
    const struct opp_event *dm = one(m, t, "mydomain:dom-mark");
    ck_assert_str_eq(parent_name(m, t, dm), "main");
    ck_assert_uint_eq(dm->end_ns, dm->begin_ns);
    ck_assert_str_eq(parent_name(m, t, one(m, t, "local-range")), "main");

    /* Started on main inside "main", ended on nvtx-ender: recorded there. */
    const struct opp_thread *te = thread(m, "nvtx-ender");
    ck_assert_uint_eq(te->nevents, 1);
    const struct opp_event *cross = one(m, te, "cross-thread");
    ck_assert_uint_eq(cross->parent, OPP_NO_PARENT);
    ck_assert_uint_ge(cross->begin_ns, mainr->begin_ns);
    ck_assert_uint_le(cross->end_ns, mainr->end_ns);
    ck_assert_uint_eq(count(m, t, "cross-thread"), 0);

    /* 200 nested pushes, past the 16 a thread's stack holds at first: all
     * recorded, each inside the one before; then two domains' ranges ending
     * out of order (a partial overlap, not nested), after which the
     * thread's depth is back to 0. */
    const struct opp_thread *td = thread(m, "nvtx-deep");
    ck_assert_uint_eq(td->nevents, 203);
    ck_assert_uint_eq(count(m, td, "deep"), 200);
    unsigned char at[200] = {0};
    for (size_t i = 0; i < td->nevents; i++) {
        const struct opp_event *e = &td->events[i];
        if (strcmp(ev_name(m, e), "deep"))
            continue;
        ck_assert_uint_lt(e->depth, 200);
        at[e->depth]++;
        if (e->depth == 0)
            ck_assert_uint_eq(e->parent, OPP_NO_PARENT);
        else
            ck_assert_uint_eq(td->events[e->parent].depth, e->depth - 1u);
    }
    for (unsigned d = 0; d < 200; d++)
        ck_assert_msg(at[d] == 1, "%u ranges at depth %u", at[d], d);
    const struct opp_event *ea = one(m, td, "A-default"), *eb = one(m, td, "mydomain:B-dom");
    ck_assert_uint_lt(ea->begin_ns, eb->begin_ns);
    ck_assert_uint_lt(ea->end_ns, eb->end_ns);
    ck_assert_uint_eq(ea->parent, OPP_NO_PARENT);
    ck_assert_uint_eq(eb->parent, OPP_NO_PARENT);
    const struct opp_event *after = one(m, td, "after");
    ck_assert_uint_eq(after->depth, 0);
    ck_assert_uint_eq(after->parent, OPP_NO_PARENT);

    /* The table's rows: self = total - children, summed. */
    struct opp_agg_opts o = {0};
    struct opp_agg ag;
    ck_assert_int_eq(tu_aggregate(m, &o, &ag), 0);
    const struct opp_row *outer = row(&ag, "outer"), *inner = row(&ag, "inner");
    ck_assert_ptr_nonnull(outer);
    ck_assert_ptr_nonnull(inner);
    ck_assert_uint_eq(outer->count, 12);
    ck_assert_uint_eq(inner->count, 24);
    ck_assert_uint_eq(inner->self_cpu_time_total_ns, inner->cpu_time_total_ns);
    ck_assert_uint_eq(outer->self_cpu_time_total_ns,
                      outer->cpu_time_total_ns - inner->cpu_time_total_ns);
    ck_assert_uint_eq(row(&ag, "aten::conv2d")->count, 3);
    opp_agg_free(&ag);
    opp_model_free(m);
    free(err);
    /* steps: the two ranges that overlap without nesting make the pass
     * build the thread's tree as the loaded model does, nothing said */
    char *trace = tu_path(dir, "t.trace");
    char *d = tu_steps_differ(cmd_report, dir, trace, (const char *[]){"outer", "inner", NULL});
    ck_assert_msg(!d, "%s", d);
    char *sa, *sb;
    ck_assert_int_eq(
        tu_call(cmd_report, (char *[]){"report", trace, "--step", "outer", NULL}, dir, &sb, &sa),
        0);
    ck_assert_str_eq(sa, "");
    ck_assert_msg(strstr(sb, "Steps: outer (each call is a step), 12 steps\n"), "%s", sb);
    free(sa), free(sb), free(trace);
}
END_TEST

/* The user's own NVTX tool stays: the program runs as before, one line
 * says why no ranges are recorded. */
START_TEST(preset_injection_kept)
{
    if (!built("preset_injection_kept"))
        return;
    char *err;
    struct opp_model *m = run_app("NVTX_INJECTION64_PATH=/nonexistent/libother-tool.so", &err);
    ck_assert_int_eq(tu_count_lines(err, "opprof: NVTX"), 1);
    ck_assert_ptr_nonnull(strstr(err, "opprof: NVTX ranges are not recorded because "
                                      "NVTX_INJECTION64_PATH is set to "
                                      "/nonexistent/libother-tool.so\n"));
    ck_assert_uint_eq(m->events, 0);
    opp_model_free(m);
    free(err);
}
END_TEST

/* `opprof run` points NVTX at the preload; emit_nvtx-style names group into
 * one row of the report's table; the tree and steps views of the same. */
START_TEST(run_and_report_table)
{
    if (!built("run_and_report_table"))
        return;
    char *trace = tu_path(dir, "r.trace"), *out = tu_path(dir, "out"), *errp = tu_path(dir, "err");
    char *run[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--",
                   (char *)tu_build(APP), NULL};
    ck_assert_int_eq(tu_code(tu_run(run, (char *[]){"NVTX_INJECTION64_PATH=", NULL}, out, errp)), 0);
    char *e = tu_slurp(errp);
    ck_assert_ptr_null(strstr(e, "NVTX"));
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->events, APP_EVENTS);
    opp_model_free(m);
    char *rout, *rerr;
    char *argv[] = {"report", trace, "--sort", "count", NULL};
    ck_assert_int_eq(tu_call(cmd_report, argv, dir, &rout, &rerr), 0);
    ck_assert_ptr_null(strstr(rout, "seq ="));
    ck_assert_ptr_null(strstr(rout, "op_id"));
    const char *line = strstr(rout, " aten::conv2d ");
    ck_assert_ptr_nonnull(line);
    const char *eol = strchr(line, '\n');
    ck_assert_ptr_nonnull(eol);
    while (eol > line && eol[-1] == ' ')
        eol--;
    ck_assert(eol - line > 2 && !strncmp(eol - 2, " 3", 2)); /* # of Calls, the last column */
    free(rout), free(rerr);

    /* the tree view, two levels: the paths and their calls (the order of
     * roots is by CPU total, which timing decides) */
    char *tv[] = {"report", trace, "--tree", "--depth", "2", NULL};
    ck_assert_int_eq(tu_call(cmd_report, tv, dir, &rout, &rerr), 0);
    ck_assert_str_eq(rerr, "");
    char name[128];
    unsigned long calls;
    const char *l = strstr(rout, "\nouter ");
    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(sscanf(l + 1, "%127s %lu", name, &calls), 2);
    ck_assert_str_eq(name, "outer");
    ck_assert_uint_eq(calls, 12);
    l = strchr(l + 1, '\n') + 1; /* its only child, right under it */
    ck_assert_int_eq(sscanf(l, " %127s %lu", name, &calls), 2);
    ck_assert_str_eq(name, "inner");
    ck_assert_uint_eq(calls, 24);
    ck_assert(!strncmp(l, "  inner ", 8));
    ck_assert_ptr_nonnull(strstr(rout, "\n  aten::conv2d                                                         3 "));
    ck_assert_ptr_null(strstr(rout, "wide-r")); /* the third level is not shown */
    ck_assert_ptr_nonnull(strstr(rout, "\n  mydomain:registered-op                                               1 "));
    ck_assert_ptr_nonnull(strstr(rout, " call paths shown; CPU total of the roots: "));
    free(rout), free(rerr);
    /* steps: each "outer" range */
    char *sv[] = {"report", trace, "--step", "outer", "--format", "json", NULL};
    ck_assert_int_eq(tu_call(cmd_report, sv, dir, &rout, &rerr), 0);
    const char *head = "{\"step\": \"outer\", \"kind\": \"range\", \"count\": 12, \"wall_us\": [";
    ck_assert(!strncmp(rout, head, strlen(head)));
    int commas = 0;
    for (const char *p = strstr(rout, "\"wall_us\""); *p != ']'; p++)
        commas += *p == ',';
    ck_assert_int_eq(commas, 11);
    free(rout), free(rerr);
    char *bad[] = {"report", trace, "--depth", "2", NULL};
    ck_assert_int_eq(tu_call(cmd_report, bad, dir, &rout, &rerr), 2);
    ck_assert_str_eq(rerr, "opprof report: --depth and --min-share go with --tree\n");
    free(rout), free(rerr);
    char *both[] = {"report", trace, "--tree", "--step", "outer", NULL};
    ck_assert_int_eq(tu_call(cmd_report, both, dir, &rout, &rerr), 2);
    ck_assert_str_eq(rerr, "opprof report: --gpu, --tree, --step, --by-rank and --by-process are different views: choose one\n");
    free(rout), free(rerr);
    free(e), free(trace), free(out), free(errp);
}
END_TEST

/* The annotated training loop of the README: the call-path tree is exact,
 * and each step's CPU in calls is what its three phases took. */
START_TEST(train_loop_tree_and_steps)
{
    if (!built("train_loop_tree_and_steps"))
        return;
    char *trace = tu_path(dir, "tl.trace");
    struct tu_env te;
    char *argv[] = {(char *)tu_build("tests/nvtx/train_loop"), "5", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, tu_preload_env(&te, trace, "OPENBLAS_NUM_THREADS=1"),
                                    NULL, NULL)),
                     0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->events, 5u * 11);
    struct opp_agg_opts all = {0};
    struct opp_calltree ct;
    ck_assert_int_eq(tu_calltree_build(m, &all, &ct), 0);
    ck_assert_uint_eq(ct.n, 7);
    /* path -> calls, in first-seen order */
    const char *paths[] = {"train_step", "train_step;forward", "train_step;forward;cblas_sgemm",
                           "train_step;backward", "train_step;backward;cblas_sgemm",
                           "train_step;optimizer", "train_step;optimizer;cblas_saxpy"};
    const uint64_t calls[] = {5, 5, 10, 5, 20, 5, 5};
    uint64_t phases = 0;
    char *buf = NULL;
    size_t cap = 0;
    for (uint32_t i = 0; i < 7; i++) {
        ck_assert_int_ge(opp_calltree_path(m, &ct, i, &buf, &cap), 0);
        ck_assert_str_eq(buf, paths[i]);
        ck_assert_uint_eq(ct.nodes[i].calls, calls[i]);
        if (ct.nodes[i].depth == 1)
            phases += ct.nodes[i].total_ns;
    }
    struct opp_steps st;
    ck_assert_int_eq(tu_steps_find(m, &all, "train_step", &st), 0);
    ck_assert(st.ranges);
    ck_assert_uint_eq(st.n, 5);
    uint64_t cpu = 0;
    for (size_t i = 0; i < st.n; i++)
        cpu += st.steps[i].cpu_ns;
    ck_assert_uint_eq(cpu, phases);
    opp_steps_free(&st);
    free(buf);
    opp_calltree_free(&ct);
    opp_model_free(m);
    char *d = tu_steps_differ(cmd_report, dir, trace,
                              (const char *[]){"train_step", "forward", "cblas_sgemm", NULL});
    ck_assert_msg(!d, "%s", d);
    free(trace);
}
END_TEST

/* --flops under a --limit whose rows have no FLOPs (the loop's ranges
 * first by CPU total): the columns are chosen, and their unit scaled, over
 * every row before the limit, as torch's table chooses them and as the
 * CUDA and memory columns are; the row shows none. */
START_TEST(flops_columns_chosen_before_the_limit)
{
    if (!built("flops_columns_chosen_before_the_limit"))
        return;
    char *trace = tu_path(dir, "tl.trace");
    struct tu_env te;
    char *argv[] = {(char *)tu_build("tests/nvtx/train_loop"), "5", NULL};
    ck_assert_int_eq(
        tu_code(tu_run(argv, tu_preload_env(&te, trace, "OPENBLAS_NUM_THREADS=1"), NULL, NULL)), 0);
    char *all[] = {"report", trace, "--flops", NULL},
         *one[] = {"report", trace, "--flops", "--sort", "cpu_time_total", "-n", "1", NULL};
    const char *head = "    # of Calls  Total KFLOPs       GFLOP/s  \n";
    char *o, *e;
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(tu_call(cmd_report, k ? one : all, dir, &o, &e), 0);
        ck_assert_str_eq(e, "");
        const char *l2 = strchr(o, '\n') + 1, *l3 = strchr(l2, '\n') + 1;
        ck_assert_msg(l3 - strlen(head) >= l2 && !strncmp(l3 - strlen(head), head, strlen(head)),
                      "%s", o);
        if (k) {
            ck_assert_int_eq(tu_count_lines(o, ""), 6);
            ck_assert_ptr_nonnull(strstr(o, "  train_step  "));
            ck_assert_ptr_nonnull(strstr(o, "            5            --            --  \n"));
        }
        free(o), free(e);
    }
    free(trace);
}
END_TEST

/* Across fork(): the child's pop and end of the parent's ranges do nothing;
 * its own range is recorded in its own process, named from its own strings. */
START_TEST(ranges_across_fork)
{
    if (!built("ranges_across_fork"))
        return;
    char *trace = tu_path(dir, "f.trace"), *out = tu_path(dir, "f.out");
    struct tu_env te;
    char *argv[] = {(char *)tu_build(APP), "fork", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, tu_preload_env(&te, trace, "NVTX_INJECTION64_PATH="), out, NULL)), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->nprocs, 2);
    ck_assert_uint_eq(m->events, 3);
    ck_assert_uint_eq(tu_count(m, "parent-outer", 0, 0, 0), 1);
    ck_assert_uint_eq(tu_count(m, "parent-start", 0, 0, 0), 1);
    ck_assert_uint_eq(tu_count(m, "child-range", 1, 0, 0), 1);
    opp_model_free(m);
    free(trace), free(out);
}
END_TEST

/* `opprof run` of a process killed inside ranges: each is in the trace,
 * open, ending with the process, by its name and domain, and the run's
 * line counts the two (full and summary mode alike; a torch op's the
 * same way). */
START_TEST(ranges_open_at_death_named)
{
    if (!built("ranges_open_at_death_named"))
        return;
    char *trace = tu_path(dir, "d.trace"), *err = tu_path(dir, "err"), want[4200];
    for (int summary = 0; summary < 2; summary++) {
        char *argv[] = {(char *)tu_tool("opprof"),    "run", "-q",  "--mode",
                        summary ? "summary" : "full", "-o",  trace, "--",
                        (char *)tu_build(APP),        "die", NULL};
        ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, err)), 128 + SIGKILL);
        char *e = tu_slurp(err);
        snprintf(want, sizeof want, "opprof: trace written to %s (2 events)\n", trace);
        ck_assert_str_eq(e, want);
        free(e);
        struct opp_model *m = tu_load(trace);
        ck_assert_ptr_nonnull(m);
        ck_assert_uint_eq(m->open_events, 2);
        struct opp_agg_opts o = {0};
        struct opp_agg ag;
        ck_assert_int_eq(tu_aggregate(m, &o, &ag), 0);
        ck_assert_uint_eq(ag.nrows, 2);
        ck_assert_uint_eq(row(&ag, "outer")->count, 1);
        ck_assert_uint_eq(row(&ag, "mydomain:dying")->count, 1);
        opp_agg_free(&ag);
        if (!summary) /* a summary keeps the calls' paths, not each call */
            ck_assert_uint_eq(tu_count(m, "mydomain:dying", -1, 0, 1), 1);
        opp_model_free(m);
    }
    free(trace), free(err);
}
END_TEST

/* nvtx_app MODE, whose one fault (its handler says "MODE segv 1") comes
 * in our write of a mark's record: the trace, whole, with events and
 * dropped as given, the marks "before" and "kept" in it once each. */
static struct opp_model *mark_fault_run(const char *mode, uint64_t events, uint64_t dropped)
{
    char *trace = tu_path(dir, "j.trace"), *out = tu_path(dir, "j.out"), want[64];
    struct tu_env te;
    char *argv[] = {(char *)tu_build(APP), (char *)mode, NULL};
    ck_assert_int_eq(
        tu_code(tu_run(argv, tu_preload_env(&te, trace, "NVTX_INJECTION64_PATH="), out, NULL)), 0);
    char *o = tu_slurp(out);
    snprintf(want, sizeof want, "%s segv 1\n", mode);
    ck_assert_str_eq(o, want);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(m->events, events);
    ck_assert_uint_eq(tu_count(m, "before", 0, 0, 0), 1);
    ck_assert_uint_eq(tu_count(m, "kept", 0, 0, 0), 1);
    ck_assert_uint_eq(m->dropped, dropped);
    free(o), free(trace), free(out);
    return m;
}

/* A signal handler that jumps out of our publishing of a mark's record
 * (a SIGSEGV here, at a known instant: the program made our ring's slots
 * read-only, so the record's first write faults; its handler makes them
 * writable and siglongjmps back): that record, a range of ours rather than
 * a call in flight, is counted as dropped, never lost silently; the marks
 * after it are recorded. */
START_TEST(jump_out_of_a_mark_s_record_counted)
{
    if (!built("jump_out_of_a_mark_s_record_counted"))
        return;
    opp_model_free(mark_fault_run("markjmp", 2, 1));
}
END_TEST

/* The same fault, its handler jumping only within itself (a handler's
 * own sigsetjmp and siglongjmp) before it returns into our write, which
 * then goes on: that jump leaves nothing of ours, and the mark is
 * recorded, once, nothing dropped. */
START_TEST(jump_within_a_handler_leaves_the_mark)
{
    if (!built("jump_within_a_handler_leaves_the_mark"))
        return;
    struct opp_model *m = mark_fault_run("markinner", 3, 0);
    ck_assert_uint_eq(tu_count(m, "late", 0, 0, 0), 1);
    opp_model_free(m);
}
END_TEST

Suite *suite_nvtx(void)
{
    Suite *s = suite_create("nvtx");
    TCase *tc = tcase_create("injection");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, ranges_exact);
    tcase_add_test(tc, ranges_open_at_death_named);
    tcase_add_test(tc, jump_out_of_a_mark_s_record_counted);
    tcase_add_test(tc, jump_within_a_handler_leaves_the_mark);
    tcase_add_test(tc, preset_injection_kept);
    tcase_add_test(tc, run_and_report_table);
    tcase_add_test(tc, train_loop_tree_and_steps);
    tcase_add_test(tc, flops_columns_chosen_before_the_limit);
    tcase_add_test(tc, ranges_across_fork);
    suite_add_tcase(s, tc);
    return s;
}
