/* `opprof advise`'s tables (its rules, their thresholds), what the rules
 * share, and the run of them all (see advise.h). */
#include "analysis/advise.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/advise_rules.h"
#include "analysis/loader.h"
#include "torch_rules.h"

const struct opp_advise_threshold_desc opp_advise_thresholds[OPP_TH_COUNT] = {
#define OPP_ADVISE_TH_DESC(id, name, value, unit, help) {name, value, unit, help},
    OPP_ADVISE_THRESHOLDS(OPP_ADVISE_TH_DESC)
#undef OPP_ADVISE_TH_DESC
};

/* The rules, in the order they run (ties of time at stake keep it). */
const struct opp_advise_rule opp_advise_rules[] = {
    {"lost_data", "", adv_rule_lost, 0, 0},
    {"input_pipeline", "input_share", adv_rule_input, 1, 0},
    {"outside_ops", "outside_share", adv_rule_outside, 1, 1},
    {"host_sync", "sync_per_step", adv_rule_sync, 0, 0},
    {"fusable_ops", "fuse_per_step, fuse_avg_us", adv_rule_fusable, 0, 0},
    {"tiny_gemms", "tiny_gemm_per_step, tiny_gemm_flops", adv_rule_tiny_gemm, 0, 0},
    {"warmup", "steps_min, warmup_ratio", adv_rule_warmup, 1, 1},
    {"outlier_steps", "steps_min, outlier_ratio", adv_rule_outliers, 1, 1},
    {"gpu_idle", "gpu_idle_share", adv_rule_gpu_idle, 1, 0},
    {"comm_exposed", "comm_exposed_share", adv_rule_comm, 1, 0},
    {"launch_bound", "launch_kernel_us", adv_rule_launch, 0, 0},
    {"cpu_alloc_churn", "cpu_allocs_per_step", adv_rule_cpu_allocs, 1, 1},
    {"cuda_alloc_churn", "cuda_allocs_per_step", adv_rule_cuda_allocs, 1, 1},
    {"memory_growth", "growth_bytes_per_step", adv_rule_growth, 1, 1},
    {"stragglers", "straggler_ratio, straggler_ms", adv_rule_stragglers, 0, 0},
};
const size_t opp_advise_nrules = sizeof opp_advise_rules / sizeof *opp_advise_rules;

int opp_advise_threshold_parse(const char *name, enum opp_advise_threshold *out)
{
    for (int i = 0; i < OPP_TH_COUNT; i++)
        if (!strcmp(name, opp_advise_thresholds[i].name)) {
            *out = (enum opp_advise_threshold)i;
            return 0;
        }
    return -EINVAL;
}

struct opp_finding *adv_add(struct opp_findings *out, const char *rule)
{
    if (opp_loader_grow((void **)&out->f, &out->cap, out->n + 1, sizeof *out->f))
        return NULL;
    struct opp_finding *f = &out->f[out->n];
    memset(f, 0, sizeof *f);
    f->rule = rule;
    f->step = f->step_last = f->rank = f->pid = f->device = f->stream = -1;
    f->share = f->ms_per_step = f->per_step = -1;
    f->order = (uint32_t)out->n++;
    return f;
}

void adv_stake(const struct opp_advise_ctx *c, struct opp_finding *f, uint64_t stake_ns)
{
    f->stake_ns = stake_ns;
    f->ms_per_step = (double)stake_ns / (double)c->n / 1e6;
    f->share = c->wall_ns ? (double)stake_ns / (double)c->wall_ns : -1;
}

const struct opp_row *adv_row(const struct opp_agg *a, const char *key)
{
    for (size_t i = 0; i < a->nrows; i++)
        if (a->rows[i].device_type == OPP_DEVICE_CPU && !strcmp(a->rows[i].key, key))
            return &a->rows[i];
    return NULL;
}

int adv_aggregate(const struct opp_advise_ctx *c, const struct opp_agg_opts *o, struct opp_agg *out)
{
    return c->src->aggregates(c->src->ctx, o, 1, out);
}

int adv_steps_find(const struct opp_advise_ctx *c, const char *name, struct opp_steps *out)
{
    return c->src->steps(c->src->ctx, &c->o, name, out, NULL, 0);
}

int adv_gpu_stats(const struct opp_advise_ctx *c, struct opp_gpu_stats *out)
{
    return c->src->gpu_stats(c->src->ctx, &c->o, out);
}

/* The calls that begin in [begin, end) as c->o selects them, grouped
 * by stack and shape as said. */
static struct opp_agg_opts span_opts(const struct opp_advise_ctx *c, uint64_t begin, uint64_t end,
                                     uint32_t group_by_stack, int group_by_shape)
{
    struct opp_agg_opts o = c->o;
    uint64_t first = c->first_ns;
    o.window = 1;
    o.from_ns = begin > first ? begin - first : 0;
    o.to_ns = end > first ? end - first : 0;
    o.group_by_stack = group_by_stack;
    o.group_by_shape = group_by_shape;
    o.limit = 0;
    return o;
}

int adv_agg_span(const struct opp_advise_ctx *c, uint64_t begin, uint64_t end,
                 uint32_t group_by_stack, int group_by_shape, struct opp_agg *out)
{
    struct opp_agg_opts o = span_opts(c, begin, end, group_by_stack, group_by_shape);
    return adv_aggregate(c, &o, out);
}

int adv_python(const struct opp_advise_ctx *c)
{
    const struct opp_model *m = c->m;
    const struct opp_process *pr = NULL;
    if (c->thread != UINT32_MAX && c->thread < m->nthreads)
        pr = &m->procs[m->threads[c->thread].proc];
    for (size_t p = 0; !pr && p < m->nprocs; p++)
        if ((!c->o.filter_pid || m->procs[p].pid == c->o.pid) &&
            (!c->o.filter_rank || m->procs[p].rank == c->o.rank))
            pr = &m->procs[p];
    const char *exe = pr && pr->exe ? pr->exe : "", *base = strrchr(exe, '/');
    base = base ? base + 1 : exe;
    return !strncmp(base, "python", 6);
}

const char *adv_outside_what(const struct opp_advise_ctx *c)
{
    return adv_python(c) ? "the loop's own Python, or waits opprof does not see"
                         : "the program's own code, or waits opprof does not see";
}

/* A frame of Python's own or of a package (torch's): not the program's. */
static int library_frame(const char *f, size_t len)
{
    static const char *const dirs[] = {"/dist-packages/", "/site-packages/", "/lib/python3"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        if (memmem(f, len, dirs[i], strlen(dirs[i])))
            return 1;
    return 0;
}

/* The innermost frame of stack (outermost first, ';'-joined) that is the
 * program's own, else the innermost, into buf. */
static void program_frame(const char *stack, char *buf, size_t cap)
{
    const char *end = stack + strlen(stack), *inner = NULL;
    size_t inner_len = 0;
    while (end > stack) {
        const char *b = end;
        while (b > stack && b[-1] != ';')
            b--;
        if (!inner)
            inner = b, inner_len = (size_t)(end - b);
        if (!library_frame(b, (size_t)(end - b))) {
            inner = b, inner_len = (size_t)(end - b);
            break;
        }
        end = b > stack ? b - 1 : b;
    }
    snprintf(buf, cap, "%.*s", (int)inner_len, inner ? inner : "");
}

int adv_first_shape(const char *shapes, char *buf, size_t cap)
{
    if (strncmp(shapes, "[[", 2))
        return 0;
    const char *end = strchr(shapes + 1, ']');
    if (!end || (size_t)(end - shapes) >= cap)
        return 0;
    memcpy(buf, shapes + 1, (size_t)(end - shapes));
    buf[end - shapes] = 0;
    return 1;
}

/* Whether row r is one of key's calls on first shape first (NULL: any)
 * with a code stack that names a line. */
static int code_row(const struct opp_row *r, const char *key, const char *first)
{
    char shape[128];
    return r->device_type == OPP_DEVICE_CPU && !strcmp(r->key, key) && r->stack_str &&
           strstr(r->stack_str, "): ") &&
           (!first ||
            (adv_first_shape(r->shapes_str, shape, sizeof shape) && !strcmp(shape, first)));
}

/* The rows by stack are by shape too: a stack's time is its rows' of
 * every shape that counts. */
void adv_code_of(const struct opp_advise_ctx *c, const char *key, const char *first, char *buf,
                 size_t cap)
{
    buf[0] = 0;
    const struct opp_agg *a = &c->stacks;
    const struct opp_row *best = NULL;
    uint64_t best_ns = 0;
    for (size_t i = 0; i < a->nrows; i++) {
        const struct opp_row *r = &a->rows[i];
        if (!code_row(r, key, first))
            continue;
        int seen = 0;
        for (size_t e = 0; e < i && !seen; e++)
            seen = code_row(&a->rows[e], key, first) && !strcmp(a->rows[e].stack_str, r->stack_str);
        if (seen)
            continue;
        uint64_t ns = 0;
        for (size_t e = i; e < a->nrows; e++)
            if (code_row(&a->rows[e], key, first) && !strcmp(a->rows[e].stack_str, r->stack_str))
                ns += a->rows[e].cpu_time_total_ns;
        if (!best || ns > best_ns)
            best = r, best_ns = ns;
    }
    if (best)
        program_frame(best->stack_str, buf, cap);
}

void adv_layer_of(const struct opp_advise_ctx *c, const char *key, char *buf, size_t cap)
{
    const struct opp_ct_node *best = NULL;
    buf[0] = 0;
    for (size_t i = 0; i < c->ct.n; i++) {
        const struct opp_ct_node *n = &c->ct.nodes[i];
        if ((!best || n->total_ns > best->total_ns) && !strcmp(opp_model_str(c->m, n->name), key))
            best = n;
    }
    for (uint32_t p = best ? best->parent : OPP_CT_ROOT; p != OPP_CT_ROOT;
         p = c->ct.nodes[p].parent) {
        const char *name = opp_model_str(c->m, c->ct.nodes[p].name);
        if (opp_module_name(name)) {
            snprintf(buf, cap, "%s", name);
            return;
        }
    }
}

/* Step s's time inside no recorded call (its calls may overlap on
 * several threads: none then). */
static uint64_t outside_calls(const struct opp_step *s)
{
    uint64_t w = adv_wall(s);
    return w > s->cpu_ns ? w - s->cpu_ns : 0;
}

int adv_step_excess(const struct opp_advise_ctx *c, size_t i, size_t ref, char *buf, size_t cap,
                    uint64_t *ns, int *outside)
{
    struct opp_agg a, b;
    buf[0] = 0;
    *ns = 0;
    *outside = 0;
    int rc = adv_agg_span(c, c->steps[i].begin_ns, c->steps[i].end_ns, 0, 0, &a);
    if (rc)
        return rc;
    rc = adv_agg_span(c, c->steps[ref].begin_ns, c->steps[ref].end_ns, 0, 0, &b);
    if (rc) {
        opp_agg_free(&a);
        return rc;
    }
    for (size_t k = 0; k < a.nrows; k++) {
        const struct opp_row *r = &a.rows[k], *s = adv_row(&b, r->key);
        uint64_t base = s ? s->self_cpu_time_total_ns : 0;
        if (!strcmp(r->key, OPP_PROFILER_STEP_ROW) || (c->range && !strcmp(r->key, c->range)))
            continue; /* the step itself: its self time is the time outside the calls */
        if (r->device_type == OPP_DEVICE_CPU && r->self_cpu_time_total_ns > base &&
            r->self_cpu_time_total_ns - base > *ns) {
            *ns = r->self_cpu_time_total_ns - base;
            snprintf(buf, cap, "%s", r->key);
        }
    }
    opp_agg_free(&a);
    opp_agg_free(&b);
    /* a step made long by what no call holds (a sleep, the garbage
     * collector, the loop's Python) is not any operator's doing */
    uint64_t out_i = outside_calls(&c->steps[i]), out_ref = outside_calls(&c->steps[ref]);
    if (out_i > out_ref && out_i - out_ref > *ns) {
        *ns = out_i - out_ref;
        *outside = 1;
        buf[0] = 0;
    }
    return 0;
}

/* The steps of the first thread that has any, in time order; without
 * steps, one: from the trace's first time to the end of the last process
 * the filters select (pid, rank) to end. */
static int find_steps(struct opp_advise_ctx *c, const char *step, struct opp_advice *out)
{
    struct opp_steps st;
    int rc = c->src->steps(c->src->ctx, &c->o, step, &st, out->steps_what, sizeof out->steps_what);
    if (rc)
        return rc;
    if (step) {
        snprintf(out->steps_what, sizeof out->steps_what, "%s", step);
        out->step_found = st.found;
    }
    c->thread = UINT32_MAX;
    if (st.n) {
        c->thread = st.steps[0].thread;
        size_t k = 0;
        while (k < st.n && st.steps[k].thread == c->thread)
            k++;
        c->steps = st.steps;
        c->n = k;
        c->nall = st.n;
        c->real_steps = 1;
        c->range = st.ranges ? opp_model_str(c->m, st.name) : NULL;
        return 0;
    }
    opp_steps_free(&st);
    c->steps = calloc(1, sizeof *c->steps);
    if (!c->steps)
        return -ENOMEM;
    c->n = c->nall = 1;
    uint64_t end = 0, start = UINT64_MAX;
    for (size_t p = 0; p < c->m->nprocs; p++) {
        const struct opp_process *pr = &c->m->procs[p];
        if ((c->o.filter_pid && pr->pid != c->o.pid) || (c->o.filter_rank && pr->rank != c->o.rank))
            continue;
        if (pr->start_ns < start)
            start = pr->start_ns;
        if (pr->end_how && pr->end_ns > end)
            end = pr->end_ns;
    }
    /* a trace of no call has no first time (0): its processes' lives are
     * the run, not the clock's epoch to their end */
    c->steps[0].begin_ns = c->first_ns ? c->first_ns : start != UINT64_MAX ? start : 0;
    c->steps[0].end_ns = end > c->steps[0].begin_ns ? end : c->steps[0].begin_ns;
    snprintf(out->steps_what + strlen(out->steps_what),
             sizeof out->steps_what - strlen(out->steps_what), "; the run taken as one step");
    return 0;
}

/* Whether a call named name is a step of which: a ProfilerStep#N (a
 * summary's one node for them all is named as the table's row), an
 * optimizer's step, an nn.Module forward. */
static int step_named(enum opp_default_steps which, const char *name)
{
    switch (which) {
    case OPP_STEPS_PROFILER:
        return opp_profiler_step(name) || !strcmp(name, OPP_PROFILER_STEP_ROW);
    case OPP_STEPS_TRAINING:
        return opp_optimizer_step_name(name);
    case OPP_STEPS_INFERENCE:
        return opp_module_name(name);
    case OPP_STEPS_NONE:
        break;
    }
    return 0;
}

/* Whether call path i of ct is a step of which in no other of that kind
 * (an optimizer that steps another, a module inside a module). */
static int step_node(const struct opp_advise_ctx *c, const struct opp_calltree *ct,
                     enum opp_default_steps which, size_t i)
{
    if (!step_named(which, opp_model_str(c->m, ct->nodes[i].name)))
        return 0;
    for (uint32_t p = ct->nodes[i].parent; p != OPP_CT_ROOT; p = ct->nodes[p].parent)
        if (step_named(which, opp_model_str(c->m, ct->nodes[p].name)))
            return 0;
    return 1;
}

/* The steps in call paths ct, the program's own as find_steps takes
 * them: their kind, how many, their calls' time and the first's name. */
struct counted {
    enum opp_default_steps which;
    uint64_t n, wall;
    const char *name;
};
static struct counted count_steps(const struct opp_advise_ctx *c, const struct opp_calltree *ct)
{
    struct counted k = {OPP_STEPS_PROFILER, 0, 0, NULL};
    for (; k.which < OPP_STEPS_NONE; k.which++) {
        k.n = k.wall = 0;
        k.name = NULL;
        for (size_t i = 0; i < ct->n; i++)
            if (step_node(c, ct, k.which, i)) {
                k.name = k.name ? k.name : opp_model_str(c->m, ct->nodes[i].name);
                k.n += ct->nodes[i].calls;
                k.wall += ct->nodes[i].total_ns;
            }
        if (k.n)
            break;
    }
    return k;
}

/* A summary trace's steps, counted in the call paths of one process (a
 * full trace's are one thread's; a summary keeps no threads): the first
 * the filters select that has any, its paths asked for alone when the
 * filters select several. 0, or as the source's ask. */
static int counted_steps(struct opp_advise_ctx *c, struct opp_advice *out)
{
    struct counted k = {OPP_STEPS_NONE, 0, 0, NULL};
    size_t selected = 0;
    for (size_t p = 0; p < c->m->nprocs; p++)
        selected += opp_agg_selects(c->m, &c->o, (uint32_t)p, UINT32_MAX);
    if (selected < 2)
        k = count_steps(c, &c->ct);
    for (size_t p = 0; selected >= 2 && p < c->m->nprocs && !k.n; p++) {
        if (!opp_agg_selects(c->m, &c->o, (uint32_t)p, UINT32_MAX))
            continue;
        struct opp_agg_opts one = c->o;
        one.filter_pid = 1;
        one.pid = c->m->procs[p].pid;
        struct opp_calltree ct = {0};
        const struct opp_table_q q = {&one, NULL, &ct};
        int rc = c->src->ask(c->src->ctx, &q, 1);
        if (rc)
            return rc;
        k = count_steps(c, &ct);
        opp_calltree_free(&ct);
    }
    opp_steps_default_what(k.which, k.name, out->steps_what, sizeof out->steps_what);
    if (!k.n)
        snprintf(out->steps_what + strlen(out->steps_what),
                 sizeof out->steps_what - strlen(out->steps_what), "; the run taken as one step");
    c->real_steps = k.n > 0;
    c->n = k.n ? (size_t)k.n : 1;
    c->thread = UINT32_MAX;
    c->wall_ns = 0; /* the rows are the whole run's, not only the steps': no share */
    out->counted = 1;
    out->nsteps = c->real_steps ? c->n : 0;
    out->wall_ns = k.which == OPP_STEPS_PROFILER || k.which == OPP_STEPS_INFERENCE ? k.wall : 0;
    return 0;
}

/* Leading steps of warm-up: at least warmup_ratio times the p50. */
static size_t warmup_steps(const struct opp_advise_ctx *c)
{
    if (!c->real_steps || (double)c->n < adv_th(c, OPP_TH_STEPS_MIN))
        return 0;
    size_t k = 0;
    while (k < c->n / 2 &&
           (double)adv_wall(&c->steps[k]) >= adv_th(c, OPP_TH_WARMUP_RATIO) * (double)c->p50_ns)
        k++;
    return k;
}

/* Steps by process, then begin (each thread's came in time order). */
static int cmp_proc_begin(const void *a, const void *b, void *ctx)
{
    const struct opp_model *m = ctx;
    const struct opp_step *x = a, *y = b;
    uint32_t px = m->threads[x->thread].proc, py = m->threads[y->thread].proc;
    if (px != py)
        return px < py ? -1 : 1;
    return (x->begin_ns > y->begin_ns) - (x->begin_ns < y->begin_ns);
}

/* Every thread's steps as spans since the trace's first time, by process,
 * those that overlap merged (aggregate.h), into o; -ENOMEM. Without real
 * steps, none: the window is the one step. */
static int step_spans(const struct opp_advise_ctx *c, struct opp_agg_opts *o, uint64_t **spans,
                      size_t **at)
{
    *spans = NULL;
    *at = NULL;
    if (!c->real_steps)
        return 0;
    struct opp_step *v = malloc(c->nall * sizeof *v);
    *spans = malloc(2 * c->nall * sizeof **spans);
    *at = calloc(c->m->nprocs + 1, sizeof **at);
    if (!v || !*spans || !*at) {
        free(v), free(*spans), free(*at);
        *spans = NULL, *at = NULL;
        return -ENOMEM;
    }
    memcpy(v, c->steps, c->nall * sizeof *v);
    qsort_r(v, c->nall, sizeof *v, cmp_proc_begin, (void *)c->m);
    size_t k = 0;
    for (size_t i = 0; i < c->nall; i++) {
        uint32_t p = c->m->threads[v[i].thread].proc;
        uint64_t b = v[i].begin_ns > c->first_ns ? v[i].begin_ns - c->first_ns : 0,
                 e = v[i].end_ns > c->first_ns ? v[i].end_ns - c->first_ns : 0;
        if (k > (*at)[p] && b <= (*spans)[2 * k - 1]) { /* its process's last one */
            (*spans)[2 * k - 1] = e > (*spans)[2 * k - 1] ? e : (*spans)[2 * k - 1];
        } else {
            (*spans)[2 * k] = b;
            (*spans)[2 * k + 1] = e;
            k++;
        }
        for (uint32_t q = p + 1; q <= c->m->nprocs; q++)
            (*at)[q] = k; /* the processes after it begin at least here */
    }
    free(v);
    o->spans = *spans;
    o->span_at = *at;
    o->span_procs = (uint32_t)c->m->nprocs;
    return 0;
}

static int cmp_finding(const void *a, const void *b)
{
    const struct opp_finding *x = a, *y = b;
    if (x->lost != y->lost)
        return y->lost - x->lost;
    if (x->stake_ns != y->stake_ns)
        return x->stake_ns < y->stake_ns ? 1 : -1;
    return (x->order > y->order) - (x->order < y->order);
}

/* The steps timed (find_steps) and what the rules share, in one read:
 * the steps' rows (the calls that begin in a step, not between two), by
 * shape and (when a row can show a code line) by stack, and the call
 * paths. */
static int timed_steps(struct opp_advise_ctx *c, const char *step, struct opp_advice *out)
{
    const struct opp_advise_src *src = c->src;
    int rc = find_steps(c, step, out);
    if (rc)
        return rc;
    uint64_t *w = malloc(c->n * sizeof *w);
    if (!w)
        return -ENOMEM;
    for (size_t i = 0; i < c->n; i++)
        c->wall_ns += w[i] = adv_wall(&c->steps[i]);
    struct opp_dist d;
    opp_dist_of(w, c->n, &d);
    free(w);
    c->p50_ns = d.p50;
    c->p99_ns = d.p99;
    c->warm = warmup_steps(c);
    out->nsteps = c->real_steps ? c->n : 0;
    out->p50_ns = c->p50_ns;
    out->p99_ns = c->p99_ns;
    out->wall_ns = c->wall_ns;
    uint64_t begin = c->steps[0].begin_ns, end = c->steps[c->n - 1].end_ns;
    struct opp_agg_opts rows = span_opts(c, begin, end, 0, 0);
    uint64_t *spans;
    size_t *span_at;
    if (step_spans(c, &rows, &spans, &span_at))
        return -ENOMEM;
    struct opp_agg_opts shapes = rows, stacks = rows;
    shapes.group_by_shape = 1;
    stacks.group_by_stack = OPP_STACK_MAX;
    stacks.group_by_shape = 1; /* a finding on one shape names its line */
    const struct opp_table_q q[] = {{&rows, &c->agg, NULL},
                                    {&shapes, &c->shapes, NULL},
                                    {&c->o, NULL, &c->ct},
                                    {&stacks, &c->stacks, NULL}};
    rc = src->ask(src->ctx, q, src->code_lines ? 4 : 3);
    free(spans);
    free(span_at);
    return rc;
}

/* A summary trace's: its rows and call paths, whole (it keeps no call's
 * time to tell a step's calls from others), then the steps counted. */
static int summary_steps(struct opp_advise_ctx *c, struct opp_advice *out)
{
    struct opp_agg_opts shapes = c->o;
    shapes.group_by_shape = 1;
    const struct opp_table_q q[] = {
        {&c->o, &c->agg, NULL}, {&shapes, &c->shapes, NULL}, {&c->o, NULL, &c->ct}};
    int rc = c->src->ask(c->src->ctx, q, 3);
    return rc ? rc : counted_steps(c, out);
}

int opp_advise(const struct opp_model *m, const struct opp_advise_src *src,
               const struct opp_agg_opts *o, const char *step, const double *th,
               struct opp_advice *out)
{
    memset(out, 0, sizeof *out);
    double defaults[OPP_TH_COUNT];
    for (int i = 0; i < OPP_TH_COUNT; i++)
        defaults[i] = opp_advise_thresholds[i].value;
    struct opp_advise_ctx c = {
        .m = m, .src = src, .first_ns = src->first_ns, .o = *o, .th = th ? th : defaults};
    c.o.limit = 0;
    c.o.group_by_shape = 0;
    c.o.group_by_stack = 0;
    int rc = src->summary ? summary_steps(&c, out) : timed_steps(&c, step, out);
    out->pid = c.o.filter_pid ? c.o.pid : 0;
    out->ranked = c.o.filter_rank;
    out->rank = c.o.rank;
    for (size_t i = 0; i < opp_advise_nrules && !rc; i++)
        if (opp_advise_runs(&opp_advise_rules[i], out))
            rc = opp_advise_rules[i].fn(&c, &out->fs);
    opp_calltree_free(&c.ct);
    opp_agg_free(&c.stacks);
    opp_agg_free(&c.shapes);
    opp_agg_free(&c.agg);
    free(c.steps);
    if (rc) {
        opp_advice_free(out);
        return rc;
    }
    if (out->fs.n) /* qsort takes no NULL, even of 0 elements */
        qsort(out->fs.f, out->fs.n, sizeof *out->fs.f, cmp_finding);
    return 0;
}

void opp_advice_free(struct opp_advice *a)
{
    free(a->fs.f);
    memset(&a->fs, 0, sizeof a->fs);
}
