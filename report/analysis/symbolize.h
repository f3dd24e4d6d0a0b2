/* Code stacks of a trace (OPPROF_STACKS): the STACK and MODULE GPU records
 * of each process, and their symbolization at report time from the ELF
 * files named by the modules (.symtab, else .dynsym), demangled. */
#ifndef OPP_SYMBOLIZE_H
#define OPP_SYMBOLIZE_H

#include <stdint.h>

#include "gpu.h"

struct opp_code;

/* Keep a STACK or MODULE record of process index pi (path: the module's
 * file, "" when unknown; py: for a STACK, the name of each field that is a
 * Python frame (OPP_STACK_PY), NULL for the others, or py NULL when none
 * is; py_sid: the same names' string ids in the model). 0, or -1 when
 * memory runs out. */
int opp_code_add(struct opp_code **c, uint32_t pi, const struct opp_gpu_rec *g, const char *path,
                 const char *const *py, const uint32_t *py_sid);
void opp_code_free(struct opp_code *c);
/* The Python frames of stack id of process pi as the model's string ids,
 * innermost first, at most max: how many (0: none, or no such stack). */
int opp_code_pyframes(const struct opp_code *c, uint32_t pi, uint32_t id, uint32_t *sids, int max);
/* The frames of stack id of process pi, innermost first: up to max names
 * (function names, "file+0xoffset" or "0xaddress" when unknown, then a
 * torch program's Python frames, "file(line): function"), owned by c.
 * Returns how many; 0 for an unknown stack. */
int opp_code_frames(struct opp_code *c, uint32_t pi, uint32_t id, const char **names, int max);

#endif
