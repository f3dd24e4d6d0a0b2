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

static void json_series(FILE *f, const char *key, const uint64_t *v, size_t n)
{
    fprintf(f, ", \"%s\": [", key);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        us(f, v[i]);
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
    uint64_t *v = malloc(3 * (n ? n : 1) * sizeof *v);
    if (!v)
        return -ENOMEM;
    uint64_t *wall = v, *cpu = v + n, *gpu = v + 2 * n;
    int any_gpu = 0;
    for (size_t i = 0; i < n; i++) {
        wall[i] = s->steps[i].end_ns - s->steps[i].begin_ns;
        cpu[i] = s->steps[i].cpu_ns;
        gpu[i] = s->steps[i].gpu_ns;
        any_gpu |= gpu[i] != 0;
    }
    const char *kind = s->ranges ? "range" : "boundary";
    if (json) {
        fputs("{\"step\": ", f);
        opp_json_str(f, name);
        fprintf(f, ", \"kind\": \"%s\", \"count\": %zu", kind, n);
        json_series(f, "wall_us", wall, n);
        json_series(f, "cpu_us", cpu, n);
        json_series(f, "gpu_us", gpu, n);
    } else {
        fprintf(f, "Steps: %s (%s), %zu step%s\n", name,
                s->ranges ? "each call is a step" : "a step ends at each call", n,
                n == 1 ? "" : "s");
        fprintf(f, "%-14s  %8s  %12s  %12s  %12s  %12s  %12s\n", "", "count", "mean", "p50",
                "p90", "p99", "max");
    }
    struct opp_dist d;
    const char *labels[] = {"wall", "CPU in calls", "GPU (CUDA)"};
    const char *keys[] = {"wall", "cpu", "gpu"};
    uint64_t *series[] = {wall, cpu, gpu};
    for (int i = 0; i < 3; i++) {
        opp_dist_of(series[i], n, &d); /* sorts: the series were written first */
        if (json)
            json_dist(f, keys[i], &d);
        else if (i < 2 || any_gpu)
            row(f, labels[i], &d);
    }
    if (json)
        fputs("}\n", f);
    free(v);
    return ferror(f) ? -EIO : 0;
}
