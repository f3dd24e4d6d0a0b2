/* CPU BLAS wrappers, generated from tables/blas.h, whose signature classes
 * give the prototype once and which arguments define the shape. */
#include "core/internal.h"

#include <stddef.h>

OPP_DEFINE_WRAPPERS(OPP_BLAS_FUNCS)
