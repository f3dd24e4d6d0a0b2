/* Where the tool's own parts are (paths.h). */
#include "tool/paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int opp_tool_self(char *out, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    if (n <= 0)
        return -1;
    out[n] = 0;
    return 0;
}

int opp_tool_sibling(const char *env, const char *name, char *out, size_t cap)
{
    const char *v = getenv(env);
    if (v && v[0]) {
        snprintf(out, cap, "%s", v);
        return access(out, R_OK) == 0 ? 0 : -1;
    }
    char self[PATH_MAX];
    if (opp_tool_self(self, sizeof self))
        return -1;
    char *slash = strrchr(self, '/');
    if (!slash)
        return -1;
    *slash = 0;
    if ((size_t)snprintf(out, cap, "%s/%s", self, name) >= cap)
        return -1;
    return access(out, R_OK) == 0 ? 0 : -1;
}
