// A capture range marked with cudaProfilerStart/Stop (tests/e2e/test_capture.c):
// cudaGetDeviceCount once before, twice inside, once after. Prints each status.
#include <cstdio>

#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

int main()
{
    int n = 0;
    printf("before %d\n", (int)cudaGetDeviceCount(&n));
    printf("start %d\n", (int)cudaProfilerStart());
    printf("inside %d\n", (int)cudaGetDeviceCount(&n));
    printf("inside %d\n", (int)cudaGetDeviceCount(&n));
    printf("stop %d\n", (int)cudaProfilerStop());
    printf("after %d\n", (int)cudaGetDeviceCount(&n));
    return 0;
}
