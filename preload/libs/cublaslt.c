/* cuBLASLt wrappers, generated from tables/cublaslt.h. The matmul's sizes
 * and types live in descriptors: their create/set calls are wrapped to
 * keep what they were told, per descriptor pointer, and cublasLtMatmul
 * derives M, N, K, batch and types from its descriptors. */
#include "core/internal.h" /* funcs.h: OPP_HAVE_CUBLAS when the header is installed */
#ifdef OPP_HAVE_CUBLAS
#include <string.h>

#include "libs/gpulibs.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes" /* a () declaration in cublasLt.h */
#include <cublasLt.h>
#pragma GCC diagnostic pop

struct lt_layout {
    int64_t type, rows, cols, batch;
};
struct lt_desc {
    int64_t compute, transa, transb;
};
OPP_PMAP(lt_layouts, struct lt_layout, 1024);
OPP_PMAP(lt_descs, struct lt_desc, 256);

/* An integer attribute value of any width the caller passed. */
static int lt_int(const void *buf, size_t size, int64_t *v)
{
    if (!buf)
        return -1;
    switch (size) {
    case 4: { int32_t x; memcpy(&x, buf, 4); *v = x; return 0; }
    case 8: { int64_t x; memcpy(&x, buf, 8); *v = x; return 0; }
    default: return -1;
    }
}

static uint64_t lt_layout_create(cublasStatus_t r, cublasLtMatrixLayout_t *l, cudaDataType t,
                                 uint64_t rows, uint64_t cols)
{
    struct lt_layout *v;
    if (r == CUBLAS_STATUS_SUCCESS && l && (v = opp_pmap_lock(&lt_layouts, *l, 1))) {
        *v = (struct lt_layout){t, (int64_t)rows, (int64_t)cols, 1};
        opp_pmap_unlock(&lt_layouts);
    }
    return (uint64_t)r;
}

static uint64_t lt_layout_set(cublasStatus_t r, cublasLtMatrixLayout_t l,
                              cublasLtMatrixLayoutAttribute_t a, const void *buf, size_t size)
{
    int64_t x;
    struct lt_layout *v;
    if (r != CUBLAS_STATUS_SUCCESS || lt_int(buf, size, &x))
        return (uint64_t)r;
    if (a != CUBLASLT_MATRIX_LAYOUT_TYPE && a != CUBLASLT_MATRIX_LAYOUT_ROWS &&
        a != CUBLASLT_MATRIX_LAYOUT_COLS && a != CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT)
        return (uint64_t)r;
    if (!(v = opp_pmap_lock(&lt_layouts, l, 1)))
        return (uint64_t)r;
    switch (a) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE: v->type = x; break;
    case CUBLASLT_MATRIX_LAYOUT_ROWS: v->rows = x; break;
    case CUBLASLT_MATRIX_LAYOUT_COLS: v->cols = x; break;
    default: v->batch = x; break;
    }
    opp_pmap_unlock(&lt_layouts);
    return (uint64_t)r;
}

static uint64_t lt_desc_create(cublasStatus_t r, cublasLtMatmulDesc_t *d, cublasComputeType_t c)
{
    struct lt_desc *v;
    if (r == CUBLAS_STATUS_SUCCESS && d && (v = opp_pmap_lock(&lt_descs, *d, 1))) {
        *v = (struct lt_desc){c, CUBLAS_OP_N, CUBLAS_OP_N};
        opp_pmap_unlock(&lt_descs);
    }
    return (uint64_t)r;
}

static uint64_t lt_desc_set(cublasStatus_t r, cublasLtMatmulDesc_t d,
                            cublasLtMatmulDescAttributes_t a, const void *buf, size_t size)
{
    int64_t x;
    struct lt_desc *v;
    if (r != CUBLAS_STATUS_SUCCESS || lt_int(buf, size, &x) ||
        (a != CUBLASLT_MATMUL_DESC_COMPUTE_TYPE && a != CUBLASLT_MATMUL_DESC_TRANSA &&
         a != CUBLASLT_MATMUL_DESC_TRANSB) ||
        !(v = opp_pmap_lock(&lt_descs, d, 1)))
        return (uint64_t)r;
    if (a == CUBLASLT_MATMUL_DESC_COMPUTE_TYPE)
        v->compute = x;
    else if (a == CUBLASLT_MATMUL_DESC_TRANSA)
        v->transa = x;
    else
        v->transb = x;
    opp_pmap_unlock(&lt_descs);
    return (uint64_t)r;
}

/* GEMM layout of a matmul: D is M x N, op(A) M x K; batch from D. Unknown
 * descriptors give zeros. */
struct lt_gemm {
    uint64_t m, n, k, trans, batch, ab, c, comp;
};
static void lt_gemm(struct lt_gemm *g, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a,
                    cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dd)
{
    struct lt_desc ds;
    struct lt_layout la, lc, ld;
    opp_pmap_get(&lt_descs, d, &ds);
    opp_pmap_get(&lt_layouts, a, &la);
    opp_pmap_get(&lt_layouts, c, &lc);
    opp_pmap_get(&lt_layouts, dd, &ld);
    g->m = opp_dim(ld.rows);
    g->n = opp_dim(ld.cols);
    g->k = opp_dim(ds.transa == CUBLAS_OP_N ? la.cols : la.rows);
    g->trans = opp_cublas_op((int)ds.transa) | opp_cublas_op((int)ds.transb) << 8;
    g->batch = opp_dim(ld.batch);
    g->ab = a ? opp_cuda_dtype((int)la.type) : 0;
    g->c = c ? opp_cuda_dtype((int)lc.type) : 0;
    g->comp = d ? opp_cublas_compute((int)ds.compute) : 0;
}

OPP_DEFINE_WRAPPERS(OPP_CUBLASLT_FUNCS)

#endif /* OPP_HAVE_CUBLAS */
