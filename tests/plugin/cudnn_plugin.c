/* A plugin that links cuDNN and calls it through its PLT (where a
 * preload's wrappers come first): loaded and unloaded by
 * tests/progs/unload.c. */
#include <cudnn.h>

/* A softmax over a [2, 3, 4, 5] tensor without a handle (no GPU needed):
 * cuDNN refuses it, and its wrapper reads the tensor's descriptor back
 * all the same. Its status, or -1 when the descriptor could not be made. */
double plugin_run(void)
{
    cudnnTensorDescriptor_t x;
    float one = 1, zero = 0;
    if (cudnnCreateTensorDescriptor(&x))
        return -1;
    cudnnStatus_t s =
        cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 4, 5);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSoftmaxForward(NULL, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, x,
                                NULL, &zero, x, NULL);
    else
        s = -1;
    cudnnDestroyTensorDescriptor(x);
    return s;
}
