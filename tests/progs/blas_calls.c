/* Calls OpenBLAS through cblas and Fortran BLAS with known shapes and
 * counts (argv[1] repeats, default 1): the end-to-end tests check that the
 * trace holds exactly these calls. Prints the checksum of its results. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

void sgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const float *alpha, const float *a, const int *lda, const float *b, const int *ldb,
            const float *beta, float *c, const int *ldc);
void dgemv_(const char *t, const int *m, const int *n, const double *alpha, const double *a,
            const int *lda, const double *x, const int *incx, const double *beta, double *y,
            const int *incy);

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 1;
    enum { M = 64, N = 32, K = 48 };
    double *a = calloc(M * K, sizeof *a), *b = calloc(K * N, sizeof *b), *c = calloc(M * N, sizeof *c);
    float *fa = calloc(M * K, sizeof *fa), *fb = calloc(K * N, sizeof *fb), *fc = calloc(M * N, sizeof *fc);
    double z[2 * M * K], zc[2 * M * N];
    double one[2] = {1, 0}, zero[2] = {0, 0};
    for (int i = 0; i < M * K; i++) {
        a[i] = 1.0 + i % 7;
        fa[i] = 1.0f;
        z[2 * i] = 1;
        z[2 * i + 1] = 0;
    }
    for (int i = 0; i < K * N; i++) {
        b[i] = 0.5;
        fb[i] = 2.0f;
    }
    double sum = 0;
    for (int r = 0; r < reps; r++) {
        /* 3 x dgemm 64x32x48, row-major, no transposes */
        for (int i = 0; i < 3; i++)
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0, a, K, b, N, 0.0, c, N);
        /* 2 x dgemm with A transposed: op(A) is M x K stored K x M */
        for (int i = 0; i < 2; i++)
            cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M, N, K, 1.0, a, M, b, N, 0.0, c, N);
        /* 1 x zgemm 16x16x16 */
        cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 16, 16, 16, one, z, 16, z, 16, zero, zc, 16);
        /* 4 x Fortran sgemm_ 64x32x48 (column-major) */
        int m = M, n = N, k = K;
        float alpha = 1, beta = 0;
        for (int i = 0; i < 4; i++)
            sgemm_("N", "N", &m, &n, &k, &alpha, fa, &m, fb, &k, &beta, fc, &m);
        /* 5 x ddot n=1000 */
        for (int i = 0; i < 5; i++)
            sum += cblas_ddot(1000, a, 1, a, 1);
        /* 2 x dgemv_ 'T' 64x48: y[48] = A^T x */
        double alpha_d = 1, beta_d = 0;
        int one_i = 1, mm = M, kk = K;
        for (int i = 0; i < 2; i++)
            dgemv_("T", &mm, &kk, &alpha_d, a, &mm, a, &one_i, &beta_d, c, &one_i);
        /* 1 x daxpy n=100, 1 x dscal n=100 */
        cblas_daxpy(100, 2.0, a, 1, c, 1);
        cblas_dscal(100, 0.5, c, 1);
        sum += c[0] + fc[0];
    }
    printf("checksum %.3f\n", sum);
    return 0;
}
