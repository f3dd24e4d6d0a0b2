/* A trace in memory: processes, threads, function tables, names, devices
 * and what was lost. The pass's first read of a full trace makes one
 * with no calls (pass.h); a summary trace loads whole, its call-path
 * nodes as the events of each process's summary thread. */
#ifndef OPP_MODEL_H
#define OPP_MODEL_H

#include <stddef.h>
#include <regex.h>
#include <stdint.h>

#include "trace.h"

#define OPP_NO_PARENT UINT32_MAX

/* One call. 48 bytes; its argument values live in the thread's args array. */
struct opp_event {
    uint64_t begin_ns, end_ns; /* CLOCK_MONOTONIC */
    uint64_t self_ns;          /* own duration minus direct children's (thread_tree.h) */
    uint32_t parent;           /* index in the same thread's events, or OPP_NO_PARENT */
    uint32_t name;             /* string id of the entry point's name */
    uint32_t fn;               /* index in the process's function table */
    uint32_t args;             /* index of the first argument in the thread's args */
    uint16_t depth;            /* calls of ours the thread was inside, as recorded */
    uint8_t flags;             /* OPP_EV_* (OPP_EV_OPEN: the process died inside it) */
    uint8_t nargs;
    uint32_t stack;            /* code stack id of its process (symbolize.h), 0 when none */
};
_Static_assert(sizeof(struct opp_event) == 48, "struct opp_event is 48 bytes");

struct opp_func {
    uint32_t kind, dtype; /* enum opp_op_kind, enum opp_dtype */
    uint32_t name, lib;   /* string ids */
};

/* One process instance (an exec makes a new one with the same pid). */
struct opp_process {
    uint32_t proc; /* serial number in the trace */
    uint32_t pid, ppid, parent_proc, clock;
    uint64_t start_ns, start_real_ns;
    uint32_t end_how; /* enum opp_end_how, 0 when the trace does not say */
    uint64_t end_ns;  /* valid when end_how != 0 */
    uint32_t exit_how, exit_code; /* enum opp_exit_how and its code, when its parent
                                     reaped it (0: not known) */
    char *exe;
    uint32_t argc;
    char **argv;
    uint32_t nfuncs;
    struct opp_func *funcs;
    /* Labels it sent (info.h): host, and the launchers' rank variables. */
    uint32_t ninfo;
    char **info_keys, **info_values;
    /* From them: RANK, else OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK,
     * SLURM_PROCID; WORLD_SIZE, else OMPI_COMM_WORLD_SIZE, PMI_SIZE,
     * SLURM_NTASKS; LOCAL_RANK, else OMPI_COMM_WORLD_LOCAL_RANK,
     * SLURM_LOCALID. -1 when none was set (or not a number). */
    int64_t rank, world_size, local_rank;
};

/* The value of label key of process p, NULL when it has none. */
const char *opp_process_info(const struct opp_process *p, const char *key);

/* The GPU work attached to one event (see struct opp_gpu), torch's
 * meanings: self = the GPU ops (kernels, memcpy, memset) or memory records
 * whose correlation id is the event's; the totals add the children's. */
struct opp_event_gpu {
    uint64_t self_cuda_ns, cuda_ns;
    int64_t self_mem, mem; /* bytes allocated minus bytes freed */
};

/* CPU memory inside one event (MEMORY events, PyTorch's CPU allocator),
 * torch's CPU Mem and Self CPU Mem: self = the bytes of its direct MEMORY
 * children (+ allocated, - freed), total = self + its other children's
 * totals; a MEMORY event's own are its bytes. Per thread, as torch's event
 * tree gives each allocation to the op open on its thread (its key_averages
 * table takes every thread's in the op's span of whole microseconds). */
struct opp_event_cpumem {
    int64_t self, total;
};

struct opp_thread {
    uint32_t proc; /* index in model->procs */
    uint32_t tid;
    char *name;       /* the latest name the trace gave it, "" if none */
    uint64_t dropped; /* records it could not hand over */
    uint64_t interrupted;     /* of dropped, a signal handler's interruption's (version 11 on) */
    struct opp_event *events; /* in tree order once loaded (thread_tree.h) */
    size_t nevents, cap;
    uint64_t *args;
    size_t nargs, args_cap;
    /* one per event, filled by the tests' loaded model (tests/oracle; a
     * summary's pass hands each node's own over instead): NULL when no GPU
     * work is attached, and when the thread has no MEMORY event */
    struct opp_event_gpu *gpu;
    struct opp_event_cpumem *cpumem;
    /* A summary trace's (OPPROF_MODE=summary) thread of one process: each
     * event is a call path (begin 0, end its total time, self_ns its self
     * time) standing for stat[i].count calls; NULL on a real thread. */
    struct opp_sum_stat *stat;
};

struct opp_sum_stat {
    uint64_t count, open;
    uint32_t window; /* schedule window from 1, 0 when none */
    uint64_t self_cuda_ns;
    int64_t self_mem;
    int64_t cpu_mem; /* MEMORY nodes: CPU bytes allocated minus freed */
};

/* ---- GPU activity (trace format 2: OPP_CHUNK_GPU, common/gpu.h) ----
 * Times are CLOCK_MONOTONIC ns like the events'. A record is attached to
 * the CUDA API event (OPP_OP_CUDA_API) of its process that carries the same
 * correlation id (column OPP_COL_CUDA_CORR); 0 means unknown and is never attached. */

#define OPP_GPU_NONE UINT32_MAX /* no launch, no event attached, no name */

/* KERNEL, MEMCPY, MEMSET, SYNC and OVERHEAD records, in trace order. */
struct opp_gpu_op {
    uint64_t start_ns, end_ns; /* end >= start */
    uint64_t bytes;            /* memcpy and memset */
    uint64_t corr;             /* correlation id, 0 when unknown */
    uint32_t name;   /* string id: the demangled kernel name, Kineto's "Memcpy HtoD
                        (Pageable -> Device)", "Memset (Device)", "Stream Sync"... */
    uint32_t proc;   /* index in model->procs */
    uint32_t device, stream;
    uint32_t thread, event; /* the API event it is attached to (thread index, event
                               index), or OPP_GPU_NONE */
    uint32_t launch; /* kernels: index in gpu.launches, else OPP_GPU_NONE */
    uint8_t type;    /* OPP_GPU_KERNEL .. OPP_GPU_OVERHEAD */
    uint8_t kind;    /* memcpy: copy kind; memset: memory kind; sync: type;
                        overhead: kind (clamped to 255) */
    uint8_t src_kind, dst_kind; /* memcpy: memory kinds */
};

/* A kernel's launch configuration. */
struct opp_gpu_launch {
    uint32_t grid[3], block[3];
    uint32_t regs;                    /* per thread */
    uint32_t static_smem, dynamic_smem; /* bytes per block */
};

enum { OPP_GPU_MEM_ALLOC = 1, OPP_GPU_MEM_FREE = 2 }; /* MEMORY record ops */

/* MEMORY records, sorted by time once loaded. */
struct opp_gpu_mem {
    uint64_t time_ns, address;
    int64_t bytes; /* + allocated, - freed (a free without a size takes the
                      size of the earlier allocation at its address, else 0) */
    uint64_t corr;
    uint32_t proc, device;
    uint32_t thread, event; /* as in opp_gpu_op */
    uint8_t op;             /* OPP_GPU_MEM_ALLOC, OPP_GPU_MEM_FREE, else counts 0 */
    uint8_t mem_kind;
};

/* A device as a DEVICE record describes it (the first one per id wins). */
struct opp_gpu_device {
    uint32_t id, name; /* name: string id */
    uint32_t proc;     /* the process whose record described it (index) */
    uint32_t cc_major, cc_minor, sms;
    uint32_t threads_per_sm, regs_per_sm, smem_per_sm, blocks_per_sm, warps_per_sm;
    uint32_t threads_per_block;
    uint64_t global_mem;
};

struct opp_gpu_extcorr {
    uint64_t external; /* e.g. a framework's operator id */
    uint64_t corr;
    uint32_t proc, kind;
};

/* Device memory over time: bytes allocated minus freed since the trace
 * began, after each MEMORY record of the device (every process's). */
struct opp_gpu_mem_point {
    uint64_t time_ns;
    int64_t bytes;
};
struct opp_gpu_memseries {
    uint32_t device;
    struct opp_gpu_mem_point *pts;
    size_t npts;
    int64_t peak, final; /* peak is at least 0 */
};

struct opp_gpu {
    struct opp_gpu_op *ops;
    size_t nops;
    struct opp_gpu_launch *launches;
    size_t nlaunches;
    struct opp_gpu_mem *mem;
    size_t nmem;
    struct opp_gpu_device *devices; /* sorted by id */
    size_t ndevices;
    struct opp_gpu_extcorr *extcorr; /* in trace order */
    size_t nextcorr;
    struct opp_gpu_memseries *memseries; /* sorted by device */
    size_t nmemseries;
    uint64_t records;       /* GPU records read of a GPU (opp_gpu_is_activity) */
    uint64_t skipped;       /* records of types this reader does not know */
    uint64_t unattached;    /* ops and memory records whose non-zero correlation id
                               matched no API event */
    /* Summary traces: per op, the ops it stands for and its window (NULL
     * when every op is one record; ops past nsum count 1, window 0) */
    struct opp_gpu_sum { uint64_t count; uint32_t window; } *sum;
    size_t nsum;
    uint64_t dropped_cupti; /* DROPPED records add up */
    uint64_t dropped_ours;
    uint64_t clients_refused; /* other CUPTI clients refused: their GPU view is ours */
    uint64_t buffers_taken;   /* another client took CUPTI's buffers: ours ended there */
    uint64_t yielded;         /* CUPTI handed over to another client: its GPU activity is its own */
    uint64_t retaken;         /* CUPTI taken back when that client let go */
    uint64_t unfinished;      /* records left out without timestamps (and cut buffers) */
    uint64_t summary_lost;    /* summary traces: launches and CPU blocks let go at the maps'
                                 bound (opp_sum_stats.lost) */
};

/* A KERNEL, MEMCPY, MEMSET, SYNC or OVERHEAD record of process index pi as
 * an op (kernels: name is the process's string id, launch config in *l;
 * nothing attached), and Kineto's name of a non-kernel op in buf. */
struct opp_gpu_rec;
void opp_gpu_op_decode(const struct opp_gpu_rec *g, uint32_t pi, struct opp_gpu_op *op,
                       struct opp_gpu_launch *l);
void opp_gpu_op_label(const struct opp_gpu_op *op, char *buf, size_t cap);

/* ---- CPU memory (trace format 5: OPP_OP_MEMORY events, cpu_memory.c) ----
 * A full trace's MEMORY calls are sized as a pass reads them (below); a
 * summary's MEMORY nodes carry their bytes (opp_sum_stat's cpu_mem). */

struct opp_cpu_memory {
    int summed; /* a summary thread has MEMORY nodes (their bytes, no events) */
};

/* A MEMORY call's bytes, + allocated, - freed (its allocation's size), 0
 * for anything else: of a call of kind with arguments args[0..nargs) as
 * recorded, read in the order given (a pass's): live holds the blocks
 * allocated and not yet freed by owner (a process), so that a free
 * recorded without a size takes its allocation's. -1 in *oom when memory
 * runs out. */
struct opp_live;
int64_t opp_cpu_mem_bytes_read(struct opp_live *live, uint64_t owner, uint32_t kind,
                               const uint64_t *args, uint32_t nargs, int *oom);

struct opp_model_index; /* private lookup tables */

struct opp_model {
    struct opp_process *procs; /* in the order the trace declared them */
    size_t nprocs;
    struct opp_thread *threads; /* in the order they first appeared */
    size_t nthreads;
    char **strs; /* interned names, by string id */
    uint32_t nstrs;
    uint64_t events;      /* events loaded */
    uint64_t dropped;     /* sum of every thread's dropped, and sum_dropped */
    uint64_t sum_dropped; /* a summary's calls on new call paths past its bound
                             (trace version 10 on; before, in a thread's) */
    uint64_t interrupted; /* of a thread's dropped: lost because a signal handler
                             interrupted its publishing, not for a full buffer
                             (trace version 11 on; before, among the full's) */
    uint64_t open_events; /* events flagged OPP_EV_OPEN */
    uint32_t procs_cut;   /* still running when the trace was finished: partial */
    struct opp_gpu gpu;        /* empty for a trace without GPU records */
    struct opp_cpu_memory cpu; /* empty for a trace without MEMORY nodes */
    struct opp_tr_summary sum; /* the reader's: complete flag and warning */
    struct opp_model_index *index;
    struct opp_code *code; /* code stacks and modules (OPPROF_STACKS, symbolize.h) */
    int summary; /* a summary trace (OPPROF_MODE=summary): call paths, not calls */
};

/* Of m's dropped, those lost to a full ring (OPPROF_BUFFER's to help):
 * not a summary's at its bound, nor a signal handler's interruption. */
static inline uint64_t opp_model_dropped_full(const struct opp_model *m)
{
    return m->dropped - m->sum_dropped - m->interrupted;
}

/* The GPU ops op i stands for (1 unless from a summary trace). */
static inline uint64_t opp_gpu_op_count(const struct opp_gpu *g, size_t i)
{
    return i < g->nsum ? g->sum[i].count : 1;
}

/* Commands that need every call's time refuse a summary trace: the words
 * ("TRACE: this is a summary trace ...; WHAT needs every call ...") for
 * trace, a summary. */
void opp_summary_refusal(const char *trace, const char *what, char *err, size_t errlen);

/* The filters a person gave by name or number (--lib, --pid, --tid,
 * --match). */
struct opp_agg_filter_names {
    const char *lib; /* NULL: none */
    int filter_pid, filter_tid;
    uint32_t pid, tid;
    const regex_t *match; /* NULL: none; else match_text is what was given */
    const char *match_text;
    int filter_rank; /* and with --pid, that process has it */
    int64_t rank;
};
/* Whether each names something the trace has (a library of its function
 * tables, a process's pid, a thread's tid (of that pid), a rank (of that
 * pid), a call's or GPU op's name that the regex matches): 0, or -1 with "--lib nosuch: no such library in the
 * trace (its libraries: ...)" and the like in err, so that a typo is not
 * taken for an empty answer. */
int opp_model_filters_known(const struct opp_model *m, const struct opp_agg_filter_names *f,
                            char *err, size_t errlen);

/* Load the summary traces paths[0..npaths) (OPPROF_MODE=summary, opprof
 * summarize): their processes, threads and call-path nodes. Returns NULL
 * with errno set and a reason in err when a file cannot be read as a
 * trace, is a full trace (ENOTSUP: its calls are read in one pass,
 * pass.h) or memory runs out; a damaged tail is not an error
 * (model->sum.warning says it). Several traces (one per host, say) are
 * one model: process serials of the k-th file are offset by k << 24, and
 * its times are moved onto the first file's CLOCK_MONOTONIC through each
 * file's first process's pair of (realtime, monotonic) start times, so
 * hosts whose wall clocks agree line up (the residual error is the wall
 * clocks' disagreement). */
struct opp_model *opp_model_load_many(const char *const *paths, size_t npaths, char *err,
                                      size_t errlen);
/* The traces one model, pass or export takes at most: the k-th file's
 * process serials are offset by k << 24 in 32 bits. */
#define OPP_MODEL_MAX_TRACES 256
/* That rule for readers that stream the files themselves (the Chrome
 * export): a file's clock offset is its first process's realtime - monotonic
 * start; a time t (0: unknown, kept) of the k-th file moves by offset_k -
 * offset_0 (opp_clock_shift_of) onto the first file's clock, never below 0
 * nor past INT64_MAX. The reader refuses a start past INT64_MAX ns (a
 * damaged clock); past that, whatever the clocks say, each step saturates
 * rather than overflow. */
static inline int64_t opp_clock_offset(uint64_t start_real_ns, uint64_t start_ns)
{
    if (start_real_ns >= start_ns)
        return start_real_ns - start_ns > INT64_MAX ? INT64_MAX
                                                    : (int64_t)(start_real_ns - start_ns);
    return start_ns - start_real_ns > INT64_MAX ? -INT64_MAX : -(int64_t)(start_ns - start_real_ns);
}
static inline int64_t opp_clock_shift_of(int64_t offset, int64_t first_offset)
{
    int64_t v;
    if (__builtin_sub_overflow(offset, first_offset, &v))
        return first_offset < 0 ? INT64_MAX : INT64_MIN;
    return v;
}
static inline uint64_t opp_clock_shift(uint64_t t, int64_t shift)
{
    if (!shift || !t)
        return t;
    uint64_t v, by = shift < 0 ? 0 - (uint64_t)shift : (uint64_t)shift;
    if (shift < 0)
        v = t > by ? t - by : 0;
    else if (__builtin_add_overflow(t, by, &v))
        v = UINT64_MAX;
    return v > INT64_MAX ? INT64_MAX : v;
}
void opp_model_free(struct opp_model *m);

static inline const char *opp_model_str(const struct opp_model *m, uint32_t id)
{
    return id < m->nstrs ? m->strs[id] : "";
}

static inline const struct opp_process *opp_thread_process(const struct opp_model *m,
                                                            const struct opp_thread *t)
{
    return &m->procs[t->proc];
}

static inline const struct opp_func *opp_event_func(const struct opp_model *m,
                                                    const struct opp_thread *t,
                                                    const struct opp_event *e)
{
    return &m->procs[t->proc].funcs[e->fn];
}

static inline uint64_t opp_event_dur(const struct opp_event *e)
{
    return e->end_ns > e->begin_ns ? e->end_ns - e->begin_ns : 0;
}

/* Its e->nargs argument values; NULL on a thread none of whose events has
 * any (the thread then has no array: no offset may be added to it). */
static inline const uint64_t *opp_event_args(const struct opp_thread *t, const struct opp_event *e)
{
    return t->args ? t->args + e->args : NULL;
}

static inline uint64_t opp_gpu_op_dur(const struct opp_gpu_op *g)
{
    return g->end_ns - g->start_ns;
}

/* Kernels, memcpy and memset: the GPU ops that count as device time (and
 * are rows of their own); not sync or overhead. */
static inline int opp_gpu_op_timed(const struct opp_gpu_op *g)
{
    return g->type == OPP_GPU_KERNEL || g->type == OPP_GPU_MEMCPY || g->type == OPP_GPU_MEMSET;
}

static inline int opp_model_has_gpu(const struct opp_model *m)
{
    return m->gpu.records != 0;
}

/* Some summary thread has CPU memory (a MEMORY node); a full trace's
 * MEMORY calls are the pass's. */
static inline int opp_model_has_cpu_mem(const struct opp_model *m)
{
    return m->cpu.summed;
}

/* The device with this id, or NULL when no DEVICE record described it. */
const struct opp_gpu_device *opp_gpu_device_find(const struct opp_model *m, uint32_t id);

/* How p ended, one word: "exited" (with its status when known), "killed"
 * (by a signal), "cut" (its records stopped without a goodbye and no
 * parent said why), "running" (when the trace was finished) or "unknown". */
const char *opp_process_end_name(const struct opp_process *p);
/* The same in words for people: "exited with status 0", "killed by signal
 * 9 (SIGKILL)", "cut"...; into buf. */
const char *opp_process_end_text(const struct opp_process *p, char *buf, size_t cap);

#endif
