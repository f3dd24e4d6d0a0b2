/* advise's rules on operators: host synchronisation, elementwise operators
 * torch could fuse, tiny matrix products (advise_rules.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/advise_rules.h"

/* Calls that make the host wait for the device (or read a tensor's value
 * into Python). aten::item calls aten::_local_scalar_dense: the pair is
 * one synchronisation, found once (the row of more calls). */
static const char *const sync_calls[] = {
    "aten::item",
    "aten::_local_scalar_dense",
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventSynchronize",
    "cuCtxSynchronize",
    "cuStreamSynchronize",
    "cuEventSynchronize",
};

static const char *sync_try(const char *key)
{
    if (!strncmp(key, "aten::", 6))
        return "keep the value on the device (add losses up as a tensor; call .item() every N "
               "steps or after the loop); .tolist(), .cpu(), print(tensor) and an `if` on a "
               "tensor wait the same way";
    return "remove synchronisations inside the step (time with CUDA events instead); let the "
           "host run ahead of the device";
}

static int sync_finding(const struct opp_advise_ctx *c, struct opp_findings *out, const char *key,
                        uint64_t calls, uint64_t ns, int device_copy)
{
    double per_step = (double)calls / (double)c->n;
    if (per_step < adv_th(c, OPP_TH_SYNC_PER_STEP))
        return 0;
    struct opp_finding *f = adv_add(out, "host_sync");
    if (!f)
        return -ENOMEM;
    if (!device_copy)
        adv_code_of(c, key, NULL, f->code, sizeof f->code);
    adv_stake(c, f, ns);
    f->per_step = per_step;
    f->per_step_unit = "calls";
    snprintf(f->op, sizeof f->op, "%s", key);
    adv_layer_of(c, key, f->layer, sizeof f->layer);
    snprintf(f->what, sizeof f->what, "Host synchronisation inside the step: %s, %.1f a step", key,
             per_step);
    snprintf(f->evidence, sizeof f->evidence, "%" PRIu64 " call%s in %zu step%s, %.3f ms a step %s",
             calls, calls == 1 ? "" : "s", c->n, c->n == 1 ? "" : "s", f->ms_per_step,
             device_copy ? "on the device" : "waiting on the host");
    f->try_ = device_copy ? "copy back less often, or asynchronously into pinned memory "
                            "(non_blocking=True) and read it a step later"
                          : sync_try(key);
    return 0;
}

/* Whether the program used a GPU: GPU records, or calls into the CUDA
 * runtime or driver (a run whose CUPTI failed has no records). */
static int used_device(const struct opp_advise_ctx *c)
{
    if (opp_model_has_gpu(c->m))
        return 1;
    for (size_t i = 0; i < c->agg.nrows; i++)
        if (!strcmp(c->agg.rows[i].lib, "cudart") || !strcmp(c->agg.rows[i].lib, "cuda"))
            return 1;
    return 0;
}

int adv_rule_sync(const struct opp_advise_ctx *c, struct opp_findings *out)
{
    /* without a device an .item() waits for nothing: it reads memory */
    int device = used_device(c);
    const struct opp_row *item = device ? adv_row(&c->agg, sync_calls[0]) : NULL;
    const struct opp_row *lsd = device ? adv_row(&c->agg, sync_calls[1]) : NULL;
    const struct opp_row *pair = item && (!lsd || item->count >= lsd->count) ? item : lsd;
    int rc = 0;
    if (pair)
        rc = sync_finding(c, out, pair->key, pair->count, pair->cpu_time_total_ns, 0);
    for (size_t i = 2; i < sizeof sync_calls / sizeof *sync_calls && !rc; i++) {
        const struct opp_row *r = adv_row(&c->agg, sync_calls[i]);
        if (r)
            rc = sync_finding(c, out, r->key, r->count, r->cpu_time_total_ns, 0);
    }
    for (size_t i = 0; i < c->agg.nrows && !rc; i++) {
        const struct opp_row *r = &c->agg.rows[i];
        if (r->device_type == OPP_DEVICE_CUDA && !strncmp(r->key, "Memcpy DtoH", 11))
            rc = sync_finding(c, out, r->key, r->count, r->cuda_time_total_ns, 1);
    }
    return rc;
}

/* Elementwise operators (and their in-place forms, trailing '_'). */
static const char *const elementwise[] = {
    "add",
    "sub",
    "mul",
    "div",
    "neg",
    "abs",
    "exp",
    "log",
    "pow",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "relu",
    "sigmoid",
    "tanh",
    "gelu",
    "silu",
    "sin",
    "cos",
    "clamp",
    "clamp_max",
    "where",
    "maximum",
    "minimum",
    "lerp",
    "addcmul",
    "addcdiv",
    "threshold_backward",
    "sigmoid_backward",
    "tanh_backward",
    "gelu_backward",
    "silu_backward",
    "fill",
    "rsub",
};

/* What aten::relu (relu_) calls: its time is the elementwise group's, its
 * calls are relu's. */
static int is_inner(const char *key)
{
    return !strcmp(key, "aten::clamp_min") || !strcmp(key, "aten::clamp_min_");
}

static int is_elementwise(const char *key)
{
    if (is_inner(key))
        return 1;
    if (strncmp(key, "aten::", 6))
        return 0;
    key += 6;
    size_t len = strlen(key);
    if (len && key[len - 1] == '_')
        len--;
    for (size_t i = 0; i < sizeof elementwise / sizeof *elementwise; i++)
        if (strlen(elementwise[i]) == len && !strncmp(key, elementwise[i], len))
            return 1;
    return 0;
}

#define FUSE_OPS 3    /* the operators a finding names, most called first */
#define FUSE_SHAPES 8 /* the shapes its sentence names; then how many more */

/* The elementwise calls on one shape (first input), or, once findings
 * are merged, on several shapes with the same operators at one place. */
struct shape_group {
    char shape[128];
    size_t nshapes; /* merged: the shapes' groups (the first's shape is this one's) */
    uint64_t calls, self_ns;
    const char *op[FUSE_OPS]; /* its operators of the most calls, by name */
    uint64_t op_calls[FUSE_OPS];
    char code[OPP_ADVICE_TEXT], layer[OPP_ADVICE_TEXT];
    size_t merged_into; /* the group it was merged into, itself when none */
};

/* Whether row i of a is one of group k's whose calls count (of[i]: row
 * i's group). */
static int group_has(const struct opp_agg *a, const size_t *of, size_t k, size_t i)
{
    return of[i] == k && !is_inner(a->rows[i].key);
}

/* Group k's calls, self time and its FUSE_OPS operators of the most calls
 * (the calls of every row of one name added up; ties by name, so that two
 * groups of the same operators name them alike). of[i]: row i's group. */
static void group_sum(const struct opp_agg *a, const size_t *of, size_t k, struct shape_group *g)
{
    for (size_t i = 0; i < a->nrows; i++) {
        if (of[i] != k)
            continue;
        g->self_ns += a->rows[i].self_cpu_time_total_ns;
        if (!group_has(a, of, k, i))
            continue;
        g->calls += a->rows[i].count;
        const char *key = a->rows[i].key;
        int seen = 0;
        for (size_t e = 0; e < i && !seen; e++)
            seen = group_has(a, of, k, e) && !strcmp(a->rows[e].key, key);
        if (seen)
            continue;
        uint64_t n = 0;
        for (size_t e = i; e < a->nrows; e++)
            if (group_has(a, of, k, e) && !strcmp(a->rows[e].key, key))
                n += a->rows[e].count;
        for (size_t t = 0; t < FUSE_OPS; t++)
            if (!g->op[t] || n > g->op_calls[t] ||
                (n == g->op_calls[t] && strcmp(key, g->op[t]) < 0)) {
                memmove(&g->op[t + 1], &g->op[t], (FUSE_OPS - 1 - t) * sizeof *g->op);
                memmove(&g->op_calls[t + 1], &g->op_calls[t],
                        (FUSE_OPS - 1 - t) * sizeof *g->op_calls);
                g->op[t] = key;
                g->op_calls[t] = n;
                break;
            }
    }
}

/* Whether the group reaches the thresholds: enough calls a step, each
 * small enough. */
static int fusable(const struct opp_advise_ctx *c, const struct shape_group *g)
{
    if (!g->calls)
        return 0;
    double per_step = (double)g->calls / (double)c->n;
    double avg_us = (double)g->self_ns / (double)g->calls / 1e3;
    return per_step >= adv_th(c, OPP_TH_FUSE_PER_STEP) && avg_us <= adv_th(c, OPP_TH_FUSE_AVG_US);
}

/* The same operators at the same place: one finding for both. */
static int same_place(const struct shape_group *x, const struct shape_group *y)
{
    for (size_t t = 0; t < FUSE_OPS; t++)
        if (!x->op[t] != !y->op[t] || (x->op[t] && strcmp(x->op[t], y->op[t])))
            return 0;
    return !strcmp(x->code, y->code) && !strcmp(x->layer, y->layer);
}

/* "[64], [128] and [192]": the shapes of group k of g and the n - 1
 * merged into it (by self time, as g is sorted), FUSE_SHAPES of them,
 * then how many more. */
static void shapes_text(const struct shape_group *g, size_t ng, size_t k, size_t n, char *buf,
                        size_t cap)
{
    size_t len = 0, named = 0, left = n;
    buf[0] = 0;
    for (size_t i = 0; i < ng && left; i++) {
        if (g[i].merged_into != k)
            continue;
        left--;
        if (named == FUSE_SHAPES && left) { /* the last one named rather than "1 more" */
            snprintf(buf + len, cap - len, " and %zu more shapes", left + 1);
            return;
        }
        snprintf(buf + len, cap - len, "%s%s", !named ? "" : left ? ", " : " and ", g[i].shape);
        len = strlen(buf);
        named++;
    }
}

/* The finding of g, the numbers of group k of all and those merged into
 * it. */
static int fusable_finding(const struct opp_advise_ctx *c, struct opp_findings *out,
                           const struct shape_group *g, const struct shape_group *all, size_t ng,
                           size_t k)
{
    double per_step = (double)g->calls / (double)c->n;
    double avg_us = (double)g->self_ns / (double)g->calls / 1e3;
    struct opp_finding *f = adv_add(out, "fusable_ops");
    if (!f)
        return -ENOMEM;
    adv_stake(c, f, g->self_ns);
    f->per_step = per_step;
    f->per_step_unit = "calls";
    size_t len = 0;
    char ops[OPP_ADVICE_TEXT] = "";
    for (size_t i = 0; i < FUSE_OPS && g->op[i]; i++) {
        snprintf(f->op + len, sizeof f->op - len, "%s%s", i ? ", " : "", g->op[i]);
        len = strlen(f->op);
        size_t ol = strlen(ops);
        snprintf(ops + ol, sizeof ops - ol, "%s%s %.1f", i ? ", " : "", g->op[i],
                 (double)g->op_calls[i] / (double)c->n);
    }
    snprintf(f->code, sizeof f->code, "%s", g->code);
    snprintf(f->layer, sizeof f->layer, "%s", g->layer);
    char shapes[OPP_ADVICE_TEXT / 2];
    shapes_text(all, ng, k, g->nshapes, shapes, sizeof shapes);
    snprintf(f->what, sizeof f->what,
             "Many small elementwise operators on %s that torch could fuse: %.0f calls a step",
             shapes, per_step);
    snprintf(f->evidence, sizeof f->evidence,
             "%.1f us each on average (self CPU), %.3f ms a step; a step's calls: %.240s", avg_us,
             f->ms_per_step, ops);
    f->try_ = "fuse them: torch.compile (PyTorch 2), torch.jit.script on the function, foreach "
              "and in-place ops (torch._foreach_*, optimizers' foreach=True); or batch the small "
              "tensors into one larger tensor";
    return 0;
}

static int by_self(const void *a, const void *b)
{
    const struct shape_group *x = a, *y = b;
    if (x->self_ns != y->self_ns)
        return x->self_ns < y->self_ns ? 1 : -1;
    return strcmp(x->shape, y->shape);
}

/* A group per shape that reaches the thresholds; those of the same
 * operators at the same place (an optimizer's loop over its parameters)
 * one finding, their numbers added up. */
int adv_rule_fusable(const struct opp_advise_ctx *c, struct opp_findings *out)
{
    const struct opp_agg *a = &c->shapes;
    int rc = 0;
    struct shape_group *g = calloc(a->nrows ? a->nrows : 1, sizeof *g);
    size_t *of = malloc((a->nrows ? a->nrows : 1) * sizeof *of);
    size_t ng = 0;
    if (!g || !of) {
        free(g);
        free(of);
        return -ENOMEM;
    }
    for (size_t i = 0; i < a->nrows; i++) {
        const struct opp_row *r = &a->rows[i];
        char shape[128];
        of[i] = SIZE_MAX;
        if (r->device_type != OPP_DEVICE_CPU || !is_elementwise(r->key) ||
            !adv_first_shape(r->shapes_str, shape, sizeof shape))
            continue;
        size_t k = 0;
        while (k < ng && strcmp(g[k].shape, shape))
            k++;
        if (k == ng)
            snprintf(g[ng++].shape, sizeof g->shape, "%s", shape);
        of[i] = k;
    }
    size_t nf = 0; /* the groups that reach the thresholds, first */
    for (size_t k = 0; k < ng; k++) {
        struct shape_group s = {0};
        snprintf(s.shape, sizeof s.shape, "%s", g[k].shape);
        group_sum(a, of, k, &s);
        if (!fusable(c, &s))
            continue;
        adv_code_of(c, s.op[0], s.shape, s.code, sizeof s.code);
        adv_layer_of(c, s.op[0], s.layer, sizeof s.layer);
        g[nf++] = s; /* nf <= k: group k is read no more */
    }
    free(of);
    qsort(g, nf, sizeof *g, by_self);
    struct shape_group *m = calloc(nf ? nf : 1, sizeof *m); /* the merged */
    if (!m) {
        free(g);
        return -ENOMEM;
    }
    for (size_t k = 0; k < nf; k++) {
        size_t into = 0;
        while (into < k && (g[into].merged_into != into || !same_place(&g[into], &g[k])))
            into++;
        g[k].merged_into = into;
        if (into == k) {
            m[k] = g[k];
            m[k].nshapes = 1;
            continue;
        }
        m[into].nshapes++;
        m[into].calls += g[k].calls;
        m[into].self_ns += g[k].self_ns;
        for (size_t t = 0; t < FUSE_OPS; t++)
            m[into].op_calls[t] += g[k].op_calls[t];
    }
    for (size_t k = 0; k < nf && !rc; k++)
        if (g[k].merged_into == k)
            rc = fusable_finding(c, out, &m[k], g, nf, k);
    free(m);
    free(g);
    return rc;
}

static const char *const gemms[] = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"};

/* FLOPs of one call of a row grouped by shape: torch.profiler's for its
 * operator (opp_op_flops), 0 when its shapes do not say. */
static double gemm_flops(const struct opp_row *r)
{
    return r->count ? (double)r->flops / (double)r->count : 0;
}

int adv_rule_tiny_gemm(const struct opp_advise_ctx *c, struct opp_findings *out)
{
    const struct opp_agg *a = &c->shapes;
    int rc = 0;
    uint64_t calls = 0, ns = 0;
    size_t shapes = 0;
    const struct opp_row *top = NULL;
    for (size_t i = 0; i < a->nrows; i++) {
        const struct opp_row *r = &a->rows[i];
        int gemm = 0;
        for (size_t k = 0; k < sizeof gemms / sizeof *gemms; k++)
            gemm |= !strcmp(r->key, gemms[k]);
        if (!gemm || !r->count || !gemm_flops(r) ||
            (double)r->count / (double)c->n < adv_th(c, OPP_TH_TINY_GEMM_PER_STEP) ||
            gemm_flops(r) > adv_th(c, OPP_TH_TINY_GEMM_FLOPS))
            continue;
        calls += r->count;
        ns += r->cpu_time_total_ns;
        shapes++;
        if (!top || r->count > top->count)
            top = r;
    }
    if (top) {
        struct opp_finding *f = adv_add(out, "tiny_gemms");
        if (!f)
            return -ENOMEM;
        adv_stake(c, f, ns);
        f->per_step = (double)calls / (double)c->n;
        f->per_step_unit = "calls";
        snprintf(f->op, sizeof f->op, "%s", top->key);
        snprintf(f->what, sizeof f->what, "Many tiny matrix products: %.0f a step", f->per_step);
        if (shapes > 1) /* each shape is many a step: they add up */
            snprintf(f->what + strlen(f->what), sizeof f->what - strlen(f->what), ", of %zu shapes",
                     shapes);
        snprintf(f->evidence, sizeof f->evidence,
                 "the most called: %.100s on %.150s, %.0f FLOPs and %.1f us each", top->key,
                 top->shapes_str, gemm_flops(top), opp_row_avg_ns(top) / 1e3);
        f->try_ = "batch them: stack the small matrices into one torch.bmm or one larger "
                  "matmul; on a GPU, CUDA graphs cut their launch cost";
        char first[128];
        adv_code_of(c, top->key,
                    adv_first_shape(top->shapes_str, first, sizeof first) ? first : NULL, f->code,
                    sizeof f->code);
        adv_layer_of(c, top->key, f->layer, sizeof f->layer);
    }
    return rc;
}
