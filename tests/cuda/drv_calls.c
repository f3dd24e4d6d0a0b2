/* Driver calls made the way cudart, cuBLAS and friends make them:
 * dlopen("libcuda.so.1"), dlsym cuGetProcAddress and a few entry points,
 * then call through the pointers cuGetProcAddress hands out. Run with
 * tests/cuda/fake_driver.c as libcuda.so.1 (LD_LIBRARY_PATH).
 *
 * Prints "CALL <symbol> <status> ..." for each call the symbol fallback
 * must record, in call order, and "UNRECORDED <symbol> <status>" for calls
 * through pointers it must hand back untouched (an internal function, a
 * second copy of a driver). The nested cuLaunchHostFunc calls (NEST deep)
 * print one line. argv[1], optional: a second driver library (the
 * toolkit's stub) whose cuDriverGetVersion is looked up after the fake's. */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#define NEST 70

typedef int (*gpa2_t)(const char *, void **, int, uint64_t, int *);
typedef int (*gpa_t)(const char *, void **, int, uint64_t);
typedef int (*launch_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, void *, void **, void **);
typedef int (*host_func_t)(void *, void (*)(void *), void *);

static host_func_t launch_host_func;
static int nested;

static void nest(void *arg)
{
    int left = *(int *)arg;
    nested++;
    if (left > 1) {
        int next = left - 1;
        if (launch_host_func(NULL, nest, &next) != 0)
            nested = -1000;
    }
}

int main(int argc, char **argv)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("no libcuda.so.1\n");
        return 4;
    }
    gpa2_t gpa2 = (gpa2_t)dlsym(h, "cuGetProcAddress_v2");
    gpa_t gpa = (gpa_t)dlsym(h, "cuGetProcAddress");
    int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
    if (!gpa2 || !gpa || !init) {
        printf("missing entry points\n");
        return 5;
    }
    printf("CALL cuInit %d\n", init(0));
    printf("CALL cuInit %d\n", init(1));

    void *p = NULL;
    int st = -1, rc, v = -1;
    rc = gpa2("cuDriverGetVersion", &p, 12000, 0, &st);
    printf("CALL cuGetProcAddress_v2 %d symbolStatus=%d\n", rc, st);
    errno = 1234;
    rc = ((int (*)(int *))p)(&v);
    printf("CALL cuDriverGetVersion %d errno_seen=%d errno=%d\n", rc, v, errno);

    rc = gpa2("cuMemAlloc", &p, 12000, 0, &st);
    printf("CALL cuGetProcAddress_v2 %d symbolStatus=%d\n", rc, st);
    int (*alloc)(unsigned long long *, size_t) = (int (*)(unsigned long long *, size_t))p;
    unsigned long long dptr = 0;
    rc = alloc(&dptr, 100);
    printf("CALL cuMemAlloc_v2 %d dptr=%#llx\n", rc, dptr);
    rc = alloc(&dptr, 2u << 20);
    printf("CALL cuMemAlloc_v2 %d\n", rc);

    int k = 9;
    void *params[] = {&k};
    rc = gpa2("cuLaunchKernel", &p, 12000, 0, &st);
    printf("CALL cuGetProcAddress_v2 %d symbolStatus=%d\n", rc, st);
    rc = ((launch_t)p)((void *)0x1234, 2, 3, 4, 5, 6, 7, 8, (void *)9, params, NULL);
    printf("CALL cuLaunchKernel %d\n", rc);
    rc = gpa2("cuLaunchKernel", &p, 12000, 2, &st);
    printf("CALL cuGetProcAddress_v2 %d symbolStatus=%d\n", rc, st);
    rc = ((launch_t)p)((void *)0x1234, 2, 3, 4, 5, 6, 7, 8, (void *)9, params, (void **)params);
    printf("CALL cuLaunchKernel_ptsz %d\n", rc);

    rc = gpa("cuLaunchHostFunc", &p, 12000, 0);
    printf("CALL cuGetProcAddress %d\n", rc);
    launch_host_func = (host_func_t)p;
    int depth = NEST;
    rc = launch_host_func(NULL, nest, &depth);
    printf("CALL cuLaunchHostFunc %d nested=%d\n", rc, nested);

    rc = gpa2("cuCtxSynchronize", &p, 12000, 0, &st);
    printf("CALL cuGetProcAddress_v2 %d symbolStatus=%d\n", rc, st);
    printf("UNRECORDED cuCtxSynchronize %d\n", ((int (*)(void))p)());
    p = (void *)&p;
    rc = gpa2("cuNoSuchFunction", &p, 12000, 0, &st);
    printf("CALL cuGetProcAddress_v2 %d symbolStatus=%d pfn=%s\n", rc, st, p ? "set" : "NULL");

    if (argc > 1) {
        void *h2 = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        int (*ver2)(int *) = h2 ? (int (*)(int *))dlsym(h2, "cuDriverGetVersion") : NULL;
        if (!ver2) {
            printf("cannot load %s\n", argv[1]);
            return 6;
        }
        printf("UNRECORDED cuDriverGetVersion %d\n", ver2(&v));
    }
    return 0;
}
