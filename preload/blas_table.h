/* CPU BLAS entry points: one line each, X(name, lib, kind, flags, dtype,
 * signature class, element type) as every table (funcs.h). The classes
 * (preload/blas.c) hold the prototype and which arguments are recorded;
 * numpy calls the cblas_ ones, PyTorch the Fortran ones. */
#define OPP_BLAS_FUNCS(X)                                       \
    X(cblas_sgemm, blas, GEMM, 0, F32, CBLAS_GEMM, float)       \
    X(cblas_dgemm, blas, GEMM, 0, F64, CBLAS_GEMM, double)      \
    X(cblas_cgemm, blas, GEMM, 0, C64, CBLAS_GEMM_Z, void)      \
    X(cblas_zgemm, blas, GEMM, 0, C128, CBLAS_GEMM_Z, void)     \
    X(cblas_sgemv, blas, GEMV, 0, F32, CBLAS_GEMV, float)       \
    X(cblas_dgemv, blas, GEMV, 0, F64, CBLAS_GEMV, double)      \
    X(cblas_cgemv, blas, GEMV, 0, C64, CBLAS_GEMV_Z, void)      \
    X(cblas_zgemv, blas, GEMV, 0, C128, CBLAS_GEMV_Z, void)     \
    X(cblas_sdot, blas, DOT, 0, F32, CBLAS_DOT, float)          \
    X(cblas_ddot, blas, DOT, 0, F64, CBLAS_DOT, double)         \
    X(cblas_cdotu_sub, blas, DOT, 0, C64, CBLAS_DOT_Z, void)    \
    X(cblas_cdotc_sub, blas, DOT, 0, C64, CBLAS_DOT_Z, void)    \
    X(cblas_zdotu_sub, blas, DOT, 0, C128, CBLAS_DOT_Z, void)   \
    X(cblas_zdotc_sub, blas, DOT, 0, C128, CBLAS_DOT_Z, void)   \
    X(cblas_saxpy, blas, AXPY, 0, F32, CBLAS_AXPY, float)       \
    X(cblas_daxpy, blas, AXPY, 0, F64, CBLAS_AXPY, double)      \
    X(cblas_caxpy, blas, AXPY, 0, C64, CBLAS_AXPY_Z, void)      \
    X(cblas_zaxpy, blas, AXPY, 0, C128, CBLAS_AXPY_Z, void)     \
    X(cblas_sscal, blas, SCAL, 0, F32, CBLAS_SCAL, float)       \
    X(cblas_dscal, blas, SCAL, 0, F64, CBLAS_SCAL, double)      \
    X(cblas_cscal, blas, SCAL, 0, C64, CBLAS_SCAL_Z, void)      \
    X(cblas_zscal, blas, SCAL, 0, C128, CBLAS_SCAL_Z, void)     \
    X(sgemm_, blas, GEMM, 0, F32, F77_GEMM, float)              \
    X(dgemm_, blas, GEMM, 0, F64, F77_GEMM, double)             \
    X(cgemm_, blas, GEMM, 0, C64, F77_GEMM, void)               \
    X(zgemm_, blas, GEMM, 0, C128, F77_GEMM, void)              \
    X(sgemv_, blas, GEMV, 0, F32, F77_GEMV, float)              \
    X(dgemv_, blas, GEMV, 0, F64, F77_GEMV, double)
