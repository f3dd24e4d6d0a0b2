/* End to end on Debian's PyTorch: an unmodified training script
 * (tests/py/torch_train.py) profiled by torch.profiler and by opprof. What
 * torch.profiler's key_averages says is the answer: every name's count,
 * addmm's and conv2d's input shapes; opprof adds the nn.Module layers
 * around them and the library calls below them. */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/aggregate.h"
#include "analysis/model.h"
#include "analysis/step_times.h"
#include "analysis/symbolize.h"
#include "testutil.h"
#include "tool/cmds.h"
#include "views/output.h"
#include "oracle/loaded.h"

#define PY TU_PYTHON
#define ITERS 3

static char *dir, *shared; /* the test's, the suite run's */
static void setup(void)
{
    dir = tu_tmpdir();
}
static void teardown(void)
{
    tu_rmdir(dir);
    free(dir);
}
static void suite_setup(void)
{
    shared = tu_tmpdir();
    tu_python_has("torch");
}
static void suite_teardown(void)
{
    tu_rmdir(shared);
    free(shared);
}

static int have_torch(const char *test)
{
    if (tu_python_has("torch"))
        return 1;
    fprintf(stderr, "SKIP %s: %s has no torch (apt-get install python3-torch libtorch-dev)\n", test,
            PY);
    return 0;
}

static const char *script(const char *name)
{
    static char path[4096];
    const char *src = getenv("OPPROF_SRC");
    snprintf(path, sizeof path, "%s/tests/py/%s", src ? src : ".", name);
    return path;
}

/* `opprof run -q -o TRACE -- /usr/bin/python3 ARG...` (NULL-ended), env
 * added (NULL: none), stdout and stderr to out and err (NULL: the test's);
 * it must exit 0. */
static void profiled(const char *trace, char *const env[], const char *out, const char *err, ...)
{
    char *argv[32] = {(char *)tu_tool("opprof"), "run", "-q", "-o", (char *)trace, "--", PY};
    int n = 7;
    va_list ap;
    va_start(ap, err);
    for (char *a; n < 31 && (a = va_arg(ap, char *));)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    ck_assert_int_eq(tu_code(tu_run(argv, env, out, err)), 0);
}

/* tests/py/PY under torch.profiler, its facts written to tfile, and under
 * `opprof run` with env (NULL: none) into trace, its stderr into err
 * (NULL: not kept): both print the same. */
static void torch_and_opprof(const char *py, const char *tfile, const char *trace,
                             char *const env[], const char *err)
{
    char *o1 = tu_path(dir, "o1"), *o2 = tu_path(dir, "o2");
    ck_assert_int_eq(
        tu_code(tu_run((char *[]){PY, (char *)script(py), "torch", (char *)tfile, NULL}, NULL, o1,
                       NULL)),
        0);
    profiled(trace, env, o2, err, (char *)script(py), NULL);
    char *s1 = tu_slurp(o1), *s2 = tu_slurp(o2);
    ck_assert_str_eq(s1, s2);
    free(s1), free(s2), free(o1), free(o2);
}

/* torch.profiler's facts, one per line (see torch_train.py; "flops NAME N"
 * torch_flops.py's). */
struct fact {
    char what[8], name[512], shapes[512];
    long n, mem, self_mem;
};

static size_t read_facts(const char *path, struct fact *f, size_t cap)
{
    char *text = tu_slurp(path), *save = NULL;
    ck_assert_ptr_nonnull(text);
    size_t n = 0;
    for (char *line = strtok_r(text, "\n", &save); line && n < cap;
         line = strtok_r(NULL, "\n", &save)) {
        char *col[5] = {0};
        int k = 0;
        for (char *p = line; p && k < 5; k++) {
            col[k] = p;
            p = strchr(p, '\t');
            if (p)
                *p++ = 0;
        }
        struct fact *x = &f[n++];
        memset(x, 0, sizeof *x);
        snprintf(x->what, sizeof x->what, "%s", col[0] ? col[0] : "");
        snprintf(x->name, sizeof x->name, "%s", col[1] ? col[1] : "");
        if ((!strcmp(x->what, "count") || !strcmp(x->what, "flops") || !strcmp(x->what, "path")) &&
            k == 3) {
            x->n = atol(col[2]);
        } else if (!strcmp(x->what, "shapes") && k == 4) {
            snprintf(x->shapes, sizeof x->shapes, "%s", col[2]);
            x->n = atol(col[3]);
        } else if (!strcmp(x->what, "mem") && k == 4) {
            x->mem = atol(col[2]);
            x->self_mem = atol(col[3]);
        } else if (!strcmp(x->what, "left") && k == 2) {
            x->name[0] = 0;
            x->mem = atol(col[1]);
        } else {
            ck_abort_msg("bad line in %s", path);
        }
    }
    free(text);
    return n;
}

/* The calls named key (every library and shape), shapes: only those. */
static uint64_t calls(const struct opp_agg *a, const char *key, const char *shapes,
                      const char *stack)
{
    uint64_t n = 0;
    for (size_t i = 0; i < a->nrows; i++)
        if (!strcmp(a->rows[i].key, key) && (!shapes || !strcmp(a->rows[i].shapes_str, shapes)) &&
            (!stack || (a->rows[i].stack_str && !strcmp(a->rows[i].stack_str, stack))))
            n += a->rows[i].count;
    return n;
}

static struct fact facts[4096];
static size_t nfacts;
static char m_trace[4096]; /* run_both's trace */

/* Whether torch.profiler's count t and another count o of one name agree.
 * Exactly, except for one case of torch's own: its tree is built from
 * whole microseconds (Kineto's start_us), so it decides same-named ops'
 * nesting, and so whether one folds into another (EventList.
 * _remove_dup_nodes: aten::div_ with a scalar calls aten::div_;
 * aten::resolve_conj on addmm's two operands), on timestamps that can tie:
 * now and then torch counts one more or one fewer in an iteration, more
 * often when the process runs slower (under a profiler). The tests bound
 * how many names may differ so. */
static int counts_agree(long t, uint64_t o, long iters)
{
    long d = t - (long)o;
    return d >= -iters && d <= iters;
}

/* The script under torch.profiler (facts) and under `opprof run` (trace):
 * the same output, so the same computation. Run once a suite run, in
 * shared (the tests that read it share it: each run imports torch), and
 * read again by each; the profiled run's output kept there (both-ITERS.out). */
static struct opp_model *run_both(const char *iters)
{
    char name[64];
    snprintf(name, sizeof name, "both-%s.txt", iters);
    char *tfile = tu_path(shared, name);
    snprintf(name, sizeof name, "both-%s.trace", iters);
    char *trace = tu_path(shared, name);
    snprintf(name, sizeof name, "both-%s.done", iters);
    char *done = tu_path(shared, name);
    if (access(done, F_OK) != 0) {
        snprintf(name, sizeof name, "both-%s.out", iters);
        char *o1 = tu_path(dir, "o1"), *o2 = tu_path(shared, name), *err = tu_path(dir, "err");
        ck_assert_int_eq(tu_code(tu_run((char *[]){PY, (char *)script("torch_train.py"),
                                                   (char *)iters, "torch", tfile, NULL},
                                        NULL, o1, NULL)),
                         0);
        profiled(trace, NULL, o2, err, (char *)script("torch_train.py"), (char *)iters, NULL);
        char *s1 = tu_slurp(o1), *s2 = tu_slurp(o2), *e = tu_slurp(err);
        ck_assert_str_eq(s1, s2);
        ck_assert_msg(!strstr(e, "not recorded"), "opprof said: %s", e);
        free(s1), free(s2), free(e), free(o1), free(o2), free(err);
        close(open(done, O_CREAT | O_WRONLY, 0600));
    }
    nfacts = read_facts(tfile, facts, sizeof facts / sizeof *facts);
    ck_assert_uint_gt(nfacts, 100);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->dropped, 0);
    snprintf(m_trace, sizeof m_trace, "%s", trace);
    free(tfile), free(trace), free(done);
    return m;
}

/* A name of opprof's that torch.profiler does not have: an nn.Module layer. */
static int is_layer(const char *name)
{
    return !strncmp(name, "nn.Module: ", 11);
}

/* The Self CPU Mem of m's nn.Module layers (in process proc, or every
 * process for -1) whose nearest call around them that is not a layer is
 * named name ("[memory]": none): torch, which has no layers, gives those
 * bytes (Python's frees between the ops of a forward) to that call. */
static int64_t layers_self_mem(const struct opp_model *m, const char *name, long proc)
{
    int64_t sum = 0;
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        if (proc >= 0 && t->proc != (uint32_t)proc)
            continue;
        for (size_t i = 0; t->cpumem && i < t->nevents; i++) {
            if (!is_layer(opp_model_str(m, t->events[i].name)))
                continue;
            uint32_t p = t->events[i].parent;
            while (p != OPP_NO_PARENT && is_layer(opp_model_str(m, t->events[p].name)))
                p = t->events[p].parent;
            if (!strcmp(p == OPP_NO_PARENT ? "[memory]" : opp_model_str(m, t->events[p].name),
                        name))
                sum += t->cpumem[i].self;
        }
    }
    return sum;
}

/* torch's fact of what for name (a "mem" line's total and self). */
static const struct fact *fact_of(const char *what, const char *name)
{
    for (size_t i = 0; i < nfacts; i++)
        if (!strcmp(facts[i].what, what) && !strcmp(facts[i].name, name))
            return &facts[i];
    return NULL;
}

/* CPU memory (profile_memory), every row: CPU Mem and Self CPU Mem are
 * torch's, as its profiler's event tree attributes each allocation and
 * free (to the innermost op open on its thread; torch_train.py's "mem"
 * facts), exactly. Not key_averages' cpu_memory_usage, which torch gets
 * by time instead: the allocations of every thread whose whole
 * microsecond lies within an op's [start, start + duration], both
 * truncated to the microsecond, so an allocation on a boundary counts in
 * two neighbours, one in an op's last partial microsecond in none of its
 * own, and the rows move by whole allocations from one run of this script
 * to the next (scripts/torch-memory-table.py prints them). Two rules of
 * opprof's own, each exact:
 * - Self CPU Mem of a call around nn.Module layers: the layers' own bytes
 *   are theirs (as their self time is), which torch, without layers, gives
 *   to that call (here loss_and_backward's: what Net_0's forward frees
 *   between its ops);
 * - [memory]: opprof records the whole run, torch.profiler from its
 *   __enter__ to its __exit__, so opprof's also has the frees of the
 *   interpreter's end: every byte torch saw left (its "left" fact),
 *   freed outside any op.
 * a: the aggregate of process proc's calls (-1: every process's); rows:
 * how many rows torch has, charged: how many of them with Self CPU Mem. */
static void check_torch_memory(const struct opp_model *m, const struct opp_agg *a, long proc,
                               size_t *rows_out, size_t *charged_out)
{
    const struct fact *left = fact_of("left", "");
    ck_assert_ptr_nonnull(left);
    ck_assert_int_gt(left->mem, 0);
    size_t rows = 0, charged = 0;
    for (size_t i = 0; i < nfacts; i++) {
        if (strcmp(facts[i].what, "mem"))
            continue;
        const char *name = facts[i].name;
        int64_t total = 0, self = 0;
        for (size_t r = 0; r < a->nrows; r++)
            if (!strcmp(a->rows[r].key, name)) {
                total += a->rows[r].cpu_memory_usage;
                self += a->rows[r].self_cpu_memory_usage;
            }
        self += layers_self_mem(m, name, proc);
        long end = !strcmp(name, "[memory]") ? -left->mem : 0;
        ck_assert_msg(total == facts[i].mem + end && self == facts[i].self_mem + end,
                      "%s: torch CPU Mem %ld, Self %ld; opprof %lld, %lld", name, facts[i].mem,
                      facts[i].self_mem, (long long)total, (long long)self);
        rows++;
        charged += facts[i].self_mem != 0;
    }
    *rows_out = rows;
    *charged_out = charged;
    /* and no row of opprof's has CPU memory that torch's have not */
    for (size_t r = 0; r < a->nrows; r++)
        if (!fact_of("mem", a->rows[r].key) && !is_layer(a->rows[r].key))
            ck_assert_msg(!a->rows[r].cpu_memory_usage && !a->rows[r].self_cpu_memory_usage,
                          "%s: CPU Mem %lld, not torch's", a->rows[r].key,
                          (long long)a->rows[r].cpu_memory_usage);
}

/* What torch.profiler counted (run_both's facts), m counted as often (a
 * full trace's calls, or a summary's nodes): aten ops, autograd nodes, the
 * record_function label, the optimizer's steps; torch's shapes; CPU
 * memory. */
static void check_torch_facts(const struct opp_model *m)
{
    struct opp_agg_opts o = {0};
    struct opp_agg a, s;
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    size_t names = 0;
    int tolerated = 0;
    for (size_t i = 0; i < nfacts; i++) {
        if (strcmp(facts[i].what, "count") || facts[i].name[0] == '[')
            continue; /* "[memory]": torch's allocation events, not operators */
        names++;
        uint64_t got = calls(&a, facts[i].name, NULL, NULL);
        ck_assert_msg(counts_agree(facts[i].n, got, ITERS),
                      "%s: torch.profiler %ld, opprof %llu", facts[i].name, facts[i].n,
                      (unsigned long long)got);
        tolerated += got != (uint64_t)facts[i].n;
    }
    ck_assert_uint_gt(names, 60);
    ck_assert_int_le(tolerated, 3);
    /* the ones users look for, once per iteration */
    const char *per_iter[] = {"aten::conv2d",
                              "aten::addmm",
                              "aten::batch_norm",
                              "aten::max_pool2d",
                              "aten::dropout",
                              "loss_and_backward",
                              "Optimizer.step#Adam.step",
                              "Optimizer.zero_grad#Adam.zero_grad",
                              "autograd::engine::evaluate_function: AddmmBackward0",
                              "AddmmBackward0"};
    for (size_t i = 0; i < sizeof per_iter / sizeof *per_iter; i++)
        ck_assert_msg(calls(&a, per_iter[i], NULL, NULL) == ITERS, "%s", per_iter[i]);
    size_t rows, charged;
    check_torch_memory(m, &a, -1, &rows, &charged);
    ck_assert_uint_gt(rows, 90);
    ck_assert_uint_gt(charged, 30);

    /* torch's shapes, in torch's order (not BLAS's column-major view) */
    struct opp_agg_opts os = {.group_by_shape = 1};
    ck_assert_int_eq(tu_aggregate(m, &os, &s), 0);
    int shaped = 0;
    for (size_t i = 0; i < nfacts; i++)
        if (!strcmp(facts[i].what, "shapes") &&
            (!strcmp(facts[i].name, "aten::addmm") || !strcmp(facts[i].name, "aten::conv2d") ||
             !strcmp(facts[i].name, "aten::batch_norm"))) {
            ck_assert_msg(calls(&s, facts[i].name, facts[i].shapes, NULL) == (uint64_t)facts[i].n,
                          "%s %s", facts[i].name, facts[i].shapes);
            shaped++;
        }
    ck_assert_int_eq(shaped, 3);
    ck_assert_uint_eq(calls(&s, "aten::addmm", "[[10], [16, 512], [512, 10], [], []]", NULL),
                      ITERS);

    opp_agg_free(&a);
    opp_agg_free(&s);
}

/* Every name torch.profiler counted, opprof counted as often. */
START_TEST(torch_ops_match_torch_profiler)
{
    if (!have_torch("torch_ops_match_torch_profiler"))
        return;
    struct opp_model *m = run_both("3");
    check_torch_facts(m);
    opp_model_free(m);
}
END_TEST

/* The FLOPs of a key's rows. */
static uint64_t flops_of(const struct opp_agg *a, const char *key)
{
    uint64_t n = 0;
    for (size_t i = 0; i < a->nrows; i++)
        if (!strcmp(a->rows[i].key, key))
            n += a->rows[i].flops;
    return n;
}

/* trace's FLOPs are torch.profiler's (the facts read): each operator it
 * gives FLOPs to, as many in all, and no other torch operator any. */
static void flops_are_torch(const char *trace)
{
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    struct opp_agg_opts o = {0};
    struct opp_agg a;
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    const char *named[] = {"aten::mm",  "aten::addmm", "aten::bmm",   "aten::baddbmm",
                           "aten::mul", "aten::add",   "aten::conv2d"};
    size_t n = 0;
    for (size_t i = 0; i < nfacts; i++) {
        if (strcmp(facts[i].what, "flops"))
            continue;
        ck_assert_msg(flops_of(&a, facts[i].name) == (uint64_t)facts[i].n,
                      "%s: torch.profiler %ld FLOPs, opprof %llu", facts[i].name, facts[i].n,
                      (unsigned long long)flops_of(&a, facts[i].name));
        ck_assert_str_eq(facts[i].name, named[n]); /* key_averages' order: first seen */
        n++;
    }
    ck_assert_uint_eq(n, sizeof named / sizeof *named);
    for (size_t r = 0; r < a.nrows; r++)
        if (a.rows[r].flops && !strcmp(a.rows[r].lib, "torch")) {
            int torch = 0;
            for (size_t i = 0; i < nfacts; i++)
                torch |= !strcmp(facts[i].what, "flops") && !strcmp(facts[i].name, a.rows[r].key);
            ck_assert_msg(torch, "%s: %llu FLOPs, torch.profiler none", a.rows[r].key,
                          (unsigned long long)a.rows[r].flops);
        }
    /* the conv2d of stride 2, padding 1, dilation 2 and groups 3, forward twice */
    ck_assert_uint_eq(flops_of(&a, "aten::conv2d"), 23760 + 12096 + 2 * 3888);
    opp_agg_free(&a);
    opp_model_free(m);
}

/* torch.profiler's with_flops (tests/py/torch_flops.py): each operator it
 * gives FLOPs to (aten::mm, addmm, bmm, baddbmm, mul, add, conv2d with
 * stride, padding, dilation and groups, forward and backward), opprof gives
 * as many in all, and no other torch operator any; a summary trace too. */
START_TEST(torch_flops_match_torch_profiler)
{
    if (!have_torch("torch_flops_match_torch_profiler"))
        return;
    char *tfile = tu_path(dir, "flops.txt"), *trace = tu_path(dir, "flops.trace");
    char *sum = tu_path(dir, "sum.trace");
    torch_and_opprof("torch_flops.py", tfile, trace, NULL, NULL);
    nfacts = read_facts(tfile, facts, sizeof facts / sizeof *facts);
    flops_are_torch(trace);
    profiled(sum, (char *[]){"OPPROF_MODE=summary", NULL}, NULL, NULL,
             (char *)script("torch_flops.py"), NULL);
    flops_are_torch(sum);
    free(tfile), free(trace), free(sum);
}
END_TEST

/* OPPROF_TORCH=lean: the same operators as the full view, counted as
 * often (every name of every library, nn.Module layers, labels and
 * autograd nodes), without their inputs' shapes and with no CPU memory. */
START_TEST(torch_lean_counts_match_full)
{
    if (!have_torch("torch_lean_counts_match_full"))
        return;
    /* the full view: run_both's run of the same script */
    struct opp_model *mf = run_both("3");
    char *full = tu_path(shared, "both-3.trace"), *lean = tu_path(dir, "lean.trace");
    char *o1 = tu_path(shared, "both-3.out"), *o2 = tu_path(dir, "o2"), *err = tu_path(dir, "err");
    profiled(lean, (char *[]){"OPPROF_TORCH=lean", NULL}, o2, err,
             (char *)script("torch_train.py"), "3", NULL);
    char *s1 = tu_slurp(o1), *s2 = tu_slurp(o2), *e = tu_slurp(err);
    ck_assert_str_eq(s1, s2);
    char said[4200];
    snprintf(said, sizeof said, "opprof: trace written to %s (", lean);
    ck_assert_msg(!strncmp(e, said, strlen(said)) && strchr(e, '\n') == e + strlen(e) - 1,
                  "opprof said: %s", e);
    struct opp_model *ml = tu_load(lean);
    ck_assert_ptr_nonnull(ml);
    struct opp_agg_opts o = {0}, os = {.group_by_shape = 1};
    struct opp_agg af, al, sl;
    ck_assert_int_eq(tu_aggregate(mf, &o, &af), 0);
    ck_assert_int_eq(tu_aggregate(ml, &o, &al), 0);
    ck_assert_int_eq(tu_aggregate(ml, &os, &sl), 0);
    /* the full view's one row more: "[memory]", allocations outside any op */
    ck_assert_uint_eq(calls(&al, "[memory]", NULL, NULL), 0);
    ck_assert_uint_gt(calls(&af, "[memory]", NULL, NULL), 0);
    ck_assert_uint_eq(al.nrows, af.nrows - 1);
    ck_assert_uint_gt(af.nrows, 60);
    int64_t full_mem = 0;
    for (size_t i = 0; i < af.nrows; i++) {
        if (!strcmp(af.rows[i].key, "[memory]"))
            continue;
        ck_assert_msg(calls(&al, af.rows[i].key, NULL, NULL) == af.rows[i].count,
                      "%s: full %llu, lean %llu", af.rows[i].key,
                      (unsigned long long)af.rows[i].count,
                      (unsigned long long)calls(&al, af.rows[i].key, NULL, NULL));
        full_mem += af.rows[i].cpu_memory_usage > 0;
    }
    ck_assert_int_gt(full_mem, 5);
    for (size_t i = 0; i < al.nrows; i++)
        ck_assert_msg(al.rows[i].cpu_memory_usage == 0 && al.rows[i].self_cpu_memory_usage == 0,
                      "%s has CPU memory in the lean view", al.rows[i].key);
    /* torch's rows grouped by shape: one each, no shapes recorded (the
     * library calls below them keep theirs) */
    size_t torch_rows = 0;
    for (size_t i = 0; i < sl.nrows; i++)
        if (!strncmp(sl.rows[i].key, "aten::", 6)) {
            ck_assert_msg(!strcmp(sl.rows[i].shapes_str, "[]"), "%s %s", sl.rows[i].key,
                          sl.rows[i].shapes_str);
            torch_rows++;
        }
    ck_assert_uint_gt(torch_rows, 40);
    ck_assert_uint_eq(calls(&sl, "aten::addmm", "[]", NULL), 3);
    ck_assert_uint_eq(calls(&sl, "aten::addmm", NULL, NULL), 3);
    ck_assert_uint_eq(calls(&al, "Optimizer.step#Adam.step", NULL, NULL), 3);
    /* compared by shape with the full trace: said, as no row can match */
    char *dout, *derr, want[4300];
    char *dargv[] = {"diff", full, lean, "--by", "shape", NULL};
    ck_assert_int_eq(tu_call(cmd_diff, dargv, dir, &dout, &derr), 0);
    snprintf(want, sizeof want,
             "opprof diff: warning: %s has no operator input shapes (OPPROF_TORCH=lean): its "
             "rows by shape match none of the other's\n",
             lean);
    ck_assert_str_eq(derr, want);
    free(dout), free(derr);
    char *dname[] = {"diff", full, lean, NULL}; /* by name they match: nothing said */
    ck_assert_int_eq(tu_call(cmd_diff, dname, dir, &dout, &derr), 0);
    ck_assert_str_eq(derr, "");
    free(dout), free(derr);
    opp_agg_free(&af);
    opp_agg_free(&al);
    opp_agg_free(&sl);
    opp_model_free(mf);
    opp_model_free(ml);
    free(s1);
    free(s2);
    free(e);
    free(full);
    free(lean);
    free(o1);
    free(o2);
    free(err);
}
END_TEST

/* Summary mode (OPPROF_MODE=summary) of the same script says what
 * torch.profiler says: counts with torch's folding of an op into its
 * same-named parent, shapes, CPU memory. And the full trace's report read
 * as it streams (summarised on the way) is the loaded one, byte for byte,
 * memory columns included. */
START_TEST(torch_summary_matches_torch_profiler)
{
    if (!have_torch("torch_summary_matches_torch_profiler"))
        return;
    opp_model_free(run_both("3"));
    const char *views[][3] = {{NULL},
                              {"--tree"},
                              {"-f", "csv"},
                              {"--group-by-shape"},
                              {"--sort", "self_cpu_memory_usage"},
                              {"-f", "json"}};
    for (size_t v = 0; v < sizeof views / sizeof *views; v++) {
        char *a[10] = {"report", m_trace, "--limit", "1000"};
        char *b[10] = {"report", m_trace, "--limit", "1000", "--stream"};
        for (int k = 0; k < 3 && views[v][k]; k++)
            a[4 + k] = b[5 + k] = (char *)views[v][k];
        char *oa, *ea, *eb, *d = tu_call_differ(cmd_report, a, b, dir, &oa, &ea, &eb);
        ck_assert_msg(!d, "view %zu: %s", v, d);
        ck_assert_uint_gt(strlen(oa), 1000);
        ck_assert_str_eq(eb, ea);
        free(oa), free(ea), free(eb);
    }
    /* and its steps found as it streams: training iterations, ranges,
     * boundaries (torch's folding of aten::div_ into itself included) */
    const char *steps[] = {"Optimizer.step#Adam.step", "nn.Module: Net_0", "loss_and_backward",
                           "aten::mm", "aten::div_", "[memory]", NULL};
    char *d = tu_steps_differ(cmd_report, dir, m_trace, steps);
    ck_assert_msg(!d, "%s", d);
    char *trace = tu_path(dir, "s.trace"), *out = tu_path(dir, "o3");
    profiled(trace, (char *[]){"OPPROF_MODE=summary", NULL}, out, NULL,
             (char *)script("torch_train.py"), "3", NULL);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->summary, 1);
    ck_assert_uint_eq(m->dropped, 0);
    check_torch_facts(m);
    opp_model_free(m);
    free(trace), free(out);
}
END_TEST

/* The layers: each nn.Module forward around its ops, the library calls
 * below the aten op that made them. */
START_TEST(torch_module_tree)
{
    if (!have_torch("torch_module_tree"))
        return;
    struct opp_model *m = run_both("3");
    struct opp_agg_opts o = {.group_by_stack = 3};
    struct opp_agg a;
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    ck_assert_uint_eq(calls(&a, "nn.Module: Net_0", NULL, "loss_and_backward"), ITERS);
    ck_assert_uint_eq(calls(&a, "nn.Module: Linear_0", NULL, "loss_and_backward;nn.Module: Net_0"),
                      ITERS);
    ck_assert_uint_eq(
        calls(&a, "aten::addmm", NULL, "nn.Module: Net_0;nn.Module: Linear_0;aten::linear"), ITERS);
    ck_assert_uint_eq(calls(&a, "sgemm_", NULL, "nn.Module: Linear_0;aten::linear;aten::addmm"),
                      ITERS);
    ck_assert_uint_eq(
        calls(&a, "aten::conv2d", NULL, "loss_and_backward;nn.Module: Net_0;nn.Module: Conv2d_0"),
        ITERS);
    const char *layers[] = {"Conv2d_0", "BatchNorm2d_0", "ReLU_0", "MaxPool2d_0", "Dropout_0"};
    for (size_t i = 0; i < sizeof layers / sizeof *layers; i++) {
        char name[64];
        snprintf(name, sizeof name, "nn.Module: %s", layers[i]);
        ck_assert_msg(calls(&a, name, NULL, "loss_and_backward;nn.Module: Net_0") == ITERS, "%s",
                      name);
    }
    /* backward runs inside the label, outside any module */
    ck_assert_uint_eq(
        calls(&a, "autograd::engine::evaluate_function: AddmmBackward0", NULL, "loss_and_backward"),
        ITERS);

    /* the Chrome trace as Kineto writes torch's: categories, shapes, memory */
    char *json = tu_path(dir, "t.json");
    ck_assert_int_eq(tu_code(tu_run((char *[]){(char *)tu_tool("opprof"), "export", "chrome",
                                               m_trace, "-o", json, NULL},
                                    NULL, NULL, NULL)),
                     0);
    char *j = tu_slurp(json);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(
        tu_occurrences(j, "\"cat\": \"python_function\", \"name\": \"nn.Module: Net_0\""), ITERS);
    ck_assert_int_eq(
        tu_occurrences(j, "\"cat\": \"user_annotation\", \"name\": \"Optimizer.step#Adam.step\""),
        ITERS);
    ck_assert_int_eq(tu_occurrences(j, "\"name\": \"aten::addmm\""), ITERS);
    ck_assert_int_eq(tu_occurrences(j, "\"Input Dims\": [[10], [16, 512], [512, 10], [], []]"),
                     ITERS);
    ck_assert_uint_gt(tu_count(m, "[memory]", -1, 0, -1), 100);
    ck_assert_int_eq(tu_occurrences(j, "\"cat\": \"cpu_instant_event\", \"name\": \"[memory]\""),
                     (int)tu_count(m, "[memory]", -1, 0, -1));
    free(j);
    free(json);

    /* --step with no name: one training iteration per optimizer step, each
     * holding its zero_grad, forward, backward and step */
    struct opp_agg_opts all = {0};
    struct opp_steps st;
    char what[300];
    ck_assert_int_eq(tu_steps_default(m, &all, &st, what, sizeof what), 0);
    ck_assert_str_eq(what, "training iterations (to each Optimizer.step#Adam.step)");
    ck_assert_uint_eq(st.n, ITERS);
    ck_assert_int_eq(st.ranges, 0);
    for (size_t i = 0; i < st.n; i++) {
        ck_assert_uint_gt(st.steps[i].end_ns, st.steps[i].begin_ns);
        ck_assert_uint_le(st.steps[i].cpu_ns, st.steps[i].end_ns - st.steps[i].begin_ns);
        if (i)
            ck_assert_uint_eq(st.steps[i].begin_ns, st.steps[i - 1].end_ns);
    }
    opp_steps_free(&st);
    opp_agg_free(&a);
    opp_model_free(m);
}
END_TEST

/* Model shapes beyond the training script's (tests/py/torch_shapes.py:
 * nn.LSTM and nn.GRU forward and backward, nn.Embedding, nn.LayerNorm,
 * nn.MultiheadAttention, nn.TransformerEncoderLayer, a torch.jit.script'ed
 * module, no_grad inference, in-place ops, views, double backward,
 * torch.utils.checkpoint): every call path inside its "shapes" label has
 * as many calls as torch.profiler's event tree gives it (folded as
 * key_averages folds), and opprof has no other; nn.Module layers, which
 * torch has not, left out of opprof's paths. Exactly: key_averages' own
 * tree, of whole microseconds, moves a same-named op's fold by one from
 * run to run (counts_agree). */
START_TEST(torch_shapes_nest_as_torch_profiler)
{
    if (!have_torch("torch_shapes_nest_as_torch_profiler"))
        return;
    char *tfile = tu_path(dir, "paths.txt"), *trace = tu_path(dir, "t.trace");
    torch_and_opprof("torch_shapes.py", tfile, trace, NULL, NULL);
    nfacts = read_facts(tfile, facts, sizeof facts / sizeof *facts);
    ck_assert_uint_gt(nfacts, 300);
    ck_assert_uint_lt(nfacts, sizeof facts / sizeof *facts);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->dropped, 0);
    struct opp_agg_opts o = {.group_by_stack = 16};
    struct opp_agg a;
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    static long got[4096];
    memset(got, 0, sizeof got);
    const char *names[] = {"aten::lstm",      "aten::gru",
                           "aten::embedding", "aten::native_layer_norm",
                           "aten::bmm",       "aten::_transformer_encoder_layer_fwd",
                           "forward",         "CheckpointFunctionBackward"};
    int seen[sizeof names / sizeof *names] = {0};
    for (size_t r = 0; r < a.nrows; r++) {
        const struct opp_row *row = &a.rows[r];
        if (strcmp(row->lib, "torch") || is_layer(row->key) || row->key[0] == '[')
            continue; /* library calls, layers, allocations */
        char path[2048] = "", *save = NULL, *stack = strdup(row->stack_str ? row->stack_str : "");
        size_t len = 0;
        for (char *f = strtok_r(stack, ";", &save); f; f = strtok_r(NULL, ";", &save))
            if (!is_layer(f))
                len += (size_t)snprintf(path + len, sizeof path - len, "%s;", f);
        snprintf(path + len, sizeof path - len, "%s", row->key);
        free(stack);
        if (strncmp(path, "shapes", 6) || (path[6] && path[6] != ';'))
            continue; /* outside the label */
        size_t i = 0;
        while (i < nfacts && (strcmp(facts[i].what, "path") || strcmp(facts[i].name, path)))
            i++;
        ck_assert_msg(i < nfacts, "%s: %llu calls in opprof, none in torch.profiler", path,
                      (unsigned long long)row->count);
        got[i] += (long)row->count;
        for (size_t k = 0; k < sizeof names / sizeof *names; k++)
            seen[k] |= !strcmp(row->key, names[k]);
    }
    for (size_t i = 0; i < nfacts; i++)
        ck_assert_msg(got[i] == facts[i].n, "%s: torch.profiler %ld, opprof %ld", facts[i].name,
                      facts[i].n, got[i]);
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        ck_assert_msg(seen[k], "no %s", names[k]);
    opp_agg_free(&a);
    opp_model_free(m);
    free(tfile), free(trace);
}
END_TEST

/* Inference: each outermost module call is a step (the users' "how long
 * is one inference"), an inner module never. */
START_TEST(torch_inference_steps)
{
    if (!have_torch("torch_inference_steps"))
        return;
    char *trace = tu_path(dir, "t.trace");
    char *code = "import torch\n"
                 "net = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU()).eval()\n"
                 "x = torch.randn(2, 8)\n"
                 "with torch.no_grad():\n"
                 "    for _ in range(7):\n"
                 "        net(x)\n";
    profiled(trace, NULL, NULL, NULL, "-c", code, NULL);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    struct opp_agg_opts all = {0};
    struct opp_steps st;
    char what[300];
    ck_assert_int_eq(tu_steps_default(m, &all, &st, what, sizeof what), 0);
    ck_assert_str_eq(what, "inferences (outermost nn.Module forwards: nn.Module: Sequential_0)");
    ck_assert_uint_eq(st.n, 7);
    ck_assert_int_eq(st.ranges, 1);
    opp_steps_free(&st);
    /* the same by name; the inner layers are not steps */
    ck_assert_int_eq(tu_steps_find(m, &all, "nn.Module: Linear_0", &st), 0);
    ck_assert_uint_eq(st.n, 7);
    ck_assert_int_eq(st.ranges, 1);
    opp_steps_free(&st);
    opp_model_free(m);
    /* found as the trace streams: the same */
    char *d = tu_steps_differ(cmd_report, dir, trace,
                              (const char *[]){"nn.Module: Linear_0", "aten::linear", NULL});
    ck_assert_msg(!d, "%s", d);
    free(trace);
}
END_TEST

/* A fork that ran no atfork handler (syscall(SYS_fork)): the child's
 * module names are its own, as after fork(), not the parent's string ids
 * read in the child's new table; its numbering starts over. */
START_TEST(torch_modules_after_raw_fork)
{
    if (!have_torch("torch_modules_after_raw_fork"))
        return;
    char *trace = tu_path(dir, "t.trace");
    profiled(trace, NULL, NULL, NULL, script("rawfork_modules.py"), NULL);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->nprocs, 2);
    static const char *const names[] = {"nn.Module: A_0", "nn.Module: Linear_0", "nn.Module: B_0",
                                        "nn.Module: Linear_1"};
    static const unsigned long parent[] = {1, 1, 0, 0}, child[] = {1, 1, 1, 0};
    for (int i = 0; i < 4; i++) {
        ck_assert_uint_eq(tu_count(m, names[i], 0, 0, 0), parent[i]);
        ck_assert_uint_eq(tu_count(m, names[i], 1, 0, 0), child[i]);
    }
    ck_assert_uint_eq(tu_count(m, "aten::add", 1, 0, 0), 3);
    opp_model_free(m);
    free(trace);
}
END_TEST

/* The line of the script that holds text, from 1. */
static int line_of(const char *path, const char *text)
{
    char *src = tu_slurp(path);
    ck_assert_ptr_nonnull(src);
    const char *at = strstr(src, text);
    ck_assert_ptr_nonnull(at);
    int line = 1;
    for (const char *p = src; p < at; p++)
        line += *p == '\n';
    free(src);
    return line;
}

/* torch_train.py 1 under OPPROF_STACKS=4, run once a suite run in shared
 * (as run_both) for the tests that read its code stacks: its path. */
static char *stacks_trace(void)
{
    char *trace = tu_path(shared, "stacks.trace"), *done = tu_path(shared, "stacks.done");
    if (access(done, F_OK) != 0) {
        profiled(trace, (char *[]){"OPPROF_STACKS=4", NULL}, NULL, NULL,
                 (char *)script("torch_train.py"), "1", NULL);
        close(open(done, O_CREAT | O_WRONLY, 0600));
    }
    free(done);
    return trace;
}

/* OPPROF_STACKS: a torch op's code stack holds the Python frames that
 * called it (torch's with_stack names), outside its native ones. */
START_TEST(torch_python_stacks)
{
    if (!have_torch("torch_python_stacks"))
        return;
    char *trace = stacks_trace();
    char fwd[4200], top[4200];
    snprintf(fwd, sizeof fwd, "%s(%d): Net.forward", script("torch_train.py"),
             line_of(script("torch_train.py"), "return self.fc("));
    snprintf(top, sizeof top, "%s(%d): <module>", script("torch_train.py"),
             line_of(script("torch_train.py"), "loss = torch.nn.functional.cross_entropy"));
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    int addmm = 0;
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        for (size_t k = 0; k < t->nevents; k++) {
            const struct opp_event *e = &t->events[k];
            if (strcmp(opp_model_str(m, e->name), "aten::addmm"))
                continue;
            addmm++;
            ck_assert_uint_ne(e->stack, 0);
            const char *fr[32];
            int n = opp_code_frames(m->code, t->proc, e->stack, fr, 32);
            ck_assert_int_gt(n, 6);
            /* innermost first: native frames (at most 4), then Python's;
             * the outermost is the script's own line */
            int f_fwd = -1, f_top = -1, first_py = -1;
            for (int i = 0; i < n; i++) {
                if (!strcmp(fr[i], fwd))
                    f_fwd = i;
                if (!strcmp(fr[i], top))
                    f_top = i;
                if (first_py < 0 && strstr(fr[i], ".py("))
                    first_py = i;
            }
            ck_assert_msg(f_fwd >= 0 && f_top == n - 1 && f_fwd < f_top,
                          "frames of aten::addmm: %s ... %s", fr[0], fr[n - 1]);
            ck_assert_int_le(first_py, 4);
            for (int i = 0; i < n; i++)
                ck_assert_msg(!strstr(fr[i], "_opprof_torch") && !strstr(fr[i], "on_start"),
                              "opprof's own frame in the stack: %s", fr[i]);
        }
    }
    ck_assert_int_eq(addmm, 1);
    /* group_by_stack_n: the innermost Python frames, as torch groups */
    struct opp_agg_opts o = {.group_by_stack = 1, .match = NULL};
    struct opp_agg a;
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    int rows = 0;
    for (size_t i = 0; i < a.nrows; i++)
        if (!strcmp(a.rows[i].key, "aten::addmm")) {
            rows++;
            const char *st = a.rows[i].stack_str, *tail = "): Linear.forward";
            ck_assert_msg(st && strstr(st, "linear.py(") && strlen(st) > strlen(tail) &&
                              !strcmp(st + strlen(st) - strlen(tail), tail),
                          "aten::addmm grouped under %s", st ? st : "(none)");
        }
    ck_assert_int_eq(rows, 1);
    /* the report keys each call in its one pass as the loaded model does */
    char *csv = tu_path(dir, "stack.csv"), *loaded, *got;
    ck_assert_int_eq(tu_code(tu_run((char *[]){(char *)tu_tool("opprof"), "report", trace,
                                               "--group-by-stack", "1", "-f", "csv", NULL},
                                    NULL, csv, NULL)),
                     0);
    const struct opp_out_opts oo = {.group_by_stack = 1};
    CAPTURE(loaded, opp_out_csv(f, &a, &oo));
    got = tu_slurp(csv);
    ck_assert_ptr_nonnull(strstr(got, "aten::addmm,"));
    ck_assert_str_eq(got, loaded);
    free(loaded), free(got), free(csv);
    opp_agg_free(&a);
    opp_model_free(m);

    /* the Chrome trace's python_function slices: the forward's line inside
     * the script's, on the ops' thread */
    char *json = tu_path(dir, "t.json");
    ck_assert_int_eq(tu_code(tu_run((char *[]){(char *)tu_tool("opprof"), "export", "chrome",
                                              trace, "-o", json, NULL},
                                    NULL, NULL, NULL)),
                     0);
    char *j = tu_slurp(json), want[4300];
    snprintf(want, sizeof want, "\"cat\": \"python_function\", \"name\": \"%s\"", fwd);
    const char *in = strstr(j, want);
    ck_assert_msg(in != NULL, "no python_function slice %s", fwd);
    double ts_in = atof(strstr(in, "\"ts\": ") + 6), dur_in = atof(strstr(in, "\"dur\": ") + 7);
    snprintf(want, sizeof want, "\"cat\": \"python_function\", \"name\": \"%s\"", top);
    const char *out = strstr(j, want);
    ck_assert_msg(out != NULL, "no python_function slice %s", top);
    double ts_out = atof(strstr(out, "\"ts\": ") + 6), dur_out = atof(strstr(out, "\"dur\": ") + 7);
    ck_assert(ts_out <= ts_in && ts_in + dur_in <= ts_out + dur_out);
    ck_assert_int_eq(tu_occurrences(j, "_opprof_torch"), 0);
    free(j);
    free(json);
    free(trace);
}
END_TEST

/* OPPROF_STACKS: an op's native frames begin where it was called, none
 * of torch's RecordFunction machinery (runStartCallbacks, the dispatcher's
 * slow path, the autograd node's call) or of ours: every aten op's
 * innermost frame is its entry (at::_ops::NAME::call, called by whoever
 * called the op), an autograd node's the engine's that ran it, and
 * torch.flatten in Net.forward is called from torch's Python binding. */
START_TEST(torch_stacks_begin_at_caller)
{
    if (!have_torch("torch_stacks_begin_at_caller"))
        return;
    char *trace = stacks_trace();
    char fwd[4200];
    snprintf(fwd, sizeof fwd, "%s(%d): Net.forward", script("torch_train.py"),
             line_of(script("torch_train.py"), "torch.flatten(x, 1)"));
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    int aten = 0, evaluate = 0, flatten = 0, stacks = 0;
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        for (size_t k = 0; k < t->nevents; k++) {
            const struct opp_event *e = &t->events[k];
            const char *name = opp_model_str(m, e->name), *fr[32];
            int n = e->stack ? opp_code_frames(m->code, t->proc, e->stack, fr, 32) : 0;
            if (!n) { /* every op has one */
                ck_assert_msg(strncmp(name, "aten::", 6) && strncmp(name, "autograd::", 10),
                              "%s has no stack", name);
                continue;
            }
            stacks++;
            for (int i = 0; i < n; i++)
                ck_assert_msg(!strstr(fr[i], "RecordFunction") && !strstr(fr[i], "libopprof") &&
                                  !strstr(fr[i], "on_start") && !strstr(fr[i], "_opprof_torch"),
                              "%s: frame %d is %s", name, i, fr[i]);
            if (!strncmp(name, "aten::", 6)) {
                aten++;
                ck_assert_msg(!strncmp(fr[0], "at::_ops::", 10) && strstr(fr[0], "::call("),
                              "%s begins at %s", name, fr[0]);
            }
            if (!strncmp(name, "autograd::engine::evaluate_function: ", 37)) {
                evaluate++;
                ck_assert_msg(!strncmp(fr[0], "torch::autograd::Engine::thread_main(", 37),
                              "%s begins at %s", name, fr[0]);
            }
            if (!strcmp(name, "aten::flatten")) {
                flatten++;
                ck_assert_str_eq(fr[0], "at::_ops::flatten_using_ints::call(at::Tensor const&, "
                                        "long, long)");
                ck_assert_msg(!strncmp(fr[1], "libtorch_python.so", 18), "then %s", fr[1]);
                int py = 0;
                while (py < n && !strstr(fr[py], ".py("))
                    py++;
                ck_assert_int_eq(py, 4); /* OPPROF_STACKS native frames, then Python's */
                ck_assert_str_eq(fr[py], fwd);
            }
        }
    }
    /* one iteration: 10 nodes, and AccumulateGrad for each of 6 parameters */
    ck_assert_int_gt(aten, 100);
    ck_assert_int_eq(evaluate, 16);
    ck_assert_int_eq(flatten, 1);
    ck_assert_int_gt(stacks, aten + evaluate);
    opp_model_free(m);
    free(trace);
}
END_TEST

/* path (a file of the test's) holds text. */
static void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* Whether a field of folded stacks is a Python frame: FILE(LINE):_FUNC. */
static int python_frame(const char *f)
{
    for (const char *p = strchr(f, '('); p; p = strchr(p + 1, '(')) {
        size_t digits = strspn(p + 1, "0123456789");
        if (digits && !strncmp(p + 1 + digits, "):_", 3))
            return 1;
    }
    return 0;
}

/* OPPROF_STACKS: Python frames whose file or function is not ASCII are
 * named in UTF-8, whatever the str's kind (1, 2 or 4 bytes a character:
 * josé, λ, U+20000), and a path's bytes that are not UTF-8 (which Python
 * holds as surrogateescape's surrogates) are those bytes again: `opprof
 * export stacks --frames code` shows each op's Python frames as they are
 * (the byte 0xff as U+FFFD, as it shows any). */
START_TEST(torch_python_stacks_utf8)
{
    if (!have_torch("torch_python_stacks_utf8"))
        return;
    char *jose = tu_path(dir, "jos\xc3\xa9"), *raw = tu_path(dir, "raw\xff");
    ck_assert_int_eq(mkdir(jose, 0700), 0);
    ck_assert_int_eq(mkdir(raw, 0700), 0);
    char *py = tu_path(jose, "tr.py"), *helper = tu_path(raw, "helper.py");
    put_file(py, "import sys, torch\n"
                 "sys.path.insert(0, sys.argv[1])\n"
                 "import helper\n"
                 "x = torch.ones(2)\n"
                 "def f\xc3\xbc_nc():\n"
                 "    return list(x + i for i in range(1))\n"
                 "def \xce\xbb_op():\n"
                 "    return x - 1\n"
                 "def \xf0\xa0\x80\x80_op():\n"
                 "    return x / 2\n"
                 "def func_ascii():\n"
                 "    return x * 2\n"
                 "f\xc3\xbc_nc()\n"
                 "\xce\xbb_op()\n"
                 "\xf0\xa0\x80\x80_op()\n"
                 "func_ascii()\n"
                 "helper.run(x)\n");
    put_file(helper, "def run(x):\n"
                     "    return x.neg()\n");
    char *trace = tu_path(dir, "t.trace"), *out = tu_path(dir, "stacks.txt");
    profiled(trace, (char *[]){"OPPROF_STACKS=2", NULL}, NULL, NULL, py, raw, NULL);
    ck_assert_int_eq(tu_code(tu_run((char *[]){(char *)tu_tool("opprof"), "export", "stacks", trace,
                                               "--frames", "code", "-o", out, NULL},
                                    NULL, NULL, NULL)),
                     0);
    /* the Python frames and the op of each line of the ops the script
     * calls itself (the native frames between them left out) */
    char *text = tu_slurp(out), *save = NULL, got[8192] = "";
    ck_assert_ptr_nonnull(text);
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        *strrchr(line, ' ') = 0; /* the count */
        const char *op = strrchr(line, ';') + 1;
        if (strcmp(op, "aten::add") && strcmp(op, "aten::sub") && strcmp(op, "aten::div") &&
            strcmp(op, "aten::mul") && strcmp(op, "aten::neg"))
            continue;
        char *in = NULL;
        for (char *f = strtok_r(line, ";", &in); f; f = strtok_r(NULL, ";", &in))
            if (python_frame(f) || f == op) {
                strncat(got, f, sizeof got - strlen(got) - 1);
                strncat(got, f == op ? "\n" : ";", sizeof got - strlen(got) - 1);
            }
    }
    char want[8192];
    const char *d = dir;
    snprintf(want, sizeof want,
             "%s/jos\xc3\xa9/tr.py(13):_<module>;%s/jos\xc3\xa9/tr.py(6):_f\xc3\xbc_nc;"
             "%s/jos\xc3\xa9/tr.py(6):_f\xc3\xbc_nc.<locals>.<genexpr>;aten::add\n"
             "%s/jos\xc3\xa9/tr.py(14):_<module>;%s/jos\xc3\xa9/tr.py(8):_\xce\xbb_op;aten::sub\n"
             "%s/jos\xc3\xa9/tr.py(15):_<module>;"
             "%s/jos\xc3\xa9/tr.py(10):_\xf0\xa0\x80\x80_op;aten::div\n"
             "%s/jos\xc3\xa9/tr.py(16):_<module>;%s/jos\xc3\xa9/tr.py(12):_func_ascii;aten::mul\n"
             "%s/jos\xc3\xa9/tr.py(17):_<module>;%s/raw\xef\xbf\xbd/helper.py(2):_run;aten::neg\n",
             d, d, d, d, d, d, d, d, d, d, d);
    ck_assert_str_eq(got, want);
    free(text), free(out), free(trace), free(py), free(helper), free(jose), free(raw);
}
END_TEST

/* DataLoader workers (fork): the program runs as without opprof, and the
 * workers' collate ops are recorded in their own processes; they leave by
 * os._exit(0) (no goodbye), which their parent's reaping tells: they
 * exited, status 0, and nothing is said to be missing. */
START_TEST(torch_dataloader_workers)
{
    if (!have_torch("torch_dataloader_workers"))
        return;
    char *trace = tu_path(dir, "t.trace"), *o1 = tu_path(dir, "o1"), *o2 = tu_path(dir, "o2");
    char *code = "import torch\n"
                 "from torch.utils.data import DataLoader, TensorDataset\n"
                 "torch.manual_seed(0)\n"
                 "ds = TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))\n"
                 "net = torch.nn.Linear(8, 2)\n"
                 "tot = 0\n"
                 "for x, y in DataLoader(ds, batch_size=16, num_workers=2):\n"
                 "    tot += int(net(x).argmax(1).eq(y).sum())\n"
                 "print('batches correct', tot)\n";
    ck_assert_int_eq(tu_code(tu_run((char *[]){PY, "-c", code, NULL}, NULL, o1, NULL)), 0);
    profiled(trace, NULL, o2, NULL, "-c", code, NULL);
    char *s1 = tu_slurp(o1), *s2 = tu_slurp(o2);
    ck_assert_str_eq(s1, s2);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->nprocs, 3); /* the script and its two workers */
    uint64_t in_workers = 0, in_main = 0;
    for (size_t ti = 0; ti < m->nthreads; ti++)
        for (size_t k = 0; k < m->threads[ti].nevents; k++)
            if (!strcmp(opp_model_str(m, m->threads[ti].events[k].name), "aten::addmm"))
                in_main += m->threads[ti].proc == 0;
    for (size_t ti = 0; ti < m->nthreads; ti++)
        for (size_t k = 0; k < m->threads[ti].nevents; k++)
            if (!strcmp(opp_model_str(m, m->threads[ti].events[k].name), "aten::stack"))
                in_workers += m->threads[ti].proc != 0;
    ck_assert_uint_eq(in_main, 4);    /* one forward per batch */
    ck_assert_uint_eq(in_workers, 8); /* collate: inputs and labels of each batch */
    opp_model_free(m);
    char *out = NULL, *err = NULL;
    char *argv[] = {"report", trace, "-f", "json", NULL};
    ck_assert_int_eq(tu_call(cmd_report, argv, dir, &out, &err), 0);
    ck_assert_str_eq(err, "");
    /* the script (its status as opprof run saw it) and its two workers */
    ck_assert_int_eq(tu_occurrences(out, "\"end\": \"exited\", \"exit_status\": 0,"), 3);
    ck_assert_int_eq(tu_occurrences(out, "\"end\": \"cut\""), 0);
    free(out);
    free(err);
    free(s1);
    free(s2);
    free(trace);
    free(o1);
    free(o2);
}
END_TEST

/* calls(a, name, ...) of the rows of an aggregate of m under o. */
static uint64_t calls_in(const struct opp_model *m, const struct opp_agg_opts *o, const char *name)
{
    struct opp_agg a;
    ck_assert_int_eq(tu_aggregate(m, o, &a), 0);
    uint64_t n = calls(&a, name, NULL, NULL);
    opp_agg_free(&a);
    return n;
}

/* tests/py/torch_loader.py under torch.profiler (facts) and under `opprof
 * run` (its trace's path to trace): the same output. Run once a suite run,
 * in shared, as run_both. */
static struct opp_model *run_loader(char *trace, size_t cap)
{
    char *tfile = tu_path(shared, "loader.txt"), *t = tu_path(shared, "loader.trace");
    char *done = tu_path(shared, "loader.done");
    if (access(done, F_OK) != 0) {
        torch_and_opprof("torch_loader.py", tfile, t, NULL, NULL);
        close(open(done, O_CREAT | O_WRONLY, 0600));
    }
    nfacts = read_facts(tfile, facts, sizeof facts / sizeof *facts);
    struct opp_model *m = tu_load(t);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->nprocs, 3);
    snprintf(trace, cap, "%s", t);
    free(tfile), free(t), free(done);
    return m;
}

/* A DataLoader's two workers (tests/py/torch_loader.py): the table adds
 * the three processes up and says so; --pid MAIN counts what torch.profiler
 * in the main process counts, name by name, and the three --pid tables add
 * up to the default one; --by-process lists the three; --step takes the
 * main process's 4 batches, not the workers' 64 LayerNorm forwards too. */
START_TEST(torch_workers_added_up)
{
    if (!have_torch("torch_workers_added_up"))
        return;
    char trace[4096];
    struct opp_model *m = run_loader(trace, sizeof trace);
    uint32_t pids[3] = {m->procs[0].pid, m->procs[1].pid, m->procs[2].pid};
    struct opp_agg_opts all = {0}, one[3];
    for (int p = 0; p < 3; p++)
        one[p] = (struct opp_agg_opts){.filter_pid = 1, .pid = pids[p]};
    size_t names = 0;
    int tolerated = 0;
    char differ[512] = "";
    for (size_t i = 0; i < nfacts; i++) {
        if (strcmp(facts[i].what, "count") || facts[i].name[0] == '[')
            continue;
        names++;
        uint64_t main = calls_in(m, &one[0], facts[i].name);
        /* exact but for torch's own folding on tied timestamps (counts_agree),
         * at most once an iteration (4 batches): its aten::sum is 4 to 6
         * from run to run */
        ck_assert_msg(counts_agree(facts[i].n, main, 4),
                      "%s: torch.profiler %ld, opprof --pid %llu", facts[i].name, facts[i].n,
                      (unsigned long long)main);
        if (main != (uint64_t)facts[i].n) {
            tolerated++;
            size_t len = strlen(differ);
            snprintf(differ + len, sizeof differ - len, " %s %ld/%llu", facts[i].name, facts[i].n,
                     (unsigned long long)main);
        }
        if (!strcmp(facts[i].name, "aten::as_strided")) /* the issue's example: exactly */
            ck_assert_uint_eq(main, (uint64_t)facts[i].n);
        ck_assert_uint_eq(calls_in(m, &all, facts[i].name),
                          main + calls_in(m, &one[1], facts[i].name) +
                              calls_in(m, &one[2], facts[i].name));
    }
    /* README's two kinds of torch's own miscount: an op calling its own
     * name (aten::sum) and two of a name within one microsecond
     * (aten::empty); a loaded machine made both in one run */
    ck_assert_msg(tolerated <= 2, "names counted otherwise (torch.profiler/opprof):%s", differ);
    ck_assert_uint_gt(names, 10);
    ck_assert_uint_eq(calls_in(m, &one[0], "aten::linear"), 4);
    ck_assert_uint_eq(calls_in(m, &all, "aten::layer_norm"), 64); /* the workers' */
    ck_assert_uint_gt(calls_in(m, &all, "aten::as_strided"),
                      calls_in(m, &one[0], "aten::as_strided"));

    char *out, *err, pid[16];
    char *table[] = {"report", trace, "-n", "3", NULL};
    ck_assert_int_eq(tu_call(cmd_report, table, dir, &out, &err), 0);
    const char *note = "3 processes added up (the whole job's cost): --pid PID for one, "
                       "--by-process for each\n---";
    ck_assert_msg(!strncmp(out, note, strlen(note)), "%s", out);
    free(out), free(err);
    snprintf(pid, sizeof pid, "%u", pids[0]);
    char *table1[] = {"report", trace, "--pid", pid, "-f", "json", NULL};
    ck_assert_int_eq(tu_call(cmd_report, table1, dir, &out, &err), 0);
    ck_assert_msg(strstr(out, "\"rows_processes\": 1, \"rows_note\": null,"), "%s", out);
    free(out), free(err);
    char *by[] = {"report", trace, "--by-process", "-f", "json", NULL};
    ck_assert_int_eq(tu_call(cmd_report, by, dir, &out, &err), 0);
    struct opp_agg a;
    for (int p = 0; p < 3; p++) {
        ck_assert_int_eq(tu_aggregate(m, &one[p], &a), 0);
        char want[96];
        snprintf(want, sizeof want, "{\"pid\": %u, \"cmdline\": [\"%s\", ", pids[p], PY);
        const char *at = strstr(out, want);
        ck_assert_msg(at, "no %s in %s", want, out);
        snprintf(want, sizeof want, "\"calls\": %llu, ", (unsigned long long)a.events);
        ck_assert_msg(strstr(at, want) && strstr(at, want) < strchr(at, '}'), "%s: %s", want, at);
        opp_agg_free(&a);
    }
    ck_assert_int_eq(tu_occurrences(out, "\"end\": \"exited with status 0\""), 3);
    free(out), free(err);
    char *step[] = {"report", trace, "--step", NULL};
    ck_assert_int_eq(tu_call(cmd_report, step, dir, &out, &err), 0);
    char want[200];
    snprintf(want, sizeof want,
             "Steps of pid %u, the first process (--pid PID for another)\n"
             "Steps: inferences (outermost nn.Module forwards: nn.Module: Linear_0) (each call "
             "is a step), 4 steps\n",
             pids[0]);
    ck_assert_msg(!strncmp(out, want, strlen(want)), "%s", out);
    free(out), free(err);
    snprintf(pid, sizeof pid, "%u", pids[1]);
    char *step1[] = {"report", trace, "--step", "--pid", pid, NULL};
    ck_assert_int_eq(tu_call(cmd_report, step1, dir, &out, &err), 0);
    ck_assert_msg(strstr(out, "(each call is a step), 32 steps\n"), "%s", out);
    free(out), free(err);
    opp_model_free(m);
}
END_TEST

/* The batches a DataLoader's workers send (tests/py/torch_loader.py) are
 * shared memory that at::MapAllocator maps in the main process as
 * __next__ receives them, and unmaps when they are dropped: torch.profiler
 * counts them (c10::reportMemoryUsageToProfiler), opprof too. --pid MAIN's
 * CPU Mem, every row, is torch's event tree's. */
START_TEST(torch_worker_batches_memory)
{
    if (!have_torch("torch_worker_batches_memory"))
        return;
    char trace[4096];
    struct opp_model *m = run_loader(trace, sizeof trace);
    struct opp_agg_opts main = {.filter_pid = 1, .pid = m->procs[0].pid};
    struct opp_agg a;
    ck_assert_int_eq(tu_aggregate(m, &main, &a), 0);
    size_t rows, charged;
    check_torch_memory(m, &a, 0, &rows, &charged);
    ck_assert_uint_gt(rows, 20);
    ck_assert_uint_gt(charged, 4);
    /* the four batches of 16 x 8 floats, each mapped in a __next__ */
    int mapped = 0;
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        for (size_t i = 0; t->proc == 0 && t->cpumem && i < t->nevents; i++) {
            uint32_t p = t->events[i].parent;
            mapped += !strcmp(opp_model_str(m, t->events[i].name), "[memory]") &&
                      t->cpumem[i].self == 16 * 8 * 4 && p != OPP_NO_PARENT &&
                      !strcmp(opp_model_str(m, t->events[p].name),
                              "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__");
        }
    }
    ck_assert_int_eq(mapped, 4);
    opp_agg_free(&a);
    opp_model_free(m);
}
END_TEST

/* TorchScript's fork and wait (tests/py/torch_fork.py): each wait finds
 * its forked calls running, so the scripted function goes on, and ends,
 * on an inter-op thread. Its operator is recorded once a call, on the
 * thread it began on, and that thread is left at the depth it was: a call
 * of it inside no other was made at depth 0. The forked calls and their
 * ops are counted as torch.profiler counts them. Its count of the
 * function is 5, or 4 when one call's end came after the next call began
 * (an end on the inter-op thread can come late) and its tree folded the
 * next into it, as it folds an op that is its same-named parent's only
 * child: opprof's table does the same with the same times (the next call
 * then begun inside it, one deeper, and ending after it). */
START_TEST(torch_op_ends_on_another_thread)
{
    if (!have_torch("torch_op_ends_on_another_thread"))
        return;
    char *tfile = tu_path(dir, "facts.txt"), *trace = tu_path(dir, "t.trace");
    char *err = tu_path(dir, "err");
    torch_and_opprof("torch_fork.py", tfile, trace, NULL, err);
    char *said_err = tu_slurp(err), said[4200];
    snprintf(said, sizeof said, "opprof: trace written to %s (", trace);
    ck_assert_msg(!strncmp(said_err, said, strlen(said)) &&
                      strchr(said_err, '\n') == said_err + strlen(said_err) - 1,
                  "opprof said: %s", said_err);
    nfacts = read_facts(tfile, facts, sizeof facts / sizeof *facts);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->nprocs, 1);
    unsigned main_tid = m->procs[0].pid;
    ck_assert_uint_eq(tu_count(m, "par", 0, main_tid, 0), 5);
    ck_assert_uint_eq(tu_count(m, "par", 0, 0, -1), 5);
    struct opp_agg_opts o = {0};
    struct opp_agg a;
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    const struct fact *f = fact_of("count", "par");
    ck_assert_ptr_nonnull(f);
    ck_assert_msg(f->n == 5 || f->n == 4, "torch.profiler: par %ld", f->n);
    uint64_t got = calls(&a, "par", NULL, NULL);
    ck_assert_msg(got == 5 || got == 4, "opprof: par %llu", (unsigned long long)got);
    static const char *const names[] = {"<forked function>", "aten::mm"};
    static const long want[] = {15, 240};
    for (int i = 0; i < 2; i++) {
        f = fact_of("count", names[i]);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->n, want[i]);
        ck_assert_msg(calls(&a, names[i], NULL, NULL) == (uint64_t)want[i],
                      "%s: torch.profiler %ld, opprof %llu", names[i], f->n,
                      (unsigned long long)calls(&a, names[i], NULL, NULL));
    }
    ck_assert_uint_eq(tu_count(m, "<forked function>", 0, main_tid, -1), 0);
    opp_agg_free(&a);
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        for (size_t k = 0; t->tid == main_tid && k < t->nevents; k++) {
            const struct opp_event *e = &t->events[k];
            if (opp_kind_base(opp_event_func(m, t, e)->kind) == OPP_OP_MEMORY)
                continue; /* a free between ops: at the depth its thread had */
            /* deeper than its parent's depth only one below a par whose
             * end came late (after e began, before e ended), as torch's
             * tree has it too */
            int late = 0;
            for (size_t j = 0; j < t->nevents && e->parent == OPP_NO_PARENT && e->depth; j++) {
                const struct opp_event *p = &t->events[j];
                late |= j != k && !strcmp(opp_model_str(m, p->name), "par") &&
                        e->depth == p->depth + 1 && p->begin_ns < e->begin_ns &&
                        p->end_ns > e->begin_ns && e->end_ns > p->end_ns;
            }
            ck_assert_msg(e->parent != OPP_NO_PARENT || !e->depth || late,
                          "%s at depth %u, inside none", opp_model_str(m, e->name), e->depth);
        }
    }
    opp_model_free(m);
    free(said_err), free(tfile), free(trace), free(err);
}
END_TEST

/* Where the shim cannot be had (no compiler here), or torch is turned off:
 * one line on stderr at most, the program's output untouched, and the
 * library-level view (sgemm_) without torch's operators. */
START_TEST(torch_cannot_attach)
{
    if (!have_torch("torch_cannot_attach"))
        return;
    char *code = "import torch\n"
                 "torch.manual_seed(0)\n"
                 "x = torch.nn.Linear(64, 32)(torch.ones(8, 64))\n"
                 "print(round(float(x.sum()), 2))\n";
    char *plain = tu_path(dir, "plain");
    ck_assert_int_eq(tu_code(tu_run((char *[]){PY, "-c", code, NULL}, NULL, plain, NULL)), 0);
    char *want = tu_slurp(plain);
    char cache[4200];
    snprintf(cache, sizeof cache, "OPPROF_TORCH_CACHE=%s/empty-cache", dir);
    char *envs[][3] = {{cache, "CXX=/bin/false", NULL}, {"OPPROF_TORCH=0", NULL, NULL}};
    const char *said[] = {
        "opprof: torch operators not recorded: the shim did not build: /bin/false "
        "failed; library calls only\n",
        ""};
    for (int i = 0; i < 2; i++) {
        char *trace = tu_path(dir, "t.trace"), *out = tu_path(dir, "out"),
             *err = tu_path(dir, "err");
        profiled(trace, envs[i], out, err, "-c", code, NULL);
        char *o = tu_slurp(out), *e = tu_slurp(err);
        ck_assert_str_eq(o, want);
        /* that line and the run's own "trace written" line, nothing else */
        ck_assert_msg(tu_count_lines(e, "opprof: ") == 1 + (said[i][0] != 0), "stderr: %s", e);
        ck_assert(!said[i][0] || strstr(e, said[i]));
        struct opp_model *m = tu_load(trace);
        ck_assert_ptr_nonnull(m);
        ck_assert_uint_eq(tu_count(m, "sgemm_", -1, 0, -1), 1);
        ck_assert_uint_eq(tu_count(m, "aten::addmm", -1, 0, -1), 0);
        opp_model_free(m);
        free(o), free(e), free(trace), free(out), free(err);
    }
    free(want);
    free(plain);
}
END_TEST

/* The line of text (lines: the loader's LD_DEBUG=scopes output, each line
 * "PID:\tTEXT") where the loader shows the scope of the object whose path
 * ends in the name that starts with `object`: "object=PATH [0]" followed by
 * " scope N: PATH ..." (own: the object's own scope, itself first, built
 * at its first dlopen), else the first such object line; -1 when none. */
static long scope_line(const char *lines, const char *object, int own)
{
    long n = 0;
    for (const char *l = lines; *l; n++) {
        const char *end = strchr(l, '\n'), *t = strchr(l, '\t');
        if (!end)
            end = l + strlen(l);
        if (t && t < end && !strncmp(t + 1, "object=", 7)) {
            const char *path = t + 8, *sp = strchr(path, ' ');
            size_t len = sp && sp < end ? (size_t)(sp - path) : 0;
            const char *base = path;
            for (const char *q = path; q < path + len; q++)
                if (*q == '/')
                    base = q + 1;
            if (len && !strncmp(base, object, strlen(object))) {
                if (!own)
                    return n;
                const char *next = *end ? end + 1 : end, *nt = strchr(next, '\t');
                const char *s = nt ? strstr(nt, ": ") : NULL;
                if (nt && !strncmp(nt + 1, " scope ", 7) && s && !strncmp(s + 2, path, len) &&
                    s[2 + len] == ' ')
                    return n;
            }
        }
        l = *end ? end + 1 : end;
    }
    return -1;
}

/* The first operator that calls BLAS is not charged opprof's lookup of
 * the real sgemm_: torch's libtorch_cpu, loaded as a dependency, gets its
 * own scope at its first dlopen (3 to 6 ms, in which the loader adds it to
 * each of its dependencies), which opprof's lookup for that caller does.
 * Done when opprof attaches to torch: before the script's next import
 * (_sqlite3, a marker in the loader's log), not in its first aten::mm. */
START_TEST(torch_blas_lookup_before_first_op)
{
    if (!have_torch("torch_blas_lookup_before_first_op"))
        return;
    if (!tu_python_has("_sqlite3")) {
        fprintf(stderr, "SKIP torch_blas_lookup_before_first_op: %s has no _sqlite3\n", PY);
        return;
    }
    char *trace = tu_path(dir, "t.trace"), *logs = tu_path(dir, "ld"), out[4200];
    ck_assert_int_eq(mkdir(logs, 0700), 0);
    snprintf(out, sizeof out, "LD_DEBUG_OUTPUT=%s/scopes", logs);
    char *code = "import torch\n"
                 "import _sqlite3\n"
                 "print(float(torch.mm(torch.ones(2, 3), torch.ones(3, 2)).sum()))\n";
    char *o = tu_path(dir, "out");
    profiled(trace, (char *[]){"LD_DEBUG=scopes", out, NULL}, o, NULL, "-c", code, NULL);
    char *said = tu_slurp(o);
    ck_assert_str_eq(said, "12.0\n");
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(tu_count(m, "aten::mm", -1, 0, -1), 1);
    ck_assert_uint_eq(tu_count(m, "sgemm_", -1, 0, -1), 1);
    opp_model_free(m);
    /* the script's log: the one that shows libtorch_cpu */
    int found = 0;
    DIR *d = opendir(logs);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char *path = tu_path(logs, e->d_name), *text = tu_slurp(path);
        long own = scope_line(text, "libtorch_cpu.so", 1),
             marker = scope_line(text, "_sqlite3.cpython", 0);
        if (marker >= 0) {
            ck_assert_msg(own >= 0 && own < marker,
                          "libtorch_cpu's own scope at line %ld, the import after torch's at %ld",
                          own, marker);
            found++;
        }
        free(text), free(path);
    }
    closedir(d);
    ck_assert_int_eq(found, 1);
    free(said), free(o), free(trace), free(logs);
}
END_TEST

/* The program's own torch.profiler keeps working beside opprof: the same
 * key_averages with and without opprof, and opprof records the ops too. */
START_TEST(torch_profiler_beside_opprof)
{
    if (!have_torch("torch_profiler_beside_opprof"))
        return;
    char *f1 = tu_path(dir, "plain.txt"), *f2 = tu_path(dir, "under.txt"),
         *trace = tu_path(dir, "t.trace");
    ck_assert_int_eq(
        tu_code(tu_run((char *[]){PY, (char *)script("torch_train.py"), "2", "torch", f1, NULL},
                       NULL, NULL, NULL)),
        0);
    profiled(trace, NULL, NULL, NULL, (char *)script("torch_train.py"), "2", "torch", f2, NULL);
    static struct fact a[4096], b[4096];
    size_t na = read_facts(f1, a, 4096), nb = read_facts(f2, b, 4096);
    size_t counts = 0; /* the operators' ("[memory]" comes and goes with timing) */
    int differ = 0;
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    for (size_t i = 0; i < na; i++) {
        if (strcmp(a[i].what, "count") || a[i].name[0] == '[')
            continue;
        int found = 0;
        for (size_t j = 0; j < nb; j++)
            if (!strcmp(b[j].what, "count") && !strcmp(b[j].name, a[i].name)) {
                ck_assert_msg(counts_agree(a[i].n, (uint64_t)b[j].n, 2),
                              "%s: %ld without opprof, %ld with", a[i].name, a[i].n, b[j].n);
                differ += a[i].n != b[j].n;
                found = 1;
            }
        ck_assert_msg(found, "%s: gone from torch.profiler's table under opprof", a[i].name);
        counts++;
    }
    ck_assert_uint_gt(counts, 60);
    ck_assert_int_le(differ, 3);
    ck_assert_uint_eq(tu_count(m, "Optimizer.step#Adam.step", -1, 0, -1), 2);
    opp_model_free(m);
    free(f1), free(f2), free(trace);
}
END_TEST

/* The program's own torch.profiler with_stack=True (its Python tracer
 * takes nn.Module.__call__.__code__, which opprof's __call__ hands on from
 * torch's) works beside opprof: the same output, key_averages and module
 * calls as without opprof, and opprof's layers are the module calls
 * torch's tracer saw (tests/py/torch_stack.py). */
START_TEST(torch_profiler_with_stack_beside_opprof)
{
    if (!have_torch("torch_profiler_with_stack_beside_opprof"))
        return;
    char *f1 = tu_path(dir, "plain.txt"), *f2 = tu_path(dir, "under.txt");
    char *o1 = tu_path(dir, "o1"), *o2 = tu_path(dir, "o2"), *trace = tu_path(dir, "t.trace");
    ck_assert_int_eq(
        tu_code(tu_run((char *[]){PY, (char *)script("torch_stack.py"), f1, NULL}, NULL, o1, NULL)),
        0);
    profiled(trace, NULL, o2, NULL, (char *)script("torch_stack.py"), f2, NULL);
    char *s1 = tu_slurp(o1), *s2 = tu_slurp(o2);
    ck_assert_str_eq(s1, s2);
    static struct fact a[256], b[256];
    size_t na = read_facts(f1, a, 256), nb = read_facts(f2, b, 256);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    size_t ops = 0, modules = 0;
    int differ = 0;
    for (size_t i = 0; i < na; i++) {
        long under = -1;
        for (size_t j = 0; j < nb; j++)
            if (!strcmp(b[j].name, a[i].name))
                under = b[j].n;
        ck_assert_msg(under >= 0, "%s: gone from torch.profiler's output under opprof", a[i].name);
        if (is_layer(a[i].name)) { /* torch's module calls: exactly, and opprof's layers */
            ck_assert_msg(under == a[i].n, "%s: %ld without opprof, %ld with", a[i].name, a[i].n,
                          under);
            ck_assert_msg(tu_count(m, a[i].name, -1, 0, -1) == (uint64_t)a[i].n,
                          "%s: torch.profiler %ld, opprof %llu", a[i].name, a[i].n,
                          (unsigned long long)tu_count(m, a[i].name, -1, 0, -1));
            modules++;
        } else {
            ck_assert_msg(counts_agree(a[i].n, (uint64_t)under, 3),
                          "%s: %ld without opprof, %ld with", a[i].name, a[i].n, under);
            differ += under != a[i].n;
            ops++;
        }
    }
    ck_assert_uint_eq(modules, 3); /* Net, its Linear and its ReLU */
    ck_assert_uint_gt(ops, 5);
    ck_assert_int_le(differ, 1);
    ck_assert_uint_eq(na, nb);
    opp_model_free(m);
    free(s1), free(s2), free(f1), free(f2), free(o1), free(o2), free(trace);
}
END_TEST

/* OPPROF_SCHEDULE over the optimizer's steps (OPPROF_STEP=torch): wait 1,
 * active 1 records the second and fourth steps' iterations, each a
 * ProfilerStep#N holding one forward. */
START_TEST(torch_schedule_on_optimizer_steps)
{
    if (!have_torch("torch_schedule_on_optimizer_steps"))
        return;
    char *trace = tu_path(dir, "t.trace");
    profiled(trace,
             (char *[]){"OPPROF_SCHEDULE=wait=1,active=1,repeat=2", "OPPROF_STEP=torch", NULL},
             NULL, NULL, (char *)script("torch_train.py"), "5", NULL);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    /* the first mark (the end of the first optimizer step) starts step 0;
     * steps 1 and 3 (iterations 3 and 5) are active */
    ck_assert_uint_eq(tu_count(m, "ProfilerStep#1", -1, 0, -1), 1);
    ck_assert_uint_eq(tu_count(m, "ProfilerStep#3", -1, 0, -1), 1);
    ck_assert_uint_eq(tu_count(m, "ProfilerStep#0", -1, 0, -1), 0);
    ck_assert_uint_eq(tu_count(m, "ProfilerStep#2", -1, 0, -1), 0);
    ck_assert_uint_eq(tu_count(m, "nn.Module: Net_0", -1, 0, -1), 2);
    ck_assert_uint_eq(tu_count(m, "Optimizer.step#Adam.step", -1, 0, -1), 2);
    ck_assert_uint_eq(tu_count(m, "aten::addmm", -1, 0, -1), 2);
    struct opp_agg_opts all = {0};
    struct opp_steps st;
    char what[300];
    ck_assert_int_eq(tu_steps_default(m, &all, &st, what, sizeof what), 0);
    ck_assert_str_eq(what, "ProfilerStep#N");
    ck_assert_uint_eq(st.n, 2);
    opp_steps_free(&st);
    opp_model_free(m);
    free(trace);
}
END_TEST

/* A schedule's steps are one row, as key_averages keys them all
 * (ProfilerStep*), counted as often as torch.profiler counts them on the
 * same schedule (tests/py/torch_schedule.py: wait 1, warmup 1, active 2),
 * with the optimizer's steps in them; no row per ProfilerStep#N. */
START_TEST(torch_schedule_steps_one_row)
{
    if (!have_torch("torch_schedule_steps_one_row"))
        return;
    char *tfile = tu_path(dir, "torch.txt"), *trace = tu_path(dir, "t.trace");
    torch_and_opprof(
        "torch_schedule.py", tfile, trace,
        (char *[]){"OPPROF_SCHEDULE=wait=1,warmup=1,active=2,repeat=1", "OPPROF_STEP=torch", NULL},
        NULL);
    nfacts = read_facts(tfile, facts, sizeof facts / sizeof *facts);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    struct opp_agg_opts o = {0};
    struct opp_agg a;
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    const char *names[] = {"ProfilerStep*", "Optimizer.step#SGD.step",
                           "Optimizer.zero_grad#SGD.zero_grad"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const struct fact *f = fact_of("count", names[i]);
        ck_assert_msg(f, "torch.profiler has no %s", names[i]);
        ck_assert_int_eq(f->n, 2);
        ck_assert_msg(calls(&a, names[i], NULL, NULL) == (uint64_t)f->n, "%s: opprof %llu",
                      names[i], (unsigned long long)calls(&a, names[i], NULL, NULL));
    }
    for (size_t r = 0; r < a.nrows; r++)
        ck_assert_msg(strncmp(a.rows[r].key, "ProfilerStep#", 13), "a row %s", a.rows[r].key);
    opp_agg_free(&a);
    opp_model_free(m);
    free(tfile), free(trace);
}
END_TEST

static void touch(const char *name)
{
    char *p = tu_path(dir, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    free(p);
}

/* `opprof ctl stop` turns torch's callbacks off (the first op after it
 * sees the pause); the first allocation after `ctl start` turns them on
 * again, so the op it happens in is the one not recorded. */
START_TEST(torch_ctl_stop_start)
{
    if (!have_torch("torch_ctl_stop_start"))
        return;
    char *trace = tu_path(dir, "t.trace"), *p1 = tu_path(dir, "p1"), *p2 = tu_path(dir, "p2");
    int pid = tu_spawn((char *[]){(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", PY,
                                  (char *)script("torch_phases.py"), dir, NULL},
                       NULL, NULL, NULL);
    ck_assert_int_gt(pid, 0);
    ck_assert_int_eq(tu_wait_file(p1, 60000), 0);
    char sock[4200]; /* this run's: other collectors may be running */
    ck_assert_int_gt(tu_collector_of(trace, sock, sizeof sock), 0);
    char *ctl[] = {(char *)tu_tool("opprof"), "ctl", "stop", "--socket", sock, NULL};
    ck_assert_int_eq(tu_code(tu_run(ctl, NULL, NULL, NULL)), 0);
    touch("go2");
    ck_assert_int_eq(tu_wait_file(p2, 60000), 0);
    ctl[2] = "start";
    ck_assert_int_eq(tu_code(tu_run(ctl, NULL, NULL, NULL)), 0);
    touch("go3");
    ck_assert_int_eq(tu_code(tu_wait(pid)), 0);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(tu_count(m, "aten::mul", -1, 0, -1), 0);
    ck_assert_uint_eq(tu_count(m, "aten::sub", -1, 0, -1), 20);
    ck_assert_uint_eq(tu_count(m, "aten::add", -1, 0, -1), 199);
    opp_model_free(m);
    free(trace), free(p1), free(p2);
}
END_TEST

/* What a program may do around torch: ask where it is before importing
 * it (transformers does), and raise out of forwards it catches (torch 1.13
 * runs no post hook then). Every op and layer is still counted, and the
 * open ranges do not pile up. Before torch 2 the layers come from a
 * wrapped nn.Module.__call__: no global module hook sends every module
 * call down torch's slow path, and the wrapper read from the class and
 * put back (torch.fx's tracer does) still binds to the module. */
START_TEST(torch_python_edges)
{
    if (!have_torch("torch_python_edges"))
        return;
    char *trace = tu_path(dir, "t.trace");
    char *code = "import importlib.util\n"
                 "assert importlib.util.find_spec('torch') is not None\n"
                 "import torch\n"
                 "class Bad(torch.nn.Module):\n"
                 "    def forward(self, x):\n"
                 "        raise ValueError('no')\n"
                 "class Net(torch.nn.Module):\n"
                 "    def __init__(self):\n"
                 "        super().__init__()\n"
                 "        self.lin, self.bad = torch.nn.Linear(4, 4), Bad()\n"
                 "    def forward(self, x, fail):\n"
                 "        y = self.lin(x)\n"
                 "        if fail:\n"
                 "            self.bad(y)\n"
                 "        return y\n"
                 "net, x = Net(), torch.ones(2, 4)\n"
                 "from torch.nn.modules import module as tm\n"
                 "assert int(torch.__version__.split('.')[0]) >= 2 or not (\n"
                 "    tm._global_forward_pre_hooks or tm._global_forward_hooks)\n"
                 "tm.Module.__call__ = tm.Module.__call__  # torch.fx's tracer does so\n"
                 "for i in range(400):\n"
                 "    try:\n"
                 "        net(x, i % 2 == 0)\n"
                 "    except ValueError:\n"
                 "        pass\n";
    profiled(trace, NULL, NULL, NULL, "-c", code, NULL);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->dropped, 0);
    ck_assert_uint_eq(tu_count(m, "aten::addmm", -1, 0, -1), 400);
    ck_assert_uint_eq(tu_count(m, "nn.Module: Net_0", -1, 0, -1), 400);
    ck_assert_uint_eq(tu_count(m, "nn.Module: Linear_0", -1, 0, -1), 400);
    ck_assert_uint_eq(tu_count(m, "nn.Module: Bad_0", -1, 0, -1), 200);
    opp_model_free(m);
    free(trace);
}
END_TEST

/* The trace (loaded; *said: the run's stderr) of `rounds` recursions
 * `depth` record_function("lvl") labels deep, each inside the one before,
 * an add at the bottom. */
static struct opp_model *nested_labels(unsigned depth, unsigned rounds, char **said)
{
    char *trace = tu_path(dir, "t.trace"), *err = tu_path(dir, "err"), code[600];
    snprintf(code, sizeof code,
             "import sys, torch\n"
             "from torch.autograd.profiler import record_function\n"
             "sys.setrecursionlimit(100000)\n"
             "x = torch.ones(2)\n"
             "def f(n):\n"
             "    if n == 0:\n"
             "        return x + 1\n"
             "    with record_function('lvl'):\n"
             "        return f(n - 1)\n"
             "for _ in range(%u):\n"
             "    assert f(%u).tolist() == [2.0, 2.0]\n",
             rounds, depth);
    profiled(trace, NULL, NULL, err, "-c", code, NULL);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->dropped, 0);
    char *text = tu_slurp(err);
    ck_assert_ptr_nonnull(text);
    /* the last line: where the trace went */
    char want[4200];
    snprintf(want, sizeof want, "opprof: trace written to %s (%llu events)\n", trace,
             (unsigned long long)m->events);
    size_t lt = strlen(text), lw = strlen(want);
    ck_assert_msg(lt >= lw && !strcmp(text + lt - lw, want), "%s", text);
    text[lt - lw] = 0;
    *said = text;
    free(err), free(trace);
    return m;
}

/* Operators nested deeper than a thread's stack held at first (128): 300
 * record_function labels, each inside the one before, all recorded, and
 * the add at the bottom inside the innermost; nothing dropped, nothing
 * said but where the trace went. */
START_TEST(torch_deep_nesting)
{
    if (!have_torch("torch_deep_nesting"))
        return;
    char *said;
    struct opp_model *m = nested_labels(300, 1, &said);
    ck_assert_str_eq(said, "");
    free(said);
    ck_assert_uint_eq(tu_count(m, "lvl", -1, 0, 0), 300);
    ck_assert_uint_eq(tu_count(m, "aten::add", -1, 0, 0), 1);
    /* one label at each depth 0..299, each the child of the one above */
    unsigned char at[300] = {0};
    for (size_t k = 0; k < m->nthreads; k++) {
        const struct opp_thread *t = &m->threads[k];
        for (size_t i = 0; i < t->nevents; i++) {
            const struct opp_event *e = &t->events[i];
            const char *name = opp_model_str(m, e->name);
            if (!strcmp(name, "lvl")) {
                ck_assert_uint_lt(e->depth, 300);
                at[e->depth]++;
                ck_assert_uint_eq(e->parent == OPP_NO_PARENT, e->depth == 0);
                if (e->depth)
                    ck_assert_str_eq(opp_model_str(m, t->events[e->parent].name), "lvl");
            } else if (!strcmp(name, "aten::add")) {
                ck_assert_uint_eq(e->depth, 300);
                ck_assert_str_eq(opp_model_str(m, t->events[e->parent].name), "lvl");
            }
        }
    }
    for (unsigned d = 0; d < 300; d++)
        ck_assert_msg(at[d] == 1, "%u labels at depth %u", at[d], d);
    opp_model_free(m);
}
END_TEST

/* Deeper than a thread's stack grows (16384 ops): the ops below it are
 * not recorded, said once in one line; no record is counted as dropped. */
START_TEST(torch_nesting_limit)
{
    if (!have_torch("torch_nesting_limit"))
        return;
    char *said;
    struct opp_model *m = nested_labels(16400, 2, &said);
    ck_assert_str_eq(said, "opprof: torch operators nested deeper than 16384 on a thread are not "
                           "recorded\n");
    free(said);
    ck_assert_uint_eq(tu_count(m, "lvl", -1, 0, 0), 2 * 16384);
    ck_assert_uint_eq(tu_count(m, "aten::add", -1, 0, 0), 0);
    opp_model_free(m);
}
END_TEST

Suite *suite_torch(void)
{
    Suite *s = suite_create("torch");
    TCase *tc = tcase_create("torch");
    tcase_set_timeout(tc, 120);
    tcase_add_unchecked_fixture(tc, suite_setup, suite_teardown);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, torch_ops_match_torch_profiler);
    tcase_add_test(tc, torch_flops_match_torch_profiler);
    tcase_add_test(tc, torch_lean_counts_match_full);
    tcase_add_test(tc, torch_summary_matches_torch_profiler);
    tcase_add_test(tc, torch_module_tree);
    tcase_add_test(tc, torch_shapes_nest_as_torch_profiler);
    tcase_add_test(tc, torch_inference_steps);
    tcase_add_test(tc, torch_modules_after_raw_fork);
    tcase_add_test(tc, torch_python_stacks);
    tcase_add_test(tc, torch_stacks_begin_at_caller);
    tcase_add_test(tc, torch_python_stacks_utf8);
    tcase_add_test(tc, torch_dataloader_workers);
    tcase_add_test(tc, torch_workers_added_up);
    tcase_add_test(tc, torch_worker_batches_memory);
    tcase_add_test(tc, torch_op_ends_on_another_thread);
    tcase_add_test(tc, torch_cannot_attach);
    tcase_add_test(tc, torch_blas_lookup_before_first_op);
    tcase_add_test(tc, torch_profiler_beside_opprof);
    tcase_add_test(tc, torch_profiler_with_stack_beside_opprof);
    tcase_add_test(tc, torch_schedule_on_optimizer_steps);
    tcase_add_test(tc, torch_schedule_steps_one_row);
    tcase_add_test(tc, torch_ctl_stop_start);
    tcase_add_test(tc, torch_python_edges);
    tcase_add_test(tc, torch_deep_nesting);
    tcase_add_test(tc, torch_nesting_limit);
    suite_add_tcase(s, tc);
    return s;
}
