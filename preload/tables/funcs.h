/* Every intercepted entry point: the libraries, each declared once on a
 * line of OPP_LIBS, their tables, and the ids used in records and in the
 * descriptions sent to the collector. Adding a library is its table file
 * (tables/LIB.h) and its line here; docs in HACKING.md.
 *
 * A table is one row per entry point:
 *   X(L, name, kind, flags, dtype, signature class, class arguments...)
 * L: the library (bound by its OPP_LIBS line); kind: OPP_OP_<kind>; flags:
 * 0, S (returns a status, recorded first), N (named "lib::sub") or SN;
 * dtype: OPP_DT_<dtype>. The signature class, a macro of the same table
 * file, gives the prototype once and what is recorded, through the wrapper
 * bodies of core/internal.h. CUDA runtime and driver calls follow the
 * library entries, one id per CUPTI callback id (cbid) of each domain:
 * OPP_FN_CUDA_RT_BASE + cbid and OPP_FN_CUDA_DRV_BASE + cbid.
 *
 * Pure declarations: assembly (cuda/tramp.S) and the table test include
 * this file too. */
#ifndef OPP_TABLES_FUNCS_H
#define OPP_TABLES_FUNCS_H

/* Tensors in a TENSORS capture: a vector [n], a matrix [r, c] (rank, dims). */
#define OPP_VEC(n) 1, n
#define OPP_MAT(r, c) 2, r, c

#include "tables/blas.h"
#include "tables/c10.h"
#include "tables/lapack.h"
#include "tables/nvtx.h"
#include "tables/onednn.h"
#include "tables/torch.h"
#include "tables/xnnpack.h"

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
#include "tables/cublas.h"
#include "tables/cublaslt.h"
#else
#define OPP_CUBLAS_FUNCS(X, L)
#define OPP_CUBLASLT_FUNCS(X, L)
#endif
#if defined(OPP_HAVE_CUDA) && __has_include(<cudnn.h>)
#define OPP_HAVE_CUDNN 1
#include "tables/cudnn.h"
#else
#define OPP_CUDNN_FUNCS(X, L)
#endif
#if defined(OPP_HAVE_CUDA) && __has_include(<nccl.h>)
#define OPP_HAVE_NCCL 1
#include "tables/nccl.h"
#else
#define OPP_NCCL_FUNCS(X, L)
#endif
#if defined(OPP_HAVE_CUDA) && __has_include(<cufft.h>)
#define OPP_HAVE_CUFFT 1
#include "tables/cufft.h"
#else
#define OPP_CUFFT_FUNCS(X, L)
#endif

/* Every interposed library, one line each, in id order:
 *   Y(X, lib, table, extcorr, sonames, missing, missing_name)
 * lib: its name in the trace and the report (and in common/status_names.h);
 * table: its rows; extcorr: 1 when its calls push a CUPTI external
 * correlation id around the real call, recorded as their last argument
 * (OPP_OPK_EXTID: the kernels a GPU library call launches are attributed to
 * it); sonames: the shared objects that define its entry points, ':'
 * between them ("" for NVTX and torch, whose rows are callbacks, not
 * symbols); missing: what a call returns when no loaded library defines
 * its real function (the call never ran), the library's own "not
 * initialised" status, named missing_name as common/status_names.h names
 * it (0 and NULL for a library without statuses: its calls return 0, or
 * nothing). */
#define OPP_LIBS(Y, X)                                                                             \
    Y(X, blas, OPP_BLAS_FUNCS, 0, "libopenblas.so.0:libblas.so.3", 0, NULL)                        \
    Y(X, lapack, OPP_LAPACK_FUNCS, 0, "libopenblas.so.0:liblapack.so.3", 0, NULL)                  \
    Y(X, onednn, OPP_ONEDNN_FUNCS, 0, "libdnnl.so.3:libdnnl.so.2", 5, "dnnl_runtime_error")        \
    Y(X, xnnpack, OPP_XNNPACK_FUNCS, 0, "libXNNPACK.so.0", 1, "xnn_status_uninitialized")          \
    Y(X, nvtx, OPP_NVTX_FUNCS, 0, "", 0, NULL)                                                     \
    Y(X, torch, OPP_TORCH_FUNCS, 1, "", 0, NULL)                                                   \
    Y(X, c10, OPP_C10_FUNCS, 0, "libc10.so:libc10.so.1.13", 0, NULL)                               \
    Y(X, cublas, OPP_CUBLAS_FUNCS, 1, "libcublas.so.13:libcublas.so.12", 1,                        \
      "CUBLAS_STATUS_NOT_INITIALIZED")                                                             \
    Y(X, nccl, OPP_NCCL_FUNCS, 1, "libnccl.so.2", 2, "ncclSystemError")                            \
    Y(X, cufft, OPP_CUFFT_FUNCS, 1, "libcufft.so.12:libcufft.so.11", 7, "CUFFT_SETUP_FAILED")      \
    Y(X, cublaslt, OPP_CUBLASLT_FUNCS, 1, "libcublasLt.so.13:libcublasLt.so.12", 1,                \
      "CUBLAS_STATUS_NOT_INITIALIZED")                                                             \
    Y(X, cudnn, OPP_CUDNN_FUNCS, 1, "libcudnn.so.9", 1001, "CUDNN_STATUS_NOT_INITIALIZED")

/* Every row of every library, X(lib, name, kind, flags, ...). */
#define OPP_LIB_ROWS_(X, lib, table, extcorr, sonames, ...) table(X, lib)
#define OPP_ALL_FUNCS(X) OPP_LIBS(OPP_LIB_ROWS_, X)

#define OPP_FL_0 0u
#define OPP_FL_S OPP_OPK_STATUS
#define OPP_FL_N OPP_OPK_SUBNAME
#define OPP_FL_SN (OPP_OPK_STATUS | OPP_OPK_SUBNAME)

/* Library names of the CUDA domains, as the trace and report show them. */
#define OPP_LIB_CUDART "cudart"
#define OPP_LIB_CUDA "cuda"
/* What their calls return when no loaded library defines the real
 * function, as OPP_LIBS's missing: Y(lib, missing, missing_name). Calls
 * that return no status (OPP_NS_* in cuda/symbols.c) return 0. */
#define OPP_CUDA_MISSING(Y)                                                                        \
    Y(cudart, 3, "cudaErrorInitializationError")                                                   \
    Y(cuda, 3, "CUDA_ERROR_NOT_INITIALIZED")

#ifndef __ASSEMBLER__ /* cuda/tramp.S uses the lists above */
#include <stdint.h>

enum opp_fn_id {
#define OPP_FN_ENUM(lib, name, ...) OPP_FN_##name,
    OPP_ALL_FUNCS(OPP_FN_ENUM)
#undef OPP_FN_ENUM
    OPP_FN_LIB_COUNT,
    OPP_FN_CUDA_RT_BASE = OPP_FN_LIB_COUNT,
    OPP_FN_CUDA_DRV_BASE = OPP_FN_CUDA_RT_BASE + OPP_CUDA_RT_COUNT,
    OPP_FN_COUNT = OPP_FN_CUDA_DRV_BASE + OPP_CUDA_DRV_COUNT
};

/* Whether a library's calls push an external correlation id, by its name
 * (OPP_LIBEXT_lib) and by its entry points' (OPP_FNEXT_name): compile-time
 * constants for the wrappers. */
enum {
#define OPP_LIBEXT_ENUM(X, lib, table, extcorr, ...) OPP_LIBEXT_##lib = (extcorr),
    OPP_LIBS(OPP_LIBEXT_ENUM, _)
#undef OPP_LIBEXT_ENUM
};
enum {
#define OPP_FNEXT_ENUM(lib, name, ...) OPP_FNEXT_##name = OPP_LIBEXT_##lib,
    OPP_ALL_FUNCS(OPP_FNEXT_ENUM)
#undef OPP_FNEXT_ENUM
};

struct opp_fn_info {
    const char *name, *lib;
    uint32_t kind, dtype;
};
extern const struct opp_fn_info opp_fn_info[OPP_FN_COUNT];
#endif /* __ASSEMBLER__ */

#endif
