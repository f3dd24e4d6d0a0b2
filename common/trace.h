/* Writing and reading opprof trace files (format.h, docs/FORMAT.md).
 * The writer is used by the collector and by tests that build traces by
 * hand; the reader streams a file to a visitor, converting every tick value
 * to CLOCK_MONOTONIC nanoseconds. */
#ifndef OPP_TRACE_H
#define OPP_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "format.h"
#include "gpu.h"
#include "util.h"

/* ---- writer ---- */

struct opp_tw {
    int fd;
    uint64_t offset; /* bytes written */
    int error;       /* sticky errno of the first failed write */
    int held;        /* a file already there, locked, kept as it was until the first chunk */
};

/* Create (or replace) the trace file. An existing file that is not an opprof
 * trace is never overwritten. 0, or -errno with a reason in err. */
int opp_tw_open(struct opp_tw *w, const char *path, char *err, size_t errlen);
/* opp_tw_open, but a file already at path (a trace, or empty) is only
 * locked, held as it is (w->held) until the first chunk written replaces
 * it: closed before that, it is left unchanged. A file it makes gets its
 * header at once. */
int opp_tw_open_held(struct opp_tw *w, const char *path, char *err, size_t errlen);
/* Whether opp_tw_open could write a trace at path (a missing file: its
 * directory takes a new one; a trace: no other writer holds it), making
 * and changing nothing, a FIFO or device not even opened: 0, or -errno
 * with its reason, in the same words, in err. */
int opp_tw_check(const char *path, char *err, size_t errlen);
/* Whether a collector is writing a trace at path (holds its writer's
 * lock): -EBUSY with err said as opp_tw_check says it, else 0 (no such
 * file too). For an output that would replace the file under it. */
int opp_tw_busy(const char *path, char *err, size_t errlen);
int opp_tw_chunk(struct opp_tw *w, uint32_t type, const void *payload, uint32_t size);
int opp_tw_close(struct opp_tw *w);

int opp_tw_clock(struct opp_tw *w, const struct opp_clock_sample *s);
struct opp_tw_process {
    uint32_t proc, pid, ppid, parent_proc, clock;
    uint64_t start_ticks, start_real_ns;
    const char *exe;
    uint32_t argc;
    const char *const *argv;
};
int opp_tw_process(struct opp_tw *w, const struct opp_tw_process *p);
struct opp_func_desc {
    uint32_t kind, dtype;
    const char *lib, *name;
};
int opp_tw_funcs(struct opp_tw *w, uint32_t proc, uint32_t count, const struct opp_func_desc *f);
int opp_tw_thread(struct opp_tw *w, uint32_t proc, uint32_t tid, const char *name);
/* why: enum opp_drop_why (OPP_DROP_FULL: the chunk every version reads). */
int opp_tw_dropped(struct opp_tw *w, uint32_t proc, uint32_t tid, uint64_t count, uint32_t why);
/* records: u32 count, then count GPU records (gpu.h), as OPP_MSG_GPU carries them. */
int opp_tw_gpu(struct opp_tw *w, uint32_t proc, const void *records, uint32_t size);
/* pairs: u32 count, count x (str key, str value), as OPP_MSG_INFO carries it. */
int opp_tw_info(struct opp_tw *w, uint32_t proc, const void *pairs, uint32_t size);
int opp_tw_process_end(struct opp_tw *w, uint32_t proc, uint32_t how, uint64_t end_ticks);
/* how: enum opp_exit_how, code its exit status or signal (opp_exit_valid). */
int opp_tw_process_status(struct opp_tw *w, uint32_t proc, uint32_t how, uint32_t code);
int opp_tw_end(struct opp_tw *w, uint64_t events, uint64_t dropped, uint32_t processes);

/* Encoder of one EVENTS chunk: events of one thread in the order they
 * ended (end values must not decrease). */
#define OPP_EV_CHUNK_HDR 24u
#define OPP_EV_MAX_BYTES (5u + 10u + 10u + 3u + 2u + 10u * OPP_MAX_ARGS + 5u)
struct opp_ev_enc {
    struct opp_wbuf w;
    uint64_t prev_end;
    uint32_t count;
    /* the previous event, for OPP_EV_SAME */
    uint32_t prev_fn, prev_depth, prev_flags, prev_nargs;
    uint64_t prev_args[OPP_MAX_ARGS];
    uint32_t prev_stack;
};
void opp_ev_begin(struct opp_ev_enc *e, void *mem, size_t cap, uint32_t proc, uint32_t tid,
                  uint64_t base_end);
/* An event's head (the function and flags, or OPP_EV_SAME), its end as
 * the step from the previous event's (prev_end), and its duration, into
 * w; the caller has checked that OPP_EV_MAX_BYTES are free. */
static inline __attribute__((always_inline)) void opp_ev_put_times(struct opp_wbuf *w,
                                                                   uint64_t prev_end, uint64_t head,
                                                                   uint64_t begin, uint64_t end)
{
    opp_put_varint_room(w, head);
    opp_put_varint_room(w, end - prev_end);
    opp_put_varint_room(w, end >= begin ? end - begin : 0);
}

/* 0, or -1 when the buffer is full (the event was not added). Inline: the
 * collector calls it once per record. */
static inline int opp_ev_add_stack(struct opp_ev_enc *e, uint32_t fn, uint32_t flags,
                                   uint64_t begin, uint64_t end, uint32_t depth, uint32_t nargs,
                                   const uint64_t *args, uint32_t stack)
{
    if (e->w.cap - e->w.len < OPP_EV_MAX_BYTES || end < e->prev_end)
        return -1;
    if (nargs > OPP_MAX_ARGS)
        nargs = OPP_MAX_ARGS;
    flags &= OPP_EV_OPEN;
    if (nargs)
        flags |= OPP_EV_ARGS;
    if (stack)
        flags |= OPP_EV_STACK;
    int same = e->count && fn == e->prev_fn && depth == e->prev_depth &&
               flags == e->prev_flags && nargs == e->prev_nargs && stack == e->prev_stack;
    for (uint32_t i = 0; same && i < nargs; i++) /* a loop: memcmp's call costs more */
        same = args[i] == e->prev_args[i];
    /* SAME: the head is the flag alone, so a repeated call is 3 bytes
     * whatever its function's id */
    opp_ev_put_times(&e->w, e->prev_end,
                     same ? OPP_EV_SAME : ((uint64_t)fn << OPP_EV_FLAG_BITS) | flags, begin, end);
    if (!same) {
        opp_put_varint(&e->w, depth);
        if (nargs) {
            opp_put_varint(&e->w, nargs);
            for (uint32_t i = 0; i < nargs; i++)
                opp_put_varint(&e->w, args[i]);
            memcpy(e->prev_args, args, nargs * sizeof *args);
        }
        if (stack)
            opp_put_varint(&e->w, stack);
        e->prev_stack = stack;
        e->prev_fn = fn;
        e->prev_depth = depth;
        e->prev_flags = flags;
        e->prev_nargs = nargs;
    }
    e->prev_end = end;
    e->count++;
    return 0;
}

static inline int opp_ev_add(struct opp_ev_enc *e, uint32_t fn, uint32_t flags, uint64_t begin,
                             uint64_t end, uint32_t depth, uint32_t nargs, const uint64_t *args)
{
    return opp_ev_add_stack(e, fn, flags, begin, end, depth, nargs, args, 0);
}

int opp_ev_write(struct opp_tw *w, struct opp_ev_enc *e);

/* ---- reader ---- */

struct opp_tr_process {
    uint32_t proc, pid, ppid, parent_proc, clock;
    uint64_t start_ns, start_real_ns;
    const char *exe;
    uint32_t argc;
    const char *const *argv; /* valid during the callback only */
};

struct opp_tr_func {
    uint32_t kind, dtype;
    const char *lib, *name; /* valid during the callback only */
};

struct opp_tr_event {
    uint32_t proc, tid, fn, depth, flags, nargs;
    uint32_t stack; /* code stack id (OPP_EV_STACK), 0 when none */
    uint64_t begin_ns, end_ns;
    uint64_t args[OPP_MAX_ARGS];
};

/* A node of a SUMMARY chunk: every call with one call path. */
struct opp_tr_snode {
    uint32_t serial;       /* from 1 in each process, parents before children */
    uint32_t parent;       /* serial of the enclosing node, 0 for a root call */
    uint32_t window, fn, nargs;
    uint64_t count, open;  /* calls, and how many the process died inside */
    uint64_t total_ns, self_ns, self_cuda_ns;
    int64_t self_mem;      /* device bytes allocated minus freed */
    int64_t cpu_mem;       /* MEMORY nodes: CPU bytes their calls allocated minus
                              freed (version 7 on; 0 before) */
    uint64_t args[OPP_MAX_ARGS]; /* the calls' identity arguments (opp_op_identity) */
};

/* A row of a SUMMARY_GPU chunk. */
struct opp_tr_sgpu {
    uint32_t window, type; /* enum opp_gpu_type: KERNEL .. OVERHEAD */
    uint32_t name;         /* kernels: string id */
    uint32_t kind, src_kind, dst_kind; /* as the GPU records' */
    uint32_t device, stream;
    uint64_t count, dur_ns, bytes;
};

/* Each callback returns 0 to go on, non-zero to stop reading. */
struct opp_tr_visitor {
    int (*process)(void *ctx, const struct opp_tr_process *p);
    int (*funcs)(void *ctx, uint32_t proc, uint32_t count, const struct opp_tr_func *f);
    int (*thread)(void *ctx, uint32_t proc, uint32_t tid, const char *name);
    int (*event)(void *ctx, const struct opp_tr_event *e);
    /* Records lost since the thread's previous DROPPED of that reason
     * (why: enum opp_drop_why). */
    int (*dropped)(void *ctx, uint32_t proc, uint32_t tid, uint64_t count, uint32_t why);
    int (*process_end)(void *ctx, uint32_t proc, uint32_t how, uint64_t end_ns);
    /* How the process really ended (enum opp_exit_how): its parent reaped it. */
    int (*process_status)(void *ctx, uint32_t proc, uint32_t how, uint32_t code);
    /* One GPU record (STRING records included); times are CLOCK_MONOTONIC ns. */
    int (*gpu)(void *ctx, uint32_t proc, const struct opp_gpu_rec *g);
    /* A process's labels (info.h), NUL-terminated strings valid during the call. */
    int (*info)(void *ctx, uint32_t proc, uint32_t count, const char *const *keys,
                const char *const *values);
    /* Summary mode (summary.h): one aggregated call path, parents first. */
    int (*snode)(void *ctx, uint32_t proc, const struct opp_tr_snode *n);
    /* Summary mode: GPU ops of one name, device and stream, aggregated. */
    int (*sgpu)(void *ctx, uint32_t proc, const struct opp_tr_sgpu *g);
};

struct opp_tr_summary {
    int complete;         /* the END chunk was read */
    uint64_t chunks;      /* chunks read */
    uint64_t events;      /* events delivered */
    uint64_t gpu_records; /* GPU records delivered */
    uint32_t version;     /* the file's format version */
    int summary;          /* SUMMARY chunks were read (OPPROF_MODE=summary) */
    uint64_t end_events, end_dropped; /* as the END chunk counted them */
    uint32_t end_processes;
    uint64_t bytes_good, file_size;
    char warning[512];    /* why the file was cut short, "" if it was not */
    /* its writer's lock still held after the wait (OPPROF_WAIT_MS): a
     * complete one is then the trace a collector found there, replaced at
     * its first hello, or one it has just finished */
    int held;
};

/* Whether the file open at fd begins as an opprof trace does (its magic):
 * 1; 0 for another file (or a shorter one); -errno when it cannot be read. */
int opp_trace_magic(int fd);
/* path is a regular file that begins as an opprof trace does: 0, or -1
 * with why in err ("PATH is not an opprof trace (bad magic)", as the
 * reader says it). A FIFO is not waited for. */
int opp_trace_check(const char *path, char *err, size_t errlen);
/* Traces paths[0..n) are n files, none named twice (by another path or
 * a link): read as one they would add up twice. 0, or -1 with err said. */
int opp_trace_distinct(const char *const *paths, size_t n, char *err, size_t errlen);
/* Read the whole file. 0 when the file is a trace (a damaged tail is
 * reported in sum->warning and everything before it is delivered); -1 with
 * err set when it cannot be read as a trace at all, its first chunk
 * damaged included (nothing of it could be delivered). */
int opp_trace_read(const char *path, const struct opp_tr_visitor *v, void *ctx,
                   struct opp_tr_summary *sum, char *err, size_t errlen);

#endif
