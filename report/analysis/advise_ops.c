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
        adv_code_of(c, key, f->code, sizeof f->code);
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

/* The first input's shape of a row's shapes ("[64, 64]" of "[[64, 64],
 * [64, 64], []]") into buf; 0 when it has none. */
static int first_shape(const struct opp_row *r, char *buf, size_t cap)
{
    const char *s = r->shapes_str;
    if (strncmp(s, "[[", 2))
        return 0;
    const char *end = strchr(s + 1, ']');
    if (!end || (size_t)(end - s) >= cap || end == s + 2)
        return 0;
    memcpy(buf, s + 1, (size_t)(end - s));
    buf[end - s] = 0;
    return 1;
}

struct shape_group {
    char shape[128];
    uint64_t calls, self_ns;
    const struct opp_row *top[3]; /* most calls first */
};

static void group_add(struct shape_group *g, const struct opp_row *r)
{
    g->self_ns += r->self_cpu_time_total_ns;
    if (is_inner(r->key))
        return;
    g->calls += r->count;
    for (size_t i = 0; i < 3; i++)
        if (!g->top[i] || r->count > g->top[i]->count) {
            memmove(&g->top[i + 1], &g->top[i], (2 - i) * sizeof *g->top);
            g->top[i] = r;
            break;
        }
}

static int fusable_finding(const struct opp_advise_ctx *c, struct opp_findings *out,
                           const struct shape_group *g)
{
    if (!g->calls)
        return 0;
    double per_step = (double)g->calls / (double)c->n;
    double avg_us = (double)g->self_ns / (double)g->calls / 1e3;
    if (per_step < adv_th(c, OPP_TH_FUSE_PER_STEP) || avg_us > adv_th(c, OPP_TH_FUSE_AVG_US))
        return 0;
    struct opp_finding *f = adv_add(out, "fusable_ops");
    if (!f)
        return -ENOMEM;
    adv_stake(c, f, g->self_ns);
    f->per_step = per_step;
    f->per_step_unit = "calls";
    size_t len = 0;
    char ops[OPP_ADVICE_TEXT] = "";
    for (size_t i = 0; i < 3 && g->top[i]; i++) {
        snprintf(f->op + len, sizeof f->op - len, "%s%s", i ? ", " : "", g->top[i]->key);
        len = strlen(f->op);
        size_t ol = strlen(ops);
        snprintf(ops + ol, sizeof ops - ol, "%s%s %.1f", i ? ", " : "", g->top[i]->key,
                 (double)g->top[i]->count / (double)c->n);
    }
    adv_code_of(c, g->top[0]->key, f->code, sizeof f->code);
    adv_layer_of(c, g->top[0]->key, f->layer, sizeof f->layer);
    snprintf(f->what, sizeof f->what,
             "Many small elementwise operators on %s that torch could fuse: %.0f calls a step",
             g->shape, per_step);
    snprintf(f->evidence, sizeof f->evidence,
             "%.1f us each on average (self CPU), %.3f ms a step; a step's calls: %.240s", avg_us,
             f->ms_per_step, ops);
    f->try_ = "fuse them: torch.compile (PyTorch 2), torch.jit.script on the function, foreach "
              "and in-place ops (torch._foreach_*, optimizers' foreach=True); or batch the small "
              "tensors into one larger tensor";
    return 0;
}

int adv_rule_fusable(const struct opp_advise_ctx *c, struct opp_findings *out)
{
    const struct opp_agg *a = &c->shapes;
    int rc = 0;
    struct shape_group *g = calloc(a->nrows ? a->nrows : 1, sizeof *g);
    size_t ng = 0;
    if (!g)
        return -ENOMEM;
    for (size_t i = 0; i < a->nrows; i++) {
        const struct opp_row *r = &a->rows[i];
        char shape[128];
        if (r->device_type != OPP_DEVICE_CPU || !is_elementwise(r->key) ||
            !first_shape(r, shape, sizeof shape))
            continue;
        size_t k = 0;
        while (k < ng && strcmp(g[k].shape, shape))
            k++;
        if (k == ng)
            snprintf(g[ng++].shape, sizeof g->shape, "%s", shape);
        group_add(&g[k], r);
    }
    for (size_t k = 0; k < ng && !rc; k++)
        rc = fusable_finding(c, out, &g[k]);
    free(g);
    return rc;
}

static const char *const gemms[] = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"};

/* FLOPs of one call of a row grouped by shape: the row's own when the
 * trace gives them (BLAS), else 2 M K N (times the batch) of its first two
 * operands that multiply ([.., M, K] by [.., K, N]; torch's ops carry none);
 * 0 when its shapes do not say. */
static double gemm_flops(const struct opp_row *r)
{
    if (r->flops)
        return (double)r->flops / (double)r->count;
    const struct opp_shapes *s = &r->shapes;
    for (int i = 0; i + 1 < s->n; i++) {
        int ra = s->rank[i], rb = s->rank[i + 1];
        if (ra < 2 || rb < 2 || s->dim[i][ra - 1] != s->dim[i + 1][rb - 2])
            continue;
        double f = 2.0 * (double)s->dim[i][ra - 2] * (double)s->dim[i][ra - 1] *
                   (double)s->dim[i + 1][rb - 1];
        for (int k = 0; k < ra - 2; k++)
            f *= (double)s->dim[i][k];
        return f;
    }
    return 0;
}

int adv_rule_tiny_gemm(const struct opp_advise_ctx *c, struct opp_findings *out)
{
    const struct opp_agg *a = &c->shapes;
    int rc = 0;
    uint64_t calls = 0, ns = 0;
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
        snprintf(f->evidence, sizeof f->evidence,
                 "the most called: %.100s on %.150s, %.0f FLOPs and %.1f us each", top->key,
                 top->shapes_str, gemm_flops(top), opp_row_avg_ns(top) / 1e3);
        f->try_ = "batch them: stack the small matrices into one torch.bmm or one larger "
                  "matmul; on a GPU, CUDA graphs cut their launch cost";
        adv_code_of(c, top->key, f->code, sizeof f->code);
        adv_layer_of(c, top->key, f->layer, sizeof f->layer);
    }
    return rc;
}
