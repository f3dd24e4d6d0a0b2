/* Code stacks (OPPROF_STACKS): main -> outer_fn -> inner_fn -> cblas_ddot,
 * 3 times, on vectors long enough that each call takes microseconds.
 * Prints the sum so the calls cannot be dropped. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 18)

__attribute__((noinline)) double inner_fn(const double *x, const double *y)
{
    double r = cblas_ddot(N, x, 1, y, 1);
    __asm__ volatile("" ::: "memory"); /* no tail call: keep this frame */
    return r + 1.0;
}

__attribute__((noinline)) double outer_fn(const double *x, const double *y)
{
    double r = inner_fn(x, y);
    __asm__ volatile("" ::: "memory");
    return r * 2.0;
}

int main(void)
{
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    if (!x || !y)
        return 1;
    for (int i = 0; i < N; i++)
        x[i] = 1.0, y[i] = 0.5;
    double s = 0;
    for (int k = 0; k < 3; k++)
        s += outer_fn(x, y);
    printf("%.1f\n", s);
    free(x);
    free(y);
    return 0;
}
