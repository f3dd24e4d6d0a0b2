/* The intercepted entry points: their descriptions (from the tables) and
 * their real functions, found in whatever loaded object defines them,
 * never in libopprof.so itself. */
#include "core/resolve.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

const struct opp_fn_info opp_fn_info[OPP_FN_COUNT] = {
#define OPP_FN_DESC(lib, name, kind, flags, dtype, ...)                                            \
    {#name, #lib, OPP_OP_##kind | OPP_FL_##flags | (OPP_LIBEXT_##lib ? OPP_OPK_EXTID : 0),         \
     OPP_DT_##dtype},
    OPP_ALL_FUNCS(OPP_FN_DESC)
#undef OPP_FN_DESC
#define OPP_FN_RT(cbid, name) [OPP_FN_CUDA_RT_BASE + cbid] = {name, OPP_LIB_CUDART, OPP_OP_CUDA_API, 0},
#define OPP_FN_DRV(cbid, name) [OPP_FN_CUDA_DRV_BASE + cbid] = {name, OPP_LIB_CUDA, OPP_OP_CUDA_API, 0},
    OPP_CUDA_RT_TABLE(OPP_FN_RT)
    OPP_CUDA_DRV_TABLE(OPP_FN_DRV)
#undef OPP_FN_RT
#undef OPP_FN_DRV
};

void *_Atomic opp_real_fn[OPP_FN_COUNT];

/* ---- finding the real functions ---- */

static uintptr_t self_lo, self_hi; /* our own mapping, never a "real" target */

struct range {
    uintptr_t at, lo, hi;
    const char *name;
};

static int object_range(struct dl_phdr_info *info, size_t size, void *data)
{
    struct range *r = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (r->at >= lo && r->at < hi) {
            r->lo = info->dlpi_addr;
            r->name = info->dlpi_name;
            for (int k = 0; k < info->dlpi_phnum; k++)
                if (info->dlpi_phdr[k].p_type == PT_LOAD) {
                    uintptr_t e = info->dlpi_addr + info->dlpi_phdr[k].p_vaddr +
                                  info->dlpi_phdr[k].p_memsz;
                    if (e > r->hi)
                        r->hi = e;
                }
            return 1;
        }
    }
    return 0;
}

int opp_object_range(const void *p, uintptr_t *lo, uintptr_t *hi)
{
    struct range r = {(uintptr_t)p, 0, 0, NULL};
    dl_iterate_phdr(object_range, &r);
    *lo = r.lo, *hi = r.hi;
    return r.hi > r.lo ? 0 : -1;
}

/* The path of the loaded object that holds p: NULL for none and for the
 * main program (its name is empty). Found by its mapping, not by dladdr,
 * which searches the object's symbols: about 0.3 ms in libtorch_cpu. */
static const char *object_name(const void *p)
{
    struct range r = {(uintptr_t)p, 0, 0, NULL};
    dl_iterate_phdr(object_range, &r);
    return r.name && r.name[0] ? r.name : NULL;
}

static int is_self(void *p) { return (uintptr_t)p >= self_lo && (uintptr_t)p < self_hi; }

/* Known before anything is resolved, even when called before our
 * constructor ran (other libraries' constructors) or with OPPROF_DISABLE:
 * else a lookup could take one of our own wrappers for the real function. */
static pthread_once_t self_once = PTHREAD_ONCE_INIT;
static void self_init(void)
{
    opp_object_range((void *)opp_resolve_init, &self_lo, &self_hi);
}

void opp_resolve_init(void) { pthread_once(&self_once, self_init); }

int opp_is_self(const void *p)
{
    pthread_once(&self_once, self_init);
    return is_self((void *)p);
}

struct find {
    const char *name;
    void *found;
};

/* name as the loaded object at path finds it by its own handle: in the
 * object, then in its dependencies, breadth first; never one of ours. */
static void *find_by_handle(const char *path, const char *name)
{
    void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return NULL;
    void *p = dlsym(h, name);
    dlclose(h);
    return p && !is_self(p) ? p : NULL;
}

/* Libraries that Python loaded RTLD_LOCAL are invisible to RTLD_NEXT:
 * look the symbol up in each loaded object by its own handle. */
static int find_in_object(struct dl_phdr_info *info, size_t size, void *data)
{
    struct find *f = data;
    if (!info->dlpi_name || !info->dlpi_name[0] || (info->dlpi_addr >= self_lo && info->dlpi_addr < self_hi))
        return 0;
    f->found = find_by_handle(info->dlpi_name, f->name);
    return f->found != NULL;
}

/* What the caller itself binds name to when no global definition precedes
 * ours: the definition in its own object's scope. Two objects may define
 * the same entry point (Debian's libopenblas.so.0 and whichever
 * liblapack.so.3 the alternatives chose); the one loaded first is not
 * necessarily the caller's. The main program's scope is the global one. */
static void *find_for_caller(const char *name, const void *caller)
{
    const char *path = caller && !is_self((void *)caller) ? object_name(caller) : NULL;
    return path ? find_by_handle(path, name) : NULL;
}

void opp_resolve_scope(const void *p)
{
    int saved_errno = errno;
    const char *path = object_name(p);
    void *h = path && !is_self((void *)p) ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
    if (h)
        dlclose(h);
    errno = saved_errno;
}

static _Atomic unsigned long long missing_at[OPP_FN_COUNT]; /* objects loaded when last missed */

/* ---- what each caller's scope found ----
 *
 * A real function found anywhere but the global scope depends on who
 * calls: two objects loaded RTLD_LOCAL may each bind the entry point to a
 * library of their own (one extension module to OpenBLAS, another to
 * reference BLAS). Such a find never goes into the shared opp_real_fn;
 * it is kept here per entry point and calling object (its mapping, lo to
 * hi; an address in no object is an object of its own byte), found again
 * when not kept. A lookup with no caller known (the CUDA trampolines, a
 * query function) has only the shared slot: the process's one driver and
 * runtime, the first found, as a function handed out later is measured
 * against (cuda/symbols.c's wrap). Open addressing on the entry point,
 * without locks: a key is claimed by compare-and-swap, its fields written,
 * then the key published; a reader checks the key again after reading
 * them. Unloading a library starts a new generation, in which every older
 * key is free: what was found before is found again. */
#define CALLER_SLOTS 2048 /* a power of 2 */
#define CALLER_PROBES 32  /* then looked up afresh at each call */
#define CALLER_BUSY UINT64_MAX

static struct caller_found {
    _Atomic uint64_t key; /* generation << 32 | fn + 1; 0: never used */
    _Atomic uintptr_t lo, hi;
    void *_Atomic p;
} caller_found[CALLER_SLOTS];
static _Atomic uint32_t caller_gen = 1;
/* The generation in which a caller's scope last found fn past the global
 * scope: a definition that joins the global scope later (a library loaded
 * RTLD_GLOBAL) is then kept per caller too, never in the shared slot the
 * wrappers read first, as the callers bound before it stay bound. */
static _Atomic uint32_t scoped_gen[OPP_FN_COUNT];

static uint64_t caller_key(uint32_t fn, uint32_t gen)
{
    return (uint64_t)gen << 32 | (fn + 1u);
}

/* fn's i-th slot: a hash of fn, then the next ones. */
static struct caller_found *caller_probe(uint32_t fn, uint32_t i)
{
    return &caller_found[(((fn * 2654435761u) >> 21) + i) & (CALLER_SLOTS - 1)];
}

/* What fn's caller at `at` found in generation gen, or NULL. */
static void *caller_scope_cached(uint32_t fn, uintptr_t at, uint32_t gen)
{
    uint64_t want = caller_key(fn, gen);
    for (uint32_t i = 0; i < CALLER_PROBES; i++) {
        struct caller_found *e = caller_probe(fn, i);
        uint64_t k = atomic_load_explicit(&e->key, memory_order_acquire);
        if (k == 0)
            return NULL; /* past the last key ever kept there */
        if (k != want)
            continue;
        /* Acquire: a field a later claim wrote makes that claim seen below. */
        uintptr_t lo = atomic_load_explicit(&e->lo, memory_order_acquire),
                  hi = atomic_load_explicit(&e->hi, memory_order_acquire);
        void *p = atomic_load_explicit(&e->p, memory_order_acquire);
        if (atomic_load_explicit(&e->key, memory_order_relaxed) == k && at >= lo && at < hi)
            return p;
    }
    return NULL;
}

/* Keep p as what fn's caller at `at` found in generation gen (a key of a
 * generation past is stale from the start); nothing when no slot is free. */
static void caller_scope_keep(uint32_t fn, const void *at, void *p, uint32_t gen)
{
    uintptr_t lo, hi;
    if (opp_object_range(at, &lo, &hi))
        lo = (uintptr_t)at, hi = lo + 1;
    for (uint32_t i = 0; i < CALLER_PROBES; i++) {
        struct caller_found *e = caller_probe(fn, i);
        uint64_t k = atomic_load_explicit(&e->key, memory_order_relaxed);
        uint32_t now = atomic_load_explicit(&caller_gen, memory_order_relaxed);
        if (k == CALLER_BUSY || (k && k >> 32 == now) ||
            !atomic_compare_exchange_strong(&e->key, &k, CALLER_BUSY))
            continue;
        atomic_store_explicit(&e->lo, lo, memory_order_release);
        atomic_store_explicit(&e->hi, hi, memory_order_release);
        atomic_store_explicit(&e->p, p, memory_order_release);
        atomic_store_explicit(&e->key, caller_key(fn, gen), memory_order_release);
        return;
    }
}

static int adds_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    *(unsigned long long *)data = info->dlpi_adds;
    return 1;
}

/* The global scope's definition serves every caller (opp_real_fn), as
 * does what a lookup with no caller found, unless a caller's scope found
 * another before in this generation; any other, only the caller that
 * found it (caller_found). */
void *opp_resolve(uint32_t fn, const void *caller)
{
    uint32_t gen = atomic_load_explicit(&caller_gen, memory_order_acquire);
    void *p = caller ? caller_scope_cached(fn, (uintptr_t)caller, gen) : NULL;
    if (p)
        return p;
    int saved_errno = errno;
    const char *name = opp_fn_info[fn].name;
    unsigned long long adds = 0;
    pthread_once(&self_once, self_init);
    dl_iterate_phdr(adds_cb, &adds);
    if (atomic_load(&missing_at[fn]) != adds) {
        p = dlsym(RTLD_NEXT, name);
        if (p && is_self(p))
            p = NULL;
        int global = p != NULL;
        if (!p && !(p = find_for_caller(name, caller))) {
            struct find f = {name, NULL};
            dl_iterate_phdr(find_in_object, &f);
            p = f.found;
        }
        int scoped = atomic_load(&scoped_gen[fn]) == gen;
        if (!p) {
            atomic_store(&missing_at[fn], adds);
        } else if (caller && (!global || scoped)) {
            if (!global)
                atomic_store(&scoped_gen[fn], gen);
            caller_scope_keep(fn, caller, p, gen);
        } else if (!scoped) {
            atomic_store_explicit(&opp_real_fn[fn], p, memory_order_relaxed);
        }
    }
    errno = saved_errno;
    return p;
}

/* ---- libraries unloaded ---- */

static int subs_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    *(unsigned long long *)data = info->dlpi_subs;
    return 1;
}

/* Every OPP_FOUND, placed by the linker between these. */
extern void *_Atomic __start_opp_found[] __attribute__((visibility("hidden")));
extern void *_Atomic __stop_opp_found[] __attribute__((visibility("hidden")));

/* Everything found in a library: the libraries' real functions (the CUDA
 * entry points, handed out as trampolines, stay), what each caller's scope
 * found, and every OPP_FOUND. */
static void forget_found(void)
{
    atomic_fetch_add(&caller_gen, 1);
    for (uint32_t fn = 0; fn < OPP_FN_CUDA_RT_BASE; fn++)
        atomic_store_explicit(&opp_real_fn[fn], NULL, memory_order_relaxed);
    for (void *_Atomic *p = __start_opp_found; p < __stop_opp_found; p++)
        atomic_store_explicit(p, NULL, memory_order_relaxed);
}

/* A library unloaded (a plugin host's dlclose, OpenBLAS or oneDNN going
 * with its plugin) leaves what was found in it pointing at what may be
 * something else by the next call: all is forgotten, found again when
 * next needed. */
OPP_EXPORT int dlclose(void *handle)
{
    typedef int (*dlclose_fn)(void *);
    static _Atomic dlclose_fn real_dlclose;
    static _Atomic unsigned long long subs_seen;
    dlclose_fn real = atomic_load_explicit(&real_dlclose, memory_order_relaxed);
    if (!real) {
        real = (dlclose_fn)dlsym(RTLD_NEXT, "dlclose");
        atomic_store_explicit(&real_dlclose, real, memory_order_relaxed);
    }
    if (!real)
        return -1;
    int rc = real(handle);
    int saved_errno = errno;
    unsigned long long subs = 0;
    dl_iterate_phdr(subs_cb, &subs);
    if (atomic_exchange(&subs_seen, subs) != subs)
        forget_found();
    errno = saved_errno;
    return rc;
}

/* ---- calls whose real function no loaded library defines ---- */

static const struct {
    const char *lib, *name;
    long value;
} missing_ret[] = {
#define MISSING_LIB(X, lib, table, extcorr, sonames, value, name) {#lib, name, value},
    OPP_LIBS(MISSING_LIB, _)
#undef MISSING_LIB
#define MISSING_CUDA(lib, value, name) {#lib, name, value},
    OPP_CUDA_MISSING(MISSING_CUDA)
#undef MISSING_CUDA
};

static _Atomic unsigned char missing_said[OPP_FN_COUNT];

long opp_missing(uint32_t fn, int returns)
{
    int saved_errno = errno;
    const char *lib = opp_fn_info[fn].lib, *name = NULL;
    long value = 0;
    for (size_t i = 0; returns && i < sizeof missing_ret / sizeof *missing_ret; i++)
        if (!strcmp(missing_ret[i].lib, lib)) {
            value = missing_ret[i].value;
            name = missing_ret[i].name;
            break;
        }
    if (!atomic_exchange(&missing_said[fn], 1)) {
        char line[256], ret[96];
        if (!returns)
            snprintf(ret, sizeof ret, "the call did nothing");
        else if (name)
            snprintf(ret, sizeof ret, "returning %s (%ld)", name, value);
        else
            snprintf(ret, sizeof ret, "returning 0");
        snprintf(line, sizeof line, "%s: cannot find the real %s; %s", lib, opp_fn_info[fn].name,
                 ret);
        opp_agent_say(line, NULL, NULL);
    }
    errno = saved_errno;
    return value;
}
