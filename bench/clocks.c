/* Benchmark: the cost of one clock read, clock_gettime(CLOCK_MONOTONIC) against rdtsc. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long iters = argc > 1 ? strtol(argv[1], NULL, 10) : 10000000;
    if (argc > 2 || iters <= 0) {
        fprintf(stderr, "usage: %s ITERATIONS\n", argv[0]);
        return 2;
    }
    /* Every read feeds the sum, so none can be dropped or hoisted. */
    uint64_t sink = 0;
    long long t0 = now_ns();
    for (long i = 0; i < iters; i++)
        sink += (uint64_t)now_ns();
    long long t1 = now_ns();
    for (long i = 0; i < iters; i++)
        sink += __rdtsc();
    long long t2 = now_ns();
    printf("clock_gettime_ns=%.3f rdtsc_ns=%.3f sink=%llu\n", (double)(t1 - t0) / (double)iters,
           (double)(t2 - t1) / (double)iters, (unsigned long long)(sink & 1));
    return 0;
}
