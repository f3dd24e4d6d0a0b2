/* The collectors of this user that are running, found by their sockets in
 * the user's socket directory (util.h's opp_socket_dir) and described from
 * /proc; the sockets of runs that died, removed. For `opprof ctl` and
 * `opprof top` (which one to talk to) and `opprof run` (no leftovers). */
#ifndef OPP_TOOL_COLLECTORS_H
#define OPP_TOOL_COLLECTORS_H

#include <stddef.h>
#include <stdio.h>

struct opp_collector {
    char sock[108];
    int pid;          /* the process listening (SO_PEERCRED) */
    char started[32]; /* its start, local time "YYYY-MM-DD HH:MM:SS"; "?" unknown */
    char cmd[256];    /* what it records: its parent's command line (opprof run ... --
                         CMD), else its own */
};

/* The live collectors: the sockets in the directory that this user owns and
 * a process of this user listens on, up to cap of them in out, *n how many
 * there are (may exceed cap). A socket no one listens on, named after an
 * `opprof run` whose pid is gone (run-PID-N.sock), is removed on the way.
 * 0, or -1 with why in err. */
int opp_collectors_find(struct opp_collector *out, size_t cap, size_t *n, char *err,
                        size_t errlen);

/* The collector of this user that writes trace (any socket: one started
 * with OPPROF_SOCKET elsewhere too), found in /proc by the file it holds
 * open: its socket into sock (from its --socket). 0, or -1 (none). */
int opp_collector_writing(const char *trace, char *sock, size_t cap);

/* The socket directory's stale sockets removed (as opp_collectors_find). */
void opp_collectors_sweep(void);

/* The socket of this user's only collector that is running into out
 * (cap bytes): 0; else -1 with why said as "opprof CMD: ..." (none, or
 * how many, each then listed; which: how to name one). */
int opp_collector_only(const char *cmd, const char *which, char *out, size_t cap);

/* "  SOCKET  pid PID, started TIME: CMD" */
void opp_collector_print(FILE *f, const struct opp_collector *c);

#endif
