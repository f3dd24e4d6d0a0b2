/* A "cuBLAS program" for the test doubles (cublas_double.c over
 * cuda_double.c): two SGEMMs, 64x32x16 then 128x64x16, each running a
 * main kernel (m/8 us) and a split-K reduction (n/8 us). */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdio.h>

int main(void)
{
    cublasHandle_t h;
    float one = 1, zero = 0;
    int rc = (int)cublasCreate(&h);
    rc |= (int)cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 32, 16, &one, NULL, 64, NULL, 16, &zero, NULL, 64);
    rc |= (int)cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 128, 64, 16, &one, NULL, 128, NULL, 16, &zero, NULL,
                           128);
    rc |= (int)cudaDeviceSynchronize();
    rc |= (int)cublasDestroy(h);
    printf("blas_app rc=%d\n", rc);
    return rc;
}
