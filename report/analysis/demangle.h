/* C++ symbol names (CUDA kernel names are mangled like any C++ function)
 * demangled the way Kineto shows them. */
#ifndef OPP_DEMANGLE_H
#define OPP_DEMANGLE_H

/* The demangled form of name, malloc'd, or NULL when name is not a mangled
 * C++ name, cannot be demangled, or no demangler is available (callers
 * then keep the name as it is). The demangler is libstdc++'s
 * __cxa_demangle, looked up at run time so that the report tool does not
 * link the C++ runtime; it is there wherever g++ or any C++ program is. */
char *opp_demangle(const char *name);

#endif
