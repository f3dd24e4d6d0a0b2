/* cuDNN wrappers, generated from tables/cudnn.h. An operator's tensors are
 * read from its descriptors after the call with cuDNN's getters, reached
 * in the already loaded libcudnn.so.9 (never through our own table). */
#include "core/internal.h" /* funcs.h: OPP_HAVE_CUDNN when the header is installed */
#ifdef OPP_HAVE_CUDNN
#include <stdatomic.h>

#include "libs/gpulibs.h"

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

/* A getter of the loaded libcudnn.so.9, kept in cache (an OPP_FOUND: a
 * cuDNN unloaded and loaded again elsewhere is looked up again). */
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
    static OPP_FOUND(fn);
    cd_get_tensor_t get = (cd_get_tensor_t)cd_sym(&fn, "cudnnGetTensorNdDescriptor");
    int rank = 0, dims[8], strides[8];
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    cd_put(g, rank, dims, dt,
           d && get && get(d, 8, &dt, &rank, dims, strides) == CUDNN_STATUS_SUCCESS);
    (void)rank;
}

static void cd_filter(struct cd_args *g, cudnnFilterDescriptor_t d)
{
    static OPP_FOUND(fn);
    cd_get_filter_t get = (cd_get_filter_t)cd_sym(&fn, "cudnnGetFilterNdDescriptor");
    int rank = 0, dims[8];
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    cudnnTensorFormat_t fmt;
    int ok = d && get && get(d, 8, &dt, &fmt, &rank, dims) == CUDNN_STATUS_SUCCESS;
    cd_put(g, rank, dims, dt, ok);
}

/* RNN data (x, y): [max sequence length, batch, vector size] whatever the
 * layout; hidden state h: its tensor, [layers x directions, batch, hidden]. */
typedef cudnnStatus_t (*cd_get_rnn_data_t)(cudnnRNNDataDescriptor_t, cudnnDataType_t *,
                                           cudnnRNNDataLayout_t *, int *, int *, int *, int, int *,
                                           void *);
static void cd_rnn_data(struct cd_args *g, cudnnRNNDataDescriptor_t d)
{
    static OPP_FOUND(fn);
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
    static OPP_FOUND(fn);
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

OPP_DEFINE_WRAPPERS(OPP_CUDNN_LEGACY_FUNCS)

#endif /* OPP_HAVE_CUDNN */
