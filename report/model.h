/* A whole trace loaded into memory: processes, threads, function tables and
 * every event, with each thread's call tree built (tree.h). The base of every
 * report and export. */
#ifndef OPP_MODEL_H
#define OPP_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

#define OPP_NO_PARENT UINT32_MAX

/* One call. 48 bytes; its argument values live in the thread's args array. */
struct opp_event {
    uint64_t begin_ns, end_ns; /* CLOCK_MONOTONIC */
    uint64_t self_ns;          /* own duration minus direct children's (tree.h) */
    uint32_t parent;           /* index in the same thread's events, or OPP_NO_PARENT */
    uint32_t name;             /* string id of the entry point's name */
    uint32_t fn;               /* index in the process's function table */
    uint32_t args;             /* index of the first argument in the thread's args */
    uint16_t depth;            /* calls of ours the thread was inside, as recorded */
    uint8_t flags;             /* OPP_EV_* (OPP_EV_OPEN: the process died inside it) */
    uint8_t nargs;
};

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
    char *exe;
    uint32_t argc;
    char **argv;
    uint32_t nfuncs;
    struct opp_func *funcs;
};

struct opp_thread {
    uint32_t proc; /* index in model->procs */
    uint32_t tid;
    char *name;       /* the latest name the trace gave it, "" if none */
    uint64_t dropped; /* records it could not hand over */
    struct opp_event *events; /* in tree order once loaded (tree.h) */
    size_t nevents, cap;
    uint64_t *args;
    size_t nargs, args_cap;
};

struct opp_model_index; /* private lookup tables */

struct opp_model {
    struct opp_process *procs; /* in the order the trace declared them */
    size_t nprocs;
    struct opp_thread *threads; /* in the order they first appeared */
    size_t nthreads;
    char **strs; /* interned names, by string id */
    uint32_t nstrs;
    uint64_t events;      /* events loaded */
    uint64_t dropped;     /* sum of every thread's dropped */
    uint64_t open_events; /* events flagged OPP_EV_OPEN */
    struct opp_tr_summary sum; /* the reader's: complete flag and warning */
    struct opp_model_index *index;
};

/* Load the trace at path and build every thread's call tree. Events flagged
 * OPP_EV_OPEN end at their process's end time (or, when the trace does not
 * give it, at the last end seen on their thread). Returns NULL with errno
 * set and a reason in err when the file cannot be read as a trace or memory
 * runs out; a damaged tail is not an error (model->sum.warning says it). */
struct opp_model *opp_model_load(const char *path, char *err, size_t errlen);
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

static inline const uint64_t *opp_event_args(const struct opp_thread *t, const struct opp_event *e)
{
    return t->args + e->args;
}

/* "exited", "lost", "running" or "unknown". */
const char *opp_end_how_name(uint32_t how);

#endif
