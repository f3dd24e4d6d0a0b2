/* CPU BLAS entry points: one line each. X(name, op kind, dtype, signature
 * class, element type). The classes (preload/blas.c) hold the prototype and
 * which arguments are recorded; numpy calls the cblas_ ones, PyTorch the
 * Fortran ones. */
#define OPP_BLAS_FUNCS(X)                                    \
    X(cblas_sgemm, GEMM, F32, CBLAS_GEMM, float)             \
    X(cblas_dgemm, GEMM, F64, CBLAS_GEMM, double)            \
    X(cblas_cgemm, GEMM, C64, CBLAS_GEMM_Z, void)            \
    X(cblas_zgemm, GEMM, C128, CBLAS_GEMM_Z, void)           \
    X(cblas_sgemv, GEMV, F32, CBLAS_GEMV, float)             \
    X(cblas_dgemv, GEMV, F64, CBLAS_GEMV, double)            \
    X(cblas_cgemv, GEMV, C64, CBLAS_GEMV_Z, void)            \
    X(cblas_zgemv, GEMV, C128, CBLAS_GEMV_Z, void)           \
    X(cblas_sdot, DOT, F32, CBLAS_DOT, float)                \
    X(cblas_ddot, DOT, F64, CBLAS_DOT, double)               \
    X(cblas_cdotu_sub, DOT, C64, CBLAS_DOT_Z, void)          \
    X(cblas_cdotc_sub, DOT, C64, CBLAS_DOT_Z, void)          \
    X(cblas_zdotu_sub, DOT, C128, CBLAS_DOT_Z, void)         \
    X(cblas_zdotc_sub, DOT, C128, CBLAS_DOT_Z, void)         \
    X(cblas_saxpy, AXPY, F32, CBLAS_AXPY, float)             \
    X(cblas_daxpy, AXPY, F64, CBLAS_AXPY, double)            \
    X(cblas_caxpy, AXPY, C64, CBLAS_AXPY_Z, void)            \
    X(cblas_zaxpy, AXPY, C128, CBLAS_AXPY_Z, void)           \
    X(cblas_sscal, SCAL, F32, CBLAS_SCAL, float)             \
    X(cblas_dscal, SCAL, F64, CBLAS_SCAL, double)            \
    X(cblas_cscal, SCAL, C64, CBLAS_SCAL_Z, void)            \
    X(cblas_zscal, SCAL, C128, CBLAS_SCAL_Z, void)           \
    X(sgemm_, GEMM, F32, F77_GEMM, float)                    \
    X(dgemm_, GEMM, F64, F77_GEMM, double)                   \
    X(cgemm_, GEMM, C64, F77_GEMM, void)                     \
    X(zgemm_, GEMM, C128, F77_GEMM, void)                    \
    X(sgemv_, GEMV, F32, F77_GEMV, float)                    \
    X(dgemv_, GEMV, F64, F77_GEMV, double)
