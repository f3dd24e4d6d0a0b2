/* Calls cuBLAS entry points with known sizes and prints each returned
 * status. Without a GPU cublasCreate fails and every call gets a NULL
 * handle: the calls still happen, with their arguments, and fail. */
#include <cublas_v2.h>
#include <stdio.h>

/* cublas_api.h declares the half calls for C++ only. */
typedef struct { unsigned short x; } half_t;
cublasStatus_t cublasHgemm(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                           const half_t *, const half_t *, int, const half_t *, int, const half_t *,
                           half_t *, int);

#define SHOW(call) printf("%s %d\n", #call, (int)(call))

int main(void)
{
    cublasHandle_t h = NULL;
    int st = cublasCreate(&h);
    printf("cublasCreate %d\n", st);
    if (st != CUBLAS_STATUS_SUCCESS)
        h = NULL;
    float a[4] = {1, 2, 3, 4}, r = 0;
    double d = 0;
    cuComplex c = {0, 0};
    half_t hh = {0};
    float *ap[1] = {a};
    const float *cap[1] = {a};
    for (int i = 0; i < 3; i++)
        SHOW(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, 64, 32, 48, a, a, 64, a, 32, a, a, 64));
    SHOW(cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, 10, 20, 30, &d, &d, 30, &d, 30, &d, &d, 10));
    SHOW(cublasCgemm(h, CUBLAS_OP_C, CUBLAS_OP_N, 8, 8, 8, &c, &c, 8, &c, 8, &c, &c, 8));
    SHOW(cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &hh, &hh, 16, &hh, 16, &hh, &hh, 16));
    SHOW(cublasSgemm_v2_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 5000000000LL, 2, 3, a, a, 5000000000LL, a,
                           3, a, a, 5000000000LL));
    SHOW(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 128, 64, 256, a, a, CUDA_R_16F, 128, a,
                      CUDA_R_16F, 256, a, a, CUDA_R_32F, 128, CUBLAS_COMPUTE_32F_FAST_TF32,
                      CUBLAS_GEMM_DEFAULT));
    SHOW(cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 5, 6, a, cap, 4, cap, 6, a, ap, 4, 7));
    SHOW(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 5, 6, a, a, 4, 24, a, 6, 30, a,
                                   a, 4, 20, 9));
    SHOW(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_T, 32, 16, 8, a, a, CUDA_R_16BF, 8,
                                    256, a, CUDA_R_16BF, 16, 128, a, a, CUDA_R_16BF, 32, 512, 3,
                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    SHOW(cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 3, 4, a, (const void *const *)cap,
                             CUDA_R_8I, 2, (const void *const *)cap, CUDA_R_8I, 4, a,
                             (void *const *)ap, CUDA_R_32I, 2, 5, CUBLAS_COMPUTE_32I,
                             CUBLAS_GEMM_DEFAULT));
    SHOW(cublasSgemv(h, CUBLAS_OP_T, 64, 48, a, a, 64, a, 1, a, a, 1));
    SHOW(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT,
                     12, 7, a, a, 12, a, 12));
    SHOW(cublasSsyrk(h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, 9, 5, a, a, 9, a, a, 9));
    SHOW(cublasSgeam(h, CUBLAS_OP_N, CUBLAS_OP_N, 6, 3, a, a, 6, a, a, 6, a, 6));
    SHOW(cublasSdot(h, 1000, a, 1, a, 1, &r));
    SHOW(cublasSaxpy(h, 100, a, a, 1, a, 1));
    SHOW(cublasSscal(h, 100, a, a, 1));
    SHOW(cublasSetStream(h, NULL));
    SHOW(cublasSetWorkspace(h, NULL, 0));
    SHOW(cublasDestroy(h));
    return 0;
}
