/* Benchmark load: a tight loop of cblas_ddot(n=1); prints ns per call from the program's own clock. */
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

int main(int argc, char **argv)
{
    long iters = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
    long warm = argc > 2 ? strtol(argv[2], NULL, 10) : 1;
    if (argc > 3 || iters <= 0 || warm < 1) {
        fprintf(stderr, "usage: %s ITERATIONS [WARMUP_CALLS >= 1]\n", argv[0]);
        return 2;
    }
    /* Untimed first: binds the symbol, attaches the thread, touches the ring. */
    double x = 1.0, y = 2.0, sum = 0.0;
    for (long i = 0; i < warm; i++)
        sum += cblas_ddot(1, &x, 1, &y, 1);
    long long wall0 = now_ns(CLOCK_REALTIME), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID),
              t0 = now_ns(CLOCK_MONOTONIC);
    for (long i = 0; i < iters; i++)
        sum += cblas_ddot(1, &x, 1, &y, 1);
    long long t1 = now_ns(CLOCK_MONOTONIC), c1 = now_ns(CLOCK_THREAD_CPUTIME_ID),
              wall1 = now_ns(CLOCK_REALTIME);
    /* Wall time, and this thread's CPU time (which leaves out time spent
     * preempted: on a busy machine only the second is the call's cost).
     * calls: every call made, warm-up included. start_ns/end_ns: CLOCK_REALTIME
     * of the timed loop, so the caller can time what happens after it. */
    printf("ns_per_call=%.3f cpu_ns_per_call=%.3f calls=%ld start_ns=%lld end_ns=%lld\n",
           (double)(t1 - t0) / (double)iters, (double)(c1 - c0) / (double)iters, iters + warm,
           wall0, wall1);
    fflush(stdout); /* visible before the preload's exit handler waits for the collector */
    return sum == 2.0 * (double)(iters + warm) ? 0 : 1;
}
