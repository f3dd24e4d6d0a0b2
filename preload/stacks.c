/* Code stacks (OPPROF_STACKS=N): at each recorded call, up to N return
 * addresses of the caller captured with libunwind (dlopen'ed, never linked),
 * interned to a per-process id that the event carries (OPP_REC_STACK). A
 * new stack is sent once as a GPU STACK record, the loaded modules as GPU
 * MODULE records (again whenever dl_iterate_phdr's dlpi_adds changes);
 * symbols are looked up at report time, never in the program. */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "cupti_client.h" /* opp_agent_send, opp_agent_say */
#include "gpu.h"
#include "proto.h"
#include "strtab.h"

#define STACKS_MAX 16
#define SKIP_MAX 8 /* our own frames above the caller's */
#define CAP (1u << 14)
#define LIMIT (CAP / 4 * 3)

int opp_stacks_n;
static int (*bt)(void **, int);

static struct slot {
    _Atomic uint64_t hash; /* 0: free */
    _Atomic uint32_t id;
} tab[CAP];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t count, next_id = 1;
static int full_said;
static _Atomic unsigned long long mod_adds; /* dlpi_adds when modules were last sent */
static char exe_path[PATH_MAX];

static void send_rec(const struct opp_gpu_rec *r)
{
    uint8_t msg[OPP_GPU_REC_MAX + 8];
    struct opp_wbuf w;
    opp_wbuf_init(&w, msg, sizeof msg);
    opp_put_u32(&w, 1);
    if (opp_gpu_put(&w, r) == 0)
        opp_agent_send(OPP_MSG_GPU, msg, (unsigned)w.len);
}

struct mod_walk {
    int checked, send;
};

static int mod_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    struct mod_walk *mw = ctx;
    if (!mw->checked) {
        mw->checked = 1;
        unsigned long long seen = atomic_load(&mod_adds);
        mw->send = seen != info->dlpi_adds &&
                   atomic_compare_exchange_strong(&mod_adds, &seen, info->dlpi_adds);
    }
    if (!mw->send)
        return 1;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type != PT_LOAD)
            continue;
        if (p->p_vaddr < lo)
            lo = p->p_vaddr;
        if (p->p_vaddr + p->p_memsz > hi)
            hi = p->p_vaddr + p->p_memsz;
    }
    if (hi <= lo)
        return 0;
    const char *path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : exe_path;
    struct opp_gpu_rec r = {.type = OPP_GPU_MODULE, .nfields = OPP_GF_MD_COUNT};
    r.f[OPP_GF_MD_BIAS] = info->dlpi_addr;
    r.f[OPP_GF_MD_START] = info->dlpi_addr + lo;
    r.f[OPP_GF_MD_END] = info->dlpi_addr + hi;
    r.f[OPP_GF_MD_PATH] = opp_str_id(path, strlen(path));
    send_rec(&r);
    return 0;
}

/* Send the module list when the loader's count of loads changed. Called
 * with none of our locks held: dl_iterate_phdr takes the loader's. */
static void modules_check(void)
{
    struct mod_walk mw = {0, 0};
    dl_iterate_phdr(mod_cb, &mw);
}

static uint64_t hash_of(void *const *pc, int n)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint64_t)(uintptr_t)pc[i]) * 1099511628211ull;
    return h ? h : 1;
}

static struct slot *probe(uint64_t h)
{
    for (uint32_t i = 0, k = (uint32_t)h & (CAP - 1); i < CAP; i++, k = (k + 1) & (CAP - 1)) {
        uint64_t e = atomic_load_explicit(&tab[k].hash, memory_order_acquire);
        if (e == h || e == 0)
            return &tab[k];
    }
    return NULL;
}

uint32_t opp_stack_capture(void)
{
    void *pc[STACKS_MAX + SKIP_MAX];
    int n = bt(pc, opp_stacks_n + SKIP_MAX);
    int s = 0;
    while (s < n && opp_is_self(pc[s]))
        s++;
    n -= s;
    if (n <= 0)
        return 0;
    if (n > opp_stacks_n)
        n = opp_stacks_n;
    uint64_t h = hash_of(pc + s, n);
    struct slot *e = probe(h);
    if (OPP_LIKELY(e && atomic_load_explicit(&e->hash, memory_order_acquire) == h))
        return atomic_load_explicit(&e->id, memory_order_relaxed);
    modules_check();
    pthread_mutex_lock(&lock);
    e = probe(h);
    uint32_t id = 0;
    if (e && atomic_load_explicit(&e->hash, memory_order_relaxed) == h) {
        id = atomic_load_explicit(&e->id, memory_order_relaxed);
    } else if (e && count < LIMIT) {
        id = next_id++;
        struct opp_gpu_rec r = {.type = OPP_GPU_STACK, .nfields = 1 + (uint32_t)n};
        r.f[OPP_GF_ST_ID] = id;
        for (int i = 0; i < n; i++)
            r.f[OPP_GF_ST_PC0 + i] = (uint64_t)(uintptr_t)pc[s + i];
        send_rec(&r);
        atomic_store_explicit(&e->id, id, memory_order_relaxed);
        atomic_store_explicit(&e->hash, h, memory_order_release);
        count++;
    } else if (!full_said) {
        full_said = 1;
        opp_agent_say("more distinct code stacks than opprof keeps; later calls have none", NULL,
                      NULL);
    }
    pthread_mutex_unlock(&lock);
    return id;
}

void opp_publish_stack(struct opp_ring_hdr *r, const struct opp_frame *f, uint64_t end,
                       const uint64_t *args, unsigned nargs)
{
    if (nargs >= OPP_MAX_ARGS) {
        opp_publish(r, f->fn, f->depth, f->begin, end, args, nargs);
        return;
    }
    uint64_t a[OPP_MAX_ARGS];
    for (unsigned i = 0; i < nargs; i++)
        a[i] = args[i];
    a[nargs] = f->stack;
    opp_publish_f(r, f->fn, f->depth, f->begin, end, a, nargs + 1, OPP_REC_STACK);
}

void opp_stacks_init(void)
{
    const char *v = getenv("OPPROF_STACKS");
    if (!v || !*v)
        return;
    char *endp;
    long n = strtol(v, &endp, 10);
    if (*endp || n < 1 || n > STACKS_MAX) {
        opp_agent_say("OPPROF_STACKS must be a number of frames from 1 to 16, got \"", v,
                      "\"; code stacks off");
        return;
    }
    void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    void *f = h ? dlsym(h, "_Ux86_64_backtrace") : NULL;
    if (h && !f)
        f = dlsym(h, "unw_backtrace");
    if (!f) {
        opp_agent_say("OPPROF_STACKS: libunwind.so.8 (unw_backtrace) not found; code stacks off",
                      NULL, NULL);
        return;
    }
    ssize_t k = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
    exe_path[k > 0 ? k : 0] = 0;
    *(void **)&bt = f;
    opp_stacks_n = (int)n;
}

void opp_stacks_forked(void)
{
    if (count)
        memset(tab, 0, sizeof tab);
    count = 0;
    next_id = 1;
    full_said = 0;
    atomic_store(&mod_adds, 0);
    pthread_mutex_init(&lock, NULL);
}
