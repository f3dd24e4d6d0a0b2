/* Over 600 lines: its two passes share one state and per-event helpers kept static (inlined). */
/* `opprof export chrome`: the trace as Chrome trace JSON in the schema
 * Kineto writes, for Perfetto, chrome://tracing and HTA. Two streaming
 * passes over the file: the first keeps only what is small (processes,
 * function tables, thread names, strings, devices, the earliest time), the
 * second writes each event as it is read. Memory does not grow with the
 * number of events. Several traces (one per host) are read file after file
 * in each pass, merged as opp_model_load_many merges them: serials of the
 * k-th file offset by k << 24, its times moved onto the first file's clock. */
#include "exports/export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "analysis/demangle.h"
#include "analysis/live_blocks.h"
#include "exports/pyspans.h"
#include "analysis/model.h"
#include "gpu.h"
#include "info.h"
#include "ops.h"
#include "trace.h"
#include "views/fmt.h"

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

struct xproc {
    uint32_t proc; /* key: serial in the trace + its file's base */
    uint32_t pid, nfuncs;
    uint32_t cpid; /* Chrome's pid: pid, unless an earlier file has it */
    uint32_t file; /* index of its trace */
    char *host;    /* the "host" label, or NULL */
    uint64_t start_ns, start_real_ns, end_ns; /* end_ns 0: not known */
    char *exe;
    struct xfunc *funcs;
    int64_t rank, world_size; /* labels (info.h), -1 unknown */
    int64_t cpu_total;        /* bytes of its live CPU allocations (MEMORY events) */
    /* a bit per correlation id: one that GPU work carries, one that a
     * recorded CUDA call carries (pages of 2^16 ids, made as ids come) */
    struct bits { struct bpage *pages, *last; } has_gpu, has_call;
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
    int64_t shift;  /* added to its times (opp_clock_shift) */
    int have_shift; /* set by its first process */
    const char *host; /* the first "host" label of its processes, or NULL */
};

struct x {
    FILE *out;
    struct xproc *procs;
    struct xstr *strs;
    struct xkey *streams, *devices; /* GPU tracks named in pass 2 (by Chrome pid) */
    struct xpid *pids;              /* every file's pids and devices */
    struct xfile *files;
    size_t nfiles, cur; /* the file being read */
    uint32_t base;      /* its serials' offset: cur << 24 */
    int64_t ref;        /* the first file's clock offset (opp_clock_offset) */
    uint64_t base_ns, last_ns;      /* earliest and latest time seen */
    int64_t mem_total[64];          /* bytes allocated per device (ids < 64) */
    struct opp_live blocks;         /* live CPU allocations (MEMORY events) */
    struct xpystack *pystacks;      /* code stacks with Python frames */
    struct opp_pyspans spans;       /* their python_function slices, per thread */
    int first;                      /* no trace event written yet */
    int64_t only_rank;              /* export the processes of this rank; -1 all */
    uint64_t from_ns, to_ns;        /* export what begins in [from, to) */
    int oom;
    struct opp_gpu_rec devs[16]; /* DEVICE records, first per id */
    size_t ndevs;
};

static struct xproc *find_proc(struct x *x, uint32_t proc)
{
    struct xproc *p;
    proc += x->base;
    HASH_FIND(hh, x->procs, &proc, sizeof proc, p);
    return p;
}

/* A string of process serial proc (its file's base added). */
static const char *find_str_of(struct x *x, uint32_t proc, uint64_t id)
{
    uint64_t key = (uint64_t)proc << 32 | (id & 0xffffffffu);
    struct xstr *s;
    HASH_FIND(hh, x->strs, &key, sizeof key, s);
    return s ? s->text : NULL;
}

/* A string of process proc of the file being read. */
static const char *find_str(struct x *x, uint32_t proc, uint64_t id)
{
    return find_str_of(x, proc + x->base, id);
}

/* A time of the file being read on the first file's clock. */
static uint64_t shifted(const struct x *x, uint64_t t)
{
    return opp_clock_shift(t, x->files[x->cur].shift);
}

/* Chrome's pid for a pid or device number of the file being read (every
 * one was noted in pass 1). */
static uint32_t chrome_pid(struct x *x, uint64_t id)
{
    uint64_t key = (uint64_t)x->cur << 32 | (uint32_t)(id > UINT32_MAX ? UINT32_MAX : id);
    struct xpid *e;
    HASH_FIND(hh, x->pids, &key, sizeof key, e);
    return e ? e->cpid : (uint32_t)key;
}

/* Pass 1: note a pid or device number of the file being read. */
static void note_pid(struct x *x, uint64_t id)
{
    uint64_t key = (uint64_t)x->cur << 32 | (uint32_t)(id > UINT32_MAX ? UINT32_MAX : id);
    struct xpid *e;
    HASH_FIND(hh, x->pids, &key, sizeof key, e);
    if (e)
        return;
    e = calloc(1, sizeof *e);
    if (!e) {
        x->oom = 1;
        return;
    }
    e->key = key;
    HASH_ADD(hh, x->pids, key, sizeof e->key, e);
    if (x->oom)
        free(e);
}

static void seen(struct x *x, uint64_t t)
{
    t = shifted(x, t);
    if (t && t < x->base_ns)
        x->base_ns = t;
    if (t > x->last_ns)
        x->last_ns = t;
}

/* ---- pass 1 ---- */

static int p1_process(void *ctx, const struct opp_tr_process *tp)
{
    struct x *x = ctx;
    struct xfile *file = &x->files[x->cur];
    if (!file->have_shift) { /* the file's first process pairs its two clocks */
        int64_t off = opp_clock_offset(tp->start_real_ns, tp->start_ns);
        if (!x->cur)
            x->ref = off;
        file->shift = off - x->ref;
        file->have_shift = 1;
    }
    struct xproc *p = find_proc(x, tp->proc);
    if (!p) {
        p = calloc(1, sizeof *p);
        if (!p)
            return x->oom = 1;
        p->proc = tp->proc + x->base;
        p->file = (uint32_t)x->cur;
        p->rank = p->world_size = -1;
        HASH_ADD(hh, x->procs, proc, sizeof p->proc, p);
        if (x->oom) {
            free(p);
            return 1;
        }
    }
    free(p->exe);
    p->exe = strdup(tp->exe ? tp->exe : "");
    p->pid = tp->pid;
    p->start_ns = shifted(x, tp->start_ns);
    p->start_real_ns = tp->start_real_ns;
    seen(x, tp->start_ns);
    note_pid(x, tp->pid);
    return (x->oom |= !p->exe);
}

static int p1_funcs(void *ctx, uint32_t proc, uint32_t count, const struct opp_tr_func *f)
{
    struct x *x = ctx;
    struct xproc *p = find_proc(x, proc);
    if (!p || p->funcs)
        return 0; /* the reader checks this: never happens */
    p->funcs = calloc(count ? count : 1, sizeof *p->funcs);
    if (!p->funcs)
        return x->oom = 1;
    p->nfuncs = count;
    for (uint32_t i = 0; i < count; i++) {
        p->funcs[i] = (struct xfunc){f[i].kind, f[i].dtype, strdup(f[i].lib), strdup(f[i].name)};
        if (!p->funcs[i].lib || !p->funcs[i].name)
            return x->oom = 1;
    }
    return 0;
}

static int p1_info(void *ctx, uint32_t proc, uint32_t count, const char *const *keys,
                   const char *const *values)
{
    struct x *x = ctx;
    struct xproc *p = find_proc(x, proc);
    static const char *const rank[] = OPP_INFO_RANK_KEYS, *const world[] = OPP_INFO_WORLD_KEYS;
    if (p) {
        p->rank = opp_info_number(count, keys, values, rank);
        p->world_size = opp_info_number(count, keys, values, world);
        for (uint32_t i = 0; i < count; i++)
            if (!strcmp(keys[i], "host") && values[i][0] && !p->host) {
                if (!(p->host = strdup(values[i])))
                    return x->oom = 1;
                if (!x->files[x->cur].host)
                    x->files[x->cur].host = p->host;
            }
    }
    return 0;
}

/* The process is exported (the --rank filter). */
static int wanted(const struct x *x, const struct xproc *p)
{
    return p && (x->only_rank < 0 || p->rank == x->only_rank);
}

static struct bpage *bits_page(struct bits *b, uint64_t c)
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

/* Set bit c (0 when done, else out of memory). */
static int bits_set(struct bits *b, uint64_t c)
{
    struct bpage *pg = bits_page(b, c);
    if (!pg) {
        pg = calloc(1, sizeof *pg);
        if (!pg)
            return -1;
        pg->key = c >> 16;
        HASH_ADD(hh, b->pages, key, sizeof pg->key, pg);
        b->last = pg;
    }
    pg->w[(c & 0xffff) / 64] |= 1ull << (c % 64);
    return 0;
}

static int bits_has(struct bits *b, uint64_t c)
{
    struct bpage *pg = bits_page(b, c);
    return pg && (pg->w[(c & 0xffff) / 64] >> (c % 64) & 1);
}

static void bits_free(struct bits *b)
{
    OPP_HASH_FREE(b->pages);
    b->last = NULL;
}

/* An arrow's id: the process (its serial) and the correlation id, under
 * 2^53 (JSON readers hold numbers as doubles) for 8192 processes and 2^40
 * calls each. */
static uint64_t flow_id(uint32_t proc, uint64_t corr)
{
    return (uint64_t)proc << 40 | (corr & ((1ull << 40) - 1));
}

static int p1_event(void *ctx, const struct opp_tr_event *e)
{
    struct x *x = ctx;
    seen(x, e->begin_ns);
    seen(x, e->end_ns);
    /* Arrows end only at GPU work whose call is in the trace. */
    struct xproc *p = find_proc(x, e->proc);
    if (!p || e->fn >= p->nfuncs || opp_kind_base(p->funcs[e->fn].kind) != OPP_OP_CUDA_API ||
        e->nargs <= OPP_COL_CUDA_CORR)
        return 0;
    uint64_t c = e->args[OPP_COL_CUDA_CORR];
    if (c && bits_set(&p->has_call, c))
        return x->oom = 1;
    return 0;
}

static int p1_process_end(void *ctx, uint32_t proc, uint32_t how, uint64_t end_ns)
{
    struct x *x = ctx;
    struct xproc *p = find_proc(x, proc);
    if (p)
        p->end_ns = shifted(x, end_ns);
    seen(x, end_ns);
    return 0;
}

/* A STACK record's Python frames, kept for the python_function slices. */
static int p1_stack(struct x *x, uint32_t proc, const struct opp_gpu_rec *g)
{
    struct xpystack *ps = calloc(1, sizeof *ps);
    if (!ps)
        return x->oom = 1;
    for (uint32_t i = g->nfields; i-- > OPP_GF_ST_PC0;) /* innermost first in the record */
        if ((g->f[i] & OPP_STACK_PY_MASK) == OPP_STACK_PY)
            ps->frame[ps->n++] = (uint32_t)g->f[i];
    ps->key = (uint64_t)(proc + x->base) << 32 | (uint32_t)g->f[OPP_GF_ST_ID];
    struct xpystack *old;
    HASH_FIND(hh, x->pystacks, &ps->key, sizeof ps->key, old);
    if (!ps->n || old) { /* no Python frame, or the first record stands */
        free(ps);
        return 0;
    }
    HASH_ADD(hh, x->pystacks, key, sizeof ps->key, ps);
    if (x->oom)
        free(ps);
    return x->oom;
}

static int p1_gpu(void *ctx, uint32_t proc, const struct opp_gpu_rec *g)
{
    struct x *x = ctx;
    if (g->type == OPP_GPU_STACK)
        return p1_stack(x, proc, g);
    if (g->type == OPP_GPU_STRING) {
        uint64_t key = (uint64_t)(proc + x->base) << 32 | (g->f[0] & 0xffffffffu);
        struct xstr *s;
        HASH_FIND(hh, x->strs, &key, sizeof key, s);
        char *text = strndup(g->str, g->slen > OPP_NAME_STR_MAX ? OPP_NAME_STR_MAX : g->slen);
        if (!text)
            return x->oom = 1;
        if (s) { /* a later definition replaces an earlier one */
            free(s->text);
            s->text = text;
            return 0;
        }
        s = malloc(sizeof *s);
        if (!s) {
            free(text);
            return x->oom = 1;
        }
        s->key = key;
        s->text = text;
        HASH_ADD(hh, x->strs, key, sizeof s->key, s);
        if (x->oom) {
            free(text);
            free(s);
        }
        return x->oom;
    }
    if (g->type == OPP_GPU_DEVICE) {
        for (size_t i = 0; i < x->ndevs; i++)
            if (x->devs[i].f[OPP_GF_V_ID] == g->f[OPP_GF_V_ID])
                return 0;
        if (x->ndevs < sizeof x->devs / sizeof x->devs[0]) {
            x->devs[x->ndevs] = *g;
            x->devs[x->ndevs].str = NULL;
            /* for its name */
            x->devs[x->ndevs++].f[OPP_GF_V_NAME] |= (uint64_t)(proc + x->base) << 32;
        }
        return 0;
    }
    if (g->type == OPP_GPU_MEMORY) {
        seen(x, g->f[OPP_GF_START]);
        note_pid(x, g->f[OPP_GF_DEVICE]);
        return 0;
    }
    if (g->type >= OPP_GPU_KERNEL && g->type <= OPP_GPU_OVERHEAD) {
        note_pid(x, g->f[OPP_GF_DEVICE]);
        seen(x, g->f[OPP_GF_START]);
        seen(x, g->f[OPP_GF_END]);
        /* Arrows start only at calls whose GPU work is in the trace. */
        uint64_t c = g->f[OPP_GF_CORRELATION];
        struct xproc *p = find_proc(x, proc);
        if (c && p && bits_set(&p->has_gpu, c))
            return x->oom = 1;
    }
    return 0;
}

/* ---- pass 2 ---- */

/* Microseconds since the base, three decimals, as Kineto writes them. */
/* Numbers by hand: fprintf's format parsing was most of an export's time. */
static void put_u64(FILE *f, uint64_t v)
{
    char b[24], *p = b + sizeof b;
    do
        *--p = (char)('0' + v % 10);
    while (v /= 10);
    fwrite(p, 1, (size_t)(b + sizeof b - p), f);
}

static void put_us(FILE *f, uint64_t ns, uint64_t base)
{
    uint64_t d = ns > base ? ns - base : 0, r = d % 1000;
    put_u64(f, d / 1000);
    char frac[4] = {'.', (char)('0' + r / 100), (char)('0' + r / 10 % 10), (char)('0' + r % 10)};
    fwrite(frac, 1, 4, f);
}

/* One event is built here and written with one fwrite: a few hundred
 * small stdio calls per event were most of an export's time. */
struct sb {
    char *p, *end;
    char buf[OPP_NAME_STR_MAX + OPP_SHAPES_MAX * OPP_RANK_MAX * 24 + 1024];
};

static void sb_init(struct sb *b)
{
    b->p = b->buf;
    b->end = b->buf + sizeof b->buf;
}

static void sb_mem(struct sb *b, const char *s, size_t n)
{
    if (n > (size_t)(b->end - b->p))
        n = (size_t)(b->end - b->p); /* never: the buffer holds the largest event */
    memcpy(b->p, s, n);
    b->p += n;
}

#define SB_LIT(b, lit) sb_mem((b), lit, sizeof lit - 1)

static void sb_str(struct sb *b, const char *s)
{
    sb_mem(b, s, strlen(s));
}

static void sb_u64(struct sb *b, uint64_t v)
{
    char t[24], *q = t + sizeof t;
    do
        *--q = (char)('0' + v % 10);
    while (v /= 10);
    sb_mem(b, q, (size_t)(t + sizeof t - q));
}

static void sb_i64(struct sb *b, int64_t v)
{
    if (v < 0) {
        SB_LIT(b, "-");
        sb_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        sb_u64(b, (uint64_t)v);
    }
}

static void sb_us(struct sb *b, uint64_t ns, uint64_t base)
{
    uint64_t d = ns > base ? ns - base : 0, r = d % 1000;
    sb_u64(b, d / 1000);
    char frac[4] = {'.', (char)('0' + r / 100), (char)('0' + r / 10 % 10), (char)('0' + r % 10)};
    sb_mem(b, frac, 4);
}

/* A JSON string: plain printable ASCII is copied; anything else goes
 * through opp_json_str (written to f after what the buffer holds). */
static void sb_json(struct sb *b, FILE *f, const char *s)
{
    size_t n = 0;
    for (const unsigned char *u = (const unsigned char *)s; *u; u++, n++)
        if (*u < 0x20 || *u >= 0x80 || *u == '"' || *u == '\\')
            break;
    if (!s[n] && n + 2 < (size_t)(b->end - b->p)) {
        SB_LIT(b, "\"");
        sb_mem(b, s, n);
        SB_LIT(b, "\"");
        return;
    }
    fwrite(b->buf, 1, (size_t)(b->p - b->buf), f);
    sb_init(b);
    opp_json_str(f, s);
}

/* opp_shapes_format's text, without snprintf. */
static void sb_shapes(struct sb *b, const struct opp_shapes *s)
{
    SB_LIT(b, "[");
    for (int i = 0; i < s->n; i++) {
        if (i)
            SB_LIT(b, ", ");
        SB_LIT(b, "[");
        for (int j = 0; j < s->rank[i]; j++) {
            if (j)
                SB_LIT(b, ", ");
            sb_i64(b, s->dim[i][j]);
        }
        SB_LIT(b, "]");
    }
    SB_LIT(b, "]");
}

static void begin_event(struct x *x)
{
    fputs(x->first ? "\n  " : ",\n  ", x->out);
    x->first = 0;
}

static void meta(struct x *x, const char *what, uint64_t pid, uint64_t tid, const char *name)
{
    begin_event(x);
    fprintf(x->out, "{\"ph\": \"M\", \"name\": \"%s\", \"pid\": %" PRIu64 ", \"tid\": %" PRIu64
                    ", \"args\": {\"name\": ",
            what, pid, tid);
    opp_json_str(x->out, name);
    fputs("}}", x->out);
}

/* Kineto's categories: torch's labels are user annotations and its
 * nn.Module ranges python functions (as with_modules shows them). */
static const char *category(const char *lib, uint32_t kind, const uint64_t *a, uint32_t na)
{
    if (opp_kind_base(kind) == OPP_OP_NVTX)
        return "user_annotation";
    if (opp_kind_base(kind) == OPP_OP_TORCH && na > OPP_COL_TORCH_SCOPE)
        return a[OPP_COL_TORCH_SCOPE] == OPP_TORCH_SCOPE_USER     ? "user_annotation"
               : a[OPP_COL_TORCH_SCOPE] == OPP_TORCH_SCOPE_MODULE ? "python_function"
                                                                  : "cpu_op";
    if (!strcmp(lib, "cudart"))
        return "cuda_runtime";
    if (!strcmp(lib, "cuda"))
        return "cuda_driver";
    return "cpu_op";
}

/* Where a process or device of the file being read is: its host label,
 * else the trace's file name. */
static const char *where(const struct x *x, const char *host)
{
    const char *path = x->files[x->cur].path, *base = strrchr(path, '/');
    return host ? host : base ? base + 1 : path;
}

static int p2_process(void *ctx, const struct opp_tr_process *tp)
{
    struct x *x = ctx;
    struct xproc *p = find_proc(x, tp->proc);
    if (!wanted(x, p))
        return 0;
    const char *exe = tp->exe ? strrchr(tp->exe, '/') : NULL;
    char name[600];
    if (x->nfiles == 1)
        snprintf(name, sizeof name, "%s (pid %" PRIu32 ")", exe ? exe + 1 : tp->exe ? tp->exe : "",
                 tp->pid);
    else /* several hosts: say which, and why the pid shown is not the pid */
        snprintf(name, sizeof name, "%.200s (pid %" PRIu32 ", %.300s%s)",
                 exe ? exe + 1 : tp->exe ? tp->exe : "", tp->pid, where(x, p->host),
                 p->cpid != tp->pid ? ", renumbered: an earlier trace has this pid" : "");
    meta(x, "process_name", p->cpid, 0, name);
    return 0;
}

static int p2_thread(void *ctx, uint32_t proc, uint32_t tid, const char *name)
{
    struct x *x = ctx;
    struct xproc *p = find_proc(x, proc);
    if (wanted(x, p) && name && name[0])
        meta(x, "thread_name", p->cpid, tid, name);
    return 0;
}

/* A CPU allocation or free as Kineto writes torch's: an instant "[memory]"
 * on the thread, Device Type 0 (CPU), Device Id -1. A free's size is its
 * allocation's when that was read before it (events are read thread by
 * thread, so one freed on another thread may count 0: the report's CPU
 * Mem, from the whole model in time order, has it); Total Allocated is the
 * process's running sum in that order. */
static int cpu_memory(struct x *x, struct xproc *p, const struct opp_tr_event *e,
                      uint64_t at, const uint64_t *a, uint32_t na)
{
    if (na < OPP_COL_MEM_COLS)
        return 0;
    int64_t bytes = 0;
    if (a[OPP_COL_MEM_OP] == OPP_MEM_ALLOC) {
        bytes = (int64_t)a[OPP_COL_MEM_BYTES];
        if (opp_live_put(&x->blocks, p->proc, a[OPP_COL_MEM_ADDRESS], bytes))
            x->oom = 1;
    } else {
        int found;
        bytes = -opp_live_take(&x->blocks, p->proc, a[OPP_COL_MEM_ADDRESS], &found);
    }
    p->cpu_total += bytes;
    begin_event(x);
    fprintf(x->out, "{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"cpu_instant_event\", "
                    "\"name\": \"[memory]\", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"ts\": ",
            p->cpid, e->tid);
    put_us(x->out, at, x->base_ns);
    fprintf(x->out, ", \"args\": {\"Device Type\": 0, \"Device Id\": -1, \"Addr\": %" PRIu64
                    ", \"Bytes\": %" PRId64 ", \"Total Allocated\": %" PRId64 "}}",
            a[OPP_COL_MEM_ADDRESS], bytes, p->cpu_total);
    return ferror(x->out) ? -1 : 0;
}

/* A python_function slice ends (pyspans.h): thread is proc << 32 | tid
 * of the file being read. */
static int emit_pyspan(void *ctx, uint64_t thread, uint32_t frame, uint64_t begin, uint64_t end)
{
    struct x *x = ctx;
    const struct xproc *p = find_proc(x, (uint32_t)(thread >> 32));
    const char *name = find_str(x, (uint32_t)(thread >> 32), frame);
    if (!p)
        return 0;
    begin_event(x);
    fprintf(x->out, "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": ");
    opp_json_str(x->out, name ? name : "?");
    fprintf(x->out, ", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"ts\": ", p->cpid,
            (uint32_t)thread);
    put_us(x->out, begin, x->base_ns);
    fputs(", \"dur\": ", x->out);
    put_us(x->out, end > begin ? end : begin, begin);
    fputs(", \"args\": {}}", x->out);
    return ferror(x->out) ? -1 : 0;
}

static int discard_pyspan(void *ctx, uint64_t thread, uint32_t frame, uint64_t begin, uint64_t end)
{
    (void)ctx, (void)thread, (void)frame, (void)begin, (void)end;
    return 0;
}

/* The call's Python frames, when its code stack has some, into the slices. */
static int python_frames(struct x *x, const struct opp_tr_event *e, uint64_t begin, uint64_t end)
{
    uint64_t key = (uint64_t)(e->proc + x->base) << 32 | e->stack;
    const struct xpystack *ps;
    HASH_FIND(hh, x->pystacks, &key, sizeof key, ps);
    if (!ps)
        return 0;
    int rc = opp_pyspans_add(&x->spans, (uint64_t)e->proc << 32 | e->tid, ps->frame, ps->n, begin,
                             end, emit_pyspan, x);
    if (rc == -1 && !ferror(x->out))
        x->oom = 1;
    return rc;
}

static int p2_event(void *ctx, const struct opp_tr_event *e)
{
    struct x *x = ctx;
    struct xproc *p = find_proc(x, e->proc);
    uint64_t begin = shifted(x, e->begin_ns), end = shifted(x, e->end_ns);
    if (!wanted(x, p) || e->fn >= p->nfuncs || begin < x->from_ns || begin >= x->to_ns)
        return 0;
    const struct xfunc *fn = &p->funcs[e->fn];
    uint32_t base = opp_kind_base(fn->kind);
    const uint64_t *a = e->args;
    uint32_t na = opp_op_args(fn->kind, &a, e->nargs);
    if (base == OPP_OP_MEMORY)
        return cpu_memory(x, p, e, begin, a, na);
    char name[OPP_NAME_STR_MAX + 300];
    const char *nm = name;
    if (base == OPP_OP_NVTX && na > OPP_COL_NVTX_MSG) {
        uint64_t dom = na > OPP_COL_NVTX_DOMAIN ? a[OPP_COL_NVTX_DOMAIN] : 0;
        opp_nvtx_label(name, sizeof name, dom ? find_str(x, e->proc, dom) : NULL,
                       find_str(x, e->proc, a[OPP_COL_NVTX_MSG]));
    } else if (base == OPP_OP_TORCH && na > OPP_COL_TORCH_NAME) {
        const char *tn = find_str(x, e->proc, a[OPP_COL_TORCH_NAME]);
        nm = tn ? tn : "(unnamed op)";
    } else if (!opp_op_label(fn->kind, e->args, e->nargs, fn->lib, fn->name, name, sizeof name))
        nm = fn->name;
    if (e->flags & OPP_EV_OPEN) /* died inside: it lasted until the process ended */
        end = p->end_ns > begin ? p->end_ns : x->last_ns;
    if (e->stack && x->pystacks && python_frames(x, e, begin, end))
        return -1;
    FILE *f = x->out;
    begin_event(x);
    struct sb b;
    sb_init(&b);
    SB_LIT(&b, "{\"ph\": \"X\", \"cat\": \"");
    sb_str(&b, category(fn->lib, fn->kind, a, na));
    SB_LIT(&b, "\", \"name\": ");
    sb_json(&b, f, nm);
    SB_LIT(&b, ", \"pid\": ");
    sb_u64(&b, p->cpid);
    SB_LIT(&b, ", \"tid\": ");
    sb_u64(&b, e->tid);
    SB_LIT(&b, ", \"ts\": ");
    sb_us(&b, begin, x->base_ns);
    SB_LIT(&b, ", \"dur\": ");
    sb_us(&b, end > begin ? end : begin, begin);
    SB_LIT(&b, ", \"args\": {\"lib\": ");
    sb_json(&b, f, fn->lib);
    int cuda_api = base == OPP_OP_CUDA_API && e->nargs > OPP_COL_CUDA_CBID;
    if (cuda_api) {
        SB_LIT(&b, ", \"correlation\": ");
        sb_u64(&b, e->args[OPP_COL_CUDA_CORR]);
        SB_LIT(&b, ", \"cbid\": ");
        sb_u64(&b, e->args[OPP_COL_CUDA_CBID]);
    }
    if (cuda_api || (fn->kind & OPP_OPK_STATUS && e->nargs)) {
        SB_LIT(&b, ", \"status\": ");
        sb_i64(&b, opp_op_status(fn->kind, e->args, e->nargs));
    }
    struct opp_shapes s;
    opp_op_shapes(fn->kind, e->args, e->nargs, &s);
    if (s.n) {
        SB_LIT(&b, ", \"Input Dims\": ");
        sb_shapes(&b, &s);
        uint32_t dt = opp_op_dtype(fn->kind, fn->dtype, e->args, e->nargs);
        if (dt) {
            SB_LIT(&b, ", \"Input type\": \"");
            sb_str(&b, opp_dtype_name(dt));
            SB_LIT(&b, "\"");
        }
    }
    uint64_t flops = opp_op_flops(fn->kind, fn->dtype, e->args, e->nargs);
    if (flops) {
        SB_LIT(&b, ", \"flops\": ");
        sb_u64(&b, flops);
    }
    fwrite(b.buf, 1, (size_t)(b.p - b.buf), f);
    const char *coll = base == OPP_OP_COLL && na > OPP_COL_COLL_OP
                           ? opp_coll_name((uint32_t)a[OPP_COL_COLL_OP]) : NULL;
    if (coll) {
        fprintf(f, ", \"Collective name\": \"%s\"", coll);
        uint64_t bytes = opp_op_bytes(fn->kind, e->args, e->nargs);
        if (bytes)
            fprintf(f, ", \"In msg nelems\": %" PRIu64 ", \"bytes\": %" PRIu64,
                    a[OPP_COL_COLL_COUNT], bytes);
        if (na > OPP_COL_COLL_NRANKS)
            fprintf(f, ", \"Group size\": %" PRIu64, a[OPP_COL_COLL_NRANKS]);
    }
    if (e->flags & OPP_EV_OPEN)
        fputs(", \"unfinished\": true", f);
    fputs("}}", f);
    uint64_t corr = base == OPP_OP_CUDA_API && e->nargs > OPP_COL_CUDA_CORR
                        ? e->args[OPP_COL_CUDA_CORR] : 0;
    if (corr && bits_has(&p->has_gpu, corr)) {
        /* launch -> GPU work arrow: ids of different processes kept apart */
        begin_event(x);
        fprintf(f, "{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": %" PRIu64
                   ", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"ts\": ",
                flow_id(p->proc, corr), p->cpid, e->tid);
        put_us(f, begin, x->base_ns);
        fputs("}", f);
    }
    return ferror(f) ? -1 : 0;
}

static void track(struct x *x, struct xkey **set, uint64_t key, const char *what, uint64_t pid,
                  uint64_t tid, const char *name)
{
    struct xkey *k;
    HASH_FIND(hh, *set, &key, sizeof key, k);
    if (k)
        return;
    k = malloc(sizeof *k);
    if (!k) {
        x->oom = 1;
        return;
    }
    k->key = key;
    HASH_ADD(hh, *set, key, sizeof k->key, k);
    if (x->oom) {
        free(k);
        return;
    }
    meta(x, what, pid, tid, name);
}

static int p2_gpu(void *ctx, uint32_t proc, const struct opp_gpu_rec *g)
{
    struct x *x = ctx;
    FILE *f = x->out;
    char buf[96];
    if (!wanted(x, find_proc(x, proc)))
        return 0;
    uint64_t start = shifted(x, g->f[OPP_GF_START]);
    if ((g->type == OPP_GPU_MEMORY || (g->type >= OPP_GPU_KERNEL && g->type <= OPP_GPU_OVERHEAD)) &&
        (start < x->from_ns || start >= x->to_ns))
        return 0;
    if (g->type == OPP_GPU_MEMORY) {
        uint64_t dev = g->f[OPP_GF_DEVICE];
        int64_t bytes = (int64_t)g->f[OPP_GF_M_BYTES];
        if (g->f[OPP_GF_M_OP] == OPP_GPU_MEM_FREE)
            bytes = -bytes;
        else if (g->f[OPP_GF_M_OP] != OPP_GPU_MEM_ALLOC)
            return 0;
        if (dev < 64)
            x->mem_total[dev] += bytes;
        begin_event(x);
        fprintf(f, "{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"cuda_memory\", \"name\": \"[memory]\", "
                   "\"pid\": %" PRIu32 ", \"tid\": 0, \"ts\": ",
                chrome_pid(x, dev));
        put_us(f, start, x->base_ns);
        fprintf(f, ", \"args\": {\"Device Type\": 1, \"Device Id\": %" PRIu64 ", \"Addr\": %" PRIu64
                   ", \"Bytes\": %" PRId64 ", \"Total Allocated\": %" PRId64 "}}",
                dev, g->f[OPP_GF_M_ADDRESS], bytes, dev < 64 ? x->mem_total[dev] : 0);
        return 0;
    }
    if (g->type < OPP_GPU_KERNEL || g->type > OPP_GPU_OVERHEAD)
        return 0;
    struct opp_gpu_op op;
    struct opp_gpu_launch l;
    opp_gpu_op_decode(g, 0, &op, &l);
    op.start_ns = shifted(x, op.start_ns);
    op.end_ns = shifted(x, op.end_ns);
    uint32_t cpid = chrome_pid(x, op.device);
    if (x->nfiles == 1)
        snprintf(buf, sizeof buf, "GPU %" PRIu32, op.device);
    else
        snprintf(buf, sizeof buf, "GPU %" PRIu32 " (%.60s)", op.device,
                 where(x, x->files[x->cur].host));
    track(x, &x->devices, cpid, "process_name", cpid, 0, buf);
    snprintf(buf, sizeof buf, "stream %" PRIu32, op.stream);
    track(x, &x->streams, (uint64_t)cpid << 32 | op.stream, "thread_name", cpid, op.stream, buf);
    const char *name = buf, *cat = "kernel";
    char *dem = NULL;
    if (op.type == OPP_GPU_KERNEL) {
        const char *raw = op.name ? find_str(x, proc, op.name) : NULL;
        dem = raw ? opp_demangle(raw) : NULL;
        name = dem ? dem : raw ? raw : "<unnamed kernel>";
    } else {
        opp_gpu_op_label(&op, buf, sizeof buf);
        cat = op.type == OPP_GPU_MEMCPY   ? "gpu_memcpy"
              : op.type == OPP_GPU_MEMSET ? "gpu_memset"
              : op.type == OPP_GPU_SYNC   ? "cuda_sync"
                                          : "overhead";
    }
    begin_event(x);
    fprintf(f, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": ", cat);
    opp_json_str(f, name);
    free(dem);
    fprintf(f, ", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"ts\": ", cpid, op.stream);
    put_us(f, op.start_ns, x->base_ns);
    fputs(", \"dur\": ", f);
    put_us(f, op.end_ns, op.start_ns);
    fprintf(f, ", \"args\": {\"device\": %" PRIu32 ", \"context\": %" PRIu64 ", \"stream\": %" PRIu32
               ", \"correlation\": %" PRIu64,
            op.device, g->f[OPP_GF_CONTEXT], op.stream, op.corr);
    if (op.type == OPP_GPU_KERNEL)
        fprintf(f, ", \"grid\": [%" PRIu32 ", %" PRIu32 ", %" PRIu32 "], \"block\": [%" PRIu32
                   ", %" PRIu32 ", %" PRIu32 "], \"registers per thread\": %" PRIu32
                   ", \"shared memory\": %" PRIu64,
                l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2], l.regs,
                (uint64_t)l.static_smem + l.dynamic_smem);
    if (op.type == OPP_GPU_MEMCPY || op.type == OPP_GPU_MEMSET) {
        fprintf(f, ", \"bytes\": %" PRIu64, op.bytes);
        uint64_t dur = op.end_ns - op.start_ns;
        if (dur)
            fprintf(f, ", \"memory bandwidth (GB/s)\": %.3f", (double)op.bytes / (double)dur);
    }
    fputs("}}", f);
    struct xproc *p = find_proc(x, proc);
    if (op.corr && bits_has(&p->has_call, op.corr)) {
        begin_event(x);
        fprintf(f, "{\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": %" PRIu64
                   ", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"ts\": ",
                flow_id(proc + x->base, op.corr), cpid, op.stream);
        put_us(f, op.start_ns, x->base_ns);
        fputs("}", f);
    }
    return ferror(f) ? -1 : 0;
}

/* distributedInfo as Kineto writes it, when the exported processes are
 * one rank (HTA reads the rank with the regex "rank":\s+(\d+)). */
static void distributed_info(struct x *x)
{
    int64_t rank = -1, world = -1;
    struct xproc *p, *pt;
    HASH_ITER(hh, x->procs, p, pt)
    {
        if (!wanted(x, p) || p->rank < 0)
            continue;
        if (rank >= 0 && p->rank != rank)
            return; /* several ranks: a file per rank carries it (--rank) */
        rank = p->rank;
        if (p->world_size >= 0)
            world = p->world_size;
    }
    if (rank < 0)
        return;
    fprintf(x->out, "  \"distributedInfo\": {\"rank\": %" PRId64, rank);
    if (world >= 0)
        fprintf(x->out, ", \"world_size\": %" PRId64, world);
    fputs("},\n", x->out);
}

static void device_properties(struct x *x)
{
    FILE *f = x->out;
    fputs("\n  ],\n  \"deviceProperties\": [", f);
    for (size_t i = 0; i < x->ndevs; i++) {
        const uint64_t *v = x->devs[i].f;
        const char *name = find_str_of(x, (uint32_t)(v[OPP_GF_V_NAME] >> 32), v[OPP_GF_V_NAME]);
        fprintf(f, "%s\n    {\"id\": %" PRIu64 ", \"name\": ", i ? "," : "", v[OPP_GF_V_ID]);
        opp_json_str(f, name ? name : "");
        fprintf(f, ", \"totalGlobalMem\": %" PRIu64 ", \"computeMajor\": %" PRIu64
                   ", \"computeMinor\": %" PRIu64 ", \"numSms\": %" PRIu64
                   ", \"maxThreadsPerBlock\": %" PRIu64 ", \"maxThreadsPerMultiprocessor\": %" PRIu64
                   ", \"regsPerMultiprocessor\": %" PRIu64
                   ", \"sharedMemPerMultiprocessor\": %" PRIu64 "}",
                v[OPP_GF_V_GLOBAL_MEM], v[OPP_GF_V_CC_MAJOR], v[OPP_GF_V_CC_MINOR],
                v[OPP_GF_V_SMS], v[OPP_GF_V_THREADS_PER_BLOCK], v[OPP_GF_V_THREADS_PER_SM],
                v[OPP_GF_V_REGS_PER_SM], v[OPP_GF_V_SMEM_PER_SM]);
    }
    fputs(x->ndevs ? "\n  ]\n}\n" : "]\n}\n", f);
}

static void free_all(struct x *x)
{
    struct xproc *p, *pt;
    HASH_ITER(hh, x->procs, p, pt)
    {
        HASH_DEL(x->procs, p);
        for (uint32_t i = 0; i < p->nfuncs; i++)
            free(p->funcs[i].lib), free(p->funcs[i].name);
        free(p->funcs);
        bits_free(&p->has_gpu);
        bits_free(&p->has_call);
        free(p->exe);
        free(p->host);
        free(p);
    }
    OPP_HASH_FREE(x->pids);
    struct xstr *s, *st;
    HASH_ITER(hh, x->strs, s, st)
    {
        HASH_DEL(x->strs, s);
        free(s->text);
        free(s);
    }
    OPP_HASH_FREE(x->streams);
    opp_live_free(&x->blocks);
    OPP_HASH_FREE(x->pystacks);
    opp_pyspans_flush(&x->spans, discard_pyspan, NULL);
    OPP_HASH_FREE(x->devices);
}

/* After pass 1: Chrome's pid for each file's pids and devices. A number an
 * earlier file already shows is moved up by 2^22 (Linux's largest pid_max)
 * until free, so that two hosts' processes (or GPUs) never share a track. */
static int assign_pids(struct x *x)
{
    struct xkey *taken = NULL, *k;
    int rc = 0;
    for (size_t f = 0; f < x->nfiles && !rc; f++) {
        struct xpid *e, *et;
        HASH_ITER(hh, x->pids, e, et)
        {
            if (e->key >> 32 != f)
                continue;
            uint64_t c = (uint32_t)e->key;
            for (;;) {
                HASH_FIND(hh, taken, &c, sizeof c, k);
                if (!k)
                    break;
                c += 1u << 22;
            }
            if (c > UINT32_MAX || !(k = malloc(sizeof *k))) { /* the first: never, with real pids */
                rc = -1;
                break;
            }
            e->cpid = (uint32_t)c;
            k->key = c;
            HASH_ADD(hh, taken, key, sizeof k->key, k);
            if (x->oom) {
                free(k);
                rc = -1;
                break;
            }
        }
    }
    OPP_HASH_FREE(taken);
    struct xproc *p, *pt;
    HASH_ITER(hh, x->procs, p, pt)
    {
        x->cur = p->file;
        p->cpid = chrome_pid(x, p->pid);
    }
    return rc;
}

/* After a file's events: the python_function slices still open end. */
static int end_of_file(struct x *x)
{
    return opp_pyspans_flush(&x->spans, emit_pyspan, x);
}

/* Read every file in turn with v; 0 or -1 (err set). sum: the first file's
 * summary, with the others' warning when it has none. */
static int read_all(struct x *x, const struct opp_tr_visitor *v, struct opp_tr_summary *sum,
                    char *err, size_t errlen, int (*after)(struct x *))
{
    for (x->cur = 0; x->cur < x->nfiles; x->cur++) {
        struct opp_tr_summary s;
        const char *path = x->files[x->cur].path;
        x->base = (uint32_t)x->cur << 24;
        memset(x->mem_total, 0, sizeof x->mem_total); /* another host's devices */
        if (opp_trace_read(path, v, x, x->cur ? &s : sum, err, errlen) < 0)
            return -1;
        if (after && after(x)) {
            snprintf(err, errlen, "cannot export %s: %s", path,
                     x->oom ? "out of memory" : "cannot write");
            return -1;
        }
        if (x->oom) {
            snprintf(err, errlen, "cannot export %s: out of memory", path);
            return -1;
        }
        if ((x->cur ? &s : sum)->summary) {
            snprintf(err, errlen,
                     "%s is a summary trace (OPPROF_MODE=summary: calls added up by call path, "
                     "without their times); the Chrome export needs every call: record without "
                     "OPPROF_MODE=summary",
                     path);
            return -1;
        }
        if (x->cur && !sum->warning[0] && s.warning[0])
            snprintf(sum->warning, sizeof sum->warning, "%.200s: %.300s", path, s.warning);
    }
    x->cur = 0;
    x->base = 0;
    return 0;
}

int opp_export_chrome(const char *const *traces, size_t ntraces, const struct opp_chrome_opts *o,
                      FILE *out, char *err, size_t errlen)
{
    int64_t rank = o ? o->rank : -1;
    if (!ntraces || ntraces > OPP_CHROME_MAX_TRACES) {
        snprintf(err, errlen, "%s", ntraces ? "too many traces (at most 256)" : "no trace");
        return -1;
    }
    struct x *x = calloc(1, sizeof *x);
    struct xfile *files = calloc(ntraces, sizeof *files);
    if (!x || !files) {
        free(x);
        free(files);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < ntraces; i++)
        files[i].path = traces[i];
    x->files = files;
    x->nfiles = ntraces;
    x->out = out;
    /* one writer: no stdio lock per call, and larger writes */
    __fsetlocking(out, FSETLOCKING_BYCALLER);
    setvbuf(out, NULL, _IOFBF, 1 << 20);
    x->base_ns = UINT64_MAX;
    x->first = 1;
    x->only_rank = rank;
    x->from_ns = o ? o->from_ns : 0;
    x->to_ns = o && o->to_ns ? o->to_ns : UINT64_MAX;
    struct opp_tr_summary sum;
    static const struct opp_tr_visitor v1 = {.process = p1_process,
                                             .funcs = p1_funcs,
                                             .event = p1_event,
                                             .process_end = p1_process_end,
                                             .gpu = p1_gpu,
                                             .info = p1_info};
    static const struct opp_tr_visitor v2 = {
        .process = p2_process, .thread = p2_thread, .event = p2_event, .gpu = p2_gpu};
    int rc = -1;
    if (read_all(x, &v1, &sum, err, errlen, NULL) < 0)
        goto out;
    if (assign_pids(x)) {
        snprintf(err, errlen, "cannot export %s: out of memory", traces[0]);
        goto out;
    }
    if (x->base_ns == UINT64_MAX)
        x->base_ns = 0;
    /* The wall-clock time of ts 0, through the first file's pair of clocks. */
    uint64_t base_real = 0;
    if (files[0].have_shift && x->ref >= 0)
        base_real = (uint64_t)x->ref + x->base_ns;
    if (rank >= 0) {
        int any = 0;
        struct xproc *p, *pt;
        HASH_ITER(hh, x->procs, p, pt)
        any |= p->rank == rank;
        if (!any) {
            if (ntraces == 1)
                snprintf(err, errlen, "no process of %s has rank %" PRId64, traces[0], rank);
            else
                snprintf(err, errlen, "no process of the %zu traces has rank %" PRId64, ntraces,
                         rank);
            goto out;
        }
    }
    fprintf(out, "{\n  \"schemaVersion\": 1,\n  \"displayTimeUnit\": \"ms\",\n"
                 "  \"baseTimeNanoseconds\": %" PRIu64 ",\n",
            base_real);
    distributed_info(x);
    fputs("  \"traceEvents\": [", out);
    if (read_all(x, &v2, &sum, err, errlen, end_of_file) < 0)
        goto out;
    device_properties(x);
    if (fflush(out) || ferror(out)) {
        snprintf(err, errlen, "cannot write the export: %s", strerror(errno));
        goto out;
    }
    if (sum.warning[0])
        snprintf(err, errlen, "%s", sum.warning); /* exported what was readable */
    rc = 0;
out:
    free_all(x);
    free(x);
    free(files);
    return rc;
}
