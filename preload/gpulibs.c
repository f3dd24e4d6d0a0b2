/* What the GPU library tables share (gpulibs.h). */
#ifdef OPP_HAVE_CUDA
#include <dlfcn.h>
#include <errno.h>

#include "gpulibs.h"

void *opp_lib_sym(const char *soname, const char *name)
{
    int saved = errno;
    void *p = NULL, *h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
    if (h) {
        p = dlsym(h, name);
        dlclose(h);
    }
    errno = saved;
    return p;
}
#endif
