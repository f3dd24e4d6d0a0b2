/* A plugin that links OpenBLAS and calls it through its PLT (where a
 * preload's wrappers come first): loaded and unloaded by
 * tests/progs/unload.c. */
#include <cblas.h>

double plugin_run(void)
{
    static const double x[4] = {1, 2, 3, 4};
    return cblas_ddot(4, x, 1, x, 1);
}
