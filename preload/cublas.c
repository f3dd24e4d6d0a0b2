/* cuBLAS wrappers, generated from cublas_table.h: each signature class
 * gives the prototype once (checked against the toolkit's header) and which
 * arguments define the shapes. Recorded: the returned status, then the
 * kind's layout (docs/FORMAT.md). */
#include "agent.h" /* funcs.h: OPP_HAVE_CUBLAS when the header is installed */
#ifdef OPP_HAVE_CUBLAS
#include "agent.h"

#include <cublas_api.h>

#include "gpulibs.h"

/* cublas_api.h declares the half-precision calls for C++ only. */
typedef struct { uint16_t x; } opp_half;

#define CB_TRANS(ta, tb) (opp_cublas_op(ta) | opp_cublas_op(tb) << 8)

/* C = op(A) op(B): M, N, K, transposes. */
#define CB_GEMM(name, T, I)                                                                        \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k,     \
                  const T *alpha, const T *a, I lda, const T *b, I ldb, const T *beta, T *c,       \
                  I ldc),                                                                          \
                 (h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc), 5,                     \
                 ((uint64_t)r_, opp_dim(m), opp_dim(n), opp_dim(k), CB_TRANS(ta, tb)))
#define CB_GEMM_B(name, T, I)                                                                      \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k,     \
                  const T *alpha, const T *const a[], I lda, const T *const b[], I ldb,            \
                  const T *beta, T *const c[], I ldc, I batch),                                    \
                 (h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, batch), 6,              \
                 ((uint64_t)r_, opp_dim(m), opp_dim(n), opp_dim(k), CB_TRANS(ta, tb),              \
                  opp_dim(batch)))
#define CB_GEMM_SB(name, T, I)                                                                     \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k,     \
                  const T *alpha, const T *a, I lda, long long sa, const T *b, I ldb,              \
                  long long sb, const T *beta, T *c, I ldc, long long sc, I batch),                \
                 (h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch), 6,  \
                 ((uint64_t)r_, opp_dim(m), opp_dim(n), opp_dim(k), CB_TRANS(ta, tb),              \
                  opp_dim(batch)))
/* The Ex forms: the A/B type is A's (cuBLAS requires B's to match). */
#define CB_GEMM_EX(name, I)                                                                        \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k,     \
                  const void *alpha, const void *a, cudaDataType at, I lda, const void *b,         \
                  cudaDataType bt, I ldb, const void *beta, void *c, cudaDataType ct, I ldc,       \
                  cublasComputeType_t comp, cublasGemmAlgo_t algo),                                \
                 (h, ta, tb, m, n, k, alpha, a, at, lda, b, bt, ldb, beta, c, ct, ldc, comp,       \
                  algo), 9,                                                                        \
                 ((uint64_t)r_, opp_dim(m), opp_dim(n), opp_dim(k), CB_TRANS(ta, tb), 1,           \
                  opp_cuda_dtype(at), opp_cuda_dtype(ct), opp_cublas_compute(comp)))
#define CB_GEMM_B_EX(name, I)                                                                      \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k,     \
                  const void *alpha, const void *const a[], cudaDataType at, I lda,                \
                  const void *const b[], cudaDataType bt, I ldb, const void *beta,                 \
                  void *const c[], cudaDataType ct, I ldc, I batch, cublasComputeType_t comp,      \
                  cublasGemmAlgo_t algo),                                                          \
                 (h, ta, tb, m, n, k, alpha, a, at, lda, b, bt, ldb, beta, c, ct, ldc, batch,      \
                  comp, algo), 9,                                                                  \
                 ((uint64_t)r_, opp_dim(m), opp_dim(n), opp_dim(k), CB_TRANS(ta, tb),              \
                  opp_dim(batch), opp_cuda_dtype(at), opp_cuda_dtype(ct),                          \
                  opp_cublas_compute(comp)))
#define CB_GEMM_SB_EX(name, I)                                                                     \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k,     \
                  const void *alpha, const void *a, cudaDataType at, I lda, long long sa,          \
                  const void *b, cudaDataType bt, I ldb, long long sb, const void *beta, void *c,  \
                  cudaDataType ct, I ldc, long long sc, I batch, cublasComputeType_t comp,         \
                  cublasGemmAlgo_t algo),                                                          \
                 (h, ta, tb, m, n, k, alpha, a, at, lda, sa, b, bt, ldb, sb, beta, c, ct, ldc, sc, \
                  batch, comp, algo), 9,                                                           \
                 ((uint64_t)r_, opp_dim(m), opp_dim(n), opp_dim(k), CB_TRANS(ta, tb),              \
                  opp_dim(batch), opp_cuda_dtype(at), opp_cuda_dtype(ct),                          \
                  opp_cublas_compute(comp)))

#define CB_GEMV(name, T, I)                                                                        \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, cublasOperation_t t, I m, I n, const T *alpha, const T *a,     \
                  I lda, const T *x, I incx, const T *beta, T *y, I incy),                         \
                 (h, t, m, n, alpha, a, lda, x, incx, beta, y, incy), 4,                           \
                 ((uint64_t)r_, opp_dim(m), opp_dim(n), opp_cublas_op(t)))

/* TENSORS (sub NONE, no FLOPs): trsm A [k, k] (k = M on the left, N on the
 * right) and B [M, N]; syrk/herk op(A) [N, K] and C [N, N]; geam A, B, C
 * [M, N]. */
#define CB_TRSM(name, T, I)                                                                        \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,                  \
                  cublasOperation_t t, cublasDiagType_t diag, I m, I n, const T *alpha,            \
                  const T *a, I lda, T *b, I ldb),                                                 \
                 (h, side, uplo, t, diag, m, n, alpha, a, lda, b, ldb), 10,                        \
                 ((uint64_t)r_, OPP_SUB_NONE, 0, 2, 2, opp_dim(side == CUBLAS_SIDE_LEFT ? m : n),  \
                  opp_dim(side == CUBLAS_SIDE_LEFT ? m : n), 2, opp_dim(m), opp_dim(n)))
#define CB_SYRK(name, TS, T, I)                                                                    \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t t, I n, I k,          \
                  const TS *alpha, const T *a, I lda, const TS *beta, T *c, I ldc),                \
                 (h, uplo, t, n, k, alpha, a, lda, beta, c, ldc), 10,                              \
                 ((uint64_t)r_, OPP_SUB_NONE, 0, 2, 2, opp_dim(n), opp_dim(k), 2, opp_dim(n),      \
                  opp_dim(n)))
#define CB_GEAM(name, T, I)                                                                        \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n,          \
                  const T *alpha, const T *a, I lda, const T *beta, const T *b, I ldb, T *c,       \
                  I ldc),                                                                          \
                 (h, ta, tb, m, n, alpha, a, lda, beta, b, ldb, c, ldc), 13,                       \
                 ((uint64_t)r_, OPP_SUB_NONE, 0, 3, 2, opp_dim(m), opp_dim(n), 2, opp_dim(m),      \
                  opp_dim(n), 2, opp_dim(m), opp_dim(n)))

#define CB_DOT(name, T, I)                                                                         \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, I n, const T *x, I incx, const T *y, I incy, T *res),          \
                 (h, n, x, incx, y, incy, res), 2, ((uint64_t)r_, opp_dim(n)))
#define CB_AXPY(name, T, I)                                                                        \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, I n, const T *alpha, const T *x, I incx, T *y, I incy),        \
                 (h, n, alpha, x, incx, y, incy), 2, ((uint64_t)r_, opp_dim(n)))
#define CB_SCAL(name, TA, T, I)                                                                    \
    OPP_WRAP_RET(cublasStatus_t, name, (cublasHandle_t h, I n, const TA *alpha, T *x, I incx),     \
                 (h, n, alpha, x, incx), 2, ((uint64_t)r_, opp_dim(n)))

/* Handle, stream, workspace, math mode: the status only. */
#define CB_CALL(name, params, args)                                                                \
    OPP_WRAP_RET(cublasStatus_t, name, params, args, 1, ((uint64_t)r_))

#define OPP_CUBLAS_DEFINE(name, lib, kind, flags, dtype, cls, ...) cls(name, __VA_ARGS__)
OPP_CUBLAS_FUNCS(OPP_CUBLAS_DEFINE)

#endif /* OPP_HAVE_CUBLAS */
