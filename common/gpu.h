/* GPU activity records: what the device did (kernels, copies, sets,
 * synchronisation, allocations), one encoding shared by the socket message
 * (OPP_MSG_GPU), the trace chunk (OPP_CHUNK_GPU) and every reader. The agent
 * converts CUPTI's structs into these, so nothing downstream depends on a
 * CUPTI version. docs/FORMAT.md describes the same bytes.
 *
 * A record is: varint type, varint field count n, n varint fields (STRING:
 * varint id, then a string). Readers take the fields they know and skip the
 * rest; a field a writer left out reads as 0. Times are CLOCK_MONOTONIC ns
 * (the agent registers that clock with CUPTI), whatever the process's
 * clock for CPU events. */
#ifndef OPP_GPU_H
#define OPP_GPU_H

#include <stdint.h>

#include "buf.h"

enum opp_gpu_type {
    OPP_GPU_STRING = 1,   /* id, text: names that records refer to by id */
    OPP_GPU_KERNEL = 2,
    OPP_GPU_MEMCPY = 3,
    OPP_GPU_MEMSET = 4,
    OPP_GPU_SYNC = 5,
    OPP_GPU_MEMORY = 6,   /* an allocation or free (a point in time: start == end) */
    OPP_GPU_OVERHEAD = 7, /* CUPTI's own work */
    OPP_GPU_EXTCORR = 8,  /* external id -> correlation id */
    OPP_GPU_DROPPED = 9,  /* records lost before they reached us */
    OPP_GPU_DEVICE = 10,  /* a device's name and limits */
    OPP_GPU_STACK = 11,   /* a code stack (OPPROF_STACKS): id, then PCs innermost first */
    OPP_GPU_MODULE = 12,  /* a loaded module: load bias, start, end, path string id */
    OPP_GPU_TYPE_MAX = 12
};

/* Whether a record of this type comes of a GPU (CUPTI's activity, a
 * device): names, code stacks and module maps travel as GPU records too,
 * in programs that have none. */
static inline int opp_gpu_is_activity(uint32_t type)
{
    return type != OPP_GPU_STRING && type != OPP_GPU_STACK && type != OPP_GPU_MODULE;
}

/* Fields every timed record (KERNEL..OVERHEAD) starts with. */
enum {
    OPP_GF_START = 0,
    OPP_GF_END,
    OPP_GF_DEVICE,
    OPP_GF_CONTEXT,
    OPP_GF_STREAM,
    OPP_GF_CORRELATION,
    OPP_GF_COMMON /* first kind-specific field */
};

/* KERNEL */
enum {
    OPP_GF_K_NAME = OPP_GF_COMMON, /* string id */
    OPP_GF_K_GRID_X, OPP_GF_K_GRID_Y, OPP_GF_K_GRID_Z,
    OPP_GF_K_BLOCK_X, OPP_GF_K_BLOCK_Y, OPP_GF_K_BLOCK_Z,
    OPP_GF_K_REGS,          /* registers per thread */
    OPP_GF_K_STATIC_SMEM,   /* bytes per block */
    OPP_GF_K_DYNAMIC_SMEM,  /* bytes per block */
    OPP_GF_K_GRAPH,         /* graph id, 0 when not launched from a graph */
    OPP_GF_K_GRAPH_NODE,
    OPP_GF_K_COUNT
};

/* MEMCPY: kind is CUpti_ActivityMemcpyKind (1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP...),
 * src/dst are CUpti_ActivityMemoryKind (1 pageable, 2 pinned, 3 device...). */
enum {
    OPP_GF_C_BYTES = OPP_GF_COMMON,
    OPP_GF_C_KIND, OPP_GF_C_SRC_KIND, OPP_GF_C_DST_KIND, OPP_GF_C_GRAPH,
    OPP_GF_C_COUNT
};

/* MEMSET */
enum {
    OPP_GF_S_BYTES = OPP_GF_COMMON,
    OPP_GF_S_VALUE, OPP_GF_S_MEM_KIND, OPP_GF_S_GRAPH,
    OPP_GF_S_COUNT
};

/* SYNC: type is CUpti_ActivitySynchronizationType (1 event sync, 2 stream wait
 * event, 3 stream sync, 4 context sync). */
enum {
    OPP_GF_Y_TYPE = OPP_GF_COMMON,
    OPP_GF_Y_EVENT,
    OPP_GF_Y_COUNT
};

/* MEMORY: op 1 allocation, 2 release (the values of OPP_MEM_ALLOC and
 * OPP_MEM_FREE); mem kind as above. */
enum {
    OPP_GF_M_OP = OPP_GF_COMMON,
    OPP_GF_M_MEM_KIND, OPP_GF_M_ADDRESS, OPP_GF_M_BYTES, OPP_GF_M_ASYNC,
    OPP_GF_M_COUNT
};

/* OVERHEAD: kind is CUpti_ActivityOverheadKind. */
enum {
    OPP_GF_O_KIND = OPP_GF_COMMON,
    OPP_GF_O_COUNT
};

/* EXTCORR */
enum { OPP_GF_X_KIND = 0, OPP_GF_X_EXTERNAL, OPP_GF_X_CORRELATION, OPP_GF_X_COUNT };

/* DROPPED: CUPTI's count (cuptiActivityGetNumDroppedRecords), records in
 * buffers we could not hand to the collector, other CUPTI clients of the
 * process refused because we hold CUPTI (their GPU activity is ours),
 * clients that took CUPTI's activity buffers from us (ours ends there),
 * records left out unfinished (no timestamps: a forced flush before the
 * work ended, or CUPTI short of device memory; and buffers whose iteration
 * stopped at an incomplete record, one each), times we handed CUPTI over
 * to another client (GPU activity is its own until it lets go), and times
 * we took it back; in a summary trace, the launches and CPU blocks its maps
 * let go of at their bound while still needed (opp_sum_stats.lost: their
 * GPU time, or their frees' sizes, are not in it). A record may carry
 * fewer fields: those missing are 0. */
enum {
    OPP_GF_D_CUPTI = 0, OPP_GF_D_OURS, OPP_GF_D_CLIENTS, OPP_GF_D_TAKEN, OPP_GF_D_UNFINISHED,
    OPP_GF_D_YIELDED, OPP_GF_D_RETAKEN, OPP_GF_D_SUMMARY_LOST,
    OPP_GF_D_COUNT
};

/* DEVICE */
enum {
    OPP_GF_V_ID = 0, OPP_GF_V_NAME, OPP_GF_V_CC_MAJOR, OPP_GF_V_CC_MINOR, OPP_GF_V_SMS,
    OPP_GF_V_THREADS_PER_SM, OPP_GF_V_REGS_PER_SM, OPP_GF_V_SMEM_PER_SM,
    OPP_GF_V_BLOCKS_PER_SM, OPP_GF_V_WARPS_PER_SM, OPP_GF_V_THREADS_PER_BLOCK,
    OPP_GF_V_GLOBAL_MEM,
    OPP_GF_V_COUNT
};

/* STACK: f[0] id (from 1), f[1..] return addresses, innermost first; then
 * (torch programs) the Python frames above them, innermost first, each a
 * word OPP_STACK_PY | the string id of "file(line): function". */
#define OPP_STACK_PY (0xffull << 56)
#define OPP_STACK_PY_MASK (0xffull << 56)
enum { OPP_GF_ST_ID = 0, OPP_GF_ST_PC0 };
/* MODULE: pc - bias is the address in the ELF file's symbol table. */
enum { OPP_GF_MD_BIAS = 0, OPP_GF_MD_START, OPP_GF_MD_END, OPP_GF_MD_PATH, OPP_GF_MD_COUNT };

#define OPP_GPU_FIELDS_MAX 24u
#define OPP_NAME_STR_MAX 4096u /* longest kernel name kept (longer ones are cut) */
#define OPP_GPU_REC_MAX (2u * 10u + OPP_GPU_FIELDS_MAX * 10u + 4u + OPP_NAME_STR_MAX)

struct opp_gpu_rec {
    uint32_t type;
    uint32_t nfields;                 /* as written; fields past it read as 0 */
    uint64_t f[OPP_GPU_FIELDS_MAX];   /* STRING: f[0] = id */
    const char *str;                  /* STRING only: not NUL-terminated */
    uint32_t slen;
};

/* Append one record; -1 (nothing appended) when it does not fit. */
int opp_gpu_put(struct opp_wbuf *w, const struct opp_gpu_rec *r);
/* Read one record; -1 on malformed input (reason in *why). Unknown types
 * are returned as they are (callers skip them). */
int opp_gpu_get(struct opp_rbuf *r, struct opp_gpu_rec *out, const char **why);
/* Check a whole payload: u32 count, then count records. 0 or -1 with *why. */
int opp_gpu_check(const void *p, uint32_t size, uint32_t *count, const char **why);

#endif
