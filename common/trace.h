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
#include "util.h"

/* ---- writer ---- */

struct opp_tw {
    int fd;
    uint64_t offset; /* bytes written */
    int error;       /* sticky errno of the first failed write */
};

/* Create (or replace) the trace file. An existing file that is not an opprof
 * trace is never overwritten. 0, or -errno with a reason in err. */
int opp_tw_open(struct opp_tw *w, const char *path, char *err, size_t errlen);
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
int opp_tw_dropped(struct opp_tw *w, uint32_t proc, uint32_t tid, uint64_t count);
int opp_tw_process_end(struct opp_tw *w, uint32_t proc, uint32_t how, uint64_t end_ticks);
int opp_tw_end(struct opp_tw *w, uint64_t events, uint64_t dropped, uint32_t processes);

/* Encoder of one EVENTS chunk: events of one thread in the order they
 * ended (end values must not decrease). */
#define OPP_EV_CHUNK_HDR 24u
#define OPP_EV_MAX_BYTES (5u + 10u + 10u + 3u + 2u + 10u * OPP_MAX_ARGS)
struct opp_ev_enc {
    struct opp_wbuf w;
    uint64_t prev_end;
    uint32_t count;
};
void opp_ev_begin(struct opp_ev_enc *e, void *mem, size_t cap, uint32_t proc, uint32_t tid,
                  uint64_t base_end);
/* 0, or -1 when the buffer is full (the event was not added). */
int opp_ev_add(struct opp_ev_enc *e, uint32_t fn, uint32_t flags, uint64_t begin, uint64_t end,
               uint32_t depth, uint32_t nargs, const uint64_t *args);
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
    uint64_t begin_ns, end_ns;
    uint64_t args[OPP_MAX_ARGS];
};

/* Each callback returns 0 to go on, non-zero to stop reading. */
struct opp_tr_visitor {
    int (*process)(void *ctx, const struct opp_tr_process *p);
    int (*funcs)(void *ctx, uint32_t proc, uint32_t count, const struct opp_tr_func *f);
    int (*thread)(void *ctx, uint32_t proc, uint32_t tid, const char *name);
    int (*event)(void *ctx, const struct opp_tr_event *e);
    int (*dropped)(void *ctx, uint32_t proc, uint32_t tid, uint64_t count);
    int (*process_end)(void *ctx, uint32_t proc, uint32_t how, uint64_t end_ns);
};

struct opp_tr_summary {
    int complete;         /* the END chunk was read */
    uint64_t chunks;      /* chunks read */
    uint64_t events;      /* events delivered */
    uint64_t end_events, end_dropped; /* as the END chunk counted them */
    uint32_t end_processes;
    uint64_t bytes_good, file_size;
    char warning[512];    /* why the file was cut short, "" if it was not */
};

/* Read the whole file. 0 when the file is a trace (a damaged tail is
 * reported in sum->warning and everything before it is delivered); -1 with
 * err set when it cannot be read as a trace at all. */
int opp_trace_read(const char *path, const struct opp_tr_visitor *v, void *ctx,
                   struct opp_tr_summary *sum, char *err, size_t errlen);

#endif
