/* The opprof trace file format, version 11: the one definition shared by the
 * collector (writer), the report tool (reader) and the tests. docs/FORMAT.md
 * describes the same bytes in prose; change both together. */
#ifndef OPP_FORMAT_H
#define OPP_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define OPPROF_VERSION "0.1" /* opprof's own, as `opprof --version` says it */
#define OPP_TRACE_MAGIC "OPPROF\0T" /* 8 bytes */
#define OPP_TRACE_VERSION                                                                          \
    11u /* 2: GPU chunks, CUDA API kind; 3: library operator
                                kinds, kind flags, 40 args, process labels;
                                4: summary chunks; 5: the torch and memory
                                kinds; 6: the header's own CRC; 7: a summary
                                node's CPU memory; 8: PROCESS_STATUS; 9:
                                aten::conv2d's integer inputs' values; 10:
                                a summary's own drops (OPP_DROPPED_SUMMARY);
                                11: a DROPPED chunk's reason (enum
                                opp_drop_why); 1 to 10 still read */
#define OPP_TRACE_VERSION_MIN 1u
/* The thread of a DROPPED chunk that counts a summary's calls on new call
 * paths past its node bound (version 10; before, they were counted as
 * thread 0's, with the ring overflows). */
#define OPP_DROPPED_SUMMARY 0xffffffffu
/* Why a DROPPED chunk's records were lost: its 16-byte form (every version)
 * is OPP_DROP_FULL; version 11's 24-byte form adds u32 why, u32 0. */
enum opp_drop_why {
    OPP_DROP_FULL = 0,        /* the thread's ring was full (a summary's bound: its thread) */
    OPP_DROP_INTERRUPTED = 1, /* a signal handler interrupted the thread's publishing */
    OPP_DROP_WHY_MAX = 1
};
#define OPP_FILE_HEADER_SIZE 24u    /* version 6 on */
#define OPP_FILE_HEADER_SIZE_V1 16u /* versions 1 to 5: no CRC */
#define OPP_CHUNK_HEADER_SIZE 16u
#define OPP_CHUNK_MAX (64u << 20) /* no chunk payload is larger */

/* All integers little-endian. File = header, then chunks until EOF. */
struct opp_file_header {
    char magic[8];
    uint32_t version;
    uint32_t header_size; /* OPP_FILE_HEADER_SIZE (OPP_FILE_HEADER_SIZE_V1 before 6) */
    uint32_t crc;         /* version 6 on: CRC-32C of the 16 bytes above */
    uint32_t reserved;    /* 0 */
};
#ifndef __cplusplus /* also read by the torch shim, C++ */
_Static_assert(sizeof(struct opp_file_header) == OPP_FILE_HEADER_SIZE, "file header");
#endif

struct opp_chunk_header {
    uint32_t type;
    uint32_t size; /* payload bytes that follow */
    uint32_t crc;  /* CRC-32C (Castagnoli) of the payload */
    uint32_t reserved;
};

enum opp_chunk_type {
    OPP_CHUNK_CLOCK = 1,           /* u64 ticks, u64 monotonic ns, u64 realtime ns */
    OPP_CHUNK_PROCESS = 2,         /* a process instance joined */
    OPP_CHUNK_FUNCS = 3,           /* its table of entry points */
    OPP_CHUNK_THREAD = 4,          /* a thread and its (new) name */
    OPP_CHUNK_EVENTS = 5,          /* encoded events of one thread */
    OPP_CHUNK_DROPPED = 6,         /* records a thread could not hand over, and why */
    OPP_CHUNK_PROCESS_END = 7,     /* how a process instance ended */
    OPP_CHUNK_END = 8,             /* the collector finished the file */
    OPP_CHUNK_GPU = 9,             /* GPU activity records of one process (gpu.h) */
    OPP_CHUNK_INFO = 10,           /* labels of a process: u32 proc, u32 count, pairs (info.h) */
    OPP_CHUNK_SUMMARY = 11,        /* summary mode: aggregated call paths (summary.h) */
    OPP_CHUNK_SUMMARY_GPU = 12,    /* summary mode: aggregated GPU ops */
    OPP_CHUNK_PROCESS_STATUS = 13, /* version 8: u32 proc, u32 how (enum opp_exit_how),
                                      u32 code, u32 0: the status its parent reaped */
    OPP_CHUNK_TYPE_MAX = 13
};

/* Clock domain of a process's tick values. */
enum opp_clock {
    OPP_CLOCK_MONOTONIC = 0, /* ticks are CLOCK_MONOTONIC nanoseconds */
    OPP_CLOCK_TSC = 1        /* ticks are raw TSC; CLOCK chunks calibrate */
};

enum opp_end_how {
    OPP_END_EXITED = 1,  /* said goodbye from its exit path */
    OPP_END_LOST = 2,    /* cut: connection gone without goodbye (killed, crashed,
                            _exit, exec); PROCESS_STATUS may say which */
    OPP_END_RUNNING = 3  /* still running when the collector finished */
};

/* How a process really ended, as its parent's wait (waitpid, wait4,
 * waitid) saw it, when that parent was profiled too (PROCESS_STATUS). */
enum opp_exit_how {
    OPP_EXIT_STATUS = 1, /* exited: code is its exit status (0 to 255) */
    OPP_EXIT_SIGNAL = 2  /* killed: code is the signal's number (1 to 127) */
};
static inline int opp_exit_valid(uint32_t how, uint32_t code)
{
    return (how == OPP_EXIT_STATUS && code <= 255) ||
           (how == OPP_EXIT_SIGNAL && code >= 1 && code <= 127);
}

/* Event flags (low bits of the encoded head). */
#define OPP_EV_ARGS 0x1u /* argument values follow */
#define OPP_EV_OPEN 0x2u /* never returned: the process died inside it */
#define OPP_EV_SAME 0x4u /* same function, depth and args as the previous event of
                            the chunk: only the two times follow */
#define OPP_EV_STACK 0x8u /* (format 3) a varint code stack id (GPU STACK record of the
                            process) follows the args; part of what SAME compares */
#define OPP_EV_FLAG_BITS 4u /* 3 in format 1 and 2 files */
#define OPP_EV_FLAG_BITS_V2 3u

#define OPP_MAX_ARGS 40u    /* argument values per event (9 before version 3) */
#define OPP_NAME_MAX 256u   /* entry point / library names */
#define OPP_STR_MAX 65536u  /* any string in a chunk */
#define OPP_MAX_ARGV 4096u

/* Operator kinds: how an entry point's argument values become input shapes
 * and FLOPs (common/ops.c). The argument layout of each kind is fixed;
 * optional trailing arguments may be left out (read as 0). A function's kind
 * is a base kind in the low 8 bits plus OPP_OPK_* flags. */
enum opp_op_kind {
    OPP_OP_PLAIN = 0,    /* no arguments recorded */
    OPP_OP_GEMM = 1,     /* M, N, K, trans (transA | transB << 8, 'N'/'T'/'C'),
                         [batch (0: 1), A/B type, C type, compute type (enum opp_dtype,
                         0: the function's dtype)] */
    OPP_OP_GEMV = 2,     /* M, N, trans ('N'/'T'/'C') */
    OPP_OP_DOT = 3,      /* N */
    OPP_OP_AXPY = 4,     /* N */
    OPP_OP_SCAL = 5,     /* N */
    OPP_OP_CUDA_API = 6, /* status, correlation id (0 when unknown), cbid: a CUDA
                            runtime (lib "cudart") or driver (lib "cuda") call */
    OPP_OP_TENSORS = 7,  /* a tensor operator: sub (enum opp_subop), dtype (enum
                            opp_dtype, 0: the function's), ntensors, then per tensor:
                            rank, rank dims. Shapes are the tensors; FLOPs by sub. */
    OPP_OP_COLL = 8,     /* a collective or point-to-point: coll (enum opp_coll), count
                            (elements), dtype (enum opp_dtype), redop (enum opp_redop),
                            rank, nranks, peer/root (~0: none) */
    OPP_OP_NVTX = 9,     /* an annotation range or mark: message (string id, see
                            OPP_STR_PRELOAD), domain (string id, 0: default), category,
                            payload, payload type; named by its message */
    OPP_OP_TORCH = 10,   /* a PyTorch operator (preload/torch): name (string id), scope
                            (enum opp_torch_scope), inputs covered, then per input a tag
                            (OPP_TIN_*: what | dtype << 8 | rank << 16) and rank values:
                            a tensor's dims; aten::conv2d's integers' value and lists
                            of at most 8 integers' items (version 9 on); named by its
                            name */
    OPP_OP_MEMORY = 11,  /* a CPU allocation or free, an instant (begin == end) recorded
                            inside whatever operator is open on the thread: op (1
                            allocation, 2 free), address, bytes (the size asked for; 0
                            on a free: its allocation's); named "[memory]" as torch does */
    OPP_OP_KIND_MAX = 11
};

/* Each kind's columns by name, counted from its first own argument (past
 * the status under OPP_OPK_STATUS): what the wrappers record and every
 * reader takes, in the order the layouts above give. */
enum opp_col_gemm {
    OPP_COL_GEMM_M, OPP_COL_GEMM_N, OPP_COL_GEMM_K, OPP_COL_GEMM_TRANS, /* always */
    OPP_COL_GEMM_BATCH, OPP_COL_GEMM_AB_TYPE, OPP_COL_GEMM_C_TYPE, OPP_COL_GEMM_COMPUTE,
    OPP_COL_GEMM_COLS
};
enum opp_col_gemv { OPP_COL_GEMV_M, OPP_COL_GEMV_N, OPP_COL_GEMV_TRANS, OPP_COL_GEMV_COLS };
enum opp_col_vec { OPP_COL_VEC_N, OPP_COL_VEC_COLS }; /* DOT, AXPY, SCAL */
enum opp_col_cuda { OPP_COL_CUDA_STATUS, OPP_COL_CUDA_CORR, OPP_COL_CUDA_CBID, OPP_COL_CUDA_COLS };
enum opp_col_tensors {
    OPP_COL_TENSORS_SUB, OPP_COL_TENSORS_DTYPE, OPP_COL_TENSORS_COUNT,
    OPP_COL_TENSORS_FIRST /* then per tensor: rank, rank dims */
};
enum opp_col_coll {
    OPP_COL_COLL_OP, OPP_COL_COLL_COUNT, OPP_COL_COLL_DTYPE, OPP_COL_COLL_REDOP,
    OPP_COL_COLL_RANK, OPP_COL_COLL_NRANKS, OPP_COL_COLL_PEER, OPP_COL_COLL_COLS
};
enum opp_col_nvtx {
    OPP_COL_NVTX_MSG, OPP_COL_NVTX_DOMAIN, OPP_COL_NVTX_CATEGORY, OPP_COL_NVTX_PAYLOAD,
    OPP_COL_NVTX_PAYLOAD_TYPE, OPP_COL_NVTX_COLS
};

enum opp_col_torch {
    OPP_COL_TORCH_NAME,
    OPP_COL_TORCH_SCOPE,
    OPP_COL_TORCH_COUNT,
    OPP_COL_TORCH_FIRST /* then per input: tag, rank values */
};

enum opp_col_mem { OPP_COL_MEM_OP, OPP_COL_MEM_ADDRESS, OPP_COL_MEM_BYTES, OPP_COL_MEM_COLS };
enum { OPP_MEM_ALLOC = 1, OPP_MEM_FREE = 2 };

/* A TORCH operator's scope: torch's RecordScope, mapped (its enum's order
 * is torch's to change), and the nn.Module ranges of opprof's hooks. */
enum opp_torch_scope {
    OPP_TORCH_SCOPE_FUNCTION = 0,          /* an aten op, an autograd node */
    OPP_TORCH_SCOPE_BACKWARD_FUNCTION = 1, /* run by the autograd engine */
    OPP_TORCH_SCOPE_OTHER = 2,             /* torch's other scopes (TorchScript...) */
    OPP_TORCH_SCOPE_USER = 7,              /* record_function labels, optimizer steps */
    OPP_TORCH_SCOPE_MODULE = 100           /* an nn.Module's forward */
};

/* A TORCH input's tag word. */
enum opp_torch_in {
    OPP_TIN_OTHER = 0,  /* not a tensor, number or list: shape [] */
    OPP_TIN_TENSOR = 1, /* a defined tensor: its dtype (enum opp_dtype) and sizes */
    OPP_TIN_UNDEF = 2,  /* an undefined tensor: shape [] */
    OPP_TIN_SCALAR = 3, /* a number: shape []; aten::conv2d's integers: the value
                           (rank 1, version 9) */
    OPP_TIN_LIST = 4    /* a list: shape [] (as torch 1.13 records it); aten::conv2d's
                           lists of at most 8 integers: the items (rank: their count,
                           version 9) */
};
#define OPP_TIN_TAG(what, dtype, rank)                                                             \
    ((uint64_t)(what) | (uint64_t)(dtype) << 8 | (uint64_t)(rank) << 16)
#define OPP_TIN_WHAT(tag) ((unsigned)((tag)&0xff))
#define OPP_TIN_DTYPE(tag) ((unsigned)((tag) >> 8 & 0xff))
#define OPP_TIN_RANK(tag) ((unsigned)((tag) >> 16 & 0xff))

/* Kind flags. */
#define OPP_OPK_BASE 0xffu
#define OPP_OPK_STATUS 0x100u  /* the first argument is the returned status (0: success);
                                  the kind's own arguments follow it */
#define OPP_OPK_SUBNAME 0x200u /* TENSORS: the operator is named "lib::sub" (e.g.
                                  onednn::convolution), not after its entry point */
#define OPP_OPK_EXTID 0x400u   /* the last argument is the call's CUPTI external
                                  correlation id (0: none pushed) */
#define OPP_OPK_FLAGS (OPP_OPK_STATUS | OPP_OPK_SUBNAME | OPP_OPK_EXTID)
/* The external correlation kind the agent pushes (CUPTI's CUSTOM2: Kineto
 * pushes CUSTOM0 and CUSTOM1). */
#define OPP_EXTCORR_KIND 5u

/* String ids that the preload assigns (NVTX messages and domains, thread
 * names) start here; lower ids are the CUPTI converter's. Both arrive as
 * GPU STRING records (gpu.h) of the same process. */
#define OPP_STR_PRELOAD 0x80000000u

/* What a TENSORS operator computes. Convolutions, inner products and matmuls
 * list their tensors in the forward sense: src (x, or dx), weights (w, or
 * dw), dst (y, or dy); weights of a grouped convolution may carry the group
 * dim first. FLOPs (0 where not listed): the convolutions and INNER_PRODUCT
 * 2*|dst|*|weights|/dst[1] (so 2*N*K*C/g*R*S*P*Q), DECONV 2*|src|*|weights|/src[1],
 * MATMUL 2*|dst|*src[last]. */
enum opp_subop {
    OPP_SUB_NONE = 0,
    OPP_SUB_CONV = 1,          /* convolution forward */
    OPP_SUB_CONV_BWD_DATA = 2,
    OPP_SUB_CONV_BWD_FILTER = 3,
    OPP_SUB_DECONV = 4,
    OPP_SUB_MATMUL = 5,
    OPP_SUB_INNER_PRODUCT = 6,
    OPP_SUB_ELTWISE = 7,       /* activation */
    OPP_SUB_POOLING = 8,
    OPP_SUB_BATCH_NORM = 9,
    OPP_SUB_LAYER_NORM = 10,
    OPP_SUB_SOFTMAX = 11,
    OPP_SUB_REORDER = 12,
    OPP_SUB_BINARY = 13,
    OPP_SUB_SUM = 14,
    OPP_SUB_CONCAT = 15,
    OPP_SUB_LRN = 16,
    OPP_SUB_RNN = 17,
    OPP_SUB_ATTENTION = 18,
    OPP_SUB_RESAMPLING = 19,
    OPP_SUB_REDUCTION = 20,
    OPP_SUB_SHUFFLE = 21,
    OPP_SUB_PRELU = 22,
    OPP_SUB_FFT = 23,          /* a transform: one tensor, its sizes */
    OPP_SUB_GRAPH = 24,        /* several operations fused (cuDNN graph) */
    /* BLAS and LAPACK (FLOPs: docs/FORMAT.md, common/ops.c). Shapes are logical
       (after transposition, by side); packed matrices [n, n]; banded ones
       their band storage [bands, n]. */
    OPP_SUB_NRM2 = 25,         /* x [n] */
    OPP_SUB_ASUM = 26,         /* x [n] */
    OPP_SUB_ROT = 27,          /* x [n], y [n] (rot, rotm) */
    OPP_SUB_RSCAL = 28,        /* x [n] scaled by a real (csscal, zdscal) */
    OPP_SUB_TRMV = 29,         /* A [n, n], x [n] (trmv, trsv, tpmv, tpsv) */
    OPP_SUB_SYMV = 30,         /* A [n, n], x [n], y [n] (symv, hemv, spmv, hpmv) */
    OPP_SUB_GER = 31,          /* x [m], y [n], A [m, n] (ger, geru, gerc) */
    OPP_SUB_SYR = 32,          /* x [n], A [n, n] (syr, her, spr, hpr) */
    OPP_SUB_SYR2 = 33,         /* x [n], y [n], A [n, n] (syr2, her2, spr2, hpr2) */
    OPP_SUB_SYMM = 34,         /* A [ka, ka], B [m, n], C [m, n] (symm, hemm) */
    OPP_SUB_SYRK = 35,         /* op(A) [n, k], C [n, n] (syrk, herk) */
    OPP_SUB_SYR2K = 36,        /* op(A) [n, k], op(B) [n, k], C [n, n] (syr2k, her2k) */
    OPP_SUB_TRMM = 37,         /* A [ka, ka], B [m, n] (trmm, trsm) */
    OPP_SUB_GESV = 38,         /* A [n, n], B [n, nrhs] */
    OPP_SUB_GETRF = 39,        /* A [m, n] */
    OPP_SUB_POTRF = 40,        /* A [n, n] */
    OPP_SUB_GEQRF = 41,        /* A [m, n] */
    OPP_SUB_ORGQR = 42,        /* Q [m, n], tau [k] (orgqr, ungqr) */
    OPP_SUB_LWORK_QUERY = 43,  /* a LAPACK workspace query (lwork = -1): the
                                  routine's tensors, no FLOPs; named
                                  "<entry point> (workspace query)" */
    OPP_SUB_MAX = 43
};

/* Collectives (NCCL). */
enum opp_coll {
    OPP_COLL_NONE = 0,
    OPP_COLL_ALL_REDUCE = 1,
    OPP_COLL_BROADCAST = 2,
    OPP_COLL_REDUCE = 3,
    OPP_COLL_ALL_GATHER = 4,
    OPP_COLL_REDUCE_SCATTER = 5,
    OPP_COLL_SEND = 6,
    OPP_COLL_RECV = 7,
    OPP_COLL_ALL_TO_ALL = 8,
    OPP_COLL_GROUP_START = 9,
    OPP_COLL_GROUP_END = 10,
    OPP_COLL_MAX = 10
};

enum opp_redop { OPP_RED_NONE = 0, OPP_RED_SUM = 1, OPP_RED_PROD = 2, OPP_RED_MAX_ = 3,
                 OPP_RED_MIN = 4, OPP_RED_AVG = 5, OPP_RED_OTHER = 6 };

/* Element types. */
enum opp_dtype {
    OPP_DT_NONE = 0,
    OPP_DT_F32 = 1,
    OPP_DT_F64 = 2,
    OPP_DT_C64 = 3,  /* complex float */
    OPP_DT_C128 = 4, /* complex double */
    OPP_DT_F16 = 5,
    OPP_DT_BF16 = 6,
    OPP_DT_TF32 = 7,  /* a compute type */
    OPP_DT_I8 = 8,
    OPP_DT_U8 = 9,
    OPP_DT_I32 = 10,
    OPP_DT_I64 = 11,
    OPP_DT_F8E4M3 = 12,
    OPP_DT_F8E5M2 = 13,
    OPP_DT_C32 = 14, /* complex half */
    OPP_DT_BOOL = 15,
    OPP_DT_MAX = 15
};

#endif
