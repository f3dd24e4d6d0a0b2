/* A plugin host: loads libblas_plugin.so (next to it; it links OpenBLAS,
 * tests/plugin/), calls it, unloads it and OpenBLAS with it, keeps the
 * addresses OpenBLAS had so that the next load lands elsewhere, and does
 * it again: unload N (tests/e2e/test_blas.c). Prints each round's
 * result. Links no BLAS itself. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <unistd.h>

/* The lowest and highest address any mapping of OpenBLAS covers. */
static int blas_range(uintptr_t *lo, uintptr_t *hi)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    *lo = UINTPTR_MAX, *hi = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (strstr(line, "openblas") && sscanf(line, "%lx-%lx", &a, &b) == 2) {
            *lo = a < *lo ? a : *lo;
            *hi = b > *hi ? b : *hi;
        }
    }
    if (f)
        fclose(f);
    return *hi > *lo ? 0 : -1;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    char plugin[4096];
    ssize_t n = readlink("/proc/self/exe", plugin, sizeof plugin - 32);
    char *slash = n > 0 ? memrchr(plugin, '/', (size_t)n) : NULL;
    if (!slash)
        return 2;
    strcpy(slash, "/libblas_plugin.so");
    for (int i = 0; i < rounds; i++) {
        void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
        double (*dot)(void) = h ? (double (*)(void))dlsym(h, "plugin_dot") : NULL;
        uintptr_t lo, hi;
        if (!dot || blas_range(&lo, &hi)) {
            fprintf(stderr, "unload: cannot load %s: %s\n", plugin, dlerror());
            return 2;
        }
        printf("round %d: %.0f\n", i, dot());
        fflush(stdout);
        dlclose(h);
        if (mmap((void *)lo, hi - lo, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                 -1, 0) == MAP_FAILED) {
            fprintf(stderr, "unload: OpenBLAS stayed loaded\n");
            return 2;
        }
    }
    return 0;
}
