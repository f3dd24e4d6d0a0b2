/* The core's second layer: this thread's state and publishing a finished
 * call into its ring (the hot path's last half), with what a full ring
 * does. Below: base.h. */
#ifndef OPP_CORE_PUBLISH_H
#define OPP_CORE_PUBLISH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base.h"

/* NEW: not attached yet; ON: recording; OFF: never (and our reentrancy guard). */
enum opp_thread_state { OPP_T_NEW = 0, OPP_T_ON = 1, OPP_T_OFF = 2 };

struct opp_tls {
    struct opp_ring_hdr *ring; /* NULL: not attached, attaching, or off */
    uint8_t state;             /* enum opp_thread_state */
    uint8_t publishing;        /* inside opp_publish_f: a signal handler's call then
                                  is counted as dropped, not written over */
};
extern __thread struct opp_tls opp_tls;

/* ---- fork gates (forkgate.c) ----
 * A fork made by the system call itself (syscall(SYS_fork), or clone
 * without CLONE_VM, as Chromium's zygote forks) runs no atfork handler:
 * its child holds the parent's rings, connection, locks and ids as they
 * were. Gates tell it so before it touches them: words of private memory
 * in pages a fork child finds zeroed (MADV_WIPEONFORK), set by their
 * owner. Each ring has one just below its header, which the hot path
 * reads beside the ring's pause word; the process has one, which the slow
 * paths that do not start from a ring read (a new thread's first record,
 * every send, a string's id, the exit). A kernel without MADV_WIPEONFORK
 * (before Linux 4.14) leaves every gate open: such a child writes into
 * its parent's rings, as it always did. */
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
 * there runs the process's hook, every signal blocked, while any other
 * waits for it. errno kept. */
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

/* A call being recorded, from its entry (thread.h) to its publishing. */
struct opp_frame {
    struct opp_ring_hdr *r;
    uint64_t begin;
    uint32_t fn, depth;
    uint32_t stack; /* code stack id, 0 when none */
};

/* Count one record of this thread as dropped: one instruction, so a
 * signal handler's count and the thread's never overwrite each other. */
static inline void opp_ring_drop(struct opp_ring_hdr *r)
{
    atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
}

/* A quarter of the ring into a lap (ring.h): when the collector has read
 * that quarter, an OPP_REC_REWIND record at h and the ring goes on at the
 * next lap's start; the head to write at. Out of line: once every
 * OPP_RING_REWIND_EVERY slots. */
uint64_t opp_ring_rewind(struct opp_ring_hdr *r, uint64_t h);

/* OPPROF_DROP=block: wait (bounded) for the collector to make room for
 * need slots; 1 when there is room. */
extern int opp_drop_block;
int opp_ring_wait(struct opp_ring_hdr *r, uint64_t h, unsigned need);

/* Append one finished event to ring r (this thread's): no wait, a full
 * ring drops and counts it (unless OPPROF_DROP=block). nargs is a constant
 * at every call site, so the slot arithmetic folds away. A call made by a
 * signal handler that interrupted this very function on this thread would
 * claim the same slot: it is counted as dropped instead. */
OPP_HOT void opp_publish_f(struct opp_ring_hdr *r, uint32_t fn, uint32_t depth, uint64_t begin,
                           uint64_t end, const uint64_t *args, unsigned nargs, uint8_t flags)
{
    if (OPP_UNLIKELY(opp_tls.publishing)) {
        opp_ring_drop(r);
        return;
    }
    opp_tls.publishing = 1;
    OPP_BARRIER();
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    unsigned need = opp_rec_slots(nargs);
    if (OPP_UNLIKELY(((h + need) & (OPP_RING_REWIND_EVERY - 1)) < need) &&
        (h & (r->capacity - 1)) >= opp_ring_hot(r->capacity))
        h = opp_ring_rewind(r, h);
    if (OPP_UNLIKELY(h + need - r->cached_tail > r->capacity)) {
        r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (h + need - r->cached_tail > r->capacity &&
            !(opp_drop_block && opp_ring_wait(r, h, need))) {
            opp_ring_drop(r); /* full: drop and count, never wait */
            OPP_BARRIER();
            opp_tls.publishing = 0;
            return;
        }
    }
    struct opp_rec *s = opp_ring_slot(r, r->capacity, h);
    s->begin = begin;
    s->end = end;
    s->fn = fn;
    s->depth = (uint16_t)depth;
    s->nargs = (uint8_t)nargs;
    s->flags = flags;
    s->arg0 = nargs ? args[0] : 0;
    for (unsigned i = 1; i < need; i++) {
        struct opp_rec_ext *e = (struct opp_rec_ext *)opp_ring_slot(r, r->capacity, h + i);
        for (unsigned k = 0; k < 4; k++) {
            unsigned a = 1 + (i - 1) * 4 + k;
            e->arg[k] = a < nargs ? args[a] : 0;
        }
    }
    atomic_store_explicit(&r->head, h + need, memory_order_release);
    OPP_BARRIER();
    opp_tls.publishing = 0;
}

OPP_HOT void opp_publish(struct opp_ring_hdr *r, uint32_t fn, uint32_t depth, uint64_t begin,
                         uint64_t end, const uint64_t *args, unsigned nargs)
{
    opp_publish_f(r, fn, depth, begin, end, args, nargs, 0);
}

/* The same with the frame's code stack id appended (OPP_REC_STACK); a
 * call with all OPP_MAX_ARGS values goes without its stack. */
void opp_publish_stack(struct opp_ring_hdr *r, const struct opp_frame *f, uint64_t end,
                       const uint64_t *args, unsigned nargs);

#endif
