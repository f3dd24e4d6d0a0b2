/* How a large trace is read (large_trace.h). */
#include "analysis/large_trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "summary.h"

int opp_traces_large(const char *const *traces, size_t n, unsigned long long *bytes)
{
    const char *env = getenv("OPPROF_STREAM_MIB");
    char *end;
    unsigned long long at = env && *env ? strtoull(env, &end, 10) : OPP_STREAM_MIB;
    if (env && *env && *end)
        at = OPP_STREAM_MIB;
    *bytes = 0;
    struct stat st;
    for (size_t i = 0; i < n; i++)
        if (stat(traces[i], &st) == 0)
            *bytes += (unsigned long long)st.st_size;
    return at <= (1ull << 40) && *bytes >= at << 20;
}

/* Where a summary cannot be the loaded report (res of trace): 1 with why
 * said (exact), or each said through warn (not exact: the summary taken as
 * it is). */
static int gaps(const struct opp_summary_load_opts *o, const char *trace,
                const struct opp_summarized *res, char *why, size_t whylen)
{
    char lost[160];
    snprintf(lost, sizeof lost,
             ": the GPU work or memory of %" PRIu64 " calls is left "
             "out (past 2^22 waiting; --no-stream has it)",
             res->lost);
    const struct {
        int differs;
        const char *loads, *warns;
    } gap[] = {
        {res->dropped != 0, "has more than 2^20 call paths", NULL},
        {res->lost != 0,
         "has more than 2^22 launches waiting for their GPU records (or "
         "CPU blocks live)",
         lost},
        {res->frees_unordered,
         "has CPU frees on other threads than their allocations, "
         "and no room in TMPDIR to order them",
         ": CPU frees on other threads than their allocations could not be ordered (no "
         "room in TMPDIR): some may count no bytes (--no-stream has them)"},
        {res->ranges_enclose, "has NVTX ranges recorded when they ended around calls",
         " has NVTX ranges recorded when they ended around calls: they have no children "
         "here, so their self time is their total (--no-stream nests them)"},
    };
    for (size_t k = 0; k < sizeof gap / sizeof *gap; k++) {
        if (!gap[k].differs)
            continue;
        if (o->exact) {
            snprintf(why, whylen, "%s %s", trace, gap[k].loads);
            return 1;
        }
        if (gap[k].warns && o->warn) {
            char line[1024];
            snprintf(line, sizeof line, "%s%s", trace, gap[k].warns);
            o->warn(o->ctx, line);
        }
    }
    return 0;
}

enum opp_summary_load_rc opp_summary_load(const char *const *traces, size_t n,
                                          const struct opp_summary_load_opts *o,
                                          struct opp_model **m, char *err, size_t errlen)
{
    const char *env = getenv("TMPDIR"), *dir = env && *env ? env : "/tmp";
    char **tmp = calloc(n, sizeof *tmp);
    const char **paths = calloc(n, sizeof *paths);
    char warning[sizeof(*m)->sum.warning] = "";
    enum opp_summary_load_rc rc = OPP_SUMMARY_LOAD_ERROR;
    int complete = 1;
    size_t i;
    *m = NULL;
    if (!tmp || !paths) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (i = 0; i < n; i++) {
        size_t len = strlen(dir) + 32;
        tmp[i] = malloc(len);
        if (!tmp[i]) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        snprintf(tmp[i], len, "%s/opprof-report-XXXXXX", dir);
        int fd = mkstemp(tmp[i]);
        if (fd < 0) {
            if (o->exact)
                snprintf(err, errlen, "cannot make a temporary file in %s (%s)", dir,
                         strerror(errno));
            else
                snprintf(err, errlen,
                         "cannot make a temporary file in %s: %s (set TMPDIR, or "
                         "--no-stream)",
                         dir, strerror(errno));
            rc = o->exact ? OPP_SUMMARY_LOAD_CALLS : OPP_SUMMARY_LOAD_ERROR;
            free(tmp[i]);
            tmp[i] = NULL;
            goto out;
        }
        close(fd);
        struct opp_summarized res;
        char why[480];
        paths[i] = tmp[i];
        enum opp_summarize_rc got =
            opp_summarize(traces[i], tmp[i], OPP_SUM_NODES_DEFAULT, o->exact, i ? NULL : o->tap,
                          &res, why, sizeof why);
        if (o->first && !i)
            *o->first = res; /* its threads are the caller's */
        else
            opp_summarized_free(&res);
        if (got == OPP_SUMMARIZED) {
            /* where the summary cannot be the loaded report: every call
             * loaded instead (exact), else said */
            if (gaps(o, traces[i], &res, err, errlen)) {
                rc = OPP_SUMMARY_LOAD_CALLS;
                goto out;
            }
            if (res.warning[0] && !warning[0])
                snprintf(warning, sizeof warning, "%s", res.warning);
            complete &= res.complete;
            continue;
        }
        if (got == OPP_SUMMARIZE_IS_SUMMARY) {
            paths[i] = traces[i];
            continue;
        }
        snprintf(err, errlen, "%s", why);
        if (got == OPP_SUMMARIZE_OUT_FAILED && o->exact)
            rc = OPP_SUMMARY_LOAD_CALLS;
        goto out;
    }
    *m = opp_model_load_many(paths, n, err, errlen);
    if (!*m)
        goto out;
    rc = OPP_SUMMARY_LOADED;
    if (warning[0] && !(*m)->sum.warning[0])
        snprintf((*m)->sum.warning, sizeof(*m)->sum.warning, "%s", warning);
    if (!complete)
        (*m)->sum.complete = 0;
out:
    for (i = 0; tmp && i < n; i++)
        if (tmp[i]) {
            unlink(tmp[i]);
            free(tmp[i]);
        }
    free(tmp);
    free((void *)paths);
    return rc;
}

uint64_t *opp_summary_thread_calls(struct opp_stream_meta *sm, const struct opp_summarized *sum)
{
    size_t n = sm->ld.m->nthreads;
    uint64_t *c = calloc(n ? n : 1, sizeof *c);
    if (!c)
        return NULL;
    for (size_t i = 0; i < n && i < sm->nlast; i++)
        c[i] = sm->calls[i];
    for (size_t i = 0; i < sum->nthreads; i++) {
        int64_t ti = opp_stream_meta_thread(sm, sum->threads[i].proc, sum->threads[i].tid);
        if (ti >= 0 && c[ti] >= sum->threads[i].folded)
            c[ti] -= sum->threads[i].folded;
    }
    return c;
}
