/* A training loop annotated with NVTX as PyTorch code annotates its steps
 * (torch.cuda.nvtx.range_push), on CPU BLAS: `train_loop STEPS [TAIL_MS]`
 * runs STEPS
 * x "train_step" { "forward" { 2 x sgemm 256x256x256 }, "backward" { 4 x
 * sgemm 256x256x256 }, "optimizer" { cblas_saxpy n=65536 } }, then sleeps
 * TAIL_MS (other work after the last step; default 0). The README's
 * tree and step-latency examples; tests/e2e/test_nvtx.c checks its trace. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

enum { N = 256 };

static void gemm(const float *a, const float *b, float *c)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 10;
    float *w = calloc(N * N, sizeof *w), *x = calloc(N * N, sizeof *x);
    float *y = calloc(N * N, sizeof *y), *g = calloc(N * N, sizeof *g);
    if (!w || !x || !y || !g)
        return 1;
    for (int i = 0; i < N * N; i++)
        w[i] = 0.001f * (float)(i % 7), x[i] = 0.01f * (float)(i % 5);
    for (int s = 0; s < steps; s++) {
        nvtxRangePushA("train_step");
        nvtxRangePushA("forward");
        gemm(x, w, y);
        gemm(y, w, y);
        nvtxRangePop();
        nvtxRangePushA("backward");
        for (int i = 0; i < 4; i++)
            gemm(y, w, g);
        nvtxRangePop();
        nvtxRangePushA("optimizer");
        cblas_saxpy(N * N, -0.01f, g, 1, w, 1);
        nvtxRangePop();
        nvtxRangePop();
    }
    if (argc > 2)
        usleep((useconds_t)atoi(argv[2]) * 1000u);
    printf("w[1] %.6f\n", (double)w[1]);
    return 0;
}
