/* cuDNN wrappers, generated from cudnn_table.h. An operator's tensors are
 * read from its descriptors after the call with cuDNN's getters, reached
 * in the already loaded libcudnn.so.9 (never through our own table). */
#include "agent.h" /* funcs.h: OPP_HAVE_CUDNN when the header is installed */
#ifdef OPP_HAVE_CUDNN
#include <stdatomic.h>

#include "gpulibs.h"

#include <cudnn.h>

#define CD_RANK 5   /* dims kept per tensor (NCDHW) */
#define CD_TENSORS 4 /* at most (attention: q, k, v, o); CD_ARGS lists 3 */
#define CD_NV (3 + CD_TENSORS * (1 + CD_RANK)) /* sub, dtype, n, tensors */

struct cd_args {
    uint64_t v[CD_NV];
    unsigned at;
};

typedef cudnnStatus_t (*cd_get_tensor_t)(const cudnnTensorDescriptor_t, int, cudnnDataType_t *,
                                         int *, int *, int *);
typedef cudnnStatus_t (*cd_get_filter_t)(const cudnnFilterDescriptor_t, int, cudnnDataType_t *,
                                         cudnnTensorFormat_t *, int *, int *);

static void *cd_sym(void *_Atomic *cache, const char *name)
{
    void *p = atomic_load_explicit(cache, memory_order_relaxed);
    if (!p && (p = opp_lib_sym("libcudnn.so.9", name)))
        atomic_store_explicit(cache, p, memory_order_relaxed);
    return p;
}

uint64_t opp_cudnn_dtype(int t)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return OPP_DT_F32;
    case CUDNN_DATA_DOUBLE: return OPP_DT_F64;
    case CUDNN_DATA_HALF: return OPP_DT_F16;
    case CUDNN_DATA_INT8: return OPP_DT_I8;
    case CUDNN_DATA_INT32: return OPP_DT_I32;
    case CUDNN_DATA_UINT8: return OPP_DT_U8;
    case CUDNN_DATA_BFLOAT16: return OPP_DT_BF16;
    case CUDNN_DATA_INT64: return OPP_DT_I64;
    case CUDNN_DATA_BOOLEAN: return OPP_DT_BOOL;
    case CUDNN_DATA_FP8_E4M3: return OPP_DT_F8E4M3;
    case CUDNN_DATA_FP8_E5M2: return OPP_DT_F8E5M2;
    default: return OPP_DT_NONE;
    }
}

static void cd_begin(struct cd_args *g, uint32_t sub)
{
    *g = (struct cd_args){.at = 3};
    g->v[0] = sub;
}

/* Append one tensor's dims (rank 0 when the descriptor cannot be read);
 * the first tensor read gives the operator's dtype. */
static void cd_put(struct cd_args *g, int rank, const int *dims, cudnnDataType_t dt, int ok)
{
    if (!ok || rank < 0 || rank > CD_RANK)
        rank = 0;
    g->v[g->at++] = (uint64_t)rank;
    for (int i = 0; i < rank; i++)
        g->v[g->at++] = opp_dim(dims[i]);
    g->v[2]++;
    if (ok && !g->v[1])
        g->v[1] = opp_cudnn_dtype(dt);
}

static void cd_tensor(struct cd_args *g, cudnnTensorDescriptor_t d)
{
    static void *_Atomic fn;
    cd_get_tensor_t get = (cd_get_tensor_t)cd_sym(&fn, "cudnnGetTensorNdDescriptor");
    int rank = 0, dims[8], strides[8];
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    cd_put(g, rank, dims, dt,
           d && get && get(d, 8, &dt, &rank, dims, strides) == CUDNN_STATUS_SUCCESS);
    (void)rank;
}

static void cd_filter(struct cd_args *g, cudnnFilterDescriptor_t d)
{
    static void *_Atomic fn;
    cd_get_filter_t get = (cd_get_filter_t)cd_sym(&fn, "cudnnGetFilterNdDescriptor");
    int rank = 0, dims[8];
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    cudnnTensorFormat_t fmt;
    int ok = d && get && get(d, 8, &dt, &fmt, &rank, dims) == CUDNN_STATUS_SUCCESS;
    cd_put(g, rank, dims, dt, ok);
}

#define CD_ARGS(g)                                                                                 \
    ((uint64_t)r_, g.v[0], g.v[1], g.v[2], g.v[3], g.v[4], g.v[5], g.v[6], g.v[7], g.v[8],        \
     g.v[9], g.v[10], g.v[11], g.v[12], g.v[13], g.v[14], g.v[15], g.v[16], g.v[17], g.v[18],      \
     g.v[19], g.v[20])
#define CD_NARGS (1 + 3 + 3 * (1 + CD_RANK))
_Static_assert(CD_NARGS == 22, "CD_ARGS lists 22 values");

/* Statement run after the call: the tensors, in order. */
#define CD_READ(sub, ...) (struct cd_args g; cd_begin(&g, OPP_SUB_##sub); __VA_ARGS__)

#define CD_CONV_FWD(name, sub)                                                                     \
    OPP_WRAP_RET_PREP(cudnnStatus_t, name,                                                         \
                      (cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t xd,       \
                       const void *x, const cudnnFilterDescriptor_t wd, const void *w,             \
                       const cudnnConvolutionDescriptor_t cd, cudnnConvolutionFwdAlgo_t algo,      \
                       void *ws, size_t wss, const void *beta,                                     \
                       const cudnnTensorDescriptor_t yd, void *y),                                 \
                      (h, alpha, xd, x, wd, w, cd, algo, ws, wss, beta, yd, y), CD_NARGS,          \
                      CD_READ(sub, cd_tensor(&g, xd); cd_filter(&g, wd); cd_tensor(&g, yd);),      \
                      CD_ARGS(g))
#define CD_CONV_BWD_DATA(name, sub)                                                                \
    OPP_WRAP_RET_PREP(cudnnStatus_t, name,                                                         \
                      (cudnnHandle_t h, const void *alpha, const cudnnFilterDescriptor_t wd,       \
                       const void *w, const cudnnTensorDescriptor_t dyd, const void *dy,           \
                       const cudnnConvolutionDescriptor_t cd, cudnnConvolutionBwdDataAlgo_t algo,  \
                       void *ws, size_t wss, const void *beta,                                     \
                       const cudnnTensorDescriptor_t dxd, void *dx),                               \
                      (h, alpha, wd, w, dyd, dy, cd, algo, ws, wss, beta, dxd, dx), CD_NARGS,      \
                      CD_READ(sub, cd_tensor(&g, dxd); cd_filter(&g, wd); cd_tensor(&g, dyd);),    \
                      CD_ARGS(g))
#define CD_CONV_BWD_FILTER(name, sub)                                                              \
    OPP_WRAP_RET_PREP(cudnnStatus_t, name,                                                         \
                      (cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t xd,       \
                       const void *x, const cudnnTensorDescriptor_t dyd, const void *dy,           \
                       const cudnnConvolutionDescriptor_t cd,                                      \
                       cudnnConvolutionBwdFilterAlgo_t algo, void *ws, size_t wss,                 \
                       const void *beta, const cudnnFilterDescriptor_t dwd, void *dw),             \
                      (h, alpha, xd, x, dyd, dy, cd, algo, ws, wss, beta, dwd, dw), CD_NARGS,      \
                      CD_READ(sub, cd_tensor(&g, xd); cd_filter(&g, dwd); cd_tensor(&g, dyd);),    \
                      CD_ARGS(g))
/* Batch norm: x, y, and the scale/bias/mean/variance shape. */
#define CD_BN_TRAIN(name, sub)                                                                     \
    OPP_WRAP_RET_PREP(cudnnStatus_t, name,                                                         \
                      (cudnnHandle_t h, cudnnBatchNormMode_t mode, const void *alpha,              \
                       const void *beta, const cudnnTensorDescriptor_t xd, const void *x,          \
                       const cudnnTensorDescriptor_t yd, void *y,                                  \
                       const cudnnTensorDescriptor_t bnd, const void *scale, const void *bias,     \
                       double factor, void *rmean, void *rvar, double eps, void *smean,            \
                       void *sinvvar),                                                             \
                      (h, mode, alpha, beta, xd, x, yd, y, bnd, scale, bias, factor, rmean, rvar,  \
                       eps, smean, sinvvar),                                                       \
                      CD_NARGS,                                                                    \
                      CD_READ(sub, cd_tensor(&g, xd); cd_tensor(&g, yd); cd_tensor(&g, bnd);),     \
                      CD_ARGS(g))
#define CD_BN_INFER(name, sub)                                                                     \
    OPP_WRAP_RET_PREP(cudnnStatus_t, name,                                                         \
                      (cudnnHandle_t h, cudnnBatchNormMode_t mode, const void *alpha,              \
                       const void *beta, const cudnnTensorDescriptor_t xd, const void *x,          \
                       const cudnnTensorDescriptor_t yd, void *y,                                  \
                       const cudnnTensorDescriptor_t bnd, const void *scale, const void *bias,     \
                       const void *mean, const void *var, double eps),                             \
                      (h, mode, alpha, beta, xd, x, yd, y, bnd, scale, bias, mean, var, eps),      \
                      CD_NARGS,                                                                    \
                      CD_READ(sub, cd_tensor(&g, xd); cd_tensor(&g, yd); cd_tensor(&g, bnd);),     \
                      CD_ARGS(g))
#define CD_SOFTMAX(name, sub)                                                                      \
    OPP_WRAP_RET_PREP(cudnnStatus_t, name,                                                         \
                      (cudnnHandle_t h, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode,     \
                       const void *alpha, const cudnnTensorDescriptor_t xd, const void *x,         \
                       const void *beta, const cudnnTensorDescriptor_t yd, void *y),               \
                      (h, algo, mode, alpha, xd, x, beta, yd, y), CD_NARGS,                        \
                      CD_READ(sub, cd_tensor(&g, xd); cd_tensor(&g, yd);), CD_ARGS(g))
/* Pooling, activation: an operator descriptor, x and y. */
#define CD_XY(name, sub, D)                                                                        \
    OPP_WRAP_RET_PREP(cudnnStatus_t, name,                                                         \
                      (cudnnHandle_t h, D od, const void *alpha,                                   \
                       const cudnnTensorDescriptor_t xd, const void *x, const void *beta,          \
                       const cudnnTensorDescriptor_t yd, void *y),                                 \
                      (h, od, alpha, xd, x, beta, yd, y), CD_NARGS,                                \
                      CD_READ(sub, cd_tensor(&g, xd); cd_tensor(&g, yd);), CD_ARGS(g))
/* RNN data (x, y): [max sequence length, batch, vector size] whatever the
 * layout; hidden state h: its tensor, [layers x directions, batch, hidden]. */
typedef cudnnStatus_t (*cd_get_rnn_data_t)(cudnnRNNDataDescriptor_t, cudnnDataType_t *,
                                           cudnnRNNDataLayout_t *, int *, int *, int *, int, int *,
                                           void *);
static void cd_rnn_data(struct cd_args *g, cudnnRNNDataDescriptor_t d)
{
    static void *_Atomic fn;
    cd_get_rnn_data_t get = (cd_get_rnn_data_t)cd_sym(&fn, "cudnnGetRNNDataDescriptor");
    int dims[3] = {0, 0, 0};
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    cudnnRNNDataLayout_t layout;
    /* arrayLengthRequested 0: no sequence lengths; the padding fill (one
       element, at most a double) must have somewhere to go, or it fails */
    double fill;
    int ok = d && get && get(d, &dt, &layout, &dims[0], &dims[1], &dims[2], 0, NULL, &fill) ==
                             CUDNN_STATUS_SUCCESS;
    cd_put(g, 3, dims, dt, ok);
}

/* Sequence data (attention q, k, v, o): [batch, beam, time, vector], the
 * dims indexed by cudnnSeqDataAxis_t whatever their order in memory. */
typedef cudnnStatus_t (*cd_get_seq_t)(const cudnnSeqDataDescriptor_t, cudnnDataType_t *, int *, int,
                                      int *, cudnnSeqDataAxis_t *, size_t *, size_t, int *, void *);
static void cd_seq(struct cd_args *g, cudnnSeqDataDescriptor_t d)
{
    static void *_Atomic fn;
    cd_get_seq_t get = (cd_get_seq_t)cd_sym(&fn, "cudnnGetSeqDataDescriptor");
    int dim[CUDNN_SEQDATA_DIM_COUNT] = {0}, nb = 0;
    cudnnSeqDataAxis_t axes[CUDNN_SEQDATA_DIM_COUNT];
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    size_t nseq = 0;
    int ok = d && get &&
             get(d, &dt, &nb, CUDNN_SEQDATA_DIM_COUNT, dim, axes, &nseq, 0, NULL, NULL) ==
                 CUDNN_STATUS_SUCCESS &&
             nb == CUDNN_SEQDATA_DIM_COUNT;
    int out[4] = {dim[CUDNN_SEQDATA_BATCH_DIM], dim[CUDNN_SEQDATA_BEAM_DIM],
                  dim[CUDNN_SEQDATA_TIME_DIM], dim[CUDNN_SEQDATA_VECT_DIM]};
    cd_put(g, 4, out, dt, ok);
}

/* Copy the status and the recorded values to a_: how many. */
static unsigned cd_out(uint64_t *a, uint64_t status, const struct cd_args *g)
{
    a[0] = status;
    for (unsigned i = 0; i < g->at; i++)
        a[1 + i] = g->v[i];
    return 1 + g->at;
}
_Static_assert(1 + CD_NV <= OPP_MAX_ARGS, "attention's arguments fit");

/* cuDNN 9's cudnnRNNForward: x, y, h. */
#define CD_RNN_FWD(name, sub)                                                                      \
    OPP_WRAP_RET_FILL(cudnnStatus_t, name,                                                         \
                      (cudnnHandle_t h, cudnnRNNDescriptor_t rd, cudnnForwardMode_t mode,          \
                       const int32_t devSeqLengths[], cudnnRNNDataDescriptor_t xd, const void *x,  \
                       cudnnRNNDataDescriptor_t yd, void *y, cudnnTensorDescriptor_t hd,           \
                       const void *hx, void *hy, cudnnTensorDescriptor_t cdd, const void *cx,      \
                       void *cy, size_t wss, const void *wsp, size_t wks, void *wk, size_t rss,    \
                       void *rs),                                                                  \
                      (h, rd, mode, devSeqLengths, xd, x, yd, y, hd, hx, hy, cdd, cx, cy, wss, wsp, \
                       wks, wk, rss, rs),                                                          \
                      ({                                                                           \
                          struct cd_args g;                                                        \
                          cd_begin(&g, OPP_SUB_##sub);                                             \
                          cd_rnn_data(&g, xd);                                                     \
                          cd_rnn_data(&g, yd);                                                     \
                          cd_tensor(&g, hd);                                                       \
                          cd_out(a_, (uint64_t)r_, &g);                                            \
                      }))
/* Multi-head attention forward: q, k, v, o. */
#define CD_MHA_FWD(name, sub)                                                                      \
    OPP_WRAP_RET_FILL(cudnnStatus_t, name,                                                         \
                      (cudnnHandle_t h, const cudnnAttnDescriptor_t ad, int currIdx,               \
                       const int loWinIdx[], const int hiWinIdx[], const int devSeqLengthsQO[],    \
                       const int devSeqLengthsKV[], const cudnnSeqDataDescriptor_t qd,             \
                       const void *q, const void *res, const cudnnSeqDataDescriptor_t kd,          \
                       const void *k, const cudnnSeqDataDescriptor_t vd, const void *v,            \
                       const cudnnSeqDataDescriptor_t od, void *o, size_t wss, const void *w,      \
                       size_t wks, void *wk, size_t rss, void *rs),                                \
                      (h, ad, currIdx, loWinIdx, hiWinIdx, devSeqLengthsQO, devSeqLengthsKV, qd, q, \
                       res, kd, k, vd, v, od, o, wss, w, wks, wk, rss, rs),                        \
                      ({                                                                           \
                          struct cd_args g;                                                        \
                          cd_begin(&g, OPP_SUB_##sub);                                             \
                          cd_seq(&g, qd);                                                          \
                          cd_seq(&g, kd);                                                          \
                          cd_seq(&g, vd);                                                          \
                          cd_seq(&g, od);                                                          \
                          cd_out(a_, (uint64_t)r_, &g);                                            \
                      }))
#define CD_CALL(name, params, args) OPP_WRAP_RET(cudnnStatus_t, name, params, args, 1, ((uint64_t)r_))

#define OPP_CUDNN_DEFINE(name, lib, kind, flags, dtype, cls, ...) cls(name, __VA_ARGS__)
OPP_CUDNN_LEGACY_FUNCS(OPP_CUDNN_DEFINE)

#endif /* OPP_HAVE_CUDNN */
