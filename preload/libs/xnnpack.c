/* XNNPACK wrappers, generated from tables/xnnpack.h. */
#include "core/internal.h"

OPP_DEFINE_WRAPPERS(OPP_XNNPACK_FUNCS)
