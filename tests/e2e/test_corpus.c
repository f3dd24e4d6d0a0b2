/* The corpus: every command of tests/corpus/views (the report's views in
 * each format, advise, diff, the exports) run by the built opprof on the committed
 * traces of tests/corpus/traces/, each run's exit code, stdout, stderr and
 * written file compared byte for byte with tests/corpus/expected/. A
 * change to what opprof prints shows here as a diff; one meant (a fix) is
 * recorded again with `make corpus-update` (OPPROF_CORPUS_UPDATE=1) and
 * committed with its reason. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef OPP_HAVE_SQLITE
#include <sqlite3.h>
#endif

#include "analysis/model.h"
#include "testutil.h"

#define MAX_ARGS 32
#define SHOW_DIFFS 3  /* unified diffs printed on failure */
#define DIFF_LINES 60 /* of each */

/* One line of tests/corpus/views. */
struct view {
    char *name, *traces;
    char *args[MAX_ARGS];
    int nargs;
    int line;
};

/* The state of one run of the suite's test. */
struct corpus {
    char *src;  /* tests/corpus/ */
    char *dir;  /* where opprof runs: traces/ links to the corpus's */
    int update; /* OPPROF_CORPUS_UPDATE=1: record instead of compare */
    char **env; /* opprof's environment */
    int runs, differ;
    char *first; /* the first output that differs */
};

static char *xstrdup(const char *s)
{
    char *d = strdup(s);
    ck_assert_ptr_nonnull(d);
    return d;
}

/* Splits a views line into words; '...' quotes one (no escapes). */
static int split(char *s, char **w, int max)
{
    int n = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            break;
        ck_assert_int_lt(n, max);
        if (*s == '\'') {
            w[n++] = ++s;
            s = strchr(s, '\'');
            ck_assert_msg(s != NULL, "views: unterminated quote");
        } else {
            w[n++] = s;
            s += strcspn(s, " \t");
        }
        if (*s)
            *s++ = '\0';
    }
    return n;
}

static struct view *read_views(const char *path, size_t *nviews)
{
    char *text = tu_slurp(path);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    struct view *v = NULL;
    size_t n = 0;
    int line = 0;
    for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
        line++;
        if (*l == '#' || !l[strspn(l, " \t")])
            continue;
        char *w[MAX_ARGS + 2];
        int nw = split(l, w, MAX_ARGS + 2);
        ck_assert_msg(nw >= 3, "%s: a line is NAME TRACES ARGUMENTS...", path);
        v = realloc(v, (n + 1) * sizeof *v);
        ck_assert_ptr_nonnull(v);
        v[n] = (struct view){.name = w[0], .traces = w[1]};
        for (int i = 2; i < nw; i++)
            v[n].args[v[n].nargs++] = w[i];
        v[n].line = line;
        n++;
    }
    *nviews = n; /* the words point into text, kept for the run */
    return v;
}

/* The traces of traces/, by name without ".trace", sorted. */
static char **list_traces(const char *dir, size_t *n)
{
    struct dirent **ents;
    int k = scandir(dir, &ents, NULL, alphasort);
    ck_assert_msg(k >= 0, "cannot list %s", dir);
    char **names = calloc((size_t)k + 1, sizeof *names);
    *n = 0;
    for (int i = 0; i < k; i++) {
        size_t len = strlen(ents[i]->d_name);
        if (len > 6 && !strcmp(ents[i]->d_name + len - 6, ".trace"))
            names[(*n)++] = strndup(ents[i]->d_name, len - 6);
        free(ents[i]);
    }
    free(ents);
    return names;
}

static int in_list(const char *list, const char *name)
{
    if (!strcmp(list, "*"))
        return 1;
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, ",");
        if (k == len && !strncmp(p, name, len))
            return 1;
        p += k + (p[k] == ',');
    }
    return 0;
}

/* The environment opprof runs in: the test's, less what would change its
 * output (OPPROF_STREAM_MIB and the other OPPROF_ settings, the locale,
 * the time zone, TMPDIR), plus TMPDIR in the run's directory, TZ=UTC and
 * LC_ALL=C. */
static char **make_env(const char *dir)
{
    extern char **environ;
    static const char *const drop[] = {"OPPROF_", "TMPDIR=", "TZ=", "LC_", "LANG=", "LANGUAGE="};
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 4, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int keep = 1;
        for (size_t d = 0; d < sizeof drop / sizeof *drop; d++)
            keep &= strncmp(environ[i], drop[d], strlen(drop[d])) != 0;
        if (keep)
            env[k++] = environ[i];
    }
    ck_assert_int_ge(asprintf(&env[k++], "TMPDIR=%s", dir), 0);
    env[k++] = "TZ=UTC";
    env[k++] = "LC_ALL=C";
    return env;
}

/* A file's bytes into f, a line saying so when it does not end in one;
 * a file with a NUL byte as its size alone. */
static void put_file(FILE *f, const char *path)
{
    char *s = tu_slurp(path);
    struct stat st;
    if (!s || stat(path, &st)) {
        fprintf(f, "(no file)\n");
        free(s);
        return;
    }
    size_t len = strlen(s);
    if (len != (size_t)st.st_size)
        fprintf(f, "(binary: %lld bytes)\n", (long long)st.st_size);
    else
        fputs(s, f);
    if (len == (size_t)st.st_size && len && s[len - 1] != '\n')
        fputs("\n(no newline at end)\n", f);
    free(s);
}

/* An SQLite database as text: each object's SQL, each table's rows in
 * their order, a value a field (NULL, integer, %.17g, text, x'hex'). */
static void put_sqlite(FILE *f, const char *path)
{
#ifdef OPP_HAVE_SQLITE
    sqlite3 *db;
    sqlite3_stmt *objs, *rows;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(f, "(not a database: %s)\n", sqlite3_errmsg(db));
        sqlite3_close(db);
        return;
    }
    ck_assert_int_eq(sqlite3_prepare_v2(db,
                                        "SELECT type, name, sql FROM sqlite_master "
                                        "WHERE sql IS NOT NULL ORDER BY type DESC, name",
                                        -1, &objs, NULL),
                     SQLITE_OK);
    while (sqlite3_step(objs) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(objs, 0);
        const char *name = (const char *)sqlite3_column_text(objs, 1);
        fprintf(f, "%s;\n", (const char *)sqlite3_column_text(objs, 2));
        if (strcmp(type, "table"))
            continue;
        char *q = sqlite3_mprintf("SELECT * FROM \"%w\"", name);
        ck_assert_int_eq(sqlite3_prepare_v2(db, q, -1, &rows, NULL), SQLITE_OK);
        sqlite3_free(q);
        while (sqlite3_step(rows) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(rows); c++) {
                fputs(c ? "|" : "  ", f);
                switch (sqlite3_column_type(rows, c)) {
                case SQLITE_NULL:
                    fputs("NULL", f);
                    break;
                case SQLITE_INTEGER:
                    fprintf(f, "%lld", (long long)sqlite3_column_int64(rows, c));
                    break;
                case SQLITE_FLOAT:
                    fprintf(f, "%.17g", sqlite3_column_double(rows, c));
                    break;
                case SQLITE_TEXT:
                    fprintf(f, "'%s'", (const char *)sqlite3_column_text(rows, c));
                    break;
                default: {
                    const unsigned char *b = sqlite3_column_blob(rows, c);
                    fputs("x'", f);
                    for (int i = 0; i < sqlite3_column_bytes(rows, c); i++)
                        fprintf(f, "%02x", b[i]);
                    fputs("'", f);
                }
                }
            }
            fputs("\n", f);
        }
        sqlite3_finalize(rows);
    }
    sqlite3_finalize(objs);
    sqlite3_close(db);
#else
    (void)path;
    fprintf(f, "(built without SQLite)\n");
#endif
}

/* Runs opprof with args in the corpus's directory: what it did, as text
 * (the command, exit code, stdout, stderr, then the file {out} named, if
 * any). shown is the command as the expected file says it. */
static char *run(struct corpus *c, char **args, int nargs, const char *shown, const char *out)
{
    char *o = tu_path(c->dir, "stdout"), *e = tu_path(c->dir, "stderr");
    char *argv[MAX_ARGS + 2] = {(char *)tu_tool("opprof")};
    memcpy(argv + 1, args, (size_t)nargs * sizeof *args);
    argv[nargs + 1] = NULL;
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int fo = open(o, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(e, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || fo < 0 || fe < 0 || chdir(c->dir) || dup2(in, 0) < 0 || dup2(fo, 1) < 0 ||
            dup2(fe, 2) < 0)
            _exit(126);
        execve(argv[0], argv, c->env);
        _exit(127);
    }
    int code = tu_code(tu_wait(pid));
    char *text;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    fprintf(f, "$ %s\nexit %d\n--- stdout\n", shown, code);
    put_file(f, o);
    fputs("--- stderr\n", f);
    put_file(f, e);
    if (out) {
        char *p = tu_path(c->dir, out);
        size_t n = strlen(out);
        fprintf(f, "--- %s\n", out);
        if (access(p, F_OK))
            fputs("(no file)\n", f);
        else if (n > 7 && !strcmp(out + n - 7, ".sqlite"))
            put_sqlite(f, p);
        else
            put_file(f, p);
        unlink(p);
        free(p);
    }
    fclose(f);
    free(o);
    free(e);
    c->runs++;
    return text;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s: %s", path, strerror(errno));
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* Compares got with expected/TRACE/FILE, or records it: a difference is
 * counted, the first SHOW_DIFFS shown as unified diffs. */
static void check(struct corpus *c, const char *trace, const char *file, const char *got)
{
    char rel[512], *path;
    snprintf(rel, sizeof rel, "expected/%s/%s", trace, file);
    path = tu_path(c->src, rel);
    if (c->update) {
        write_file(path, got);
        free(path);
        return;
    }
    char *want = tu_slurp(path);
    if (!want || strcmp(want, got)) {
        if (!c->differ)
            c->first = xstrdup(rel);
        if (c->differ < SHOW_DIFFS) {
            char *actual = tu_path(c->dir, "actual");
            write_file(actual, got);
            char cmd[8192];
            snprintf(cmd, sizeof cmd, "diff -u '%s' '%s' | head -n %d >&2",
                     want ? path : "/dev/null", actual, DIFF_LINES);
            fprintf(stderr, "corpus: %s differs:\n", rel);
            fflush(stderr);
            if (system(cmd) != 0)
                fprintf(stderr, "corpus: (diff failed)\n");
            free(actual);
        }
        c->differ++;
    }
    free(want);
    free(path);
}

/* Substitutes {} {pid0} {pid1} {tid1} {out.EXT} in a (asserting that the
 * trace has such a process or thread); *out: the file {out.EXT} names. */
static char *subst(const char *a, const char *trace, const struct opp_model *m, char **out)
{
    char buf[512];
    if (!strcmp(a, "{}"))
        snprintf(buf, sizeof buf, "traces/%s.trace", trace);
    else if (!strcmp(a, "{pid0}") || !strcmp(a, "{pid1}")) {
        size_t i = a[4] - '0';
        ck_assert_msg(i < m->nprocs, "corpus: %s has no process %zu", trace, i);
        snprintf(buf, sizeof buf, "%u", m->procs[i].pid);
    } else if (!strcmp(a, "{tid1}")) {
        ck_assert_msg(m->nthreads > 1, "corpus: %s has one thread", trace);
        snprintf(buf, sizeof buf, "%u", m->threads[1].tid);
    } else if (!strncmp(a, "{out.", 5) && a[strlen(a) - 1] == '}') {
        snprintf(buf, sizeof buf, "%.*s", (int)strlen(a) - 2, a + 1);
        *out = xstrdup(buf);
    } else
        return xstrdup(a);
    return xstrdup(buf);
}

/* One line of views on one trace. */
static void run_view(struct corpus *c, const struct view *v, const char *trace,
                     const struct opp_model *m)
{
    char *args[MAX_ARGS + 1], *wrote = NULL;
    size_t len = 0;
    for (int i = 0; i < v->nargs; i++)
        args[i] = subst(v->args[i], trace, m, &wrote);
    char *shown;
    FILE *f = open_memstream(&shown, &len);
    fputs("opprof", f);
    for (int i = 0; i < v->nargs; i++)
        fprintf(f, strpbrk(args[i], " |'\"$*") ? " '%s'" : " %s", args[i]);
    fclose(f);
    char file[160];
    snprintf(file, sizeof file, "%s.txt", v->name);
    char *got = run(c, args, v->nargs, shown, wrote);
    check(c, trace, file, got);
    free(got);
    for (int i = 0; i < v->nargs; i++)
        free(args[i]);
    free(shown);
    free(wrote);
}

/* Files of expected/ that no command wrote (a view renamed or removed):
 * counted as differences. */
static void stale(struct corpus *c, char **traces, size_t ntraces, const struct view *v, size_t nv)
{
    char *exp = tu_path(c->src, "expected");
    struct dirent **ents;
    int k = scandir(exp, &ents, NULL, alphasort);
    for (int i = 0; i < k; i++) {
        const char *t = ents[i]->d_name;
        int known = *t == '.';
        for (size_t j = 0; j < ntraces; j++)
            known |= !strcmp(t, traces[j]);
        if (!known) {
            fprintf(stderr, "corpus: expected/%s: no such trace in traces/\n", t);
            c->differ++;
        } else if (*t != '.') {
            char *d = tu_path(exp, t);
            struct dirent **fs;
            int nf = scandir(d, &fs, NULL, alphasort);
            for (int j = 0; j < nf; j++) {
                char *name = fs[j]->d_name;
                size_t len = strlen(name);
                char *dot = len > 4 && !strcmp(name + len - 4, ".txt") ? name + len - 4 : NULL;
                int found = 0;
                for (size_t w = 0; dot && w < nv; w++)
                    found |= strlen(v[w].name) == (size_t)(dot - name) &&
                             !strncmp(v[w].name, name, (size_t)(dot - name)) &&
                             in_list(v[w].traces, t);
                if (*name != '.' && !found) {
                    fprintf(stderr, "corpus: expected/%s/%s: no command of views writes it\n", t,
                            name);
                    c->differ++;
                }
                free(fs[j]);
            }
            free(fs);
            free(d);
        }
        free(ents[i]);
    }
    if (k >= 0)
        free(ents);
    free(exp);
}

/* What this build cannot run: the SQLite export without SQLite (said
 * once, at the first trace). Its expected files stay. */
static int left_out(const struct view *v, int say)
{
#ifdef OPP_HAVE_SQLITE
    (void)v, (void)say;
    return 0;
#else
    int out = v->nargs > 1 && !strcmp(v->args[0], "export") && !strcmp(v->args[1], "sqlite");
    if (out && say)
        fprintf(stderr, "corpus: %s left out: built without SQLite\n", v->name);
    return out;
#endif
}

START_TEST(outputs_as_recorded)
{
    const char *root = getenv("OPPROF_SRC");
    struct corpus c = {.update = getenv("OPPROF_CORPUS_UPDATE") &&
                                 !strcmp(getenv("OPPROF_CORPUS_UPDATE"), "1")};
    c.src = tu_path(root ? root : ".", "tests/corpus");
#ifndef OPP_HAVE_SQLITE
    ck_assert_msg(!c.update, "a build without SQLite cannot record the corpus again");
#endif
    c.dir = tu_tmpdir();
    ck_assert_ptr_nonnull(c.dir);
    char *tdir = tu_path(c.src, "traces"), *link = tu_path(c.dir, "traces"),
         *vpath = tu_path(c.src, "views");
    char *abs = realpath(tdir, NULL);
    ck_assert_msg(abs != NULL, "no %s", tdir);
    ck_assert_int_eq(symlink(abs, link), 0);
    c.env = make_env(c.dir);
    size_t nv, nt;
    struct view *v = read_views(vpath, &nv);
    char **traces = list_traces(tdir, &nt);
    ck_assert_msg(nt > 0, "no traces in %s", tdir);
    if (c.update) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s/expected'", c.src);
        ck_assert_int_eq(system(cmd), 0);
        char *exp = tu_path(c.src, "expected");
        ck_assert_int_eq(mkdir(exp, 0755), 0);
        free(exp);
    }
    for (size_t t = 0; t < nt; t++) {
        char tpath[512];
        snprintf(tpath, sizeof tpath, "%s/%s.trace", abs, traces[t]);
        struct opp_model *m = tu_load(tpath);
        ck_assert_msg(m != NULL, "cannot load %s", tpath);
        if (c.update) {
            char rel[512];
            snprintf(rel, sizeof rel, "expected/%s", traces[t]);
            char *d = tu_path(c.src, rel);
            ck_assert_int_eq(mkdir(d, 0755), 0);
            free(d);
        }
        for (size_t i = 0; i < nv; i++)
            if (in_list(v[i].traces, traces[t]) && !left_out(&v[i], !t))
                run_view(&c, &v[i], traces[t], m);
        opp_model_free(m);
    }
    if (!c.update)
        stale(&c, traces, nt, v, nv);
    fprintf(stderr, "corpus: %d runs on %zu traces, %d outputs differ%s\n", c.runs, nt, c.differ,
            c.update ? " (recorded again)" : "");
    tu_rmdir(c.dir);
    ck_assert_msg(!c.differ,
                  "%d outputs differ from tests/corpus/expected/ (the first: %s, diffs on stderr); "
                  "`make corpus-update` records them again when the change is meant",
                  c.differ, c.first ? c.first : "files no command writes");
}
END_TEST

Suite *suite_corpus(void)
{
    Suite *s = suite_create("corpus");
    TCase *tc = tcase_create("corpus");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, outputs_as_recorded);
    suite_add_tcase(s, tc);
    return s;
}
