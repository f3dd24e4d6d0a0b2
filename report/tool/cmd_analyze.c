/* `opprof analyze TRACE_OR_DIR...`: many traces (one per rank or host)
 * analysed on Dask. The work is Python (report/analyze/opprof_analyze, on
 * the system's python3 with Debian's pandas, dask and distributed): this
 * finds the interpreter and the package, tells the package where this tool
 * is (its tasks run `opprof report` and `opprof export sqlite`), and hands
 * over. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool/cmds.h"
#include "tool/paths.h"
#include "views/say.h"

#define PREFIX "opprof analyze: "

int cmd_analyze(int argc, char **argv)
{
    char pkg[PATH_MAX], self[PATH_MAX];
    if (opp_tool_sibling("OPPROF_ANALYZE", "analyze", pkg, sizeof pkg) ||
        opp_tool_self(self, sizeof self)) {
        opp_say(PREFIX "cannot find its Python package next to opprof (the build's "
                       "analyze/ folder; set OPPROF_ANALYZE to it)");
        return 1;
    }
    const char *old = getenv("PYTHONPATH");
    size_t len = strlen(pkg) + (old ? strlen(old) : 0) + 2;
    char *path = malloc(len);
    if (!path) {
        opp_say(PREFIX "out of memory");
        return 1;
    }
    snprintf(path, len, "%s%s%s", pkg, old && *old ? ":" : "", old && *old ? old : "");
    const char *py = getenv("OPPROF_PYTHON");
    if (!py || !*py) /* the system's interpreter: Debian's pandas and dask are its */
        py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    int bad = setenv("PYTHONPATH", path, 1) || setenv("OPPROF_TOOL", self, 1);
    free(path);
    if (bad) {
        opp_say(PREFIX "cannot set its environment: %s", strerror(errno));
        return 1;
    }
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (!args) {
        opp_say(PREFIX "out of memory");
        return 1;
    }
    args[0] = (char *)py;
    args[1] = "-m";
    args[2] = "opprof_analyze";
    for (int i = 1; i < argc; i++)
        args[i + 2] = argv[i];
    execvp(py, args);
    opp_say(PREFIX "cannot run %s: %s", py, strerror(errno));
    free(args);
    return 1;
}
