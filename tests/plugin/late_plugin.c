/* A library whose destructor runs at exit after the preload's goodbye, as
 * a program's own libraries' static destructors do (a library loaded after
 * the preload is finalized after it), and before OpenBLAS's, which it
 * links: it makes one call, then calls the hook its host set
 * (tests/progs/notice.c's exitreturn). */
#include <cblas.h>
#include <stddef.h>

static void (*hook)(void);

void late_plugin_hook(void (*fn)(void));
void late_plugin_hook(void (*fn)(void))
{
    hook = fn;
}

__attribute__((destructor)) static void late_plugin_fini(void)
{
    static const double x[4] = {1, 2, 3, 4};
    cblas_ddot(4, x, 1, x, 1);
    if (hook)
        hook();
}
