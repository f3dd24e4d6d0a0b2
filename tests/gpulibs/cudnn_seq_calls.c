/* Describes an LSTM and a multi-head attention's sequence data to cuDNN
 * (host descriptors) and runs cudnnRNNForward and cudnnMultiHeadAttnForward,
 * printing each status. Without a GPU the handle is NULL and both fail. */
#include <cudnn.h>
#include <stdio.h>

#define SHOW(name, call) printf("%s %d\n", name, (int)(call))

int main(void)
{
    cudnnHandle_t h = NULL;
    if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS)
        h = NULL;
    /* LSTM, 2 layers, input 16, hidden 32; x [10 steps, batch 4, 16] */
    cudnnRNNDescriptor_t rnn;
    cudnnRNNDataDescriptor_t x, y;
    cudnnTensorDescriptor_t hd, cd;
    int lens[4] = {10, 9, 8, 7};
    float pad = 0;
    cudnnCreateRNNDescriptor(&rnn);
    SHOW("set rnn", cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS,
                                             CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT,
                                             CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, 16, 32, 32, 2, NULL, 0));
    cudnnCreateRNNDataDescriptor(&x);
    cudnnCreateRNNDataDescriptor(&y);
    SHOW("set x", cudnnSetRNNDataDescriptor(x, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, 10, 4,
                                            16, lens, &pad));
    SHOW("set y", cudnnSetRNNDataDescriptor(y, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, 10, 4,
                                            32, lens, &pad));
    int hdims[3] = {2, 4, 32}, hstr[3] = {128, 32, 1};
    cudnnCreateTensorDescriptor(&hd);
    cudnnCreateTensorDescriptor(&cd);
    cudnnSetTensorNdDescriptor(hd, CUDNN_DATA_FLOAT, 3, hdims, hstr);
    cudnnSetTensorNdDescriptor(cd, CUDNN_DATA_FLOAT, 3, hdims, hstr);
    SHOW("cudnnRNNForward", cudnnRNNForward(h, rnn, CUDNN_FWD_MODE_INFERENCE, NULL, x, NULL, y, NULL, hd, NULL,
                                            NULL, cd, NULL, NULL, 0, NULL, 0, NULL, 0, NULL));

    /* attention: q and o [batch 2, beam 1, 5 steps, 64], k and v 7 steps,
       stored time-major (axes in memory order: time, batch, beam, vector) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    cudnnSeqDataDescriptor_t q, k, v, o;
    cudnnSeqDataAxis_t axes[4] = {CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM,
                                  CUDNN_SEQDATA_VECT_DIM};
    int qdim[4], kdim[4], qlen[2] = {5, 5}, klen[2] = {7, 7};
    qdim[CUDNN_SEQDATA_TIME_DIM] = 5, kdim[CUDNN_SEQDATA_TIME_DIM] = 7;
    qdim[CUDNN_SEQDATA_BATCH_DIM] = kdim[CUDNN_SEQDATA_BATCH_DIM] = 2;
    qdim[CUDNN_SEQDATA_BEAM_DIM] = kdim[CUDNN_SEQDATA_BEAM_DIM] = 1;
    qdim[CUDNN_SEQDATA_VECT_DIM] = kdim[CUDNN_SEQDATA_VECT_DIM] = 64;
    cudnnCreateSeqDataDescriptor(&q);
    cudnnCreateSeqDataDescriptor(&k);
    cudnnCreateSeqDataDescriptor(&v);
    cudnnCreateSeqDataDescriptor(&o);
    SHOW("set q", cudnnSetSeqDataDescriptor(q, CUDNN_DATA_FLOAT, 4, qdim, axes, 2, qlen, NULL));
    SHOW("set k", cudnnSetSeqDataDescriptor(k, CUDNN_DATA_FLOAT, 4, kdim, axes, 2, klen, NULL));
    SHOW("set v", cudnnSetSeqDataDescriptor(v, CUDNN_DATA_FLOAT, 4, kdim, axes, 2, klen, NULL));
    SHOW("set o", cudnnSetSeqDataDescriptor(o, CUDNN_DATA_FLOAT, 4, qdim, axes, 2, qlen, NULL));
    cudnnAttnDescriptor_t attn;
    cudnnCreateAttnDescriptor(&attn);
    int lo[5] = {0}, hi[5] = {7, 7, 7, 7, 7};
    SHOW("cudnnMultiHeadAttnForward",
         cudnnMultiHeadAttnForward(h, attn, -1, lo, hi, NULL, NULL, q, NULL, NULL, k, NULL, v, NULL, o, NULL, 0,
                                   NULL, 0, NULL, 0, NULL));
    SHOW("cudnnMultiHeadAttnForward null",
         cudnnMultiHeadAttnForward(h, NULL, -1, lo, hi, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                   NULL, NULL, 0, NULL, 0, NULL, 0, NULL));
#pragma GCC diagnostic pop
    return 0;
}
