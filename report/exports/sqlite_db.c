/* Writing an SQLite database (sqlite_db.h): a new file in one
 * transaction, prepared statements, values bound, rows a batch at a time. */
#ifdef OPP_HAVE_SQLITE
#include "exports/sqlite_db.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* Where SQLite's full disk may be: it says not which file filled it, and
 * it sorts the indexes in temporary files of its own (TMPDIR, else the
 * first of /var/tmp, /usr/tmp and /tmp it can write). */
static void no_room_where(char *buf, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    if (tmp && *tmp)
        snprintf(buf, len, ": no room on the output's file system or in TMPDIR (%s)", tmp);
    else
        snprintf(buf, len, ": no room on the output's file system or in /var/tmp (TMPDIR unset)");
}

int opp_db_fail(struct db *d, const char *what)
{
    if (!d->failed) {
        char where[4200] = "";
        if (sqlite3_errcode(d->h) == SQLITE_FULL)
            no_room_where(where, sizeof where);
        snprintf(d->err, d->errlen, "sqlite: %s: %s%s", what, sqlite3_errmsg(d->h), where);
    }
    d->failed = 1;
    return -1;
}

sqlite3_stmt *opp_db_prepare(struct db *d, const char *sql)
{
    sqlite3_stmt *s = NULL;
    if (!d->failed && sqlite3_prepare_v2(d->h, sql, -1, &s, NULL) != SQLITE_OK)
        opp_db_fail(d, sql);
    return s;
}

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
        opp_db_fail(d, "insert");
    sqlite3_reset(s);
}

void opp_db_row(struct db *d, sqlite3_stmt *s, const char *types, ...)
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

void opp_inserter_open(struct db *d, struct inserter *in, const char *table, int ncols)
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
    in->one = opp_db_prepare(d, sql);
    for (int r = 1; r < BATCH; r++)
        len += (size_t)snprintf(sql + len, sizeof sql - len, ",%s", tuple);
    in->many = opp_db_prepare(d, sql);
    in->ncols = ncols;
    in->n = 0;
}

void opp_inserter_add(struct db *d, struct inserter *in)
{
    if (++in->n < BATCH)
        return;
    bind(in->many, in->v, BATCH * in->ncols);
    step(d, in->many);
    in->n = 0;
}

void opp_inserter_row(struct db *d, struct inserter *in, const char *types, ...)
{
    if (d->failed)
        return;
    va_list ap;
    va_start(ap, types);
    vals(in->v + in->n * in->ncols, types, ap);
    va_end(ap);
    opp_inserter_add(d, in);
}

void opp_inserter_close(struct db *d, struct inserter *in)
{
    for (int r = 0; r < in->n && !d->failed; r++) {
        bind(in->one, in->v + r * in->ncols, in->ncols);
        step(d, in->one);
    }
    sqlite3_finalize(in->many);
    sqlite3_finalize(in->one);
}

int opp_db_open(struct db *d, const char *path, const char *ddl, char *err, size_t errlen)
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
        sqlite3_exec(d->h, ddl, NULL, NULL, NULL) != SQLITE_OK)
        opp_db_fail(d, "schema");
    return 0;
}

int opp_db_close(struct db *d, const char *path, const char *ddl)
{
    if (!d->failed && (sqlite3_exec(d->h, ddl, NULL, NULL, NULL) != SQLITE_OK ||
                       sqlite3_exec(d->h, "COMMIT;", NULL, NULL, NULL) != SQLITE_OK))
        opp_db_fail(d, "commit");
    if (sqlite3_close(d->h) != SQLITE_OK && !d->failed) {
        snprintf(d->err, d->errlen, "sqlite: cannot close %s", path);
        d->failed = 1;
    }
    return d->failed ? -1 : 0;
}

#endif
