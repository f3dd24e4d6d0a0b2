/* What the two recorders of CUDA API calls share (cuda/internal.h): which
 * of them serves now (CUPTI's callbacks, cupti.c, or the symbol fallback,
 * symbols.c), and which entry points return a status. */
#include "core/internal.h"
#include "cuda/internal.h"

#include <stdint.h>

/* Set by cupti.c once its subscription works; here for every build. */
_Atomic int opp_cuda_via_cupti;

/* Runtime entry points that return no status (void, a pointer, a string,
 * a struct): they record status 0. Every driver entry point returns a
 * CUresult. A name the toolkit does not export is simply not matched. */
#define OPP_SECOND(a, b, ...) b
#define OPP_PROBE(...) OPP_SECOND(__VA_ARGS__, 0, 0)
#define OPP_NOSTATUS(sym) OPP_PROBE(OPP_NS_##sym)
#define OPP_NS_cudaGetErrorName ~, 1
#define OPP_NS_cudaGetErrorString ~, 1
#define OPP_NS_cudaCreateChannelDesc ~, 1
#define OPP_NS___cudaInitModule ~, 1
#define OPP_NS___cudaRegisterFatBinary ~, 1
#define OPP_NS___cudaRegisterFatBinaryEnd ~, 1
#define OPP_NS___cudaUnregisterFatBinary ~, 1
#define OPP_NS___cudaRegisterFunction ~, 1
#define OPP_NS___cudaRegisterVar ~, 1
#define OPP_NS___cudaRegisterHostVar ~, 1
#define OPP_NS___cudaRegisterManagedVar ~, 1
const uint8_t opp_cuda_nostatus[OPP_FN_COUNT] = {
#define NS_RT(cbid, sym) [OPP_FN_CUDA_RT_BASE + (cbid)] = OPP_NOSTATUS(sym),
    OPP_CUDA_RT_SYMS(NS_RT)
#undef NS_RT
};
