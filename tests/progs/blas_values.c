/* BLAS calls whose values cross the wrapper in every way the tables
 * forward them: returned floats, doubles, indices and complex values
 * (CBLAS and Fortran), float scalars passed by value, complex ones by
 * pointer. Prints each result exactly (%a), so that a run under the
 * preload can be compared with a plain one; each function is called once. */
#include <cblas.h>
#include <complex.h>
#include <stdio.h>

float sdot_(const int *n, const float *x, const int *incx, const float *y, const int *incy);
double dsdot_(const int *n, const float *x, const int *incx, const float *y, const int *incy);
float sdsdot_(const int *n, const float *sb, const float *x, const int *incx, const float *y,
              const int *incy);
float complex cdotc_(const int *n, const void *x, const int *incx, const void *y, const int *incy);
double complex zdotu_(const int *n, const void *x, const int *incx, const void *y, const int *incy);
float snrm2_(const int *n, const float *x, const int *incx);
float scasum_(const int *n, const void *x, const int *incx);
double dznrm2_(const int *n, const void *x, const int *incx);
int izamax_(const int *n, const void *x, const int *incx);
void zdscal_(const int *n, const double *alpha, void *x, const int *incx);
void csrot_(const int *n, void *x, const int *incx, void *y, const int *incy, const float *c,
            const float *s);
void ztrsm_(const char *side, const char *uplo, const char *ta, const char *diag, const int *m,
            const int *n, const void *alpha, const void *a, const int *lda, void *b, const int *ldb,
            size_t, size_t, size_t, size_t);

#define N 7

int main(void)
{
    float xs[N], ys[N];
    double xd[N];
    float complex xc[N], yc[N];
    double complex xz[N], yz[N], az[N * N], bz[N * 2];
    for (int i = 0; i < N; i++) {
        xs[i] = 0.5f + (float)i / 3, ys[i] = 1.25f - (float)i / 7;
        xd[i] = 0.1 * i - 0.3;
        xc[i] = xs[i] + I * ys[i], yc[i] = ys[i] - I * xs[i] / 2;
        xz[i] = xd[i] + I * (i % 3), yz[i] = 1.0 / (i + 1) - I * xd[i];
        for (int j = 0; j < N; j++)
            az[i * N + j] = i == j ? 2.0 + I * 0.5 : (i > j ? 0.25 * (i - j) : 0);
        bz[i] = xz[i], bz[N + i] = yz[i];
    }
    int n = N, one = 1, two = 2;
    float sb = 0.75f, c = 0.6f, s = 0.8f;
    double alpha = -1.5;
    printf("cblas_sdot %a\n", cblas_sdot(N, xs, 1, ys, 1));
    printf("cblas_dsdot %a\n", cblas_dsdot(N, xs, 1, ys, 1));
    printf("cblas_sdsdot %a\n", cblas_sdsdot(N, sb, xs, 1, ys, 1));
    printf("cblas_dnrm2 %a\n", cblas_dnrm2(N, xd, 1));
    printf("cblas_scasum %a\n", cblas_scasum(N, xc, 1));
    printf("cblas_idamax %zu\n", (size_t)cblas_idamax(N, xd, 1));
    float complex cu = 0;
    cblas_cdotu_sub(N, xc, 1, yc, 1, &cu);
    printf("cblas_cdotu_sub %a %a\n", crealf(cu), cimagf(cu));
    printf("sdot_ %a\n", sdot_(&n, xs, &one, ys, &one));
    printf("dsdot_ %a\n", dsdot_(&n, xs, &one, ys, &one));
    printf("sdsdot_ %a\n", sdsdot_(&n, &sb, xs, &one, ys, &one));
    float complex cc = cdotc_(&n, xc, &one, yc, &one);
    printf("cdotc_ %a %a\n", crealf(cc), cimagf(cc));
    double complex zu = zdotu_(&n, xz, &one, yz, &one);
    printf("zdotu_ %a %a\n", creal(zu), cimag(zu));
    printf("snrm2_ %a\n", snrm2_(&n, xs, &one));
    printf("scasum_ %a\n", scasum_(&n, xc, &one));
    printf("dznrm2_ %a\n", dznrm2_(&n, xz, &one));
    printf("izamax_ %d\n", izamax_(&n, xz, &one));
    cblas_srot(N, xs, 1, ys, 1, c, s); /* float c and s by value */
    printf("cblas_srot %a %a\n", xs[N - 1], ys[N - 1]);
    cblas_csscal(N, 2.5f, xc, 1);
    printf("cblas_csscal %a %a\n", crealf(xc[3]), cimagf(xc[3]));
    zdscal_(&n, &alpha, xz, &one);
    printf("zdscal_ %a %a\n", creal(xz[2]), cimag(xz[2]));
    csrot_(&n, xc, &one, yc, &one, &c, &s);
    printf("csrot_ %a %a\n", crealf(yc[5]), cimagf(yc[5]));
    float complex ch[N * N] = {0};
    cblas_cherk(CblasColMajor, CblasLower, CblasNoTrans, N, 1, 0.5f, xc, N, 0.0f, ch, N);
    printf("cblas_cherk %a %a\n", crealf(ch[N + 1]), cimagf(ch[N + 2]));
    double complex za = 1.0 - I * 0.5;
    ztrsm_("L", "L", "N", "N", &n, &two, &za, az, &n, bz, &n, 1, 1, 1, 1);
    printf("ztrsm_ %a %a\n", creal(bz[2 * N - 1]), cimag(bz[2 * N - 1]));
    return 0;
}
