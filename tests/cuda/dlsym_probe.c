/* dlsym as programs use it, under the preload's dlsym (tests/e2e/test_cuda.c):
 *   - libnextwrap.so (linked) wraps rand() through dlsym(RTLD_NEXT): it
 *     must still find libc's, relative to itself;
 *   - probing for CUDA and BLAS with dlsym(RTLD_DEFAULT): a program without
 *     them must still see them absent (the preload exports wrappers of
 *     those names);
 *   - with "cudart": libcudart.so.13 opened RTLD_LOCAL stays invisible to
 *     RTLD_DEFAULT, its functions found by handle are called (and must be
 *     recorded), and once promoted to RTLD_GLOBAL RTLD_DEFAULT finds it.
 * Prints the same lines with and without the preload. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nextwrap_calls(void);
int nextwrap_next_is_libc(void);

static void probe(void *handle, const char *hname, const char *name)
{
    dlerror();
    void *p = dlsym(handle, name);
    const char *err = dlerror();
    printf("dlsym(%s, %s): %s, %s\n", hname, name, p ? "found" : "absent", err ? "dlerror set" : "no dlerror");
}

int main(int argc, char **argv)
{
    srand(7);
    int a = rand(), b = rand();
    printf("rand %d %d, wrapped calls %d, RTLD_NEXT from the library finds libc's: %d\n", a, b,
           nextwrap_calls(), nextwrap_next_is_libc());
    probe(RTLD_DEFAULT, "RTLD_DEFAULT", "cudaGetDeviceCount");
    probe(RTLD_DEFAULT, "RTLD_DEFAULT", "cuInit");
    probe(RTLD_DEFAULT, "RTLD_DEFAULT", "cblas_dgemm");
    probe(RTLD_DEFAULT, "RTLD_DEFAULT", "printf");
    probe(RTLD_NEXT, "RTLD_NEXT", "cudaGetDeviceCount");
    void *self = dlopen(NULL, RTLD_NOW);
    probe(self, "main program", "cudaGetDeviceCount");
    if (argc < 2 || strcmp(argv[1], "cudart"))
        return 0;

    void *h = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("no libcudart.so.13\n");
        return 4;
    }
    int (*count)(int *) = (int (*)(int *))dlsym(h, "cudaGetDeviceCount");
    int (*version)(int *) = (int (*)(int *))dlsym(h, "cudaRuntimeGetVersion");
    int n = -1, v = -1;
    printf("CALL cudaRuntimeGetVersion %d\n", version(&v));
    printf("CALL cudaGetDeviceCount %d\n", count(&n));
    probe(RTLD_DEFAULT, "RTLD_DEFAULT", "cudaGetDeviceCount");
    if (!dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL))
        return 5;
    probe(RTLD_DEFAULT, "RTLD_DEFAULT", "cudaGetDeviceCount");
    count = (int (*)(int *))dlsym(RTLD_DEFAULT, "cudaGetDeviceCount");
    printf("CALL cudaGetDeviceCount %d\n", count(&n));
    return 0;
}
