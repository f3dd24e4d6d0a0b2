/* Fork gates (forkgate.c), below publishing (publish.h): a fork made by
 * the system call itself (syscall(SYS_fork), or clone without CLONE_VM,
 * as Chromium's zygote forks) runs no atfork handler: its child holds the
 * parent's rings, connection, locks and ids as they were. Gates tell it
 * so before it touches them: words of private memory in pages a fork
 * child finds zeroed (MADV_WIPEONFORK), set by their owner. Each ring has
 * one just below its header, which the hot path reads beside the ring's
 * pause word; the process has one, which the slow paths that do not
 * start from a ring read (a new thread's first record, every send, a
 * string's id, the exit). A kernel without MADV_WIPEONFORK (before Linux
 * 4.14) leaves every gate open: such a child writes into its parent's
 * rings, as it always did. */
#ifndef OPP_CORE_FORKGATE_H
#define OPP_CORE_FORKGATE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base.h"

enum { OPP_GATE_SHUT = 0, OPP_GATE_BUSY = 1, OPP_GATE_OPEN = 2 };

/* Non-zero while r is this process's own, not a fork child's copy of its
 * parent's. */
OPP_HOT uint32_t opp_ring_gate(const struct opp_ring_hdr *r)
{
    return __atomic_load_n((const uint32_t *)(const void *)r - 1, __ATOMIC_RELAXED);
}
/* A ring of bytes mapped shared from fd, its gate page below it, open;
 * NULL and errno when it cannot be mapped. opp_ring_unmap unmaps both. */
struct opp_ring_hdr *opp_ring_map(int fd, size_t bytes);
void opp_ring_unmap(struct opp_ring_hdr *r, size_t bytes);

/* The process's gate (a static word, open, until opp_fork_gates_init). */
extern _Atomic uint32_t *opp_fork_gate;
/* In the child of a fork that ran no atfork handler: the first thread
 * there runs the process's hook, the asynchronous signals held, while
 * any other waits for it. errno kept. */
void opp_fork_child(void);
/* Before the process's state is used where no ring was looked at first:
 * one load of the gate and one predicted branch when it is open. */
static inline void opp_fork_check(void)
{
    if (OPP_UNLIKELY(atomic_load_explicit(opp_fork_gate, memory_order_acquire) != OPP_GATE_OPEN))
        opp_fork_child();
}
/* This thread's ring is its parent's (its gate is shut): the process's
 * hook when no thread ran it yet, then the thread's, which forgets the ring
 * and what the features keep for the thread. */
void opp_fork_thread(void);
/* From the agent's start: the process's gate page, and what a child whose
 * fork ran no atfork handler does, for the process (once, by the first
 * thread there) and for the forking thread (when it meets its ring). */
void opp_fork_gates_init(void (*process)(void), void (*thread)(void));
/* In the child of fork(), from its atfork handler: the process's gate is
 * the child's own. */
void opp_fork_gate_open(void);

#endif
