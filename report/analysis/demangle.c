/* Demangling through libstdc++'s __cxa_demangle (see demangle.h). */
#include "analysis/demangle.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

/* Found once; the library stays loaded for the life of the process. */
static cxa_demangle_fn demangler(void)
{
    static int looked;
    static cxa_demangle_fn fn;
    if (looked)
        return fn;
    looked = 1;
    void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    if (h)
        *(void **)&fn = dlsym(h, "__cxa_demangle");
    return fn;
}

char *opp_demangle(const char *name)
{
    if (name[0] != '_' || name[1] != 'Z') /* C names, "Memcpy ...", already plain */
        return NULL;
    cxa_demangle_fn fn = demangler();
    if (!fn)
        return NULL;
    int status = 0;
    char *out = fn(name, NULL, NULL, &status);
    if (status != 0) {
        free(out);
        return NULL;
    }
    return out;
}
