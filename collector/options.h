/* What the collector is asked to do: main.c's options, the server's
 * (collector.c) and its clients' (clients.c, messages.c) to read. */
#ifndef OPP_COLLECTOR_OPTIONS_H
#define OPP_COLLECTOR_OPTIONS_H

#include <stdint.h>
#include <sys/types.h>

struct opp_collector_opts {
    const char *socket_path;
    const char *output;
    pid_t root_pid;     /* >0: finish when this process has exited and nobody is left; the
                          preload's collector: it says on stderr where the trace went */
    int ready_fd;       /* >=0: write "1" here once listening */
    int daemon;         /* fork into the background once listening */
    int idle_exit_ms;   /* finish if no process ever connects (0: never) */
    pid_t parent;       /* >0: the `opprof run` that started it; finish once it is no longer
                           the parent (killed before it asked) and no process is connected */
    int paused;         /* start with recording stopped (`opprof ctl start` starts it) */
    int summary;        /* OPPROF_MODE=summary: aggregate calls (summary.h), no events */
    uint32_t max_nodes; /* summary: call paths kept at most */
    int top;            /* `opprof top` watches from the start: its aggregate adds up every
                           call (else from the first TOP request on) */
};

#endif
