/* `opprof run [-o FILE] -- CMD...`: start a collector, run CMD with the
 * preload, wait for the trace to be complete, show the top of the report,
 * and exit with CMD's status (128+signal when a signal ended it). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tool/cmds.h"
#include "tool/collectors.h"
#include "tool/paths.h"
#include "tool/options.h"
#include "schedule.h"
#include "summary.h"
#include "trace.h"
#include "util.h"
#include "views/say.h"

extern char **environ;

/* Who the messages say they are from: `opprof top -- CMD` runs us as its
 * child (--top-fd), and what we say is its. */
static const char *who = "opprof run";

/* A termination request sent to us alone (a container's stop to its
 * PID 1, a parent's terminate(), kill PID) is for CMD, as it would be
 * without us: passed on while it runs. Only SIGTERM: a sender of the
 * whole process group or cgroup (kill -- -PGID, systemd, Slurm) reaches
 * CMD itself as well, and a second SIGUSR1 or SIGHUP would run a handler
 * (a checkpoint, a log reopened) twice. Not one the kernel sent, which
 * CMD gets itself, as it gets the terminal's SIGINT and SIGQUIT. */
static const int forwarded[] = {SIGTERM};
enum { NFORWARDED = sizeof forwarded / sizeof *forwarded };
static volatile sig_atomic_t forward_to;

static void forward(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int saved_errno = errno;
    if (forward_to > 0 && si->si_code != SI_KERNEL)
        kill((pid_t)forward_to, sig);
    errno = saved_errno;
}

static int wait_status(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return st;
}

/* top: `opprof top` watches, and the collector adds up every call (--top). */
static pid_t start_collector(const char *exe, const char *sock, const char *out, int top)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0)
        return -1;
    char me[24]; /* it finishes the trace if we are killed before we ask */
    snprintf(me, sizeof me, "%d", (int)getpid());
    char *argv[] = {(char *)exe, "--socket",   (char *)sock, "--output",
                    (char *)out, "--ready-fd", "3",          "--idle-exit-ms",
                    "0",         "--parent",   me,           top ? "--top" : NULL,
                    NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 3);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    /* Its own process group: a Ctrl-C meant for CMD must not cut the trace. */
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    pid_t pid;
    int rc = posix_spawn(&pid, exe, &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(pfd[1]);
    if (rc) {
        close(pfd[0]);
        errno = rc;
        return -1;
    }
    char ok = 0;
    struct pollfd p = {.fd = pfd[0], .events = POLLIN};
    if (poll(&p, 1, 10000) > 0 && read(pfd[0], &ok, 1) != 1)
        ok = 0;
    close(pfd[0]);
    if (ok != '1') {
        kill(pid, SIGTERM);
        wait_status(pid);
        errno = EIO;
        return -1;
    }
    return pid;
}

/* `opprof top -- CMD`: the collector's socket to the watcher on fd (none
 * when unprofiled: the fd closes), and CMD starts once it watches (it
 * answers a byte), so that it sees the whole run, however short. */
#define WATCHER_MS 10000

static void await_watcher(int fd, const char *sock)
{
    if (sock) {
        char line[200];
        int n = snprintf(line, sizeof line, "%s\n", sock);
        if (n > 0 && (size_t)n < sizeof line && write(fd, line, (size_t)n) == n) {
            struct pollfd p = {.fd = fd, .events = POLLIN};
            char ok;
            if (poll(&p, 1, WATCHER_MS) > 0 && read(fd, &ok, 1) != 1) {
                /* gone: CMD runs unwatched */
            }
        }
    }
    close(fd);
}

/* On a terminal, while CMD runs: one line on stderr, rewritten each
 * second, of what the collector has so far (asked as `opprof ctl status`
 * does: a control connection of its own). */
#define PROGRESS_MS 1000

static void progress(const char *sock, uint64_t started, uint64_t *last_events,
                     uint64_t *last_at)
{
    int fd = opp_connect(sock);
    if (fd < 0)
        return;
    struct opp_ctl_ack ack;
    int rc = opp_ctl_ask(fd, 0, &ack, 500);
    close(fd);
    if (rc)
        return;
    uint64_t now = opp_mono_ns();
    double rate = now > *last_at && ack.events >= *last_events
                      ? (double)(ack.events - *last_events) * 1e9 / (double)(now - *last_at)
                      : 0;
    fprintf(stderr, "\r\033[Kopprof: %.0f s, %llu records (%.0f/s), %llu dropped",
            (double)(now - started) / 1e9, (unsigned long long)ack.events, rate,
            (unsigned long long)ack.dropped);
    *last_events = ack.events;
    *last_at = now;
}

/* Wait for CMD, with the progress line when show is set (erased at the end). */
static int wait_cmd(pid_t pid, int show, const char *sock)
{
    uint64_t started = opp_mono_ns(), last_events = 0, last_at = started;
    int shown = 0;
    for (int waited = 0;; waited += 50) {
        siginfo_t si = {0}; /* ended, not reaped yet: its pid is no one else's */
        if (waitid(P_PID, pid, &si, WEXITED | WNOWAIT | (show ? WNOHANG : 0)) == 0
                ? si.si_pid == pid
                : errno != EINTR)
            break;
        if (!show)
            continue;
        if (waited >= PROGRESS_MS) {
            progress(sock, started, &last_events, &last_at);
            shown = 1;
            waited = 0;
        }
        usleep(50000);
    }
    forward_to = 0; /* nothing passed on to its pid once it is free */
    if (shown)
        fputs("\r\033[K", stderr);
    return wait_status(pid);
}

/* CMD's environment: ours, with the preload first in LD_PRELOAD. */
static char **child_env(const char *lib, const char *sock)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 4, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    const char *old = getenv("LD_PRELOAD");
    /* NVTX ranges come to us unless the user named another NVTX tool
     * (the preload says so). */
    const char *nvtx = getenv("NVTX_INJECTION64_PATH");
    int set_nvtx = !nvtx || !*nvtx;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) && strncmp(environ[i], "OPPROF_SOCKET=", 14) &&
            !(set_nvtx && !strncmp(environ[i], "NVTX_INJECTION64_PATH=", 22)))
            env[k++] = environ[i];
    size_t len = strlen(lib) + (old ? strlen(old) : 0) + 16;
    char *pre = malloc(len);
    char *so = malloc(strlen(sock) + 16);
    if (!pre || !so) {
        free(pre);
        free(so);
        free(env);
        return NULL;
    }
    snprintf(pre, len, "LD_PRELOAD=%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "");
    snprintf(so, strlen(sock) + 16, "OPPROF_SOCKET=%s", sock);
    env[k++] = pre;
    env[k++] = so;
    if (set_nvtx) {
        size_t nl = strlen(lib) + 32;
        char *nv = malloc(nl);
        if (nv) {
            snprintf(nv, nl, "NVTX_INJECTION64_PATH=%s", lib);
            env[k++] = nv;
        }
    }
    env[k] = NULL;
    return env;
}

/* Ask the collector to finish once every process is gone (or after the
 * linger), and wait until the file is complete: as long as the collector
 * makes progress, never on one that is stopped or stuck. 0, or -errno
 * with p->state telling a stopped collector ('T'). */
#define FINISH_LINGER_MS 2000 /* how long processes CMD left behind may go on */

static int finish_trace(const char *sock, pid_t cmd, int status, uint64_t done[OPP_DONE_FIELDS],
                        struct opp_patience *p)
{
    int fd = opp_connect_within(sock, 2000);
    if (fd < 0) {
        p->state = opp_proc_state(p->pid);
        return fd;
    }
    /* and how CMD ended (cmd > 0), which no profiled parent reaps */
    uint32_t fin[4] = {FINISH_LINGER_MS, (uint32_t)cmd, (uint32_t)getpid(), (uint32_t)status};
    int rc = opp_send_msg(fd, OPP_MSG_FINISH, fin, cmd > 0 ? sizeof fin : sizeof fin[0], -1);
    uint32_t got = 0;
    if (!rc)
        rc = opp_wait_answer(fd, OPP_MSG_DONE, done, OPP_DONE_FIELDS * sizeof(uint64_t), &got, p);
    close(fd);
    return rc;
}

static void show_report(const char *out, size_t limit)
{
    char self[PATH_MAX], rows[32];
    if (opp_tool_self(self, sizeof self))
        return;
    snprintf(rows, sizeof rows, "%zu", limit);
    char *argv[] = {self, "report", (char *)out, "--limit", rows, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, 2, 1); /* the table goes to stderr */
    pid_t pid;
    if (posix_spawn(&pid, self, &fa, NULL, argv, environ) == 0)
        wait_status(pid);
    posix_spawn_file_actions_destroy(&fa);
}

/* The variable the option sets (value) to its argument, or to 1. */
static int opt_setenv(const struct opp_option *o, const char *arg)
{
    setenv(o->value, arg ? arg : "1", 1);
    return 0;
}

/* --schedule, --step: the variable they set, and whether they were given. */
struct sched_opt {
    const char *var;
    int given;
};

static int opt_sched(const struct opp_option *o, const char *arg)
{
    struct sched_opt *so = o->value;
    /* refused when empty, as the parser refuses a string option given
     * empty: the agent would take '' for no schedule or no step */
    if (!*arg && !strcmp(so->var, "OPPROF_SCHEDULE")) {
        opp_say("%s: --schedule wants S (as \"skip_first=10,wait=1,warmup=1,active=3,repeat=2\"), "
                "not ''",
                who);
        return 2;
    } else if (!*arg) {
        opp_say("%s: --step does not say what a step is (" OPP_STEP_MARKERS ")", who);
        return 2;
    }
    so->given = 1;
    setenv(so->var, arg, 1);
    return 0;
}

static int opt_mode(const struct opp_option *o, const char *arg)
{
    if (strcmp(arg, "full") && strcmp(arg, "summary")) {
        opp_say("%s: --mode takes full or summary, not '%s'", who, arg);
        return 2;
    }
    return opt_setenv(o, arg);
}

/* The schedule CMD's agent will read (OPPROF_SCHEDULE with OPPROF_STEP,
 * set by --schedule and --step or in the environment): 0, or 2 when the
 * agent would ignore it (said in one line, naming the option when it was
 * given, else the variable). Whether call:NAME names a function opprof
 * intercepts is the agent's to say. */
static int schedule_check(const struct sched_opt *sched, const struct sched_opt *step)
{
    struct opp_schedule s;
    char why[300];
    const char *text = getenv(sched->var);
    const char *sname = sched->given ? "--schedule" : sched->var;
    const char *mname = step->given ? "--step" : step->var;
    enum opp_schedule_read got = opp_schedule_parse(text, getenv(step->var), &s, why, sizeof why);
    if (got == OPP_SCHEDULE_NONE && step->given) { /* the agent reads no step without one */
        opp_say("%s: --step says what a schedule's steps are: give --schedule too", who);
        return 2;
    }
    if (got == OPP_SCHEDULE_NONE || got == OPP_SCHEDULE_OK)
        return 0;
    if (got == OPP_SCHEDULE_BAD)
        opp_say("%s: %s '%s': %s", who, sname, text, why);
    else if (got == OPP_SCHEDULE_NO_STEP && !step->given)
        opp_say("%s: %s needs --step, which says what a step is (" OPP_STEP_MARKERS ")", who,
                sname);
    else /* a step that is not one */
        opp_say("%s: %s %s", who, mname, why);
    return 2;
}

/* The interpreters the kernel runs one inside another (a script's "#!"
 * naming a script): past that many, execve's ELOOP, left to it. */
#define INTERP_DEPTH 4

/* What execve would say of path before it runs anything: 0 (it may run;
 * a format it cannot take, as a script without "#!" or a "#!" naming
 * nothing, is run by /bin/sh as execvp runs it: spawn_cmd), ENOENT,
 * EISDIR, EACCES (not a regular file, not executable), or of a script's
 * "#!" interpreter ENOENT or EACCES (one a CRLF line end names, too; a
 * script itself whose own interpreter does not run, as execve looks
 * through each), the name of the one that does not run then in bad (cap
 * bytes; else bad is ""). Said before the collector starts, which empties
 * the trace a run replaces. */
static int exec_check_at(const char *path, char *bad, size_t cap, int depth)
{
    *bad = 0;
    struct stat st;
    if (stat(path, &st) < 0)
        return errno == ENOTDIR ? ENOENT : errno;
    if (S_ISDIR(st.st_mode))
        return EISDIR;
    if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0)
        return EACCES;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return 0; /* executable, not readable: execve's to say */
    char head[256];
    ssize_t n = read(fd, head, sizeof head - 1);
    close(fd);
    if (n < 2 || head[0] != '#' || head[1] != '!' ||
        (!memchr(head, '\n', (size_t)n) && n == (ssize_t)sizeof head - 1))
        return 0; /* not a script, or a line longer than we read */
    head[n] = 0;
    char *interp = head + 2 + strspn(head + 2, " \t");
    interp[strcspn(interp, " \t\n")] = 0;
    if (!*interp)
        return 0; /* "#!" naming nothing: execve's ENOEXEC, a shell script for execvp */
    struct stat is;
    int e = stat(interp, &is) < 0                              ? ENOENT
            : !S_ISREG(is.st_mode) || access(interp, X_OK) < 0 ? EACCES
                                                               : 0;
    if (!e && depth < INTERP_DEPTH && (e = exec_check_at(interp, bad, cap, depth + 1)) && *bad)
        return e; /* the innermost that does not run is named */
    if (e)
        snprintf(bad, cap, "%s", interp);
    return e;
}

static int exec_check(const char *path, char *bad, size_t cap)
{
    return exec_check_at(path, bad, cap, 0);
}

/* Whether cmd runs, found as execvp finds it: 0 and its path in run
 * (PATH_MAX bytes), or why not (exec_check's, of the first one found on
 * PATH when it has no '/': PATH unset is glibc's "/bin:/usr/bin", an
 * empty entry the current directory). */
static int runnable(const char *cmd, char *bad, size_t cap, char *run)
{
    *bad = 0;
    if (strchr(cmd, '/')) {
        snprintf(run, PATH_MAX, "%s", cmd);
        return exec_check(cmd, bad, cap);
    }
    const char *path = getenv("PATH");
    int found = 0;
    for (const char *p = path ? path : "/bin:/usr/bin";;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char full[PATH_MAX];
        if (snprintf(full, sizeof full, "%.*s%s%s", (int)n, p, n ? "/" : "", cmd) <
            (int)sizeof full) {
            char skipped[256]; /* execvp says nothing of those it passes */
            int e = exec_check(full, skipped, sizeof skipped);
            if (!e) {
                memcpy(run, full, sizeof full);
                return 0;
            }
            if (e != ENOENT) /* execvp goes on past it, and says EACCES at the end */
                found = 1;
        }
        if (!end)
            break;
        p = end + 1;
    }
    return found ? EACCES : ENOENT;
}

/* Whether path is a binary file, as bash tells one from a script it
 * would run itself: ELF's magic, or a NUL byte in its first line (of its
 * first 80 bytes). */
static int binary_file(const char *path)
{
    char head[80];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    ssize_t n = fd < 0 ? 0 : read(fd, head, sizeof head);
    if (fd >= 0)
        close(fd);
    if (n >= 4 && !memcmp(head,
                          "\x7f"
                          "ELF",
                          4))
        return 1;
    for (ssize_t i = 0; i < n && head[i] != '\n'; i++)
        if (!head[i])
            return 1;
    return 0;
}

/* CMD started at path (runnable's), as execvp starts it: a file execve
 * takes for no format (ENOEXEC: a script without "#!") is run by /bin/sh,
 * path its first argument, unless it is a binary (an ELF of another
 * machine), as a shell refuses it. 0, or posix_spawn's error. */
static int spawn_cmd(pid_t *pid, const char *path, char **cmd, const posix_spawnattr_t *at,
                     char **env)
{
    int rc = posix_spawn(pid, path, NULL, at, cmd, env);
    if (rc != ENOEXEC || binary_file(path))
        return rc;
    size_t n = 0;
    while (cmd[n])
        n++;
    char **sh = calloc(n + 2, sizeof *sh);
    if (!sh)
        return rc;
    sh[0] = "/bin/sh";
    sh[1] = (char *)path;
    for (size_t i = 1; i <= n; i++) /* and its NULL */
        sh[i + 1] = cmd[i];
    rc = posix_spawn(pid, "/bin/sh", NULL, at, sh, env);
    free(sh);
    return rc ? ENOEXEC : 0;
}

/* The call paths the collector keeps under a summary: OPPROF_MAX_NODES,
 * which --max-nodes sets, as the collector reads it. */
static uint32_t max_nodes_kept(void)
{
    int bad;
    return opp_sum_nodes_of(getenv("OPPROF_MAX_NODES"), &bad);
}

/* What the trace lacks, said where no report follows to say it. */
static void say_losses(const uint64_t done[OPP_DONE_FIELDS])
{
    char what[320];
    if (done[OPP_DONE_DROPPED] > done[OPP_DONE_INTERRUPTED]) /* the rest: buffers full */
        opp_say("%s: records were dropped (buffers full): %s", who, OPP_DROP_ADVICE);
    if (done[OPP_DONE_INTERRUPTED])
        opp_say("%s: records were dropped (%s): %s", who, OPP_INTERRUPTED_WHY,
                OPP_INTERRUPTED_ADVICE);
    if (done[OPP_DONE_SUM_DROPPED]) {
        opp_sum_dropped_said(what, sizeof what, done[OPP_DONE_SUM_DROPPED], max_nodes_kept());
        opp_say("%s: %s", who, what);
    }
    if (done[OPP_DONE_SUM_LOST]) {
        opp_sum_lost_said(what, sizeof what, done[OPP_DONE_SUM_LOST]);
        opp_say("%s: %s; a full trace (OPPROF_MODE=full) has them", who, what);
    }
}

int cmd_run(int argc, char **argv)
{
    const char *out = NULL;
    size_t limit = 10;
    int quiet = 0, verbose = 0, limit_given = 0;
    const char *top_fd = NULL;
    struct sched_opt sched = {"OPPROF_SCHEDULE", 0}, step = {"OPPROF_STEP", 0};
    uint32_t max_nodes = 0;
    int nodes_given = 0;
    const struct opp_option options[] = {
        OPP_OPT_STRING('o', "output", &out, "FILE", "trace file (default opprof-PID.trace)"),
        OPP_OPT_FLAG('q', "quiet", &quiet,
                     "no progress line while CMD runs (on a terminal), no\n"
                     "report when it ends"),
        {.type = OPP_OPTION_NUMBER,
         .short_name = 'l',
         .long_name = "limit",
         .value = &limit,
         .given = &limit_given,
         .argh = "N",
         .help = "rows of the report printed (default 10)",
         .kind = OPP_NUMBER_SIZE,
         .lo = 1,
         .hi = 1e15,
         .wants = "a positive number",
         .flags = OPP_OPTION_UNLISTED_SHORT},
        OPP_OPT_CALLBACK(0, "schedule", &sched, "S",
                         "record only some steps, as torch.profiler.schedule:\n"
                         "\"skip_first=10,wait=1,warmup=1,active=3,repeat=2\"\n"
                         "(sets OPPROF_SCHEDULE)",
                         opt_sched),
        OPP_OPT_CALLBACK(0, "step", &step, "M",
                         "what a step is: torch (each optimizer step of a PyTorch\n"
                         "program ends one), torch:forward (each outermost\n"
                         "nn.Module forward ends one), nvtx:NAME (each NAME range\n"
                         "begins one), call:NAME (each call of NAME begins one) or\n"
                         "time:500ms (sets OPPROF_STEP)",
                         opt_sched),
        OPP_OPT_CALLBACK(0, "paused", "OPPROF_PAUSED", NULL,
                         "record nothing until `opprof ctl start` (sets OPPROF_PAUSED)",
                         opt_setenv),
        OPP_OPT_CALLBACK(0, "mode", "OPPROF_MODE", "M",
                         "full (every call, the default) or summary (calls added up\n"
                         "by call path: a trace of constant size; sets OPPROF_MODE)",
                         opt_mode),
        OPP_OPT_NUMBER_GIVEN(0, "max-nodes", &max_nodes, &nodes_given, "N",
                             "a summary's call paths kept at most (default 1048576):\n"
                             "calls on new ones past it are dropped and counted (sets\n"
                             "OPPROF_MAX_NODES)",
                             OPP_NUMBER_U32, 1, OPP_SUM_NODES_MAX, "a number from 1 to 268435456"),
        OPP_OPT_FLAG('v', "verbose", &verbose,
                     "say the collector's socket and pid (for `opprof ctl\n"
                     "--socket`) as it starts"),
        {.type = OPP_OPTION_HELP,
         .short_name = 'h',
         .long_name = "help",
         .flags = OPP_OPTION_HIDDEN},
        {.type = OPP_OPTION_STRING,
         .long_name = "top-fd",
         .value = &top_fd,
         .argh = "FD",
         .help = "",
         .flags = OPP_OPTION_HIDDEN}, /* from `opprof top -- CMD` */
        OPP_OPT_END(),
    };
    const struct opp_command run = {
        .name = "run",
        .usage = "usage: opprof run [-o FILE] [-q] [--limit N] [--schedule S --step M] [--paused] "
                 "[--mode M] [--max-nodes N] [-v] -- CMD [ARG...]\n",
        .col = 21,
        .long_indent = 2,
        .in_order = 1, /* CMD's own options follow */
        .options = options,
    };
    int first, parsed = opp_options_parse(&run, argc, argv, &first);
    if (parsed)
        return parsed == 1 ? 0 : parsed;
    if (top_fd)
        who = "opprof top";
    if (first >= argc) {
        opp_say("%s: no command given (usage: opprof run [OPTIONS] -- CMD [ARG...])", who);
        return 2;
    }
    char **cmd = argv + first;
    if (quiet && limit_given) { /* else taken and never shown */
        opp_say("%s: --limit is the report's rows, which -q leaves out: give one of them", who);
        return 2;
    }
    if (schedule_check(&sched, &step))
        return 2;
    const char *mode = getenv("OPPROF_MODE");
    if (nodes_given) {
        if (!mode || strcmp(mode, "summary")) { /* a full trace keeps every path */
            opp_say("%s: --max-nodes bounds a summary: give --mode summary too", who);
            return 2;
        }
        char n[16];
        snprintf(n, sizeof n, "%" PRIu32, max_nodes);
        setenv("OPPROF_MAX_NODES", n, 1);
    }
    char interp[256], runpath[PATH_MAX];
    int ran = runnable(cmd[0], interp, sizeof interp, runpath);
    if (ran) { /* as a shell says it, before any trace is made */
        opp_say("%s: cannot run %s: %s%s%s%s", who, cmd[0], *interp ? "bad interpreter '" : "",
                interp, *interp ? "': " : "", strerror(ran));
        return ran == ENOENT ? 127 : 126;
    }
    char lib[PATH_MAX], coll[PATH_MAX], outbuf[PATH_MAX], sock[108], why_not[PATH_MAX + 100];
    if (!out) {
        snprintf(outbuf, sizeof outbuf, "opprof-%d.trace", (int)getpid());
        out = outbuf;
    }
    /* The trace asked for cannot be written (a FIFO, a directory, a
     * directory missing or not ours): said before CMD starts, not run
     * unprofiled. */
    if (opp_tw_check(out, why_not, sizeof why_not)) {
        opp_say("%s: %s", who, why_not);
        return 2;
    }
    /* A file there already the collector leaves as it was until a
     * process of the run says hello: one nothing is recorded into is kept. */
    struct stat ost;
    int existed = stat(out, &ost) == 0;
    int profiled = 1;
    const char *why = NULL;
    pid_t cpid = -1;
    opp_collectors_sweep(); /* the sockets of runs that died */
    if (opp_tool_sibling("OPPROF_LIB", "libopprof.so", lib, sizeof lib) != 0) {
        opp_say("%s: cannot find libopprof.so next to opprof (set OPPROF_LIB); "
                "running the command unprofiled",
                who);
        profiled = 0;
    } else if (opp_tool_sibling("OPPROF_COLLECTOR", "opprof-collector", coll, sizeof coll) != 0) {
        opp_say("%s: cannot find opprof-collector next to opprof (set "
                "OPPROF_COLLECTOR); running the command unprofiled",
                who);
        profiled = 0;
    } else if (opp_socket_path(sock, sizeof sock, &why) != 0) {
        opp_say("%s: %s; running the command unprofiled", who, why);
        profiled = 0;
    } else if ((cpid = start_collector(coll, sock, out, top_fd != NULL)) < 0) {
        opp_say("%s: the collector did not start (see above); running the "
                "command unprofiled",
                who);
        profiled = 0;
    }
    if (profiled && verbose)
        opp_say("%s: collector pid %d on %s", who, (int)cpid, sock);
    if (top_fd)
        await_watcher(atoi(top_fd), profiled ? sock : NULL);
    char **env = profiled ? child_env(lib, sock) : environ;
    if (!env)
        env = environ;
    /* Like system(): the terminal's signals are for CMD; we wait for it.
     * The forwarded ones wait, blocked, until CMD's pid is known; CMD
     * starts with our mask and actions as they were. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, oint, oquit, ofwd[NFORWARDED];
    sigaction(SIGINT, &ign, &oint);
    sigaction(SIGQUIT, &ign, &oquit);
    sigset_t fwd, omask;
    sigemptyset(&fwd);
    for (int i = 0; i < NFORWARDED; i++)
        sigaddset(&fwd, forwarded[i]);
    sigprocmask(SIG_BLOCK, &fwd, &omask);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t def; /* as system(): what we ignored before is ignored by CMD too */
    sigemptyset(&def);
    if (oint.sa_handler != SIG_IGN)
        sigaddset(&def, SIGINT);
    if (oquit.sa_handler != SIG_IGN)
        sigaddset(&def, SIGQUIT);
    posix_spawnattr_setsigdefault(&at, &def);
    posix_spawnattr_setsigmask(&at, &omask);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    pid_t pid;
    int rc = spawn_cmd(&pid, runpath, cmd, &at, env);
    posix_spawnattr_destroy(&at);
    struct sigaction pass = {.sa_sigaction = forward, .sa_flags = SA_SIGINFO | SA_RESTART};
    forward_to = rc ? 0 : pid;
    for (int i = 0; i < NFORWARDED; i++) {
        sigaction(forwarded[i], NULL, &ofwd[i]);
        if (ofwd[i].sa_handler != SIG_IGN) /* ignored: CMD ignores it too */
            sigaction(forwarded[i], &pass, NULL);
    }
    sigprocmask(SIG_SETMASK, &omask, NULL);
    int status = 0, code;
    if (rc) {
        opp_say("%s: cannot run %s: %s", who, cmd[0], strerror(rc));
        code = rc == ENOENT ? 127 : 126;
    } else {
        status = wait_cmd(pid, profiled && !quiet && isatty(2), sock);
        code = WIFEXITED(status) ? WEXITSTATUS(status)
               : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    }
    forward_to = 0;
    for (int i = 0; i < NFORWARDED; i++)
        sigaction(forwarded[i], &ofwd[i], NULL);
    sigaction(SIGINT, &oint, NULL);
    sigaction(SIGQUIT, &oquit, NULL);
    if (!profiled)
        return code;
    uint64_t done[OPP_DONE_FIELDS] = {0};
    struct opp_patience pat = {.pid = cpid, .trace = out,
                               .quiet_ms = FINISH_LINGER_MS + 1000, .max_ms = 3600 * 1000};
    int frc = finish_trace(sock, rc ? -1 : pid, status, done, &pat);
    if (frc == -ETIMEDOUT) { /* leave it be: it finishes the file if it ever goes on */
        if (pat.state == 'T')
            opp_say("%s: the collector (pid %d) is stopped: %s is not finished; "
                    "it will be once the collector continues (kill -CONT %d)",
                    who, (int)cpid, out, (int)cpid);
        else
            opp_say("%s: the collector (pid %d) did not answer for %d s: %s "
                    "may not be finished",
                    who, (int)cpid, pat.quiet_ms / 1000, out);
        return code;
    }
    int cst = wait_status(cpid);
    int kept = !frc && existed && !done[OPP_DONE_PROCS];
    if (frc) {
        /* one gone before the first hello wrote nothing: the file there is
         * another run's, untouched (the same inode, size and times) */
        struct stat now;
        int untouched = existed && stat(out, &now) == 0 && now.st_dev == ost.st_dev &&
                        now.st_ino == ost.st_ino && now.st_size == ost.st_size &&
                        now.st_mtim.tv_sec == ost.st_mtim.tv_sec &&
                        now.st_mtim.tv_nsec == ost.st_mtim.tv_nsec &&
                        now.st_ctim.tv_sec == ost.st_ctim.tv_sec &&
                        now.st_ctim.tv_nsec == ost.st_ctim.tv_nsec;
        const char *how = cst >= 0 && WIFSIGNALED(cst) ? "was killed" : "failed";
        if (untouched)
            opp_say("%s: the collector %s before any process connected: %s left as it was", who,
                    how, out);
        else
            opp_say("%s: the collector %s: %s holds what it wrote before", who, how, out);
    } else if (
        done[OPP_DONE_WRITE_ERRNO]) { /* the disk filled (or a size limit): say what the file holds */
        char what[200];
        opp_write_failure(what, sizeof what, (int)done[OPP_DONE_WRITE_ERRNO],
                          done[OPP_DONE_WRITTEN], done[OPP_DONE_EVENTS]);
        opp_say("%s: writing %s failed%s", who, out, what);
        return code ? code : 1;
    } else if (kept) {
        opp_say("%s: nothing was recorded (no process connected): %s left as it was", who, out);
        return code;
    } else if (!quiet && !rc) {
        show_report(out, limit);
    }
    if (rc && !frc) { /* CMD never ran: no trace of it (the collector made this file) */
        unlink(out);
        return code;
    }
    if (!frc) {
        /* a summary's events count the calls it dropped past its bound */
        uint64_t sdropped = done[OPP_DONE_SUM_DROPPED], events = done[OPP_DONE_EVENTS];
        uint64_t dropped = done[OPP_DONE_DROPPED] + sdropped;
        fprintf(stderr, "opprof: trace written to %s (%llu events", out,
                (unsigned long long)(events - (sdropped < events ? sdropped : events)));
        if (dropped)
            fprintf(stderr, ", %llu dropped", (unsigned long long)dropped);
        opp_say(")");
        if (quiet) /* the report warns of these the same way */
            say_losses(done);
        if (done[OPP_DONE_CUT])
            opp_say("%s: %llu process%s still running %.1f s after %s "
                    "exited; the trace ends there for %s",
                    who, (unsigned long long)done[OPP_DONE_CUT],
                    done[OPP_DONE_CUT] > 1 ? "es were" : " was", FINISH_LINGER_MS / 1000.0, cmd[0],
                    done[OPP_DONE_CUT] > 1 ? "them" : "it");
    }
    return code;
}
