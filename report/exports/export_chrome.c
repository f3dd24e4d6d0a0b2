/* `opprof export chrome`: the trace as Chrome trace JSON in the schema
 * Kineto writes, for Perfetto, chrome://tracing and HTA. Reads of the
 * pass as the files give their records (pass.h: a consumer of the files'
 * order), after its first read made the model without calls: where the
 * traces have GPU work, one keeps what is small (each file's devices, the
 * correlation ids that have both a call and GPU work); the last writes
 * each event as it is read. Memory does not grow with the number of
 * events. Several traces (one per host) are merged as the pass merges
 * them: serials of the k-th file offset by k << 24, its times moved onto
 * the first file's clock. */
#include "exports/export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/loader.h"
#include "analysis/ranks.h"
#include "exports/chrome.h"

static void bits_free(struct bits *b)
{
    OPP_HASH_FREE(b->pages);
    b->last = NULL;
}

static void free_all(struct chrome *x)
{
    for (size_t i = 0; x->procs && i < x->m->nprocs; i++) {
        bits_free(&x->procs[i].has_gpu);
        bits_free(&x->procs[i].has_call);
    }
    free(x->procs);
    free(x->hosts);
    free(x->dem);
    OPP_HASH_FREE(x->pids);
    OPP_HASH_FREE(x->streams);
    OPP_HASH_FREE(x->devices);
    opp_live_free(&x->blocks);
    opp_chrome_pyspans_drop(x);
}

/* After the first read: Chrome's pid for each file's pids and devices. A
 * number an earlier file already shows is moved up by 2^22 (Linux's
 * largest pid_max) until free, so that two hosts' processes (or GPUs)
 * never share a track. */
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
            if (OPP_HASH_ADD(taken, key, sizeof k->key, k)) {
                free(k);
                rc = -1;
                break;
            }
        }
    }
    OPP_HASH_FREE(taken);
    for (size_t i = 0; i < x->m->nprocs; i++) {
        x->cur = opp_chrome_file(x, (uint32_t)i);
        x->procs[i].cpid = opp_chrome_pid(x, x->m->procs[i].pid);
    }
    x->cur = 0;
    return rc;
}

/* ts 0: the traces' first known time (the pass's), or a process's end or
 * a device memory record before it (all a trace of no calls has). */
static uint64_t first_time(const struct chrome *x)
{
    const struct opp_model *m = x->m;
    uint64_t t = opp_pass_first_known_ns(x->pass);
    t = t ? t : UINT64_MAX;
    for (size_t i = 0; i < m->nprocs; i++)
        if (m->procs[i].end_how && m->procs[i].end_ns && m->procs[i].end_ns < t)
            t = m->procs[i].end_ns;
    if (m->gpu.nmem && m->gpu.mem[0].time_ns && m->gpu.mem[0].time_ns < t) /* by time */
        t = m->gpu.mem[0].time_ns;
    return t == UINT64_MAX ? 0 : t;
}

/* One read of the pass with c (x its context); 0, or -1 (err said). */
static int read_with(struct chrome *x, struct opp_pass_consumer c, char *err, size_t errlen)
{
    c.ctx = x;
    int rc = opp_pass_run(x->pass, &c, err, errlen);
    if (rc && ferror(x->out))
        snprintf(err, errlen, "cannot write the export: %s", strerror(errno));
    return rc ? -1 : 0;
}

int opp_export_chrome_rank_held(const struct opp_model *m, const char *const *traces,
                                size_t ntraces, int64_t rank, char *err, size_t errlen)
{
    uint32_t files[2];
    int held = opp_rank_files(m, rank, files);
    if (held == 1)
        return 0;
    if (held == 2)
        opp_rank_twice_said(err, errlen, traces[files[0]], traces[files[1]], rank);
    else if (ntraces == 1)
        snprintf(err, errlen, "no process of %s has rank %" PRId64, traces[0], rank);
    else
        snprintf(err, errlen, "no process of the %zu traces has rank %" PRId64, ntraces, rank);
    return OPP_EXPORT_NOT_HELD;
}

/* The export of the pass's traces; 0, -1 (err), OPP_EXPORT_NOT_HELD. */
static int export(struct chrome *x, char *err, size_t errlen)
{
    const struct opp_model *m = x->m;
    x->procs = calloc(m->nprocs ? m->nprocs : 1, sizeof *x->procs);
    x->hosts = calloc(x->nfiles, sizeof *x->hosts);
    x->dem = opp_loader_dem_new(m, &x->ndem);
    if (!x->procs || !x->hosts || !x->dem)
        return opp_err_oom(err, errlen);
    for (size_t i = m->nprocs; i-- > 0;) {
        const char *host = opp_chrome_host(&m->procs[i]);
        if (host)
            x->hosts[opp_chrome_file(x, (uint32_t)i)] = host;
    }
    int rc = 0;
    for (size_t i = 0; i < m->nprocs && !rc; i++)
        rc = opp_chrome_note_pid(x, opp_chrome_file(x, (uint32_t)i), m->procs[i].pid);
    if (rc)
        return opp_err_oom(err, errlen);
    if (m->gpu.records && read_with(x, opp_chrome_scan, err, errlen)) /* devices, arrows */
        return -1;
    if (assign_pids(x)) {
        snprintf(err, errlen, "cannot export %s: out of memory", x->paths[0]);
        return -1;
    }
    x->base_ns = first_time(x);
    /* The wall-clock time of ts 0, through the first file's pair of clocks. */
    const struct opp_loader *ld = &opp_pass_meta(x->pass)->ld;
    uint64_t base_real = ld->have_ref && ld->ref >= 0 ? (uint64_t)ld->ref + x->base_ns : 0;
    if (x->only_rank >= 0 &&
        (rc = opp_export_chrome_rank_held(m, x->paths, x->nfiles, x->only_rank, err, errlen)))
        return rc;
    opp_chrome_head(x, base_real);
    static const struct opp_pass_consumer write = {.read = opp_chrome_call,
                                                   .process = opp_chrome_process,
                                                   .thread = opp_chrome_thread,
                                                   .record = opp_chrome_gpu};
    if (read_with(x, write, err, errlen))
        return -1;
    if (opp_chrome_pyspans_end(x)) {
        snprintf(err, errlen, "cannot write the export: %s", strerror(errno));
        return -1;
    }
    opp_chrome_tail(x);
    return 0;
}

int opp_export_chrome(struct opp_pass *p, const char *const *traces, size_t ntraces,
                      const struct opp_chrome_opts *o, FILE *out, char *err, size_t errlen)
{
    if (!ntraces || ntraces > OPP_CHROME_MAX_TRACES) {
        snprintf(err, errlen, "%s", ntraces ? "too many traces (at most 256)" : "no trace");
        return -1;
    }
    struct chrome x = {.out = out,
                       .pass = p,
                       .m = opp_pass_model(p),
                       .paths = traces,
                       .nfiles = ntraces,
                       .first = 1,
                       .only_rank = o ? o->rank : -1,
                       .from_ns = o ? o->from_ns : 0,
                       .to_ns = o && o->to_ns ? o->to_ns : UINT64_MAX};
    /* one writer: no stdio lock per call (the sink gives the large writes) */
    __fsetlocking(out, FSETLOCKING_BYCALLER);
    int rc = export(&x, err, errlen);
    if (!rc && (fflush(out) || ferror(out))) {
        snprintf(err, errlen, "cannot write the export: %s", strerror(errno));
        rc = -1;
    }
    if (!rc && x.m->sum.warning[0])
        snprintf(err, errlen, "%s", x.m->sum.warning); /* exported what was readable */
    free_all(&x);
    return rc;
}
