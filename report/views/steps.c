/* `opprof report --step NAME`: the step view (see steps.h). */
#include "views/steps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "views/fmt.h"

static void us(FILE *f, uint64_t ns)
{
    fprintf(f, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

/* Which of a step's numbers a series is. */
enum series { WALL, CPU, GPU };

static uint64_t value(const struct opp_step *st, enum series k)
{
    return k == WALL ? st->end_ns - st->begin_ns : k == CPU ? st->cpu_ns : st->gpu_ns;
}

static void json_series(FILE *f, const char *key, const struct opp_steps *s, enum series k)
{
    fprintf(f, ", \"%s\": [", key);
    for (size_t i = 0; i < s->n; i++) {
        if (i)
            fputs(", ", f);
        us(f, value(&s->steps[i], k));
    }
    fputc(']', f);
}

static void json_dist(FILE *f, const char *key, const struct opp_dist *d)
{
    fprintf(f, ", \"%s\": {\"count\": %" PRIu64, key, d->count);
    const char *k[] = {"mean", "p50", "p90", "p99", "max"};
    const uint64_t v[] = {d->mean, d->p50, d->p90, d->p99, d->max};
    for (int i = 0; i < 5; i++) {
        fprintf(f, ", \"%s\": ", k[i]);
        us(f, v[i]);
    }
    fputc('}', f);
}

static void row(FILE *f, const char *label, const struct opp_dist *d)
{
    char b[6][OPP_FMT_MAX];
    fprintf(f, "%-14s  %8" PRIu64 "  %12s  %12s  %12s  %12s  %12s\n", label, d->count,
            opp_fmt_time(b[0], (double)d->mean), opp_fmt_time(b[1], (double)d->p50),
            opp_fmt_time(b[2], (double)d->p90), opp_fmt_time(b[3], (double)d->p99),
            opp_fmt_time(b[4], (double)d->max));
}

int opp_out_steps(FILE *f, const char *name, const struct opp_steps *s, int json)
{
    size_t n = s->n;
    uint64_t *v = malloc((n ? n : 1) * sizeof *v); /* one series at a time: steps are many */
    if (!v)
        return -ENOMEM;
    int any_gpu = 0;
    for (size_t i = 0; i < n; i++)
        any_gpu |= s->steps[i].gpu_ns != 0;
    const char *kind = s->ranges ? "range" : "boundary";
    if (json) {
        fputs("{\"step\": ", f);
        opp_json_str(f, name);
        fprintf(f, ", \"kind\": \"%s\", \"count\": %zu", kind, n);
        json_series(f, "wall_us", s, WALL);
        json_series(f, "cpu_us", s, CPU);
        json_series(f, "gpu_us", s, GPU);
    } else if (!n) { /* no table of zeros */
        fputs("Steps: ", f);
        opp_text_fput(f, name);
        if (s->found.named)
            fprintf(f, " (%s), 0 steps\n",
                    s->ranges ? "each call is a step" : "a step ends at each call");
        else
            fputs(", 0 steps: --step NAME says what a step is (an NVTX range, a torch label or "
                  "nn.Module layer, or a call that ends each step)\n",
                  f);
        free(v);
        return ferror(f) ? -EIO : 0;
    } else {
        fputs("Steps: ", f);
        opp_text_fput(f, name);
        fprintf(f, " (%s), %zu step%s\n",
                s->ranges ? "each call is a step" : "a step ends at each call", n,
                n == 1 ? "" : "s");
        fprintf(f, "%-14s  %8s  %12s  %12s  %12s  %12s  %12s\n", "", "count", "mean", "p50",
                "p90", "p99", "max");
    }
    struct opp_dist d;
    const char *labels[] = {"wall", "CPU in calls", "GPU (CUDA)"};
    const char *keys[] = {"wall", "cpu", "gpu"};
    for (enum series k = WALL; k <= GPU; k++) {
        for (size_t i = 0; i < n; i++)
            v[i] = value(&s->steps[i], k);
        opp_dist_of(v, n, &d); /* sorts v */
        if (json)
            json_dist(f, keys[k], &d);
        else if (k != GPU || any_gpu)
            row(f, labels[k], &d);
    }
    if (json)
        fputs("}\n", f);
    free(v);
    return ferror(f) ? -EIO : 0;
}
