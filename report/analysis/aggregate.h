/* key_averages(): the events of a model grouped by name (and optionally by
 * input shapes) into rows of counts and times, like torch.profiler's. GPU
 * ops (kernels, memcpy, memset) are rows of their own (device type CUDA). */
#ifndef OPP_AGGREGATE_H
#define OPP_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include <regex.h>

#include "analysis/model.h"
#include "ops.h"

#define OPP_STACK_MAX 16 /* --group-by-stack N: at most this N */

/* How a sort key's value reads: ns (a total, or an average per call), a
 * count, bytes; NONE: not recorded, always 0. */
enum opp_unit { OPP_UNIT_NS, OPP_UNIT_NS_PER_CALL, OPP_UNIT_COUNT, OPP_UNIT_BYTES, OPP_UNIT_NONE };

/* What rows are sorted by, descending: torch's attribute names, one line
 * each; the enum, the names, --sort's help and the by-rank view's heading
 * all come from this list. The first is the default. A key of unit NONE
 * would be accepted for torch parity, every row 0, sorted by the
 * tie-breakers (name, shapes, stack); none is now. */
#define OPP_SORT_KEYS(X)                                                                           \
    X(SELF_CPU_TIME_TOTAL, "self_cpu_time_total", OPP_UNIT_NS)                                     \
    X(CPU_TIME_TOTAL, "cpu_time_total", OPP_UNIT_NS)                                               \
    X(CPU_TIME, "cpu_time", OPP_UNIT_NS_PER_CALL)                                                  \
    X(COUNT, "count", OPP_UNIT_COUNT)                                                              \
    X(FLOPS, "flops", OPP_UNIT_COUNT)                                                              \
    X(SELF_CUDA_TIME_TOTAL, "self_cuda_time_total", OPP_UNIT_NS)                                   \
    X(CUDA_TIME_TOTAL, "cuda_time_total", OPP_UNIT_NS)                                             \
    X(CUDA_TIME, "cuda_time", OPP_UNIT_NS_PER_CALL)                                                \
    X(SELF_CUDA_MEMORY_USAGE, "self_cuda_memory_usage", OPP_UNIT_BYTES)                            \
    X(CUDA_MEMORY_USAGE, "cuda_memory_usage", OPP_UNIT_BYTES)                                      \
    X(CPU_MEMORY_USAGE, "cpu_memory_usage", OPP_UNIT_BYTES)                                        \
    X(SELF_CPU_MEMORY_USAGE, "self_cpu_memory_usage", OPP_UNIT_BYTES)

enum opp_sort_key {
#define OPP_SORT_KEY_ENUM(id, name, unit) OPP_SORT_##id,
    OPP_SORT_KEYS(OPP_SORT_KEY_ENUM)
#undef OPP_SORT_KEY_ENUM
};

/* 0, or -EINVAL for a name that is not a sort key. */
int opp_sort_key_parse(const char *name, enum opp_sort_key *out);
/* "self_cpu_time_total, cpu_time_total, ...", for messages. */
const char *opp_sort_key_list(void);
/* The key's name ("self_cpu_time_total"); NULL past the last key. */
const char *opp_sort_key_name(enum opp_sort_key k);
enum opp_unit opp_sort_key_unit(enum opp_sort_key k);

/* Zero-initialised options mean: every event, sorted by self CPU time,
 * every row. */
struct opp_agg_opts {
    enum opp_sort_key sort;
    size_t limit;       /* rows kept after sorting; 0 = all */
    int group_by_shape; /* torch's group_by_input_shape */
    int filter_pid;     /* only processes with this OS pid (every instance) */
    uint32_t pid;
    int filter_tid; /* only threads with this OS tid */
    uint32_t tid;
    const char *lib; /* only calls into this library ("blas", "onednn", "nvtx", "cudart"...);
                        then no GPU-op rows. NULL: every library */
    /* torch's group_by_stack_n: rows also by the N innermost frames: the
     * Python frames of the call's code stack when it has them (OPPROF_STACKS
     * in a Python program), else the names of the operators around it */
    uint32_t group_by_stack;
    /* A time window, ns since the trace's first time (opp_pass_first_ns): an event (or GPU op) is
     * kept when it begins in [from_ns, to_ns) */
    int window;
    uint64_t from_ns, to_ns;
    /* With window, calls only when they begin in one of their process's
     * spans too, ns since the trace's first time (opp_pass_first_ns): process p's are
     * [spans[2k], spans[2k + 1]) for k from span_at[p] to span_at[p + 1],
     * sorted, apart (advise: its steps, which leave gaps when they are
     * ranges); a process without any (p >= span_procs, or none), the
     * window whole; NULL: every process the window whole. A GPU op then
     * goes with the call that owns it (its own start when none does) */
    const uint64_t *spans;
    const size_t *span_at;
    uint32_t span_procs;
    const regex_t *match; /* only names that match (regexec), NULL: every name */
    int filter_rank; /* only processes labelled with this rank (model.h) */
    int64_t rank;
    /* A summary trace's schedule window (from 1): only its call paths and
     * GPU rows (full traces select windows by time: window, from_ns) */
    uint32_t sched_window;
};

/* Whether a call of process proc that begins rel ns after the trace's
 * first time is in o's window: from/to and its process's spans. */
static inline int opp_agg_call_in_window(const struct opp_agg_opts *o, uint32_t proc, uint64_t rel)
{
    if (rel < o->from_ns || rel >= o->to_ns)
        return 0;
    if (!o->spans || proc >= o->span_procs || o->span_at[proc] == o->span_at[proc + 1])
        return 1;
    size_t lo = o->span_at[proc], hi = o->span_at[proc + 1]; /* the first span ending after rel */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->spans[2 * mid + 1] <= rel)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < o->span_at[proc + 1] && o->spans[2 * lo] <= rel;
}

/* Whether a GPU op of process proc that starts rel ns after the trace's
 * first time is in o's window: by its start, or with spans as the call
 * that owns it, which begins owner_rel ns after (UINT64_MAX: none). */
static inline int opp_agg_gpu_in_window(const struct opp_agg_opts *o, uint32_t proc, uint64_t rel,
                                        uint64_t owner_rel)
{
    if (o->spans && owner_rel != UINT64_MAX)
        return opp_agg_call_in_window(o, proc, owner_rel);
    return o->spans ? opp_agg_call_in_window(o, proc, rel) : rel >= o->from_ns && rel < o->to_ns;
}

/* Whether the GPU op (of process index proc, attached to an event of
 * thread index thread, or OPP_GPU_NONE) passes the filters: its process's
 * pid; with a tid filter only ops attached to an event of such a thread. */
int opp_agg_selects(const struct opp_model *m, const struct opp_agg_opts *o, uint32_t proc,
                    uint32_t thread);

enum opp_device_type { OPP_DEVICE_CPU = 0, OPP_DEVICE_CUDA = 1 };
const char *opp_device_type_name(uint32_t t); /* "CPU", "CUDA" */

/* "[[300, 200], [200, 100], [300, 100]]" fits with room to spare. */
#define OPP_SHAPES_STR_MAX 1024

/* A CPU row: calls of one entry point; its CUDA times and memory are the
 * GPU work attached to those calls (model.h, struct opp_event_gpu), its CPU
 * memory the MEMORY events inside them (struct opp_event_cpumem). A memory
 * instant inside an operator of its thread is summed into it and is no row
 * of its own: as in torch, the "[memory]" row holds only those outside
 * every operator, each counting its own bytes. A CUDA row: GPU ops of one
 * name (kernel, "Memcpy HtoD (Pageable -> Device)"...), whose Self CUDA =
 * CUDA total = their duration and CPU times are 0. */
struct opp_row {
    const char *key; /* the entry point's symbol name (points into the model) */
    uint32_t name, lib_id; /* their string ids (lib_id UINT32_MAX: "") */
    const char *lib; /* its library, as the first event of the row gave it; "" for CUDA rows */
    uint32_t device_type; /* enum opp_device_type */
    uint64_t count;
    uint64_t self_cpu_time_total_ns;
    uint64_t cpu_time_total_ns;
    uint64_t self_cuda_time_total_ns;
    uint64_t cuda_time_total_ns;
    int64_t self_cuda_memory_usage; /* bytes allocated minus freed */
    int64_t cuda_memory_usage;
    int64_t self_cpu_memory_usage; /* the same of CPU memory (PyTorch's allocator) */
    int64_t cpu_memory_usage;
    uint64_t bytes; /* memcpy and memset rows: bytes copied or set */
    int transfers;  /* a memcpy or memset row: bytes and GB/s apply */
    uint64_t flops;            /* sum over the row's calls of opp_op_flops */
    int coll;                  /* a row of collectives (COLL data calls) */
    uint64_t coll_bytes;       /* their algorithm bytes (opp_coll_alg_bytes) */
    double coll_bus_bytes;     /* the same times each call's bus factor */
    struct opp_shapes shapes;  /* n = 0 unless grouped by shape */
    char shapes_str[OPP_SHAPES_STR_MAX]; /* "" unless grouped by shape */
    uint32_t stack[OPP_STACK_MAX]; /* grouped by stack: the enclosing operators' names
                                      (string ids), innermost first */
    uint32_t nstack;
    char *stack_str; /* grouped by stack: outermost first, ';'-joined ("" for a
                        root call); else NULL. Owned by the aggregate */
    uint64_t errors; /* calls that returned a status other than 0 (success) */
};

/* Calls of one entry point that returned one status other than success. */
struct opp_status_row {
    const char *key;  /* the entry point (points into the model) */
    const char *lib;  /* its library */
    const char *name; /* the status's name (opp_status_name), NULL unknown */
    int64_t status;
    uint64_t count;
};

static inline double opp_row_avg_ns(const struct opp_row *r)
{
    return r->count ? (double)r->cpu_time_total_ns / (double)r->count : 0.0;
}

static inline double opp_row_cuda_avg_ns(const struct opp_row *r)
{
    return r->count ? (double)r->cuda_time_total_ns / (double)r->count : 0.0;
}

/* The row's value of a sort key (times in ns, memory in bytes). */
double opp_row_metric(const struct opp_row *r, enum opp_sort_key key);

/* Memcpy and memset rows: GB/s (bytes per ns) over their device time. */
static inline double opp_row_gbps(const struct opp_row *r)
{
    return r->cuda_time_total_ns ? (double)r->bytes / (double)r->cuda_time_total_ns : 0.0;
}

/* Collective rows: algorithm and bus bandwidth in GB/s (bytes per ns)
 * over their CUDA total; 0 without GPU time. */
static inline double opp_row_algbw(const struct opp_row *r)
{
    return r->cuda_time_total_ns ? (double)r->coll_bytes / (double)r->cuda_time_total_ns : 0.0;
}
static inline double opp_row_busbw(const struct opp_row *r)
{
    return r->cuda_time_total_ns ? r->coll_bus_bytes / (double)r->cuda_time_total_ns : 0.0;
}

/* One process instance's part of an aggregate (model->procs[proc]). */
struct opp_agg_proc {
    uint32_t proc;
    uint64_t calls;   /* its calls that passed the filters */
    uint64_t cpu_ns;  /* their self time (so, unfiltered, the time of its calls that
                         ran inside no other): the parts add up to the Self CPU
                         time total */
    uint64_t gpu_ops; /* its kernels, memcpy and memset that passed them */
};

struct opp_agg {
    struct opp_row *rows;
    size_t nrows;       /* rows kept (after the limit) */
    size_t nrows_all;   /* rows before the limit */
    uint64_t events;    /* events that passed the filters */
    uint64_t gpu_ops;   /* kernels, memcpy and memset that passed them */
    /* torch's "Self CPU time total": self time summed over every row before
     * the limit. */
    uint64_t self_cpu_time_total_ns;
    /* torch's "Self CUDA time total": the device time of the CUDA rows,
     * before the limit. */
    uint64_t self_cuda_time_total_ns;
    /* What the percentages divide by (Self CPU % and CPU total %; Self
     * CUDA %): the totals above, but over the calls (GPU ops) --lib and
     * --match chose from, so that a row's share is of the whole, as
     * torch's of its whole trace; without them the same. filtered: the
     * options that chose ("--lib", "--match", "--lib and --match"), or
     * NULL. */
    uint64_t self_cpu_base_ns, self_cuda_base_ns;
    const char *filtered;
    int gpu; /* the trace has GPU records, or cuda_calls: CSV and JSON rows carry
                the CUDA fields */
    int cpu_mem;    /* the trace has CPU memory (MEMORY events): CSV and JSON rows
                       carry the CPU memory fields */
    int cuda_calls; /* some call that passed the filters is a CUDA runtime or
                       driver call: the table shows the CUDA time columns, at 0
                       when no GPU work was recorded (a CUDA program without a GPU) */
    /* Every (entry point, status) pair of calls that passed the filters and
     * did not return success, most calls first (then by name and status);
     * not limited. errors: their calls. */
    struct opp_status_row *statuses;
    size_t nstatuses;
    uint64_t errors;
    /* The process instances whose calls or GPU work are in the rows, in
     * the trace's order (the first: the one `opprof run` started). The rows
     * add them up: procs tells they do. */
    struct opp_agg_proc *procs;
    size_t nprocs;
};

/* The aggregate added up call by call, as a reader hands the calls over
 * (a pass's: table_stream.h; the rows point into its model). A
 * call first finds its row (opp_agg_acc_row: made on first sight, with
 * what its arguments give), then adds what it took (opp_agg_acc_add),
 * possibly later; a row no call was added to is no row. The filters of
 * threads, --from/--to and schedule windows are the caller's; --lib and
 * --match are these functions'. */
struct opp_agg_acc;
struct opp_agg_acc *opp_agg_acc_new(const struct opp_model *m, const struct opp_agg_opts *o,
                                    struct opp_agg *out);
/* A call: its name (string id), entry point, arguments and, grouped by
 * stack, its key's frames (innermost first). */
struct opp_agg_call {
    uint32_t name;
    const struct opp_func *f;
    const uint64_t *args;
    uint32_t nargs, nstack;
    const uint32_t *stack;
};
#define OPP_AGG_NO_ROW SIZE_MAX
/* What its arguments give a call, and its row (OPP_AGG_NO_ROW: --match
 * did not choose it; it still counts in the percentages' base). */
struct opp_agg_vals {
    size_t row;
    uint32_t kind;
    uint64_t flops, coll; /* per call */
    double bus;
    int64_t status;
};
/* 0 and *v (its row OPP_AGG_NO_ROW for a call --lib or --match leaves
 * out: added, it counts in the percentages' base only); -ENOMEM. */
int opp_agg_acc_row(struct opp_agg_acc *x, const struct opp_agg_call *c, struct opp_agg_vals *v);
/* What calls calls of process index proc took. */
struct opp_agg_part {
    uint64_t calls, self_ns, dur_ns;
    const struct opp_event_gpu *gpu;       /* NULL: none */
    const struct opp_event_cpumem *cpumem; /* NULL: none */
};
int opp_agg_acc_add(struct opp_agg_acc *x, uint32_t proc, const struct opp_agg_vals *v,
                    const struct opp_agg_part *p);
/* What calls of one key took, added up: a pass keeps so the calls whose
 * key waits on the names of the calls around them (--group-by-stack). */
struct opp_agg_sum {
    uint64_t calls, self_ns, dur_ns, flops, coll;
    double bus;
    struct opp_event_gpu gpu;
    struct opp_event_cpumem cpumem;
};
/* A call's (v: what its arguments give, p: what it took) added into s. */
void opp_agg_sum_add(struct opp_agg_sum *s, const struct opp_agg_vals *v,
                     const struct opp_agg_part *p);
void opp_agg_sum_merge(struct opp_agg_sum *s, const struct opp_agg_sum *x);
/* s of process index proc added to v's row (of v, only row, kind and
 * status are read): 0 or -ENOMEM. */
int opp_agg_acc_add_sum(struct opp_agg_acc *x, uint32_t proc, const struct opp_agg_vals *v,
                        const struct opp_agg_sum *s);
/* The row keyed as row is but by the names stack[0..nstack) (innermost
 * first), made on first sight, in *out: 0 or -ENOMEM. */
int opp_agg_acc_stacked(struct opp_agg_acc *x, size_t row, uint32_t nstack, const uint32_t *stack,
                        size_t *out);
/* --group-by-stack N: the frames a call's key takes (N, at most
 * OPP_STACK_MAX; 0 when not grouped by stack). */
uint32_t opp_agg_stack_depth(const struct opp_agg_opts *o);
/* torch's group_by_stack_n: a call's key takes the innermost Python frames
 * of its code stack (stack id of process index proc) when it has them
 * (OPPROF_STACKS in a Python program), into frames[0..depth) as string
 * ids, innermost first: how many; 0: it takes the names of the operators
 * around it, innermost first, instead. */
uint32_t opp_agg_code_frames(const struct opp_model *m, const struct opp_agg_opts *o, uint32_t proc,
                             uint32_t stack, uint32_t *frames);
/* A GPU op (kernel, copy or set) of process index proc, calls of them. */
struct opp_agg_gpu {
    uint32_t name, type, proc;
    uint64_t dur_ns, bytes, calls;
};
int opp_agg_acc_gpu(struct opp_agg_acc *x, const struct opp_agg_gpu *g);
/* The aggregate sorted and limited into out (cpu_mem: the trace has CPU
 * memory), x gone: 0 or -ENOMEM. */
int opp_agg_acc_finish(struct opp_agg_acc *x, int cpu_mem);
/* x and what it added up gone (after an error). */
void opp_agg_acc_drop(struct opp_agg_acc *x);
void opp_agg_free(struct opp_agg *a);

/* Like torch's table: the CUDA columns when some row, before the limit, has
 * Self CUDA time; the CUDA memory columns when some row has Self CUDA Mem
 * > 0; the CPU memory columns when some row has Self CPU Mem or CPU Mem
 * > 0 (a row chosen by --match may have only the latter: an optimizer
 * step whose own frees outweigh what the operators in it keep). */
int opp_agg_has_cuda_time(const struct opp_agg *a);
int opp_agg_has_cuda_mem(const struct opp_agg *a);
int opp_agg_has_cpu_mem(const struct opp_agg *a);

#endif
