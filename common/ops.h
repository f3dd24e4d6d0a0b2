/* Operator semantics shared by the report and the tests: how the argument
 * values recorded for an entry point become input shapes and FLOPs. */
#ifndef OPP_OPS_H
#define OPP_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

#define OPP_SHAPES_MAX 36 /* a torch op's inputs (tensors or not) */
#define OPP_RANK_MAX 8

struct opp_shapes {
    int n;                        /* operands */
    int rank[OPP_SHAPES_MAX];     /* dims of each */
    int64_t dim[OPP_SHAPES_MAX][OPP_RANK_MAX];
};

/* A function's kind (base | OPP_OPK_* flags) as the format allows it. */
static inline int opp_kind_valid(uint32_t k)
{
    return (k & OPP_OPK_BASE) <= OPP_OP_KIND_MAX && !(k & ~(OPP_OPK_BASE | OPP_OPK_FLAGS));
}
static inline uint32_t opp_kind_base(uint32_t k) { return k & OPP_OPK_BASE; }

/* The arguments that belong to the kind: past the status when the kind
 * records one, before the external correlation id when it records one. Returns the count, *a moved accordingly. */
static inline uint32_t opp_op_args(uint32_t kind, const uint64_t **a, uint32_t nargs)
{
    if ((kind & OPP_OPK_EXTID) && nargs)
        nargs--; /* the external correlation id, last */
    if ((kind & OPP_OPK_STATUS) && nargs) {
        (*a)++;
        return nargs - 1;
    }
    return (kind & OPP_OPK_STATUS) ? 0 : nargs;
}

/* A torch operator's scope (enum opp_torch_scope) from its raw arguments,
 * -1 for other calls (and a value no scope can be). */
static inline int opp_op_torch_scope(uint32_t kind, const uint64_t *args, uint32_t nargs)
{
    const uint64_t *a = args;
    uint32_t na = opp_op_args(kind, &a, nargs);
    return opp_kind_base(kind) == OPP_OP_TORCH && na > OPP_COL_TORCH_SCOPE &&
                   a[OPP_COL_TORCH_SCOPE] <= INT32_MAX
               ? (int)a[OPP_COL_TORCH_SCOPE]
               : -1;
}

/* The external correlation id a call pushed (0: none, or not recorded). */
static inline uint64_t opp_op_extid(uint32_t kind, const uint64_t *a, uint32_t nargs)
{
    return (kind & OPP_OPK_EXTID) && nargs ? a[nargs - 1] : 0;
}

/* The returned status of a call whose kind records one (0 otherwise): the
 * first argument under OPP_OPK_STATUS and of every CUDA API call. */
static inline int64_t opp_op_status(uint32_t kind, const uint64_t *a, uint32_t nargs)
{
    int has = (kind & OPP_OPK_STATUS) || opp_kind_base(kind) == OPP_OP_CUDA_API;
    return has && nargs ? (int64_t)a[0] : 0;
}

/* The name of status st of library lib (the function table's library:
 * "cudart", "cuda", "cublas", "cublaslt", "cudnn", "nccl", "cufft",
 * "onednn", "xnnpack"), e.g. "cudaErrorInsufficientDriver"; NULL when the
 * library or the value is unknown. From common/status_names.h. */
const char *opp_status_name(const char *lib, int64_t st);

/* The argument values that make two calls the same operator (summary
 * mode's node key): args copied to out with what differs from call to call
 * zeroed: the external correlation id, a CUDA call's correlation id, an
 * NVTX call's category and payload, a MEMORY event's address and bytes.
 * Shapes, names and statuses stay. */
void opp_op_identity(uint32_t kind, const uint64_t *args, uint32_t nargs, uint64_t *out);

/* Logical operand shapes (after transposition), e.g. gemm
 * [[M,K],[K,N],[M,N]]. n = 0 when the kind records none or args are short. */
void opp_op_shapes(uint32_t kind, const uint64_t *args, uint32_t nargs, struct opp_shapes *out);

/* Floating-point operations of one call (complex: 4 real multiplies and
 * 4 adds per complex multiply-add, so gemm is 8*M*N*K); name is the
 * call's name, NULL when none. A torch operator's are what torch.profiler's
 * with_flops gives it from its recorded inputs, by torch's own formulas
 * (torch/csrc/profiler/util.cpp, computeFlops): aten::mm, addmm 2*M*K*N;
 * bmm, baddbmm 2*B*M*K*N; aten::mul, add the elements of input 0;
 * aten::conv2d 2*N*OH*OW*KH*KW*C_in*C_out/groups, from its stride,
 * padding, dilation and groups (recorded from trace version 9); 0 for
 * every other operator and when the inputs do not say. */
uint64_t opp_op_flops(uint32_t kind, uint32_t dtype, const char *name, const uint64_t *args,
                      uint32_t nargs);

/* Element type of the call: the arguments' when the kind records one
 * (GEMM's A/B type, TENSORS' and COLL's dtype), else the function's. */
uint32_t opp_op_dtype(uint32_t kind, uint32_t fn_dtype, const uint64_t *args, uint32_t nargs);

/* Bytes a COLL call moves per rank (count * element size), 0 otherwise. */
uint64_t opp_op_bytes(uint32_t kind, const uint64_t *args, uint32_t nargs);

/* Collective bandwidth, as nccl-tests reports it: the algorithm bytes of a
 * COLL call (opp_op_bytes, times nranks for all_gather, reduce_scatter and
 * all_to_all, whose count is per rank) and the bus factor (all_reduce
 * 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n; others 1; 1
 * when nranks is unknown). algbw = bytes / time, busbw = algbw * factor.
 * 0 bytes for group calls and non-COLL kinds. */
uint64_t opp_coll_alg_bytes(uint32_t kind, const uint64_t *args, uint32_t nargs);
double opp_coll_bus_factor(uint32_t kind, const uint64_t *args, uint32_t nargs);

/* "[[300, 200], [200, 100], [300, 100]]" like torch's Input Shapes. */
int opp_shapes_format(const struct opp_shapes *s, char *out, size_t cap);

/* An NVTX range's name: its message cut at emit_nvtx's ", seq = N" or
 * ", op_id = N" (so every call of an op groups), "domain:" first outside the default domain
 * (domain NULL or ""); msg NULL is "(unnamed range)". */
void opp_nvtx_label(char *buf, size_t cap, const char *domain, const char *msg);

/* Whether a call is shown under a name other than its entry point's: the
 * sub that names it, else 0. A TENSORS call with OPPK_SUBNAME and a known
 * sub is "lib::sub" (onednn::convolution); a LAPACK workspace query (sub
 * OPP_SUB_LWORK_QUERY) is "<entry point> (workspace query)", so that it
 * never counts as the routine's work. */
uint32_t opp_op_relabel(uint32_t kind, const uint64_t *args, uint32_t nargs);
/* That name written to buf (1), or nothing written (0: the entry point's). */
int opp_op_label(uint32_t kind, const uint64_t *args, uint32_t nargs, const char *lib,
                 const char *entry, char *buf, size_t cap);

const char *opp_op_kind_name(uint32_t kind);
const char *opp_dtype_name(uint32_t dtype);
unsigned opp_dtype_size(uint32_t dtype); /* bytes per element, 0 unknown */
const char *opp_subop_name(uint32_t sub); /* "convolution", ...; NULL unknown */
const char *opp_coll_name(uint32_t coll); /* "all_reduce", ...; NULL unknown */
const char *opp_redop_name(uint32_t op);  /* "sum", ...; NULL unknown */

/* Normalise a transpose argument: CBLAS enum (111/112/113) or a Fortran
 * character ('n', 'T', ...) to 'N', 'T' or 'C'. */
static inline uint64_t opp_trans_code(int v)
{
    switch (v) {
    case 111: case 'n': case 'N': return 'N';
    case 112: case 't': case 'T': return 'T';
    case 113: case 'c': case 'C': return 'C';
    default: return '?';
    }
}

#endif
