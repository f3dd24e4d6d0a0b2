/* Describes a grouped convolution and a few other operators to cuDNN
 * (descriptors are host objects and work without a GPU) and calls the
 * operators, printing each status. Without a GPU the handle cannot be made
 * and every operator gets a NULL handle. */
#include <cudnn.h>
#include <stdio.h>

#define SHOW(name, call) printf("%s %d\n", name, (int)(call))

int main(void)
{
    cudnnHandle_t h = NULL;
    cudnnTensorDescriptor_t x, y, bn;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    cudnnPoolingDescriptor_t pool;
    cudnnActivationDescriptor_t act;
    float one = 1, zero = 0;
    int st = cudnnCreate(&h);
    printf("cudnnCreate %d\n", st);
    if (st != CUDNN_STATUS_SUCCESS)
        h = NULL;
    cudnnCreateTensorDescriptor(&x);
    cudnnCreateTensorDescriptor(&y);
    cudnnCreateTensorDescriptor(&bn);
    cudnnCreateFilterDescriptor(&w);
    cudnnCreateConvolutionDescriptor(&conv);
    cudnnCreatePoolingDescriptor(&pool);
    cudnnCreateActivationDescriptor(&act);
    /* x [8, 16, 32, 32], 2 groups: w [32, 8, 3, 3], pad 1 -> y [8, 32, 32, 32] */
    cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 8, 16, 32, 32);
    cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 32, 8, 3, 3);
    cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
    cudnnSetConvolutionGroupCount(conv, 2);
    int n, c, hh, ww;
    cudnnGetConvolution2dForwardOutputDim(conv, x, w, &n, &c, &hh, &ww);
    printf("output %d %d %d %d\n", n, c, hh, ww);
    cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, hh, ww);
    cudnnSetTensor4dDescriptor(bn, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 16, 1, 1);
    cudnnSetPooling2dDescriptor(pool, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2, 2);
    cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0);
    for (int i = 0; i < 2; i++)
        SHOW("cudnnConvolutionForward",
             cudnnConvolutionForward(h, &one, x, NULL, w, NULL, conv,
                                     CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, &zero, y, NULL));
    SHOW("cudnnConvolutionBackwardData",
         cudnnConvolutionBackwardData(h, &one, w, NULL, y, NULL, conv, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0,
                                      NULL, 0, &zero, x, NULL));
    SHOW("cudnnConvolutionBackwardFilter",
         cudnnConvolutionBackwardFilter(h, &one, x, NULL, y, NULL, conv,
                                        CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, NULL, 0, &zero, w, NULL));
    SHOW("cudnnBatchNormalizationForwardTraining",
         cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x, NULL, x, NULL,
                                                bn, NULL, NULL, 0.1, NULL, NULL, 1e-5, NULL, NULL));
    SHOW("cudnnSoftmaxForward", cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL,
                                                    &one, y, NULL, &zero, y, NULL));
    SHOW("cudnnPoolingForward", cudnnPoolingForward(h, pool, &one, x, NULL, &zero, x, NULL));
    SHOW("cudnnActivationForward", cudnnActivationForward(h, act, &one, y, NULL, &zero, y, NULL));
    SHOW("cudnnDestroy", cudnnDestroy(h));
    return 0;
}
