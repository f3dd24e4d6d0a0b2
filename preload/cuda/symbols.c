/* The C side of the CUDA symbol fallback (cuda/internal.h): opening and
 * closing a call recorded by a trampoline of tramp.S, our dlsym (which
 * hands out trampolines for the CUDA entry points a program looks up by
 * handle, and keeps RTLD_DEFAULT honest about entry points no loaded library
 * defines), and cuGetProcAddress / cuGetProcAddress_v2 (which hand out
 * trampolines for the driver functions they return). Nothing here changes
 * what the program sees happen: same results, statuses and errno. */
#include "core/internal.h"
#include "cuda/internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef OPP_CUDA_TRAMP

#define OPP_HIDDEN __attribute__((visibility("hidden")))

/* tramp.S numbers ids the same way: count the library tables. */
#define OPP_CNT(...) +1
_Static_assert((0 OPP_ALL_FUNCS(OPP_CNT)) == OPP_FN_LIB_COUNT, "tramp.S ids");

/* ---- every intercepted entry point by name ---- */

struct opp_named {
    const char *name;
    uint32_t id;
};

static struct opp_named names[] = {
#define NAME_LIB(lib, name, ...) {#name, OPP_FN_##name},
#define NAME_RT(cbid, sym) {#sym, OPP_FN_CUDA_RT_BASE + (cbid)},
#define NAME_DRV(cbid, sym) {#sym, OPP_FN_CUDA_DRV_BASE + (cbid)},
    OPP_ALL_FUNCS(NAME_LIB)
    OPP_CUDA_RT_SYMS(NAME_RT)
    OPP_CUDA_DRV_SYMS(NAME_DRV)
#undef NAME_LIB
#undef NAME_RT
#undef NAME_DRV
};
#define NNAMES (sizeof names / sizeof *names)

static int cmp_named(const void *a, const void *b)
{
    return strcmp(((const struct opp_named *)a)->name, ((const struct opp_named *)b)->name);
}

static pthread_once_t names_once = PTHREAD_ONCE_INIT;
static void names_sort(void) { qsort(names, NNAMES, sizeof *names, cmp_named); }

/* The id of an entry point we export, or -1. */
static long lookup(const char *name)
{
    pthread_once(&names_once, names_sort);
    struct opp_named key = {name, 0};
    const struct opp_named *n = bsearch(&key, names, NNAMES, sizeof *names, cmp_named);
    return n ? (long)n->id : -1;
}

/* ---- the real dlsym ---- */

typedef void *(*dlsym_fn)(void *, const char *);

static void *no_dlsym(void *handle, const char *name) { return NULL; }

static dlsym_fn real_dlsym(void)
{
    static dlsym_fn _Atomic real;
    dlsym_fn f = atomic_load_explicit(&real, memory_order_acquire);
    if (OPP_LIKELY(f != NULL))
        return f;
    /* dlvsym is not ours: it finds libc's dlsym (or a later preload's). */
    f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!f)
        f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    if (!f)
        f = no_dlsym;
    atomic_store_explicit(&real, f, memory_order_release);
    return f;
}

#ifdef OPP_HAVE_CUDA

_Static_assert(offsetof(struct opp_tls, ring) == 0 && offsetof(struct opp_tls, state) == 8 &&
                   OPP_T_NEW == 0,
               "tramp.S reads opp_tls.ring and opp_tls.state");

/* ---- trampolines ---- */

#define DECL_TR(cbid, sym) extern char opp_tr_##sym[] OPP_HIDDEN;
OPP_CUDA_RT_SYMS(DECL_TR)
OPP_CUDA_DRV_SYMS(DECL_TR)
#undef DECL_TR
extern char opp_cuda_ret[] OPP_HIDDEN;

static void *const tramp_of[OPP_FN_COUNT] = {
#define TR_RT(cbid, sym) [OPP_FN_CUDA_RT_BASE + (cbid)] = opp_tr_##sym,
#define TR_DRV(cbid, sym) [OPP_FN_CUDA_DRV_BASE + (cbid)] = opp_tr_##sym,
    OPP_CUDA_RT_SYMS(TR_RT)
    OPP_CUDA_DRV_SYMS(TR_DRV)
#undef TR_RT
#undef TR_DRV
};

enum {
#define CBID_DRV(cbid, sym) OPP_DRV_CBID_##sym = (cbid),
    OPP_CUDA_DRV_SYMS(CBID_DRV)
#undef CBID_DRV
};
#define GPA_ID (OPP_FN_CUDA_DRV_BASE + OPP_DRV_CBID_cuGetProcAddress)
#define GPA2_ID (OPP_FN_CUDA_DRV_BASE + OPP_DRV_CBID_cuGetProcAddress_v2)

static uint32_t cbid_of(uint32_t id)
{
    return id - (id >= OPP_FN_CUDA_DRV_BASE ? OPP_FN_CUDA_DRV_BASE : OPP_FN_CUDA_RT_BASE);
}

/* What a call whose real function no loaded library defines returns
 * (opp_missing): its domain's "not initialised" status (tables/funcs.h),
 * or 0 where no status is returned. */
#define RET_MISSING(lib, value, name)                                                              \
    static long ret_missing_##lib(void)                                                            \
    {                                                                                              \
        return value;                                                                              \
    }
OPP_CUDA_MISSING(RET_MISSING)
#undef RET_MISSING
static long ret_zero(void) { return 0; }

/* ---- a recorded call: enter, shadow stack, leave ---- */

/* Recorded CUDA calls in flight per thread (a library's call into the
 * runtime into the driver: a few); deeper ones only forward. In TLS, which
 * every thread's stack pays for. */
#define OPP_CUDA_SHADOW 16

struct shadow_ent {
    void *ret; /* where the call returns to */
    struct opp_frame f;
};
static __thread struct {
    unsigned n;
    struct shadow_ent e[OPP_CUDA_SHADOW];
} shadow;

/* From tramp.S, registers saved. Returns the function to jump to with
 * the original arguments; when the call is recorded, *slot (the return
 * address) now points at opp_cuda_ret. errno: opp_real and opp_enter keep it. */
OPP_HIDDEN void *opp_cuda_enter(uint32_t id, void **slot)
{
    void *real = opp_real(id);
    if (OPP_UNLIKELY(!real))
        return !opp_missing(id, opp_cuda_has_status(id)) ? (void *)ret_zero
               : id >= OPP_FN_CUDA_DRV_BASE              ? (void *)ret_missing_cuda
                                                         : (void *)ret_missing_cudart;
    unsigned n = shadow.n;
    struct opp_frame f;
    if (OPP_UNLIKELY(atomic_load_explicit(&opp_cupti_restart, memory_order_relaxed)) && n == 0)
        opp_cupti_restart_now(); /* before the runtime sees this call */
    if (OPP_UNLIKELY(opp_capture_api) &&
        !atomic_load_explicit(&opp_cuda_via_cupti, memory_order_relaxed))
        opp_capture_cuda(id);
    if (atomic_load_explicit(&opp_cuda_via_cupti, memory_order_relaxed) || n >= OPP_CUDA_SHADOW ||
        !opp_enter(&f, id))
        return real;
    shadow.e[n].ret = *slot;
    shadow.e[n].f = f;
    OPP_BARRIER(); /* a signal handler's calls push above this entry */
    shadow.n = n + 1;
    *slot = opp_cuda_ret;
    return real;
}

/* From opp_cuda_ret, return registers saved: publish the call, give back
 * where it returns to. */
OPP_HIDDEN void *opp_cuda_leave(uint64_t rax)
{
    unsigned n = shadow.n;
    if (OPP_UNLIKELY(n == 0)) { /* cannot happen: a return we did not set up */
        opp_agent_say("CUDA call returned through a lost frame, aborting", "", "");
        abort();
    }
    struct shadow_ent e = shadow.e[n - 1];
    OPP_BARRIER();
    shadow.n = n - 1;
    uint32_t id = e.f.fn;
    const uint64_t a[OPP_COL_CUDA_COLS] = {[OPP_COL_CUDA_STATUS] =
                                               opp_cuda_has_status(id) ? (uint32_t)rax : 0,
                                           [OPP_COL_CUDA_CBID] = cbid_of(id)};
    opp_leave(&e.f, a, OPP_COL_CUDA_COLS);
    if (n == 1) /* the program's CUDA call is over: CUPTI may start now */
        opp_cupti_init();
    return e.ret;
}

/* ---- handing out trampolines for pointers the program obtained ---- */

OPP_EXPORT int cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags);
OPP_EXPORT int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags,
                                   void *status);

/* p is the function behind driver/runtime entry point id. The first
 * function seen for an id becomes its real function and the program gets
 * the trampoline; a different one later (another copy of the library) is
 * handed back as it is, unrecorded. */
static void *wrap(uint32_t id, void *p)
{
    void *expect = NULL;
    if (!atomic_compare_exchange_strong(&opp_real_fn[id], &expect, p) && expect != p)
        return p;
    if (id == GPA_ID)
        return (void *)cuGetProcAddress;
    if (id == GPA2_ID)
        return (void *)cuGetProcAddress_v2;
    return tramp_of[id] ? tramp_of[id] : p;
}

/* A driver function pointer from cuGetProcAddress: named by the symbol
 * that starts there (cuMemAlloc_v2, cuLaunchKernel_ptsz, ...). */
static void wrap_proc(void **pfn)
{
    void *p = *pfn;
    if (!p || opp_is_self(p) || !opp_agent_wanted())
        return;
    int saved_errno = errno;
    Dl_info di;
    long id;
    if (dladdr(p, &di) && di.dli_sname && di.dli_saddr == p &&
        (id = lookup(di.dli_sname)) >= (long)OPP_FN_CUDA_DRV_BASE)
        *pfn = wrap((uint32_t)id, p);
    errno = saved_errno;
}

#define GPA_BODY(ID, call)                                                                         \
    gpa_t real = (gpa_t)opp_real(ID);                                                              \
    if (!real)                                                                                     \
        return (int)opp_missing(ID, 1);                                                            \
    struct opp_frame f;                                                                            \
    int rec =                                                                                      \
        !atomic_load_explicit(&opp_cuda_via_cupti, memory_order_relaxed) && opp_enter(&f, ID);     \
    int rc = call;                                                                                 \
    if (rec) {                                                                                     \
        const uint64_t a[OPP_COL_CUDA_COLS] = {                                                    \
            [OPP_COL_CUDA_STATUS] = (uint32_t)rc, [OPP_COL_CUDA_CBID] = cbid_of(ID)};              \
        opp_leave(&f, a, OPP_COL_CUDA_COLS);                                                       \
    }                                                                                              \
    if (rc == 0 && pfn)                                                                            \
        wrap_proc(pfn);                                                                            \
    return rc;

OPP_EXPORT int cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags)
{
    typedef int (*gpa_t)(const char *, void **, int, uint64_t);
    GPA_BODY(GPA_ID, real(symbol, pfn, version, flags))
}

OPP_EXPORT int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags,
                                   void *status)
{
    typedef int (*gpa_t)(const char *, void **, int, uint64_t, void *);
    GPA_BODY(GPA2_ID, real(symbol, pfn, version, flags, status))
}

#else /* no CUDA toolkit at build time: only the library tables' names */

static void *wrap(uint32_t id, void *p) { return p; }

#endif /* OPP_HAVE_CUDA */

/* ---- dlsym ---- */

/* Lookups by libcupti (the CUPTI client's own) get what they ask for. */
static int caller_passes(void *caller)
{
    if (opp_is_self(caller))
        return 1;
    Dl_info di;
    return dladdr(caller, &di) && di.dli_fname && strstr(di.dli_fname, "libcupti");
}

static void *opp_dlsym_wrapped(void *handle, const char *name)
{
    int saved_errno = errno;
    void *p = real_dlsym()(handle, name);
    long id = lookup(name);
    if (p && id >= 0) {
        if (opp_is_self(p)) {
            /* Our own wrapper (RTLD_DEFAULT, the program's handle: the
             * global scope, where we come first). Without us the lookup
             * would have found what follows us there: nothing (no such
             * library, or only one loaded RTLD_LOCAL) means NULL, with the
             * error that failed lookup left for dlerror(). */
            if (!real_dlsym()(RTLD_NEXT, name))
                p = NULL;
        } else if (id >= (long)OPP_FN_LIB_COUNT && opp_agent_wanted()) {
            p = wrap((uint32_t)id, p);
        }
    }
    errno = saved_errno;
    return p;
}

/* dlsym(RTLD_NEXT, name) from the program (or a preload before ours) for a
 * name we export: the lookup starts after the caller and would stop at our
 * wrapper. Without us it would have gone on: NULL when nothing follows us
 * (with that lookup's error), else our wrapper, whose calls go there. */
static void *opp_dlsym_next_wrapped(void *handle, const char *name)
{
    static void *_Atomic self_h;
    int saved_errno = errno;
    void *p = real_dlsym()(RTLD_NEXT, name);
    if (p) {
        void *h = atomic_load(&self_h);
        Dl_info di;
        if (!h && dladdr((void *)opp_dlsym_next_wrapped, &di) && di.dli_fname) {
            h = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
            atomic_store(&self_h, h);
        }
        void *mine = h ? real_dlsym()(h, name) : NULL;
        if (mine)
            p = mine;
    }
    errno = saved_errno;
    return p;
}

/* RTLD_NEXT from caller searches past us: caller is the program or a
 * library loaded before us (objects load in search order, dlopened ones
 * after us and in scopes of their own). */
static int caller_before_us(void *caller)
{
    Dl_info di;
    struct link_map *me = NULL, *lm = NULL;
    if (!dladdr1((void *)caller_before_us, &di, (void **)&me, RTLD_DL_LINKMAP) || !me ||
        !dladdr1(caller, &di, (void **)&lm, RTLD_DL_LINKMAP))
        return 0;
    for (; lm; lm = lm->l_next)
        if (lm == me)
            return 1;
    return 0;
}

/* Called by our dlsym (tramp.S) with its caller's return address.
 * Names we do not export, and every lookup of ours or libcupti's, go to the
 * real dlsym untouched. */
OPP_HIDDEN dlsym_fn opp_dlsym_route(void *handle, const char *name, void *caller)
{
    int saved_errno = errno;
    dlsym_fn go = real_dlsym();
    if (name && lookup(name) >= 0 && !caller_passes(caller)) {
        if (handle != RTLD_NEXT)
            go = opp_dlsym_wrapped;
        else if (caller_before_us(caller))
            go = opp_dlsym_next_wrapped;
    }
    errno = saved_errno;
    return go;
}

#endif /* OPP_CUDA_TRAMP */
