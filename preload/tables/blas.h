/* CPU BLAS: one row per entry point, X(L, name, kind, flags, dtype,
 * signature class, element type) as every table (funcs.h), then the
 * classes: the prototype and which arguments are recorded. numpy calls the
 * cblas_ ones, PyTorch the Fortran ones. Wrappers: libs/blas.c. */
#define OPP_BLAS_FUNCS(X, L)                                                                       \
    X(L, cblas_sgemm, GEMM, 0, F32, CBLAS_GEMM, float)                                             \
    X(L, cblas_dgemm, GEMM, 0, F64, CBLAS_GEMM, double)                                            \
    X(L, cblas_cgemm, GEMM, 0, C64, CBLAS_GEMM_Z, void)                                            \
    X(L, cblas_zgemm, GEMM, 0, C128, CBLAS_GEMM_Z, void)                                           \
    X(L, cblas_sgemv, GEMV, 0, F32, CBLAS_GEMV, float)                                             \
    X(L, cblas_dgemv, GEMV, 0, F64, CBLAS_GEMV, double)                                            \
    X(L, cblas_cgemv, GEMV, 0, C64, CBLAS_GEMV_Z, void)                                            \
    X(L, cblas_zgemv, GEMV, 0, C128, CBLAS_GEMV_Z, void)                                           \
    X(L, cblas_sdot, DOT, 0, F32, CBLAS_DOT, float)                                                \
    X(L, cblas_ddot, DOT, 0, F64, CBLAS_DOT, double)                                               \
    X(L, cblas_cdotu_sub, DOT, 0, C64, CBLAS_DOT_Z, void)                                          \
    X(L, cblas_cdotc_sub, DOT, 0, C64, CBLAS_DOT_Z, void)                                          \
    X(L, cblas_zdotu_sub, DOT, 0, C128, CBLAS_DOT_Z, void)                                         \
    X(L, cblas_zdotc_sub, DOT, 0, C128, CBLAS_DOT_Z, void)                                         \
    X(L, cblas_saxpy, AXPY, 0, F32, CBLAS_AXPY, float)                                             \
    X(L, cblas_daxpy, AXPY, 0, F64, CBLAS_AXPY, double)                                            \
    X(L, cblas_caxpy, AXPY, 0, C64, CBLAS_AXPY_Z, void)                                            \
    X(L, cblas_zaxpy, AXPY, 0, C128, CBLAS_AXPY_Z, void)                                           \
    X(L, cblas_sscal, SCAL, 0, F32, CBLAS_SCAL, float)                                             \
    X(L, cblas_dscal, SCAL, 0, F64, CBLAS_SCAL, double)                                            \
    X(L, cblas_cscal, SCAL, 0, C64, CBLAS_SCAL_Z, void)                                            \
    X(L, cblas_zscal, SCAL, 0, C128, CBLAS_SCAL_Z, void)                                           \
    X(L, sgemm_, GEMM, 0, F32, F77_GEMM, float)                                                    \
    X(L, dgemm_, GEMM, 0, F64, F77_GEMM, double)                                                   \
    X(L, cgemm_, GEMM, 0, C64, F77_GEMM, void)                                                     \
    X(L, zgemm_, GEMM, 0, C128, F77_GEMM, void)                                                    \
    X(L, sgemv_, GEMV, 0, F32, F77_GEMV, float)                                                    \
    X(L, dgemv_, GEMV, 0, F64, F77_GEMV, double)

/* ---- signature classes: the prototype once, what is recorded ---- */

/* C = op(A) op(B): records M, N, K and both transposes. */
#define CBLAS_GEMM(name, T)                                                                        \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int ta, int tb, int m, int n, int k, T alpha, const T *a, int lda,       \
                   const T *b, int ldb, T beta, T *c, int ldc),                                    \
                  (o, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc),                       \
                  (opp_dim(m), opp_dim(n), opp_dim(k),                                             \
                   opp_trans_code(ta) | opp_trans_code(tb) << 8))
#define CBLAS_GEMM_Z(name, T)                                                                      \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int ta, int tb, int m, int n, int k, const void *alpha, const void *a,   \
                   int lda, const void *b, int ldb, const void *beta, void *c, int ldc),           \
                  (o, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc),                       \
                  (opp_dim(m), opp_dim(n), opp_dim(k),                                             \
                   opp_trans_code(ta) | opp_trans_code(tb) << 8))
#define CBLAS_GEMV(name, T)                                                                        \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int ta, int m, int n, T alpha, const T *a, int lda, const T *x,          \
                   int incx, T beta, T *y, int incy),                                              \
                  (o, ta, m, n, alpha, a, lda, x, incx, beta, y, incy),                            \
                  (opp_dim(m), opp_dim(n), opp_trans_code(ta)))
#define CBLAS_GEMV_Z(name, T)                                                                      \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int ta, int m, int n, const void *alpha, const void *a, int lda,         \
                   const void *x, int incx, const void *beta, void *y, int incy),                  \
                  (o, ta, m, n, alpha, a, lda, x, incx, beta, y, incy),                            \
                  (opp_dim(m), opp_dim(n), opp_trans_code(ta)))
#define CBLAS_DOT(name, T)                                                                         \
    OPP_WRAP_RET(T, name, (int n, const T *x, int incx, const T *y, int incy),                     \
                 (n, x, incx, y, incy), (opp_dim(n)))
#define CBLAS_DOT_Z(name, T)                                                                       \
    OPP_WRAP_VOID(name, (int n, const void *x, int incx, const void *y, int incy, void *res),      \
                  (n, x, incx, y, incy, res), (opp_dim(n)))
#define CBLAS_AXPY(name, T)                                                                        \
    OPP_WRAP_VOID(name, (int n, T alpha, const T *x, int incx, T *y, int incy),                    \
                  (n, alpha, x, incx, y, incy), (opp_dim(n)))
#define CBLAS_AXPY_Z(name, T)                                                                      \
    OPP_WRAP_VOID(name, (int n, const void *alpha, const void *x, int incx, void *y, int incy),    \
                  (n, alpha, x, incx, y, incy), (opp_dim(n)))
#define CBLAS_SCAL(name, T)                                                                        \
    OPP_WRAP_VOID(name, (int n, T alpha, T *x, int incx), (n, alpha, x, incx), (opp_dim(n)))
#define CBLAS_SCAL_Z(name, T)                                                                      \
    OPP_WRAP_VOID(name, (int n, const void *alpha, void *x, int incx), (n, alpha, x, incx),        \
                  (opp_dim(n)))
/* Fortran BLAS: every argument by pointer, plus the hidden lengths of the
 * character arguments that gfortran callers pass; forwarded untouched. */
#define F77_GEMM(name, T)                                                                          \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *ta, const char *tb, const int *m, const int *n, const int *k,       \
                   const T *alpha, const T *a, const int *lda, const T *b, const int *ldb,         \
                   const T *beta, T *c, const int *ldc, size_t la, size_t lb),                     \
                  (ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, la, lb),                  \
                  (opp_pdim(m), opp_pdim(n), opp_pdim(k),                                          \
                   (ta ? opp_trans_code(*ta) : '?') | (tb ? opp_trans_code(*tb) : '?') << 8))
#define F77_GEMV(name, T)                                                                          \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *t, const int *m, const int *n, const T *alpha, const T *a,          \
                   const int *lda, const T *x, const int *incx, const T *beta, T *y,               \
                   const int *incy, size_t lt),                                                    \
                  (t, m, n, alpha, a, lda, x, incx, beta, y, incy, lt),                            \
                  (opp_pdim(m), opp_pdim(n), t ? opp_trans_code(*t) : '?'))
