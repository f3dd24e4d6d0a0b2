/* A plugin that solves a small system with its LAPACK's dgesv_ and takes a
 * dot product with its BLAS's ddot_, both through its PLT: built twice,
 * linking OpenBLAS and linking reference BLAS and LAPACK, for the plugin
 * host tests/progs/scopes.c. The two dgesv_ differ in what they call (the
 * reference one calls dgetrf_, dtrsm_, ...; OpenBLAS's none), the two
 * ddot_ in rounding (reference BLAS adds in order, so 1 is lost beside
 * 1e16; OpenBLAS adds in several lanes). */
#include <stdio.h>

void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv, double *b,
            const int *ldb, int *info);
double ddot_(const int *n, const double *x, const int *incx, const double *y, const int *incy);

void plugin_run(const char *name)
{
    double a[16] = {4, 1, 2, 0, 1, 5, 1, 2, 2, 1, 6, 1, 0, 2, 1, 7};
    double b[8] = {0, 1, 2, 3, 4, 5, 6, 7}, x[32] = {1e16, 1, [4] = -1e16}, y[32];
    int n = 4, nrhs = 2, ipiv[4], info = -1, len = 32, one = 1;
    for (int i = 0; i < len; i++)
        y[i] = 1;
    dgesv_(&n, &nrhs, a, &n, ipiv, b, &n, &info);
    printf("%s: dgesv_ info %d x", name, info);
    for (int i = 0; i < 8; i++)
        printf(" %.17g", b[i]);
    printf("\n%s: ddot_ %.17g\n", name, ddot_(&len, x, &one, y, &one));
}
