/* The Chrome export's own (export_chrome.c): the state its reads of the
 * pass share (pass.h: consumers of the files' order), and the helpers
 * each event of the last uses, inline. chrome_scan.c makes the first
 * read, where the traces have GPU work; the last writes the process and thread names and the file's
 * head and tail (chrome_meta.c), the calls (chrome_calls.c) and the GPU
 * work (chrome_gpu.c); chrome_json.h builds their text. */
#ifndef OPP_EXPORTS_CHROME_H
#define OPP_EXPORTS_CHROME_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "analysis/live_blocks.h"
#include "analysis/model.h"
#include "analysis/pass.h" /* uthash, its out of memory in hash_oom (loader.h) */
#include "exports/pyspans.h"
#include "gpu.h"
#include "trace.h"
#include "util.h"

struct bpage {
    uint64_t key; /* id >> 16 */
    uint64_t w[1024];
    UT_hash_handle hh;
};

/* A bit per id, in pages of 2^16 ids made as ids come. */
struct bits {
    struct bpage *pages, *last;
};

/* What the export keeps of a process of the model (by its index). */
struct xproc {
    uint32_t cpid;     /* Chrome's pid: its pid, unless an earlier file has it */
    int64_t cpu_total; /* bytes of its live CPU allocations (MEMORY events) */
    /* a bit per correlation id: one that GPU work carries, one that a
     * recorded CUDA call carries */
    struct bits has_gpu, has_call;
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

struct chrome {
    FILE *out;
    struct opp_pass *pass;
    struct opp_model *m;
    struct xproc *procs;            /* by the model's process index */
    const char *const *paths;       /* the traces */
    const char **hosts;             /* by file: its processes' first host label, or NULL */
    size_t nfiles, cur;             /* the file being read */
    struct xkey *streams, *devices; /* GPU tracks named (by Chrome pid) */
    struct xpid *pids;              /* every file's pids and devices */
    uint64_t base_ns;               /* ts 0: the traces' first time */
    int64_t mem_total[64];          /* bytes allocated per device (ids < 64) */
    struct opp_live blocks;         /* live CPU allocations (MEMORY events) */
    struct opp_pyspans spans;       /* python_function slices, per thread */
    int first;                      /* no trace event written yet */
    int64_t only_rank;              /* export the processes of this rank; -1 all */
    uint64_t from_ns, to_ns;        /* export what begins in [from, to) */
    uint32_t *dem, ndem;            /* kernels' names demangled (opp_loader_op_name) */
};

/* The first read (chrome_scan.c), of traces with GPU work: each file's
 * devices, the correlation ids that have both a call and GPU work. */
extern const struct opp_pass_consumer opp_chrome_scan;
/* Note a pid or device number of file: 0 or -ENOMEM. */
int opp_chrome_note_pid(struct chrome *x, size_t file, uint64_t id);

/* The last read's: names of processes and threads (chrome_meta.c),
 * calls (chrome_calls.c), GPU work (chrome_gpu.c). */
int opp_chrome_process(void *ctx, uint32_t proc, const struct opp_tr_process *tp);
int opp_chrome_thread(void *ctx, uint32_t thread, const char *name);
int opp_chrome_call(void *ctx, const struct opp_pass_call *c);
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

/* The file of the model's process index pi (its serial's offset). */
static inline uint32_t opp_chrome_file(const struct chrome *x, uint32_t pi)
{
    return x->m->procs[pi].proc >> 24;
}

/* The last read reaches process pi: a file read before it is over (its
 * python_function slices end, its devices' totals start again). 0 or -1
 * (chrome_calls.c). */
int opp_chrome_reach(struct chrome *x, uint32_t pi);

/* The key of a pid or device number of file. */
static inline uint64_t opp_chrome_pid_key(size_t file, uint64_t id)
{
    return (uint64_t)file << 32 | (uint32_t)(id > UINT32_MAX ? UINT32_MAX : id);
}

/* Chrome's pid for a pid or device number of the file being read (every
 * one was noted before the last read). */
static inline uint32_t opp_chrome_pid(struct chrome *x, uint64_t id)
{
    uint64_t key = opp_chrome_pid_key(x->cur, id);
    struct xpid *e;
    HASH_FIND(hh, x->pids, &key, sizeof key, e);
    return e ? e->cpid : (uint32_t)key;
}

/* The process index pi is exported (the --rank filter). */
static inline int opp_chrome_wanted(const struct chrome *x, uint32_t pi)
{
    return x->only_rank < 0 || x->m->procs[pi].rank == x->only_rank;
}

/* A process's host label, NULL when it has none. */
static inline const char *opp_chrome_host(const struct opp_process *p)
{
    const char *h = opp_process_info(p, "host");
    return h && h[0] ? h : NULL;
}

/* Where a process or device of the file being read is: its host label,
 * else the trace's file name. */
static inline const char *opp_chrome_where(const struct chrome *x, const char *host)
{
    const char *path = x->paths[x->cur], *base = strrchr(path, '/');
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
