/* Every intercepted entry point, from each library's table: the ids used
 * in records and the descriptions sent to the collector. Adding a library
 * is adding its table here. A table is one line per entry point:
 *   X(name, lib, kind, flags, dtype, signature class, class arguments...)
 * kind: OPP_OP_<kind>; flags: 0, S (returns a status, recorded first),
 * N (named "lib::sub") or SN; dtype: OPP_DT_<dtype>. The signature class
 * is a macro of the library's .c file that defines the wrapper. CUDA runtime and driver calls follow the
 * library entries, one id per CUPTI callback id (cbid) of each domain:
 * OPP_FN_CUDA_RT_BASE + cbid and OPP_FN_CUDA_DRV_BASE + cbid. */
#ifndef OPP_FUNCS_H
#define OPP_FUNCS_H

#include "blas_table.h"
#include "onednn_table.h"
#include "xnnpack_table.h"
#include "nvtx_table.h"

#ifdef OPP_HAVE_CUDA
#include "cuda_api.h" /* generated from the toolkit's CUPTI headers */
#else
#define OPP_CUDA_RT_COUNT 0
#define OPP_CUDA_DRV_COUNT 0
#define OPP_CUDA_RT_TABLE(X)
#define OPP_CUDA_DRV_TABLE(X)
#define OPP_CUDA_RT_SYMS(X)
#define OPP_CUDA_DRV_SYMS(X)
#endif

/* GPU tensor libraries: with the toolkit, each whose header is installed
 * (cuDNN and NCCL often come separately); the .c files use the same tests. */
#if defined(OPP_HAVE_CUDA) && __has_include(<cublas_api.h>)
#define OPP_HAVE_CUBLAS 1
#include "cublas_table.h"
#include "cublaslt_table.h"
#else
#define OPP_CUBLAS_FUNCS(X)
#define OPP_CUBLASLT_FUNCS(X)
#endif
#if defined(OPP_HAVE_CUDA) && __has_include(<cudnn.h>)
#define OPP_HAVE_CUDNN 1
#include "cudnn_table.h"
#else
#define OPP_CUDNN_FUNCS(X)
#endif
#if defined(OPP_HAVE_CUDA) && __has_include(<nccl.h>)
#define OPP_HAVE_NCCL 1
#include "nccl_table.h"
#else
#define OPP_NCCL_FUNCS(X)
#endif
#if defined(OPP_HAVE_CUDA) && __has_include(<cufft.h>)
#define OPP_HAVE_CUFFT 1
#include "cufft_table.h"
#else
#define OPP_CUFFT_FUNCS(X)
#endif
#define OPP_GPULIB_FUNCS(X)                                                                        \
    OPP_CUBLAS_FUNCS(X) OPP_NCCL_FUNCS(X) OPP_CUFFT_FUNCS(X) OPP_CUBLASLT_FUNCS(X) OPP_CUDNN_FUNCS(X)

/* The GPU library entry points come last: they push a CUPTI external
 * correlation id around the real call while CUPTI records (kind flag
 * OPP_OPK_EXTID: the id is their last argument). */
#define OPP_ALL_FUNCS(X)                                                                           \
    OPP_BLAS_FUNCS(X) OPP_ONEDNN_FUNCS(X) OPP_XNNPACK_FUNCS(X) OPP_NVTX_FUNCS(X) OPP_GPULIB_FUNCS(X)

#define OPP_FL_0 0u
#define OPP_FL_S OPP_OPK_STATUS
#define OPP_FL_N OPP_OPK_SUBNAME
#define OPP_FL_SN (OPP_OPK_STATUS | OPP_OPK_SUBNAME)

/* Library names of the CUDA domains, as the trace and report show them. */
#define OPP_LIB_CUDART "cudart"
#define OPP_LIB_CUDA "cuda"

#ifndef __ASSEMBLER__ /* preload/cuda_tramp.S uses the lists above */
enum opp_fn_id {
#define OPP_FN_ENUM(name, ...) OPP_FN_##name,
    OPP_ALL_FUNCS(OPP_FN_ENUM)
#undef OPP_FN_ENUM
    OPP_FN_LIB_COUNT,
    OPP_FN_CUDA_RT_BASE = OPP_FN_LIB_COUNT,
    OPP_FN_CUDA_DRV_BASE = OPP_FN_CUDA_RT_BASE + OPP_CUDA_RT_COUNT,
    OPP_FN_COUNT = OPP_FN_CUDA_DRV_BASE + OPP_CUDA_DRV_COUNT
};

#define OPP_FN_ONE_(...) +1
enum { OPP_FN_GPULIB_FIRST = OPP_FN_LIB_COUNT - (0 OPP_GPULIB_FUNCS(OPP_FN_ONE_)) };
#undef OPP_FN_ONE_
/* A compile-time constant for a wrapper's own id. */
#define opp_fn_extid(fn) ((int)(fn) >= (int)OPP_FN_GPULIB_FIRST && (int)(fn) < (int)OPP_FN_LIB_COUNT)

struct opp_fn_info {
    const char *name, *lib;
    uint32_t kind, dtype;
};
extern const struct opp_fn_info opp_fn_info[OPP_FN_COUNT];
#endif /* __ASSEMBLER__ */

#endif
