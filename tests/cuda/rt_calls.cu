// CUDA runtime calls with known statuses, for tests/e2e/test_cuda.c.
// Built three ways (tests/tests.mk): -cudart=shared (rt_shared), the same
// with --default-stream per-thread (rt_ptsz: the _ptsz/_ptds entry points),
// and nvcc's default static cudart (rt_static).
//
// Every call the program makes itself prints one line
//   CALL <exported symbol> <status> errno=<errno after the call>
// in call order ("CALL <symbol> nostatus ..." for calls that return no
// status); lines from the second thread start with "THREAD ". errno is set
// to a distinct value before each call (cudart leaves it alone). The test
// compares these lines against the trace, and the whole output with and
// without the preload. A <<<>>> launch prints "LAUNCH <grid>": it is
// __cudaPushCallConfiguration, (once per kernel) __cudaGetKernel,
// __cudaPopCallConfiguration and __cudaLaunchKernel[_ptsz] inside.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <pthread.h>

#include <cuda_runtime.h>

#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#define PTSZ(n) n "_ptsz"
#define PTDS(n) n "_ptds"
#else
#define PTSZ(n) n
#define PTDS(n) n
#endif

__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}

static void report(const char *prefix, const char *sym, int status)
{
    printf("%sCALL %s %d errno=%d\n", prefix, sym, status, errno);
}

static int seq = 100;
#define CALL(sym, expr)                                                                            \
    do {                                                                                           \
        errno = ++seq;                                                                             \
        int s_ = (int)(expr);                                                                      \
        report("", sym, s_);                                                                       \
    } while (0)

struct thread_result {
    int count_status, malloc_status, count_errno, malloc_errno;
};

static void *second_thread(void *arg)
{
    struct thread_result *r = (struct thread_result *)arg;
    int n = -1;
    void *p = nullptr;
    errno = 71;
    r->count_status = (int)cudaGetDeviceCount(&n);
    r->count_errno = errno;
    errno = 72;
    r->malloc_status = (int)cudaMalloc(&p, 128);
    r->malloc_errno = errno;
    return nullptr;
}

int main()
{
    int n = -1, v = -1;
    float *d = nullptr, *h = nullptr;
    float host[64];
    memset(host, 0, sizeof host);
    cudaStream_t st = 0;

    CALL("cudaRuntimeGetVersion", cudaRuntimeGetVersion(&v));
    CALL("cudaDriverGetVersion", cudaDriverGetVersion(&v));
    CALL("cudaGetDeviceCount", cudaGetDeviceCount(&n));
    errno = ++seq;
    const char *msg = cudaGetErrorString(cudaErrorInsufficientDriver);
    printf("CALL cudaGetErrorString nostatus errno=%d (%s)\n", errno, msg ? "text" : "null");
    CALL("cudaMalloc", cudaMalloc(&d, sizeof host));
    // cuda_runtime.h's template cudaMallocHost(T **, size, flags) calls
    // cudaHostAlloc; with void ** it is the exported cudaMallocHost.
    CALL("cudaMallocHost", cudaMallocHost((void **)&h, sizeof host));
    CALL("cudaHostAlloc", cudaMallocHost(&h, sizeof host));
    CALL("cudaStreamCreate", cudaStreamCreate(&st));
    CALL(PTDS("cudaMemset"), cudaMemset(d, 0, sizeof host));
    CALL(PTDS("cudaMemcpy"), cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice));
    CALL(PTSZ("cudaMemcpyAsync"), cudaMemcpyAsync(host, d, sizeof host, cudaMemcpyDeviceToHost, st));
    CALL(PTSZ("cudaMemsetAsync"), cudaMemsetAsync(d, 1, sizeof host, st));
    CALL(PTSZ("cudaStreamSynchronize"), cudaStreamSynchronize(st));

    for (int i = 0; i < 2; i++) {
        printf("LAUNCH %d\n", i + 1);
        scale<<<i + 1, 64>>>(d, 2.0f, 64);
    }
    CALL("cudaGetLastError", cudaGetLastError());

    float a = 3.0f;
    int len = 64;
    void *args[] = {&d, &a, &len};
    CALL(PTSZ("cudaLaunchKernel"), cudaLaunchKernel((const void *)scale, dim3(1), dim3(64), args, 0, st));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(64);
    cfg.stream = st;
    CALL(PTSZ("cudaLaunchKernelExC"), cudaLaunchKernelExC(&cfg, (const void *)scale, args));
    // cuda_runtime_api.h #undefs cudaGraphLaunch for C++: never _ptsz here
    CALL("cudaGraphLaunch", cudaGraphLaunch((cudaGraphExec_t)0, st));
    CALL("cudaDeviceSynchronize", cudaDeviceSynchronize());
    CALL("cudaPeekAtLastError", cudaPeekAtLastError());
    CALL("cudaFree", cudaFree(d));
    CALL("cudaFreeHost", cudaFreeHost(h));

    pthread_t t;
    struct thread_result r;
    if (pthread_create(&t, nullptr, second_thread, &r) != 0 || pthread_join(t, nullptr) != 0)
        return 3;
    errno = r.count_errno;
    report("THREAD ", "cudaGetDeviceCount", r.count_status);
    errno = r.malloc_errno;
    report("THREAD ", "cudaMalloc", r.malloc_status);
    printf("device count %d\n", n);
    return n > 0 ? 0 : 7; // no device here: a distinctive exit code
}
