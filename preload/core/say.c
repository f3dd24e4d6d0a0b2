/* Messages to a person: one line each (control bytes escaped as \xNN),
 * straight to fd 2 (no stdio, no allocation: any thread, any time). */
#include "core/base.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int no_stderr; /* descriptor 2 was closed at our start */

void opp_say_init(void)
{
    int saved_errno = errno;
    no_stderr = fcntl(2, F_GETFD) < 0 && errno == EBADF;
    errno = saved_errno;
}

/* Writes to fd 2 as the program would not: a stderr nobody reads any more
 * (a pipe whose reader died) loses our line, never raises SIGPIPE on the
 * program (its default action kills it). errno kept. */
static void write_stderr(const char *line, size_t n)
{
    if (no_stderr)
        return;
    int saved_errno = errno, cancel = opp_cancel_off();
    sigset_t pipe_set, old, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    int was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
    if (write(2, line, n) < 0 && errno == EPIPE && !was_pending) {
        struct timespec now = {0, 0};
        sigtimedwait(&pipe_set, NULL, &now); /* ours: taken back */
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    opp_cancel_restore(cancel);
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
