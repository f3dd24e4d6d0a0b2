/* cuBLAS wrappers, generated from tables/cublas.h: each signature class
 * gives the prototype once (checked here against the toolkit's header) and
 * which arguments define the shapes. Recorded: the returned status, then the
 * kind's layout (docs/FORMAT.md). */
#include "core/internal.h" /* funcs.h: OPP_HAVE_CUBLAS when the header is installed */
#ifdef OPP_HAVE_CUBLAS

#include <cublas_api.h>

#include "libs/gpulibs.h"

/* cublas_api.h declares the half-precision calls for C++ only. */
typedef struct { uint16_t x; } opp_half;

OPP_DEFINE_WRAPPERS(OPP_CUBLAS_FUNCS)

#endif /* OPP_HAVE_CUBLAS */
