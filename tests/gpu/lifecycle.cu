// CUPTI's lifecycle on a real GPU, for scripts/gpu-validate.sh: each mode
// launches 6 `tick` kernels (the fork mode 6 in the child, then 6 in the
// parent) and ends in its own way; the script counts what opprof recorded.
//   lifecycle exit     return from main after the work
//   lifecycle _exit    _exit(0) 2 s after the work (no exit handlers)
//   lifecycle fork     a child forked before any CUDA call does the work and
//                      lives 0.5 s more (a worker, longer than a flush
//                      period) before _exit, then the parent does the work
//   lifecycle kill     SIGKILL of itself 2 s after the work
//   lifecycle fork_launch  as fork, but the child's first CUDA calls are its
//                      6 launches (on no memory), then the parent does the work
// Built twice by the script: with the static cudart (the default) and with
// the shared one, where opprof starts CUPTI at the program's start.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

__global__ void tick(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }

static int work(const char *who)
{
    const int n = 1 << 20;
    float *x;
    if (cudaMalloc(&x, n * sizeof(float))) { printf("%s: no GPU\n", who); return 1; }
    for (int k = 0; k < 6; k++) tick<<<n / 256, 256>>>(x, n);
    cudaError_t e = cudaDeviceSynchronize();
    cudaFree(x);
    printf("%s: 6 kernels, status %d\n", who, (int)e);
    fflush(stdout);
    return e != cudaSuccess;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "exit";
    if (!strcmp(mode, "fork") || !strcmp(mode, "fork_launch")) {
        pid_t p = fork();
        if (p == 0 && !strcmp(mode, "fork_launch")) {
            for (int k = 0; k < 6; k++) tick<<<1, 32>>>(nullptr, 0);
            cudaError_t e = cudaDeviceSynchronize();
            printf("child: 6 kernels first, status %d\n", (int)e);
            fflush(stdout);
            usleep(500 * 1000);
            _exit(e != cudaSuccess);
        }
        if (p == 0) { int rc = work("child"); usleep(500 * 1000); _exit(rc); }
        int st = 0;
        waitpid(p, &st, 0);
        return work("parent") | (WIFEXITED(st) ? WEXITSTATUS(st) : 1);
    }
    int rc = work(mode);
    if (!strcmp(mode, "_exit")) { sleep(2); _exit(rc); }
    if (!strcmp(mode, "kill")) { sleep(2); kill(getpid(), SIGKILL); }
    return rc;
}
