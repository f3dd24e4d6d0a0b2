/* Fork gates (forkgate.h): a page below each ring, and one for the process,
 * that a fork child finds zeroed, so that the child of a fork that ran no
 * atfork handler knows what it holds is its parent's before it touches it. */
#include "core/forkgate.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

static _Atomic uint32_t gate_static = OPP_GATE_OPEN;
_Atomic uint32_t *opp_fork_gate = &gate_static;
static void (*on_process)(void), (*on_thread)(void);
/* The process's gate is one a fork child finds shut: the rings' are made
 * so too. Else none is (an old kernel): a child whose fork ran no atfork
 * handler would shut its rings' gates and not the process's, and reset
 * one thread's ring without the process's connection. */
static _Atomic int gates_wipe;

static size_t page_size(void)
{
    static size_t page;
    size_t p = __atomic_load_n(&page, __ATOMIC_RELAXED);
    if (!p) {
        long v = sysconf(_SC_PAGESIZE);
        p = v > 0 ? (size_t)v : 4096;
        __atomic_store_n(&page, p, __ATOMIC_RELAXED);
    }
    return p;
}

struct opp_ring_hdr *opp_ring_map(int fd, size_t bytes)
{
    size_t page = page_size();
    /* The gate page and the ring side by side: the space reserved first,
     * then each mapped into its place. */
    char *base =
        mmap(NULL, page + bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        return NULL;
    if (mmap(base, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
            MAP_FAILED ||
        mmap(base + page, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
            MAP_FAILED) {
        int err = errno;
        munmap(base, page + bytes);
        errno = err;
        return NULL;
    }
    /* without it (an old kernel) the gate stays open in a child too */
    if (atomic_load_explicit(&gates_wipe, memory_order_relaxed))
        madvise(base, page, MADV_WIPEONFORK);
    struct opp_ring_hdr *r = (struct opp_ring_hdr *)(void *)(base + page);
    __atomic_store_n((uint32_t *)(void *)r - 1, (uint32_t)OPP_GATE_OPEN, __ATOMIC_RELAXED);
    return r;
}

void opp_ring_unmap(struct opp_ring_hdr *r, size_t bytes)
{
    size_t page = page_size();
    munmap((char *)r - page, page + bytes);
}

void opp_fork_gates_init(void (*process)(void), void (*thread)(void))
{
    on_process = process;
    on_thread = thread;
    size_t page = page_size();
    void *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return;
    if (madvise(p, page, MADV_WIPEONFORK)) {
        munmap(p, page);
        return;
    }
    _Atomic uint32_t *g = p;
    atomic_store(g, OPP_GATE_OPEN);
    opp_fork_gate = g;
    atomic_store(&gates_wipe, 1);
}

void opp_fork_gate_open(void)
{
    atomic_store(opp_fork_gate, OPP_GATE_OPEN);
}

/* This thread runs the process's hook (opp_fork_child). */
static __thread int in_hook;

/* A handler jumped out of the hook: the gate shut again, so that the
 * next look runs the hook anew (what it did is done again: resets). */
static void hook_left(struct opp_unwind *u)
{
    if (in_hook) {
        in_hook = 0;
        atomic_store_explicit(opp_fork_gate, OPP_GATE_SHUT, memory_order_release);
    }
    opp_guard_left((struct opp_guard *)u);
}

void opp_fork_child(void)
{
    if (in_hook) /* a handler inside the hook, on its thread: the hook goes on once it returns */
        return;
    int saved_errno = errno;
    /* The claim and the hook with the asynchronous signals held: a
     * handler on this thread would otherwise wait for a hook that it
     * interrupted. The synchronous ones stay deliverable (a seccomp
     * filter's SIGSYS for the hook's close: blocked, it kills the child):
     * a handler of one that records finds the hook its own, one that
     * jumps out of it shuts the gate again (opp_guard). */
    struct opp_guard g;
    opp_guard_on(&g, hook_left);
    uint32_t shut = OPP_GATE_SHUT;
    int mine = atomic_compare_exchange_strong(opp_fork_gate, &shut, OPP_GATE_BUSY);
    if (mine) {
        in_hook = 1;
        if (on_process)
            on_process();
        in_hook = 0;
        atomic_store_explicit(opp_fork_gate, OPP_GATE_OPEN, memory_order_release);
    }
    opp_guard_off(&g);
    if (!mine) /* another thread of this child runs the hook */
        while (atomic_load_explicit(opp_fork_gate, memory_order_acquire) == OPP_GATE_BUSY)
            sched_yield();
    errno = saved_errno;
}

void opp_fork_thread(void)
{
    opp_fork_check();
    if (on_thread)
        on_thread();
}
