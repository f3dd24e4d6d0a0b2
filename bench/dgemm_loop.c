/* Benchmark load: a tight loop of cblas_dgemm on 1x1x1 matrices (a wrapper that records shapes). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static double gemm1(void)
{
    double a = 1.0, b = 2.0, c = 0.0;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0, &a, 1, &b, 1, 0.0, &c, 1);
    return c;
}

int main(int argc, char **argv)
{
    long iters = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
    long warm = argc > 2 ? strtol(argv[2], NULL, 10) : 1;
    if (argc > 3 || iters <= 0 || warm < 1) {
        fprintf(stderr, "usage: %s ITERATIONS [WARMUP_CALLS >= 1]\n", argv[0]);
        return 2;
    }
    double sum = 0.0;
    for (long i = 0; i < warm; i++)
        sum += gemm1();
    long long c0 = now_ns(CLOCK_THREAD_CPUTIME_ID), t0 = now_ns(CLOCK_MONOTONIC);
    for (long i = 0; i < iters; i++)
        sum += gemm1();
    long long t1 = now_ns(CLOCK_MONOTONIC), c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    /* Wall time, and this thread's CPU time (which leaves out time spent
     * preempted: on a busy machine only the second is the call's cost). */
    printf("ns_per_call=%.3f cpu_ns_per_call=%.3f calls=%ld\n", (double)(t1 - t0) / (double)iters,
           (double)(c1 - c0) / (double)iters, iters + warm);
    return sum == 2.0 * (double)(iters + warm) ? 0 : 1;
}
