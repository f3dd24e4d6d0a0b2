/* Writing an SQLite database, for the SQLite export (sqlite_rows.h): a
 * new file in one transaction, prepared statements, rows bound from
 * typed values and inserted a batch at a time; the first failure kept,
 * in SQLite's words. Only with libsqlite3-dev (OPP_HAVE_SQLITE). */
#ifndef OPP_EXPORTS_SQLITE_DB_H
#define OPP_EXPORTS_SQLITE_DB_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

struct db {
    sqlite3 *h;
    char *err;
    size_t errlen;
    int failed;
};

/* A new database at path, in its transaction, with ddl executed (its
 * tables). 0, or -1 (err); a failure after the file is made is kept in
 * d (d->failed) and said by opp_db_close. */
int opp_db_open(struct db *d, const char *path, const char *ddl, char *err, size_t errlen);
/* ddl executed (the indexes made after the rows), the commit, the file
 * closed. 0, or -1 (d->err). */
int opp_db_close(struct db *d, const char *path, const char *ddl);
/* "sqlite: what: SQLite's message" into d->err unless a failure is said
 * already; -1. */
int opp_db_fail(struct db *d, const char *what);
/* sql prepared; NULL once d failed. */
sqlite3_stmt *opp_db_prepare(struct db *d, const char *sql);

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

/* One row now, through s (INSERT with one ? per type). The values of the
 * kinds in types (at most COLS_MAX): 'i' int64, 'u' uint64 (as int64), 'z'
 * uint64 with 0 as NULL (an id that is not there), 't' text (NULL: SQL
 * NULL), 's' the same of our own names (kinds, dtypes: ASCII). */
void opp_db_row(struct db *d, sqlite3_stmt *s, const char *types, ...);

/* A table's rows BATCH at a time: one multi-row INSERT executed per
 * BATCH rows (a step per row was a third of the export's time), the last
 * rows one by one. */
#define BATCH 32

struct inserter {
    sqlite3_stmt *many, *one;
    int ncols, n;
    struct val v[BATCH * COLS_MAX];
};

void opp_inserter_open(struct db *d, struct inserter *in, const char *table, int ncols);
/* The row whose values (in->ncols) were put at in->v + in->n * ncols. */
void opp_inserter_add(struct db *d, struct inserter *in);
/* A row of values as opp_db_row's types. */
void opp_inserter_row(struct db *d, struct inserter *in, const char *types, ...);
/* The rows left written, the statements finalized. */
void opp_inserter_close(struct db *d, struct inserter *in);

#endif
