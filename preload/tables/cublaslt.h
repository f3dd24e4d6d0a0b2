/* cuBLASLt entry points: X(L, name, kind, flags, dtype, signature class)
 * as every table (funcs.h). Each returns a cublasStatus_t, recorded first.
 * cublasLtMatmul records the GEMM layout from what the descriptor calls
 * were told (libs/cublaslt.c); those record their status only. */
#define OPP_CUBLASLT_FUNCS(X, L)                                                                   \
    X(L, cublasLtMatmul, GEMM, S, NONE, LT_MATMUL)                                                 \
    X(L, cublasLtMatmulDescCreate, PLAIN, S, NONE, LT_DESC_CREATE)                                 \
    X(L, cublasLtMatmulDescSetAttribute, PLAIN, S, NONE, LT_DESC_SET)                              \
    X(L, cublasLtMatmulDescDestroy, PLAIN, S, NONE, LT_DESC_DESTROY)                               \
    X(L, cublasLtMatrixLayoutCreate, PLAIN, S, NONE, LT_LAYOUT_CREATE)                             \
    X(L, cublasLtMatrixLayoutSetAttribute, PLAIN, S, NONE, LT_LAYOUT_SET)                          \
    X(L, cublasLtMatrixLayoutDestroy, PLAIN, S, NONE, LT_LAYOUT_DESTROY)                           \
    X(L, cublasLtCreate, PLAIN, S, NONE, LT_CREATE)                                                \
    X(L, cublasLtDestroy, PLAIN, S, NONE, LT_DESTROY)

/* ---- signature classes: the prototype once, what is recorded ---- */

#define LT_MATMUL(name)                                                                            \
    OPP_WRAP_RET_PREP(cublasStatus_t, name,                                                        \
                      (cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *alpha,              \
                       const void *a, cublasLtMatrixLayout_t al, const void *b,                    \
                       cublasLtMatrixLayout_t bl, const void *beta, const void *c,                 \
                       cublasLtMatrixLayout_t cl, void *dp, cublasLtMatrixLayout_t dl,             \
                       const cublasLtMatmulAlgo_t *algo, void *ws, size_t wss, cudaStream_t st),   \
                      (h, d, alpha, a, al, b, bl, beta, c, cl, dp, dl, algo, ws, wss, st),         \
                      (struct lt_gemm g; lt_gemm(&g, d, al, cl, dl)),                              \
                      ((uint64_t)r_, g.m, g.n, g.k, g.trans, g.batch, g.ab, g.c, g.comp))
#define LT_DESC_CREATE(name)                                                                       \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasLtMatmulDesc_t * d, cublasComputeType_t c, cudaDataType_t s), (d, c, s), (lt_desc_create(r_, d, c)))
#define LT_DESC_SET(name)                                                                          \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const void *buf,       \
                  size_t size),                                                                    \
                 (d, a, buf, size), (lt_desc_set(r_, d, a, buf, size)))
#define LT_DESC_DESTROY(name)                                                                      \
    OPP_WRAP_RET(cublasStatus_t, name, (cublasLtMatmulDesc_t d), (d),                              \
                 ((opp_pmap_del(&lt_descs, d), (uint64_t)r_)))
#define LT_LAYOUT_CREATE(name)                                                                     \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasLtMatrixLayout_t * l, cudaDataType t, uint64_t rows, uint64_t cols,        \
                  int64_t ld),                                                                     \
                 (l, t, rows, cols, ld), (lt_layout_create(r_, l, t, rows, cols)))
#define LT_LAYOUT_SET(name)                                                                        \
    OPP_WRAP_RET(cublasStatus_t, name,                                                             \
                 (cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a, const void *buf,    \
                  size_t size),                                                                    \
                 (l, a, buf, size), (lt_layout_set(r_, l, a, buf, size)))
#define LT_LAYOUT_DESTROY(name)                                                                    \
    OPP_WRAP_RET(cublasStatus_t, name, (cublasLtMatrixLayout_t l), (l),                            \
                 ((opp_pmap_del(&lt_layouts, l), (uint64_t)r_)))
#define LT_CREATE(name)                                                                            \
    OPP_WRAP_RET(cublasStatus_t, name, (cublasLtHandle_t * h), (h), ((uint64_t)r_))
#define LT_DESTROY(name)                                                                           \
    OPP_WRAP_RET(cublasStatus_t, name, (cublasLtHandle_t h), (h), ((uint64_t)r_))
