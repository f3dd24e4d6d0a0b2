/* cuFFT entry points: X(L, name, kind, flags, dtype, signature class,
 * class arguments) as every table (funcs.h). Each returns a cufftResult,
 * recorded first. Plans and execs record one TENSORS FFT tensor [batch,
 * n0, n1, ...]; an exec takes it from what the plan calls were told for
 * its handle (libs/cufft.c). */
#define OPP_CUFFT_FUNCS(X, L)                                                                      \
    X(L, cufftPlan1d, TENSORS, S, NONE, FF_PLAN1D)                                                 \
    X(L, cufftPlan2d, TENSORS, S, NONE, FF_PLAN2D)                                                 \
    X(L, cufftPlan3d, TENSORS, S, NONE, FF_PLAN3D)                                                 \
    X(L, cufftPlanMany, TENSORS, S, NONE, FF_PLANMANY)                                             \
    X(L, cufftMakePlan1d, TENSORS, S, NONE, FF_MAKE1D)                                             \
    X(L, cufftMakePlan2d, TENSORS, S, NONE, FF_MAKE2D)                                             \
    X(L, cufftMakePlan3d, TENSORS, S, NONE, FF_MAKE3D)                                             \
    X(L, cufftMakePlanMany, TENSORS, S, NONE, FF_MAKEMANY)                                         \
    X(L, cufftMakePlanMany64, TENSORS, S, NONE, FF_MAKEMANY64)                                     \
    X(L, cufftExecC2C, TENSORS, S, C64, FF_EXEC_DIR, cufftComplex, cufftComplex)                   \
    X(L, cufftExecR2C, TENSORS, S, F32, FF_EXEC, cufftReal, cufftComplex)                          \
    X(L, cufftExecC2R, TENSORS, S, C64, FF_EXEC, cufftComplex, cufftReal)                          \
    X(L, cufftExecZ2Z, TENSORS, S, C128, FF_EXEC_DIR, cufftDoubleComplex, cufftDoubleComplex)      \
    X(L, cufftExecD2Z, TENSORS, S, F64, FF_EXEC, cufftDoubleReal, cufftDoubleComplex)              \
    X(L, cufftExecZ2D, TENSORS, S, C128, FF_EXEC, cufftDoubleComplex, cufftDoubleReal)             \
    X(L, cufftCreate, PLAIN, S, NONE, FF_CALL, (cufftHandle * h), (h))                             \
    X(L, cufftDestroy, PLAIN, S, NONE, FF_CALL, (cufftHandle h), (h))                              \
    X(L, cufftSetStream, PLAIN, S, NONE, FF_CALL, (cufftHandle h, cudaStream_t s), (h, s))

/* ---- signature classes: the prototype once, what is recorded ---- */

/* TENSORS: sub FFT, dtype, 1 tensor (0 when the plan is unknown). */
#define FF_ARGS(s)                                                                                 \
    ((uint64_t)r_, OPP_SUB_FFT, s.dtype, s.rank ? 1 : 0, s.rank, s.dim[0], s.dim[1], s.dim[2],     \
     s.dim[3])
/* cufftPlan*: the handle exists only when the call succeeded. MakePlan*:
 * the caller's handle, kept whatever the status (an exec on a plan whose
 * making failed shows the sizes it was meant to have). */
#define FF_PLAN1D(name)                                                                            \
    OPP_WRAP_RET_PREP(cufftResult, name, (cufftHandle * p, int nx, cufftType t, int batch),        \
                      (p, nx, t, batch),                                                           \
                      (struct ff_shape s; ff_plan_int(&s, r_ == CUFFT_SUCCESS && p, p ? *p : 0,    \
                                                      batch, 1, &nx, t)),                          \
                      FF_ARGS(s))
#define FF_PLAN2D(name)                                                                            \
    OPP_WRAP_RET_PREP(cufftResult, name, (cufftHandle * p, int nx, int ny, cufftType t),           \
                      (p, nx, ny, t),                                                              \
                      (struct ff_shape s; int n_[2] = {nx, ny};                                    \
                       ff_plan_int(&s, r_ == CUFFT_SUCCESS && p, p ? *p : 0, 1, 2, n_, t)),        \
                      FF_ARGS(s))
#define FF_PLAN3D(name)                                                                            \
    OPP_WRAP_RET_PREP(cufftResult, name, (cufftHandle * p, int nx, int ny, int nz, cufftType t),   \
                      (p, nx, ny, nz, t),                                                          \
                      (struct ff_shape s; int n_[3] = {nx, ny, nz};                                \
                       ff_plan_int(&s, r_ == CUFFT_SUCCESS && p, p ? *p : 0, 1, 3, n_, t)),        \
                      FF_ARGS(s))
#define FF_PLANMANY(name)                                                                          \
    OPP_WRAP_RET_PREP(cufftResult, name,                                                           \
                      (cufftHandle * p, int rank, int *n, int *ie, int is, int id, int *oe,        \
                       int os, int od, cufftType t, int batch),                                    \
                      (p, rank, n, ie, is, id, oe, os, od, t, batch),                              \
                      (struct ff_shape s; ff_plan_int(&s, r_ == CUFFT_SUCCESS && p, p ? *p : 0,    \
                                                      batch, rank, n, t)),                         \
                      FF_ARGS(s))
#define FF_MAKE1D(name)                                                                            \
    OPP_WRAP_RET_PREP(cufftResult, name,                                                           \
                      (cufftHandle p, int nx, cufftType t, int batch, size_t *ws),                 \
                      (p, nx, t, batch, ws),                                                       \
                      (struct ff_shape s; ff_plan_int(&s, 1, p, batch, 1, &nx, t)), FF_ARGS(s))
#define FF_MAKE2D(name)                                                                            \
    OPP_WRAP_RET_PREP(cufftResult, name,                                                           \
                      (cufftHandle p, int nx, int ny, cufftType t, size_t *ws),                    \
                      (p, nx, ny, t, ws),                                                          \
                      (struct ff_shape s; int n_[2] = {nx, ny};                                    \
                       ff_plan_int(&s, 1, p, 1, 2, n_, t)),                                        \
                      FF_ARGS(s))
#define FF_MAKE3D(name)                                                                            \
    OPP_WRAP_RET_PREP(cufftResult, name,                                                           \
                      (cufftHandle p, int nx, int ny, int nz, cufftType t, size_t *ws),            \
                      (p, nx, ny, nz, t, ws),                                                      \
                      (struct ff_shape s; int n_[3] = {nx, ny, nz};                                \
                       ff_plan_int(&s, 1, p, 1, 3, n_, t)),                                        \
                      FF_ARGS(s))
#define FF_MAKEMANY(name)                                                                          \
    OPP_WRAP_RET_PREP(cufftResult, name,                                                           \
                      (cufftHandle p, int rank, int *n, int *ie, int is, int id, int *oe, int os,  \
                       int od, cufftType t, int batch, size_t *ws),                                \
                      (p, rank, n, ie, is, id, oe, os, od, t, batch, ws),                          \
                      (struct ff_shape s; ff_plan_int(&s, 1, p, batch, rank, n, t)), FF_ARGS(s))
#define FF_MAKEMANY64(name)                                                                        \
    OPP_WRAP_RET_PREP(cufftResult, name,                                                           \
                      (cufftHandle p, int rank, long long *n, long long *ie, long long is,         \
                       long long id, long long *oe, long long os, long long od, cufftType t,       \
                       long long batch, size_t *ws),                                               \
                      (p, rank, n, ie, is, id, oe, os, od, t, batch, ws),                          \
                      (struct ff_shape s; ff_plan(&s, 1, p, batch, rank, n, t)), FF_ARGS(s))
#define FF_EXEC(name, TI, TO)                                                                      \
    OPP_WRAP_RET_PREP(cufftResult, name, (cufftHandle p, TI *in, TO *out), (p, in, out), (struct ff_shape s; ff_find(p, &s)), FF_ARGS(s))
#define FF_EXEC_DIR(name, TI, TO)                                                                  \
    OPP_WRAP_RET_PREP(cufftResult, name, (cufftHandle p, TI *in, TO *out, int dir),                \
                      (p, in, out, dir), (struct ff_shape s; ff_find(p, &s)),                      \
                      FF_ARGS(s))
#define FF_CALL(name, params, args) OPP_WRAP_RET(cufftResult, name, params, args, ((uint64_t)r_))
