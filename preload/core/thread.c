/* Threads (thread.h): each thread's ring, a sealed memfd shared with the
 * collector, made at its first record and unmapped when the thread exits;
 * its name kept current, its alternate signal stack known. */
#include "core/thread.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proto.h"
#include "utf8.h"

static struct {
    uint32_t cap;      /* ring slots */
    int paused;        /* OPPROF_PAUSED=1: new rings start paused */
    pthread_key_t key; /* its destructor closes an exiting thread's ring */
} threads;

/* The file size limit (ulimit -f), which a ring, a memfd, must stay
 * under: growing a file past it raises SIGXFSZ and kills the program. */
static uint64_t file_size_limit(void)
{
    struct rlimit fs;
    return getrlimit(RLIMIT_FSIZE, &fs) == 0 && fs.rlim_cur != RLIM_INFINITY ? fs.rlim_cur
                                                                             : UINT64_MAX;
}

/* The real prctl, looked up once (at our start, so that a signal
 * handler's prctl never looks it up), errno kept. */
typedef int (*prctl_fn)(int, ...);
static _Atomic prctl_fn real_prctl;
static prctl_fn find_prctl(void)
{
    prctl_fn real = atomic_load_explicit(&real_prctl, memory_order_relaxed);
    if (!real) {
        int saved_errno = errno;
        real = (prctl_fn)dlsym(RTLD_NEXT, "prctl");
        atomic_store_explicit(&real_prctl, real, memory_order_relaxed);
        errno = saved_errno;
    }
    return real;
}

/* The real prctl, its four arguments passed on as they came; errno is
 * what it leaves. */
static int next_prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4,
                      unsigned long a5)
{
    prctl_fn real = find_prctl();
    if (!real)
        return errno = ENOSYS, -1;
    return real(option, a2, a3, a4, a5);
}

#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31) /* Linux 4.7's: in <linux/signal.h>, not glibc's headers */
#endif

/* The SS_AUTODISARM alternate signal stack this thread last set through
 * sigaltstack ([lo, hi), empty: none, or one without the flag). Such a
 * stack is disarmed while a handler runs on it: sigaltstack then says
 * SS_DISABLE, as for a thread that never set one, and only this tells
 * attaching that it runs there. Of any other stack the kernel says so
 * (SS_ONSTACK); kept here, it would stay after being taken down past us
 * (by the system call), and its memory, once the thread's stack, would
 * keep the thread from ever attaching. */
static __thread struct {
    uintptr_t lo, hi;
} alt_stack;

/* The calling thread runs on its alternate signal stack: a handler's,
 * whether the kernel still counts that stack as armed (SS_ONSTACK) or
 * disarmed it (SS_AUTODISARM). Async-signal-safe, errno kept. */
static int on_alt_stack(void)
{
    int saved_errno = errno;
    stack_t alt;
    uintptr_t sp = (uintptr_t)&alt;
    int on = (sp >= alt_stack.lo && sp < alt_stack.hi) ||
             (syscall(SYS_sigaltstack, NULL, &alt) == 0 && (alt.ss_flags & SS_ONSTACK));
    errno = saved_errno;
    return on;
}

/* The calls in flight at depth d and above, innermost first, each
 * recorded as ending now (they never returned) and left (the ring's
 * depth lowered past each once its record is in). */
static void record_left(struct opp_ring_hdr *r, uint32_t d, uint32_t depth)
{
    uint64_t now = opp_now();
    for (uint32_t k = depth < OPP_OPEN_MAX ? depth : OPP_OPEN_MAX; k-- > d;)
        opp_publish_f(r, r->open[k].fn, k, r->open[k].begin, now, NULL, 0, 0, OPP_PUB_LEAVE);
}

uint32_t opp_thread_left(struct opp_ring_hdr *r, uint32_t d, uint32_t sp)
{
    if (on_alt_stack())
        return d;
    uint32_t depth = d;
    while (d && opp_call_left(r, d, sp))
        d--;
    record_left(r, d, depth);
    return d;
}

/* Whether a jump to sp, made from cur, leaves the call whose frame's low
 * 32 bits are f (opp_jump_leaves): the frame sp's distance below it. */
static int leaves(uint32_t f, uintptr_t sp, uintptr_t cur)
{
    return opp_jump_leaves(sp - (uint32_t)((uint32_t)sp - f), sp, cur);
}

void opp_thread_jumping(uintptr_t sp, uintptr_t cur)
{
    struct opp_ring_hdr *r = opp_tls.ring;
    if (!r || !r->depth || !opp_ring_gate(r))
        return;
    uint32_t depth = r->depth, d = depth;
    /* a frame below the jump's stack pointer, the jump not made from
       between them (a handler's alternate stack above the thread's) */
    while (d && d <= OPP_OPEN_MAX && r->open[d - 1].sp && leaves(r->open[d - 1].sp, sp, cur))
        d--;
    if (d == depth)
        return;
    record_left(r, d, depth);
    r->depth = d;
}

void opp_thread_exiting(void)
{
    struct opp_ring_hdr *r = opp_tls.ring;
    if (r && r->depth && opp_ring_gate(r)) {
        record_left(r, 0, r->depth);
        r->depth = 0;
    }
}

static void thread_gone(void *ring)
{
    struct opp_ring_hdr *r = ring;
    if (!r || r != opp_tls.ring) /* a fork child's value: the parent's ring, unmapped */
        return;
    opp_thread_exiting(); /* a thread that ends inside calls (cancelled, pthread_exit
                             from a callback): they end with it */
    opp_tls.ring = NULL;
    opp_tls.state = OPP_T_OFF; /* calls from later destructors are not recorded */
    /* a ring whose gate is shut is the parent's (a fork that ran no atfork
     * handler): only our copy of its mapping goes */
    if (opp_ring_gate(r))
        atomic_store_explicit(&r->state, OPP_RING_CLOSED, memory_order_release);
    opp_ring_unmap(r, opp_ring_bytes(r->capacity));
}

int opp_thread_init(uint32_t cap, int paused)
{
    threads.paused = paused;
    threads.cap = cap;
    find_prctl();
    /* A ring is a file: sizing it past the file size limit (ulimit -f)
     * would raise SIGXFSZ and kill the program. */
    uint64_t limit = file_size_limit();
    while (threads.cap > OPP_RING_MIN_RECS && opp_ring_bytes(threads.cap) > limit)
        threads.cap >>= 1;
    if (opp_ring_bytes(threads.cap) > limit) {
        opp_give_up("the file size limit (ulimit -f) is below the smallest trace buffer, "
                    "profiling off",
                    0);
        return -1;
    }
    if (pthread_key_create(&threads.key, thread_gone) != 0) {
        opp_give_up("cannot create a thread key, profiling off", 0);
        return -1;
    }
    return 0;
}

static struct opp_ring_hdr *attach_new(void);

struct opp_ring_hdr *opp_thread_attach(void)
{
    struct opp_ring_hdr *r = opp_tls.ring;
    if (r && opp_ring_gate(r))
        return r;
    if (r)
        opp_fork_thread(); /* the parent's: this thread forked, no atfork handler ran */
    else
        opp_fork_check(); /* a child's new thread, the first to record */
    if (opp_tls.state != OPP_T_NEW || !opp_agent_on())
        return NULL;
    /* A handler on a signal's alternate stack, often sized for the handler
     * alone (a few KiB), has no room for attaching (a memfd, the message
     * passing it, a fork child's hello: about 1 KiB more than a call
     * takes): its calls go unrecorded, the thread's first call elsewhere
     * attaches. */
    if (on_alt_stack())
        return NULL;
    return attach_new();
}

/* What attaching holds while it runs, for a jump out of it: a handler of
 * a synchronous signal (a seccomp filter's SIGSYS for one of its system
 * calls, blocked or not) that siglongjmps. */
struct attach_guard {
    struct opp_guard g;
    int fd;
    struct opp_ring_hdr *r; /* made, not the thread's yet */
    size_t bytes;
};

/* A handler jumped out of attaching this thread: its memfd closed, its
 * mapping gone, the program's mask and cancel state back; profiling off,
 * said (its next try would be trapped again). */
static void attach_left(struct opp_unwind *u)
{
    struct attach_guard *g = (struct attach_guard *)u;
    if (g->fd >= 0)
        close(g->fd);
    if (g->r)
        opp_ring_unmap(g->r, g->bytes);
    if (!opp_tls.ring)
        opp_tls.state = OPP_T_NEW;
    opp_give_up("a signal handler jumped out of our thread setup (a seccomp filter's SIGSYS?), "
                "profiling off",
                0);
    opp_guard_left(&g->g);
}

/* opp_thread_attach's work, out of line: its frame (the signal masks) is
 * not taken on a signal's alternate stack, where attaching stops short. */
static __attribute__((noinline)) struct opp_ring_hdr *attach_new(void)
{
    int saved_errno = errno;
    struct attach_guard g = {.fd = -1, .bytes = opp_ring_bytes(threads.cap)};
    opp_guard_on(&g.g, attach_left);
    opp_tls.state = OPP_T_OFF; /* also our reentrancy guard while attaching */
    struct opp_ring_hdr *r = NULL;
    g.fd = (int)syscall(SYS_memfd_create, "opprof-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    /* A new memfd has no seals. Any other descriptor is not ours: a
     * seccomp filter trapped the call (SIGSYS) and its handler returned,
     * which leaves the call's number where the descriptor goes, maybe
     * one of the program's, never to be sized or closed by us. */
    if (g.fd >= 0 && fcntl(g.fd, F_GET_SEALS) != 0) {
        g.fd = -1;
        errno = ENOSYS;
    }
    if (g.fd < 0) {
        opp_give_up("cannot create a trace buffer (memfd_create)", errno);
        goto out;
    }
    if (g.bytes > file_size_limit()) { /* lowered since we started */
        opp_give_up("the file size limit (ulimit -f) is below a trace buffer, profiling off", 0);
        goto out;
    }
    if (ftruncate(g.fd, (off_t)g.bytes) < 0 ||
        fcntl(g.fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
        opp_give_up("cannot size a trace buffer", errno);
        goto out;
    }
    g.r = opp_ring_map(g.fd, g.bytes);
    if (!g.r) {
        opp_give_up("cannot map a trace buffer", errno);
        goto out;
    }
    g.r->magic = OPP_RING_MAGIC;
    g.r->version = OPP_RING_VERSION;
    g.r->capacity = threads.cap;
    g.r->tid = (uint32_t)syscall(SYS_gettid);
    g.r->paused = threads.paused; /* until the collector says otherwise (opprof ctl) */
    next_prctl(PR_GET_NAME, (unsigned long)g.r->name, 0, 0, 0);
    g.r->name[15] = 0;
    uint32_t body[2] = {g.r->tid, threads.cap};
    int rc = opp_conn_send(OPP_MSG_RING, body, sizeof body, g.fd,
                           "the collector took no new thread's buffer within 2 s (stopped, or "
                           "gone), profiling off");
    if (rc) {
        if (rc == -EWOULDBLOCK) /* a handler's call inside one of our sends: the next call */
            opp_tls.state = OPP_T_NEW;
        goto out;
    }
    pthread_setspecific(threads.key, g.r);
    r = g.r;
    g.r = NULL; /* the thread's now */
    opp_tls.ring = r;
    opp_tls.state = OPP_T_ON;
out:
    opp_unwind_pop(&g.g.u); /* what is left to undo is undone here */
    if (g.fd >= 0)
        close(g.fd);
    if (g.r)
        opp_ring_unmap(g.r, g.bytes);
    opp_guard_restore(&g.g);
    errno = saved_errno;
    return r;
}

void opp_thread_forked(void)
{
    struct opp_ring_hdr *r = opp_tls.ring;
    opp_tls.ring = NULL; /* and thread_gone leaves the thread key's r alone */
    opp_tls.state = OPP_T_NEW;
    opp_tls.publishing = 0; /* a fork from a handler inside a publish */
    if (r)
        opp_ring_unmap(r, opp_ring_bytes(r->capacity));
}

void opp_thread_rename(struct opp_ring_hdr *r, const char *name, size_t n)
{
    size_t cap = sizeof r->name - 1;
    if (n > cap)
        n = opp_utf8_whole(name, cap);
    memcpy(r->name, name, n);
    r->name[n] = 0;
    atomic_fetch_add_explicit(&r->name_seq, 1, memory_order_release);
}

/* The calling thread named itself name (whole, or as much as the kernel
 * kept): its ring's name follows. A ring whose gate is shut is the
 * parent's: the thread's next ring takes the name the kernel now has. No
 * lock, no allocation: a signal handler may rename its thread. */
static void named_self(const char *name)
{
    struct opp_ring_hdr *r = opp_tls.ring;
    if (r && opp_ring_gate(r))
        opp_thread_rename(r, name, strnlen(name, sizeof r->name - 1));
}

/* Keep thread names current in the report. */
OPP_EXPORT int pthread_setname_np(pthread_t t, const char *name)
{
    typedef int (*setname_fn)(pthread_t, const char *);
    static _Atomic setname_fn real_setname; /* threads name themselves at once */
    setname_fn real = atomic_load_explicit(&real_setname, memory_order_relaxed);
    if (!real) {
        real = (setname_fn)dlsym(RTLD_NEXT, "pthread_setname_np");
        atomic_store_explicit(&real_setname, real, memory_order_relaxed);
    }
    if (!real)
        return ENOSYS;
    int rc = real(t, name);
    if (rc == 0 && pthread_equal(t, pthread_self()))
        named_self(name);
    return rc;
}

/* PR_SET_NAME names the calling thread: the kernel keeps the first 15
 * bytes, and so does its ring. Every other option passes straight on. */
OPP_EXPORT int prctl(int option, ...)
{
    va_list ap;
    va_start(ap, option);
    unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long),
                  a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
    va_end(ap);
    int rc = next_prctl(option, a2, a3, a4, a5);
    if (option == PR_SET_NAME && rc == 0)
        named_self((const char *)a2);
    return rc;
}

/* Keep the SS_AUTODISARM alternate signal stack this thread sets
 * (alt_stack): the one the kernel holds once the call returned, asked for
 * again, since old may be the very stack_t the new stack came in (the
 * kernel reads it before it writes the old stack there). Its bounds are
 * written empty first, so that a handler between the writes sees no stack
 * rather than half of one. The sanitizers' runtimes call it as they
 * start: by the system call, as libc's is (the same stack_t), since no
 * function can be looked up yet, and not instrumented under TSan. */
OPP_EXPORT __attribute__((no_sanitize("thread"))) int sigaltstack(const stack_t *ss, stack_t *old)
{
    int rc = (int)syscall(SYS_sigaltstack, ss, old);
    stack_t now;
    if (rc == 0 && ss && syscall(SYS_sigaltstack, NULL, &now) == 0) {
        alt_stack.hi = 0;
        atomic_signal_fence(memory_order_seq_cst);
        if ((now.ss_flags & (SS_DISABLE | (int)SS_AUTODISARM)) == (int)SS_AUTODISARM) {
            alt_stack.lo = (uintptr_t)now.ss_sp;
            atomic_signal_fence(memory_order_seq_cst);
            alt_stack.hi = alt_stack.lo + now.ss_size;
        }
    }
    return rc;
}
