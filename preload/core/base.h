/* The core's first layer, which every other uses: messages to a person,
 * the clock, threads of our own, the features' stacks grown, and the hot
 * path's macros. It calls nothing of the core. The layers, each header
 * including the one below: base.h, publish.h (this thread's ring),
 * resolve.h (the real functions), conn.h (the connection), intern.h (ids
 * the collector learns once), thread.h (attaching a thread, entering a
 * call), capture.h (windows, steps), internal.h (the agent, and all a
 * feature may use). A file calls only into its own layer's header and
 * those below (scripts/check-layers.sh). */
#ifndef OPP_CORE_BASE_H
#define OPP_CORE_BASE_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include "buf.h"
#include "format.h"
#include "ops.h"
#include "ring.h"
#include "util.h"

/* Every entry point of every library table, one id each. */
#include "tables/funcs.h"

#define OPP_EXPORT __attribute__((visibility("default")))
/* The hot path's helpers: inlined into every wrapper whatever the
 * compiler's size heuristics say (a call per entry and exit costs more
 * than the work they do). */
#define OPP_HOT static inline __attribute__((always_inline))
#define OPP_BARRIER() __asm__ __volatile__("" ::: "memory")

/* At the agent's start, before its first line: a process started with
 * no stderr (descriptor 2 closed, a daemon) gets no line of ours, ever:
 * the number 2 is the program's, for a file of its own. (say.c) */
void opp_say_init(void);
/* Whether descriptor 2 takes our lines now: the file it was at our start,
 * a terminal, or a file opened for appending; not a file the program put
 * there since (its data file, a pipe, a device). (say.c) */
int opp_say_stderr(void);
/* One line on stderr: "opprof: " a b c (NULLs skipped). (say.c) */
void opp_agent_say(const char *a, const char *b, const char *c);
/* The same as "opprof: what: strerror(err)", or what alone when err is 0. */
void opp_say_err(const char *what, int err);

/* The clock of every record: TSC (1) or CLOCK_MONOTONIC. (clock.c) */
extern int opp_use_tsc;
/* Choose it from OPPROF_CLOCK's value (NULL: unset); the trace's clock
 * kind (OPP_CLOCK_TSC or OPP_CLOCK_MONOTONIC). */
int opp_clock_init(const char *setting);

OPP_HOT uint64_t opp_now(void)
{
    return OPP_LIKELY(opp_use_tsc) ? __rdtsc() : opp_mono_ns();
}

/* Our own cancellation points (a send, a close, a line on stderr, a
 * wait) must never act on a cancel the program sent the thread: its call
 * would end inside ours, holding our lock (every other thread would then
 * hang on it), where without us the thread runs on to its own next
 * cancellation point. Around them, cancellation off, then put back as it
 * was: a pending cancel acts at the program's next cancellation point, or
 * at once when asynchronous, as it would have. Put back before the
 * signals kept waiting (below) are let through: a handler of theirs that
 * jumps away would leave it off. */
static inline int opp_cancel_off(void)
{
    int old = PTHREAD_CANCEL_ENABLE;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    return old;
}
static inline void opp_cancel_restore(int old)
{
    if (old != PTHREAD_CANCEL_DISABLE)
        pthread_setcancelstate(old, &old);
}

/* Our rare paths that leave state behind when jumped out of (attaching a
 * thread: marked as attaching; a send: the connection's lock held) keep
 * the signals a timer, another thread or process sends waiting until they
 * are done, so that no handler of the program's runs inside them and
 * siglongjmps out (a SIGALRM's every 50 us would leave a thread that never
 * records, or the lock held for good). The faults an instruction or a
 * system call of ours raises (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, a
 * seccomp filter's SIGSYS) stay deliverable: blocked, the kernel would
 * kill the program with them. */
static inline void opp_async_signals(sigset_t *async)
{
    sigfillset(async);
    static const int faults[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS};
    for (unsigned i = 0; i < sizeof faults / sizeof *faults; i++)
        sigdelset(async, faults[i]);
}

/* A rare path of ours that leaves state behind when a signal handler
 * jumps out of it (a send holding the connection's lock, attaching a
 * thread, a line on stderr, a wait for room in a ring), registered on
 * this thread while it runs. The paths that keep the asynchronous
 * signals waiting are jumped out of only by a handler of a synchronous
 * one (a seccomp filter's SIGSYS for one of our system calls, whose
 * handler may siglongjmp); the others by any. The jump (jump.c) undoes
 * each one whose frame it leaves, innermost first. (guard.c) */
struct opp_unwind {
    struct opp_unwind *next;
    void (*undo)(struct opp_unwind *u); /* on the jumping thread, in the handler */
};
extern __thread struct opp_unwind *opp_unwinds;
/* u lives in the frame of the path it guards: its address is that frame's. */
static inline void opp_unwind_push(struct opp_unwind *u, void (*undo)(struct opp_unwind *))
{
    u->undo = undo;
    u->next = opp_unwinds;
    atomic_signal_fence(memory_order_seq_cst);
    opp_unwinds = u;
    atomic_signal_fence(memory_order_seq_cst);
}
static inline void opp_unwind_pop(struct opp_unwind *u)
{
    atomic_signal_fence(memory_order_seq_cst);
    opp_unwinds = u->next;
    atomic_signal_fence(memory_order_seq_cst);
}

/* Such a path's guard, the one rule for all of them: the signals in hold
 * kept waiting while it runs (opp_guard_on: the asynchronous ones; NULL:
 * none), cancellation off, undo registered; in that order, so that a
 * jump out of the mask's own system call leaves nothing changed. A
 * path's own guard struct starts with it; undo gets its u (opp_guard_undo
 * when there is nothing else to put back). */
struct opp_guard {
    struct opp_unwind u;
    sigset_t old;  /* the mask before, when it holds signals */
    sigset_t held; /* the signals it holds */
    int cancel, holds;
};
static inline void opp_guard_hold(struct opp_guard *g, const sigset_t *hold,
                                  void (*undo)(struct opp_unwind *))
{
    g->holds = 0;
    if (hold) {
        g->held = *hold;
        /* SIGKILL, never blocked, marks an old mask the kernel did not
         * write: a seccomp filter trapped the call and its handler
         * returned (leaving the call's number as its result, 0 to
         * pthread_sigmask); nothing was held, nothing is put back */
        sigemptyset(&g->old);
        sigaddset(&g->old, SIGKILL);
        g->holds = !pthread_sigmask(SIG_BLOCK, hold, &g->old) && !sigismember(&g->old, SIGKILL);
    }
    g->cancel = opp_cancel_off();
    opp_unwind_push(&g->u, undo);
}
static inline void opp_guard_on(struct opp_guard *g, void (*undo)(struct opp_unwind *))
{
    sigset_t async;
    opp_async_signals(&async);
    opp_guard_hold(g, &async, undo);
}
/* The program's cancel state and signals back, once the undo is
 * unregistered: cancellation first, before a signal let through can jump
 * away and leave it off. */
static inline void opp_guard_restore(struct opp_guard *g)
{
    opp_cancel_restore(g->cancel);
    if (g->holds)
        pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}
static inline void opp_guard_off(struct opp_guard *g)
{
    opp_unwind_pop(&g->u);
    opp_guard_restore(g);
}
/* The same in an undo, in the handler: the signals it held that the mask
 * before did not are let through again, for a jump that restores no mask
 * (setjmp, sigsetjmp(env, 0)); the handler's own additions stay, as they
 * would without us. */
static inline void opp_guard_left(struct opp_guard *g)
{
    opp_cancel_restore(g->cancel);
    if (!g->holds)
        return;
    sigset_t ours = g->held;
    for (int sig = 1; sig < NSIG; sig++)
        if (sigismember(&g->old, sig) == 1)
            sigdelset(&ours, sig);
    pthread_sigmask(SIG_UNBLOCK, &ours, NULL);
}
void opp_guard_undo(struct opp_unwind *u);

/* A feature's per-thread stack of open ranges (torch's ops, NVTX's
 * push/pop ranges) keeps its first entries in the thread's state and grows
 * on the heap past them, doubling, up to OPP_STACK_DEPTH_MAX entries (a
 * ring slot holds a call's depth in 16 bits, shared by every feature and
 * library). opp_stack_grow: the cap entries of s (of size bytes each) in a
 * new allocation for twice as many, s freed unless it is inline_mem; NULL
 * when there is no room (the maximum, or no memory), said once per *said:
 * "opprof: " what cap " on a thread are not recorded...". errno kept.
 * (grow.c) */
#define OPP_STACK_DEPTH_MAX (1u << 14)
void *opp_stack_grow(void *s, uint32_t cap, const void *inline_mem, size_t size, int *said,
                     const char *what);

/* A detached thread of ours with every signal blocked (the program's
 * handlers never run on it). 0 or an errno. (spawn.c) */
int opp_spawn(void *(*fn)(void *));

#endif
