/* Messages to a person: one line each (control bytes escaped as \xNN),
 * straight to fd 2 (no stdio, no allocation: any thread, any time). */
#include "core/base.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

static int no_stderr;    /* descriptor 2 was closed at our start */
static dev_t stderr_dev; /* the file descriptor 2 was at our start */
static ino_t stderr_ino;

void opp_say_init(void)
{
    int saved_errno = errno;
    struct stat st;
    no_stderr = fstat(2, &st) < 0;
    if (!no_stderr)
        stderr_dev = st.st_dev, stderr_ino = st.st_ino;
    errno = saved_errno;
}

/* Descriptor 2 still takes a line of ours: the file it was at our start,
 * a terminal, or a file opened for appending (a log the program moved its
 * stderr to). Else the program has put a file of its own there (a daemon
 * that closed 2 and opened its data file, a pipe or socket of its
 * protocol, a device: a tun, an input device, the GPU's device files
 * that CUDA opens, which take 2 once the program closed it): our line
 * would damage it. System calls only: a fatal signal's handler says lines. */
int opp_say_stderr(void)
{
    struct stat st;
    if (no_stderr || fstat(2, &st) < 0)
        return 0;
    if (st.st_dev == stderr_dev && st.st_ino == stderr_ino)
        return 1;
    if (S_ISCHR(st.st_mode))
        return isatty(2);
    int fl = fcntl(2, F_GETFL);
    return S_ISREG(st.st_mode) && fl >= 0 && (fl & O_APPEND);
}

/* Writes to fd 2 as the program would not: never into a file the program
 * put there after our start (above); a stderr nobody reads any more
 * (a pipe whose reader died) loses our line, never raises SIGPIPE on the
 * program (its default action kills it). SIGPIPE alone is held: a write
 * to a full pipe may wait long, the program's other signals reach it
 * meanwhile, and a handler that jumps out of the write (or a seccomp
 * filter's SIGSYS for it) leaves the thread's mask and cancel state as
 * they were (opp_guard). errno kept. */
static void write_stderr(const char *line, size_t n)
{
    int saved_errno = errno;
    if (!opp_say_stderr()) {
        errno = saved_errno;
        return;
    }
    sigset_t pipe_set, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    struct opp_guard g;
    opp_guard_hold(&g, &pipe_set, opp_guard_undo);
    int was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
    if (write(2, line, n) < 0 && errno == EPIPE && !was_pending) {
        struct timespec now = {0, 0};
        sigtimedwait(&pipe_set, NULL, &now); /* ours: taken back */
    }
    opp_guard_off(&g);
    errno = saved_errno;
}

void opp_agent_say(const char *a, const char *b, const char *c)
{
    char line[1024];
    size_t n = 0;
    const char *parts[] = {"opprof: ", a, b, c, "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        for (const char *p = parts[i]; p && *p && n < sizeof line - 5; p++) {
            unsigned char ch = (unsigned char)*p;
            if (i == 4 || (ch >= 0x20 && ch != 0x7f)) {
                line[n++] = (char)ch;
                continue;
            } /* a control byte a setting's value brought: escaped, one line */
            line[n++] = '\\';
            line[n++] = 'x';
            line[n++] = "0123456789abcdef"[ch >> 4];
            line[n++] = "0123456789abcdef"[ch & 15];
        }
    if (line[n - 1] != '\n')
        line[n++] = '\n';
    write_stderr(line, n);
}

void opp_say_err(const char *what, int err)
{
    opp_agent_say(what, err ? ": " : "", err ? strerror(err) : "");
}
