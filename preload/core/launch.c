/* Starting a collector of our own, when the first process of a run finds
 * no OPPROF_SOCKET: opprof-collector next to libopprof.so (or
 * OPPROF_COLLECTOR), detached in its own session, so neither the
 * program's wait() nor a Ctrl-C to its process group reaches it. */
#include "core/conn.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

static const char *u2s(unsigned long v, char *buf, size_t cap)
{
    char *p = buf + cap - 1;
    *p = 0;
    do
        *--p = (char)('0' + v % 10);
    while ((v /= 10) && p > buf);
    return p;
}

/* buf holds PATH_MAX bytes, as realpath needs. */
static const char *self_dir(char *buf)
{
    Dl_info di;
    if (!dladdr((void *)opp_launch_collector, &di) || !di.dli_fname || !realpath(di.dli_fname, buf))
        return NULL;
    char *slash = strrchr(buf, '/');
    if (!slash)
        return NULL;
    *slash = 0;
    return buf;
}

int opp_launch_collector(char *socket, size_t socket_cap, char *output, size_t output_cap,
                         int *collector_pid)
{
    const char *why = NULL;
    int rc = opp_socket_path(socket, socket_cap, &why);
    if (rc) {
        opp_say_err(why, -rc);
        return rc;
    }
    char exe[PATH_MAX], dir[PATH_MAX];
    const char *env_exe = getenv("OPPROF_COLLECTOR");
    if (env_exe && env_exe[0]) {
        strncpy(exe, env_exe, sizeof exe - 1);
        exe[sizeof exe - 1] = 0;
    } else if (self_dir(dir)) {
        size_t n = strlen(dir);
        if (n + sizeof "/opprof-collector" > sizeof exe)
            return -ENAMETOOLONG;
        memcpy(exe, dir, n);
        memcpy(exe + n, "/opprof-collector", sizeof "/opprof-collector");
    } else {
        opp_say_err("cannot locate opprof-collector (set OPPROF_COLLECTOR)", 0);
        return -ENOENT;
    }
    const char *out = getenv("OPPROF_OUTPUT");
    char num[24];
    if (out && out[0]) {
        if (out[0] == '/' || !getcwd(output, output_cap))
            output[0] = 0;
        else
            strncat(output, "/", output_cap - strlen(output) - 1);
        strncat(output, out, output_cap - strlen(output) - 1);
    } else {
        if (!getcwd(output, output_cap - 40)) {
            opp_say_err("cannot tell the working directory for the trace file", errno);
            return -errno;
        }
        strcat(output, "/opprof-");
        strcat(output, u2s((unsigned long)getpid(), num, sizeof num));
        strcat(output, ".trace");
    }
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0) {
        opp_say_err("cannot start the collector (pipe)", errno);
        return -errno;
    }
    /* A program started with 0, 1 or 2 closed (a daemon): the pipe's ends
     * would take those numbers, which the collector's own are opened at. */
    for (int i = 0; i < 2; i++)
        if (pfd[i] <= 2) {
            int high = fcntl(pfd[i], F_DUPFD_CLOEXEC, 3);
            if (high < 0) {
                int err = errno;
                close(pfd[0]);
                close(pfd[1]);
                opp_say_err("cannot start the collector (pipe)", err);
                return -err;
            }
            close(pfd[i]);
            pfd[i] = high;
        }
    char pidbuf[24];
    char *pid_arg = (char *)u2s((unsigned long)getpid(), pidbuf, sizeof pidbuf);
    char *argv[] = {exe,          "--socket", socket,       "--output", output, "--daemon",
                    "--root-pid", pid_arg,    "--ready-fd", "3",        NULL};
    /* Its environment: ours without the preload and our own settings. */
    size_t ne = 0;
    while (environ && environ[ne])
        ne++;
    char **envp = calloc(ne + 1, sizeof *envp);
    if (!envp) {
        close(pfd[0]);
        close(pfd[1]);
        opp_say_err("cannot start the collector: out of memory", 0);
        return -ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < ne; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) && strncmp(environ[i], "OPPROF_SOCKET=", 14))
            envp[k++] = environ[i];
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    /* Its messages go where ours do (opp_say_stderr); else nowhere, and the
     * trace file it opens must not take the number 2. */
    if (!opp_say_stderr())
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 3);
    posix_spawnattr_init(&at);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);
    pid_t pid;
    rc = posix_spawn(&pid, exe, &fa, &at, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    free(envp);
    close(pfd[1]);
    if (rc) {
        close(pfd[0]);
        opp_agent_say("cannot start the collector ", exe, ": profiling off");
        return -rc;
    }
    /* It forks into the background and tells us when it listens. */
    char ready[24] = "";
    struct pollfd p = {.fd = pfd[0], .events = POLLIN};
    int pr;
    do
        pr = poll(&p, 1, 10000);
    while (pr < 0 && errno == EINTR);
    if (pr > 0 && read(pfd[0], ready, sizeof ready - 1) < 1)
        ready[0] = 0;
    close(pfd[0]);
    char ok = ready[0];
    *collector_pid = atoi(ready + 1);
    /* the system call itself: the program's waitpid is ours (reap.c), and
     * this child is not the program's */
    while (syscall(SYS_wait4, pid, NULL, 0, NULL) < 0 && errno == EINTR)
        ;
    if (ok != '1') {
        opp_say_err("the collector did not start (see its message above): profiling off", 0);
        return -EIO;
    }
    return 0;
}
