/* TEST DOUBLE of cuBLAS (soname libcublas.so.13), for machines without a
 * GPU: cublasSgemm_v2 runs its "GEMM" on the runtime double
 * (cuda_double.c) as two kernels, one launched through cudaLaunchKernel
 * (an API call the agent records) and one the agent sees no call for
 * (double_unseen_launch), so only CUPTI's external correlation ties the
 * second to the cuBLAS call. Kernel times follow the double's rule: grid.x
 * = G runs G * 1000 ns. Real signatures from cublas_api.h. */
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

void double_unseen_launch(const char *name, unsigned grid);

EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    *h = (cublasHandle_t)malloc(1);
    return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

/* Kernel grids from the sizes: the main kernel m/8 blocks (recorded
 * launch), the split-K reduction n/8 (unseen launch). */
EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                     int m, int n, int k, const float *alpha, const float *A, int lda,
                                     const float *B, int ldb, const float *beta, float *C, int ldc)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    dim3 grid = {(unsigned)m / 8, 1, 1}, block = {128, 1, 1};
    if (cudaLaunchKernel("_Z10sgemm_mainv", grid, block, NULL, 0, NULL) != cudaSuccess)
        return CUBLAS_STATUS_EXECUTION_FAILED;
    double_unseen_launch("_Z13splitk_reducev", (unsigned)n / 8);
    return CUBLAS_STATUS_SUCCESS;
}
