/* `opprof ctl start|stop|status [--socket PATH]`: start and stop recording
 * in a running job from outside, through its collector, which tells every
 * thread's ring (common/ring.h, paused); `opprof ctl list`: the collectors
 * running (collectors.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto.h"
#include "tool/cmds.h"
#include "tool/collectors.h"
#include "tool/options.h"
#include "util.h"
#include "views/say.h"

#define PREFIX "opprof ctl: "


#define MAX_LISTED 32

/* `opprof ctl list`: the collectors running, on stdout. The exit status. */
static int list(void)
{
    struct opp_collector c[MAX_LISTED];
    size_t n;
    char err[256];
    if (opp_collectors_find(c, MAX_LISTED, &n, err, sizeof err)) {
        opp_say(PREFIX "%s", err);
        return 1;
    }
    for (size_t i = 0; i < n && i < MAX_LISTED; i++)
        opp_collector_print(stdout, &c[i]);
    if (!n)
        printf("no collector is running\n");
    return 0;
}

int cmd_ctl(int argc, char **argv)
{
    const char *sock = getenv("OPPROF_SOCKET"), *env_sock = sock;
    const struct opp_option options[] = {
        OPP_OPT_STRING('s', "socket", &sock, "PATH",
                       "the job's collector (default: $OPPROF_SOCKET, else the only\n"
                       "collector of this user that is running)"),
        OPP_OPT_HELP("show this help"),
        OPP_OPT_END(),
    };
    const struct opp_command cmd = {
        .name = "ctl",
        .usage = "usage: opprof ctl start|stop|status [--socket PATH]\n"
                 "       opprof ctl list\n"
                 "\n"
                 "Start or stop recording in a running job, or ask whether it records.\n"
                 "A job started with OPPROF_PAUSED=1 (or opprof run --paused) records\n"
                 "nothing until `opprof ctl start`. `list`: this user's collectors that\n"
                 "are running (socket, pid, start, the command profiled); the sockets\n"
                 "of runs that died are removed.\n"
                 "\n",
        .col = 21,
        .options = options,
    };
    int first, parsed = opp_options_parse(&cmd, argc, argv, &first);
    if (parsed)
        return parsed == 1 ? 0 : parsed;
    if (argc - first > 1) {
        opp_say(PREFIX "one action at a time: '%s' after %s (usage: opprof ctl "
                       "start|stop|status|list)",
                argv[first + 1], argv[first]);
        return 2;
    }
    if (argc - first != 1) {
        opp_say(PREFIX "start, stop, status or list? (usage: opprof ctl start|stop|status|list)");
        return 2;
    }
    const char *what = argv[first];
    uint32_t op = !strcmp(what, "status") ? 0 : !strcmp(what, "start") ? 1
                                             : !strcmp(what, "stop")  ? 2
                                             : !strcmp(what, "list")  ? 4
                                                                      : 3;
    if (op == 3) {
        opp_say(PREFIX "unknown action '%s' (start, stop, status or list)", what);
        return 2;
    }
    char found[512];
    if (op == 4 && sock != env_sock) {
        opp_say(PREFIX "list lists every collector: --socket goes with start, stop and status");
        return 2;
    }
    if (op == 4)
        return list();
    if (!sock || !*sock) { /* an empty OPPROF_SOCKET is none; an empty --socket is refused */
        if (opp_collector_only("ctl", "--socket (or OPPROF_SOCKET)", found, sizeof found))
            return 1;
        sock = found;
    }
    int fd = opp_connect(sock);
    if (fd < 0) {
        opp_say(PREFIX "cannot reach the collector at %s: %s", sock, strerror(-fd));
        return 1;
    }
    struct opp_ctl_ack ack;
    int rc = opp_ctl_ask(fd, op, &ack, 5000);
    close(fd);
    if (rc) {
        opp_say(PREFIX "the collector at %s did not answer: %s", sock, strerror(-rc));
        return 1;
    }
    printf("%s: %u process%s, %" PRIu64 " events so far\n",
           ack.recording ? "recording" : "stopped", ack.procs, ack.procs == 1 ? "" : "es",
           ack.events);
    return 0;
}
