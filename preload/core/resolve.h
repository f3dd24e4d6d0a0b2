/* The core's third layer: the intercepted entry points' real functions,
 * found in whatever loaded object defines them, and what a call does when
 * none does. Below: publish.h. */
#ifndef OPP_CORE_RESOLVE_H
#define OPP_CORE_RESOLVE_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/publish.h"

extern void *_Atomic opp_real_fn[OPP_FN_COUNT]; /* resolved real functions */

/* A pointer into a loaded library kept outside opp_real_fn (a query
 * function a wrapper's helper calls, what the library was when looked at):
 * forgotten with the real functions when a library is unloaded, so that it
 * is looked up again in what is loaded then. Defines an atomic pointer,
 * NULL until found: `static OPP_FOUND(name);`, at file scope or in a
 * function. The linker gathers them all (section opp_found). */
#define OPP_FOUND(name) void *_Atomic name __attribute__((section("opp_found"), used))

/* Looked up as the loader would bind it for code at caller (NULL: none
 * known): the global scope past us, the caller's own object and its
 * dependencies, then every loaded object in load order. Kept until a
 * library is unloaded: the global scope's in opp_real_fn, for every later
 * caller; any other for the calling object only (opp_resolve looks there
 * first). */
void *opp_resolve(uint32_t fn, const void *caller);
/* A call of fn, whose real function no loaded library defines, never ran:
 * what it returns instead (returns: 1 when it returns a value, 0 when
 * nothing), its library's "not initialised" status (tables/funcs.h: missing
 * in OPP_LIBS, OPP_CUDA_MISSING) or 0; said once per entry point on stderr.
 * errno kept. */
long opp_missing(uint32_t fn, int returns);
int opp_is_self(const void *p); /* p lies in libopprof.so itself */
/* The loaded object's mapping that holds p: 0, or -1 when none does. */
int opp_object_range(const void *p, uintptr_t *lo, uintptr_t *hi);
/* Make the first lookup of an entry point for the loaded object that
 * holds p cheap: the loader builds an object's own scope (it and its
 * dependencies) at its first dlopen, which takes milliseconds for one
 * loaded as another's dependency (libtorch_cpu: 3 to 6 ms), and
 * opp_resolve opens the caller's object. Called where no call is open, so
 * that time is not charged to the first operator whose library call is
 * resolved. */
void opp_resolve_scope(const void *p);
/* Learn our own mapping (before anything is resolved). */
void opp_resolve_init(void);

/* The real function behind entry point fn for code at caller (a wrapper's
 * return address), or NULL when no loaded library defines it (opp_missing
 * then says what the call does instead). */
OPP_HOT void *opp_real_from(uint32_t fn, const void *caller)
{
    void *p = atomic_load_explicit(&opp_real_fn[fn], memory_order_relaxed);
    return OPP_LIKELY(p != NULL) ? p : opp_resolve(fn, caller);
}
OPP_HOT void *opp_real(uint32_t fn)
{
    return opp_real_from(fn, NULL);
}

#endif
