/* Benchmark load: THREADS threads each making CALLS cblas_ddot(n=1) calls
 * flat out, started together; prints the calls made and the wall ns per
 * call of the slowest thread. */
#include <cblas.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long calls;
static pthread_barrier_t start;

static void *work(void *p)
{
    double x = 1.0, y = 2.0, sum = 0.0;
    pthread_barrier_wait(&start);
    for (long i = 0; i < calls; i++)
        sum += cblas_ddot(1, &x, 1, &y, 1);
    *(double *)p = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 0;
    calls = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
    if (argc != 3 || threads < 1 || threads > 64 || calls < 1) {
        fprintf(stderr, "usage: %s THREADS CALLS_PER_THREAD\n", argv[0]);
        return 2;
    }
    pthread_t th[64];
    double sums[64];
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, work, &sums[i]);
    struct timespec t0, t1;
    pthread_barrier_wait(&start);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long long ns = (t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
    int ok = 1;
    for (int i = 0; i < threads; i++)
        ok &= sums[i] == 2.0 * (double)calls;
    printf("calls=%ld wall_ns_per_call=%.1f\n", (long)threads * calls,
           (double)ns / (double)calls);
    return ok ? 0 : 1;
}
