/* Where the tool's own parts are: next to the opprof executable, unless a
 * variable names them. */
#ifndef OPP_TOOL_PATHS_H
#define OPP_TOOL_PATHS_H

#include <stddef.h>

/* The path of this executable in out; 0, or -1 when it cannot be read. */
int opp_tool_self(char *out, size_t cap);
/* $env when set, else name next to this executable, in out: 0 when it is
 * there (readable), else -1. */
int opp_tool_sibling(const char *env, const char *name, char *out, size_t cap);

#endif
