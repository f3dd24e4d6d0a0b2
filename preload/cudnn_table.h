/* cuDNN 9 legacy entry points: X(name, lib, kind, flags, dtype, signature
 * class, sub-operator) as every table (funcs.h). Each returns a
 * cudnnStatus_t, recorded first. The operators record TENSORS, named
 * "cudnn::<sub>", with the dims their descriptors hold, read with cuDNN's
 * own getters (host calls, no GPU needed), in the forward sense: x, w, y
 * (grouped convolutions: w is [K, C/groups, R, S] as cuDNN stores it). */
#define OPP_CUDNN_LEGACY_FUNCS(X)                                                         \
    X(cudnnConvolutionForward, cudnn, TENSORS, SN, NONE, CD_CONV_FWD, CONV)               \
    X(cudnnConvolutionBackwardData, cudnn, TENSORS, SN, NONE, CD_CONV_BWD_DATA, CONV_BWD_DATA) \
    X(cudnnConvolutionBackwardFilter, cudnn, TENSORS, SN, NONE, CD_CONV_BWD_FILTER, CONV_BWD_FILTER) \
    X(cudnnBatchNormalizationForwardTraining, cudnn, TENSORS, SN, NONE, CD_BN_TRAIN, BATCH_NORM) \
    X(cudnnBatchNormalizationForwardInference, cudnn, TENSORS, SN, NONE, CD_BN_INFER, BATCH_NORM) \
    X(cudnnSoftmaxForward, cudnn, TENSORS, SN, NONE, CD_SOFTMAX, SOFTMAX)                 \
    X(cudnnPoolingForward, cudnn, TENSORS, SN, NONE, CD_XY, POOLING, cudnnPoolingDescriptor_t) \
    X(cudnnActivationForward, cudnn, TENSORS, SN, NONE, CD_XY, ELTWISE, cudnnActivationDescriptor_t) \
    X(cudnnCreate, cudnn, PLAIN, S, NONE, CD_CALL, (cudnnHandle_t * h), (h))             \
    X(cudnnDestroy, cudnn, PLAIN, S, NONE, CD_CALL, (cudnnHandle_t h), (h))              \
    X(cudnnSetStream, cudnn, PLAIN, S, NONE, CD_CALL, (cudnnHandle_t h, cudaStream_t s), (h, s)) \
    X(cudnnRNNForward, cudnn, TENSORS, SN, NONE, CD_RNN_FWD, RNN)                         \
    X(cudnnMultiHeadAttnForward, cudnn, TENSORS, SN, NONE, CD_MHA_FWD, ATTENTION)

/* The backend (graph) API, expanded in cudnn_graph.c: descriptor calls
 * record their status; what SetAttribute is told about tensors, operations,
 * graphs, engines, engine configs and plans is kept per descriptor, so that
 * cudnnBackendExecute records its plan's operation (cudnn::convolution,
 * cudnn::matmul, ...; several operations: cudnn::graph). */
#define OPP_CUDNN_GRAPH_FUNCS(X)                                                          \
    X(cudnnBackendCreateDescriptor, cudnn, PLAIN, S, NONE, CDG_CREATE)                    \
    X(cudnnBackendSetAttribute, cudnn, PLAIN, S, NONE, CDG_SET)                           \
    X(cudnnBackendGetAttribute, cudnn, PLAIN, S, NONE, CDG_GET)                           \
    X(cudnnBackendFinalize, cudnn, PLAIN, S, NONE, CDG_FINALIZE)                          \
    X(cudnnBackendDestroyDescriptor, cudnn, PLAIN, S, NONE, CDG_DESTROY)                  \
    X(cudnnBackendExecute, cudnn, TENSORS, SN, NONE, CDG_EXECUTE)

#define OPP_CUDNN_FUNCS(X) OPP_CUDNN_LEGACY_FUNCS(X) OPP_CUDNN_GRAPH_FUNCS(X)
