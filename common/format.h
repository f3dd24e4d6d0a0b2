/* The opprof trace file format, version 2: the one definition shared by the
 * collector (writer), the report tool (reader) and the tests. docs/FORMAT.md
 * describes the same bytes in prose; change both together. */
#ifndef OPP_FORMAT_H
#define OPP_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define OPP_TRACE_MAGIC "OPPROF\0T" /* 8 bytes */
#define OPP_TRACE_VERSION 2u /* 2: GPU chunks, CUDA API kind; 1 still read */
#define OPP_TRACE_VERSION_MIN 1u
#define OPP_FILE_HEADER_SIZE 16u
#define OPP_CHUNK_HEADER_SIZE 16u
#define OPP_CHUNK_MAX (64u << 20) /* no chunk payload is larger */

/* All integers little-endian. File = header, then chunks until EOF. */
struct opp_file_header {
    char magic[8];
    uint32_t version;
    uint32_t header_size; /* OPP_FILE_HEADER_SIZE */
};

struct opp_chunk_header {
    uint32_t type;
    uint32_t size; /* payload bytes that follow */
    uint32_t crc;  /* CRC-32C (Castagnoli) of the payload */
    uint32_t reserved;
};

enum opp_chunk_type {
    OPP_CHUNK_CLOCK = 1,       /* u64 ticks, u64 monotonic ns, u64 realtime ns */
    OPP_CHUNK_PROCESS = 2,     /* a process instance joined */
    OPP_CHUNK_FUNCS = 3,       /* its table of entry points */
    OPP_CHUNK_THREAD = 4,      /* a thread and its (new) name */
    OPP_CHUNK_EVENTS = 5,      /* encoded events of one thread */
    OPP_CHUNK_DROPPED = 6,     /* records a thread could not hand over */
    OPP_CHUNK_PROCESS_END = 7, /* how a process instance ended */
    OPP_CHUNK_END = 8,         /* the collector finished the file */
    OPP_CHUNK_GPU = 9,         /* GPU activity records of one process (gpu.h) */
    OPP_CHUNK_TYPE_MAX = 9
};

/* Clock domain of a process's tick values. */
enum opp_clock {
    OPP_CLOCK_MONOTONIC = 0, /* ticks are CLOCK_MONOTONIC nanoseconds */
    OPP_CLOCK_TSC = 1        /* ticks are raw TSC; CLOCK chunks calibrate */
};

enum opp_end_how {
    OPP_END_EXITED = 1,  /* said goodbye from its exit path */
    OPP_END_LOST = 2,    /* connection gone without goodbye: killed, crashed, exec'd */
    OPP_END_RUNNING = 3  /* still running when the collector finished */
};

/* Event flags (low bits of the encoded head). */
#define OPP_EV_ARGS 0x1u /* argument values follow */
#define OPP_EV_OPEN 0x2u /* never returned: the process died inside it */
#define OPP_EV_SAME 0x4u /* same function, depth and args as the previous event of
                            the chunk: only the two times follow */
#define OPP_EV_FLAG_BITS 3u

#define OPP_MAX_ARGS 9u     /* argument values per event */
#define OPP_NAME_MAX 256u   /* entry point / library names */
#define OPP_STR_MAX 65536u  /* any string in a chunk */
#define OPP_MAX_ARGV 4096u

/* Operator kinds: how an entry point's argument values become input shapes
 * and FLOPs (common/ops.c). The argument layout of each kind is fixed. */
enum opp_op_kind {
    OPP_OP_PLAIN = 0, /* no arguments recorded */
    OPP_OP_GEMM = 1,  /* M, N, K, trans (transA | transB << 8, 'N'/'T'/'C') */
    OPP_OP_GEMV = 2,  /* M, N, trans ('N'/'T'/'C') */
    OPP_OP_DOT = 3,   /* N */
    OPP_OP_AXPY = 4,  /* N */
    OPP_OP_SCAL = 5,  /* N */
    OPP_OP_CUDA_API = 6, /* status, correlation id (0 when unknown), cbid: a CUDA
                            runtime (lib "cudart") or driver (lib "cuda") call */
    OPP_OP_KIND_MAX = 6
};

/* Element types. */
enum opp_dtype {
    OPP_DT_NONE = 0,
    OPP_DT_F32 = 1,
    OPP_DT_F64 = 2,
    OPP_DT_C64 = 3,  /* complex float */
    OPP_DT_C128 = 4, /* complex double */
    OPP_DT_MAX = 4
};

#endif
