/* The CUDA feature's own header, shared by its CUPTI client (cupti.c),
 * its symbol fallback (symbols.c, tramp.S) and what both use (api.c): API
 * calls through CUPTI's
 * callbacks and GPU activity through its buffers when CUPTI serves, API
 * calls through trampolines when it cannot (no GPU, no usable driver, or
 * another subscriber holds it). docs/DESIGN.md, "CUDA without CUPTI", says
 * why and what the fallback cannot see. */
#ifndef OPP_CUDA_INTERNAL_H
#define OPP_CUDA_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "tables/funcs.h"

/* x86-64 only: elsewhere no trampolines or dlsym hook are built, and CUDA
 * API calls are seen through CUPTI alone. Nor under ThreadSanitizer (make
 * test-tsan): its start-up resolves its interceptors through dlsym, ours,
 * before anything of ours can run (tramp.S has the same test). */
#if defined(__x86_64__) && defined(__linux__) && !defined(__SANITIZE_THREAD__)
#define OPP_CUDA_TRAMP 1
#endif

/* Non-zero while CUPTI's callbacks record CUDA API calls (the CUPTI client
 * sets it once its subscription works): the trampolines then forward
 * without recording, so no call is recorded twice. */
extern _Atomic int opp_cuda_via_cupti;

/* Try CUPTI once (later calls return at once). 1 when CUPTI serves. Called
 * at the feature's start when CUDA is already loaded, from the driver's
 * InitializeInjection, and after each outermost CUDA call the symbol
 * fallback recorded (static cudart, where neither of the others happens):
 * cheap once tried. Always 0 in builds without the CUDA toolkit. */
int opp_cupti_init(void);
/* Set where CUPTI is to start again at the entry of the next CUDA call made
 * outside any other (a fork child whose parent ran it; a process whose
 * other CUPTI client let go of it): opp_cupti_restart_now starts it. */
extern _Atomic int opp_cupti_restart;
void opp_cupti_restart_now(void);

/* Whether entry point fn (a runtime or driver call's id) returns a status
 * (cudaError_t, CUresult): not a pointer, a string, a struct or nothing,
 * whose bytes must not be read as one. The table is api.c's. */
extern const uint8_t opp_cuda_nostatus[OPP_FN_COUNT];
static inline int opp_cuda_has_status(uint32_t fn)
{
    return fn < OPP_FN_COUNT && !opp_cuda_nostatus[fn];
}

#endif
