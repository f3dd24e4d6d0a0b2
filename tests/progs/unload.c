/* A plugin host: loads PLUGIN (tests/plugin/: a library that links a
 * tensor library and calls it), runs its plugin_run, unloads it and the
 * library with it, keeps the addresses the library had (the mappings
 * whose path contains MAPPED) so that the next load lands elsewhere, and
 * does it again: unload ROUNDS PLUGIN MAPPED (tests/e2e/test_blas.c,
 * test_cpulibs.c, test_gpulibs.c). Prints each round's result. Links no
 * tensor library itself. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The lowest and highest address any mapping of the library covers. */
static int mapped_range(const char *mapped, uintptr_t *lo, uintptr_t *hi)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    *lo = UINTPTR_MAX, *hi = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long a, b;
        char *path = strchr(line, '/');
        if (path && strstr(path, mapped) && sscanf(line, "%lx-%lx", &a, &b) == 2) {
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
    if (argc != 4) {
        fprintf(stderr, "usage: unload ROUNDS PLUGIN MAPPED\n");
        return 2;
    }
    int rounds = atoi(argv[1]);
    const char *plugin = argv[2], *mapped = argv[3];
    for (int i = 0; i < rounds; i++) {
        void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
        double (*run)(void) = h ? (double (*)(void))dlsym(h, "plugin_run") : NULL;
        uintptr_t lo, hi, lo2, hi2;
        if (!run || mapped_range(mapped, &lo, &hi)) {
            fprintf(stderr, "unload: cannot load %s with %s: %s\n", plugin, mapped, dlerror());
            return 2;
        }
        printf("round %d: %.0f\n", i, run());
        fflush(stdout);
        dlclose(h);
        if (!mapped_range(mapped, &lo2, &hi2) ||
            mmap((void *)lo, hi - lo, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                 -1, 0) == MAP_FAILED) {
            fprintf(stderr, "unload: %s stayed loaded\n", mapped);
            return 2;
        }
    }
    return 0;
}
