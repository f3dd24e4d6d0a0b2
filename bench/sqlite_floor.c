/* Benchmark helper: what SQLite alone costs for the rows `opprof export
 * sqlite` writes, with nothing of opprof's: N rows of the cpu_ops table
 * (docs/SQLITE.md: the same 18 columns, values like the synthetic trace's)
 * inserted in one transaction with the export's pragmas and 32-row
 * INSERTs, then the index on name_id. The rows a second it prints are the
 * most any export can reach on this machine; `make bench` shows them beside
 * the export's. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define BATCH 32
#define COLS 18

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int fail(sqlite3 *h, const char *what)
{
    fprintf(stderr, "sqlite_floor: %s: %s\n", what, h ? sqlite3_errmsg(h) : "out of memory");
    return 1;
}

int main(int argc, char **argv)
{
    char *end;
    long long n = argc == 3 ? strtoll(argv[2], &end, 10) : 0;
    if (argc != 3 || n <= 0 || *end) {
        fprintf(stderr, "usage: %s OUT.sqlite ROWS\n", argv[0]);
        return 2;
    }
    unlink(argv[1]);
    sqlite3 *h;
    if (sqlite3_open(argv[1], &h) != SQLITE_OK)
        return fail(h, "open");
    if (sqlite3_exec(h,
                     "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                     "PRAGMA temp_store=FILE; PRAGMA cache_size=-65536; BEGIN;"
                     "CREATE TABLE cpu_ops (id INTEGER PRIMARY KEY, thread_id INTEGER,"
                     " parent_id INTEGER, start_ns INTEGER, end_ns INTEGER, self_ns INTEGER,"
                     " depth INTEGER, name_id INTEGER, library_id INTEGER, kind TEXT,"
                     " shapes_id INTEGER, dtype TEXT, flops INTEGER, bytes INTEGER,"
                     " status INTEGER, correlation_id INTEGER, external_id INTEGER, open INTEGER);",
                     NULL, NULL, NULL) != SQLITE_OK)
        return fail(h, "schema");
    char sql[BATCH * (2 * COLS + 2) + 64];
    int len = snprintf(sql, sizeof sql, "INSERT INTO cpu_ops VALUES ");
    for (int r = 0; r < BATCH; r++)
        for (int c = 0; c < COLS; c++)
            len += snprintf(sql + len, sizeof sql - (size_t)len, "%s%s%s", c ? "," : r ? ",(" : "(",
                            "?", c == COLS - 1 ? ")" : "");
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) != SQLITE_OK)
        return fail(h, "prepare");
    double t0 = now();
    /* as trace_gen's: steps of 8 calls on 4 threads, 4 names, shapes ids */
    for (long long i = 0; i + BATCH <= n; i += BATCH) {
        for (int r = 0; r < BATCH; r++) {
            long long id = i + r, k = r * COLS;
            long long at = 1000000000ll + id * 1000, fn = id % 8 < 2 ? 1 : id % 8 < 6 ? 2 : 3;
            sqlite3_bind_int64(s, (int)k + 1, id);
            sqlite3_bind_int64(s, (int)k + 2, id & 3);
            sqlite3_bind_int64(s, (int)k + 3, id % 8 ? id - id % 8 : -1);
            sqlite3_bind_int64(s, (int)k + 4, at);
            sqlite3_bind_int64(s, (int)k + 5, at + 500);
            sqlite3_bind_int64(s, (int)k + 6, 500);
            sqlite3_bind_int64(s, (int)k + 7, id % 8 != 0);
            sqlite3_bind_int64(s, (int)k + 8, fn);
            sqlite3_bind_int64(s, (int)k + 9, 5);
            sqlite3_bind_text(s, (int)k + 10, fn == 1 ? "gemm" : "dot", -1, SQLITE_STATIC);
            sqlite3_bind_int64(s, (int)k + 11, 6 + id % 2);
            sqlite3_bind_text(s, (int)k + 12, "float64", -1, SQLITE_STATIC);
            sqlite3_bind_int64(s, (int)k + 13, 196608);
            sqlite3_bind_int64(s, (int)k + 14, 0);
            sqlite3_bind_int64(s, (int)k + 15, 0);
            sqlite3_bind_null(s, (int)k + 16);
            sqlite3_bind_null(s, (int)k + 17);
            sqlite3_bind_int64(s, (int)k + 18, 0);
        }
        if (sqlite3_step(s) != SQLITE_DONE)
            return fail(h, "insert");
        sqlite3_reset(s);
    }
    double t1 = now();
    sqlite3_finalize(s);
    if (sqlite3_exec(h, "CREATE INDEX cpu_ops_name ON cpu_ops(name_id); COMMIT;", NULL, NULL,
                     NULL) != SQLITE_OK)
        return fail(h, "index");
    if (sqlite3_close(h) != SQLITE_OK)
        return fail(h, "close");
    double t2 = now();
    printf("rows=%lld insert_s=%.2f index_s=%.2f total_s=%.2f\n", n - n % BATCH, t1 - t0, t2 - t1,
           t2 - t0);
    return 0;
}
