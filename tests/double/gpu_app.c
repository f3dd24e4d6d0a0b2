/* A "CUDA program" for the test double of the runtime (cuda_double.c):
 * known device work, so the report's GPU columns can be checked exactly.
 *   gpu_app [term]    term: die of SIGTERM after the work, before exit
 *   gpu_app errstr    only two cudaGetErrorString calls (a call without a status)
 *   gpu_app driver    cudaGetDevice, then driver calls of its own: 5
 *                     cuDevicePrimaryCtxGetState (a query), 1 cuCtxSynchronize;
 *                     then 1 cudaDeviceSynchronize (its own cuCtxSynchronize inside)
 *   gpu_app _exit     the work, then _exit(0) half a second later (no exit handlers)
 *   gpu_app fork      a child forked before any CUDA call does the work, then
 *                     the parent does it
 *   gpu_app window    kernel "before" (5 us), cudaProfilerStart, 3 "step" kernels
 *                     (10, 11, 12 us), cudaProfilerStop, kernel "after" (7 us)
 *   gpu_app kineto    the work, then a CUPTI client of its own subscribes, as
 *                     torch.profiler's Kineto does, and prints CUPTI's answer
 *   gpu_app term_noalarm  SIGALRM blocked, the work, then die of SIGTERM
 *   gpu_app late      0.3 s after its start, the work
 *   gpu_app ctxdestroy  the work, then cuCtxDestroy
 *   gpu_app running   a step kernel (10 us), then one of 200 ms, and die of
 *                     SIGTERM while it runs
 *   gpu_app buffers   the work, then its own CUPTI buffer callbacks registered
 *                     (as Kineto does when refused the subscription), one
 *                     kernel "after" (4 us), and how many records it got
 *   gpu_app fork_launch  a child forked before any CUDA call launches three
 *                     kernels (10, 11, 12 us) as its first CUDA calls
 *   gpu_app profiler, profiler_teardown  the work, then a profiler of its own, as
 *                     torch.profiler's Kineto: subscribes, registers its
 *                     buffers, turns kernels on, launches two "mid" kernels
 *                     (5, 6 us), flushes, turns kernels off, prints what it
 *                     got; profiler_teardown then unsubscribes and calls
 *                     cuptiFinalize (Kineto's TEARDOWN_CUPTI=1); then one
 *                     kernel "after" (4 us) */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

/* The program's own activity buffers (mode buffers). */
static unsigned long own_records;

static void CUPTIAPI own_request(uint8_t **buf, size_t *size, size_t *max)
{
    *size = 1 << 16;
    *buf = malloc(*size);
    *max = 0;
}

static void CUPTIAPI own_complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
    CUpti_Activity *r = NULL;
    while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
        own_records++;
    free(buf);
}

/* The program's own profiler's API callbacks (mode profiler). */
static unsigned long own_callbacks;

static void CUPTIAPI own_callback(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
    own_callbacks++;
}

static int launch(const char *name, unsigned g)
{
    dim3 grid = {g, 1, 1}, block = {256, 1, 1};
    return (int)cudaLaunchKernel(name, grid, block, NULL, 0, NULL);
}

static int work(void)
{
    size_t n = 1 << 20;
    char *h = malloc(n), *back = malloc(n), *d = NULL;
    memset(h, 0x5a, n);
    int dev = -1, rc = (int)cudaGetDevice(&dev);                  /* not subscribed to */
    rc |= dev;
    rc |= (int)cudaMalloc((void **)&d, n);                        /* 1 MiB */
    rc |= cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);            /* 65536 ns */
    for (unsigned i = 0; i < 3; i++)                              /* 10, 11, 12 us */
        rc |= launch("_Z4stepPfi", 10 + i);
    rc |= cudaGraphLaunch((cudaGraphExec_t)3, NULL);              /* 3 x 2 us */
    rc |= cudaDeviceSynchronize();
    rc |= cudaMemcpy(back, d, n, cudaMemcpyDeviceToHost);         /* 65536 ns */
    rc |= cudaFree(d);
    printf("gpu_app rc=%d same=%d\n", rc, memcmp(h, back, n) == 0);
    fflush(stdout);
    free(h), free(back);
    return rc;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "driver")) { /* the program's own driver calls: 5 queries, a sync */
        int dev = -1, rc = (int)cudaGetDevice(&dev), active = 0;
        unsigned flags = 0;
        for (int i = 0; i < 5; i++)
            rc |= (int)cuDevicePrimaryCtxGetState(0, &flags, &active);
        rc |= (int)cuCtxSynchronize();
        rc |= (int)cudaDeviceSynchronize();
        printf("gpu_app rc=%d active=%d\n", rc, active);
        return 0;
    }
    if (!strcmp(mode, "errstr")) { /* two calls that return a string */
        printf("%s, %s\n", cudaGetErrorString(cudaErrorInvalidValue),
               cudaGetErrorString(cudaSuccess));
        return 0;
    }
    if (!strcmp(mode, "fork")) {
        pid_t p = fork();
        if (p == 0)
            exit(work());
        int st = 0;
        if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st))
            return 1;
        return work() | WEXITSTATUS(st);
    }
    if (!strcmp(mode, "fork_launch")) {
        pid_t p = fork();
        if (p == 0) {
            int rc = 0;
            for (unsigned i = 0; i < 3; i++)
                rc |= launch("_Z4stepPfi", 10 + i);
            rc |= cudaDeviceSynchronize();
            printf("child rc=%d\n", rc);
            exit(rc);
        }
        int st = 0;
        if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st))
            return 1;
        return WEXITSTATUS(st);
    }
    if (!strcmp(mode, "window")) {
        int rc = launch("_Z6beforev", 5);
        rc |= cudaProfilerStart();
        for (unsigned i = 0; i < 3; i++)
            rc |= launch("_Z4stepPfi", 10 + i);
        rc |= cudaProfilerStop();
        rc |= launch("_Z5afterv", 7);
        rc |= cudaDeviceSynchronize();
        printf("gpu_app rc=%d\n", rc);
        return rc;
    }
    if (!strcmp(mode, "running")) {
        int rc = launch("_Z4stepPfi", 10);
        rc |= cudaDeviceSynchronize();
        rc |= launch("_Z4longv", 200000);
        printf("gpu_app rc=%d\n", rc);
        fflush(stdout);
        raise(SIGTERM);
        return rc;
    }
    if (!strcmp(mode, "late"))
        usleep(300 * 1000);
    if (!strcmp(mode, "term_noalarm")) {
        sigset_t alrm;
        sigemptyset(&alrm);
        sigaddset(&alrm, SIGALRM);
        sigprocmask(SIG_BLOCK, &alrm, NULL);
        mode = "term";
    }
    int rc = work();
    if (!strcmp(mode, "kineto")) {
        CUpti_SubscriberHandle s;
        printf("cuptiSubscribe: %d\n", (int)cuptiSubscribe(&s, NULL, NULL));
    }
    if (!strncmp(mode, "profiler", 8)) {
        CUpti_SubscriberHandle s;
        int sub = (int)cuptiSubscribe(&s, own_callback, NULL);
        if (sub == 0)
            cuptiEnableDomain(1, s, CUPTI_CB_DOMAIN_RUNTIME_API);
        cuptiActivityRegisterCallbacks(own_request, own_complete);
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        rc |= launch("_Z3midv", 5);
        rc |= launch("_Z3midv", 6);
        rc |= cudaDeviceSynchronize();
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        printf("subscribe: %d, own records: %lu, own callbacks: %lu\n", sub, own_records, own_callbacks);
        if (!strcmp(mode, "profiler_teardown") && sub == 0) {
            int un = (int)cuptiUnsubscribe(s);
            printf("unsubscribe: %d, finalize: %d\n", un, (int)cuptiFinalize());
        }
        rc |= launch("_Z5afterv", 4);
        rc |= cudaDeviceSynchronize();
        printf("gpu_app rc=%d\n", rc);
    }
    if (!strcmp(mode, "buffers")) {
        printf("register: %d\n", (int)cuptiActivityRegisterCallbacks(own_request, own_complete));
        rc |= launch("_Z5afterv", 4);
        rc |= cudaDeviceSynchronize();
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        printf("own records: %lu\n", own_records);
    }
    if (!strcmp(mode, "ctxdestroy"))
        rc |= (int)cuCtxDestroy(NULL);
    if (!strcmp(mode, "term"))
        raise(SIGTERM);
    if (!strcmp(mode, "_exit")) {
        usleep(500 * 1000);
        _exit(rc);
    }
    return rc;
}
