/* libnextwrap.so, for tests/cuda/dlsym_probe.c: wraps libc's rand() the
 * usual way, finding the real one with dlsym(RTLD_NEXT) from this library.
 * That lookup must resolve relative to this library, not to whoever
 * interposes dlsym: relative to the preload (which comes before us) it
 * would find this very wrapper, and rand() would recurse until the stack
 * runs out. */
#include <dlfcn.h>
#include <stddef.h>

#define EXPORT __attribute__((visibility("default")))

static int (*real_rand)(void);
static int wrapped_calls;

EXPORT int rand(void)
{
    if (!real_rand)
        real_rand = (int (*)(void))dlsym(RTLD_NEXT, "rand");
    wrapped_calls++;
    return real_rand ? real_rand() : -1;
}

EXPORT int nextwrap_calls(void) { return wrapped_calls; }

/* 1 when RTLD_NEXT from here finds libc's rand, as it must. */
EXPORT int nextwrap_next_is_libc(void)
{
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    void *want = libc ? dlsym(libc, "rand") : NULL;
    return want && dlsym(RTLD_NEXT, "rand") == want;
}
