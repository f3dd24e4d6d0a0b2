/* A "CUDA program" for the test double of the runtime (cuda_double.c):
 * known device work, so the report's GPU columns can be checked exactly.
 *   gpu_app [term]    term: die of SIGTERM after the work, before exit
 *   gpu_app errstr    only two cudaGetErrorString calls (a call without a status) */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "errstr")) { /* two calls that return a string */
        printf("%s, %s\n", cudaGetErrorString(cudaErrorInvalidValue),
               cudaGetErrorString(cudaSuccess));
        return 0;
    }
    size_t n = 1 << 20;
    char *h = malloc(n), *back = malloc(n), *d = NULL;
    memset(h, 0x5a, n);
    int rc = (int)cudaMalloc((void **)&d, n);                                 /* 1 MiB */
    rc |= cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);                                        /* 65536 ns */
    for (unsigned i = 0; i < 3; i++) {                                   /* 10, 11, 12 us */
        dim3 grid = {10 + i, 1, 1}, block = {256, 1, 1};
        rc |= cudaLaunchKernel("_Z4stepPfi", grid, block, NULL, 0, NULL);
    }
    rc |= cudaGraphLaunch((cudaGraphExec_t)3, NULL);                              /* 3 x 2 us */
    rc |= cudaDeviceSynchronize();
    rc |= cudaMemcpy(back, d, n, cudaMemcpyDeviceToHost);                                     /* 65536 ns */
    rc |= cudaFree(d);
    printf("gpu_app rc=%d same=%d\n", rc, memcmp(h, back, n) == 0);
    fflush(stdout);
    if (argc > 1 && !strcmp(argv[1], "term"))
        raise(SIGTERM);
    free(h), free(back);
    return rc;
}
