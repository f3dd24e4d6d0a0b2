/* Describes a batched matmul to cuBLASLt (descriptors are host objects and
 * work without a GPU) and calls cublasLtMatmul, printing each status. */
#include <cublasLt.h>
#include <stdio.h>

#define SHOW(name, call) printf("%s %d\n", name, (int)(call))

int main(void)
{
    cublasLtHandle_t h = NULL;
    cublasLtMatmulDesc_t d = NULL;
    cublasLtMatrixLayout_t a = NULL, b = NULL, c = NULL;
    cublasOperation_t t = CUBLAS_OP_T;
    int32_t batch = 6;
    float x[4] = {0};
    SHOW("cublasLtCreate", cublasLtCreate(&h));
    SHOW("cublasLtMatmulDescCreate", cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    SHOW("cublasLtMatmulDescSetAttribute",
         cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
    /* op(A) = A^T: A is K x M = 96 x 128; B K x N = 96 x 80; C/D M x N */
    SHOW("cublasLtMatrixLayoutCreate", cublasLtMatrixLayoutCreate(&a, CUDA_R_16BF, 96, 128, 96));
    SHOW("cublasLtMatrixLayoutCreate", cublasLtMatrixLayoutCreate(&b, CUDA_R_16BF, 96, 80, 96));
    SHOW("cublasLtMatrixLayoutCreate", cublasLtMatrixLayoutCreate(&c, CUDA_R_32F, 128, 80, 128));
    SHOW("cublasLtMatrixLayoutSetAttribute",
         cublasLtMatrixLayoutSetAttribute(c, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                          sizeof batch));
    for (int i = 0; i < 2; i++)
        SHOW("cublasLtMatmul", cublasLtMatmul(h, d, x, x, a, x, b, x, x, c, x, c, NULL, NULL, 0, NULL));
    SHOW("cublasLtMatrixLayoutDestroy", cublasLtMatrixLayoutDestroy(c));
    SHOW("cublasLtMatrixLayoutDestroy", cublasLtMatrixLayoutDestroy(b));
    SHOW("cublasLtMatrixLayoutDestroy", cublasLtMatrixLayoutDestroy(a));
    SHOW("cublasLtMatmulDescDestroy", cublasLtMatmulDescDestroy(d));
    SHOW("cublasLtDestroy", cublasLtDestroy(h));
    return 0;
}
