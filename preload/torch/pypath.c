/* A Python interpreter gets opprof's Python folder (build/python, beside
 * libopprof.so) first on PYTHONPATH, so that its sitecustomize.py can wait
 * for `import torch` (preload/torch/python). sitecustomize.py puts
 * PYTHONPATH back as the program had it; an interpreter that will not read
 * it (python2, or -E, -I, -S on its command line) is left alone, so its
 * environment is never changed. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"
#include "torch/torch.h"

/* python3 (by the executable's name), and no option on its command line
 * that skips the site module or the environment. */
static int will_read_path(void)
{
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0)
        return 0;
    exe[k] = 0;
    const char *b = strrchr(exe, '/');
    b = b ? b + 1 : exe;
    if (strncmp(b, "python", 6) || !strncmp(b, "python2", 7))
        return 0;
    char cmd[4096];
    ssize_t n = opp_read_small("/proc/self/cmdline", cmd, sizeof cmd);
    if (n <= 0)
        return 0;
    /* argv[1..]: options until the script, -c or -m; -X and -W take a value */
    for (const char *a = cmd + strlen(cmd) + 1; a < cmd + n; a += strlen(a) + 1) {
        if (a[0] != '-' || !a[1] || !strcmp(a, "--"))
            return 1;
        if (a[1] == '-')
            continue; /* --help and the like */
        for (const char *c = a + 1; *c; c++) {
            if (*c == 'E' || *c == 'I' || *c == 'S')
                return 0;
            if (*c == 'c' || *c == 'm')
                return 1;
            if (*c == 'X' || *c == 'W') {
                if (!c[1])
                    a += strlen(a) + 1; /* its value is the next word */
                break;
            }
        }
    }
    return 1;
}

void opp_torch_python_path(const char *self_path)
{
    const char *off = getenv("OPPROF_TORCH");
    if ((off && !strcmp(off, "0")) || !self_path || !will_read_path())
        return;
    char dir[PATH_MAX + sizeof "/python"]; /* absolute: the program may change directory */
    if (!realpath(self_path, dir))
        return;
    char *slash = strrchr(dir, '/');
    if (!slash)
        return;
    memcpy(slash, "/python", sizeof "/python");
    const char *old = getenv("PYTHONPATH");
    size_t want = strlen(dir) + 2 + (old ? strlen(old) : 0);
    char *v = malloc(want);
    if (!v)
        return;
    snprintf(v, want, old && *old ? "%s:%s" : "%s", dir, old ? old : "");
    setenv("OPPROF_PYTHONPATH", old ? old : "", 1); /* what sitecustomize.py puts back */
    if (!old)
        setenv("OPPROF_PYTHONPATH_UNSET", "1", 1);
    setenv("PYTHONPATH", v, 1);
    free(v);
}
