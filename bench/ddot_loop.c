/* Benchmark load: a tight loop of cblas_ddot(n=1); prints ns per call from the program's own clock. */
#include <cblas.h>

#include "loop.h"

int main(int argc, char **argv)
{
    long iters, warm;
    if (bench_args(argc, argv, &iters, &warm))
        return 2;
    double x = 1.0, y = 2.0, sum = 0.0;
    BENCH_RUN(iters, warm, sum += cblas_ddot(1, &x, 1, &y, 1));
    return sum == 2.0 * (double)(iters + warm) ? 0 : 1;
}
