/* The core's fourth layer: the connection to the collector (starting one
 * when none is listening): the hello, messages from any thread,
 * reconnecting when the program closed our socket, a fork child's lazy
 * connection at its first message, the goodbye. Failures of ours say one
 * line and turn profiling off. Below: resolve.h. */
#ifndef OPP_CORE_CONN_H
#define OPP_CORE_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "core/resolve.h"

/* Whether this process is profiled (the agent started and is connected,
 * or is a fork child that connects at its first message). */
int opp_agent_on(void);
/* This process's clock now (the one its hello named). */
uint64_t opp_agent_ticks(void);
/* A message to the collector from any thread (CUPTI's, a timer's, the
 * program's): 0 or -errno; errno kept. */
int opp_agent_send(unsigned type, const void *payload, unsigned size);
/* The same with a descriptor passed along (-1: none); lost: the line said
 * when the collector does not take it (the connection is then closed and
 * profiling off). */
int opp_conn_send(unsigned type, const void *payload, unsigned size, int fd, const char *lost);
/* 1 when the collector adds calls up (summary mode), 0 when it records
 * each. Its answer to our hello is taken when it has come, never waited
 * for (a collector that is stopped or busy must not hold the program):
 * till then, as our own OPPROF_MODE says. It answers as soon as it reads
 * the hello, so that stands in only while it has read nothing of ours
 * (stopped, swamped, or the program's first instants); it is the
 * collector's mode but under a launcher that sets OPPROF_MODE for its
 * program alone. Once said, one load. errno kept. */
int opp_conn_summary(void);
/* The first failure of ours: say why (what, err's text when not 0) once,
 * and record nothing more. */
void opp_give_up(const char *what, int err);

/* From the constructor: connect to the collector at socket (OPPROF_SOCKET),
 * or, when NULL, start one of our own whose socket every process this one
 * starts inherits; then the hello, with the trace's clock kind. 0 when
 * connected (opp_agent_on), else said why. */
int opp_conn_start(const char *socket, int clock);
/* Called (when set) after a fork child's first connection, without the
 * connection's lock: what the child starts then (capture timers). */
void opp_conn_on_child_connect(void (*fn)(void));
/* Around fork() (the agent's atfork handlers): the lock held across it;
 * the child forgets the parent's connection and connects at its first
 * message (async-signal-safe resets only). */
void opp_conn_atfork_prepare(void);
void opp_conn_atfork_parent(void);
void opp_conn_forked(void);
/* The same in the child of a fork that ran no atfork handler (the lock,
 * which a thread of the parent's may have held, made anew). */
void opp_conn_raw_forked(void);
/* At exit: 1 when this process never connected (a fork child that
 * recorded nothing), so there is nobody to say goodbye to. */
int opp_conn_idle(void);
/* At exit: 1 when this thread is inside a send of ours (a signal
 * handler that called exit() interrupted it: a seccomp filter's SIGSYS
 * for our sendmsg): there is no goodbye then, which would wait on the
 * lock the thread holds; the collector reads the records all the same. */
int opp_conn_interrupted(void);
/* Say goodbye so the collector writes our records now and knows we exited
 * rather than died; the process that started the collector waits for the
 * whole trace (bounded) and says where it went. Profiling is off after. */
void opp_conn_goodbye(void);

/* The first messages on a new connection: HELLO, INFO and the function
 * table, built in msg (OPP_MSG_MAX bytes); the process's start: born (the
 * clock's ticks, realtime ns), NULL: now. 0 or -errno. (hello.c) */
int opp_hello(int sock, uint8_t *msg, int clock, const uint64_t *born);
/* Start a collector of our own, detached (launch.c): its socket's path
 * and the trace's path written into the buffers, its pid into *pid. 0, or
 * -errno with the reason said on stderr. */
int opp_launch_collector(char *socket, size_t socket_cap, char *output, size_t output_cap,
                         int *pid);

#endif
