/* advise's rules on the steps themselves: waiting for input, time outside
 * any recorded call, warm-up, outlier steps (advise_rules.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/advise_rules.h"

#define DATALOADER "enumerate(DataLoader)#"

static uint64_t overlap(uint64_t b0, uint64_t e0, uint64_t b1, uint64_t e1)
{
    uint64_t b = b0 > b1 ? b0 : b1, e = e0 < e1 ? e0 : e1;
    return e > b ? e - b : 0;
}

/* Each step's time inside the ranges of r (those of the steps' thread,
 * which r has one after another in time order, as the steps are; every
 * range when the run is one step) added to in[]. */
static void inside(const struct opp_advise_ctx *c, const struct opp_steps *r, uint64_t *in)
{
    size_t lo = 0, hi = r->n;
    if (c->thread != UINT32_MAX) {
        while (lo < r->n && r->steps[lo].thread != c->thread)
            lo++;
        for (hi = lo; hi < r->n && r->steps[hi].thread == c->thread;)
            hi++;
    }
    for (size_t i = 0, j0 = lo; i < c->n; i++) {
        const struct opp_step *s = &c->steps[i];
        while (c->thread != UINT32_MAX && j0 < hi && r->steps[j0].end_ns <= s->begin_ns)
            j0++; /* ended before this step, so before every later one */
        for (size_t j = j0; j < hi; j++) {
            if (c->thread != UINT32_MAX && r->steps[j].begin_ns >= s->end_ns)
                break; /* begins after this step: the rest too */
            in[i] += overlap(s->begin_ns, s->end_ns, r->steps[j].begin_ns, r->steps[j].end_ns);
        }
    }
}

/* The shares v[i] / wall of step i: the lowest and the highest. */
static void share_range(const struct opp_advise_ctx *c, const uint64_t *v, double *lo, double *hi)
{
    *lo = 1, *hi = 0;
    for (size_t i = 0; i < c->n; i++) {
        uint64_t w = adv_wall(&c->steps[i]);
        double s = w ? (double)v[i] / (double)w : 0;
        *lo = s < *lo ? s : *lo;
        *hi = s > *hi ? s : *hi;
    }
}

int adv_rule_input(const struct opp_advise_ctx *c, struct opp_findings *out)
{
    uint64_t *in = calloc(c->n, sizeof *in);
    if (!in)
        return -ENOMEM;
    const char *name = NULL;
    uint64_t calls = 0;
    int rc = 0;
    for (size_t k = 0; k < c->agg.nrows && !rc; k++) {
        const struct opp_row *r = &c->agg.rows[k];
        if (r->device_type != OPP_DEVICE_CPU || strncmp(r->key, DATALOADER, strlen(DATALOADER)))
            continue;
        struct opp_steps dl;
        if ((rc = adv_steps_find(c, r->key, &dl)))
            break;
        if (dl.ranges) /* a torch label: each call its interval */
            inside(c, &dl, in);
        opp_steps_free(&dl);
        calls += r->count;
        if (!name)
            name = r->key;
    }
    uint64_t total = 0;
    for (size_t i = 0; i < c->n; i++)
        total += in[i];
    if (rc || !name || !c->wall_ns ||
        (double)total < adv_th(c, OPP_TH_INPUT_SHARE) * (double)c->wall_ns) {
        free(in);
        return rc;
    }
    struct opp_finding *f = adv_add(out, "input_pipeline");
    if (!f) {
        free(in);
        return -ENOMEM;
    }
    adv_code_of(c, name, NULL, f->code, sizeof f->code);
    adv_stake(c, f, total);
    double lo, hi;
    share_range(c, in, &lo, &hi);
    free(in);
    f->per_step = (double)calls / (double)c->n;
    f->per_step_unit = "calls";
    snprintf(f->op, sizeof f->op, "%s", name);
    snprintf(f->what, sizeof f->what,
             "Input pipeline bound: the steps wait for the DataLoader %.0f%% of their time",
             f->share * 100);
    snprintf(f->evidence, sizeof f->evidence,
             "%s: %.3f ms of the %.3f ms a step takes (mean), %.0f%% to %.0f%% a step over %zu "
             "steps",
             name, f->ms_per_step, (double)c->wall_ns / (double)c->n / 1e6, lo * 100, hi * 100,
             c->n);
    f->try_ = "more DataLoader workers (num_workers), persistent_workers=True and a larger "
              "prefetch_factor (pin_memory=True for a GPU); make the Dataset's __getitem__ "
              "cheaper (decode once and cache, batch the transforms); `opprof report --by-process` "
              "shows the workers' own time";
    return 0;
}

/* By the median step (outliers, the machine's noise among them, are the
 * outlier rule's): its time outside the calls against the p50 wall time. */
int adv_rule_outside(const struct opp_advise_ctx *c, struct opp_findings *out)
{
    if (!c->real_steps || !c->p50_ns)
        return 0;
    uint64_t *v = calloc(c->n, sizeof *v);
    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < c->n; i++) {
        uint64_t w = adv_wall(&c->steps[i]);
        v[i] = w > c->steps[i].cpu_ns ? w - c->steps[i].cpu_ns : 0;
    }
    struct opp_dist d;
    opp_dist_of(v, c->n, &d);
    free(v);
    if ((double)d.p50 < adv_th(c, OPP_TH_OUTSIDE_SHARE) * (double)c->p50_ns)
        return 0;
    struct opp_finding *f = adv_add(out, "outside_ops");
    if (!f)
        return -ENOMEM;
    adv_stake(c, f, d.p50 * c->n);
    f->share = (double)d.p50 / (double)c->p50_ns;
    int python = adv_python(c);
    snprintf(f->what, sizeof f->what, "%.0f%% of a step's time is inside no recorded call: %s",
             f->share * 100, adv_outside_what(c));
    snprintf(f->evidence, sizeof f->evidence,
             "%.3f ms of the p50 step's %.3f ms outside the calls (p50 of %zu steps; p90 %.3f "
             "ms)",
             (double)d.p50 / 1e6, (double)c->p50_ns / 1e6, c->n, (double)d.p90 / 1e6);
    f->try_ = python ? "look at the loop's Python (`opprof export chrome` with OPPROF_STACKS=1 "
                       "shows its frames; or a Python profiler); move per-step Python work "
                       "(logging, metrics, building lists) out of the step or onto tensors"
                     : "look at the program's own code between the calls (a sampling profiler "
                       "such as perf shows it); move per-step work (logging, metrics) out of the "
                       "step";
    return 0;
}

/* The first steady step whose wall time is the p50. */
static size_t median_step(const struct opp_advise_ctx *c, uint64_t p50)
{
    for (size_t i = c->warm; i < c->n; i++)
        if (adv_wall(&c->steps[i]) == p50)
            return i;
    return c->warm;
}

/* "; its largest excess: OP, +X ms self CPU against step REF (a p50
 * step)" into buf, OP into op ("" when the excess is outside the calls). */
static int excess_text(const struct opp_advise_ctx *c, size_t i, size_t ref, char *buf, size_t cap,
                       char *op, size_t opcap)
{
    uint64_t ns;
    int outside;
    int rc = adv_step_excess(c, i, ref, op, opcap, &ns, &outside);
    buf[0] = 0;
    if (!rc && ns && outside)
        snprintf(buf, cap,
                 "; its largest excess: time inside no recorded call (%s), +%.3f ms against step "
                 "%zu (a p50 step)",
                 adv_outside_what(c), (double)ns / 1e6, ref);
    else if (!rc && ns)
        snprintf(buf, cap,
                 "; its largest excess: %.120s, +%.3f ms self CPU against step %zu (a p50 step)",
                 op, (double)ns / 1e6, ref);
    return rc;
}

int adv_rule_warmup(const struct opp_advise_ctx *c, struct opp_findings *out)
{
    if (!c->warm)
        return 0;
    uint64_t stake = 0;
    for (size_t i = 0; i < c->warm; i++)
        stake += adv_wall(&c->steps[i]) > c->p50_ns ? adv_wall(&c->steps[i]) - c->p50_ns : 0;
    struct opp_finding *f = adv_add(out, "warmup");
    if (!f)
        return -ENOMEM;
    adv_stake(c, f, stake);
    f->step = 0;
    f->step_last = (int64_t)c->warm - 1;
    char more[200];
    if (excess_text(c, 0, median_step(c, c->p50_ns), more, sizeof more, f->op, sizeof f->op))
        return -ENOMEM;
    if (c->warm == 1)
        snprintf(f->what, sizeof f->what, "Warm-up: step 0 took %.1fx the p50 step or more",
                 adv_th(c, OPP_TH_WARMUP_RATIO));
    else
        snprintf(f->what, sizeof f->what,
                 "Warm-up: steps 0 to %zu each took %.1fx the p50 step "
                 "or more",
                 c->warm - 1, adv_th(c, OPP_TH_WARMUP_RATIO));
    snprintf(f->evidence, sizeof f->evidence, "step 0: %.3f ms against a p50 of %.3f ms%s",
             (double)adv_wall(&c->steps[0]) / 1e6, (double)c->p50_ns / 1e6, more);
    f->try_ = "leave the first steps out of timings (a schedule's wait and warmup: "
              "OPPROF_SCHEDULE, torch.profiler's schedule); if warm-up recurs (new shapes), keep "
              "shapes static (pad or bucket batches) so caches are built once";
    return 0;
}

int adv_rule_outliers(const struct opp_advise_ctx *c, struct opp_findings *out)
{
    size_t n = c->n - c->warm;
    if (!c->real_steps || (double)n < adv_th(c, OPP_TH_STEPS_MIN))
        return 0;
    uint64_t *w = malloc(n * sizeof *w);
    if (!w)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        w[i] = adv_wall(&c->steps[c->warm + i]);
    struct opp_dist d;
    opp_dist_of(w, n, &d);
    free(w);
    double limit = adv_th(c, OPP_TH_OUTLIER_RATIO) * (double)d.p50;
    if ((double)d.p99 < limit || !d.p50)
        return 0;
    uint64_t stake = 0;
    size_t count = 0, worst = c->warm;
    for (size_t i = c->warm; i < c->n; i++) {
        uint64_t wi = adv_wall(&c->steps[i]);
        if ((double)wi < limit)
            continue;
        stake += wi > d.p50 ? wi - d.p50 : 0; /* an outlier_ratio under 1 (--set) */
        count++;
        if (wi > adv_wall(&c->steps[worst]))
            worst = i;
    }
    struct opp_finding *f = adv_add(out, "outlier_steps");
    if (!f)
        return -ENOMEM;
    adv_stake(c, f, stake);
    f->step = (int64_t)worst;
    char more[200];
    if (excess_text(c, worst, median_step(c, d.p50), more, sizeof more, f->op, sizeof f->op))
        return -ENOMEM;
    uint64_t first = c->first_ns;
    snprintf(f->what, sizeof f->what,
             "Outlier steps: %zu of %zu steady steps took %.1fx the p50 or more (p99 %.3f ms, p50 "
             "%.3f ms)",
             count, n, adv_th(c, OPP_TH_OUTLIER_RATIO), (double)d.p99 / 1e6, (double)d.p50 / 1e6);
    snprintf(f->evidence, sizeof f->evidence,
             "the worst, step %zu: %.3f ms (--from %.3f --to %.3f)%s", worst,
             (double)adv_wall(&c->steps[worst]) / 1e6,
             (double)(c->steps[worst].begin_ns - first) / 1e6,
             (double)(c->steps[worst].end_ns - first) / 1e6, more);
    f->try_ = "see what those steps ran (`opprof report TRACE --from MS --to MS`): periodic "
              "work (checkpoints, evaluation, logging), Python's garbage collector (gc.freeze() "
              "after set-up), batches of uneven size (bucket them)";
    return 0;
}
