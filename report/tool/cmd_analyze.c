/* `opprof analyze TRACE_OR_DIR...`: many traces (one per rank or host)
 * analysed on Dask. The work is Python (report/analyze/opprof_analyze, on
 * the system's python3 with Debian's pandas, dask and distributed): this
 * reads the command line (its options, each a directory's *.trace files,
 * each file an opprof trace, none named twice), finds the interpreter and
 * the package, tells the package where this tool is (its tasks run `opprof
 * report` and `opprof export sqlite`), and hands over what it checked.
 * Exit status: 0 done, 2 usage (here, or a name a trace does not hold), 1
 * a trace that cannot be read or a cluster that failed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool/cmds.h"
#include "tool/options.h"
#include "tool/paths.h"
#include "trace.h"
#include "views/say.h"

#define PREFIX "opprof analyze: "

struct analyze_args {
    const char *scheduler, *step;
    int json;       /* --format json */
    size_t workers; /* 0: one per CPU, at most one per trace */
    size_t top;
};

/* --scheduler, --step: a word that is not empty (Dask reads the address:
 * the package checks it before starting anything). */
static int opt_word(const struct opp_option *o, const char *arg)
{
    if (!arg[0]) {
        opp_say(PREFIX "--%s wants %s", o->long_name, (const char *)o->data);
        return 2;
    }
    *(const char **)o->value = arg;
    return 0;
}

/* The traces: each operand a trace, or a directory's *.trace files in name
 * order (as a shell's glob: not those whose name starts with a dot). */
struct traces {
    char **paths;
    size_t n, cap;
};

static int traces_add(struct traces *t, char *path)
{
    if (!path)
        return -1;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        char **p = realloc(t->paths, cap * sizeof *p);
        if (!p) {
            free(path);
            return -1;
        }
        t->paths = p, t->cap = cap;
    }
    t->paths[t->n++] = path;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* dir's *.trace files added to t: 0, or the exit status with it said. */
static int traces_of_dir(struct traces *t, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        opp_say(PREFIX "cannot read %s: %s", dir, strerror(errno));
        return 1;
    }
    size_t from = t->n, len = strlen(dir);
    int oom = 0;
    for (struct dirent *e; !oom && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (e->d_name[0] == '.' || n < 6 || strcmp(e->d_name + n - 6, ".trace"))
            continue;
        char *p = malloc(len + n + 2);
        if (p)
            snprintf(p, len + n + 2, "%s%s%s", dir, len && dir[len - 1] == '/' ? "" : "/",
                     e->d_name);
        oom = traces_add(t, p);
    }
    closedir(d);
    if (oom) {
        opp_say(PREFIX "out of memory");
        return 1;
    }
    if (t->n == from) {
        opp_say(PREFIX "no *.trace file in %s", dir);
        return 1;
    }
    qsort(t->paths + from, t->n - from, sizeof *t->paths, by_name);
    return 0;
}

/* The operands' traces, each checked, none twice: 0, or the exit status
 * with why said. */
static int traces_of(struct traces *t, char **operands, int n)
{
    for (int i = 0; i < n; i++) {
        struct stat st;
        int rc = 0;
        if (stat(operands[i], &st)) {
            if (errno == ENOENT)
                opp_say(PREFIX "%s: no such file or directory", operands[i]);
            else
                opp_say(PREFIX "cannot read %s: %s", operands[i], strerror(errno));
            rc = 1;
        } else if (S_ISDIR(st.st_mode))
            rc = traces_of_dir(t, operands[i]);
        else if (traces_add(t, strdup(operands[i]))) {
            opp_say(PREFIX "out of memory");
            rc = 1;
        }
        if (rc)
            return rc;
    }
    /* each begins as an opprof trace does: said here, before any task
     * starts, not in a worker's failure */
    char err[PATH_MAX + 64];
    for (size_t i = 0; i < t->n; i++)
        if (opp_trace_check(t->paths[i], err, sizeof err)) {
            opp_say(PREFIX "%s", err);
            return 1;
        }
    return opp_option_traces_distinct("analyze", (const char *const *)t->paths, t->n);
}

/* The local cluster's workers: one per CPU unless asked, never more than
 * the traces (each is one task): 0, or 2 with why said. */
static int workers_of(struct analyze_args *a, size_t traces)
{
    if (a->scheduler) {
        if (a->workers) {
            opp_say(PREFIX "--workers is for the local cluster; --scheduler's cluster has its own");
            return 2;
        }
        return 0;
    }
    if (a->workers > traces) {
        opp_say(PREFIX "--workers takes 1 to %zu, one per trace at most, not %zu", traces,
                a->workers);
        return 2;
    }
    if (!a->workers) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        a->workers = cpus < 1 ? 1 : (size_t)cpus;
        if (a->workers > traces)
            a->workers = traces;
    }
    return 0;
}

/* a then b in a new string, NULL without memory. */
static char *joined(const char *a, const char *b)
{
    size_t len = strlen(a) + strlen(b) + 1;
    char *s = malloc(len);
    if (s)
        snprintf(s, len, "%s%s", a, b);
    return s;
}

/* Runs the package on the checked arguments; returns only when it cannot. */
static int run_package(const struct analyze_args *a, const struct traces *t)
{
    /* said as the tool's other commands say it, before Dask starts: the
     * interpreter would take a closed stdout's descriptor for a file or
     * socket of its own */
    if (fcntl(STDOUT_FILENO, F_GETFD) == -1) {
        opp_say(PREFIX "cannot write the output: %s", strerror(errno));
        return 1;
    }
    char pkg[PATH_MAX], self[PATH_MAX];
    if (opp_tool_sibling("OPPROF_ANALYZE", "analyze", pkg, sizeof pkg) ||
        opp_tool_self(self, sizeof self)) {
        opp_say(PREFIX "cannot find its Python package next to opprof (the build's "
                       "analyze/ folder; set OPPROF_ANALYZE to it)");
        return 1;
    }
    const char *old = getenv("PYTHONPATH");
    size_t len = strlen(pkg) + (old ? strlen(old) : 0) + 2;
    char *path = malloc(len);
    if (!path) {
        opp_say(PREFIX "out of memory");
        return 1;
    }
    snprintf(path, len, "%s%s%s", pkg, old && *old ? ":" : "", old && *old ? old : "");
    const char *py = getenv("OPPROF_PYTHON");
    if (!py || !*py) /* the system's interpreter: Debian's pandas and dask are its */
        py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    int bad = setenv("PYTHONPATH", path, 1) || setenv("OPPROF_TOOL", self, 1);
    free(path);
    if (bad) {
        opp_say(PREFIX "cannot set its environment: %s", strerror(errno));
        return 1;
    }
    /* each option one word, "--step=NAME": a NAME that begins with '-' is
     * not taken for an option */
    char workers[32], top[32], *scheduler = NULL, *step = NULL;
    snprintf(workers, sizeof workers, "--workers=%zu", a->workers);
    snprintf(top, sizeof top, "--top=%zu", a->top);
    char **args = calloc(t->n + 16, sizeof *args);
    if (!args || (a->scheduler && !(scheduler = joined("--scheduler=", a->scheduler))) ||
        (a->step && !(step = joined("--step=", a->step)))) {
        opp_say(PREFIX "out of memory");
        free(args), free(scheduler), free(step);
        return 1;
    }
    size_t n = 0;
    args[n++] = (char *)py;
    args[n++] = "-m";
    args[n++] = "opprof_analyze";
    args[n++] = scheduler ? scheduler : workers;
    if (step)
        args[n++] = step;
    args[n++] = top;
    args[n++] = a->json ? "--format=json" : "--format=text";
    args[n++] = "--";
    for (size_t i = 0; i < t->n; i++)
        args[n++] = t->paths[i];
    execvp(py, args);
    opp_say(PREFIX "cannot run %s: %s", py, strerror(errno));
    free(args), free(scheduler), free(step);
    return 1;
}

int cmd_analyze(int argc, char **argv)
{
    struct analyze_args a = {.top = 20};
    const struct opp_option options[] = {
        {.type = OPP_OPTION_CALLBACK,
         .long_name = "scheduler",
         .value = &a.scheduler,
         .argh = "ADDRESS",
         .help = "a running Dask scheduler (tcp://HOST:PORT)",
         .fn = opt_word,
         .data = (intptr_t) "a Dask scheduler's address (tcp://HOST:PORT)"},
        OPP_OPT_NUMBER(0, "workers", &a.workers, "N",
                       "workers of the local cluster, 1 to the number of traces\n"
                       "(default: one per CPU, at most one per trace)",
                       OPP_NUMBER_SIZE, 1, 1e15, "a positive number"),
        {.type = OPP_OPTION_CALLBACK,
         .long_name = "step",
         .value = &a.step,
         .argh = "NAME",
         .help = "step boundary for step times, as opprof report --step",
         .fn = opt_word,
         .data = (intptr_t) "an operator name"},
        OPP_OPT_NUMBER(0, "top", &a.top, "N", "operators shown (default 20)", OPP_NUMBER_SIZE, 1,
                       1e15, "a positive number"),
        OPP_OPT_CHOICE(0, "format", &a.json, NULL, "FMT", "text (default) or json", "text", "json"),
        OPP_OPT_HELP("show this help"),
        OPP_OPT_END(),
    };
    const struct opp_command cmd = {
        .name = "analyze",
        .usage = "usage: opprof analyze TRACE_OR_DIR... [options]\n"
                 "\n"
                 "Many traces (one per rank or host: a directory's *.trace files) analysed\n"
                 "on Dask, one task per trace: operators over all ranks, stragglers, per-rank\n"
                 "step and GPU time. Dask's local cluster unless --scheduler names one.\n"
                 "\n",
        .col = 27,
        .options = options,
    };
    int first, parsed = opp_options_parse(&cmd, argc, argv, &first);
    if (parsed)
        return parsed == 1 ? 0 : parsed;
    if (first == argc) {
        opp_say(PREFIX "which traces? (usage: opprof analyze TRACE_OR_DIR... [options])");
        return 2;
    }
    struct traces t = {0};
    int rc = traces_of(&t, argv + first, argc - first);
    if (!rc)
        rc = workers_of(&a, t.n);
    if (!rc)
        rc = run_package(&a, &t);
    for (size_t i = 0; i < t.n; i++)
        free(t.paths[i]);
    free(t.paths);
    return rc;
}
