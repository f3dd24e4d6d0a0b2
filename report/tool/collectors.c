/* The collectors of this user that are running (collectors.h). */
#include "tool/collectors.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "views/fmt.h"
#include "views/say.h"

#define MAX_LISTED 32

/* The pid of an `opprof run` socket's name, "run-PID-N.sock"; 0 for
 * another name. */
static long run_pid(const char *name)
{
    if (strncmp(name, "run-", 4))
        return 0;
    char *end;
    long pid = strtol(name + 4, &end, 10);
    return pid > 0 && *end == '-' ? pid : 0;
}

/* Whether the socket at path is a dead run's: named after a pid that is
 * gone, and no one listens on it. */
static int stale(const char *path, const char *name)
{
    long pid = run_pid(name);
    if (!pid || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
        return 0;
    int fd = opp_connect(path);
    if (fd >= 0) { /* its collector outlived the run: still answers */
        close(fd);
        return 0;
    }
    return fd == -ECONNREFUSED;
}

/* The first cap - 1 bytes of /proc/PID/NAME, NULs as spaces; 0 or -1. */
static int proc_text(int pid, const char *name, char *out, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", pid, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, out, cap - 1);
    close(fd);
    if (n <= 0)
        return -1;
    while (n > 0 && !out[n - 1])
        n--;
    out[n] = 0;
    for (ssize_t i = 0; i < n; i++)
        if (!out[i])
            out[i] = ' ';
    return 0;
}

/* Its parent's pid and its start time in seconds since the epoch (0 when
 * unknown), from /proc/PID/stat and the boot time. */
static void proc_stat(int pid, int *ppid, time_t *start)
{
    char st[1024], line[256];
    *ppid = 0;
    *start = 0;
    if (proc_text(pid, "stat", st, sizeof st))
        return;
    char *p = strrchr(st, ')'); /* the name may hold spaces and parentheses */
    unsigned long long ticks = 0;
    if (!p || sscanf(p + 1, " %*c %d %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
                            "%*s %*s %llu",
                     ppid, &ticks) != 2)
        return;
    FILE *f = fopen("/proc/stat", "re");
    unsigned long long btime = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "btime %llu", &btime) == 1)
            break;
    if (f)
        fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    if (btime && hz > 0)
        *start = (time_t)(btime + ticks / (unsigned long long)hz);
}

static void describe(struct opp_collector *c)
{
    int ppid;
    time_t start;
    proc_stat(c->pid, &ppid, &start);
    struct tm tm;
    if (!start || !localtime_r(&start, &tm) ||
        !strftime(c->started, sizeof c->started, "%Y-%m-%d %H:%M:%S", &tm))
        snprintf(c->started, sizeof c->started, "?");
    /* started by `opprof run`: its command line says what is profiled */
    if ((ppid <= 1 || proc_text(ppid, "cmdline", c->cmd, sizeof c->cmd)) &&
        proc_text(c->pid, "cmdline", c->cmd, sizeof c->cmd))
        snprintf(c->cmd, sizeof c->cmd, "?");
}

/* The live collector on the socket at path, when it is this user's: 1 and
 * *c filled, else 0. */
static int live(const char *path, struct opp_collector *c)
{
    struct stat st;
    if (lstat(path, &st) || !S_ISSOCK(st.st_mode) || st.st_uid != getuid())
        return 0; /* not a socket of this user's */
    int fd = opp_connect(path);
    if (fd < 0)
        return 0;
    struct ucred cr;
    socklen_t len = sizeof cr;
    int ours = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 && cr.uid == getuid();
    close(fd);
    if (!ours)
        return 0;
    if ((size_t)snprintf(c->sock, sizeof c->sock, "%.107s", path) >= sizeof c->sock)
        return 0; /* longer than a socket path can be */
    c->pid = (int)cr.pid;
    describe(c);
    return 1;
}

/* Each *.sock of the directory: the stale removed; the live ones in out
 * (when out is not NULL). */
static int scan(struct opp_collector *out, size_t cap, size_t *n, char *err, size_t errlen)
{
    char dir[108];
    const char *why = NULL;
    *n = 0;
    if (opp_socket_dir(dir, sizeof dir, &why)) {
        snprintf(err, errlen, "no socket directory: %s", why ? why : "?");
        return -1;
    }
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "cannot read %s: %s", dir, strerror(errno));
        return -1;
    }
    char path[512];
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 5, ".sock"))
            continue;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path)
            continue;
        if (stale(path, e->d_name)) {
            unlink(path);
            continue;
        }
        struct opp_collector c;
        if (!out || !live(path, &c))
            continue;
        if (*n < cap)
            out[*n] = c;
        ++*n;
    }
    closedir(d);
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const struct opp_collector *x = a, *y = b;
    int c = strcmp(x->started, y->started);
    return c ? c : strcmp(x->sock, y->sock);
}

int opp_collectors_find(struct opp_collector *out, size_t cap, size_t *n, char *err,
                        size_t errlen)
{
    if (scan(out, cap, n, err, errlen))
        return -1;
    qsort(out, *n < cap ? *n : cap, sizeof *out, by_start);
    return 0;
}

/* Whether process pid holds the file of st open. */
static int holds(const char *pid, const struct stat *st)
{
    char dir[300];
    snprintf(dir, sizeof dir, "/proc/%s/fd", pid);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d));) {
        char p[600];
        struct stat fst;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        found = e->d_name[0] != '.' && stat(p, &fst) == 0 && fst.st_dev == st->st_dev &&
                fst.st_ino == st->st_ino;
    }
    closedir(d);
    return found;
}

int opp_collector_writing(const char *trace, char *sock, size_t cap)
{
    struct stat st;
    DIR *d = opendir("/proc");
    if (stat(trace, &st) || !d) {
        if (d)
            closedir(d);
        return -1;
    }
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d));) {
        char path[300], cmd[8192];
        struct stat ps;
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        if (e->d_name[0] < '1' || e->d_name[0] > '9' || stat(path, &ps) || ps.st_uid != geteuid())
            continue;
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        size_t n = fread(cmd, 1, sizeof cmd - 1, f);
        fclose(f);
        cmd[n] = 0;
        const char *base = strrchr(cmd, '/');
        if (strcmp(base ? base + 1 : cmd, "opprof-collector") || !holds(e->d_name, &st))
            continue;
        for (size_t i = 0; i < n && !found; i += strlen(cmd + i) + 1)
            if (!strcmp(cmd + i, "--socket") && i + 9 < n) {
                snprintf(sock, cap, "%s", cmd + i + 9);
                found = 1;
            }
    }
    closedir(d);
    return found ? 0 : -1;
}

void opp_collectors_sweep(void)
{
    char err[256];
    size_t n;
    scan(NULL, 0, &n, err, sizeof err);
}

void opp_collector_print(FILE *f, const struct opp_collector *c)
{
    /* the socket and command line as text: one line whatever they hold */
    fputs("  ", f);
    opp_text_fput(f, c->sock);
    fprintf(f, "  pid %d, started ", c->pid);
    opp_text_fput(f, c->started);
    fputs(": ", f);
    opp_text_fput(f, c->cmd);
    fputc('\n', f);
}

int opp_collector_only(const char *cmd, const char *which, char *out, size_t cap)
{
    struct opp_collector c[MAX_LISTED];
    size_t n;
    char err[256];
    if (opp_collectors_find(c, MAX_LISTED, &n, err, sizeof err)) {
        opp_say("opprof %s: %s", cmd, err);
        return -1;
    }
    if (n == 1) {
        snprintf(out, cap, "%s", c[0].sock);
        return 0;
    }
    if (!n)
        opp_say("opprof %s: no collector is running (nothing is being profiled)", cmd);
    else
        opp_say("opprof %s: %zu collectors are running: say which with %s", cmd, n, which);
    for (size_t i = 0; n > 1 && i < n && i < MAX_LISTED; i++)
        opp_collector_print(stderr, &c[i]);
    return -1;
}
