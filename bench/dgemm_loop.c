/* Benchmark load: a tight loop of cblas_dgemm on 1x1x1 matrices (a wrapper that records shapes). */
#include <cblas.h>

#include "loop.h"

static double gemm1(void)
{
    double a = 1.0, b = 2.0, c = 0.0;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0, &a, 1, &b, 1, 0.0, &c, 1);
    return c;
}

int main(int argc, char **argv)
{
    long iters, warm;
    if (bench_args(argc, argv, &iters, &warm))
        return 2;
    double sum = 0.0;
    BENCH_RUN(iters, warm, sum += gemm1());
    return sum == 2.0 * (double)(iters + warm) ? 0 : 1;
}
