/* The timing harness of the benchmark loads: arguments ITERATIONS
 * [WARMUP_CALLS >= 1], the warm-up untimed (it binds the symbol, attaches
 * the thread, touches the ring), then the timed loop. Prints wall and this
 * thread's CPU ns per call (CPU time leaves out time spent preempted: on a
 * busy machine only it is the call's cost), every call made (warm-up
 * included), and CLOCK_REALTIME around the timed loop, so the caller can
 * time what happens after it. */
#ifndef OPP_BENCH_LOOP_H
#define OPP_BENCH_LOOP_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* 0, or 2 after the usage line. */
static int bench_args(int argc, char **argv, long *iters, long *warm)
{
    *iters = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
    *warm = argc > 2 ? strtol(argv[2], NULL, 10) : 1;
    if (argc > 3 || *iters <= 0 || *warm < 1) {
        fprintf(stderr, "usage: %s ITERATIONS [WARMUP_CALLS >= 1]\n", argv[0]);
        return 2;
    }
    return 0;
}

#define BENCH_RUN(iters, warm, body)                                                               \
    do {                                                                                           \
        for (long i_ = 0; i_ < (warm); i_++) {                                                     \
            body;                                                                                  \
        }                                                                                          \
        long long w0_ = now_ns(CLOCK_REALTIME), c0_ = now_ns(CLOCK_THREAD_CPUTIME_ID),             \
                  t0_ = now_ns(CLOCK_MONOTONIC);                                                   \
        for (long i_ = 0; i_ < (iters); i_++) {                                                    \
            body;                                                                                  \
        }                                                                                          \
        long long t1_ = now_ns(CLOCK_MONOTONIC), c1_ = now_ns(CLOCK_THREAD_CPUTIME_ID),            \
                  w1_ = now_ns(CLOCK_REALTIME);                                                    \
        printf("ns_per_call=%.3f cpu_ns_per_call=%.3f calls=%ld start_ns=%lld end_ns=%lld\n",      \
               (double)(t1_ - t0_) / (double)(iters), (double)(c1_ - c0_) / (double)(iters),       \
               (iters) + (warm), w0_, w1_);                                                        \
        fflush(stdout); /* before the preload's exit handler waits for the collector */           \
    } while (0)

#endif
