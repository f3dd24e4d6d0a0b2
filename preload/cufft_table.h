/* cuFFT entry points: X(name, lib, kind, flags, dtype, signature class,
 * class arguments) as every table (funcs.h). Each returns a cufftResult,
 * recorded first. Plans and execs record one TENSORS FFT tensor [batch,
 * n0, n1, ...]; an exec takes it from what the plan calls were told for
 * its handle (preload/cufft.c). */
#define OPP_CUFFT_FUNCS(X)                                                      \
    X(cufftPlan1d, cufft, TENSORS, S, NONE, FF_PLAN1D)                          \
    X(cufftPlan2d, cufft, TENSORS, S, NONE, FF_PLAN2D)                          \
    X(cufftPlan3d, cufft, TENSORS, S, NONE, FF_PLAN3D)                          \
    X(cufftPlanMany, cufft, TENSORS, S, NONE, FF_PLANMANY)                      \
    X(cufftMakePlan1d, cufft, TENSORS, S, NONE, FF_MAKE1D)                      \
    X(cufftMakePlan2d, cufft, TENSORS, S, NONE, FF_MAKE2D)                      \
    X(cufftMakePlan3d, cufft, TENSORS, S, NONE, FF_MAKE3D)                      \
    X(cufftMakePlanMany, cufft, TENSORS, S, NONE, FF_MAKEMANY)                  \
    X(cufftMakePlanMany64, cufft, TENSORS, S, NONE, FF_MAKEMANY64)              \
    X(cufftExecC2C, cufft, TENSORS, S, C64, FF_EXEC_DIR, cufftComplex, cufftComplex)           \
    X(cufftExecR2C, cufft, TENSORS, S, F32, FF_EXEC, cufftReal, cufftComplex)\
    X(cufftExecC2R, cufft, TENSORS, S, C64, FF_EXEC, cufftComplex, cufftReal)\
    X(cufftExecZ2Z, cufft, TENSORS, S, C128, FF_EXEC_DIR, cufftDoubleComplex, cufftDoubleComplex) \
    X(cufftExecD2Z, cufft, TENSORS, S, F64, FF_EXEC, cufftDoubleReal, cufftDoubleComplex)\
    X(cufftExecZ2D, cufft, TENSORS, S, C128, FF_EXEC, cufftDoubleComplex, cufftDoubleReal)\
    X(cufftCreate, cufft, PLAIN, S, NONE, FF_CALL, (cufftHandle * h), (h))      \
    X(cufftDestroy, cufft, PLAIN, S, NONE, FF_CALL, (cufftHandle h), (h))       \
    X(cufftSetStream, cufft, PLAIN, S, NONE, FF_CALL, (cufftHandle h, cudaStream_t s), (h, s))
