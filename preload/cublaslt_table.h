/* cuBLASLt entry points: X(name, lib, kind, flags, dtype, signature class)
 * as every table (funcs.h). Each returns a cublasStatus_t, recorded first.
 * cublasLtMatmul records the GEMM layout from what the descriptor calls
 * were told (preload/cublaslt.c); those record their status only. */
#define OPP_CUBLASLT_FUNCS(X)                                                    \
    X(cublasLtMatmul, cublaslt, GEMM, S, NONE, LT_MATMUL)                        \
    X(cublasLtMatmulDescCreate, cublaslt, PLAIN, S, NONE, LT_DESC_CREATE)        \
    X(cublasLtMatmulDescSetAttribute, cublaslt, PLAIN, S, NONE, LT_DESC_SET)     \
    X(cublasLtMatmulDescDestroy, cublaslt, PLAIN, S, NONE, LT_DESC_DESTROY)      \
    X(cublasLtMatrixLayoutCreate, cublaslt, PLAIN, S, NONE, LT_LAYOUT_CREATE)    \
    X(cublasLtMatrixLayoutSetAttribute, cublaslt, PLAIN, S, NONE, LT_LAYOUT_SET) \
    X(cublasLtMatrixLayoutDestroy, cublaslt, PLAIN, S, NONE, LT_LAYOUT_DESTROY)  \
    X(cublasLtCreate, cublaslt, PLAIN, S, NONE, LT_CREATE)                       \
    X(cublasLtDestroy, cublaslt, PLAIN, S, NONE, LT_DESTROY)
