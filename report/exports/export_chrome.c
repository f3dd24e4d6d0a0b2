/* `opprof export chrome`: the trace as Chrome trace JSON in the schema
 * Kineto writes, for Perfetto, chrome://tracing and HTA. Two streaming
 * passes over the file: the first keeps only what is small (processes,
 * function tables, thread names, strings, devices, the earliest time), the
 * second writes each event as it is read. Memory does not grow with the
 * number of events. Several traces (one per host) are read file after file
 * in each pass, merged as opp_model_load_many merges them: serials of the
 * k-th file offset by k << 24, its times moved onto the first file's clock. */
#include "exports/export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "exports/chrome.h"

static void bits_free(struct bits *b)
{
    OPP_HASH_FREE(b->pages);
    b->last = NULL;
}

static void free_all(struct chrome *x)
{
    struct xproc *p, *pt;
    HASH_ITER(hh, x->procs, p, pt)
    {
        HASH_DEL(x->procs, p);
        for (uint32_t i = 0; i < p->nfuncs; i++)
            free(p->funcs[i].lib), free(p->funcs[i].name);
        free(p->funcs);
        bits_free(&p->has_gpu);
        bits_free(&p->has_call);
        free(p->exe);
        free(p->host);
        free(p);
    }
    OPP_HASH_FREE(x->pids);
    struct xstr *s, *st;
    HASH_ITER(hh, x->strs, s, st)
    {
        HASH_DEL(x->strs, s);
        free(s->text);
        free(s);
    }
    OPP_HASH_FREE(x->streams);
    opp_live_free(&x->blocks);
    OPP_HASH_FREE(x->pystacks);
    opp_chrome_pyspans_drop(x);
    OPP_HASH_FREE(x->devices);
}

/* After pass 1: Chrome's pid for each file's pids and devices. A number an
 * earlier file already shows is moved up by 2^22 (Linux's largest pid_max)
 * until free, so that two hosts' processes (or GPUs) never share a track. */
static int assign_pids(struct chrome *x)
{
    struct xkey *taken = NULL, *k;
    int rc = 0;
    for (size_t f = 0; f < x->nfiles && !rc; f++) {
        struct xpid *e, *et;
        HASH_ITER(hh, x->pids, e, et)
        {
            if (e->key >> 32 != f)
                continue;
            uint64_t c = (uint32_t)e->key;
            for (;;) {
                HASH_FIND(hh, taken, &c, sizeof c, k);
                if (!k)
                    break;
                c += 1u << 22;
            }
            if (c > UINT32_MAX || !(k = malloc(sizeof *k))) { /* the first: never, with real pids */
                rc = -1;
                break;
            }
            e->cpid = (uint32_t)c;
            k->key = c;
            HASH_ADD(hh, taken, key, sizeof k->key, k);
            if (x->oom) {
                free(k);
                rc = -1;
                break;
            }
        }
    }
    OPP_HASH_FREE(taken);
    struct xproc *p, *pt;
    HASH_ITER(hh, x->procs, p, pt)
    {
        x->cur = p->file;
        p->cpid = opp_chrome_pid(x, p->pid);
    }
    return rc;
}

/* Read every file in turn with v; 0 or -1 (err set). sum: the first file's
 * summary, with the others' warning when it has none. */
static int read_all(struct chrome *x, const struct opp_tr_visitor *v, struct opp_tr_summary *sum,
                    char *err, size_t errlen, int (*after)(struct chrome *))
{
    for (x->cur = 0; x->cur < x->nfiles; x->cur++) {
        struct opp_tr_summary s;
        const char *path = x->files[x->cur].path;
        x->base = (uint32_t)x->cur << 24;
        memset(x->mem_total, 0, sizeof x->mem_total); /* another host's devices */
        if (opp_trace_read(path, v, x, x->cur ? &s : sum, err, errlen) < 0)
            return -1;
        if (after && after(x)) {
            snprintf(err, errlen, "cannot export %s: %s", path,
                     x->oom ? "out of memory" : "cannot write");
            return -1;
        }
        if (x->oom) {
            snprintf(err, errlen, "cannot export %s: out of memory", path);
            return -1;
        }
        if ((x->cur ? &s : sum)->summary) {
            snprintf(err, errlen,
                     "%s is a summary trace (OPPROF_MODE=summary: calls added up by call path, "
                     "without their times); the Chrome export needs every call: record without "
                     "OPPROF_MODE=summary",
                     path);
            return -1;
        }
        if (x->cur && !sum->warning[0] && s.warning[0])
            snprintf(sum->warning, sizeof sum->warning, "%.200s: %.300s", path, s.warning);
    }
    x->cur = 0;
    x->base = 0;
    return 0;
}

int opp_export_chrome(const char *const *traces, size_t ntraces, const struct opp_chrome_opts *o,
                      FILE *out, char *err, size_t errlen)
{
    int64_t rank = o ? o->rank : -1;
    if (!ntraces || ntraces > OPP_CHROME_MAX_TRACES) {
        snprintf(err, errlen, "%s", ntraces ? "too many traces (at most 256)" : "no trace");
        return -1;
    }
    if (opp_trace_distinct(traces, ntraces, err, errlen))
        return -1;
    struct chrome *x = calloc(1, sizeof *x);
    struct xfile *files = calloc(ntraces, sizeof *files);
    if (!x || !files) {
        free(x);
        free(files);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < ntraces; i++)
        files[i].path = traces[i];
    x->files = files;
    x->nfiles = ntraces;
    x->out = out;
    /* one writer: no stdio lock per call, and larger writes */
    __fsetlocking(out, FSETLOCKING_BYCALLER);
    setvbuf(out, NULL, _IOFBF, 1 << 20);
    x->base_ns = UINT64_MAX;
    x->first = 1;
    x->only_rank = rank;
    x->from_ns = o ? o->from_ns : 0;
    x->to_ns = o && o->to_ns ? o->to_ns : UINT64_MAX;
    struct opp_tr_summary sum;
    static const struct opp_tr_visitor v2 = {.process = opp_chrome_process,
                                             .thread = opp_chrome_thread,
                                             .event = opp_chrome_event,
                                             .gpu = opp_chrome_gpu};
    int rc = -1;
    if (read_all(x, &opp_chrome_scan, &sum, err, errlen, NULL) < 0)
        goto out;
    if (assign_pids(x)) {
        snprintf(err, errlen, "cannot export %s: out of memory", traces[0]);
        goto out;
    }
    if (x->base_ns == UINT64_MAX)
        x->base_ns = 0;
    /* The wall-clock time of ts 0, through the first file's pair of clocks. */
    uint64_t base_real = 0;
    if (files[0].have_shift && x->ref >= 0)
        base_real = (uint64_t)x->ref + x->base_ns;
    if (rank >= 0) {
        int any = 0;
        struct xproc *p, *pt;
        HASH_ITER(hh, x->procs, p, pt)
        any |= p->rank == rank;
        if (!any) {
            if (ntraces == 1)
                snprintf(err, errlen, "no process of %s has rank %" PRId64, traces[0], rank);
            else
                snprintf(err, errlen, "no process of the %zu traces has rank %" PRId64, ntraces,
                         rank);
            rc = OPP_EXPORT_NOT_HELD;
            goto out;
        }
    }
    opp_chrome_head(x, base_real);
    if (read_all(x, &v2, &sum, err, errlen, opp_chrome_pyspans_end) < 0)
        goto out;
    opp_chrome_tail(x);
    if (fflush(out) || ferror(out)) {
        snprintf(err, errlen, "cannot write the export: %s", strerror(errno));
        goto out;
    }
    if (sum.warning[0])
        snprintf(err, errlen, "%s", sum.warning); /* exported what was readable */
    rc = 0;
out:
    free_all(x);
    free(x);
    free(files);
    return rc;
}
