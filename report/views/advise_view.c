/* `opprof advise`'s findings as text or JSON (see advise_view.h). */
#include "views/advise_view.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "views/fmt.h"

/* "12.34%", "1.234 ms" and the like of what the finding has. */
static void text_where(FILE *f, const struct opp_finding *x)
{
    int any = 0;
    fputs("   where:    ", f);
    const struct {
        const char *v, *first, *next; /* what comes before it, first or after another */
    } strs[] = {
        {x->op, "", ""}, {x->layer, "in ", " in "}, {x->code, "called at ", ", called at "}};
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
        if (strs[i].v[0]) {
            fputs(any ? strs[i].next : strs[i].first, f);
            opp_text_fput(f, strs[i].v);
            any = 1;
        }
    if (x->step >= 0) {
        fprintf(f, "%sstep %" PRId64, any ? ", " : "", x->step);
        if (x->step_last > x->step)
            fprintf(f, " to %" PRId64, x->step_last);
        any = 1;
    }
    if (x->rank >= 0)
        fprintf(f, "%srank %" PRId64, any++ ? ", " : "", x->rank);
    if (x->pid >= 0)
        fprintf(f, "%spid %" PRId64, any++ ? ", " : "", x->pid);
    if (x->device >= 0)
        fprintf(f, "%sdevice %" PRId64, any++ ? ", " : "", x->device);
    if (x->stream >= 0)
        fprintf(f, "%sstream %" PRId64, any++ ? ", " : "", x->stream);
    fputs(any ? "\n" : "every step\n", f);
}

static void text_much(FILE *f, const struct opp_finding *x)
{
    const char *sep = "";
    fputs("   how much: ", f);
    if (x->share >= 0) {
        fprintf(f, "%.1f%% of the steps' time", x->share * 100);
        sep = ", ";
    }
    if (x->ms_per_step >= 0) {
        fprintf(f, "%s%.3f ms a step (%.3f ms in all)", sep, x->ms_per_step,
                (double)x->stake_ns / 1e6);
        sep = ", ";
    }
    if (x->per_step_unit && !strcmp(x->per_step_unit, "bytes")) /* as the findings say bytes */
        fprintf(f, "%s%.2f MiB a step", sep, x->per_step / 1048576.0);
    else if (x->per_step_unit)
        fprintf(f, "%s%.1f %s a step", sep, x->per_step, x->per_step_unit);
    fputc('\n', f);
}

static void text_finding(FILE *f, size_t i, const struct opp_finding *x)
{
    fprintf(f, "%zu. ", i);
    opp_text_fput(f, x->what);
    fprintf(f, " [%s]\n", x->rule);
    text_where(f, x);
    text_much(f, x);
    if (x->evidence[0]) {
        fputs("   evidence: ", f);
        opp_text_fput(f, x->evidence);
        fputc('\n', f);
    }
    fprintf(f, "   try:      %s\n", x->try_);
}

/* Whether some rule did not run (opp_advise_runs): a summary trace, or a
 * full one without steps. */
static int not_run(const struct opp_advice *a)
{
    return a->counted || !a->nsteps;
}

static void text_advice(FILE *f, const char *trace, const struct opp_advice *a)
{
    fputs("opprof advise: ", f);
    opp_text_fput(f, trace);
    fputs("\nSteps: ", f);
    opp_text_fput(f, a->steps_what);
    if (a->nsteps)
        fprintf(f, ", %zu", a->nsteps);
    if (a->pid)
        fprintf(f, " of pid %" PRIu32, a->pid);
    else if (a->ranked)
        fprintf(f, " of rank %" PRId64, a->rank);
    if (a->counted) {
        fputs(", counted in a summary trace (no step's own time)", f);
        if (a->wall_ns) /* the steps are ranges: their calls' time */
            fprintf(f, ": %.3f ms a step on average, %.3f ms in all",
                    a->wall_ns / 1e6 / (double)a->nsteps, a->wall_ns / 1e6);
        fputs("\nNot run on a summary trace (they need the calls' times):", f);
    } else {
        fprintf(f, ": p50 %.3f ms, p99 %.3f ms, %.3f ms in all", a->p50_ns / 1e6, a->p99_ns / 1e6,
                a->wall_ns / 1e6);
        if (!a->nsteps)
            fputs("\nNot run without steps (they look at each step's own time; --step NAME says "
                  "what a step is):",
                  f);
    }
    if (not_run(a)) {
        const char *sep = " ";
        for (size_t i = 0; i < opp_advise_nrules; i++)
            if (!opp_advise_runs(&opp_advise_rules[i], a)) {
                fprintf(f, "%s%s", sep, opp_advise_rules[i].name);
                sep = ", ";
            }
    }
    fputc('\n', f);
    size_t lost = 0, n = 0;
    for (size_t i = 0; i < a->fs.n; i++) {
        const struct opp_finding *x = &a->fs.f[i];
        if (!x->lost)
            continue;
        if (!lost++)
            fputs("\nThe trace lost data; the findings rest on what it kept:\n", f);
        fputs("   - ", f);
        opp_text_fput(f, x->what);
        if (x->evidence[0]) {
            fputs(" (", f);
            opp_text_fput(f, x->evidence);
            fputc(')', f);
        }
        if (x->try_[0])
            fprintf(f, "; try: %s", x->try_);
        fputc('\n', f);
    }
    fputc('\n', f);
    for (size_t i = 0; i < a->fs.n; i++)
        if (!a->fs.f[i].lost)
            text_finding(f, ++n, &a->fs.f[i]);
    if (!n)
        fputs("No findings: no rule's threshold was reached (`opprof advise --thresholds`)\n", f);
}

static void json_num(FILE *f, const char *key, double v, const char *sep)
{
    fprintf(f, "%s\"%s\": %.6g", sep, key, v);
}

static void json_finding(FILE *f, size_t rank, const struct opp_finding *x)
{
    fprintf(f, "{\"rank\": %zu, \"rule\": ", rank);
    opp_json_str(f, x->rule);
    fputs(", \"what\": ", f);
    opp_json_str(f, x->what);
    fputs(", \"where\": {", f);
    const char *sep = "";
    const struct {
        const char *key, *v;
    } strs[] = {{"op", x->op}, {"layer", x->layer}, {"code", x->code}};
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
        if (strs[i].v[0]) {
            fprintf(f, "%s\"%s\": ", sep, strs[i].key);
            opp_json_str(f, strs[i].v);
            sep = ", ";
        }
    const struct {
        const char *key;
        int64_t v;
    } ints[] = {{"step", x->step}, {"step_last", x->step_last}, {"rank", x->rank},
                {"pid", x->pid},   {"device", x->device},       {"stream", x->stream}};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
        if (ints[i].v >= 0) {
            fprintf(f, "%s\"%s\": %" PRId64, sep, ints[i].key, ints[i].v);
            sep = ", ";
        }
    fputc('}', f);
    if (x->share >= 0)
        json_num(f, "share", x->share, ", ");
    if (x->ms_per_step >= 0)
        json_num(f, "ms_per_step", x->ms_per_step, ", ");
    if (x->per_step_unit) {
        json_num(f, "per_step", x->per_step, ", ");
        fputs(", \"per_step_unit\": ", f);
        opp_json_str(f, x->per_step_unit);
    } else if (x->lost) {
        json_num(f, "count", x->per_step, ", ");
    }
    json_num(f, "stake_ms", (double)x->stake_ns / 1e6, ", ");
    fputs(", \"evidence\": ", f);
    opp_json_str(f, x->evidence);
    fputs(", \"try\": ", f);
    opp_json_str(f, x->try_);
    fputc('}', f);
}

static void json_advice(FILE *f, const char *trace, const struct opp_advice *a)
{
    fputs("{\"trace\": ", f);
    opp_json_str(f, trace);
    fputs(", \"steps\": {\"what\": ", f);
    opp_json_str(f, a->steps_what);
    fprintf(f, ", \"count\": %zu", a->nsteps);
    if (a->pid)
        fprintf(f, ", \"pid\": %" PRIu32, a->pid);
    if (a->ranked)
        fprintf(f, ", \"rank\": %" PRId64, a->rank);
    if (!a->counted) {
        json_num(f, "p50_ms", a->p50_ns / 1e6, ", ");
        json_num(f, "p99_ms", a->p99_ns / 1e6, ", ");
        json_num(f, "wall_ms", a->wall_ns / 1e6, ", ");
    } else if (a->wall_ns) {
        fputs(", \"counted\": true", f);
        json_num(f, "mean_ms", a->wall_ns / 1e6 / (double)a->nsteps, ", ");
        json_num(f, "wall_ms", a->wall_ns / 1e6, ", ");
    } else {
        fputs(", \"counted\": true", f);
    }
    fputs("}", f);
    if (not_run(a)) {
        fputs(", \"not_run\": [", f);
        const char *sep = "";
        for (size_t i = 0; i < opp_advise_nrules; i++)
            if (!opp_advise_runs(&opp_advise_rules[i], a)) {
                fputs(sep, f);
                opp_json_str(f, opp_advise_rules[i].name);
                sep = ", ";
            }
        fputc(']', f);
    }
    for (int lost = 1; lost >= 0; lost--) {
        fputs(lost ? ", \"lost\": [" : ", \"findings\": [", f);
        size_t n = 0;
        for (size_t i = 0; i < a->fs.n; i++)
            if (a->fs.f[i].lost == lost) {
                fputs(n ? ",\n  " : "\n  ", f);
                json_finding(f, ++n, &a->fs.f[i]);
            }
        fputs(n ? "\n]" : "]", f);
    }
    fputs("}\n", f);
}

int opp_out_advice(FILE *f, const char *trace, const struct opp_advice *a, int json)
{
    if (json)
        json_advice(f, trace, a);
    else
        text_advice(f, trace, a);
    return ferror(f) ? -EIO : 0;
}

int opp_out_advise_thresholds(FILE *f, const double *th)
{
    fputs("| threshold | value | unit | rules | meaning |\n|---|---|---|---|---|\n", f);
    for (int i = 0; i < OPP_TH_COUNT; i++) {
        const struct opp_advise_threshold_desc *d = &opp_advise_thresholds[i];
        fprintf(f, "| `%s` | %.10g | %s | ", d->name, th[i], d->unit);
        const char *sep = "";
        for (size_t r = 0; r < opp_advise_nrules; r++) {
            const char *t = opp_advise_rules[r].thresholds, *p = strstr(t, d->name);
            size_t len = strlen(d->name);
            if (p && (p[len] == 0 || p[len] == ',') && (p == t || p[-1] == ' ')) {
                fprintf(f, "%s%s", sep, opp_advise_rules[r].name);
                sep = ", ";
            }
        }
        fprintf(f, " | %s |\n", d->help);
    }
    return ferror(f) ? -EIO : 0;
}
