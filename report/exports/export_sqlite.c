/* `opprof export sqlite`: a trace as an SQLite database in the schema of
 * docs/SQLITE.md (version OPP_SQLITE_SCHEMA), written as the one pass
 * over the trace hands its calls over (pass.h), or from the loaded model
 * where the trace cannot be read that way: one transaction, one prepared
 * statement per table, indexes made after the rows. */
#include "exports/export.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/live_blocks.h"
#include "analysis/loader.h"
#include "analysis/model.h"
#include "analysis/pass.h"
#include "analysis/step_stream.h"
#include "analysis/step_times.h"
#include "ops.h"
#include "utf8.h"

#ifdef OPP_HAVE_SQLITE
#include <sqlite3.h>

#include <uthash.h> /* out of memory: hash_oom (loader.h) */

#define OPP_SQLITE_SCHEMA 1

static const char schema[] =
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);\n"
    "CREATE TABLE strings (id INTEGER PRIMARY KEY, value TEXT NOT NULL);\n"
    "CREATE TABLE processes (id INTEGER PRIMARY KEY, pid INTEGER, ppid INTEGER,\n"
    "  parent_id INTEGER, rank INTEGER, host TEXT, exe TEXT, cmdline TEXT,\n"
    "  start_ns INTEGER, end_ns INTEGER, end_how TEXT);\n"
    "CREATE TABLE threads (id INTEGER PRIMARY KEY, process_id INTEGER, tid INTEGER,\n"
    "  name TEXT, dropped INTEGER);\n"
    "CREATE TABLE cpu_ops (id INTEGER PRIMARY KEY, thread_id INTEGER, parent_id INTEGER,\n"
    "  start_ns INTEGER, end_ns INTEGER, self_ns INTEGER, depth INTEGER,\n"
    "  name_id INTEGER, library_id INTEGER, kind TEXT, shapes_id INTEGER, dtype TEXT,\n"
    "  flops INTEGER, bytes INTEGER, status INTEGER, correlation_id INTEGER,\n"
    "  external_id INTEGER, open INTEGER);\n"
    "CREATE TABLE gpu_ops (id INTEGER PRIMARY KEY, process_id INTEGER, kind TEXT,\n"
    "  start_ns INTEGER, end_ns INTEGER, device INTEGER, stream INTEGER,\n"
    "  correlation_id INTEGER, name TEXT, bytes INTEGER, cpu_op_id INTEGER,\n"
    "  grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,\n"
    "  block_x INTEGER, block_y INTEGER, block_z INTEGER);\n"
    "CREATE TABLE gpu_memory (id INTEGER PRIMARY KEY, process_id INTEGER, time_ns INTEGER,\n"
    "  device INTEGER, bytes INTEGER, address INTEGER, correlation_id INTEGER,\n"
    "  cpu_op_id INTEGER);\n"
    "CREATE TABLE steps (id INTEGER PRIMARY KEY, thread_id INTEGER, start_ns INTEGER,\n"
    "  end_ns INTEGER, cpu_ns INTEGER, gpu_ns INTEGER);\n";

/* Made before the rows: the calls that have a correlation id are few and
 * come in its order, cheap to add as they come (a scan of every row after). */
static const char first_indexes[] = "CREATE INDEX cpu_ops_correlation ON cpu_ops(correlation_id)\n"
                                    "  WHERE correlation_id IS NOT NULL;\n";

/* Made after the rows: sorted once, not a tree search per row. */
static const char indexes[] = "CREATE INDEX cpu_ops_name ON cpu_ops(name_id);\n"
                              "CREATE INDEX gpu_ops_correlation ON gpu_ops(correlation_id);\n"
                              "CREATE INDEX gpu_ops_name ON gpu_ops(name);\n";

struct db {
    sqlite3 *h;
    char *err;
    size_t errlen;
    int failed;
};

static int fail(struct db *d, const char *what)
{
    if (!d->failed)
        snprintf(d->err, d->errlen, "sqlite: %s: %s", what, sqlite3_errmsg(d->h));
    d->failed = 1;
    return -1;
}

static sqlite3_stmt *prepare(struct db *d, const char *sql)
{
    sqlite3_stmt *s = NULL;
    if (!d->failed && sqlite3_prepare_v2(d->h, sql, -1, &s, NULL) != SQLITE_OK)
        fail(d, sql);
    return s;
}

#define COLS_MAX 32 /* columns of the widest table and more */

/* One value to bind: 'i' int64 (uint64 as int64), 'n' NULL, 't' text
 * (static or alive until the rows are written), 's' text of ours (ASCII:
 * not checked). */
struct val {
    char type;
    union {
        int64_t i;
        const char *t;
    };
};

/* The values of the kinds in types (at most COLS_MAX): 'i' int64, 'u' uint64 (as int64),
 * 'z' uint64 with 0 as NULL (an id that is not there), 't' text (NULL: SQL
 * NULL), 's' the same of our own names (kinds, dtypes: ASCII). */
static void vals(struct val *v, const char *types, va_list ap)
{
    for (int i = 0; types[i]; i++) {
        switch (types[i]) {
        case 'i':
            v[i] = (struct val){.type = 'i', .i = va_arg(ap, int64_t)};
            break;
        case 'u':
            v[i] = (struct val){.type = 'i', .i = (int64_t)va_arg(ap, uint64_t)};
            break;
        case 'z': {
            uint64_t x = va_arg(ap, uint64_t);
            v[i] = x ? (struct val){.type = 'i', .i = (int64_t)x} : (struct val){.type = 'n'};
            break;
        }
        case 't':
        case 's': {
            const char *t = va_arg(ap, const char *);
            v[i] = t ? (struct val){.type = types[i], .t = t} : (struct val){.type = 'n'};
            break;
        }
        default:
            v[i] = (struct val){.type = 'n'};
        }
    }
}

/* Text as SQLite's TEXT promises: UTF-8. A name from the trace that is not
 * gets U+FFFD for each byte that is not (a copy SQLite keeps). */
static void bind_text(sqlite3_stmt *s, int k, const char *t)
{
    if (opp_utf8_valid(t)) {
        sqlite3_bind_text(s, k, t, -1, SQLITE_STATIC);
        return;
    }
    char *fixed = opp_utf8_fixed(t);
    sqlite3_bind_text(s, k, fixed ? fixed : OPP_UTF8_REPLACEMENT, -1, SQLITE_TRANSIENT);
    free(fixed);
}

/* Bind n values to parameters 1 to n. */
static void bind(sqlite3_stmt *s, const struct val *v, int n)
{
    for (int i = 0; i < n; i++) {
        int k = i + 1;
        if (v[i].type == 'i')
            sqlite3_bind_int64(s, k, v[i].i);
        else if (v[i].type == 't')
            bind_text(s, k, v[i].t);
        else if (v[i].type == 's')
            sqlite3_bind_text(s, k, v[i].t, -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(s, k);
    }
}

static void step(struct db *d, sqlite3_stmt *s)
{
    if (sqlite3_step(s) != SQLITE_DONE)
        fail(d, "insert");
    sqlite3_reset(s);
}

/* One row now, through s (INSERT with one ? per type). */
static void row(struct db *d, sqlite3_stmt *s, const char *types, ...)
{
    struct val v[COLS_MAX];
    if (d->failed)
        return;
    va_list ap;
    va_start(ap, types);
    vals(v, types, ap);
    va_end(ap);
    bind(s, v, (int)strlen(types));
    step(d, s);
}

/* A table's rows BATCH at a time: one multi-row INSERT executed per
 * BATCH rows (a step per row was a third of the export's time), the last
 * rows one by one. */
#define BATCH 32

struct inserter {
    sqlite3_stmt *many, *one;
    int ncols, n;
    struct val v[BATCH * COLS_MAX];
};

static void inserter_open(struct db *d, struct inserter *in, const char *table, int ncols)
{
    char tuple[2 * COLS_MAX + 2], sql[BATCH * (2 * COLS_MAX + 3) + 64];
    size_t w = 0;
    for (int c = 0; c < ncols; c++) {
        tuple[w++] = c ? ',' : '(';
        tuple[w++] = '?';
    }
    tuple[w++] = ')';
    tuple[w] = 0;
    size_t len = (size_t)snprintf(sql, sizeof sql, "INSERT INTO %s VALUES %s", table, tuple);
    in->one = prepare(d, sql);
    for (int r = 1; r < BATCH; r++)
        len += (size_t)snprintf(sql + len, sizeof sql - len, ",%s", tuple);
    in->many = prepare(d, sql);
    in->ncols = ncols;
    in->n = 0;
}

/* The row whose values (in->ncols) were put at in->v + in->n * ncols. */
static void inserter_add(struct db *d, struct inserter *in)
{
    if (++in->n < BATCH)
        return;
    bind(in->many, in->v, BATCH * in->ncols);
    step(d, in->many);
    in->n = 0;
}

static void inserter_row(struct db *d, struct inserter *in, const char *types, ...)
{
    if (d->failed)
        return;
    va_list ap;
    va_start(ap, types);
    vals(in->v + in->n * in->ncols, types, ap);
    va_end(ap);
    inserter_add(d, in);
}

static void inserter_close(struct db *d, struct inserter *in)
{
    for (int r = 0; r < in->n && !d->failed; r++) {
        bind(in->one, in->v + r * in->ncols, in->ncols);
        step(d, in->one);
    }
    sqlite3_finalize(in->many);
    sqlite3_finalize(in->one);
}

static const char *end_how(const struct opp_process *p)
{
    return p->end_how || p->exit_how ? opp_process_end_name(p) : NULL;
}

static const char *gpu_kind(uint8_t type)
{
    switch (type) {
    case OPP_GPU_KERNEL:
        return "kernel";
    case OPP_GPU_MEMCPY:
        return "memcpy";
    case OPP_GPU_MEMSET:
        return "memset";
    case OPP_GPU_SYNC:
        return "sync";
    case OPP_GPU_OVERHEAD:
        return "overhead";
    }
    return "other";
}

/* The metadata; steps: what the steps rows are. */
static void put_meta(struct db *d, const struct opp_model *m, const char *steps)
{
    sqlite3_stmt *s = prepare(d, "INSERT INTO meta VALUES (?, ?)");
    char v[64];
    snprintf(v, sizeof v, "%d", OPP_SQLITE_SCHEMA);
    row(d, s, "tt", "schema_version", v);
    row(d, s, "tt", "opprof_version", OPPROF_VERSION);
    snprintf(v, sizeof v, "%u", m->sum.version);
    row(d, s, "tt", "trace_format", v);
    row(d, s, "tt", "clock", "CLOCK_MONOTONIC ns");
    row(d, s, "tt", "complete", m->sum.complete && !m->procs_cut ? "1" : "0");
    const char *host = m->nprocs ? opp_process_info(&m->procs[0], "host") : NULL;
    row(d, s, "tt", "host", host);
    row(d, s, "tt", "steps", steps);
    sqlite3_finalize(s);
}

/* The model's strings, ids as they are (shapes' texts among them, or
 * after them: shape_ids). */
static void put_strings(struct db *d, const struct opp_model *m)
{
    sqlite3_stmt *s = prepare(d, "INSERT INTO strings VALUES (?, ?)");
    for (uint32_t i = 0; i < m->nstrs && !d->failed; i++)
        row(d, s, "it", (int64_t)i, m->strs[i] ? m->strs[i] : "");
    sqlite3_finalize(s);
}

static void put_processes(struct db *d, const struct opp_model *m)
{
    sqlite3_stmt *sp = prepare(d, "INSERT INTO processes VALUES (?,?,?,?,?,?,?,?,?,?,?)");
    for (size_t i = 0; i < m->nprocs && !d->failed; i++) {
        const struct opp_process *p = &m->procs[i];
        char cmd[4096];
        size_t len = 0;
        cmd[0] = 0;
        for (uint32_t a = 0; a < p->argc && len < sizeof cmd; a++) {
            int w = snprintf(cmd + len, sizeof cmd - len, "%s%s", a ? " " : "", p->argv[a]);
            len += w > 0 ? (size_t)w : 0;
        }
        row(d, sp, "iiiiitttiit", (int64_t)i, (int64_t)p->pid, (int64_t)p->ppid,
            p->parent_proc ? (int64_t)p->parent_proc - 1 : (int64_t)-1, p->rank,
            opp_process_info(p, "host"), p->exe, cmd, (int64_t)p->start_ns,
            p->end_how ? (int64_t)p->end_ns : (int64_t)-1, end_how(p));
    }
    sqlite3_finalize(sp);
    sqlite3_stmt *st = prepare(d, "INSERT INTO threads VALUES (?,?,?,?,?)");
    for (size_t i = 0; i < m->nthreads && !d->failed; i++) {
        const struct opp_thread *t = &m->threads[i];
        row(d, st, "iiitu", (int64_t)i, (int64_t)t->proc, (int64_t)t->tid, t->name, t->dropped);
    }
    sqlite3_finalize(st);
}

/* Shapes as strings: each distinct one formatted once and stored in
 * `strings`, a call's row holds its id: interned in the pass's model
 * (pass), else given ids from the model's last string on (next) and
 * written at once. */
struct shape_id {
    UT_hash_handle hh;
    uint32_t id;
    size_t len;
    int64_t key[]; /* n, then each operand's rank and dims */
};

struct shape_ids {
    struct shape_id *map;
    struct shape_id *last; /* the one found last: calls alike come in runs */
    struct opp_pass *pass;
    uint32_t next;
    sqlite3_stmt *put; /* INSERT INTO strings */
};

/* The strings.id of sh's text (0 when out of memory: then "" is named). */
static uint32_t shape_id(struct db *d, struct shape_ids *ids, const struct opp_shapes *sh)
{
    int64_t key[1 + OPP_SHAPES_MAX * (1 + OPP_RANK_MAX)];
    size_t len = 0;
    key[len++] = sh->n;
    for (int i = 0; i < sh->n; i++) {
        key[len++] = sh->rank[i];
        for (int r = 0; r < sh->rank[i]; r++)
            key[len++] = sh->dim[i][r];
    }
    struct shape_id *e = ids->last;
    if (e && e->len == len && !memcmp(e->key, key, len * sizeof *key))
        return e->id;
    HASH_FIND(hh, ids->map, key, len * sizeof *key, e);
    if (e) {
        ids->last = e;
        return e->id;
    }
    char text[512];
    opp_shapes_format(sh, text, sizeof text);
    uint32_t id = ids->pass ? opp_pass_intern(ids->pass, text) : ids->next;
    if (id == UINT32_MAX || !(e = malloc(sizeof *e + len * sizeof *key)))
        return 0;
    e->id = id;
    e->len = len;
    memcpy(e->key, key, len * sizeof *key);
    int hash_oom = 0;
    HASH_ADD_KEYPTR(hh, ids->map, e->key, len * sizeof *key, e);
    if (hash_oom) {
        free(e);
        return 0;
    }
    if (!ids->pass)
        row(d, ids->put, "it", (int64_t)ids->next++, text);
    return id;
}

static void shape_ids_free(struct shape_ids *ids)
{
    struct shape_id *e, *tmp;
    HASH_ITER(hh, ids->map, e, tmp)
    {
        HASH_DEL(ids->map, e);
        free(e);
    }
    sqlite3_finalize(ids->put);
}

/* One cpu_ops row. */
struct cpu_row {
    int64_t id, parent; /* -1: none */
    uint64_t begin, end, self, flops, corr, ext;
    int64_t bytes, status;
    uint32_t thread, depth, name, lib, shapes, dtype, kind, open;
};

/* What a call of f with args[0..n) records: its kind, library, shapes,
 * dtype, FLOPs, bytes (CPU memory's: the caller's), status and ids. */
static void call_values(struct db *d, struct shape_ids *ids, struct cpu_row *r,
                        const struct opp_func *f, const uint64_t *args, uint32_t n)
{
    uint32_t kind = f->kind;
    n = args ? n : 0;
    struct opp_shapes sh;
    opp_op_shapes(kind, args, n, &sh);
    r->kind = kind;
    r->lib = f->lib;
    r->shapes = sh.n ? shape_id(d, ids, &sh) : 0;
    r->dtype = opp_op_dtype(kind, f->dtype, args, n);
    r->flops = opp_op_flops(kind, r->dtype, args, n);
    r->corr = opp_kind_base(kind) == OPP_OP_CUDA_API && n > OPP_COL_CUDA_CORR
                  ? args[OPP_COL_CUDA_CORR]
                  : 0;
    r->ext = opp_op_extid(kind, args, n);
    r->status = opp_op_status(kind, args, n);
    r->bytes = opp_kind_base(kind) == OPP_OP_MEMORY ? 0 : (int64_t)opp_op_bytes(kind, args, n);
}

/* As inserter_row's types "iiiuuuiiiszsuiizzi" would, without walking
 * them: the rows are many. */
static void put_cpu_row(struct db *d, struct inserter *in, const struct cpu_row *r)
{
    if (d->failed)
        return;
#define I(x) ((struct val){.type = 'i', .i = (int64_t)(x)})
#define Z(x) ((x) ? I(x) : (struct val){.type = 'n'})
#define S(x) ((x) ? (struct val){.type = 's', .t = (x)} : (struct val){.type = 'n'})
    struct val *v = in->v + in->n * in->ncols;
    const char *dtype = r->dtype ? opp_dtype_name(r->dtype) : NULL;
    v[0] = I(r->id), v[1] = I(r->thread), v[2] = I(r->parent), v[3] = I(r->begin);
    v[4] = I(r->end), v[5] = I(r->self), v[6] = I(r->depth), v[7] = I(r->name);
    v[8] = I(r->lib), v[9] = S(opp_op_kind_name(r->kind)), v[10] = Z(r->shapes);
    v[11] = S(dtype), v[12] = I(r->flops), v[13] = I(r->bytes), v[14] = I(r->status);
    v[15] = Z(r->corr), v[16] = Z(r->ext), v[17] = I(r->open);
#undef I
#undef Z
#undef S
    inserter_add(d, in);
}

/* A gpu_ops row (not its id and call's) from record g of process index pi:
 * its name's string id from ld (dem[0..ndem): opp_loader_op_name's). */
struct gpu_row {
    uint64_t start, end, bytes, corr;
    uint32_t proc, device, stream, name, grid[3], block[3];
    uint8_t type;
};

static void put_gpu_row(struct db *d, struct inserter *in, const struct opp_model *m, int64_t id,
                        const struct gpu_row *g, int64_t call)
{
    inserter_row(d, in,
                 "iisuuiiitui"
                 "iiiiii",
                 id, (int64_t)g->proc, gpu_kind(g->type), g->start, g->end, (int64_t)g->device,
                 (int64_t)g->stream, (int64_t)g->corr, opp_model_str(m, g->name), g->bytes, call,
                 (int64_t)g->grid[0], (int64_t)g->grid[1], (int64_t)g->grid[2],
                 (int64_t)g->block[0], (int64_t)g->block[1], (int64_t)g->block[2]);
}

static void put_gpu_mem_row(struct db *d, struct inserter *in, int64_t id,
                            const struct opp_gpu_mem *g, int64_t call)
{
    inserter_row(d, in, "iiuiiuii", id, (int64_t)g->proc, g->time_ns, (int64_t)g->device, g->bytes,
                 g->address, (int64_t)g->corr, call);
}

/* The program's own steps, as `opprof report --step` finds them. */
static void put_steps(struct db *d, const struct opp_steps *st)
{
    sqlite3_stmt *s = prepare(d, "INSERT INTO steps VALUES (?,?,?,?,?,?)");
    for (size_t i = 0; i < st->n && !d->failed; i++) {
        const struct opp_step *p = &st->steps[i];
        row(d, s, "iiuuuu", (int64_t)i, (int64_t)p->thread, p->begin_ns, p->end_ns, p->cpu_ns,
            p->gpu_ns);
    }
    sqlite3_finalize(s);
}

/* A new database at path, in its transaction with the schema made. 0, or
 * -1 (err). */
static int db_open(struct db *d, const char *path, char *err, size_t errlen)
{
    *d = (struct db){.err = err, .errlen = errlen};
    if (sqlite3_open_v2(path, &d->h,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        snprintf(err, errlen, "sqlite: cannot create %s: %s", path,
                 d->h ? sqlite3_errmsg(d->h) : "out of memory");
        sqlite3_close(d->h);
        return -1;
    }
    /* A new file written once: no journal, no sync until it is closed.
     * The indexes are sorted in temporary files, not in memory (in memory
     * the name index of 10M rows took 400 MiB and was slower), with a 64
     * MiB page cache. */
    if (sqlite3_exec(d->h,
                     "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                     "PRAGMA temp_store=FILE; PRAGMA cache_size=-65536; BEGIN;",
                     NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(d->h, schema, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(d->h, first_indexes, NULL, NULL, NULL) != SQLITE_OK)
        fail(d, "schema");
    return 0;
}

/* The indexes, the commit, the file closed. 0, or -1 (err). */
static int db_close(struct db *d, const char *path)
{
    if (!d->failed && (sqlite3_exec(d->h, indexes, NULL, NULL, NULL) != SQLITE_OK ||
                       sqlite3_exec(d->h, "COMMIT;", NULL, NULL, NULL) != SQLITE_OK))
        fail(d, "commit");
    if (sqlite3_close(d->h) != SQLITE_OK && !d->failed) {
        snprintf(d->err, d->errlen, "sqlite: cannot close %s", path);
        d->failed = 1;
    }
    return d->failed ? -1 : 0;
}

/* ---- from the loaded model ---- */

/* cpu_ops ids: the events of thread 0, then thread 1's...: base[t] + i. */
static void put_cpu_ops(struct db *d, const struct opp_model *m, const uint64_t *base)
{
    struct inserter in;
    inserter_open(d, &in, "cpu_ops", 18);
    struct shape_ids ids = {.next = m->nstrs,
                            .put = prepare(d, "INSERT INTO strings VALUES (?, ?)")};
    for (size_t ti = 0; ti < m->nthreads && !d->failed; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        for (size_t i = 0; i < t->nevents && !d->failed; i++) {
            const struct opp_event *e = &t->events[i];
            struct cpu_row r = {
                .id = (int64_t)(base[ti] + i),
                .parent = e->parent == OPP_NO_PARENT ? -1 : (int64_t)(base[ti] + e->parent),
                .begin = e->begin_ns,
                .end = e->end_ns,
                .self = e->self_ns,
                .thread = (uint32_t)ti,
                .depth = e->depth,
                .name = e->name,
                .open = (e->flags & OPP_EV_OPEN) != 0};
            call_values(d, &ids, &r, opp_event_func(m, t, e), opp_event_args(t, e), e->nargs);
            if (opp_kind_base(r.kind) == OPP_OP_MEMORY)
                r.bytes = opp_cpu_mem_bytes(m, t, e);
            put_cpu_row(d, &in, &r);
        }
    }
    inserter_close(d, &in);
    shape_ids_free(&ids);
}

static int64_t cpu_op_of(const uint64_t *base, uint32_t thread, uint32_t event)
{
    return thread == OPP_GPU_NONE ? -1 : (int64_t)(base[thread] + event);
}

static void put_gpu(struct db *d, const struct opp_model *m, const uint64_t *base)
{
    struct inserter in;
    inserter_open(d, &in, "gpu_ops", 17);
    for (size_t i = 0; i < m->gpu.nops && !d->failed; i++) {
        const struct opp_gpu_op *g = &m->gpu.ops[i];
        const struct opp_gpu_launch *l =
            g->launch != OPP_GPU_NONE ? &m->gpu.launches[g->launch] : NULL;
        struct gpu_row r = {.start = g->start_ns,
                            .end = g->end_ns,
                            .bytes = g->bytes,
                            .corr = g->corr,
                            .proc = g->proc,
                            .device = g->device,
                            .stream = g->stream,
                            .name = g->name,
                            .type = g->type};
        for (int k = 0; l && k < 3; k++) {
            r.grid[k] = l->grid[k];
            r.block[k] = l->block[k];
        }
        put_gpu_row(d, &in, m, (int64_t)i, &r, cpu_op_of(base, g->thread, g->event));
    }
    inserter_close(d, &in);
    inserter_open(d, &in, "gpu_memory", 8);
    for (size_t i = 0; i < m->gpu.nmem && !d->failed; i++) {
        const struct opp_gpu_mem *g = &m->gpu.mem[i];
        put_gpu_mem_row(d, &in, (int64_t)i, g, cpu_op_of(base, g->thread, g->event));
    }
    inserter_close(d, &in);
}

int opp_export_sqlite(const struct opp_model *m, const char *path, char *err, size_t errlen)
{
    struct db d;
    struct opp_agg_opts all = {0};
    struct opp_steps st;
    char what[200] = "";
    if (opp_steps_default(m, &all, &st, what, sizeof what)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    uint64_t *base = calloc(m->nthreads + 1, sizeof *base);
    if (!base || db_open(&d, path, err, errlen)) {
        if (!base)
            snprintf(err, errlen, "out of memory");
        free(base);
        opp_steps_free(&st);
        return -1;
    }
    for (size_t i = 0; i < m->nthreads; i++)
        base[i + 1] = base[i] + m->threads[i].nevents;
    put_meta(&d, m, what);
    put_strings(&d, m);
    put_processes(&d, m);
    put_cpu_ops(&d, m, base);
    put_gpu(&d, m, base);
    put_steps(&d, &st);
    free(base);
    opp_steps_free(&st);
    return db_close(&d, path);
}

/* ---- as the pass hands the calls over ---- */

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
 * records' order, as the loaded model numbers them), or a memory record. */
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
    z->steps.begin(z->steps.ctx);
    if (z->reads++) {
        z->cpu.n = 0;
        if (!z->d->failed && sqlite3_exec(z->d->h, "DELETE FROM cpu_ops;", NULL, NULL, NULL))
            fail(z->d, "DELETE");
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
    size_t lo = 0, hi = t->nown;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->own[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
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
    int rc = z->steps.call(z->steps.ctx, c);
    if (rc)
        return rc;
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
        put_cpu_row(z->d, &z->cpu, &kids[k].r);
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
    call_values(z->d, &z->ids, &r, &pr->funcs[c->fn], c->args, c->nargs);
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
    int rc = z->steps.top(z->steps.ctx, c);
    if (rc)
        return rc;
    if (t->base == t->n || t->v[t->base].seq != c->seq)
        return s_fail(z, EPROTO); /* the pass's top-level calls are in the order they came */
    put_cpu_row(z->d, &z->cpu, &t->v[t->base++].r);
    if (t->base == t->n)
        t->base = t->n = 0;
    else if (t->base > 4096 && t->base > t->n / 2) {
        memmove(t->v, t->v + t->base, (t->n - t->base) * sizeof *t->v);
        t->n -= t->base;
        t->base = 0;
    }
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
    put_gpu_row(z->d, &z->gops, z->m, (int64_t)k.id, &k.op, call);
}

/* 0, 1 when the pass cannot read the traces (or a summary: the loaded
 * model's refusal says so), -1 (err). */
static int stream_export(struct db *d, struct opp_pass *p, struct opp_step_stream *ss, char *err,
                         size_t errlen)
{
    struct opp_model *m = opp_pass_model(p);
    struct stream z = {.d = d, .pass = p, .m = m, .nth = m->nthreads, .ids = {.pass = p}};
    if (opp_step_stream_tap(ss, NULL, &z.steps)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    z.th = calloc(z.nth ? z.nth : 1, sizeof *z.th);
    z.mem_call = malloc((m->gpu.nmem ? m->gpu.nmem : 1) * sizeof *z.mem_call);
    z.ndem = m->nstrs;
    z.dem = malloc((z.ndem ? z.ndem : 1) * sizeof *z.dem);
    int rc = -1;
    if (!z.th || !z.mem_call || !z.dem) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    memset(z.dem, 0xff, (z.ndem ? z.ndem : 1) * sizeof *z.dem);
    inserter_open(d, &z.cpu, "cpu_ops", 18);
    inserter_open(d, &z.gops, "gpu_ops", 17);
    const struct opp_pass_consumer c = {.ctx = &z,
                                        .begin = s_begin,
                                        .call = s_call,
                                        .top = s_top,
                                        .op_bytes = sizeof(struct kept),
                                        .op = s_op,
                                        .owned = s_owned};
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
    inserter_close(d, &z.cpu);
    inserter_close(d, &z.gops);
    if (!rc) {
        struct inserter in;
        inserter_open(d, &in, "gpu_memory", 8);
        for (size_t i = 0; i < m->gpu.nmem && !d->failed; i++)
            put_gpu_mem_row(d, &in, (int64_t)i, &m->gpu.mem[i],
                            z.mem_call[i] >= 0 ? z.mem_call[i] : -1);
        inserter_close(d, &in);
        put_strings(d, m); /* shapes' texts interned among the names */
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
    shape_ids_free(&z.ids);
    return rc;
}

int opp_export_sqlite_traces(const char *const *paths, size_t n, const char *path, char *err,
                             size_t errlen)
{
    enum opp_stream_refused why;
    struct opp_pass *p = opp_pass_open(paths, n, &why, err, errlen);
    if (!p)
        return why == OPP_STREAM_ERROR ? -1 : 1;
    /* the steps' candidates read with the rows, their GPU work after */
    struct opp_step_stream *ss = opp_step_stream_over(p, err, errlen);
    struct db d;
    if (!ss || db_open(&d, path, err, errlen)) {
        opp_step_stream_free(ss);
        opp_pass_free(p);
        return -1;
    }
    const struct opp_model *m = opp_pass_model(p);
    put_processes(&d, m);
    int rc = stream_export(&d, p, ss, err, errlen);
    struct opp_agg_opts all = {0};
    struct opp_steps st;
    char what[200] = "";
    if (!rc && !(rc = opp_step_stream_steps(ss, &all, NULL, &st, what, sizeof what, err, errlen))) {
        put_meta(&d, m, what);
        put_steps(&d, &st);
        opp_steps_free(&st);
    }
    opp_step_stream_free(ss);
    if (rc && !d.failed)
        d.failed = 1; /* err says why */
    if (!rc && m->sum.warning[0])
        snprintf(err, errlen, "%s", m->sum.warning);
    opp_pass_free(p);
    int closed = db_close(&d, path);
    return rc ? rc : closed;
}

#else

int opp_export_sqlite(const struct opp_model *m, const char *path, char *err, size_t errlen)
{
    (void)m, (void)path;
    snprintf(err, errlen, "this opprof was built without SQLite (libsqlite3-dev)");
    return -1;
}

int opp_export_sqlite_traces(const char *const *paths, size_t n, const char *path, char *err,
                             size_t errlen)
{
    (void)paths, (void)n, (void)path;
    snprintf(err, errlen, "this opprof was built without SQLite (libsqlite3-dev)");
    return -1;
}

#endif
