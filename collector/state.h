/* The collector's state (state.c) and what its files share: the serving
 * loop (collector.c), the clients and the trace's end (clients.c), the
 * drain of the rings into the trace (drain.c), the messages of the
 * processes and tools (messages.c). */
#ifndef OPP_COLLECTOR_STATE_H
#define OPP_COLLECTOR_STATE_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "format.h"
#include "proto.h"
#include "ring.h"
#include "trace.h"

struct opp_collector_opts; /* options.h */

#define MAX_CLIENTS 1024
#define MAX_FDS_QUEUED 4
#define ENC_BYTES (4u << 20)
#define IDLE_POLL_MS 2
#define BUSY_POLL_MS 0 /* a ring is filling fast: look again at once */
#define CLOCK_EVERY_NS 1000000000ull
#define CHUNK_EVENTS 16384 /* events per chunk before slots are handed back */
/* A connection that has sent nothing this long after it was accepted
 * holds no trace open (opp_coll_others_running): not the agent, which
 * says hello as soon as it is connected, but a stray client (socat, a
 * script) sitting silent on the socket. One whose process is stopped
 * (SIGSTOP, a debugger: between its connect and its hello) is waited for. */
#define HELLO_WAIT_MS 1000

enum client_kind { C_NEW, C_PROCESS, C_CONTROL };

struct ring {
    struct opp_ring_hdr *hdr;
    uint64_t ino; /* its memfd's inode: is it still mapped by the process? */
    uint32_t tid, cap;
    uint64_t tail, last_end, dropped_seen, interrupted_seen;
    uint32_t name_seq;
    int dead; /* abandoned after damage */
    /* The calls in flight made open events when the process ended (bit
     * d: the one at depth d, not seen since): a record of such a call
     * drained after that (a thread that returned from it in the instant
     * before it was gone) is that call again. */
    uint32_t left_mask;
    uint32_t left_fn[OPP_OPEN_MAX];
    uint64_t left_begin[OPP_OPEN_MAX];
};

struct client {
    int fd;
    enum client_kind kind;
    pid_t pid;
    uint64_t accepted; /* when (opp_mono_ns): a C_NEW silent since HELLO_WAIT_MS holds nothing */
    int was_stopped;   /* a C_NEW whose process was seen stopped: never a silent one */
    uint32_t proc, clock, nfuncs;
    uint64_t start;                  /* its clock's ticks at its start (the hello's) */
    uint32_t funcs_total, funcs_got; /* the table while its parts arrive */
    struct opp_func_desc *fdesc;
    int bye, ended, info;
    uint64_t bye_at; /* its goodbye's word on its end; it ends once gone
                        (opp_coll_end_process): its threads may record until then */
    int top;         /* asked for snapshots: it gets the last one when the trace is finished */
    const char *bad; /* its shared memory was damaged: dropped by the loop */
    int orphan;      /* the program closed our connection but runs on: fd is -1,
                        its rings are still drained until it resumes or exits */
    uint64_t orphan_checked;
    int gone; /* an orphan or a goodbye's process found gone: ended once its socket is read */
    struct client *into; /* a RESUME: this connection now serves that client */
    struct ring *rings;
    size_t nrings;
    int fds[MAX_FDS_QUEUED];
    int nfds;
    uint8_t rx[sizeof(struct opp_msg_header) + OPP_MSG_MAX];
    size_t rxlen;
    uint64_t events, dropped, gpu_records;
    uint64_t interrupted; /* of dropped: lost to a signal handler's interruption (ring.h) */
};

struct collector_state {
    const struct opp_collector_opts *o;
    struct opp_tw tw;
    int lfd;
    struct client *c[MAX_CLIENTS];
    int nc;
    uint32_t next_proc;
    uint64_t events, dropped;
    uint64_t interrupted;       /* of dropped: lost to a signal handler's interruption */
    uint64_t cut;               /* processes still running when the trace was finished */
    int hot;                    /* loops left to poll without sleeping (a ring was half full) */
    uint64_t events_written;    /* when a write failed: the events before it */
    uint64_t events_summarized; /* summary mode: events of the processes written */
    int opp_coll_write_failed;
    struct {
        uint32_t proc;
        pid_t pid, ppid;
        int reaped;
        uint32_t clock;     /* its clock, */
        uint64_t start;     /* and its start on it */
        uint32_t end_how;   /* its connection closed without goodbye: how, */
        uint64_t end_at;    /* and when (the collector's reading), the end not
                               written yet: its reaper's word may come; 0: none */
        uint64_t reaped_at; /* its parent's clock when it reaped it (the same
                               clock as its own), 0: not said */
    } past[4096];           /* pid -> proc, for parents, reaping and ends */
    size_t npast;
    /* REAPED before the child's hello was read (another connection): kept
     * for that hello, the oldest replaced first */
    struct {
        pid_t pid, ppid;
        uint32_t how, code;
    } unborn[256];
    size_t nunborn;
    uint8_t *enc;
    int paused;               /* `opprof ctl stop`: every ring told to record nothing */
    struct opp_sum *sum;      /* summary mode: calls go here, not into EVENTS chunks */
    struct opp_top_agg *live; /* `opprof top`'s aggregate (NULL: out of memory) */
    int live_on;              /* it adds up calls: from the start (--top) or since the first TOP */
    int finishing;
    uint64_t linger_deadline;
    int root_gone;
    uint64_t root_checked;     /* when the root's new image was last looked for */
    uint64_t root_gone_at;
    int unnamed;               /* the socket's name removed: nobody connects any more */
    uint64_t parent_gone_idle; /* since when nobody is connected with the parent gone, 0: not */
    int ever_connected;
    uint64_t started;
    uint64_t last_clock;
    /* While the trace held is an old one (collector.tw.held: no process
     * has said hello yet), the clock samples wait here, the first and
     * the last, written when the first hello replaces it. */
    struct opp_clock_sample early[2];
    int nearly;
    volatile sig_atomic_t stop;
};

/* The collector's state (state.c defines it). */
extern struct collector_state collector;
/* The file is closed: nothing more is drained. */
extern int collector_finished;

/* A line on stderr, "opprof-collector: " first (state.c). */
__attribute__((format(printf, 1, 2))) void opp_coll_logmsg(const char *fmt, ...);
/* Write line (n bytes, newline included) to stderr in one write, once it
 * can take it within OPP_COLL_SAY_MS: a stderr nobody reads (a full pipe)
 * loses the line, and never holds the collector (or the trace's lock). */
#define OPP_COLL_SAY_MS 5000
void opp_coll_say(const char *line, size_t n);

/* ---- drain.c ---- */

/* The first failed write of the trace noted (pending: the events not
 * written), said by whoever waits for the trace. */
void opp_coll_write_failed(uint64_t pending);
/* A clock sample (TSC and CLOCK_MONOTONIC) into the trace (kept for it
 * while the trace held is an old one), and to `opprof top`'s aggregate. */
void opp_coll_write_clock(void);
/* The first hello's: the old trace held replaced by this run's, the clock
 * samples kept for it written first. */
void opp_coll_write_early(void);
/* Ring r's thread name written when the program changed it (force: in
 * any case). */
void opp_coll_ring_name(struct client *c, struct ring *r, int force);
/* Client c's rings drained into the trace: the records taken. */
uint64_t opp_coll_drain_client(struct client *c);
/* A process ended (vanished without goodbye, or exited while this thread
 * was inside calls): what ring r's thread was still inside becomes open
 * events ending now (the process's end). */
void opp_coll_emit_open_calls(struct client *c, struct ring *r, uint64_t now);
void opp_coll_ring_release(struct ring *r);

/* ---- messages.c ---- */

/* Client i's socket is readable: each whole message handled; -1 (why
 * set): drop the client. */
int opp_coll_on_readable(int i, const char **why);
/* A new connection accepted (or refused): 1, or 0 when none waits. */
int opp_coll_on_accept(void);
/* Processes other than self still running: the connections waiting are
 * accepted, and one that hung up, its end not read yet (a child reaped
 * just before its parent's goodbye), is read to its end now, as the loop
 * would. A connection that has said nothing since HELLO_WAIT_MS after it
 * was accepted is none (opp_coll_silent). */
int opp_coll_others_running(const struct client *self);
/* Whether c is a connection that said nothing for HELLO_WAIT_MS since it
 * was accepted and has nothing unread now, its process (the one that
 * connected) not stopped, nor seen stopped before (c->was_stopped). */
int opp_coll_silent(struct client *c, uint64_t now);
/* TOP: the live aggregate's snapshot sent to c. */
int opp_coll_on_top(struct client *c, const char **why);
/* A REAPED that came before its child's HELLO, kept for it. */
void opp_coll_reaped_unborn(uint32_t proc, pid_t pid, pid_t ppid);

/* ---- clients.c: the clients and the end ---- */

/* A process's word on its end (at, its clock's ticks), within its start
 * and now (0, or later than now: now; before its start: its start). */
uint64_t opp_coll_word_end(const struct client *c, uint64_t at);
/* Process client c ended (how: enum opp_end_how) at its clock's ticks at
 * (0, or later than now: now; before its start: its start), or, when it
 * said goodbye, as it said (exited, at bye_at): its rings drained first,
 * and no earlier than it was last seen doing anything, the end of its
 * threads' last calls (a thread runs on after another's goodbye, and a
 * library's destructors after ours, until the process is gone). */
void opp_coll_end_process(struct client *c, uint32_t how, uint64_t at);
/* Process past[k]'s parent reaped it at its clock's ticks at (the
 * process's clock): its end held for that written, or bounded by it when
 * its connection's close comes. */
void opp_coll_reaped_at(size_t k, uint64_t at);
/* The ends held for a reaper's word (opp_coll_end_process), written as
 * they were read: the trace is finished. */
void opp_coll_write_held_ends(void);
void opp_coll_free_fdesc(struct client *c);
/* Client i dropped (why: said, NULL: nothing to say): a process ended as
 * lost unless it said goodbye, its rings released, its fds closed. */
void opp_coll_drop_client(int i, const char *why);
/* Whether process pid runs (not a zombie), as /proc/PID/stat says, or a
 * zombie leader's other threads (/proc/PID/task). */
int opp_coll_process_runs(pid_t pid);
/* Whether process pid's image (an exec of a process of ours, which keeps
 * its pid) will connect: its environment preloads a library and names
 * this collector's socket, as the agent leaves them; -1 when /proc does
 * not show it (or not yet: inside its execve). */
int opp_coll_exec_connects(pid_t pid);
/* Whether process c still maps one of its rings: it runs on as the same
 * image (an exec or a death unmaps them all). */
int opp_coll_rings_mapped(struct client *c);
/* The connection of process c closed without goodbye, the program alive
 * (alive) or still mapping its rings: kept as an orphan. 1 when kept. */
int opp_coll_orphan(struct client *c, int alive);
/* Processes connected now. */
int opp_coll_process_clients(void);
/* The socket's name removed (once): a process that connects from now on
 * is told the trace was finished. */
void opp_coll_unname(void);
/* The trace finished (once): the name removed first, every process's
 * calls in, the file closed. */
int opp_coll_finish(void);
#endif
