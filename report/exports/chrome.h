/* The Chrome export's own (export_chrome.c): the state its two passes
 * share, and the helpers each event of the second pass uses, inline.
 * chrome_scan.c makes the first pass; the second writes the process and
 * thread names and the file's head and tail (chrome_meta.c), the calls
 * (chrome_calls.c) and the GPU work (chrome_gpu.c); chrome_json.h builds
 * their text. */
#ifndef OPP_EXPORTS_CHROME_H
#define OPP_EXPORTS_CHROME_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <uthash.h>

#include "analysis/live_blocks.h"
#include "analysis/model.h"
#include "exports/pyspans.h"
#include "gpu.h"
#include "trace.h"
#include "util.h"

/* uthash's out of memory, in functions whose state is x */
#define uthash_nonfatal_oom(obj) (x->oom = 1)

struct xfunc {
    uint32_t kind, dtype;
    char *lib, *name;
};

struct bpage {
    uint64_t key; /* id >> 16 */
    uint64_t w[1024];
    UT_hash_handle hh;
};

/* A bit per id, in pages of 2^16 ids made as ids come. */
struct bits {
    struct bpage *pages, *last;
};

struct xproc {
    uint32_t proc; /* key: serial in the trace + its file's base */
    uint32_t pid, nfuncs;
    uint32_t cpid;                            /* Chrome's pid: pid, unless an earlier file has it */
    uint32_t file;                            /* index of its trace */
    char *host;                               /* the "host" label, or NULL */
    uint64_t start_ns, start_real_ns, end_ns; /* end_ns 0: not known */
    char *exe;
    struct xfunc *funcs;
    int64_t rank, world_size; /* labels (info.h), -1 unknown */
    int64_t cpu_total;        /* bytes of its live CPU allocations (MEMORY events) */
    /* a bit per correlation id: one that GPU work carries, one that a
     * recorded CUDA call carries */
    struct bits has_gpu, has_call;
    UT_hash_handle hh;
};

/* The Python frames of a code stack (STACK records of a Python program). */
struct xpystack {
    uint64_t key; /* proc serial << 32 | stack id */
    int n;
    uint32_t frame[OPP_GPU_FIELDS_MAX]; /* string ids, outermost first */
    UT_hash_handle hh;
};

struct xstr {
    uint64_t key; /* proc serial << 32 | the process's string id */
    char *text;
    UT_hash_handle hh;
};

struct xkey {
    uint64_t key;
    UT_hash_handle hh;
};

/* One pid or device number of one file and the pid Chrome shows it as. */
struct xpid {
    uint64_t key; /* file << 32 | pid or device */
    uint32_t cpid;
    UT_hash_handle hh;
};

/* One of the traces exported together. */
struct xfile {
    const char *path;
    int64_t shift;    /* added to its times (opp_clock_shift) */
    int have_shift;   /* set by its first process */
    const char *host; /* the first "host" label of its processes, or NULL */
};

struct chrome {
    FILE *out;
    struct xproc *procs;
    struct xstr *strs;
    struct xkey *streams, *devices; /* GPU tracks named in pass 2 (by Chrome pid) */
    struct xpid *pids;              /* every file's pids and devices */
    struct xfile *files;
    size_t nfiles, cur;        /* the file being read */
    uint32_t base;             /* its serials' offset: cur << 24 */
    int64_t ref;               /* the first file's clock offset (opp_clock_offset) */
    uint64_t base_ns, last_ns; /* earliest and latest time seen */
    int64_t mem_total[64];     /* bytes allocated per device (ids < 64) */
    struct opp_live blocks;    /* live CPU allocations (MEMORY events) */
    struct xpystack *pystacks; /* code stacks with Python frames */
    struct opp_pyspans spans;  /* their python_function slices, per thread */
    int first;                 /* no trace event written yet */
    int64_t only_rank;         /* export the processes of this rank; -1 all */
    uint64_t from_ns, to_ns;   /* export what begins in [from, to) */
    int oom;
    struct opp_gpu_rec devs[16]; /* DEVICE records, first per id */
    size_t ndevs;
};

/* The first pass (chrome_scan.c): what is small, kept in the state. */
extern const struct opp_tr_visitor opp_chrome_scan;

/* The second pass's visitors: names of processes and threads
 * (chrome_meta.c), calls (chrome_calls.c), GPU work (chrome_gpu.c). */
int opp_chrome_process(void *ctx, const struct opp_tr_process *tp);
int opp_chrome_thread(void *ctx, uint32_t proc, uint32_t tid, const char *name);
int opp_chrome_event(void *ctx, const struct opp_tr_event *e);
int opp_chrome_gpu(void *ctx, uint32_t proc, const struct opp_gpu_rec *g);

/* The file's head (its clock, the rank) and tail (the devices), around
 * the events (chrome_meta.c). */
void opp_chrome_head(struct chrome *x, uint64_t base_real);
void opp_chrome_tail(struct chrome *x);
/* A metadata event: what ("process_name"...) of pid/tid is name. */
void opp_chrome_meta(struct chrome *x, const char *what, uint64_t pid, uint64_t tid,
                     const char *name);
/* The python_function slices still open, written (emit) or dropped. */
int opp_chrome_pyspans_end(struct chrome *x);
void opp_chrome_pyspans_drop(struct chrome *x);

static inline struct xproc *opp_chrome_proc(struct chrome *x, uint32_t proc)
{
    struct xproc *p;
    proc += x->base;
    HASH_FIND(hh, x->procs, &proc, sizeof proc, p);
    return p;
}

/* A string of process serial proc (its file's base added). */
static inline const char *opp_chrome_str_of(struct chrome *x, uint32_t proc, uint64_t id)
{
    uint64_t key = (uint64_t)proc << 32 | (id & 0xffffffffu);
    struct xstr *s;
    HASH_FIND(hh, x->strs, &key, sizeof key, s);
    return s ? s->text : NULL;
}

/* A string of process proc of the file being read. */
static inline const char *opp_chrome_str(struct chrome *x, uint32_t proc, uint64_t id)
{
    return opp_chrome_str_of(x, proc + x->base, id);
}

/* A time of the file being read on the first file's clock. */
static inline uint64_t opp_chrome_shifted(const struct chrome *x, uint64_t t)
{
    return opp_clock_shift(t, x->files[x->cur].shift);
}

/* The key of a pid or device number of the file being read. */
static inline uint64_t opp_chrome_pid_key(const struct chrome *x, uint64_t id)
{
    return (uint64_t)x->cur << 32 | (uint32_t)(id > UINT32_MAX ? UINT32_MAX : id);
}

/* Chrome's pid for a pid or device number of the file being read (every
 * one was noted in pass 1). */
static inline uint32_t opp_chrome_pid(struct chrome *x, uint64_t id)
{
    uint64_t key = opp_chrome_pid_key(x, id);
    struct xpid *e;
    HASH_FIND(hh, x->pids, &key, sizeof key, e);
    return e ? e->cpid : (uint32_t)key;
}

/* The process is exported (the --rank filter). */
static inline int opp_chrome_wanted(const struct chrome *x, const struct xproc *p)
{
    return p && (x->only_rank < 0 || p->rank == x->only_rank);
}

/* Where a process or device of the file being read is: its host label,
 * else the trace's file name. */
static inline const char *opp_chrome_where(const struct chrome *x, const char *host)
{
    const char *path = x->files[x->cur].path, *base = strrchr(path, '/');
    return host ? host : base ? base + 1 : path;
}

/* An arrow's id: the process (its serial) and the correlation id, under
 * 2^53 (JSON readers hold numbers as doubles) for 8192 processes and 2^40
 * calls each. */
static inline uint64_t opp_chrome_flow_id(uint32_t proc, uint64_t corr)
{
    return (uint64_t)proc << 40 | (corr & ((1ull << 40) - 1));
}

static inline void opp_chrome_begin_event(struct chrome *x)
{
    fputs(x->first ? "\n  " : ",\n  ", x->out);
    x->first = 0;
}

static inline struct bpage *opp_bits_page(struct bits *b, uint64_t c)
{
    uint64_t key = c >> 16;
    if (b->last && b->last->key == key)
        return b->last;
    struct bpage *pg;
    HASH_FIND(hh, b->pages, &key, sizeof key, pg);
    if (pg)
        b->last = pg;
    return pg;
}

static inline int opp_bits_has(struct bits *b, uint64_t c)
{
    struct bpage *pg = opp_bits_page(b, c);
    return pg && (pg->w[(c & 0xffff) / 64] >> (c % 64) & 1);
}

#endif
