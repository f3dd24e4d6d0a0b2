/* The collector's clients (state.h): a process's end (its rings drained,
 * the calls a vanished one was inside made open events, its summary
 * written), a client dropped, a connection the program closed kept as an
 * orphan while the process still maps its rings; and the trace's finish. */
#include "options.h"
#include "gpu.h"
#include "info.h"
#include "state.h"
#include "summary.h"
#include "top_agg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int opp_coll_silent(struct client *c, uint64_t now)
{
    if (c->kind != C_NEW || c->fd < 0 || c->was_stopped ||
        now - c->accepted < HELLO_WAIT_MS * 1000000ull)
        return 0;
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    if (poll(&p, 1, 0) != 0)
        return 0;
    /* a process stopped (SIGSTOP, a debugger) between its connect and its
     * hello says it once continued: it is no stray client, then or later
     * (continued or killed, it may wait for a CPU before it runs on) */
    char state = opp_proc_state((int)c->pid);
    c->was_stopped = state == 'T' || state == 't';
    return !c->was_stopped;
}

/* The end of process past[k], whose connection closed without goodbye
 * (_exit, a signal) when the collector read end: no later than its parent
 * reaped it (reaped_at, said), no earlier than its start. */
static uint64_t reaped_end(size_t k, uint64_t end)
{
    uint64_t r = collector.past[k].reaped_at, start = collector.past[k].start;
    return !r || r >= end ? end : r > start ? r : start;
}

/* c's connection closed without goodbye when the collector read *end:
 * its end bounded by its parent's word, or, not said yet, held for it
 * (1: held). */
static int hold_end(struct client *c, uint64_t *end)
{
    for (size_t k = collector.npast; k-- > 0;) {
        if (collector.past[k].proc != c->proc)
            continue;
        if (collector.past[k].reaped_at) {
            *end = reaped_end(k, *end);
            return 0;
        }
        collector.past[k].end_how = OPP_END_LOST;
        collector.past[k].end_at = *end;
        return 1;
    }
    return 0;
}

void opp_coll_reaped_at(size_t k, uint64_t at)
{
    collector.past[k].reaped_at = at;
    if (!collector.past[k].end_at)
        return; /* not ended, or ended with a goodbye */
    opp_tw_process_end(&collector.tw, collector.past[k].proc, collector.past[k].end_how,
                       reaped_end(k, collector.past[k].end_at));
    opp_coll_write_failed(0);
    collector.past[k].end_at = 0;
}

void opp_coll_write_held_ends(void)
{
    for (size_t k = 0; k < collector.npast; k++)
        if (collector.past[k].end_at) {
            opp_tw_process_end(&collector.tw, collector.past[k].proc, collector.past[k].end_how,
                               collector.past[k].end_at);
            collector.past[k].end_at = 0;
        }
}

uint64_t opp_coll_word_end(const struct client *c, uint64_t at)
{
    uint64_t now = opp_ticks((int)c->clock);
    return !at || at > now ? now : at < c->start ? c->start : at;
}

void opp_coll_end_process(struct client *c, uint32_t how, uint64_t at)
{
    if (c->kind != C_PROCESS || c->ended || collector_finished)
        return;
    opp_coll_drain_client(c);
    uint64_t now = opp_ticks((int)c->clock);
    if (c->bye) {
        how = OPP_END_EXITED;
        at = c->bye_at;
    }
    /* the process's own word, and no earlier than its last call's end */
    uint64_t end = opp_coll_word_end(c, at);
    for (size_t i = 0; i < c->nrings; i++)
        if (c->rings[i].last_end > end && c->rings[i].last_end <= now)
            end = c->rings[i].last_end;
    /* What its threads were still inside: a process that died, or one
     * that exited while another thread was in a call. */
    for (size_t i = 0; i < c->nrings; i++)
        if (c->rings[i].hdr)
            opp_coll_emit_open_calls(c, &c->rings[i], how == OPP_END_LOST ? now : end);
    if (collector.sum && c->nfuncs) {
        /* always: the file's size does not depend on whether a ring overflowed */
        opp_tw_dropped(&collector.tw, c->proc, 0, c->dropped - c->interrupted, OPP_DROP_FULL);
        if (c->interrupted) /* rare: only then, a chunk more */
            opp_tw_dropped(&collector.tw, c->proc, 0, c->interrupted, OPP_DROP_INTERRUPTED);
        int rc = opp_sum_write(collector.sum, c->proc, &collector.tw);
        if (rc == -ENOMEM)
            opp_coll_logmsg("out of memory: the summary of pid %d is lost", (int)c->pid);
        opp_coll_write_failed(0);
        if (!rc && !collector.tw.error)
            collector.events_summarized += c->events;
    }
    if (how != OPP_END_LOST || !hold_end(c, &end)) /* else its reaper's word may come */
        opp_tw_process_end(&collector.tw, c->proc, how, end);
    if (collector.live)
        opp_top_agg_proc_end(collector.live, c->proc);
    c->ended = 1;
}

void opp_coll_free_fdesc(struct client *c)
{
    for (uint32_t i = 0; c->fdesc && i < c->funcs_got; i++) {
        free((char *)c->fdesc[i].lib);
        free((char *)c->fdesc[i].name);
    }
    free(c->fdesc);
    c->fdesc = NULL;
}

/* Another client of c's pid still running: its exec's new image. */
static int image_of(const struct client *c)
{
    for (int k = 0; k < collector.nc; k++) {
        const struct client *o = collector.c[k];
        if (o != c && o->pid == c->pid && o->kind != C_CONTROL && !o->ended)
            return 1;
    }
    return 0;
}

void opp_coll_drop_client(int i, const char *why)
{
    struct client *c = collector.c[i];
    if (why)
        opp_coll_logmsg("pid %d: %s; disconnected", (int)c->pid, why);
    if (c->kind == C_PROCESS)
        opp_coll_end_process(c, OPP_END_LOST, 0); /* as it said, after a goodbye */
    opp_coll_free_fdesc(c);
    for (size_t k = 0; k < c->nrings; k++)
        opp_coll_ring_release(&c->rings[k]);
    free(c->rings);
    for (int k = 0; k < c->nfds; k++)
        close(c->fds[k]);
    if (c->fd >= 0)
        close(c->fd);
    /* the last connection of its pid, whatever it said (a reconnection
     * cut short before its first message is one), not while its exec
     * (sh -c 'exec CMD') runs */
    if (collector.o->root_pid > 0 && c->pid == collector.o->root_pid && c->kind != C_CONTROL &&
        !image_of(c)) {
        collector.root_gone = 1;
        collector.root_gone_at = opp_mono_ns();
    }
    free(c);
    /* Keep the others in accept order: processes are numbered in the order
     * their hellos are read, and that must be the order they connected. */
    memmove(&collector.c[i], &collector.c[i + 1],
            (size_t)(collector.nc - i - 1) * sizeof collector.c[0]);
    collector.nc--;
}

/* Whether process pid has a thread besides its leader: /proc/PID/task
 * lists the leader and the threads still running. */
static int threads_beside_leader(pid_t pid)
{
    char path[40];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d));)
        found = e->d_name[0] != '.' && atoi(e->d_name) != (int)pid;
    closedir(d);
    return found;
}

/* Gone only on the kernel's word: /proc may hide a process (hidepid, a
 * process that is not dumpable) or not be there at all (a mount
 * namespace), and a peer outside our pid namespace has pid 0. */
static int kill_says_runs(pid_t pid)
{
    return kill(pid, 0) == 0 || errno != ESRCH;
}

int opp_coll_process_runs(pid_t pid)
{
    if (pid <= 0)
        return 1;
    char path[40], stat[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return kill_says_runs(pid);
    ssize_t n = read(fd, stat, sizeof stat - 1);
    close(fd);
    if (n <= 0)
        return kill_says_runs(pid);
    stat[n] = 0;
    const char *end = strrchr(stat, ')'); /* after the command's name, whatever it holds */
    if (!end || end[1] != ' ' || !end[2])
        return 0;
    /* The leader's state: a zombie leader whose main thread left by
     * pthread_exit while its other threads run on is a process running */
    return !strchr("ZXx", end[2]) || (end[2] == 'Z' && threads_beside_leader(pid));
}

int opp_coll_exec_connects(pid_t pid)
{
    char path[40];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f) /* gone, or hidden (hidepid, not dumpable, no /proc): not known */
        return -1;
    const char *sock = collector.o->socket_path;
    size_t len = strlen(sock), cap = 0;
    char *e = NULL;
    int ours = 0, preload = 0, entries = 0;
    for (; getdelim(&e, &cap, 0, f) > 0; entries++) { /* each entry with its NUL */
        ours |= !strncmp(e, "OPPROF_SOCKET=", 14) && !strncmp(e + 14, sock, len) && !e[14 + len];
        preload |= !strncmp(e, "LD_PRELOAD=", 11) && e[11];
    }
    free(e);
    fclose(f);
    /* none: inside its execve, past the close of our socket, before the
     * new image's environment is laid out (it reads empty then) */
    return entries ? ours && preload : -1;
}

/* Whether process c still maps one of its rings: it runs on as the same
 * image (an exec or a death unmaps them all). A process that made itself
 * not dumpable (PR_SET_DUMPABLE 0) keeps its maps from us: then as long
 * as it runs (an exec of it is then seen when its new image says hello:
 * messages.c's exec_ended, or else when the process ends). */
int opp_coll_rings_mapped(struct client *c)
{
    char path[40], line[512];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)c->pid);
    FILE *f = fopen(path, "re");
    if (!f) /* hidden, or no /proc here: as long as it runs */
        return opp_coll_process_runs(c->pid);
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long long ino;
        if (!strstr(line, "opprof-ring") || sscanf(line, "%*s %*s %*s %*s %llu", &ino) != 1)
            continue;
        for (size_t i = 0; i < c->nrings && !found; i++)
            found = c->rings[i].hdr && !c->rings[i].dead && c->rings[i].ino == ino;
    }
    fclose(f);
    return found;
}

/* The connection of a process closed without goodbye. When the process
 * still maps its rings, the program closed our descriptor (a daemon
 * closing every fd): keep draining its rings and wait for it to resume
 * on a new connection, or to end. 1 when kept. */
int opp_coll_orphan(struct client *c, int alive)
{
    if (c->kind != C_PROCESS || c->bye || c->ended || collector_finished ||
        (!alive && !opp_coll_rings_mapped(c)))
        return 0;
    close(c->fd);
    c->fd = -1;
    c->orphan = 1;
    c->rxlen = 0;
    for (int k = 0; k < c->nfds; k++)
        close(c->fds[k]);
    c->nfds = 0;
    c->orphan_checked = opp_mono_ns();
    return 1;
}

int opp_coll_process_clients(void)
{
    int n = 0;
    for (int i = 0; i < collector.nc; i++)
        n += collector.c[i]->kind == C_PROCESS;
    return n;
}

/* One line to the person who ran the program, as the preload's own. */
static void say(const char *a, const char *b, const char *c)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "opprof: %s%s%s\n", a, b, c);
    if (n > 0)
        opp_coll_say(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* Where the trace went, said by the preload's collector: it holds the
 * stderr the run began with, which the process that started it may have
 * closed (coreutils' timeout closes its own at exit), may leave without
 * running its destructors (dash's _exit) or may have replaced (exec, as
 * `sh -c CMD` and env do). */
static void say_where(int kept)
{
    if (collector.o->root_pid <= 0)
        return;
    if (kept) {
        say("nothing was recorded (no process connected): ", collector.o->output,
            " left as it was");
        return;
    }
    char what[320];
    if (collector.tw.error) {
        opp_write_failure(what, sizeof what, collector.tw.error, collector.events_written,
                          collector.events);
        say("writing the trace failed: ", collector.o->output, what);
        return;
    }
    say("trace written to ", collector.o->output, "");
    uint64_t full = collector.dropped - collector.interrupted;
    if (full) {
        snprintf(what, sizeof what, "%llu records dropped (buffers were full); trace has %llu; ",
                 (unsigned long long)full, (unsigned long long)collector.events);
        say(what, OPP_DROP_ADVICE, "");
    }
    if (collector.interrupted) {
        snprintf(what, sizeof what, "%llu records dropped (%s); trace has %llu; ",
                 (unsigned long long)collector.interrupted, OPP_INTERRUPTED_WHY,
                 (unsigned long long)collector.events);
        say(what, OPP_INTERRUPTED_ADVICE, "");
    }
    struct opp_sum_stats st = {0};
    if (collector.sum)
        opp_sum_stats(collector.sum, &st);
    if (st.dropped) { /* likewise */
        opp_sum_dropped_said(what, sizeof what, st.dropped, collector.o->max_nodes);
        say(what, "", "");
    }
    if (st.lost) { /* the trace carries it too, for the report */
        opp_sum_lost_said(what, sizeof what, st.lost);
        say(what, "; OPPROF_MODE=full keeps them", "");
    }
}

void opp_coll_unname(void)
{
    if (!collector.unnamed)
        unlink(collector.o->socket_path);
    collector.unnamed = 1;
}

int opp_coll_finish(void)
{
    if (collector_finished)
        return 0;
    /* first: one that connects while the end is written and synced to
     * disk is told the trace was finished, not left unread in the queue */
    opp_coll_unname();
    int silent = 0;
    uint64_t now = opp_mono_ns();
    for (int i = 0; i < collector.nc; i++)
        silent += opp_coll_silent(collector.c[i], now);
    if (silent) /* a stray client: they held nothing, and are closed with the trace */
        opp_coll_logmsg("%d connection%s to the socket said nothing (no hello within %d ms); the "
                        "trace was finished without waiting for %s",
                        silent, silent == 1 ? "" : "s", HELLO_WAIT_MS, silent == 1 ? "it" : "them");
    for (int i = 0; i < collector.nc; i++) {
        struct client *c = collector.c[i];
        if (c->kind == C_PROCESS && !c->ended) {
            collector.cut += !c->bye; /* one that said goodbye ends as it said */
            opp_coll_end_process(c, OPP_END_RUNNING, 0);
        }
    }
    /* nothing recorded (no hello): a trace that was there is left as it was */
    int kept = collector.tw.held;
    if (!kept) {
        opp_coll_write_held_ends();
        opp_coll_write_clock();
        opp_tw_end(&collector.tw, collector.events, collector.dropped, collector.next_proc);
        opp_coll_write_failed(0);
    }
    /* The writer's lock (flock: the open file's, not the descriptor's)
     * held by a copy of the descriptor until the line is said: whoever
     * waits for the trace (trace_read.c's wait_writer) finds it said. */
    int held = collector.tw.fd >= 0 ? fcntl(collector.tw.fd, F_DUPFD_CLOEXEC, 3) : -1;
    int rc = opp_tw_close(&collector.tw);
    if (rc && !collector.tw.error) { /* the last data reached the disk only now, or not */
        collector.tw.error = -rc;
        opp_coll_write_failed(0);
    }
    collector_finished = 1;
    say_where(kept);
    if (held >= 0)
        close(held);
    return rc;
}
