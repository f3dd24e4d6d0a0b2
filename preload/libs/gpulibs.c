/* What the GPU library tables share (gpulibs.h). */
#ifdef OPP_HAVE_CUDA
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "libs/gpulibs.h"

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

static unsigned pmap_hash(uintptr_t k, unsigned cap)
{
    return (unsigned)((k * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

/* Index of key, or (create) of a free slot for it; -1 when none. */
static int pmap_find(struct opp_pmap *m, uintptr_t k, int create)
{
    int tomb = -1;
    for (unsigned i = 0, at = pmap_hash(k, m->cap); i < m->cap; i++, at = (at + 1) & (m->cap - 1)) {
        uintptr_t cur = m->keys[at];
        if (cur == k)
            return (int)at;
        if (cur == 1 && tomb < 0)
            tomb = (int)at;
        if (cur == 0) {
            if (!create)
                return -1;
            return tomb >= 0 ? tomb : (int)at;
        }
    }
    return create ? tomb : -1;
}

void *opp_pmap_lock(struct opp_pmap *m, const void *key, int create)
{
    uintptr_t k = (uintptr_t)key;
    if (k <= 1)
        return NULL;
    pthread_mutex_lock(&m->lock);
    int i = pmap_find(m, k, create);
    if (i < 0) {
        pthread_mutex_unlock(&m->lock);
        return NULL;
    }
    unsigned char *v = m->vals + (size_t)i * m->vsize;
    if (m->keys[i] != k) {
        m->keys[i] = k;
        memset(v, 0, m->vsize);
    }
    return v;
}

void opp_pmap_unlock(struct opp_pmap *m) { pthread_mutex_unlock(&m->lock); }

int opp_pmap_get(struct opp_pmap *m, const void *key, void *out)
{
    void *v = opp_pmap_lock(m, key, 0);
    if (!v) {
        memset(out, 0, m->vsize);
        return -1;
    }
    memcpy(out, v, m->vsize);
    opp_pmap_unlock(m);
    return 0;
}

void opp_pmap_del(struct opp_pmap *m, const void *key)
{
    uintptr_t k = (uintptr_t)key;
    if (k <= 1)
        return;
    pthread_mutex_lock(&m->lock);
    int i = pmap_find(m, k, 0);
    if (i >= 0)
        m->keys[i] = 1;
    pthread_mutex_unlock(&m->lock);
}
#endif
