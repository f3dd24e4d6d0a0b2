/* Calls entry points of libraries it never loads: weak references, left 0
 * alone, bound to the preload's wrappers under it, which find no real
 * function to call (tests/e2e/test_robust.c). Each call is made twice and
 * prints what it returned, or "absent" where nothing defines the name (no
 * preload, or one built without that library's header). */
#include <stddef.h>
#include <stdio.h>

#define WEAK __attribute__((weak))

WEAK int cublasCreate_v2(void **handle);
WEAK int cublasLtCreate(void **handle);
WEAK int cudnnCreate(void **handle);
WEAK int ncclGetUniqueId(void *id);
WEAK int cufftPlan1d(int *plan, int nx, int type, int batch);
WEAK int cudaMalloc(void **p, size_t size);
WEAK int cuInit(unsigned flags);
WEAK int xnn_run_operator(void *op, void *threadpool);
WEAK int dnnl_primitive_destroy(void *primitive);
WEAK float cblas_sdot(int n, const float *x, int incx, const float *y, int incy);
WEAK void cblas_sscal(int n, float alpha, float *x, int incx);

#define CALL(fn, ...)                                                                              \
    do {                                                                                           \
        if (!(fn)) {                                                                               \
            printf("%s absent\n", #fn);                                                            \
            break;                                                                                 \
        }                                                                                          \
        int a = (int)fn(__VA_ARGS__), b = (int)fn(__VA_ARGS__);                                    \
        printf("%s %d %d\n", #fn, a, b);                                                           \
    } while (0)

int main(void)
{
    void *h = NULL;
    char uid[128];
    int plan = 0;
    float x[2] = {1, 2};
    CALL(cublasCreate_v2, &h);
    CALL(cublasLtCreate, &h);
    CALL(cudnnCreate, &h);
    CALL(ncclGetUniqueId, uid);
    CALL(cufftPlan1d, &plan, 8, 0x29, 1);
    CALL(cudaMalloc, &h, 64);
    CALL(cuInit, 0);
    CALL(xnn_run_operator, NULL, NULL);
    CALL(dnnl_primitive_destroy, NULL);
    CALL(cblas_sdot, 2, x, 1, x, 1);
    if (cblas_sscal) {
        cblas_sscal(2, 3.0f, x, 1);
        cblas_sscal(2, 3.0f, x, 1);
        printf("cblas_sscal x = %g %g\n", x[0], x[1]);
    } else {
        printf("cblas_sscal absent\n");
    }
    return 0;
}
