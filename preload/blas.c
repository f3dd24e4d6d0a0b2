/* CPU BLAS wrappers, generated from blas_table.h: each signature class
 * below gives the prototype once and which arguments define the shape. */
#include "agent.h"

#include <stddef.h>

/* C = op(A) op(B): records M, N, K and both transposes. */
#define CBLAS_GEMM(name, T)                                                                        \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int ta, int tb, int m, int n, int k, T alpha, const T *a, int lda,       \
                   const T *b, int ldb, T beta, T *c, int ldc),                                    \
                  (o, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc), 4,                    \
                  (opp_dim(m), opp_dim(n), opp_dim(k),                                             \
                   opp_trans_code(ta) | opp_trans_code(tb) << 8))
#define CBLAS_GEMM_Z(name, T)                                                                      \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int ta, int tb, int m, int n, int k, const void *alpha, const void *a,   \
                   int lda, const void *b, int ldb, const void *beta, void *c, int ldc),           \
                  (o, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc), 4,                    \
                  (opp_dim(m), opp_dim(n), opp_dim(k),                                             \
                   opp_trans_code(ta) | opp_trans_code(tb) << 8))
#define CBLAS_GEMV(name, T)                                                                        \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int ta, int m, int n, T alpha, const T *a, int lda, const T *x,          \
                   int incx, T beta, T *y, int incy),                                              \
                  (o, ta, m, n, alpha, a, lda, x, incx, beta, y, incy), 3,                         \
                  (opp_dim(m), opp_dim(n), opp_trans_code(ta)))
#define CBLAS_GEMV_Z(name, T)                                                                      \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int ta, int m, int n, const void *alpha, const void *a, int lda,         \
                   const void *x, int incx, const void *beta, void *y, int incy),                  \
                  (o, ta, m, n, alpha, a, lda, x, incx, beta, y, incy), 3,                         \
                  (opp_dim(m), opp_dim(n), opp_trans_code(ta)))
#define CBLAS_DOT(name, T)                                                                         \
    OPP_WRAP_RET(T, name, (int n, const T *x, int incx, const T *y, int incy),                     \
                 (n, x, incx, y, incy), 1, (opp_dim(n)))
#define CBLAS_DOT_Z(name, T)                                                                       \
    OPP_WRAP_VOID(name, (int n, const void *x, int incx, const void *y, int incy, void *res),      \
                  (n, x, incx, y, incy, res), 1, (opp_dim(n)))
#define CBLAS_AXPY(name, T)                                                                        \
    OPP_WRAP_VOID(name, (int n, T alpha, const T *x, int incx, T *y, int incy),                    \
                  (n, alpha, x, incx, y, incy), 1, (opp_dim(n)))
#define CBLAS_AXPY_Z(name, T)                                                                      \
    OPP_WRAP_VOID(name, (int n, const void *alpha, const void *x, int incx, void *y, int incy),    \
                  (n, alpha, x, incx, y, incy), 1, (opp_dim(n)))
#define CBLAS_SCAL(name, T)                                                                        \
    OPP_WRAP_VOID(name, (int n, T alpha, T *x, int incx), (n, alpha, x, incx), 1, (opp_dim(n)))
#define CBLAS_SCAL_Z(name, T)                                                                      \
    OPP_WRAP_VOID(name, (int n, const void *alpha, void *x, int incx), (n, alpha, x, incx), 1,     \
                  (opp_dim(n)))

/* Fortran BLAS: every argument by pointer, plus the hidden lengths of the
 * character arguments that gfortran callers pass; forwarded untouched. */
#define F77_GEMM(name, T)                                                                          \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *ta, const char *tb, const int *m, const int *n, const int *k,       \
                   const T *alpha, const T *a, const int *lda, const T *b, const int *ldb,         \
                   const T *beta, T *c, const int *ldc, size_t la, size_t lb),                     \
                  (ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, la, lb), 4,               \
                  (opp_pdim(m), opp_pdim(n), opp_pdim(k),                                          \
                   (ta ? opp_trans_code(*ta) : '?') | (tb ? opp_trans_code(*tb) : '?') << 8))
#define F77_GEMV(name, T)                                                                          \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *t, const int *m, const int *n, const T *alpha, const T *a,          \
                   const int *lda, const T *x, const int *incx, const T *beta, T *y,               \
                   const int *incy, size_t lt),                                                    \
                  (t, m, n, alpha, a, lda, x, incx, beta, y, incy, lt), 3,                         \
                  (opp_pdim(m), opp_pdim(n), t ? opp_trans_code(*t) : '?'))

#define OPP_BLAS_DEFINE(name, lib, kind, flags, dtype, cls, T) cls(name, T)
OPP_BLAS_FUNCS(OPP_BLAS_DEFINE)
