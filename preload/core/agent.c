/* The agent, the core's top: its settings, its start (the constructor),
 * fork and exit, and the features' hooks walked at each. It calls every
 * layer below (internal.h) and nothing calls it but the loader, fork()
 * and the fork gates (publish.h), through the hooks it gave them. */
#include "core/internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* OPPROF_BUFFER: ring slots per thread, a power of two in the ring's
 * bounds; anything else is said and the default taken. */
static uint32_t ring_slots(void)
{
    _Static_assert(OPP_RING_MIN_RECS == 1024 && OPP_RING_MAX_RECS == 16777216,
                   "OPPROF_BUFFER's message names the bounds");
    const char *v = getenv("OPPROF_BUFFER");
    if (!v || !*v)
        return OPP_RING_DEFAULT_RECS;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (*v < '0' || *v > '9' || errno || *end || x < OPP_RING_MIN_RECS || x > OPP_RING_MAX_RECS ||
        (x & (x - 1))) {
        opp_agent_say("OPPROF_BUFFER must be a power of two from 1024 to 16777216 (slots per "
                      "thread), ignored: ",
                      v, "");
        return OPP_RING_DEFAULT_RECS;
    }
    return (uint32_t)x;
}

struct load_order {
    uintptr_t self; /* an address inside this library */
    int at, self_at, libc_at;
};

static int note_order(struct dl_phdr_info *info, size_t size, void *data)
{
    struct load_order *o = data;
    for (int i = 0; i < info->dlpi_phnum && o->self_at < 0; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && o->self >= lo && o->self < lo + ph->p_memsz)
            o->self_at = o->at;
    }
    const char *n = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    n = n ? n + 1 : info->dlpi_name;
    if (o->libc_at < 0 && n && !strcmp(n, "libc.so.6"))
        o->libc_at = o->at;
    o->at++;
    return 0;
}

/* Whether this library was preloaded (LD_PRELOAD, /etc/ld.so.preload, ld.so
 * --preload, with $LIB and the like expanded by the loader): the loader
 * maps preloaded objects before the program's own libraries, so it comes
 * before libc in the load order. Loaded otherwise, as a driver or NVTX
 * loads the library an inherited CUDA_INJECTION64_PATH or
 * NVTX_INJECTION64_PATH names, the process is not ours to profile: a
 * descendant is profiled fully or not at all. */
static int preloaded(void)
{
    struct load_order o = {(uintptr_t)(void *)opp_agent_on, 0, -1, -1};
    dl_iterate_phdr(note_order, &o);
    return o.self_at >= 0 && (o.libc_at < 0 || o.self_at < o.libc_at);
}

/* Whether this process is to be profiled: preloaded, OPPROF_DISABLE not 1. */
int opp_agent_wanted(void)
{
    static int wanted = -1;
    int w = __atomic_load_n(&wanted, __ATOMIC_RELAXED);
    if (w < 0) {
        const char *dis = getenv("OPPROF_DISABLE");
        w = !(dis && dis[0] == '1') && preloaded();
        __atomic_store_n(&wanted, w, __ATOMIC_RELAXED);
    }
    return w;
}

/* ---- process life ---- */

/* The string table's lock, then the connection's: the order its sends
 * take them in. */
static void at_prepare(void)
{
    opp_fork_check(); /* a child whose own fork ran no atfork handler: its locks made anew */
    opp_str_atfork_prepare();
    opp_conn_atfork_prepare();
}

static void at_parent(void)
{
    opp_conn_atfork_parent();
    opp_str_atfork_parent();
}

/* A fork child's resets of what the process kept (string ids, capture,
 * each feature's), the connection's apart. */
static void child_process(void)
{
    opp_str_forked();
    opp_capture_forked();
    for (const struct opp_feature *const *f = opp_features; *f; f++)
        if ((*f)->forked)
            (*f)->forked();
}

/* The forking thread's part, on that thread. */
static void child_thread(void)
{
    opp_thread_forked();
    for (const struct opp_feature *const *f = opp_features; *f; f++)
        if ((*f)->thread_forked)
            (*f)->thread_forked();
}

/* The child of fork() records as a process of its own: forget the parent's
 * connection, string ids and ring, and let each feature forget what was
 * the parent's. Only resets here: the child of a threaded program may make
 * only async-signal-safe calls until it execs, and one that only execs
 * should cost nothing. Connecting, the hello and the capture timers wait
 * for its first record. */
static void at_child(void)
{
    opp_fork_gate_open();
    opp_conn_forked();
    child_process();
    child_thread();
}

/* The child of a fork that ran no atfork handler (syscall(SYS_fork), clone
 * without CLONE_VM), found by its gates (publish.h) when a thread first
 * records, sends or exits there: the same resets, the locks made anew
 * rather than released (a thread of the parent's may have held them). The
 * forking thread's part waits until it meets its ring (child_thread). */
static void at_raw_child(void)
{
    opp_conn_raw_forked();
    child_process();
}

__attribute__((constructor)) static void opp_init(void)
{
    int saved_errno = errno;
    opp_tls.state = OPP_T_OFF; /* nothing of ours is recorded while we start */
    opp_say_init();
    opp_jump_init(); /* wanted or not: the jumps are ours either way */
    if (!opp_agent_wanted())
        goto out;
    opp_resolve_init();
    int clock = opp_clock_init(getenv("OPPROF_CLOCK"));
    uint32_t cap = ring_slots();
    const char *pv = getenv("OPPROF_PAUSED");
    int paused = pv && !strcmp(pv, "1");
    if (pv && *pv && !paused && strcmp(pv, "0"))
        opp_agent_say("OPPROF_PAUSED is 1 or 0, not '", pv, "': recording from the start");
    const char *drop = getenv("OPPROF_DROP");
    if (drop && *drop && strcmp(drop, "drop") && strcmp(drop, "block"))
        opp_agent_say("OPPROF_DROP is drop or block, not '", drop,
                      "': full buffers drop (and count)");
    opp_drop_block = drop && !strcmp(drop, "block");
    if (opp_thread_init(cap, paused))
        goto out;
    const char *sock = getenv("OPPROF_SOCKET");
    if (opp_conn_start(sock && sock[0] ? sock : NULL, clock) == 0) {
        opp_capture_init();
        opp_fork_gates_init(at_raw_child, child_thread);
        pthread_atfork(at_prepare, at_parent, at_child);
        Dl_info self;
        const char *self_path = dladdr((void *)opp_agent_wanted, &self) ? self.dli_fname : NULL;
        for (const struct opp_feature *const *f = opp_features; *f; f++)
            if ((*f)->start)
                (*f)->start(self_path);
    }
out:
    opp_tls.state = OPP_T_NEW;
    errno = saved_errno;
}

/* At exit: the step running then, what the features still hold (GPU
 * records in CUPTI's buffers), then the goodbye. */
__attribute__((destructor)) static void opp_fini(void)
{
    if (!opp_agent_on() || opp_conn_interrupted() || opp_conn_idle())
        return;
    int saved_errno = errno;
    opp_step_finish();
    size_t nf = 0;
    while (opp_features[nf])
        nf++;
    while (nf--)
        if (opp_features[nf]->stop)
            opp_features[nf]->stop();
    opp_thread_exiting();
    opp_conn_goodbye();
    errno = saved_errno;
}
