/* Builds cuDNN backend (graph API) plans for a convolution, a matmul, and a
 * convolution followed by a ReLU, and executes them, printing the statuses
 * of the finalize and execute calls. Descriptors are host objects; without
 * a GPU the engine config and plan do not finalize and execution fails. */
#include <cudnn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef cudnnBackendDescriptor_t desc_t;

static desc_t make(cudnnBackendDescriptorType_t type)
{
    desc_t d = NULL;
    if (cudnnBackendCreateDescriptor(type, &d) != CUDNN_STATUS_SUCCESS)
        printf("create %d failed\n", (int)type);
    return d;
}

static void ref(desc_t d, cudnnBackendAttributeName_t attr, desc_t target)
{
    cudnnBackendSetAttribute(d, attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &target);
}

static void fin(const char *what, desc_t d) { printf("finalize %s %d\n", what, (int)cudnnBackendFinalize(d)); }

/* A packed float tensor of rank n (virtual: an intermediate of a graph). */
static desc_t tensor(int64_t uid, int n, const int64_t *dims, int virt)
{
    desc_t t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    int64_t strides[8], align = 4, s = 1;
    for (int i = n - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
    bool v = virt;
    cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, n, dims);
    cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, n, strides);
    cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &v);
    fin("tensor", t);
    return t;
}

/* x [2,3,8,8] * w [4,3,3,3], no padding -> y [2,4,6,6]. */
static desc_t conv_op(desc_t x, desc_t w, desc_t y)
{
    desc_t cv = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    int64_t sd = 2, pad[] = {0, 0}, one[] = {1, 1};
    cudnnDataType_t ct = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    cudnnBackendSetAttribute(cv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &sd);
    cudnnBackendSetAttribute(cv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &ct);
    cudnnBackendSetAttribute(cv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    cudnnBackendSetAttribute(cv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    cudnnBackendSetAttribute(cv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    cudnnBackendSetAttribute(cv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, one);
    cudnnBackendSetAttribute(cv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, one);
    fin("conv", cv);
    desc_t op = make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    float alpha = 1, beta = 0;
    ref(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x);
    ref(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w);
    ref(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y);
    ref(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, cv);
    cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
    cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
    fin("conv_op", op);
    return op;
}

/* Graph -> engine 0 -> config -> plan, executed once; every descriptor of
 * the chain destroyed before execution but the plan (as cudnn-frontend may). */
static void run_graph(const char *what, cudnnHandle_t h, int n, desc_t *ops)
{
    desc_t g = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    cudnnBackendSetAttribute(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n, ops);
    fin("graph", g);
    desc_t e = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    int64_t index = 0;
    ref(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, g);
    cudnnBackendSetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index);
    fin("engine", e);
    desc_t cfg = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    ref(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, e);
    fin("engine_config", cfg);
    desc_t plan = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    ref(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg);
    fin("plan", plan);
    cudnnBackendDestroyDescriptor(cfg);
    cudnnBackendDestroyDescriptor(e);
    cudnnBackendDestroyDescriptor(g);
    desc_t vp = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    int64_t uids[] = {1, 2, 3};
    void *ptrs[3] = {NULL, NULL, NULL}, *ws = NULL;
    cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
    cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs);
    cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
    fin("variant_pack", vp);
    printf("execute %s %d\n", what, (int)cudnnBackendExecute(h, plan, vp));
    cudnnBackendDestroyDescriptor(vp);
    cudnnBackendDestroyDescriptor(plan);
}

int main(void)
{
    cudnnHandle_t h = NULL;
    printf("cudnnCreate %d\n", (int)cudnnCreate(&h));
    int64_t xd[] = {2, 3, 8, 8}, wd[] = {4, 3, 3, 3}, yd[] = {2, 4, 6, 6};
    desc_t x = tensor(1, 4, xd, 0), w = tensor(2, 4, wd, 0), y = tensor(3, 4, yd, 0);
    desc_t conv = conv_op(x, w, y);
    run_graph("conv", h, 1, &conv);

    /* batched matmul: A [2,16,32] B [2,32,8] -> C [2,16,8] */
    int64_t ad[] = {2, 16, 32}, bd[] = {2, 32, 8}, cd[] = {2, 16, 8};
    desc_t a = tensor(1, 3, ad, 0), b = tensor(2, 3, bd, 0), c = tensor(3, 3, cd, 0);
    desc_t mm = make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    cudnnDataType_t ct = CUDNN_DATA_FLOAT;
    cudnnBackendSetAttribute(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &ct);
    fin("matmul", mm);
    desc_t mop = make(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    ref(mop, CUDNN_ATTR_OPERATION_MATMUL_ADESC, a);
    ref(mop, CUDNN_ATTR_OPERATION_MATMUL_BDESC, b);
    ref(mop, CUDNN_ATTR_OPERATION_MATMUL_CDESC, c);
    ref(mop, CUDNN_ATTR_OPERATION_MATMUL_DESC, mm);
    fin("matmul_op", mop);
    run_graph("matmul", h, 1, &mop);

    /* ReLU first, then the convolution: conv -> virtual t -> relu -> r */
    desc_t t = tensor(4, 4, yd, 1), r = tensor(5, 4, yd, 0);
    desc_t conv2 = conv_op(x, w, t);
    desc_t pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    cudnnPointwiseMode_t mode = CUDNN_POINTWISE_RELU_FWD;
    cudnnBackendSetAttribute(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    cudnnBackendSetAttribute(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &ct);
    fin("pointwise", pw);
    desc_t relu = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    ref(relu, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
    ref(relu, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, t);
    ref(relu, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, r);
    fin("relu_op", relu);
    desc_t ops[] = {relu, conv2};
    run_graph("conv_relu", h, 2, ops);
    run_graph("relu", h, 1, &relu);

    /* robustness: a plan never described, wrong element counts and types */
    printf("execute unknown %d\n", (int)cudnnBackendExecute(h, NULL, NULL));
    int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    printf("set rank9 %d\n",
           (int)cudnnBackendSetAttribute(x, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 9, nine));
    printf("set null %d\n",
           (int)cudnnBackendSetAttribute(conv, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, NULL));
    printf("set type %d\n",
           (int)cudnnBackendSetAttribute(conv, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                                         CUDNN_TYPE_INT64, 1, nine));
    printf("destroy null %d\n", (int)cudnnBackendDestroyDescriptor(NULL));
    return 0;
}
