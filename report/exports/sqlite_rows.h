/* The SQLite export's schema (docs/SQLITE.md, version OPP_SQLITE_SCHEMA)
 * and the rows of its tables, as the pass hands the calls over
 * (export_sqlite.c). Only with libsqlite3-dev (OPP_HAVE_SQLITE). */
#ifndef OPP_EXPORTS_SQLITE_ROWS_H
#define OPP_EXPORTS_SQLITE_ROWS_H

#include <stdint.h>

#include "analysis/loader.h" /* uthash, out of memory: hash_oom */
#include "analysis/model.h"
#include "analysis/step_times.h"
#include "exports/sqlite_db.h"

#define OPP_SQLITE_SCHEMA 2

struct opp_pass;

/* A new database at path with the schema's tables, in its transaction. 0,
 * or -1 (err). */
int opp_sqlite_open(struct db *d, const char *path, char *err, size_t errlen);
/* The indexes made after the rows, the commit, the file closed. 0, or -1
 * (the error in the err given to opp_sqlite_open). */
int opp_sqlite_close(struct db *d, const char *path);

/* The metadata; steps: what the steps rows are. */
void opp_sqlite_put_meta(struct db *d, const struct opp_model *m, const char *steps);
/* The model's strings, ids as they are (shapes' texts among them, or
 * after them: shape_ids). */
void opp_sqlite_put_strings(struct db *d, const struct opp_model *m);
void opp_sqlite_put_processes(struct db *d, const struct opp_model *m);
/* The program's own steps, as `opprof report --step` finds them. */
void opp_sqlite_put_steps(struct db *d, const struct opp_steps *st);

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
void opp_sqlite_shape_ids_free(struct shape_ids *ids);

/* One cpu_ops row. */
struct cpu_row {
    int64_t id, parent; /* -1: none */
    uint64_t begin, end, self, flops, corr, ext;
    int64_t bytes, status;
    uint32_t thread, depth, name, lib, shapes, dtype, kind, open;
};

/* What a call of f named name with args[0..n) records: its kind, library,
 * shapes, dtype, FLOPs, bytes (CPU memory's: the caller's), status and ids. */
void opp_sqlite_call_values(struct db *d, struct shape_ids *ids, struct cpu_row *r,
                            const struct opp_func *f, const char *name, const uint64_t *args,
                            uint32_t n);
/* A cpu_ops row, a batch at a time through in. */
void opp_sqlite_put_cpu_row(struct db *d, struct inserter *in, const struct cpu_row *r);

/* A gpu_ops row (not its id and call's) from record g of process index pi:
 * its name's string id from ld (dem[0..ndem): opp_loader_op_name's). */
struct gpu_row {
    uint64_t start, end, bytes, corr;
    uint32_t proc, device, stream, name, grid[3], block[3];
    uint8_t type;
};
void opp_sqlite_put_gpu_row(struct db *d, struct inserter *in, const struct opp_model *m,
                            int64_t id, const struct gpu_row *g, int64_t call);
void opp_sqlite_put_gpu_mem_row(struct db *d, struct inserter *in, int64_t id,
                                const struct opp_gpu_mem *g, int64_t call);

#endif
