/* `opprof export sqlite`: the loaded trace as an SQLite database in the
 * schema of docs/SQLITE.md (version OPP_SQLITE_SCHEMA): one transaction,
 * one prepared statement per table, indexes made after the rows. */
#include "exports/export.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model.h"
#include "analysis/step_times.h"
#include "ops.h"
#include "utf8.h"

#ifdef OPP_HAVE_SQLITE
#include <sqlite3.h>

#define uthash_nonfatal_oom(elt) (shapes_oom = 1)
static int shapes_oom;
#include <uthash.h>

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
 * (static or alive until the rows are written). */
struct val {
    char type;
    union {
        int64_t i;
        const char *t;
    };
};

/* The values of the kinds in types (at most COLS_MAX): 'i' int64, 'u' uint64 (as int64),
 * 'z' uint64 with 0 as NULL (an id that is not there), 't' text (NULL: SQL
 * NULL). */
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
        case 't': {
            const char *t = va_arg(ap, const char *);
            v[i] = t ? (struct val){.type = 't', .t = t} : (struct val){.type = 'n'};
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

static void inserter_row(struct db *d, struct inserter *in, const char *types, ...)
{
    if (d->failed)
        return;
    va_list ap;
    va_start(ap, types);
    vals(in->v + in->n * in->ncols, types, ap);
    va_end(ap);
    if (++in->n < BATCH)
        return;
    bind(in->many, in->v, BATCH * in->ncols);
    step(d, in->many);
    in->n = 0;
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

static void put_meta(struct db *d, const struct opp_model *m)
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
 * `strings` (ids from the trace's last on), a call's row holds its id. */
struct shape_id {
    UT_hash_handle hh;
    uint32_t id;
    size_t len;
    int64_t key[]; /* n, then each operand's rank and dims */
};

struct shape_ids {
    struct shape_id *map;
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
    struct shape_id *e;
    HASH_FIND(hh, ids->map, key, len * sizeof *key, e);
    if (e)
        return e->id;
    if (!(e = malloc(sizeof *e + len * sizeof *key)))
        return 0;
    e->id = ids->next++;
    e->len = len;
    memcpy(e->key, key, len * sizeof *key);
    HASH_ADD_KEYPTR(hh, ids->map, e->key, len * sizeof *key, e);
    if (shapes_oom) {
        free(e);
        return 0;
    }
    char text[512];
    opp_shapes_format(sh, text, sizeof text);
    row(d, ids->put, "it", (int64_t)e->id, text);
    return e->id;
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
            const struct opp_func *f = opp_event_func(m, t, e);
            const uint64_t *args = opp_event_args(t, e);
            uint32_t n = args ? e->nargs : 0, kind = f->kind;
            struct opp_shapes sh;
            opp_op_shapes(kind, args, n, &sh);
            uint32_t shapes = sh.n ? shape_id(d, &ids, &sh) : 0;
            uint32_t dt = opp_op_dtype(kind, f->dtype, args, n);
            uint64_t corr = opp_kind_base(kind) == OPP_OP_CUDA_API && n > OPP_COL_CUDA_CORR
                                ? args[OPP_COL_CUDA_CORR]
                                : 0;
            uint64_t ext = opp_op_extid(kind, args, n);
            int64_t status = opp_op_status(kind, args, n);
            /* collectives: bytes per rank; CPU memory: + allocated, - freed */
            int64_t bytes = opp_kind_base(kind) == OPP_OP_MEMORY
                                ? opp_cpu_mem_bytes(m, t, e)
                                : (int64_t)opp_op_bytes(kind, args, n);
            inserter_row(d, &in, "uiiuuuiiitztuiizzi", base[ti] + i, (int64_t)ti,
                         e->parent == OPP_NO_PARENT ? (int64_t)-1 : (int64_t)(base[ti] + e->parent),
                         e->begin_ns, e->end_ns, e->self_ns, (int64_t)e->depth, (int64_t)e->name,
                         (int64_t)f->lib, opp_op_kind_name(kind), (uint64_t)shapes,
                         dt ? opp_dtype_name(dt) : NULL, opp_op_flops(kind, dt, args, n), bytes,
                         status, corr, ext, (int64_t)((e->flags & OPP_EV_OPEN) != 0));
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
        inserter_row(d, &in,
                     "iituuiiitui"
                     "iiiiii",
                     (int64_t)i, (int64_t)g->proc, gpu_kind(g->type), g->start_ns, g->end_ns,
                     (int64_t)g->device, (int64_t)g->stream, (int64_t)g->corr,
                     opp_model_str(m, g->name), g->bytes, cpu_op_of(base, g->thread, g->event),
                     (int64_t)(l ? l->grid[0] : 0), (int64_t)(l ? l->grid[1] : 0),
                     (int64_t)(l ? l->grid[2] : 0), (int64_t)(l ? l->block[0] : 0),
                     (int64_t)(l ? l->block[1] : 0), (int64_t)(l ? l->block[2] : 0));
    }
    inserter_close(d, &in);
    inserter_open(d, &in, "gpu_memory", 8);
    for (size_t i = 0; i < m->gpu.nmem && !d->failed; i++) {
        const struct opp_gpu_mem *g = &m->gpu.mem[i];
        inserter_row(d, &in, "iiuiiuii", (int64_t)i, (int64_t)g->proc, g->time_ns,
                     (int64_t)g->device, g->bytes, g->address, (int64_t)g->corr,
                     cpu_op_of(base, g->thread, g->event));
    }
    inserter_close(d, &in);
}

/* The program's own steps, as `opprof report --step` finds them; what
 * they are goes to meta (`steps`). */
static void put_steps(struct db *d, const struct opp_model *m)
{
    struct opp_agg_opts all = {0};
    struct opp_steps st;
    char what[200] = "";
    if (d->failed)
        return;
    if (opp_steps_default(m, &all, &st, what, sizeof what)) {
        snprintf(d->err, d->errlen, "out of memory");
        d->failed = 1;
        return;
    }
    sqlite3_stmt *s = prepare(d, "INSERT INTO meta VALUES ('steps', ?)");
    row(d, s, "t", what);
    sqlite3_finalize(s);
    s = prepare(d, "INSERT INTO steps VALUES (?,?,?,?,?,?)");
    for (size_t i = 0; i < st.n && !d->failed; i++) {
        const struct opp_step *p = &st.steps[i];
        row(d, s, "iiuuuu", (int64_t)i, (int64_t)p->thread, p->begin_ns, p->end_ns, p->cpu_ns,
            p->gpu_ns);
    }
    sqlite3_finalize(s);
    opp_steps_free(&st);
}

int opp_export_sqlite(const struct opp_model *m, const char *path, char *err, size_t errlen)
{
    struct db d = {.err = err, .errlen = errlen};
    if (sqlite3_open_v2(path, &d.h,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        snprintf(err, errlen, "sqlite: cannot create %s: %s", path,
                 d.h ? sqlite3_errmsg(d.h) : "out of memory");
        sqlite3_close(d.h);
        return -1;
    }
    uint64_t *base = calloc(m->nthreads + 1, sizeof *base);
    if (!base) {
        snprintf(err, errlen, "out of memory");
        sqlite3_close(d.h);
        return -1;
    }
    for (size_t i = 0; i < m->nthreads; i++)
        base[i + 1] = base[i] + m->threads[i].nevents;
    /* A new file written once: no journal, no sync until it is closed. */
    if (sqlite3_exec(d.h,
                     "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                     "PRAGMA temp_store=MEMORY;"
                     "PRAGMA cache_size=-131072; BEGIN;",
                     NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(d.h, schema, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(d.h, first_indexes, NULL, NULL, NULL) != SQLITE_OK)
        fail(&d, "schema");
    put_meta(&d, m);
    sqlite3_stmt *s = prepare(&d, "INSERT INTO strings VALUES (?, ?)");
    for (uint32_t i = 0; i < m->nstrs && !d.failed; i++)
        row(&d, s, "it", (int64_t)i, m->strs[i] ? m->strs[i] : "");
    sqlite3_finalize(s);
    put_processes(&d, m);
    put_cpu_ops(&d, m, base);
    put_gpu(&d, m, base);
    put_steps(&d, m);
    if (!d.failed && (sqlite3_exec(d.h, indexes, NULL, NULL, NULL) != SQLITE_OK ||
                      sqlite3_exec(d.h, "COMMIT;", NULL, NULL, NULL) != SQLITE_OK))
        fail(&d, "commit");
    free(base);
    if (sqlite3_close(d.h) != SQLITE_OK && !d.failed) {
        snprintf(err, errlen, "sqlite: cannot close %s", path);
        d.failed = 1;
    }
    return d.failed ? -1 : 0;
}

#else

int opp_export_sqlite(const struct opp_model *m, const char *path, char *err, size_t errlen)
{
    (void)m, (void)path;
    snprintf(err, errlen, "this opprof was built without SQLite (libsqlite3-dev)");
    return -1;
}

#endif
