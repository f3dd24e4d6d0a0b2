/* The children the program reaps: their exit status or killing signal,
 * told to the collector (REAPED), which is how a process that ended
 * without goodbye (os._exit, a signal) is said to have ended. The program
 * gets what the real call returned, errno included. */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "core/conn.h"
#include "proto.h"

static void *real_fn(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

/* pid ended with wait status st: tell the collector (nothing when not
 * profiled, or not an end). */
static void reaped(pid_t pid, int st)
{
    if (pid <= 0 || !opp_agent_on() || !(WIFEXITED(st) || WIFSIGNALED(st)))
        return;
    uint64_t now = opp_agent_ticks(); /* it had ended by then */
    uint32_t msg[4] = {(uint32_t)pid, (uint32_t)st, (uint32_t)now, (uint32_t)(now >> 32)};
    opp_agent_send(OPP_MSG_REAPED, msg, sizeof msg);
}

OPP_EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
    static pid_t (*real)(pid_t, int *, int);
    if (!real && !(real = (pid_t(*)(pid_t, int *, int))real_fn("waitpid")))
        return errno = ENOSYS, -1;
    int st = 0;
    pid_t r = real(pid, &st, options);
    int saved_errno = errno;
    if (r > 0 && status)
        *status = st;
    reaped(r, st);
    errno = saved_errno;
    return r;
}

OPP_EXPORT pid_t wait(int *status)
{
    return waitpid(-1, status, 0);
}

OPP_EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
    static pid_t (*real)(pid_t, int *, int, struct rusage *);
    if (!real && !(real = (pid_t(*)(pid_t, int *, int, struct rusage *))real_fn("wait4")))
        return errno = ENOSYS, -1;
    int st = 0;
    pid_t r = real(pid, &st, options, ru);
    int saved_errno = errno;
    if (r > 0 && status)
        *status = st;
    reaped(r, st);
    errno = saved_errno;
    return r;
}

OPP_EXPORT pid_t wait3(int *status, int options, struct rusage *ru)
{
    return wait4(-1, status, options, ru);
}

OPP_EXPORT int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
    static int (*real)(idtype_t, id_t, siginfo_t *, int);
    if (!real && !(real = (int (*)(idtype_t, id_t, siginfo_t *, int))real_fn("waitid")))
        return errno = ENOSYS, -1;
    int r = real(idtype, id, info, options);
    int saved_errno = errno;
    if (r == 0 && info && info->si_pid > 0) {
        int code = info->si_code, st = info->si_status;
        if (code == CLD_EXITED)
            reaped(info->si_pid, (st & 0xff) << 8);
        else if (code == CLD_KILLED || code == CLD_DUMPED)
            reaped(info->si_pid, st & 0x7f);
    }
    errno = saved_errno;
    return r;
}
