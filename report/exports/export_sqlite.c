/* `opprof export sqlite`: a trace as an SQLite database in the schema of
 * docs/SQLITE.md (sqlite_rows.h), written as the one pass over the trace
 * hands its calls over (pass.h): one transaction, one prepared statement
 * per table, indexes made after the rows. */
#include "exports/export.h"

#include <stdio.h>

#ifdef OPP_HAVE_SQLITE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/live_blocks.h"
#include "analysis/loader.h"
#include "analysis/model.h"
#include "analysis/pass.h"
#include "analysis/step_stream.h"
#include "analysis/step_times.h"
#include "exports/sqlite_rows.h"
#include "ops.h"

/* A call whose row waits for its parent's id: its parent has not been
 * handed over yet (pass.h: children first), or it is not known to be
 * top-level yet. */
struct pending {
    struct cpu_row r;
    uint32_t seq;
};

/* Where a call that may own GPU work is (it has a correlation or
 * external id, or folded a call): its row's id by its seq. */
struct owner {
    uint32_t seq;
    int64_t id;
};

struct sthread {
    struct pending *v; /* v[base..n): the calls handed over whose parent is not known */
    size_t base, n, cap;
    struct owner *own; /* by seq */
    size_t nown, own_cap;
};

/* What the join keeps of a GPU record: a gpu_ops row and its id (the
 * records' order in the files), or a memory record. */
struct kept {
    union {
        struct gpu_row op;
        struct opp_gpu_mem mem;
    };
    uint64_t id;
    uint8_t memory;
};

struct stream {
    struct db *d;
    struct opp_pass *pass;
    struct opp_model *m;
    struct sthread *th;
    size_t nth;
    struct inserter cpu, gops;
    struct shape_ids ids;
    struct opp_live live;  /* CPU memory blocks, for frees recorded without a size */
    int64_t next, next_op; /* ids */
    int reads;
    int64_t *mem_call;   /* by the model's memory record: its call's row, or -2: not yet seen */
    uint32_t *dem, ndem; /* opp_loader_op_name's */
    int failed;          /* errno */
    struct opp_pass_consumer steps; /* the steps' candidates, read by the same read */
};

static int s_fail(struct stream *z, int err)
{
    if (!z->failed)
        z->failed = err;
    return -err;
}

/* A read starts (again: what an earlier one wrote goes). */
static void s_begin(void *ctx)
{
    struct stream *z = ctx;
    if (z->reads++) {
        z->cpu.n = 0;
        if (!z->d->failed && sqlite3_exec(z->d->h, "DELETE FROM cpu_ops;", NULL, NULL, NULL))
            opp_db_fail(z->d, "DELETE");
    }
    for (size_t i = 0; i < z->nth; i++)
        z->th[i].base = z->th[i].n = z->th[i].nown = 0;
    opp_live_free(&z->live);
    z->next = z->next_op = 0;
    for (size_t i = 0; i < z->m->gpu.nmem; i++)
        z->mem_call[i] = -2;
}

static int s_owner(struct sthread *t, uint32_t seq, int64_t id)
{
    if (opp_loader_grow((void **)&t->own, &t->own_cap, t->nown + 1, sizeof *t->own))
        return -ENOMEM;
    t->own[t->nown++] = (struct owner){seq, id};
    return 0;
}

/* The row id of call seq of thread t, -1 when it owns nothing. */
static int64_t s_owner_id(const struct sthread *t, uint32_t seq)
{
    size_t lo = OPP_PARTITION_POINT(t->nown, k, t->own[k].seq < seq);
    return lo < t->nown && t->own[lo].seq == seq ? t->own[lo].id : -1;
}

/* A call: its children, handed over before it, written with its id (the
 * one it folds gives it its own); it waits for its parent. */
static int s_call(void *ctx, const struct opp_pass_call *c)
{
    struct stream *z = ctx;
    struct sthread *t = &z->th[c->thread];
    if (z->d->failed)
        return -EIO;
    if (c->nkids > t->n - t->base)
        return s_fail(z, EPROTO); /* the pass promises its children */
    struct pending *kids = c->nkids ? t->v + (t->n - c->nkids) : NULL; /* t->v: NULL until one waits */
    int64_t id = -1;
    for (uint32_t k = 0; k < c->nkids && c->folded != OPP_PASS_NONE; k++)
        if (kids[k].seq == c->folded)
            id = kids[k].r.id;
    if (id < 0)
        id = z->next++;
    for (uint32_t k = 0; k < c->nkids && !z->d->failed; k++) {
        if (kids[k].seq == c->folded)
            continue;
        kids[k].r.parent = id;
        opp_sqlite_put_cpu_row(z->d, &z->cpu, &kids[k].r);
    }
    t->n -= c->nkids;
    const struct opp_model *m = z->m;
    const struct opp_process *pr = &m->procs[m->threads[c->thread].proc];
    struct cpu_row r = {.id = id,
                        .parent = -1,
                        .begin = c->begin,
                        .end = c->end,
                        .self = c->end - c->begin > c->kids_ns ? c->end - c->begin - c->kids_ns : 0,
                        .thread = c->thread,
                        .depth = c->depth,
                        .name = c->name,
                        .open = (c->flags & OPP_PASS_OPEN) != 0};
    opp_sqlite_call_values(z->d, &z->ids, &r, &pr->funcs[c->fn], opp_model_str(m, c->name), c->args,
                           c->nargs);
    if (opp_kind_base(r.kind) == OPP_OP_MEMORY) {
        int oom = 0;
        r.bytes = opp_cpu_mem_bytes_read(&z->live, m->threads[c->thread].proc, r.kind, c->args,
                                         c->nargs, &oom);
        if (oom)
            return s_fail(z, ENOMEM);
    }
    if ((r.corr || r.ext || c->folded != OPP_PASS_NONE) && s_owner(t, c->seq, id))
        return s_fail(z, ENOMEM);
    if (opp_loader_grow((void **)&t->v, &t->cap, t->n + 1, sizeof *t->v))
        return s_fail(z, ENOMEM);
    t->v[t->n++] = (struct pending){r, c->seq};
    return z->d->failed ? -EIO : 0;
}

/* A call known to be top-level: the oldest waiting on its thread. */
static int s_top(void *ctx, const struct opp_pass_call *c)
{
    struct stream *z = ctx;
    struct sthread *t = &z->th[c->thread];
    const struct pending *top = OPP_PASS_STACK_TAKE(t->v, t->base, t->n, c->seq);
    if (!top)
        return s_fail(z, EPROTO);
    opp_sqlite_put_cpu_row(z->d, &z->cpu, &top->r);
    opp_pass_stack_settled(t->v, sizeof *t->v, &t->base, &t->n);
    return z->d->failed ? -EIO : 0;
}

/* A GPU record as the join keeps it: an op numbered as they come, or a
 * memory record. */
static int s_op(void *ctx, uint32_t pi, const struct opp_gpu_rec *g, void *op)
{
    struct stream *z = ctx;
    struct kept k = {0};
    if (g->type == OPP_GPU_MEMORY) {
        k.memory = 1;
        k.mem = (struct opp_gpu_mem){
            .time_ns = opp_loader_shifted(&opp_pass_meta(z->pass)->ld, g->f[OPP_GF_START]),
            .address = g->f[OPP_GF_M_ADDRESS],
            .corr = opp_corr_id(g->f[OPP_GF_CORRELATION]),
            .proc = pi,
            .device = opp_clamp_u32(g->f[OPP_GF_DEVICE])};
        memcpy(op, &k, sizeof k);
        return 0;
    }
    struct opp_gpu_op o;
    struct opp_gpu_launch l;
    opp_gpu_op_decode(g, pi, &o, &l);
    if (g->type == OPP_GPU_SYNC || g->type == OPP_GPU_OVERHEAD) { /* the pass shifts the rest */
        o.start_ns = opp_loader_shifted(&opp_pass_meta(z->pass)->ld, o.start_ns);
        o.end_ns = opp_loader_shifted(&opp_pass_meta(z->pass)->ld, o.end_ns);
    }
    uint32_t name = opp_loader_op_name(&opp_pass_meta(z->pass)->ld, &o, z->dem, z->ndem);
    if (name == UINT32_MAX)
        return -ENOMEM;
    k.op = (struct gpu_row){.start = o.start_ns,
                            .end = o.end_ns,
                            .bytes = o.bytes,
                            .corr = o.corr,
                            .proc = pi,
                            .device = o.device,
                            .stream = o.stream,
                            .name = name,
                            .type = o.type};
    for (int i = 0; o.type == OPP_GPU_KERNEL && i < 3; i++) {
        k.op.grid[i] = l.grid[i];
        k.op.block[i] = l.block[i];
    }
    k.id = (uint64_t)z->next_op++;
    memcpy(op, &k, sizeof k);
    return 0;
}

/* The model's memory record that k is (by time, then as read: the first
 * of those alike not yet seen), or -1. */
static int64_t s_mem_index(const struct stream *z, const struct opp_gpu_mem *k)
{
    const struct opp_gpu *gpu = &z->m->gpu;
    size_t lo = 0, hi = gpu->nmem;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (gpu->mem[mid].time_ns < k->time_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < gpu->nmem && gpu->mem[lo].time_ns == k->time_ns; lo++) {
        const struct opp_gpu_mem *r = &gpu->mem[lo];
        if (z->mem_call[lo] == -2 && r->proc == k->proc && r->address == k->address &&
            r->corr == k->corr && r->device == k->device)
            return (int64_t)lo;
    }
    return -1;
}

/* A GPU record with the call that owns it (NULL: none). */
static void s_owned(void *ctx, const struct opp_gpu_call *c, const void *op)
{
    struct stream *z = ctx;
    struct kept k;
    memcpy(&k, op, sizeof k); /* where the join keeps it: unaligned */
    int64_t call = c ? s_owner_id(&z->th[c->thread], c->seq) : -1;
    if (k.memory) {
        int64_t i = s_mem_index(z, &k.mem);
        if (i >= 0)
            z->mem_call[i] = call;
        return;
    }
    opp_sqlite_put_gpu_row(z->d, &z->gops, z->m, (int64_t)k.id, &k.op, call);
}

/* 0, 1 when the pass cannot read the traces (or a summary: the loaded
 * model's refusal says so), -1 (err). */
static int stream_export(struct db *d, struct opp_pass *p, struct opp_step_stream *ss, char *err,
                         size_t errlen)
{
    struct opp_model *m = opp_pass_model(p);
    struct stream z = {.d = d, .pass = p, .m = m, .nth = m->nthreads, .ids = {.pass = p}};
    if (opp_step_stream_tap(ss, NULL, &z.steps))
        return opp_err_oom(err, errlen);
    z.th = calloc(z.nth ? z.nth : 1, sizeof *z.th);
    z.mem_call = malloc((m->gpu.nmem ? m->gpu.nmem : 1) * sizeof *z.mem_call);
    z.dem = opp_loader_dem_new(m, &z.ndem);
    int rc = -1;
    if (!z.th || !z.mem_call || !z.dem) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    opp_inserter_open(d, &z.cpu, "cpu_ops", 18);
    opp_inserter_open(d, &z.gops, "gpu_ops", 17);
    const struct opp_pass_consumer c = {.ctx = &z,
                                        .begin = s_begin,
                                        .call = s_call,
                                        .top = s_top,
                                        .op_bytes = sizeof(struct kept),
                                        .op = s_op,
                                        .owned = s_owned,
                                        .also = &z.steps};
    char perr[600] = ""; /* err holds SQLite's message, if any */
    rc = opp_pass_run(p, &c, perr, sizeof perr);
    for (size_t i = 0; i < z.nth && !rc; i++) /* the pass settles every call: none is left */
        if (z.th[i].n != z.th[i].base)
            s_fail(&z, EPROTO);
    if (!rc && z.failed) {
        snprintf(perr, sizeof perr, "cannot write the export: %s", strerror(z.failed));
        rc = -1;
    }
    if (rc && !d->failed)
        snprintf(err, errlen, "%s", perr);
    opp_inserter_close(d, &z.cpu);
    opp_inserter_close(d, &z.gops);
    if (!rc) {
        struct inserter in;
        opp_inserter_open(d, &in, "gpu_memory", 8);
        for (size_t i = 0; i < m->gpu.nmem && !d->failed; i++)
            opp_sqlite_put_gpu_mem_row(d, &in, (int64_t)i, &m->gpu.mem[i],
                                       z.mem_call[i] >= 0 ? z.mem_call[i] : -1);
        opp_inserter_close(d, &in);
        opp_sqlite_put_strings(d, m); /* shapes' texts interned among the names */
    }
out:
    for (size_t i = 0; i < z.nth && z.th; i++) {
        free(z.th[i].v);
        free(z.th[i].own);
    }
    free(z.th);
    free(z.mem_call);
    free(z.dem);
    opp_live_free(&z.live);
    opp_sqlite_shape_ids_free(&z.ids);
    return rc;
}

int opp_export_sqlite(struct opp_pass *p, const char *path, char *err, size_t errlen)
{
    /* the steps' candidates read with the rows, their GPU work after */
    struct opp_step_stream *ss = opp_step_stream_over(p, err, errlen);
    struct db d;
    if (!ss || opp_sqlite_open(&d, path, err, errlen)) {
        opp_step_stream_free(ss);
        return -1;
    }
    const struct opp_model *m = opp_pass_model(p);
    opp_sqlite_put_processes(&d, m);
    int rc = stream_export(&d, p, ss, err, errlen);
    struct opp_agg_opts all = {0};
    struct opp_steps st;
    char what[200] = "";
    if (!rc && !(rc = opp_step_stream_steps(ss, &all, NULL, &st, what, sizeof what, err, errlen))) {
        opp_sqlite_put_meta(&d, m, what);
        opp_sqlite_put_steps(&d, &st);
        opp_steps_free(&st);
    }
    opp_step_stream_free(ss);
    if (rc && !d.failed)
        d.failed = 1; /* err says why */
    if (!rc && m->sum.warning[0])
        snprintf(err, errlen, "%s", m->sum.warning);
    int closed = opp_sqlite_close(&d, path);
    return rc || closed ? -1 : 0;
}

#else

int opp_export_sqlite(struct opp_pass *p, const char *path, char *err, size_t errlen)
{
    (void)p, (void)path;
    snprintf(err, errlen, "this opprof was built without SQLite (libsqlite3-dev)");
    return -1;
}

#endif
