/* cuFFT wrappers, generated from tables/cufft.h. Plan calls record the
 * transform's sizes and keep them per plan handle; exec calls record the
 * sizes of their plan. */
#include "core/internal.h" /* funcs.h: OPP_HAVE_CUFFT when the header is installed */
#ifdef OPP_HAVE_CUFFT
#include <pthread.h>

#include "libs/gpulibs.h"

#include <cufft.h>

#define FF_RANK 3 /* cuFFT transforms have 1 to 3 dims */

/* A transform: element type of its input and [batch, n0, ...]. */
struct ff_shape {
    uint64_t dtype, rank, dim[FF_RANK + 1];
};

/* Plans: handle -> shape. Written under a lock (plan calls are rare),
 * read without one: an exec racing a re-plan of its own handle may mix
 * two shapes, nothing worse. */
#define FF_PLANS 256
static struct {
    _Atomic uint64_t key; /* handle + 1 << 32; 0: free */
    _Atomic uint64_t dtype, rank, dim[FF_RANK + 1];
} ff_plans[FF_PLANS];
static pthread_mutex_t ff_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t ff_key(cufftHandle h) { return (uint64_t)(uint32_t)h | 1ull << 32; }

static void ff_keep(cufftHandle h, const struct ff_shape *s)
{
    uint64_t k = ff_key(h);
    pthread_mutex_lock(&ff_lock);
    int at = -1;
    for (int i = 0; i < FF_PLANS; i++) {
        uint64_t cur = atomic_load(&ff_plans[i].key);
        if (cur == k || (!cur && at < 0))
            at = i;
        if (cur == k)
            break;
    }
    if (at >= 0) {
        atomic_store(&ff_plans[at].dtype, s->dtype);
        atomic_store(&ff_plans[at].rank, s->rank);
        for (int j = 0; j <= FF_RANK; j++)
            atomic_store(&ff_plans[at].dim[j], s->dim[j]);
        atomic_store(&ff_plans[at].key, k);
    }
    pthread_mutex_unlock(&ff_lock);
}

static void ff_find(cufftHandle h, struct ff_shape *s)
{
    uint64_t k = ff_key(h);
    *s = (struct ff_shape){0};
    for (int i = 0; i < FF_PLANS; i++) {
        uint64_t cur = atomic_load_explicit(&ff_plans[i].key, memory_order_acquire);
        if (!cur)
            return;
        if (cur == k) {
            s->dtype = atomic_load_explicit(&ff_plans[i].dtype, memory_order_relaxed);
            s->rank = atomic_load_explicit(&ff_plans[i].rank, memory_order_relaxed);
            for (int j = 0; j <= FF_RANK; j++)
                s->dim[j] = atomic_load_explicit(&ff_plans[i].dim[j], memory_order_relaxed);
            return;
        }
    }
}

/* The input element type of a transform type. */
static uint64_t ff_dtype(cufftType t)
{
    switch (t) {
    case CUFFT_R2C: return OPP_DT_F32;
    case CUFFT_C2R: case CUFFT_C2C: return OPP_DT_C64;
    case CUFFT_D2Z: return OPP_DT_F64;
    case CUFFT_Z2D: case CUFFT_Z2Z: return OPP_DT_C128;
    default: return OPP_DT_NONE;
    }
}

/* The shape a plan call was given; kept for handle h when known. n holds
 * rank sizes (rank 1 to 3; else no tensor is recorded). */
static void ff_plan(struct ff_shape *s, int known, cufftHandle h, long long batch, int rank,
                    const long long *n, cufftType t)
{
    *s = (struct ff_shape){.dtype = ff_dtype(t)};
    if (rank < 1 || rank > FF_RANK || !n)
        return;
    s->rank = (uint64_t)rank + 1;
    s->dim[0] = opp_dim(batch);
    for (int i = 0; i < rank; i++)
        s->dim[i + 1] = opp_dim(n[i]);
    if (known)
        ff_keep(h, s);
}

static void ff_plan_int(struct ff_shape *s, int known, cufftHandle h, int batch, int rank,
                        const int *n, cufftType t)
{
    long long ll[FF_RANK] = {0};
    for (int i = 0; n && i < rank && i < FF_RANK; i++)
        ll[i] = n[i];
    ff_plan(s, known, h, batch, rank, n ? ll : NULL, t);
}

OPP_DEFINE_WRAPPERS(OPP_CUFFT_FUNCS)

#endif /* OPP_HAVE_CUFFT */
