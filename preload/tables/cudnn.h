/* cuDNN 9 legacy entry points (libs/cudnn.c): X(L, name, kind, flags,
 * dtype, signature class, sub-operator) as every table (funcs.h). Each returns a
 * cudnnStatus_t, recorded first. The operators record TENSORS, named
 * "cudnn::<sub>", with the dims their descriptors hold, read with cuDNN's
 * own getters (host calls, no GPU needed), in the forward sense: x, w, y
 * (grouped convolutions: w is [K, C/groups, R, S] as cuDNN stores it). */
#define OPP_CUDNN_LEGACY_FUNCS(X, L)                                                               \
    X(L, cudnnConvolutionForward, TENSORS, SN, NONE, CD_CONV_FWD, CONV)                            \
    X(L, cudnnConvolutionBackwardData, TENSORS, SN, NONE, CD_CONV_BWD_DATA, CONV_BWD_DATA)         \
    X(L, cudnnConvolutionBackwardFilter, TENSORS, SN, NONE, CD_CONV_BWD_FILTER, CONV_BWD_FILTER)   \
    X(L, cudnnBatchNormalizationForwardTraining, TENSORS, SN, NONE, CD_BN_TRAIN, BATCH_NORM)       \
    X(L, cudnnBatchNormalizationForwardInference, TENSORS, SN, NONE, CD_BN_INFER, BATCH_NORM)      \
    X(L, cudnnSoftmaxForward, TENSORS, SN, NONE, CD_SOFTMAX, SOFTMAX)                              \
    X(L, cudnnPoolingForward, TENSORS, SN, NONE, CD_XY, POOLING, cudnnPoolingDescriptor_t)         \
    X(L, cudnnActivationForward, TENSORS, SN, NONE, CD_XY, ELTWISE, cudnnActivationDescriptor_t)   \
    X(L, cudnnCreate, PLAIN, S, NONE, CD_CALL, (cudnnHandle_t * h), (h))                           \
    X(L, cudnnDestroy, PLAIN, S, NONE, CD_CALL, (cudnnHandle_t h), (h))                            \
    X(L, cudnnSetStream, PLAIN, S, NONE, CD_CALL, (cudnnHandle_t h, cudaStream_t s), (h, s))       \
    X(L, cudnnRNNForward, TENSORS, SN, NONE, CD_RNN_FWD, RNN)                                      \
    X(L, cudnnMultiHeadAttnForward, TENSORS, SN, NONE, CD_MHA_FWD, ATTENTION)

/* The backend (graph) API, expanded in libs/cudnn_graph.c: descriptor calls
 * record their status; what SetAttribute is told about tensors, operations,
 * graphs, engines, engine configs and plans is kept per descriptor, so that
 * cudnnBackendExecute records its plan's operation (cudnn::convolution,
 * cudnn::matmul, ...; several operations: cudnn::graph). */
#define OPP_CUDNN_GRAPH_FUNCS(X, L)                                                                \
    X(L, cudnnBackendCreateDescriptor, PLAIN, S, NONE, CDG_CREATE)                                 \
    X(L, cudnnBackendSetAttribute, PLAIN, S, NONE, CDG_SET)                                        \
    X(L, cudnnBackendGetAttribute, PLAIN, S, NONE, CDG_GET)                                        \
    X(L, cudnnBackendFinalize, PLAIN, S, NONE, CDG_FINALIZE)                                       \
    X(L, cudnnBackendDestroyDescriptor, PLAIN, S, NONE, CDG_DESTROY)                               \
    X(L, cudnnBackendExecute, TENSORS, SN, NONE, CDG_EXECUTE)

#define OPP_CUDNN_FUNCS(X, L) OPP_CUDNN_LEGACY_FUNCS(X, L) OPP_CUDNN_GRAPH_FUNCS(X, L)

/* ---- signature classes: the prototype once, what is recorded ---- */

#define CD_ARGS(g)                                                                                 \
    ((uint64_t)r_, g.v[0], g.v[1], g.v[2], g.v[3], g.v[4], g.v[5], g.v[6], g.v[7], g.v[8],         \
     g.v[9], g.v[10], g.v[11], g.v[12], g.v[13], g.v[14], g.v[15], g.v[16], g.v[17], g.v[18],      \
     g.v[19], g.v[20])
/* Statement run after the call: the tensors, in order. */
#define CD_READ(sub, ...) (struct cd_args g; cd_begin(&g, OPP_SUB_##sub); __VA_ARGS__)
#define CD_CONV_FWD(name, sub)                                                                     \
    OPP_WRAP_RET_PREP(cudnnStatus_t, name,                                                         \
                      (cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t xd,       \
                       const void *x, const cudnnFilterDescriptor_t wd, const void *w,             \
                       const cudnnConvolutionDescriptor_t cd, cudnnConvolutionFwdAlgo_t algo,      \
                       void *ws, size_t wss, const void *beta,                                     \
                       const cudnnTensorDescriptor_t yd, void *y),                                 \
                      (h, alpha, xd, x, wd, w, cd, algo, ws, wss, beta, yd, y),                    \
                      CD_READ(sub, cd_tensor(&g, xd); cd_filter(&g, wd); cd_tensor(&g, yd);),      \
                      CD_ARGS(g))
#define CD_CONV_BWD_DATA(name, sub)                                                                \
    OPP_WRAP_RET_PREP(cudnnStatus_t, name,                                                         \
                      (cudnnHandle_t h, const void *alpha, const cudnnFilterDescriptor_t wd,       \
                       const void *w, const cudnnTensorDescriptor_t dyd, const void *dy,           \
                       const cudnnConvolutionDescriptor_t cd, cudnnConvolutionBwdDataAlgo_t algo,  \
                       void *ws, size_t wss, const void *beta,                                     \
                       const cudnnTensorDescriptor_t dxd, void *dx),                               \
                      (h, alpha, wd, w, dyd, dy, cd, algo, ws, wss, beta, dxd, dx),                \
                      CD_READ(sub, cd_tensor(&g, dxd); cd_filter(&g, wd); cd_tensor(&g, dyd);),    \
                      CD_ARGS(g))
#define CD_CONV_BWD_FILTER(name, sub)                                                              \
    OPP_WRAP_RET_PREP(cudnnStatus_t, name,                                                         \
                      (cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t xd,       \
                       const void *x, const cudnnTensorDescriptor_t dyd, const void *dy,           \
                       const cudnnConvolutionDescriptor_t cd,                                      \
                       cudnnConvolutionBwdFilterAlgo_t algo, void *ws, size_t wss,                 \
                       const void *beta, const cudnnFilterDescriptor_t dwd, void *dw),             \
                      (h, alpha, xd, x, dyd, dy, cd, algo, ws, wss, beta, dwd, dw),                \
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
                      CD_READ(sub, cd_tensor(&g, xd); cd_tensor(&g, yd); cd_tensor(&g, bnd);),     \
                      CD_ARGS(g))
#define CD_SOFTMAX(name, sub)                                                                      \
    OPP_WRAP_RET_PREP(cudnnStatus_t, name,                                                         \
                      (cudnnHandle_t h, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode,     \
                       const void *alpha, const cudnnTensorDescriptor_t xd, const void *x,         \
                       const void *beta, const cudnnTensorDescriptor_t yd, void *y),               \
                      (h, algo, mode, alpha, xd, x, beta, yd, y),                                  \
                      CD_READ(sub, cd_tensor(&g, xd); cd_tensor(&g, yd);), CD_ARGS(g))
/* Pooling, activation: an operator descriptor, x and y. */
#define CD_XY(name, sub, D)                                                                        \
    OPP_WRAP_RET_PREP(cudnnStatus_t, name,                                                         \
                      (cudnnHandle_t h, D od, const void *alpha,                                   \
                       const cudnnTensorDescriptor_t xd, const void *x, const void *beta,          \
                       const cudnnTensorDescriptor_t yd, void *y),                                 \
                      (h, od, alpha, xd, x, beta, yd, y),                                          \
                      CD_READ(sub, cd_tensor(&g, xd); cd_tensor(&g, yd);), CD_ARGS(g))
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
#define CD_CALL(name, params, args) OPP_WRAP_RET(cudnnStatus_t, name, params, args, ((uint64_t)r_))
#define CDG_STATUS ((uint64_t)r_)
#define CDG_CREATE(name)                                                                           \
    OPP_WRAP_RET_PREP(cudnnStatus_t, name,                                                         \
                      (cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t * d), (type, d),  \
                      (if (r_ == CUDNN_STATUS_SUCCESS && d) cdg_created(*d, (uint32_t)type)),      \
                      (CDG_STATUS))
#define CDG_SET(name)                                                                              \
    OPP_WRAP_RET_PREP(cudnnStatus_t, name,                                                         \
                      (cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t attr,               \
                       cudnnBackendAttributeType_t atype, int64_t n, const void *elems),           \
                      (d, attr, atype, n, elems), (cdg_set(d, attr, atype, n, elems)),             \
                      (CDG_STATUS))
#define CDG_GET(name)                                                                              \
    OPP_WRAP_RET_PREP(cudnnStatus_t, name,                                                         \
                      (cudnnBackendDescriptor_t const d, cudnnBackendAttributeName_t attr,         \
                       cudnnBackendAttributeType_t atype, int64_t req, int64_t *count,             \
                       void *elems),                                                               \
                      (d, attr, atype, req, count, elems),                                         \
                      (if (r_ == CUDNN_STATUS_SUCCESS) cdg_get(d, attr, atype, req, count, elems)), \
                      (CDG_STATUS))
#define CDG_FINALIZE(name)                                                                         \
    OPP_WRAP_RET(cudnnStatus_t, name, (cudnnBackendDescriptor_t d), (d), (CDG_STATUS))
/* The entry is forgotten before the real call frees the descriptor, so an
 * address another thread's create gets next is never forgotten after it. */
#define CDG_DESTROY(name)                                                                          \
    OPP_WRAP_RET(cudnnStatus_t, name, (cudnnBackendDescriptor_t d),                                \
                 ((opp_pmap_del(&cdg_map, d), d)), (CDG_STATUS))
#define CDG_EXECUTE(name)                                                                          \
    OPP_WRAP_RET_FILL(cudnnStatus_t, name,                                                         \
                      (cudnnHandle_t h, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t vp), \
                      (h, plan, vp), cdg_fill(a_, r_, plan))
