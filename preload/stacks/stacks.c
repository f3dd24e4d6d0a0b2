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

#include "core/internal.h"
#include "gpu.h"
#include "proto.h"

#define STACKS_MAX 16
#define SKIP_MAX 8 /* frames left out above the caller's (ours, torch's RecordFunction) */

static int (*bt)(void **, int);

static struct opp_intern_slot slots[1u << 14];
static struct opp_intern tab =
    OPP_INTERN_INIT(slots, 1u << 14, 1,
                    "more distinct code stacks than opprof keeps; later calls have none");
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

struct pcs {
    void *const *pc;
    int n;
};

static void send_stack(uint32_t id, void *ctx)
{
    const struct pcs *p = ctx;
    struct opp_gpu_rec r = {.type = OPP_GPU_STACK, .nfields = 1 + (uint32_t)p->n};
    r.f[OPP_GF_ST_ID] = id;
    for (int i = 0; i < p->n; i++)
        r.f[OPP_GF_ST_PC0 + i] = (uint64_t)(uintptr_t)p->pc[i];
    send_rec(&r);
}

static int within(const void *p, uintptr_t lo, uintptr_t hi)
{
    return (uintptr_t)p >= lo && (uintptr_t)p < hi;
}

/* The first of the n innermost frames that is kept: past ours and a
 * feature's own (the torch shim); and when the code that calls into a
 * feature (torch's runStartCallbacks) is among the next ones, past it and
 * its caller (the dispatcher's slow path, the autograd node's call): the
 * stack then begins at the frame that called the op. */
static int first_kept(void *const *pc, int n)
{
    int s = 0;
    while (s < n && (opp_is_self(pc[s]) || within(pc[s], opp_stack_skip_lo, opp_stack_skip_hi)))
        s++;
    for (int i = s; i < n && i < SKIP_MAX; i++)
        if (within(pc[i], opp_stack_entry_lo, opp_stack_entry_hi))
            return i + 2 < n ? i + 2 : n;
    return s;
}

static uint32_t capture(void)
{
    void *pc[OPP_GPU_FIELDS_MAX - 1 + SKIP_MAX];
    int n = bt(pc, opp_stacks_n + SKIP_MAX);
    int s = first_kept(pc, n);
    n -= s;
    if (n < 0)
        n = 0;
    if (n > opp_stacks_n)
        n = opp_stacks_n;
    int (*extra)(uint64_t *, int) = __atomic_load_n(&opp_stack_extra, __ATOMIC_ACQUIRE);
    if (extra) { /* the Python frames above */
        uint64_t w[OPP_GPU_FIELDS_MAX];
        int room = (int)OPP_GPU_FIELDS_MAX - 1 - n, left = (int)(sizeof pc / sizeof *pc) - s - n;
        int k = extra(w, room < left ? room : left);
        for (int i = 0; i < k; i++)
            pc[s + n + i] = (void *)(uintptr_t)w[i];
        n += k;
    }
    if (n <= 0)
        return 0;
    uint64_t h = opp_fnv1a(pc + s, (size_t)n * sizeof *pc);
    uint32_t id = opp_intern_find(&tab, h);
    if (OPP_LIKELY(id))
        return id;
    modules_check(); /* before our lock: the loader takes its own */
    struct pcs p = {pc + s, n};
    return opp_intern_id(&tab, h, send_stack, &p);
}

static void stacks_start(const char *self_path)
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
    opp_stack_capture = capture;
    opp_stacks_n = (int)n;
    opp_capture_update(); /* opp_enter now takes its gated path */
}

/* The child of fork(): its stack ids and module list start over. */
static void stacks_forked(void)
{
    opp_intern_reset(&tab);
    atomic_store(&mod_adds, 0);
}

const struct opp_feature opp_feature_stacks = {
    .name = "stacks", .start = stacks_start, .forked = stacks_forked};
