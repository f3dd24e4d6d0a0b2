/* Test helpers (see testutil.h). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *tu_tmpdir(void)
{
    char tmpl[] = "/tmp/opprof-test-XXXXXX";
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

void tu_rmdir(const char *dir)
{
    char cmd[4200];
    if (!dir || strncmp(dir, "/tmp/opprof-test-", 17) != 0)
        return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "warning: could not remove %s\n", dir);
}

char *tu_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static char **make_env(char *const add[])
{
    size_t n = 0, na = 0;
    while (environ[n])
        n++;
    while (add && add[na])
        na++;
    char **env = calloc(n + na + 1, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int keep = 1;
        for (size_t j = 0; j < na; j++) {
            const char *eq = strchr(add[j], '=');
            size_t len = eq ? (size_t)(eq - add[j]) + 1 : strlen(add[j]);
            if (!strncmp(environ[i], add[j], len))
                keep = 0;
        }
        if (keep)
            env[k++] = environ[i];
    }
    for (size_t j = 0; j < na; j++) {
        const char *eq = strchr(add[j], '=');
        if (eq && eq[1])
            env[k++] = add[j];
    }
    env[k] = NULL;
    return env;
}

int tu_spawn(char *const argv[], char *const env_add[], const char *out, const char *err)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char **env = make_env(env_add);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    return rc ? -1 : pid;
}

int tu_wait(int pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return st;
}

int tu_run_peak(char *const argv[], const char *out, const char *err, long *kb)
{
    char asan[512];
    const char *was = getenv("ASAN_OPTIONS");
    snprintf(asan, sizeof asan, "ASAN_OPTIONS=%s%squarantine_size_mb=0", was ? was : "",
             was && *was ? ":" : "");
    char *env[] = {asan, NULL};
    int pid = tu_spawn(argv, env, out, err), st;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &st, 0, &ru) != pid)
        return -1;
    *kb = ru.ru_maxrss;
    return st;
}

char *tu_peak_quiet(const char *dir, char *const argv[], char **out, long *kb)
{
    char *o = tu_path(dir, "peak.out"), *e = tu_path(dir, "peak.err"), *why = NULL;
    int code = tu_code(tu_run_peak(argv, o, e, kb));
    char *err = tu_slurp(e);
    *out = tu_slurp(o);
    if ((code || !err || *err) &&
        asprintf(&why, "%s exited %d: %s", argv[0], code, err ? err : "(no stderr)") < 0)
        why = strdup("out of memory");
    free(err), free(o), free(e);
    return why;
}

int tu_run(char *const argv[], char *const env_add[], const char *out, const char *err)
{
    int pid = tu_spawn(argv, env_add, out, err);
    return pid < 0 ? -1 : tu_wait(pid);
}

int tu_code(int st)
{
    return st < 0 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

int tu_unload_run(const char *dir, const char *trace, const char *plugin, const char *mapped,
                  char **out, char **err)
{
    char *o = tu_path(dir, "unload.out"), *e = tu_path(dir, "unload.err");
    char *argv[] = {(char *)tu_tool("opprof"),
                    "run",
                    "-q",
                    "-o",
                    (char *)trace,
                    "--",
                    (char *)tu_build("tests/progs/unload"),
                    "3",
                    (char *)tu_build(plugin),
                    (char *)mapped,
                    NULL};
    int code = tu_code(tu_run(argv, NULL, o, e));
    *out = tu_slurp(o);
    *err = tu_slurp(e);
    free(o), free(e);
    return code;
}

int tu_python_has(const char *modules)
{
    static struct {
        char modules[128];
        int has;
    } asked[8];
    static int nasked;
    for (int i = 0; i < nasked; i++)
        if (!strcmp(asked[i].modules, modules))
            return asked[i].has;
    char code[160];
    snprintf(code, sizeof code, "import %s", modules);
    char *argv[] = {TU_PYTHON, "-c", code, NULL};
    int has = access(TU_PYTHON, X_OK) == 0 && tu_code(tu_run(argv, NULL, NULL, NULL)) == 0;
    if (nasked < 8 && strlen(modules) < sizeof asked[0].modules) {
        snprintf(asked[nasked].modules, sizeof asked[nasked].modules, "%s", modules);
        asked[nasked++].has = has;
    }
    return has;
}

const char *tu_build(const char *name)
{
    static char buf[8][4096];
    static int k;
    const char *b = getenv("OPPROF_BUILD");
    char *p = buf[k++ % 8];
    snprintf(p, 4096, "%s/%s", b ? b : "build", name);
    return p;
}

const char *tu_tool(const char *name)
{
    const char *d = getenv("OPPROF_TOOL_DIR");
    if (!d || !*d)
        return tu_build(name);
    static char buf[4][4096];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 4096, "%s/%s", d, name);
    return p;
}

char *tu_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *s = malloc(cap);
    size_t k;
    while (s && (k = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n < 2) {
            cap *= 2;
            s = realloc(s, cap);
        }
    }
    fclose(f);
    if (s)
        s[n] = 0;
    return s;
}

int tu_occurrences(const char *text, const char *what)
{
    /* memmem with the length left: strstr under ASan measures the rest of
     * text at each call, quadratic in a long report */
    int n = 0;
    size_t wl = strlen(what);
    const char *end = text + strlen(text);
    for (const char *p = text; wl && (p = memmem(p, (size_t)(end - p), what, wl)); p += wl)
        n++;
    return n;
}

int tu_count_lines(const char *text, const char *prefix)
{
    int n = 0;
    size_t len = strlen(prefix);
    for (const char *p = text; p && *p;) {
        if (!strncmp(p, prefix, len))
            n++;
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : NULL;
    }
    return n;
}

int tu_count_files(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strstr(e->d_name, part) != NULL;
    closedir(d);
    return n;
}

int tu_wait_file(const char *path, int ms)
{
    for (int i = 0; i < ms; i += 5) {
        if (access(path, F_OK) == 0)
            return 0;
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

#include <check.h>

#include "analysis/gpu_stats.h"
#include "analysis/gpu_stream.h"
#include "analysis/model.h"
#include "analysis/pass.h"
#include "oracle/loaded.h"

struct opp_model *tu_load(const char *path)
{
    char err[512];
    struct opp_model *m = tu_model_load(path, err, sizeof err);
    if (!m)
        fprintf(stderr, "tu_load: %s\n", err);
    return m;
}

struct opp_pass *tu_pass_open(const char *trace)
{
    static const char *paths[16]; /* each outlives its pass */
    static unsigned next;
    const char **path = &paths[next++ % 16];
    char err[512] = "";
    enum opp_stream_refused why;
    *path = trace;
    struct opp_pass *p = opp_pass_open(path, 1, &why, err, sizeof err);
    ck_assert_msg(p != NULL, "%s: %s", trace, err);
    return p;
}

struct opp_pass *tu_gpu_stats(const char *trace, const struct opp_agg_opts *o,
                              struct opp_gpu_stats *s, struct opp_kernel_stats **k, size_t *nk)
{
    char err[512];
    struct opp_kernel_stats *own;
    size_t nown;
    struct opp_pass *p = tu_pass_open(trace);
    struct opp_gpu_stream *g = opp_gpu_stream_over(p, err, sizeof err);
    int got = g ? opp_gpu_stream_stats(g, o, s, k ? k : &own, k ? nk : &nown, err, sizeof err) : -1;
    opp_gpu_stream_free(g);
    if (got) {
        fprintf(stderr, "cannot read %s's GPU statistics: %s\n", trace, err);
        opp_pass_free(p);
        return NULL;
    }
    if (!k)
        free(own);
    return p;
}

unsigned long tu_count(const struct opp_model *m, const char *name, long proc, unsigned tid,
                       int open)
{
    unsigned long n = 0;
    for (size_t i = 0; i < m->nthreads; i++) {
        const struct opp_thread *t = &m->threads[i];
        if ((proc >= 0 && t->proc != (uint32_t)proc) || (tid && t->tid != tid))
            continue;
        for (size_t k = 0; k < t->nevents; k++) {
            const struct opp_event *e = &t->events[k];
            int is_open = (e->flags & OPP_EV_OPEN) != 0;
            if (name[0] && strcmp(opp_model_str(m, e->name), name))
                continue;
            if (open >= 0 && is_open != open)
                continue;
            n++;
        }
    }
    return n;
}

char **tu_preload_env_list(struct tu_env *e, const char *trace, const char *const *extra)
{
    snprintf(e->pre, sizeof e->pre, "LD_PRELOAD=%s", tu_build("libopprof.so"));
    snprintf(e->out, sizeof e->out, "OPPROF_OUTPUT=%s", trace);
    int k = 0;
    e->env[k++] = e->pre;
    e->env[k++] = e->out;
    e->env[k++] = "OPPROF_SOCKET=";
    for (int i = 0; extra && extra[i]; i++) {
        if (k == (int)(sizeof e->env / sizeof *e->env) - 1) {
            fprintf(stderr, "tu_preload_env_list: more entries than struct tu_env holds\n");
            abort();
        }
        e->env[k++] = (char *)extra[i];
    }
    e->env[k] = NULL;
    return e->env;
}

char **tu_preload_env(struct tu_env *e, const char *trace, const char *extra)
{
    const char *list[] = {extra, NULL};
    return tu_preload_env_list(e, trace, list);
}

int tu_call(int (*fn)(int, char **), char **argv, const char *dir, char **out, char **err)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    char *paths[2] = {tu_path(dir, "stdout"), tu_path(dir, "stderr")};
    int saved[2] = {-1, -1}, ok = paths[0] && paths[1];
    fflush(stdout);
    fflush(stderr);
    for (int i = 0; i < 2 && ok; i++) {
        int fd = open(paths[i], O_WRONLY | O_CREAT | O_TRUNC, 0600);
        saved[i] = dup(1 + i);
        ok = fd >= 0 && saved[i] >= 0 && dup2(fd, 1 + i) >= 0;
        if (fd >= 0)
            close(fd);
    }
    int rc = ok ? fn(argc, argv) : -1000;
    fflush(stdout);
    fflush(stderr);
    for (int i = 0; i < 2; i++)
        if (saved[i] >= 0) {
            dup2(saved[i], 1 + i);
            close(saved[i]);
        }
    *out = ok ? tu_slurp(paths[0]) : NULL;
    *err = ok ? tu_slurp(paths[1]) : NULL;
    if (!*out || !*err)
        rc = -1000;
    free(paths[0]);
    free(paths[1]);
    return rc;
}

char *tu_call_differ(int (*fn)(int, char **), char **a, char **b, const char *dir, char **out,
                     char **ea, char **eb)
{
    char *oa, *ob, *xa, *xb, *why = NULL;
    int ra = tu_call(fn, a, dir, &oa, &xa), rb = tu_call(fn, b, dir, &ob, &xb);
    if (ra || rb) {
        if (asprintf(&why, "returned %d and %d; stderr:\n%s---\n%s", ra, rb, xa ? xa : "",
                     xb ? xb : "") < 0)
            why = NULL;
    } else if (strcmp(oa, ob)) {
        size_t at = 0; /* the first line that differs, not pages of text */
        for (size_t i = 0; oa[i] && oa[i] == ob[i]; i++)
            if (oa[i] == '\n')
                at = i + 1;
        if (asprintf(&why, "outputs part at byte %zu:\n%.300s\n---\n%.300s", at, oa + at,
                     ob + at) < 0)
            why = NULL;
    }
    if (out)
        *out = oa;
    else
        free(oa);
    free(ob);
    if (ea)
        *ea = xa;
    else
        free(xa);
    if (eb)
        *eb = xb;
    else
        free(xb);
    return why;
}

#include "analysis/callpath_tree.h"
#include "analysis/gpu_stats.h"
#include "analysis/step_times.h"
#include "views/output.h"
#include "views/steps.h"
#include "views/tree_view.h"

/* The loaded model's steps of name (NULL: the program's own) as `opprof
 * report --step -f json` writes them, for the threads it picks
 * (report_views.c: of a trace of several processes none of which is a
 * rank, the first process's), into *json (malloc'd; NULL when no call has
 * the name). 0 or -1. */
static int loaded_steps(const char *trace, const char *name, char **json)
{
    char err[512], what[OPP_NAME_MAX + 64];
    *json = NULL;
    struct opp_model *m = tu_model_load(trace, err, sizeof err);
    if (!m)
        return -1;
    struct opp_agg_opts o = {0};
    int ranks = 0;
    for (size_t p = 0; p < m->nprocs; p++)
        ranks |= m->procs[p].rank >= 0;
    if (m->nprocs > 1 && !ranks) {
        o.filter_pid = 1;
        o.pid = m->procs[0].pid;
    }
    struct opp_steps st;
    int rc =
        name ? tu_steps_find(m, &o, name, &st) : tu_steps_default(m, &o, &st, what, sizeof what);
    size_t len;
    FILE *f = rc ? NULL : open_memstream(json, &len);
    if (!rc && (!name || st.found.held))
        rc = !f || opp_out_steps(f, name ? name : what, &st, 1) ? -1 : 0;
    if (f)
        fclose(f);
    if (!rc && name && !st.found.held) {
        free(*json);
        *json = NULL;
    }
    if (!rc)
        opp_steps_free(&st);
    opp_model_free(m);
    return rc;
}

/* The table, its JSON or --tree of m (o: --tid, --limit) as report_views.c
 * shows them, from the loaded model's own functions (oracle/tables.c;
 * the JSON's GPU statistics as --gpu reads them), into
 * f: 0 or -1. */
static int loaded_table(FILE *f, const char *trace, const struct opp_model *m,
                        const struct opp_agg_opts *o, int json, int tree)
{
    if (tree) {
        struct opp_calltree ct;
        struct opp_tree_opts to = {.max_paths = o->limit};
        if (tu_calltree_build(m, o, &ct))
            return -1;
        int rc = opp_out_tree(f, m, &ct, &to) ? -1 : 0;
        opp_calltree_free(&ct);
        return rc;
    }
    struct opp_agg agg;
    struct opp_out_opts oo = {0};
    struct opp_gpu_stats gs;
    struct opp_pass *g = NULL;
    if (tu_aggregate(m, o, &agg))
        return -1;
    int rc = 0;
    if (json && opp_model_has_gpu(m) && !m->summary) {
        rc = (g = tu_gpu_stats(trace, o, &gs, NULL, NULL)) ? 0 : -1;
        oo.gpu = rc ? NULL : &gs;
    }
    if (!rc)
        rc = (json ? opp_out_json(f, trace, m, &agg, &oo) : opp_out_table(f, &agg, &oo)) ? -1 : 0;
    if (oo.gpu)
        opp_gpu_stats_free(&gs);
    opp_pass_free(g);
    opp_agg_free(&agg);
    return rc;
}

/* What `opprof report` writes on stdout for an argv of the table, its
 * JSON, --tree or --step (with --tid, --limit, -f json) from the loaded
 * model (oracle/tables.c, step_times.c) as report_views.c
 * shows it, into *out (malloc'd). 0, 1 when argv has another option
 * (--gpu: the GPU view's numbers have no loaded answer), or -1. */
static int loaded_view(const char *const *argv, char **out)
{
    const char *trace = argv[1], *step = NULL;
    int is_step = 0, json = 0, tree = 0, ntraces = 1;
    struct opp_agg_opts o = {0};
    while (argv[ntraces + 1] && argv[ntraces + 1][0] != '-')
        ntraces++; /* several: merged */
    for (int i = ntraces + 1; argv[i]; i++) {
        const char *next = argv[i + 1];
        if (!strcmp(argv[i], "--step")) {
            is_step = 1;
            if (next && next[0] != '-')
                step = argv[++i];
        } else if (!strcmp(argv[i], "--tid") && next) {
            o.filter_tid = 1;
            o.tid = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--limit") && next)
            o.limit = strtoul(argv[++i], NULL, 10);
        else if ((!strcmp(argv[i], "-f") || !strcmp(argv[i], "--format")) && next)
            json = !strcmp(argv[++i], "json");
        else if (!strcmp(argv[i], "--tree"))
            tree = 1;
        else
            return 1; /* an option the loaded model's answer here does not take */
    }
    char err[512], what[OPP_NAME_MAX + 64];
    struct opp_model *m = tu_model_load_many(argv + 1, (size_t)ntraces, err, sizeof err);
    size_t len;
    FILE *f = open_memstream(out, &len);
    int rc = m && f ? 0 : -1;
    if (!rc && !is_step) {
        rc = loaded_table(f, trace, m, &o, json, tree);
    } else if (!rc) {
        int ranks = 0, in_main;
        for (size_t p = 0; p < m->nprocs; p++)
            ranks |= m->procs[p].rank >= 0;
        if ((in_main = m->nprocs > 1 && !ranks && !o.filter_tid && ntraces == 1)) {
            o.filter_pid = 1;
            o.pid = m->procs[0].pid;
        }
        struct opp_steps st;
        rc = step ? tu_steps_find(m, &o, step, &st)
                  : tu_steps_default(m, &o, &st, what, sizeof what);
        int shown = !rc && (!step || st.found.held);
        if (shown && in_main && !json)
            fprintf(f, "Steps of pid %u, the first process (--pid PID for another)\n", o.pid);
        if (shown)
            rc = opp_out_steps(f, step ? step : what, &st, json) ? -1 : 0;
        if (!rc)
            opp_steps_free(&st);
    }
    if (f)
        fclose(f);
    else
        *out = NULL;
    opp_model_free(m);
    return rc;
}

char *tu_stream_differ(int (*report)(int, char **), const char *dir, const char *const *argv)
{
    char *a[16], *b[16];
    int n = 0;
    for (; argv[n] && n < 14; n++)
        a[n] = b[n] = (char *)argv[n];
    a[n] = "--no-stream", b[n] = "--stream";
    a[n + 1] = b[n + 1] = NULL;
    char *ea, *eb, *oa = NULL, *want = NULL,
                   *why = tu_call_differ(report, a, b, dir, &oa, &ea, &eb);
    if (!why && strcmp(ea, eb) && asprintf(&why, "stderr differs:\n%s---\n%s", ea, eb) < 0)
        why = strdup("out of memory");
    /* the pass's answer against the loaded model's (--stream and
     * --no-stream are the same read now) */
    int loaded = why ? 1 : loaded_view(argv, &want);
    if (loaded < 0)
        why = strdup("cannot load the trace");
    else if (!loaded && strcmp(oa, want) &&
             asprintf(&why, "not the loaded model's:\n%.600s---\n%.600s", oa, want) < 0)
        why = strdup("out of memory");
    free(ea), free(eb), free(oa), free(want);
    if (!why)
        return NULL;
    char *all, line[512] = "";
    for (int i = 0; i < n; i++)
        snprintf(line + strlen(line), sizeof line - strlen(line), " %s", argv[i]);
    if (asprintf(&all, "%s: %s", line, why) < 0)
        all = NULL;
    free(why);
    return all ? all : strdup("out of memory");
}

char *tu_steps_differ(int (*report)(int, char **), const char *dir, const char *trace,
                      const char *const *names)
{
    for (size_t i = 0;; i++) {
        const char *name = i ? names[i - 1] : NULL;
        if (i && !name)
            return NULL;
        char *a[8] = {"report", (char *)trace, "--step"}, *out, *err, *want, *why = NULL;
        int n = 3;
        if (name)
            a[n++] = (char *)name;
        a[n++] = "--format", a[n++] = "json";
        int rc = tu_call(report, a, dir, &out, &err);
        if (loaded_steps(trace, name, &want))
            why = strdup("cannot load the trace");
        else if (rc != (want ? 0 : 2) || strcmp(out, want ? want : ""))
            if (asprintf(&why, "--step %s: returned %d; stdout:\n%.600s---\nloaded:\n%.600s---\n%s",
                         name ? name : "", rc, out, want ? want : "(no such name)", err) < 0)
                why = NULL;
        free(out), free(err), free(want);
        if (why)
            return why;
    }
}

#include "proto.h"
#include "util.h"

int tu_collector_start(const char *sock, const char *trace, const char *extra)
{
    return tu_collector_start_said(sock, trace, extra, NULL);
}

int tu_collector_start_said(const char *sock, const char *trace, const char *extra, const char *err)
{
    char *argv[] = {(char *)tu_tool("opprof-collector"),
                    "--socket",
                    (char *)sock,
                    "--output",
                    (char *)trace,
                    "--idle-exit-ms",
                    "0",
                    (char *)extra,
                    NULL};
    int pid = tu_spawn(argv, NULL, NULL, err);
    if (pid <= 0 || tu_wait_file(sock, 5000))
        return -1;
    return pid;
}

int tu_collector_finish(int pid, const char *sock)
{
    int fd = opp_connect(sock);
    if (fd < 0)
        return -1;
    uint32_t linger = 2000;
    uint64_t done[OPP_DONE_FIELDS];
    int rc = opp_send_msg(fd, OPP_MSG_FINISH, &linger, 4, -1);
    if (!rc)
        rc = opp_wait_msg(fd, OPP_MSG_DONE, done, sizeof done, NULL, 10000);
    close(fd);
    return rc ? -1 : tu_code(tu_wait(pid));
}

/* Until the collector's status says enough (events or processes), asked
 * as `opprof ctl status` does. */
static int collector_until(const char *sock, uint64_t events, uint32_t procs, int ms)
{
    for (int waited = 0; waited <= ms; waited += 10) {
        int fd = opp_connect(sock);
        if (fd < 0)
            return -1;
        struct opp_ctl_ack ack;
        int rc = opp_ctl_ask(fd, 0, &ack, 5000); /* opprof ctl status */
        close(fd);
        if (rc)
            return -1;
        if (ack.events >= events && ack.procs >= procs)
            return 0;
        usleep(10000);
    }
    return -1;
}

int tu_collector_events(const char *sock, uint64_t want, int ms)
{
    return collector_until(sock, want, 0, ms);
}

int tu_collector_procs(const char *sock, uint32_t want, int ms)
{
    return collector_until(sock, 0, want, ms);
}

int tu_collector_of(const char *trace, char *sock, size_t cap)
{
    for (int tries = 0; tries < 200; tries++) {
        DIR *d = opendir("/proc");
        int found = 0;
        for (struct dirent *e; d && !found && (e = readdir(d));) {
            char path[300], cmd[8192];
            snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
            FILE *f = fopen(path, "r");
            if (!f)
                continue;
            size_t n = fread(cmd, 1, sizeof cmd - 1, f);
            fclose(f);
            cmd[n] = 0;
            if (!strstr(cmd, "opprof-collector"))
                continue;
            const char *s = NULL, *prev = "";
            int has_trace = 0;
            for (size_t i = 0; i < n; i += strlen(cmd + i) + 1) {
                has_trace |= !strcmp(prev, "--output") && !strcmp(cmd + i, trace);
                if (!strcmp(prev, "--socket"))
                    s = cmd + i;
                prev = cmd + i;
            }
            if (has_trace) {
                found = atoi(e->d_name);
                if (sock && s)
                    snprintf(sock, cap, "%s", s);
            }
        }
        if (d)
            closedir(d);
        if (found)
            return found;
        usleep(10000);
    }
    return -1;
}
