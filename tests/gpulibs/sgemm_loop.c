/* Cost of a recorded cuBLAS call: cublasSgemm on a NULL handle (it fails
 * at once, so the library's own work is small and fixed) n times; prints
 * ns per call. Run bare and under the preload to see the wrapper's cost. */
#include <cublas_v2.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    float a[1] = {0};
    struct timespec t0, t1;
    int bad = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++)
        bad += cublasSgemm(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 64, 32, 48, a, a, 64, a, 48, a, a, 64) !=
               CUBLAS_STATUS_SUCCESS;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%ld calls, %d failed, %.1f ns/call\n", n, bad, ns / (double)n);
    return 0;
}
