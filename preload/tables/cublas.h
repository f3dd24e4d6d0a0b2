/* cuBLAS (v2 API) entry points: X(L, name, kind, flags, dtype, signature
 * class, class arguments) as every table (funcs.h), then the
 * classes with the prototypes (libs/cublas.c checks them against the
 * toolkit's header). Every call returns a
 * cublasStatus_t, recorded first (flag S). The _64 variants take int64_t
 * sizes (class argument I). */
#define OPP_CUBLAS_GEMM_FUNCS(X, L)                                                                \
    X(L, cublasSgemm_v2, GEMM, S, F32, CB_GEMM, float, int)                                        \
    X(L, cublasDgemm_v2, GEMM, S, F64, CB_GEMM, double, int)                                       \
    X(L, cublasCgemm_v2, GEMM, S, C64, CB_GEMM, cuComplex, int)                                    \
    X(L, cublasZgemm_v2, GEMM, S, C128, CB_GEMM, cuDoubleComplex, int)                             \
    X(L, cublasHgemm, GEMM, S, F16, CB_GEMM, opp_half, int)                                        \
    X(L, cublasSgemm_v2_64, GEMM, S, F32, CB_GEMM, float, int64_t)                                 \
    X(L, cublasDgemm_v2_64, GEMM, S, F64, CB_GEMM, double, int64_t)                                \
    X(L, cublasCgemm_v2_64, GEMM, S, C64, CB_GEMM, cuComplex, int64_t)                             \
    X(L, cublasZgemm_v2_64, GEMM, S, C128, CB_GEMM, cuDoubleComplex, int64_t)                      \
    X(L, cublasHgemm_64, GEMM, S, F16, CB_GEMM, opp_half, int64_t)                                 \
    X(L, cublasGemmEx, GEMM, S, NONE, CB_GEMM_EX, int)                                             \
    X(L, cublasGemmEx_64, GEMM, S, NONE, CB_GEMM_EX, int64_t)                                      \
    X(L, cublasSgemmBatched, GEMM, S, F32, CB_GEMM_B, float, int)                                  \
    X(L, cublasDgemmBatched, GEMM, S, F64, CB_GEMM_B, double, int)                                 \
    X(L, cublasCgemmBatched, GEMM, S, C64, CB_GEMM_B, cuComplex, int)                              \
    X(L, cublasZgemmBatched, GEMM, S, C128, CB_GEMM_B, cuDoubleComplex, int)                       \
    X(L, cublasHgemmBatched, GEMM, S, F16, CB_GEMM_B, opp_half, int)                               \
    X(L, cublasSgemmBatched_64, GEMM, S, F32, CB_GEMM_B, float, int64_t)                           \
    X(L, cublasDgemmBatched_64, GEMM, S, F64, CB_GEMM_B, double, int64_t)                          \
    X(L, cublasSgemmStridedBatched, GEMM, S, F32, CB_GEMM_SB, float, int)                          \
    X(L, cublasDgemmStridedBatched, GEMM, S, F64, CB_GEMM_SB, double, int)                         \
    X(L, cublasCgemmStridedBatched, GEMM, S, C64, CB_GEMM_SB, cuComplex, int)                      \
    X(L, cublasZgemmStridedBatched, GEMM, S, C128, CB_GEMM_SB, cuDoubleComplex, int)               \
    X(L, cublasHgemmStridedBatched, GEMM, S, F16, CB_GEMM_SB, opp_half, int)                       \
    X(L, cublasSgemmStridedBatched_64, GEMM, S, F32, CB_GEMM_SB, float, int64_t)                   \
    X(L, cublasDgemmStridedBatched_64, GEMM, S, F64, CB_GEMM_SB, double, int64_t)                  \
    X(L, cublasGemmBatchedEx, GEMM, S, NONE, CB_GEMM_B_EX, int)                                    \
    X(L, cublasGemmBatchedEx_64, GEMM, S, NONE, CB_GEMM_B_EX, int64_t)                             \
    X(L, cublasGemmStridedBatchedEx, GEMM, S, NONE, CB_GEMM_SB_EX, int)                            \
    X(L, cublasGemmStridedBatchedEx_64, GEMM, S, NONE, CB_GEMM_SB_EX, int64_t)

#define OPP_CUBLAS_OTHER_FUNCS(X, L)                                                               \
    X(L, cublasSgemv_v2, GEMV, S, F32, CB_GEMV, float, int)                                        \
    X(L, cublasDgemv_v2, GEMV, S, F64, CB_GEMV, double, int)                                       \
    X(L, cublasCgemv_v2, GEMV, S, C64, CB_GEMV, cuComplex, int)                                    \
    X(L, cublasZgemv_v2, GEMV, S, C128, CB_GEMV, cuDoubleComplex, int)                             \
    X(L, cublasSgemv_v2_64, GEMV, S, F32, CB_GEMV, float, int64_t)                                 \
    X(L, cublasDgemv_v2_64, GEMV, S, F64, CB_GEMV, double, int64_t)                                \
    X(L, cublasStrsm_v2, TENSORS, S, F32, CB_TRSM, float, int)                                     \
    X(L, cublasDtrsm_v2, TENSORS, S, F64, CB_TRSM, double, int)                                    \
    X(L, cublasCtrsm_v2, TENSORS, S, C64, CB_TRSM, cuComplex, int)                                 \
    X(L, cublasZtrsm_v2, TENSORS, S, C128, CB_TRSM, cuDoubleComplex, int)                          \
    X(L, cublasSsyrk_v2, TENSORS, S, F32, CB_SYRK, float, float, int)                              \
    X(L, cublasDsyrk_v2, TENSORS, S, F64, CB_SYRK, double, double, int)                            \
    X(L, cublasCsyrk_v2, TENSORS, S, C64, CB_SYRK, cuComplex, cuComplex, int)                      \
    X(L, cublasZsyrk_v2, TENSORS, S, C128, CB_SYRK, cuDoubleComplex, cuDoubleComplex, int)         \
    X(L, cublasCherk_v2, TENSORS, S, C64, CB_SYRK, float, cuComplex, int)                          \
    X(L, cublasZherk_v2, TENSORS, S, C128, CB_SYRK, double, cuDoubleComplex, int)                  \
    X(L, cublasSgeam, TENSORS, S, F32, CB_GEAM, float, int)                                        \
    X(L, cublasDgeam, TENSORS, S, F64, CB_GEAM, double, int)                                       \
    X(L, cublasCgeam, TENSORS, S, C64, CB_GEAM, cuComplex, int)                                    \
    X(L, cublasZgeam, TENSORS, S, C128, CB_GEAM, cuDoubleComplex, int)                             \
    X(L, cublasSdot_v2, DOT, S, F32, CB_DOT, float, int)                                           \
    X(L, cublasDdot_v2, DOT, S, F64, CB_DOT, double, int)                                          \
    X(L, cublasCdotu_v2, DOT, S, C64, CB_DOT, cuComplex, int)                                      \
    X(L, cublasCdotc_v2, DOT, S, C64, CB_DOT, cuComplex, int)                                      \
    X(L, cublasZdotu_v2, DOT, S, C128, CB_DOT, cuDoubleComplex, int)                               \
    X(L, cublasZdotc_v2, DOT, S, C128, CB_DOT, cuDoubleComplex, int)                               \
    X(L, cublasSaxpy_v2, AXPY, S, F32, CB_AXPY, float, int)                                        \
    X(L, cublasDaxpy_v2, AXPY, S, F64, CB_AXPY, double, int)                                       \
    X(L, cublasCaxpy_v2, AXPY, S, C64, CB_AXPY, cuComplex, int)                                    \
    X(L, cublasZaxpy_v2, AXPY, S, C128, CB_AXPY, cuDoubleComplex, int)                             \
    X(L, cublasSscal_v2, SCAL, S, F32, CB_SCAL, float, float, int)                                 \
    X(L, cublasDscal_v2, SCAL, S, F64, CB_SCAL, double, double, int)                               \
    X(L, cublasCscal_v2, SCAL, S, C64, CB_SCAL, cuComplex, cuComplex, int)                         \
    X(L, cublasZscal_v2, SCAL, S, C128, CB_SCAL, cuDoubleComplex, cuDoubleComplex, int)            \
    X(L, cublasCsscal_v2, SCAL, S, C64, CB_SCAL, float, cuComplex, int)                            \
    X(L, cublasZdscal_v2, SCAL, S, C128, CB_SCAL, double, cuDoubleComplex, int)                    \
    X(L, cublasCreate_v2, PLAIN, S, NONE, CB_CALL, (cublasHandle_t * h), (h))                      \
    X(L, cublasDestroy_v2, PLAIN, S, NONE, CB_CALL, (cublasHandle_t h), (h))                       \
    X(L, cublasSetStream_v2, PLAIN, S, NONE, CB_CALL, (cublasHandle_t h, cudaStream_t s), (h, s))  \
    X(L, cublasGetStream_v2, PLAIN, S, NONE, CB_CALL, (cublasHandle_t h, cudaStream_t * s), (h, s)) \
    X(L, cublasSetWorkspace_v2, PLAIN, S, NONE, CB_CALL,                                           \
      (cublasHandle_t h, void *w, size_t size), (h, w, size))                                      \
    X(L, cublasSetMathMode, PLAIN, S, NONE, CB_CALL, (cublasHandle_t h, cublasMath_t mode), (h, mode))

#define OPP_CUBLAS_FUNCS(X, L) OPP_CUBLAS_GEMM_FUNCS(X, L) OPP_CUBLAS_OTHER_FUNCS(X, L)

/* ---- signature classes: the prototype once, what is recorded ---- */

#define CB_TRANS(ta, tb) (opp_cublas_op(ta) | opp_cublas_op(tb) << 8)
/* C = op(A) op(B): M, N, K, transposes. */
#define CB_GEMM(name, T, I)                                                                        \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k,     \
                  const T *alpha, const T *a, I lda, const T *b, I ldb, const T *beta, T *c,       \
                  I ldc),                                                                          \
                 (h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc),                        \
                 ((uint64_t)r_, opp_dim(m), opp_dim(n), opp_dim(k), CB_TRANS(ta, tb)))
#define CB_GEMM_B(name, T, I)                                                                      \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k,     \
                  const T *alpha, const T *const a[], I lda, const T *const b[], I ldb,            \
                  const T *beta, T *const c[], I ldc, I batch),                                    \
                 (h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, batch),                 \
                 ((uint64_t)r_, opp_dim(m), opp_dim(n), opp_dim(k), CB_TRANS(ta, tb),              \
                  opp_dim(batch)))
#define CB_GEMM_SB(name, T, I)                                                                     \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k,     \
                  const T *alpha, const T *a, I lda, long long sa, const T *b, I ldb,              \
                  long long sb, const T *beta, T *c, I ldc, long long sc, I batch),                \
                 (h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch),     \
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
                  algo),                                                                           \
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
                  comp, algo),                                                                     \
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
                  batch, comp, algo),                                                              \
                 ((uint64_t)r_, opp_dim(m), opp_dim(n), opp_dim(k), CB_TRANS(ta, tb),              \
                  opp_dim(batch), opp_cuda_dtype(at), opp_cuda_dtype(ct),                          \
                  opp_cublas_compute(comp)))
#define CB_GEMV(name, T, I)                                                                        \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, cublasOperation_t t, I m, I n, const T *alpha, const T *a,     \
                  I lda, const T *x, I incx, const T *beta, T *y, I incy),                         \
                 (h, t, m, n, alpha, a, lda, x, incx, beta, y, incy),                              \
                 ((uint64_t)r_, opp_dim(m), opp_dim(n), opp_cublas_op(t)))
/* TENSORS (sub NONE, no FLOPs): trsm A [k, k] (k = M on the left, N on the
 * right) and B [M, N]; syrk/herk op(A) [N, K] and C [N, N]; geam A, B, C
 * [M, N]. */
#define CB_TRSM(name, T, I)                                                                        \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,                  \
                  cublasOperation_t t, cublasDiagType_t diag, I m, I n, const T *alpha,            \
                  const T *a, I lda, T *b, I ldb),                                                 \
                 (h, side, uplo, t, diag, m, n, alpha, a, lda, b, ldb),                            \
                 ((uint64_t)r_, OPP_SUB_NONE, 0, 2, 2, opp_dim(side == CUBLAS_SIDE_LEFT ? m : n),  \
                  opp_dim(side == CUBLAS_SIDE_LEFT ? m : n), 2, opp_dim(m), opp_dim(n)))
#define CB_SYRK(name, TS, T, I)                                                                    \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t t, I n, I k,          \
                  const TS *alpha, const T *a, I lda, const TS *beta, T *c, I ldc),                \
                 (h, uplo, t, n, k, alpha, a, lda, beta, c, ldc),                                  \
                 ((uint64_t)r_, OPP_SUB_NONE, 0, 2, 2, opp_dim(n), opp_dim(k), 2, opp_dim(n),      \
                  opp_dim(n)))
#define CB_GEAM(name, T, I)                                                                        \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n,          \
                  const T *alpha, const T *a, I lda, const T *beta, const T *b, I ldb, T *c,       \
                  I ldc),                                                                          \
                 (h, ta, tb, m, n, alpha, a, lda, beta, b, ldb, c, ldc),                           \
                 ((uint64_t)r_, OPP_SUB_NONE, 0, 3, 2, opp_dim(m), opp_dim(n), 2, opp_dim(m),      \
                  opp_dim(n), 2, opp_dim(m), opp_dim(n)))
#define CB_DOT(name, T, I)                                                                         \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, I n, const T *x, I incx, const T *y, I incy, T *res),          \
                 (h, n, x, incx, y, incy, res), ((uint64_t)r_, opp_dim(n)))
#define CB_AXPY(name, T, I)                                                                        \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasHandle_t h, I n, const T *alpha, const T *x, I incx, T *y, I incy),        \
                 (h, n, alpha, x, incx, y, incy), ((uint64_t)r_, opp_dim(n)))
#define CB_SCAL(name, TA, T, I)                                                                    \
    OPP_WRAP_RET(cublasStatus_t, name, (cublasHandle_t h, I n, const TA *alpha, T *x, I incx),     \
                 (h, n, alpha, x, incx), ((uint64_t)r_, opp_dim(n)))
/* Handle, stream, workspace, math mode: the status only. */
#define CB_CALL(name, params, args)                                                                \
    OPP_WRAP_RET(cublasStatus_t, name, params, args, ((uint64_t)r_))
