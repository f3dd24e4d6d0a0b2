/* `opprof ctl start|stop|status [--socket PATH]`: start and stop recording
 * in a running job from outside, through its collector, which tells every
 * thread's ring (common/ring.h, paused). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto.h"
#include "tool/cmds.h"
#include "tool/options.h"
#include "util.h"

#define PREFIX "opprof ctl: "


/* The only live collector socket in the user's socket directory. */
static int find_socket(char *out, size_t cap)
{
    char dir[108];
    const char *why = NULL;
    if (opp_socket_dir(dir, sizeof dir, &why)) {
        fprintf(stderr, PREFIX "no socket directory: %s\n", why ? why : "?");
        return -1;
    }
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, PREFIX "cannot read %s: %s\n", dir, strerror(errno));
        return -1;
    }
    int found = 0;
    char path[512];
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 5, ".sock"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int fd = opp_connect(path);
        if (fd < 0)
            continue; /* a collector that is gone */
        close(fd);
        if (found++ == 0)
            snprintf(out, cap, "%s", path);
    }
    closedir(d);
    if (found == 1)
        return 0;
    fprintf(stderr,
            found ? PREFIX "%d collectors are running: say which with --socket (or OPPROF_SOCKET)\n"
                  : PREFIX "no collector is running (nothing is being profiled)\n",
            found);
    return -1;
}

int cmd_ctl(int argc, char **argv)
{
    const char *sock = getenv("OPPROF_SOCKET");
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
                 "\n"
                 "Start or stop recording in a running job, or ask whether it records.\n"
                 "A job started with OPPROF_PAUSED=1 (or opprof run --paused) records\n"
                 "nothing until `opprof ctl start`.\n"
                 "\n",
        .col = 21,
        .options = options,
    };
    int first, parsed = opp_options_parse(&cmd, argc, argv, &first);
    if (parsed)
        return parsed == 1 ? 0 : parsed;
    if (argc - first != 1) {
        fprintf(stderr, PREFIX "start, stop or status? (usage: opprof ctl start|stop|status)\n");
        return 2;
    }
    const char *what = argv[first];
    uint32_t op = !strcmp(what, "status") ? 0 : !strcmp(what, "start") ? 1
                                             : !strcmp(what, "stop")  ? 2
                                                                      : 3;
    if (op == 3) {
        fprintf(stderr, PREFIX "unknown action '%s' (start, stop or status)\n", what);
        return 2;
    }
    char found[512];
    if (!sock || !*sock) {
        if (find_socket(found, sizeof found))
            return 1;
        sock = found;
    }
    int fd = opp_connect(sock);
    if (fd < 0) {
        fprintf(stderr, PREFIX "cannot reach the collector at %s: %s\n", sock, strerror(-fd));
        return 1;
    }
    struct opp_ctl_ack ack;
    int rc = opp_ctl_ask(fd, op, &ack, 5000);
    close(fd);
    if (rc) {
        fprintf(stderr, PREFIX "the collector at %s did not answer: %s\n", sock, strerror(-rc));
        return 1;
    }
    printf("%s: %u process%s, %" PRIu64 " events so far\n",
           ack.recording ? "recording" : "stopped", ack.procs, ack.procs == 1 ? "" : "es",
           ack.events);
    return 0;
}
