/* The SQLite export's schema and the rows both ways of writing it write
 * (sqlite_rows.h). */
#ifdef OPP_HAVE_SQLITE
#include "exports/sqlite_rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pass.h"
#include "ops.h"

static const char schema[] =
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);\n"
    "CREATE TABLE strings (id INTEGER PRIMARY KEY, value TEXT NOT NULL);\n"
    "CREATE TABLE processes (id INTEGER PRIMARY KEY, pid INTEGER, ppid INTEGER,\n"
    "  parent_id INTEGER, rank INTEGER, host TEXT, exe TEXT, cmdline TEXT,\n"
    "  start_ns INTEGER, end_ns INTEGER, end_how TEXT);\n"
    "CREATE TABLE threads (id INTEGER PRIMARY KEY, process_id INTEGER, tid INTEGER,\n"
    "  name TEXT, dropped INTEGER, interrupted INTEGER);\n"
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
    "  end_ns INTEGER, cpu_ns INTEGER, gpu_ns INTEGER);\n"
    /* Made before the rows: the calls that have a correlation id are few
     * and come in its order, cheap to add as they come (a scan of every
     * row after). */
    "CREATE INDEX cpu_ops_correlation ON cpu_ops(correlation_id)\n"
    "  WHERE correlation_id IS NOT NULL;\n";

/* Made after the rows: sorted once, not a tree search per row. */
static const char indexes[] = "CREATE INDEX cpu_ops_name ON cpu_ops(name_id);\n"
                              "CREATE INDEX gpu_ops_correlation ON gpu_ops(correlation_id);\n"
                              "CREATE INDEX gpu_ops_name ON gpu_ops(name);\n";

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

void opp_sqlite_put_meta(struct db *d, const struct opp_model *m, const char *steps)
{
    sqlite3_stmt *s = opp_db_prepare(d, "INSERT INTO meta VALUES (?, ?)");
    char v[64];
    snprintf(v, sizeof v, "%d", OPP_SQLITE_SCHEMA);
    opp_db_row(d, s, "tt", "schema_version", v);
    opp_db_row(d, s, "tt", "opprof_version", OPPROF_VERSION);
    snprintf(v, sizeof v, "%u", m->sum.version);
    opp_db_row(d, s, "tt", "trace_format", v);
    opp_db_row(d, s, "tt", "clock", "CLOCK_MONOTONIC ns");
    opp_db_row(d, s, "tt", "complete", m->sum.complete && !m->procs_cut ? "1" : "0");
    const char *host = m->nprocs ? opp_process_info(&m->procs[0], "host") : NULL;
    opp_db_row(d, s, "tt", "host", host);
    opp_db_row(d, s, "tt", "steps", steps);
    /* every record lost, then apart by why; they add up to it */
    const struct {
        const char *key;
        uint64_t n;
    } drops[] = {{"dropped", m->dropped},
                 {"dropped_full", opp_model_dropped_full(m)},
                 {"dropped_interrupted", m->interrupted},
                 {"dropped_node_bound", m->sum_dropped}};
    for (size_t i = 0; i < sizeof drops / sizeof *drops; i++) {
        snprintf(v, sizeof v, "%llu", (unsigned long long)drops[i].n);
        opp_db_row(d, s, "tt", drops[i].key, v);
    }
    sqlite3_finalize(s);
}

void opp_sqlite_put_strings(struct db *d, const struct opp_model *m)
{
    sqlite3_stmt *s = opp_db_prepare(d, "INSERT INTO strings VALUES (?, ?)");
    for (uint32_t i = 0; i < m->nstrs && !d->failed; i++)
        opp_db_row(d, s, "it", (int64_t)i, m->strs[i] ? m->strs[i] : "");
    sqlite3_finalize(s);
}

void opp_sqlite_put_processes(struct db *d, const struct opp_model *m)
{
    sqlite3_stmt *sp = opp_db_prepare(d, "INSERT INTO processes VALUES (?,?,?,?,?,?,?,?,?,?,?)");
    for (size_t i = 0; i < m->nprocs && !d->failed; i++) {
        const struct opp_process *p = &m->procs[i];
        char cmd[4096];
        size_t len = 0;
        cmd[0] = 0;
        for (uint32_t a = 0; a < p->argc && len < sizeof cmd; a++) {
            int w = snprintf(cmd + len, sizeof cmd - len, "%s%s", a ? " " : "", p->argv[a]);
            len += w > 0 ? (size_t)w : 0;
        }
        opp_db_row(d, sp, "iiiiitttiit", (int64_t)i, (int64_t)p->pid, (int64_t)p->ppid,
                   p->parent_proc ? (int64_t)p->parent_proc - 1 : (int64_t)-1, p->rank,
                   opp_process_info(p, "host"), p->exe, cmd, (int64_t)p->start_ns,
                   p->end_how ? (int64_t)p->end_ns : (int64_t)-1, end_how(p));
    }
    sqlite3_finalize(sp);
    sqlite3_stmt *st = opp_db_prepare(d, "INSERT INTO threads VALUES (?,?,?,?,?,?)");
    for (size_t i = 0; i < m->nthreads && !d->failed; i++) {
        const struct opp_thread *t = &m->threads[i];
        opp_db_row(d, st, "iiituu", (int64_t)i, (int64_t)t->proc, (int64_t)t->tid, t->name,
                   t->dropped, t->interrupted);
    }
    sqlite3_finalize(st);
}

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
    if (OPP_HASH_ADD_KEYPTR(ids->map, e->key, len * sizeof *key, e)) {
        free(e);
        return 0;
    }
    if (!ids->pass)
        opp_db_row(d, ids->put, "it", (int64_t)ids->next++, text);
    return id;
}

void opp_sqlite_shape_ids_free(struct shape_ids *ids)
{
    OPP_HASH_FREE(ids->map);
    sqlite3_finalize(ids->put);
}

/* What a call of f named name with args[0..n) records: its kind, library, shapes,
 * dtype, FLOPs, bytes (CPU memory's: the caller's), status and ids. */
void opp_sqlite_call_values(struct db *d, struct shape_ids *ids, struct cpu_row *r,
                            const struct opp_func *f, const char *name, const uint64_t *args,
                            uint32_t n)
{
    uint32_t kind = f->kind;
    n = args ? n : 0;
    struct opp_shapes sh;
    opp_op_shapes(kind, args, n, &sh);
    r->kind = kind;
    r->lib = f->lib;
    r->shapes = sh.n ? shape_id(d, ids, &sh) : 0;
    r->dtype = opp_op_dtype(kind, f->dtype, args, n);
    r->flops = opp_op_flops(kind, r->dtype, name, args, n);
    r->corr = opp_kind_base(kind) == OPP_OP_CUDA_API && n > OPP_COL_CUDA_CORR
                  ? args[OPP_COL_CUDA_CORR]
                  : 0;
    r->ext = opp_op_extid(kind, args, n);
    r->status = opp_op_status(kind, args, n);
    r->bytes = opp_kind_base(kind) == OPP_OP_MEMORY ? 0 : (int64_t)opp_op_bytes(kind, args, n);
}

/* As opp_inserter_row's types "iiiuuuiiiszsuiizzi" would, without walking
 * them: the rows are many. */
void opp_sqlite_put_cpu_row(struct db *d, struct inserter *in, const struct cpu_row *r)
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
    opp_inserter_add(d, in);
}

void opp_sqlite_put_gpu_row(struct db *d, struct inserter *in, const struct opp_model *m,
                            int64_t id, const struct gpu_row *g, int64_t call)
{
    opp_inserter_row(d, in,
                     "iisuuiiitui"
                     "iiiiii",
                     id, (int64_t)g->proc, gpu_kind(g->type), g->start, g->end, (int64_t)g->device,
                     (int64_t)g->stream, (int64_t)g->corr, opp_model_str(m, g->name), g->bytes,
                     call, (int64_t)g->grid[0], (int64_t)g->grid[1], (int64_t)g->grid[2],
                     (int64_t)g->block[0], (int64_t)g->block[1], (int64_t)g->block[2]);
}

void opp_sqlite_put_gpu_mem_row(struct db *d, struct inserter *in, int64_t id,
                                const struct opp_gpu_mem *g, int64_t call)
{
    opp_inserter_row(d, in, "iiuiiuii", id, (int64_t)g->proc, g->time_ns, (int64_t)g->device,
                     g->bytes, g->address, (int64_t)g->corr, call);
}

void opp_sqlite_put_steps(struct db *d, const struct opp_steps *st)
{
    sqlite3_stmt *s = opp_db_prepare(d, "INSERT INTO steps VALUES (?,?,?,?,?,?)");
    for (size_t i = 0; i < st->n && !d->failed; i++) {
        const struct opp_step *p = &st->steps[i];
        opp_db_row(d, s, "iiuuuu", (int64_t)i, (int64_t)p->thread, p->begin_ns, p->end_ns,
                   p->cpu_ns, p->gpu_ns);
    }
    sqlite3_finalize(s);
}

int opp_sqlite_open(struct db *d, const char *path, char *err, size_t errlen)
{
    return opp_db_open(d, path, schema, err, errlen);
}

int opp_sqlite_close(struct db *d, const char *path)
{
    return opp_db_close(d, path, indexes);
}

#endif
