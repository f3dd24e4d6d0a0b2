/* Traces written by hand for the suites: one builder over common/trace.h's
 * writer, so a change to the file format is one edit here. A test calls it
 * in the order the chunks go into the file; every step asserts (Check). */
#ifndef OPP_TRACEBUILD_H
#define OPP_TRACEBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/* Elements of a braced list of T, for the macros below. */
#define TB_COUNT(T, ...) ((uint32_t)(sizeof((T[]){__VA_ARGS__}) / sizeof(T)))

struct tb {
    struct opp_tw w;  /* w.offset: the bytes written so far */
    uint32_t proc;    /* the process the next chunks are about */
    uint32_t tid;     /* and the thread */
    uint64_t events, dropped; /* written so far: the END chunk's counts */
    uint32_t processes;
    /* GPU records of proc not written yet: one chunk, written before the
     * next chunk of any kind (or by tb_gpu_chunk) */
    uint8_t *gpu_mem;
    struct opp_wbuf gpu;
    uint32_t ngpu;
    char *ev_mem;
    struct opp_ev_enc enc; /* tb_enc's chunk */
};

/* Create (or replace) the trace file path. */
void tb_open(struct tb *b, const char *path);
/* The END chunk (counts of what was written), then close. */
void tb_end(struct tb *b);
/* Close without an END chunk: a trace cut short, as a killed collector leaves. */
void tb_close(struct tb *b);
/* Rewrite a finished file's header as format version v wrote it: 16 bytes
 * without a CRC before 6, the chunks moved up to follow it. */
void tb_set_version(const char *path, uint32_t v);

/* ---- processes and threads ---- */

struct tb_process {
    uint32_t proc, pid, ppid, parent; /* parent: the parent's process serial */
    uint32_t clock;                   /* enum opp_clock; ticks below are in it */
    uint64_t start, real;             /* start ticks, and realtime ns then */
    const char *exe;
    const char *argv[8];              /* none: exe alone */
};
/* tb_process(b, .proc = 1, .pid = 10, .exe = "p"): declares the process;
 * the next chunks are about it. */
#define tb_process(b, ...) tb_put_process((b), &(const struct tb_process){__VA_ARGS__})
void tb_put_process(struct tb *b, const struct tb_process *p);

/* The process's entry points, rows of struct opp_func_desc
 * {kind, dtype, lib, name}; the row index is the event's function id. */
#define tb_funcs(b, ...)                                                                           \
    tb_put_funcs((b), (const struct opp_func_desc[]){__VA_ARGS__},                                \
                 TB_COUNT(struct opp_func_desc, __VA_ARGS__))
void tb_put_funcs(struct tb *b, const struct opp_func_desc *f, uint32_t n);

/* The process's labels: tb_info(b, "RANK", "1", "host", "a"). */
#define tb_info(b, ...)                                                                            \
    tb_put_info((b), (const char *const[]){__VA_ARGS__}, TB_COUNT(const char *, __VA_ARGS__))
void tb_put_info(struct tb *b, const char *const *kv, uint32_t n);

/* The thread the next events are on; name: a THREAD chunk (NULL: none). */
void tb_thread(struct tb *b, uint32_t tid, const char *name);
/* Back to another process and thread, writing nothing. */
void tb_at(struct tb *b, uint32_t proc, uint32_t tid);
/* Records the current thread could not hand over, its ring full. */
void tb_dropped(struct tb *b, uint64_t count);
/* The same for another reason (enum opp_drop_why). */
void tb_dropped_why(struct tb *b, uint64_t count, uint32_t why);
void tb_process_end(struct tb *b, uint32_t proc, uint32_t how, uint64_t end_ticks);
/* How proc really ended, as its parent reaped it (enum opp_exit_how). */
void tb_process_status(struct tb *b, uint32_t proc, uint32_t how, uint32_t code);
void tb_clock(struct tb *b, uint64_t tsc, uint64_t mono_ns, uint64_t real_ns);
/* A chunk of any type with this payload, as it is. */
void tb_chunk(struct tb *b, uint32_t type, const void *payload, uint32_t size);

/* ---- events: calls of the current thread, in the order they ended ---- */

struct tb_ev {
    uint32_t fn;          /* row of the function table */
    uint64_t begin, end;  /* ticks */
    uint32_t depth;
    uint32_t flags;       /* OPP_EV_OPEN: the process died inside it */
    uint32_t stack;       /* code stack id (a STACK record), 0: none */
    uint32_t nargs;
    uint64_t args[OPP_MAX_ARGS];
};
/* TB_CALL(fn, begin, end, depth, args...): a call that returned. */
#define TB_CALL(fn, begin, end, depth, ...)                                                        \
    {(fn), (begin), (end), (depth), .nargs = TB_COUNT(uint64_t, __VA_ARGS__), .args = {__VA_ARGS__}}
/* A call still running when its process died. */
#define TB_OPEN(fn, begin, end, depth, ...)                                                        \
    {(fn), (begin), (end), (depth), .flags = OPP_EV_OPEN,                                         \
     .nargs = TB_COUNT(uint64_t, __VA_ARGS__), .args = {__VA_ARGS__}}

/* One EVENTS chunk: tb_events(b, TB_CALL(...), TB_CALL(...)). */
#define tb_events(b, ...) tb_events_after((b), 0, __VA_ARGS__)
/* The same with a base time (the chunk's end values are deltas from it). */
#define tb_events_after(b, base_end, ...)                                                          \
    tb_put_events((b), (base_end), (const struct tb_ev[]){__VA_ARGS__},                           \
                  TB_COUNT(struct tb_ev, __VA_ARGS__))
void tb_put_events(struct tb *b, uint64_t base_end, const struct tb_ev *ev, size_t n);

/* An EVENTS chunk of the current thread for tests of the encoding itself:
 * fill it with opp_ev_add* (or raw bytes, setting its count), then write
 * it with tb_enc_write. */
struct opp_ev_enc *tb_enc(struct tb *b, uint64_t base_end);
void tb_enc_write(struct tb *b);

/* ---- GPU records of the current process (common/gpu.h) ---- */

/* The fields of a timed record (KERNEL .. OVERHEAD); each kind reads its own. */
struct tb_op {
    uint64_t start, end; /* MEMORY: an instant, at start */
    uint32_t device, context, stream;
    uint64_t corr;
    /* KERNEL */
    uint32_t name; /* string id */
    uint32_t grid[3], block[3];
    uint32_t regs, static_smem, dynamic_smem;
    uint64_t graph, graph_node;
    /* MEMCPY, MEMSET, MEMORY */
    uint64_t bytes;
    uint32_t kind; /* MEMCPY: copy kind; OVERHEAD: overhead kind */
    uint32_t src_kind, dst_kind, value, mem_kind;
    /* SYNC */
    uint32_t type;
    uint64_t event;
    /* MEMORY */
    uint32_t op; /* 1 allocation, 2 release */
    uint64_t address;
    uint32_t async;
};
struct opp_gpu_rec tb_op_rec(uint32_t type, const struct tb_op *o);
/* A record to change before it is added: TB_KERNEL(.start = 1, .end = 2). */
#define TB_KERNEL(...) tb_op_rec(OPP_GPU_KERNEL, &(const struct tb_op){__VA_ARGS__})
#define TB_MEMCPY(...) tb_op_rec(OPP_GPU_MEMCPY, &(const struct tb_op){__VA_ARGS__})
#define TB_MEMSET(...) tb_op_rec(OPP_GPU_MEMSET, &(const struct tb_op){__VA_ARGS__})
#define TB_SYNC(...) tb_op_rec(OPP_GPU_SYNC, &(const struct tb_op){__VA_ARGS__})
#define TB_MEMORY(...) tb_op_rec(OPP_GPU_MEMORY, &(const struct tb_op){__VA_ARGS__})
#define TB_OVERHEAD(...) tb_op_rec(OPP_GPU_OVERHEAD, &(const struct tb_op){__VA_ARGS__})
#define tb_kernel(b, ...) tb_gpu((b), TB_KERNEL(__VA_ARGS__))
#define tb_memcpy(b, ...) tb_gpu((b), TB_MEMCPY(__VA_ARGS__))
#define tb_memset(b, ...) tb_gpu((b), TB_MEMSET(__VA_ARGS__))
#define tb_sync(b, ...) tb_gpu((b), TB_SYNC(__VA_ARGS__))
#define tb_memory(b, ...) tb_gpu((b), TB_MEMORY(__VA_ARGS__))
#define tb_overhead(b, ...) tb_gpu((b), TB_OVERHEAD(__VA_ARGS__))

struct tb_device {
    uint32_t id, name; /* name: string id */
    uint32_t cc_major, cc_minor, sms, threads_per_sm, regs_per_sm, smem_per_sm, blocks_per_sm,
        warps_per_sm, threads_per_block;
    uint64_t global_mem;
};
#define tb_device(b, ...) tb_put_device((b), &(const struct tb_device){__VA_ARGS__})
void tb_put_device(struct tb *b, const struct tb_device *d);

void tb_string(struct tb *b, uint64_t id, const char *s);
void tb_string_n(struct tb *b, uint64_t id, const char *s, uint32_t len);
void tb_extcorr(struct tb *b, uint32_t kind, uint64_t external, uint64_t corr);
void tb_gpu_dropped(struct tb *b, uint64_t cupti, uint64_t ours);
/* A loaded module: pc - bias is the address in the file; path: string id. */
void tb_module(struct tb *b, uint64_t bias, uint64_t start, uint64_t end, uint64_t path);
/* A code stack: tb_stack(b, id, pc, pc...), innermost first. */
#define tb_stack(b, id, ...)                                                                       \
    tb_put_stack((b), (id), (const uint64_t[]){__VA_ARGS__}, TB_COUNT(uint64_t, __VA_ARGS__))
void tb_put_stack(struct tb *b, uint64_t id, const uint64_t *pcs, uint32_t n);
/* Any record, as built. */
void tb_gpu(struct tb *b, struct opp_gpu_rec r);
/* One record's bytes written by the caller into the buffer returned. */
struct opp_wbuf *tb_gpu_raw(struct tb *b);
/* Write the records added so far as one GPU chunk. */
void tb_gpu_chunk(struct tb *b);
/* A GPU chunk whose payload (u32 count, records) was encoded elsewhere. */
void tb_gpu_payload(struct tb *b, const void *payload, uint32_t size);

/* ---- one Python process, as the suites of the one pass write it ---- */

/* Rows of struct opp_func_desc: torch's operators (with external ids),
 * the CUDA runtime's launch. */
/* clang-format off */
#define TB_FN_TORCH {OPP_OP_TORCH | OPP_OPK_EXTID, OPP_DT_NONE, "torch", "op"}
#define TB_FN_LAUNCH {OPP_OP_CUDA_API, OPP_DT_NONE, "cudart", "cudaLaunchKernel"}
/* clang-format on */
/* Their calls' arguments: a torch operator named name (a string id) with
 * external id ext; a user's label (record_function) named name; a CUDA
 * runtime call with correlation id corr and callback id cbid. */
#define TB_TORCH(name, ext) (name), OPP_TORCH_SCOPE_FUNCTION, 0, (ext)
#define TB_LABEL(name) (name), OPP_TORCH_SCOPE_USER, 0, 0
#define TB_API(corr, cbid) 0, (corr), (cbid)

/* The process's entry points funcs[0..nfuncs) and strings (ids
 * OPP_STR_PRELOAD on, NULL-terminated; NULL: none). */
struct tb_python {
    const struct opp_func_desc *funcs;
    uint32_t nfuncs;
    const char *const *strings;
};
/* tb_open, then process 0 (pid 10, /usr/bin/python3) with py's entry
 * points, the next events on its thread 10 "main". */
void tb_open_python(struct tb *b, const char *path, const struct tb_python *py);
/* py's strings. */
void tb_python_strings(struct tb *b, const struct tb_python *py);
/* A whole trace of it at path: its calls ev[0..n) in one chunk, then
 * more[0..nmore) in one of their own (nmore 0: none), py's strings;
 * killed at end_ns unless 0. */
void tb_python_calls(const char *path, const struct tb_python *py, const struct tb_ev *ev, size_t n,
                     const struct tb_ev *more, size_t nmore, uint64_t end_ns);

/* A trace at path of n iterations, 200 ns apart, of "outer" (100 ns,
 * library "app") around "inner" (20 ns) on one thread of pid 100: two call
 * paths whatever n, for the views whose memory the paths bound. */
void tb_outer_inner(const char *path, uint32_t n);
/* The same, each call recorded with code stack 1 (OPPROF_STACKS): the
 * frames 0x20 (outermost) and 0x10, in no module. */
void tb_outer_inner_stacked(const char *path, uint32_t n);
/* The same with PyTorch's CPU memory: each outer call (pid 100) also
 * allocates 256 bytes at 5 ns in (c10's alloc_cpu, address 0x1000 + 256
 * (i % 64)) and frees them at 50 ns (free_cpu, recorded without a size),
 * beside its inner call. */
void tb_outer_memory(const char *path, uint32_t n);

#endif
