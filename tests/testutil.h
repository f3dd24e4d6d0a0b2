/* Helpers for the Check suites: temporary directories and running the
 * built tools and test programs. */
#ifndef OPP_TESTUTIL_H
#define OPP_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

/* A fresh directory under /tmp, removed by the caller with tu_rmdir. */
char *tu_tmpdir(void);
void tu_rmdir(const char *dir);
/* path = dir "/" name, malloc'd. */
char *tu_path(const char *dir, const char *name);
/* Entries of dir whose name contains part. */
int tu_count_files(const char *dir, const char *part);

/* Run argv with extra environment entries ("NAME=value", NULL-terminated;
 * "NAME=" alone removes NAME), stdout and stderr to files (NULL: /dev/null).
 * Returns the wait status, or -1. */
int tu_run(char *const argv[], char *const env_add[], const char *out, const char *err);
/* Start it in the background; returns the pid. */
int tu_spawn(char *const argv[], char *const env_add[], const char *out, const char *err);
int tu_wait(int pid);
/* tu_run's, and the program's peak memory in KiB in *kb. A program built
 * with ASan runs without quarantine (freed memory reused at once: its peak
 * is then what it holds, not all it allocated). */
int tu_run_peak(char *const argv[], const char *out, const char *err, long *kb);
/* tu_run_peak of argv, its output in files of dir: NULL when it exited 0
 * and said nothing on stderr, else what it said (malloc'd); its stdout
 * (malloc'd) in *out, its peak in *kb. The peak-memory tests' run. */
char *tu_peak_quiet(const char *dir, char *const argv[], char **out, long *kb);
/* Exit code as a shell reports it: status or 128+signal. */
int tu_code(int status);
/* The plugin host tests/progs/unload under `opprof run -q -o trace`: 3
 * rounds of plugin (a built artifact's name), each unloading the library
 * whose mappings' path contains mapped and loading it again elsewhere.
 * Its exit code; its stdout and stderr (malloc'd) in *out and *err. */
int tu_unload_run(const char *dir, const char *trace, const char *plugin, const char *mapped,
                  char **out, char **err);

/* The interpreter the suites run (Debian's numpy and torch are its), and
 * whether it imports modules ("torch", "dask, pandas"): asked once per
 * process and modules. A suite that asks in many tests asks in an
 * unchecked fixture too, which Check runs in the runner before it forks
 * the tests, so that they inherit the answer (importing torch takes a
 * second of CPU). */
#define TU_PYTHON "/usr/bin/python3"
int tu_python_has(const char *modules);

/* A built artifact: $OPPROF_BUILD/name (tools: $OPPROF_TOOL_DIR/name if set). */
const char *tu_build(const char *name);
const char *tu_tool(const char *name);

/* Whole file as a NUL-terminated string (NULL if unreadable). */
char *tu_slurp(const char *path);
/* Lines of text that start with prefix. */
int tu_count_lines(const char *text, const char *prefix);
/* How many times what occurs in text (not overlapping). */
int tu_occurrences(const char *text, const char *what);
/* Wait until path exists (up to ms); 0 or -1. */
int tu_wait_file(const char *path, int ms);

/* The fixture of most end-to-end suites: a fresh directory `dir` and a
 * trace path `trace` in it per test (setup/teardown for Check). */
#define TU_TRACE_FIXTURE                                                                           \
    static char *dir, *trace;                                                                      \
    static void setup(void)                                                                        \
    {                                                                                              \
        dir = tu_tmpdir();                                                                         \
        trace = tu_path(dir, "t.trace");                                                           \
    }                                                                                              \
    static void teardown(void)                                                                     \
    {                                                                                              \
        tu_rmdir(dir);                                                                             \
        free(dir);                                                                                 \
        free(trace);                                                                               \
    }

/* A collector of the tests' own on sock writing trace (extra: one more
 * option, or NULL), listening when this returns its pid (-1 on failure);
 * finished with FINISH: its exit code, or -1. */
int tu_collector_start(const char *sock, const char *trace, const char *extra);
/* The same, its stderr into the file err (NULL: the tests'). */
int tu_collector_start_said(const char *sock, const char *trace, const char *extra,
                            const char *err);
int tu_collector_finish(int pid, const char *sock);
/* Waits up to ms for the collector on sock to have drained (and written)
 * at least want events, asking it as `opprof ctl status` does: 0, or -1. */
int tu_collector_events(const char *sock, uint64_t want, int ms);
/* The same until it has read the hello of at least want processes (and
 * so answered each with its mode). */
int tu_collector_procs(const char *sock, uint32_t want, int ms);

/* The running collector that writes trace (found by its command line,
 * waiting up to 2 s for it): its pid, and its socket path into sock (cap
 * bytes) unless NULL; -1 when there is none. */
int tu_collector_of(const char *trace, char *sock, size_t cap);

/* The environment of a plain LD_PRELOAD run writing trace (its own
 * collector: OPPROF_SOCKET unset), plus one extra entry (or none: NULL),
 * or, with _list, up to 4 from a NULL-terminated list. */
struct tu_env {
    char pre[4200], out[4200];
    char *env[8];
};
char **tu_preload_env(struct tu_env *e, const char *trace, const char *extra);
char **tu_preload_env_list(struct tu_env *e, const char *trace, const char *const *extra);

/* Call fn (a subcommand such as cmd_report) in this process with argv
 * (NULL-terminated), stdout and stderr captured through files in dir:
 * *out and *err are malloc'd strings. Returns fn's result, or -1000 when
 * the capture itself failed. */
int tu_call(int (*fn)(int, char **), char **argv, const char *dir, char **out, char **err);
/* fn called with argv a, then with argv b (tu_call): NULL when both
 * returned 0 and wrote the same stdout, else why not (malloc'd: what they
 * returned, or the first line where their outputs part). a's stdout into
 * *out and the two stderr into *ea and *eb (malloc'd) where not NULL. */
char *tu_call_differ(int (*fn)(int, char **), char **a, char **b, const char *dir, char **out,
                     char **ea, char **eb);

/* report (cmd_report) called with argv (NULL-terminated) and --no-stream,
 * then with --stream (the same read: two runs alike): NULL when both
 * returned 0 and wrote the same stdout and stderr, and, for the table, its
 * JSON, --tree, --gpu and --step (with --tid, --limit, -f json), the
 * stdout the loaded model's own functions give; else what differed
 * (malloc'd). */
char *tu_stream_differ(int (*report)(int, char **), const char *dir, const char *const *argv);
/* `report TRACE --step [NAME] -f json` (one pass over the trace) against
 * the loaded model's steps (step_times.c), for the program's own steps
 * and each of names (NULL-terminated): NULL when each returned what the
 * loaded model says (2 for a name no call has) and wrote its JSON, else
 * the first that did not (malloc'd). */
char *tu_steps_differ(int (*report)(int, char **), const char *dir, const char *trace,
                      const char *const *names);

/* What `call` wrote to the memory stream f it is given, as a malloc'd string
 * in out; call must return 0. For Check tests (needs check.h, stdio.h). */
#define CAPTURE(out, call)                                                                         \
    do {                                                                                           \
        size_t len_;                                                                               \
        FILE *f = open_memstream(&(out), &len_);                                                   \
        ck_assert_ptr_nonnull(f);                                                                  \
        ck_assert_int_eq((call), 0);                                                               \
        fclose(f);                                                                                 \
    } while (0)

/* A test of what this build lacks (why: "built without libsqlite3-dev"),
 * which says it is skipped. For Check tests (needs check.h, stdio.h). */
#define TU_SKIPPED(name, why)                                                                      \
    START_TEST(name)                                                                               \
    {                                                                                              \
        fprintf(stderr, "SKIP %s: %s\n", #name, (why));                                            \
    }                                                                                              \
    END_TEST
#define TU_NO_SQLITE "this opprof was built without SQLite (libsqlite3-dev)"

/* Trace helpers for end-to-end suites. */
struct opp_model;
struct opp_model *tu_load(const char *path); /* NULL and a message on failure */
/* Events named name ("" any) in process instance proc (-1 any) and thread
 * tid (0 any); open: -1 any, 0 returned calls only, 1 open calls only. */
unsigned long tu_count(const struct opp_model *m, const char *name, long proc, unsigned tid,
                       int open);
/* A pass over trace (analysis/pass.h), the test failing when it cannot
 * be read; trace must outlive it. */
struct opp_pass;
struct opp_pass *tu_pass_open(const char *trace);
/* The GPU statistics of trace for o (k: its kernels, may be NULL) as
 * --gpu reads them (gpu_stream.h): the pass, whose model names the
 * kernels and devices (free it after them), or NULL and a message. */
struct opp_agg_opts;
struct opp_gpu_stats;
struct opp_kernel_stats;
struct opp_pass *tu_gpu_stats(const char *trace, const struct opp_agg_opts *o,
                              struct opp_gpu_stats *s, struct opp_kernel_stats **k, size_t *nk);

#endif
