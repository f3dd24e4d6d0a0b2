/* cuBLAS (v2 API) entry points: X(name, lib, kind, flags, dtype, signature
 * class, class arguments) as every table (funcs.h). The classes
 * (preload/cublas.c) hold the prototypes; every call returns a
 * cublasStatus_t, recorded first (flag S). The _64 variants take int64_t
 * sizes (class argument I). */
#define OPP_CUBLAS_GEMM_FUNCS(X)                                                      \
    X(cublasSgemm_v2, cublas, GEMM, S, F32, CB_GEMM, float, int)                      \
    X(cublasDgemm_v2, cublas, GEMM, S, F64, CB_GEMM, double, int)                     \
    X(cublasCgemm_v2, cublas, GEMM, S, C64, CB_GEMM, cuComplex, int)                  \
    X(cublasZgemm_v2, cublas, GEMM, S, C128, CB_GEMM, cuDoubleComplex, int)           \
    X(cublasHgemm, cublas, GEMM, S, F16, CB_GEMM, opp_half, int)                        \
    X(cublasSgemm_v2_64, cublas, GEMM, S, F32, CB_GEMM, float, int64_t)               \
    X(cublasDgemm_v2_64, cublas, GEMM, S, F64, CB_GEMM, double, int64_t)              \
    X(cublasCgemm_v2_64, cublas, GEMM, S, C64, CB_GEMM, cuComplex, int64_t)           \
    X(cublasZgemm_v2_64, cublas, GEMM, S, C128, CB_GEMM, cuDoubleComplex, int64_t)    \
    X(cublasHgemm_64, cublas, GEMM, S, F16, CB_GEMM, opp_half, int64_t)                 \
    X(cublasGemmEx, cublas, GEMM, S, NONE, CB_GEMM_EX, int)                           \
    X(cublasGemmEx_64, cublas, GEMM, S, NONE, CB_GEMM_EX, int64_t)                    \
    X(cublasSgemmBatched, cublas, GEMM, S, F32, CB_GEMM_B, float, int)                \
    X(cublasDgemmBatched, cublas, GEMM, S, F64, CB_GEMM_B, double, int)               \
    X(cublasCgemmBatched, cublas, GEMM, S, C64, CB_GEMM_B, cuComplex, int)            \
    X(cublasZgemmBatched, cublas, GEMM, S, C128, CB_GEMM_B, cuDoubleComplex, int)     \
    X(cublasHgemmBatched, cublas, GEMM, S, F16, CB_GEMM_B, opp_half, int)               \
    X(cublasSgemmBatched_64, cublas, GEMM, S, F32, CB_GEMM_B, float, int64_t)         \
    X(cublasDgemmBatched_64, cublas, GEMM, S, F64, CB_GEMM_B, double, int64_t)        \
    X(cublasSgemmStridedBatched, cublas, GEMM, S, F32, CB_GEMM_SB, float, int)        \
    X(cublasDgemmStridedBatched, cublas, GEMM, S, F64, CB_GEMM_SB, double, int)       \
    X(cublasCgemmStridedBatched, cublas, GEMM, S, C64, CB_GEMM_SB, cuComplex, int)    \
    X(cublasZgemmStridedBatched, cublas, GEMM, S, C128, CB_GEMM_SB, cuDoubleComplex, int) \
    X(cublasHgemmStridedBatched, cublas, GEMM, S, F16, CB_GEMM_SB, opp_half, int)       \
    X(cublasSgemmStridedBatched_64, cublas, GEMM, S, F32, CB_GEMM_SB, float, int64_t) \
    X(cublasDgemmStridedBatched_64, cublas, GEMM, S, F64, CB_GEMM_SB, double, int64_t) \
    X(cublasGemmBatchedEx, cublas, GEMM, S, NONE, CB_GEMM_B_EX, int)                  \
    X(cublasGemmBatchedEx_64, cublas, GEMM, S, NONE, CB_GEMM_B_EX, int64_t)           \
    X(cublasGemmStridedBatchedEx, cublas, GEMM, S, NONE, CB_GEMM_SB_EX, int)          \
    X(cublasGemmStridedBatchedEx_64, cublas, GEMM, S, NONE, CB_GEMM_SB_EX, int64_t)

#define OPP_CUBLAS_OTHER_FUNCS(X)                                                     \
    X(cublasSgemv_v2, cublas, GEMV, S, F32, CB_GEMV, float, int)                      \
    X(cublasDgemv_v2, cublas, GEMV, S, F64, CB_GEMV, double, int)                     \
    X(cublasCgemv_v2, cublas, GEMV, S, C64, CB_GEMV, cuComplex, int)                  \
    X(cublasZgemv_v2, cublas, GEMV, S, C128, CB_GEMV, cuDoubleComplex, int)           \
    X(cublasSgemv_v2_64, cublas, GEMV, S, F32, CB_GEMV, float, int64_t)               \
    X(cublasDgemv_v2_64, cublas, GEMV, S, F64, CB_GEMV, double, int64_t)              \
    X(cublasStrsm_v2, cublas, TENSORS, S, F32, CB_TRSM, float, int)                   \
    X(cublasDtrsm_v2, cublas, TENSORS, S, F64, CB_TRSM, double, int)                  \
    X(cublasCtrsm_v2, cublas, TENSORS, S, C64, CB_TRSM, cuComplex, int)               \
    X(cublasZtrsm_v2, cublas, TENSORS, S, C128, CB_TRSM, cuDoubleComplex, int)        \
    X(cublasSsyrk_v2, cublas, TENSORS, S, F32, CB_SYRK, float, float, int)            \
    X(cublasDsyrk_v2, cublas, TENSORS, S, F64, CB_SYRK, double, double, int)          \
    X(cublasCsyrk_v2, cublas, TENSORS, S, C64, CB_SYRK, cuComplex, cuComplex, int)    \
    X(cublasZsyrk_v2, cublas, TENSORS, S, C128, CB_SYRK, cuDoubleComplex, cuDoubleComplex, int) \
    X(cublasCherk_v2, cublas, TENSORS, S, C64, CB_SYRK, float, cuComplex, int)        \
    X(cublasZherk_v2, cublas, TENSORS, S, C128, CB_SYRK, double, cuDoubleComplex, int) \
    X(cublasSgeam, cublas, TENSORS, S, F32, CB_GEAM, float, int)                      \
    X(cublasDgeam, cublas, TENSORS, S, F64, CB_GEAM, double, int)                     \
    X(cublasCgeam, cublas, TENSORS, S, C64, CB_GEAM, cuComplex, int)                  \
    X(cublasZgeam, cublas, TENSORS, S, C128, CB_GEAM, cuDoubleComplex, int)           \
    X(cublasSdot_v2, cublas, DOT, S, F32, CB_DOT, float, int)                         \
    X(cublasDdot_v2, cublas, DOT, S, F64, CB_DOT, double, int)                        \
    X(cublasCdotu_v2, cublas, DOT, S, C64, CB_DOT, cuComplex, int)                    \
    X(cublasCdotc_v2, cublas, DOT, S, C64, CB_DOT, cuComplex, int)                    \
    X(cublasZdotu_v2, cublas, DOT, S, C128, CB_DOT, cuDoubleComplex, int)             \
    X(cublasZdotc_v2, cublas, DOT, S, C128, CB_DOT, cuDoubleComplex, int)             \
    X(cublasSaxpy_v2, cublas, AXPY, S, F32, CB_AXPY, float, int)                      \
    X(cublasDaxpy_v2, cublas, AXPY, S, F64, CB_AXPY, double, int)                     \
    X(cublasCaxpy_v2, cublas, AXPY, S, C64, CB_AXPY, cuComplex, int)                  \
    X(cublasZaxpy_v2, cublas, AXPY, S, C128, CB_AXPY, cuDoubleComplex, int)           \
    X(cublasSscal_v2, cublas, SCAL, S, F32, CB_SCAL, float, float, int)               \
    X(cublasDscal_v2, cublas, SCAL, S, F64, CB_SCAL, double, double, int)             \
    X(cublasCscal_v2, cublas, SCAL, S, C64, CB_SCAL, cuComplex, cuComplex, int)       \
    X(cublasZscal_v2, cublas, SCAL, S, C128, CB_SCAL, cuDoubleComplex, cuDoubleComplex, int) \
    X(cublasCsscal_v2, cublas, SCAL, S, C64, CB_SCAL, float, cuComplex, int)          \
    X(cublasZdscal_v2, cublas, SCAL, S, C128, CB_SCAL, double, cuDoubleComplex, int)  \
    X(cublasCreate_v2, cublas, PLAIN, S, NONE, CB_CALL, (cublasHandle_t * h), (h))    \
    X(cublasDestroy_v2, cublas, PLAIN, S, NONE, CB_CALL, (cublasHandle_t h), (h))     \
    X(cublasSetStream_v2, cublas, PLAIN, S, NONE, CB_CALL, (cublasHandle_t h, cudaStream_t s), (h, s)) \
    X(cublasGetStream_v2, cublas, PLAIN, S, NONE, CB_CALL, (cublasHandle_t h, cudaStream_t * s), (h, s)) \
    X(cublasSetWorkspace_v2, cublas, PLAIN, S, NONE, CB_CALL,                         \
      (cublasHandle_t h, void *w, size_t size), (h, w, size))                         \
    X(cublasSetMathMode, cublas, PLAIN, S, NONE, CB_CALL, (cublasHandle_t h, cublasMath_t mode), (h, mode))

#define OPP_CUBLAS_FUNCS(X) OPP_CUBLAS_GEMM_FUNCS(X) OPP_CUBLAS_OTHER_FUNCS(X)
