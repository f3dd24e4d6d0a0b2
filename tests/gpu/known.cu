// Known GPU work for scripts/gpu-validate.sh, built with nvcc's defaults
// (static cudart): 10 x scale, 5 x add, 2 copies HtoD and 1 DtoH of 64 MiB,
// 1 memset. Prints what it did, so the profile can be checked against it.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void scale(float *x, float a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }
__global__ void add(float *x, const float *y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += y[i]; }

int main()
{
    const int n = 16 << 20; // 64 MiB of floats
    float *h = (float *)malloc(n * sizeof(float)), *x, *y;
    for (int i = 0; i < n; i++) h[i] = 1.0f;
    if (cudaMalloc(&x, n * sizeof(float)) || cudaMalloc(&y, n * sizeof(float))) { printf("no GPU\n"); return 1; }
    cudaMemcpy(x, h, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(y, h, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(y, 0, n * sizeof(float));
    for (int k = 0; k < 10; k++) scale<<<n / 256, 256>>>(x, 1.0f, n);
    for (int k = 0; k < 5; k++) add<<<n / 256, 256>>>(x, y, n);
    cudaMemcpy(h, x, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaError_t e = cudaDeviceSynchronize();
    printf("known: kernels scale=10 add=5 memcpy_htod=2 memcpy_dtoh=1 memset=1 bytes=%zu status=%d h0=%g\n",
           (size_t)n * sizeof(float), (int)e, h[0]);
    cudaFree(x), cudaFree(y), free(h);
    return 0;
}
