/* cuFFT wrappers, generated from cufft_table.h. Plan calls record the
 * transform's sizes and keep them per plan handle; exec calls record the
 * sizes of their plan. */
#include "agent.h" /* funcs.h: OPP_HAVE_CUFFT when the header is installed */
#ifdef OPP_HAVE_CUFFT
#include <pthread.h>

#include "gpulibs.h"

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

/* TENSORS: sub FFT, dtype, 1 tensor (0 when the plan is unknown). */
#define FF_ARGS(s)                                                                                 \
    ((uint64_t)r_, OPP_SUB_FFT, s.dtype, s.rank ? 1 : 0, s.rank, s.dim[0], s.dim[1], s.dim[2],    \
     s.dim[3])
#define FF_NARGS 9

/* cufftPlan*: the handle exists only when the call succeeded. MakePlan*:
 * the caller's handle, kept whatever the status (an exec on a plan whose
 * making failed shows the sizes it was meant to have). */
#define FF_PLAN1D(name)                                                                            \
    OPP_WRAP_RET_PREP(cufftResult, name, (cufftHandle * p, int nx, cufftType t, int batch),        \
                      (p, nx, t, batch), FF_NARGS,                                                 \
                      (struct ff_shape s; ff_plan_int(&s, r_ == CUFFT_SUCCESS && p, p ? *p : 0,    \
                                                      batch, 1, &nx, t)),                          \
                      FF_ARGS(s))
#define FF_PLAN2D(name)                                                                            \
    OPP_WRAP_RET_PREP(cufftResult, name, (cufftHandle * p, int nx, int ny, cufftType t),           \
                      (p, nx, ny, t), FF_NARGS,                                                    \
                      (struct ff_shape s; int n_[2] = {nx, ny};                                    \
                       ff_plan_int(&s, r_ == CUFFT_SUCCESS && p, p ? *p : 0, 1, 2, n_, t)),        \
                      FF_ARGS(s))
#define FF_PLAN3D(name)                                                                            \
    OPP_WRAP_RET_PREP(cufftResult, name, (cufftHandle * p, int nx, int ny, int nz, cufftType t),   \
                      (p, nx, ny, nz, t), FF_NARGS,                                                \
                      (struct ff_shape s; int n_[3] = {nx, ny, nz};                                \
                       ff_plan_int(&s, r_ == CUFFT_SUCCESS && p, p ? *p : 0, 1, 3, n_, t)),        \
                      FF_ARGS(s))
#define FF_PLANMANY(name)                                                                          \
    OPP_WRAP_RET_PREP(cufftResult, name,                                                           \
                      (cufftHandle * p, int rank, int *n, int *ie, int is, int id, int *oe,        \
                       int os, int od, cufftType t, int batch),                                    \
                      (p, rank, n, ie, is, id, oe, os, od, t, batch), FF_NARGS,                    \
                      (struct ff_shape s; ff_plan_int(&s, r_ == CUFFT_SUCCESS && p, p ? *p : 0,    \
                                                      batch, rank, n, t)),                         \
                      FF_ARGS(s))
#define FF_MAKE1D(name)                                                                            \
    OPP_WRAP_RET_PREP(cufftResult, name,                                                           \
                      (cufftHandle p, int nx, cufftType t, int batch, size_t *ws),                 \
                      (p, nx, t, batch, ws), FF_NARGS,                                             \
                      (struct ff_shape s; ff_plan_int(&s, 1, p, batch, 1, &nx, t)), FF_ARGS(s))
#define FF_MAKE2D(name)                                                                            \
    OPP_WRAP_RET_PREP(cufftResult, name,                                                           \
                      (cufftHandle p, int nx, int ny, cufftType t, size_t *ws),                    \
                      (p, nx, ny, t, ws), FF_NARGS,                                                \
                      (struct ff_shape s; int n_[2] = {nx, ny};                                    \
                       ff_plan_int(&s, 1, p, 1, 2, n_, t)),                                        \
                      FF_ARGS(s))
#define FF_MAKE3D(name)                                                                            \
    OPP_WRAP_RET_PREP(cufftResult, name,                                                           \
                      (cufftHandle p, int nx, int ny, int nz, cufftType t, size_t *ws),            \
                      (p, nx, ny, nz, t, ws), FF_NARGS,                                            \
                      (struct ff_shape s; int n_[3] = {nx, ny, nz};                                \
                       ff_plan_int(&s, 1, p, 1, 3, n_, t)),                                        \
                      FF_ARGS(s))
#define FF_MAKEMANY(name)                                                                          \
    OPP_WRAP_RET_PREP(cufftResult, name,                                                           \
                      (cufftHandle p, int rank, int *n, int *ie, int is, int id, int *oe, int os,  \
                       int od, cufftType t, int batch, size_t *ws),                                \
                      (p, rank, n, ie, is, id, oe, os, od, t, batch, ws), FF_NARGS,                \
                      (struct ff_shape s; ff_plan_int(&s, 1, p, batch, rank, n, t)), FF_ARGS(s))
#define FF_MAKEMANY64(name)                                                                        \
    OPP_WRAP_RET_PREP(cufftResult, name,                                                           \
                      (cufftHandle p, int rank, long long *n, long long *ie, long long is,         \
                       long long id, long long *oe, long long os, long long od, cufftType t,       \
                       long long batch, size_t *ws),                                               \
                      (p, rank, n, ie, is, id, oe, os, od, t, batch, ws), FF_NARGS,                \
                      (struct ff_shape s; ff_plan(&s, 1, p, batch, rank, n, t)), FF_ARGS(s))

#define FF_EXEC(name, TI, TO)                                                                      \
    OPP_WRAP_RET_PREP(cufftResult, name, (cufftHandle p, TI *in, TO *out), (p, in, out),           \
                      FF_NARGS, (struct ff_shape s; ff_find(p, &s)), FF_ARGS(s))
#define FF_EXEC_DIR(name, TI, TO)                                                                  \
    OPP_WRAP_RET_PREP(cufftResult, name, (cufftHandle p, TI *in, TO *out, int dir),                \
                      (p, in, out, dir), FF_NARGS, (struct ff_shape s; ff_find(p, &s)),            \
                      FF_ARGS(s))
#define FF_CALL(name, params, args) OPP_WRAP_RET(cufftResult, name, params, args, 1, ((uint64_t)r_))

#define OPP_CUFFT_DEFINE(name, lib, kind, flags, dtype, cls, ...) cls(name, ##__VA_ARGS__)
OPP_CUFFT_FUNCS(OPP_CUFFT_DEFINE)

#endif /* OPP_HAVE_CUFFT */
