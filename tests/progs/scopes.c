/* A plugin host whose plugins bind the same entry points each in its own
 * scope: scopes [-u] PLUGIN... loads each PLUGIN (tests/plugin/: a library
 * that links BLAS and LAPACK) RTLD_LOCAL (RTLD_GLOBAL when written
 * +PLUGIN: it and its libraries join the global scope), runs its
 * plugin_run with the plugin's name, and with -u unloads it before the
 * next (tests/e2e/test_blas.c). Links no BLAS itself. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int unload = argc > 1 && !strcmp(argv[1], "-u");
    if (argc < 2 + unload) {
        fprintf(stderr, "usage: scopes [-u] PLUGIN...\n");
        return 2;
    }
    for (int i = 1 + unload; i < argc; i++) {
        int global = argv[i][0] == '+';
        const char *path = argv[i] + global;
        void *h = dlopen(path, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
        void (*run)(const char *) = h ? (void (*)(const char *))dlsym(h, "plugin_run") : NULL;
        if (!run) {
            fprintf(stderr, "scopes: cannot load %s: %s\n", path, dlerror());
            return 2;
        }
        const char *base = strrchr(path, '/');
        run(base ? base + 1 : path);
        fflush(stdout);
        if (unload)
            dlclose(h);
    }
    return 0;
}
