/* LAPACK wrappers, generated from tables/lapack.h. */
#include "core/internal.h"

OPP_DEFINE_WRAPPERS(OPP_LAPACK_FUNCS)
