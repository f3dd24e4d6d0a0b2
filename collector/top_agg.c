/* The collector's live aggregate for `opprof top` (top_agg.h). A process's
 * rows are found by entry point (an array) or, for operators named by an
 * argument (torch operators, NVTX ranges, sub-named ones), by a hash of
 * that argument; names from strings are looked up when a snapshot is
 * taken, since a string may come after the calls that name it.
 *
 * torch.profiler's steps are the exception: each ProfilerStep#N has a
 * string of its own, so a row a string would be a row a step. A process's
 * steps count into its one step row as they come (the report's ProfilerStep*,
 * torch_rules.h): a call whose string is a step's goes to it, and a string
 * that comes after its calls folds the row they made into it. */
#include "top_agg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "format.h"
#include "ops.h"
#include "ring.h"
#include "trace.h"

#define DEPTH_MAX 64u      /* deeper calls count as this depth */
#define CORR_SLOTS 65536u  /* CUDA calls whose GPU work may still come (corr_slot) */
#define BLOCK_SLOTS 65536u /* CPU blocks whose free may still come */
#define LAT_RING 128u      /* step latencies kept */
#define NONE UINT32_MAX

/* A map of u64 keys to u32 values (open addressing, NONE: empty). */
struct umap {
    uint64_t *k;
    uint32_t *v;
    uint32_t cap, n; /* cap a power of two */
};

static uint32_t umix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (uint32_t)k;
}

static uint32_t umap_get(const struct umap *m, uint64_t k)
{
    if (!m->cap)
        return NONE;
    for (uint32_t i = umix(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->v[i] == NONE)
            return NONE;
        if (m->k[i] == k)
            return m->v[i];
    }
}

static int umap_put(struct umap *m, uint64_t k, uint32_t v)
{
    if ((m->n + 1) * 2 > m->cap) {
        struct umap g = {NULL, NULL, m->cap ? m->cap * 2 : 64, 0};
        g.k = malloc(g.cap * sizeof *g.k);
        g.v = malloc(g.cap * sizeof *g.v);
        if (!g.k || !g.v) {
            free(g.k);
            free(g.v);
            return -ENOMEM;
        }
        memset(g.v, 0xff, g.cap * sizeof *g.v);
        for (uint32_t i = 0; i < m->cap; i++)
            if (m->v[i] != NONE)
                umap_put(&g, m->k[i], m->v[i]);
        free(m->k);
        free(m->v);
        *m = g;
    }
    uint32_t i = umix(k) & (m->cap - 1);
    while (m->v[i] != NONE && m->k[i] != k)
        i = (i + 1) & (m->cap - 1);
    m->n += m->v[i] == NONE;
    m->k[i] = k;
    m->v[i] = v;
    return 0;
}

static void umap_free(struct umap *m)
{
    free(m->k);
    free(m->v);
    memset(m, 0, sizeof *m);
}

enum { STEP_NONE, STEP_PROFILER, STEP_OPTIMIZER };

/* A count of ticks as ns: the ticks it had at the last snapshot and
 * their ns. What came since is turned into ns at the rate known then,
 * so a better rate never rescales what was shown before (an interval
 * would be that change applied to the whole run). */
struct lns {
    uint64_t ticks, ns;
};

struct lrow {
    uint32_t fn;
    uint64_t msg, dom; /* NVTX message and domain, torch name (string ids + 1; 0: none) */
    char *name;        /* set once it is known */
    char *lib;         /* its process ended: its library's name (the table is gone) */
    uint64_t calls, self, total, gpu;
    uint64_t layer; /* an nn.Module's: the self time of the calls inside it and no
                       other module inside it, its own included */
    struct lns self_ns, total_ns, layer_ns; /* self, total and layer as shown */
    int64_t mem;
    int step;
    /* its calls before its name came, at depth 0 and deeper: steps if it
     * names one (a profiler step at any depth, an optimizer's at depth 0) */
    uint32_t unnamed, unnamed_in;
    int module;       /* an nn.Module's forward (OPP_TORCH_SCOPE_MODULE) */
    int folded;       /* folded into the step row: free, fn the next free row (NONE: none) */
};

struct lproc {
    uint32_t proc, nfuncs;
    int clock;
    struct opp_func_desc *f; /* names and libraries owned */
    uint32_t *fnrow;         /* entry point -> row of its plain calls */
    uint32_t *fast;          /* the same for plain_kind entry points, else NONE */
    uint8_t *plain;          /* entry point -> plain_kind(its kind) */
    struct umap keyed;       /* (kind of key, argument) -> row */
    struct umap strs;        /* string id -> index in strv */
    char **strv;
    uint32_t nstr, capstr;
    struct lrow *rows;
    uint32_t nrows, caprows;
    uint32_t free_row; /* the first folded row, to be made again; NONE: none */
    uint32_t step_row; /* the row of its ProfilerStep#N calls, NONE till the first */
    uint32_t outside; /* the row of the self time inside no nn.Module, NONE till then */
    int modules;      /* it has nn.Module rows: the outside rows are shown */
};

struct lthread {
    uint32_t proc, tid;
    struct lproc *p;
    uint64_t child[DEPTH_MAX + 2];
    uint64_t layer[DEPTH_MAX + 2]; /* self time at depth d and deeper that waits for a module */
    struct opp_call_kids kids[DEPTH_MAX + 2];
    int64_t mem[DEPTH_MAX + 2]; /* bytes of depth d memory events since the last depth d-1 call */
    uint64_t opt_end;           /* its last optimizer step's end (ns), 0 none */
    uint64_t opt_pending;       /* the end (ns) of an optimizer step awaiting its parents */
    uint32_t opt_depth;
};

struct opp_top_agg {
    struct lproc **procs;
    uint32_t nprocs, capprocs;
    struct umap pmap; /* proc -> index */
    struct lthread **threads;
    uint32_t nthreads, capthreads;
    struct umap tmap; /* proc << 32 | tid -> index */
    struct lthread *last_t;
    struct lproc *last_p;
    struct opp_clock_sample c0, c1;
    double ns_per_tick;
    struct {
        uint32_t proc, row;
        uint64_t corr;
    } corr[CORR_SLOTS];
    struct {
        uint32_t proc;
        uint64_t addr;
        int64_t bytes;
    } blocks[BLOCK_SLOTS];
    uint64_t gpu_ns;
    uint64_t steps[3], nlat[3]; /* steps ended, and those of a known latency */
    uint64_t lat[3][LAT_RING];
    struct opp_top_row *out; /* the last snapshot's rows */
};

struct opp_top_agg *opp_top_agg_new(void)
{
    struct opp_top_agg *l = calloc(1, sizeof *l);
    if (l)
        l->ns_per_tick = 1.0;
    return l;
}

/* What a process's calls are read with (its entry points, their rows,
 * its strings): gone when it ends, its rows kept (opp_top_agg_proc_end). */
static void proc_tables_free(struct lproc *p)
{
    for (uint32_t i = 0; i < p->nfuncs; i++) {
        free((char *)p->f[i].lib);
        free((char *)p->f[i].name);
    }
    free(p->f);
    free(p->fnrow);
    free(p->plain);
    free(p->fast);
    p->f = NULL;
    p->fnrow = p->fast = NULL;
    p->plain = NULL;
    p->nfuncs = 0; /* a call of it would be no entry point */
    umap_free(&p->keyed);
    umap_free(&p->strs);
    for (uint32_t i = 0; i < p->nstr; i++)
        free(p->strv[i]);
    free(p->strv);
    p->strv = NULL;
    p->nstr = p->capstr = 0;
}

static void proc_free(struct lproc *p)
{
    proc_tables_free(p);
    for (uint32_t i = 0; i < p->nrows; i++) {
        free(p->rows[i].name);
        free(p->rows[i].lib);
    }
    free(p->rows);
    free(p);
}

static void out_free(struct opp_top_agg *l)
{
    free(l->out);
    l->out = NULL;
}

void opp_top_agg_free(struct opp_top_agg *l)
{
    if (!l)
        return;
    for (uint32_t i = 0; i < l->nprocs; i++)
        proc_free(l->procs[i]);
    free(l->procs);
    umap_free(&l->pmap);
    for (uint32_t i = 0; i < l->nthreads; i++)
        free(l->threads[i]);
    free(l->threads);
    umap_free(&l->tmap);
    out_free(l);
    free(l);
}

void opp_top_agg_clock(struct opp_top_agg *l, const struct opp_clock_sample *s)
{
    if (!l->c0.mono_ns) {
        l->c0 = *s;
        return;
    }
    l->c1 = *s;
    if (l->c1.tsc > l->c0.tsc && l->c1.mono_ns > l->c0.mono_ns)
        l->ns_per_tick = (double)(l->c1.mono_ns - l->c0.mono_ns) / (double)(l->c1.tsc - l->c0.tsc);
}

/* ns per tick of p's clock. */
static double tick_ns(const struct opp_top_agg *l, const struct lproc *p)
{
    return p->clock == OPP_CLOCK_TSC ? l->ns_per_tick : 1.0;
}

/* ticks, the count c converts, in ns: the ticks since the last call at
 * scale ns a tick (fewer: a fold took some back). */
static uint64_t lns_of(struct lns *c, uint64_t ticks, double scale)
{
    if (ticks >= c->ticks) {
        c->ns += (uint64_t)((double)(ticks - c->ticks) * scale + 0.5);
    } else {
        uint64_t back = (uint64_t)((double)(c->ticks - ticks) * scale + 0.5);
        c->ns -= back < c->ns ? back : c->ns;
    }
    if (!ticks)
        c->ns = 0;
    c->ticks = ticks;
    return c->ns;
}

static struct lproc *find_proc(struct opp_top_agg *l, uint32_t proc)
{
    if (l->last_p && l->last_p->proc == proc)
        return l->last_p;
    uint32_t i = umap_get(&l->pmap, proc);
    return i == NONE ? NULL : (l->last_p = l->procs[i]);
}

/* Whether calls of kind are named by their entry point and carry nothing
 * else the aggregate reads (the fast path: no argument is looked at). */
static int plain_kind(uint32_t kind)
{
    switch (opp_kind_base(kind)) {
    case OPP_OP_PLAIN:
    case OPP_OP_GEMM:
    case OPP_OP_GEMV:
    case OPP_OP_DOT:
    case OPP_OP_AXPY:
    case OPP_OP_SCAL:
    case OPP_OP_COLL:
        return 1;
    default:
        return 0;
    }
}

int opp_top_agg_proc(struct opp_top_agg *l, uint32_t proc, int clock, uint32_t nfuncs,
                     const struct opp_func_desc *funcs)
{
    if (find_proc(l, proc))
        return 0;
    struct lproc *p = calloc(1, sizeof *p);
    if (!p)
        return -ENOMEM;
    p->proc = proc;
    p->clock = clock;
    p->free_row = p->step_row = NONE;
    p->f = calloc(nfuncs ? nfuncs : 1, sizeof *p->f);
    p->fnrow = malloc((nfuncs ? nfuncs : 1) * sizeof *p->fnrow);
    p->plain = malloc(nfuncs ? nfuncs : 1);
    p->fast = malloc((nfuncs ? nfuncs : 1) * sizeof *p->fast);
    int oom = !p->f || !p->fnrow || !p->plain || !p->fast;
    for (uint32_t i = 0; !oom && i < nfuncs; i++) {
        p->f[i].kind = funcs[i].kind;
        p->f[i].dtype = funcs[i].dtype;
        p->f[i].lib = strdup(funcs[i].lib);
        p->f[i].name = strdup(funcs[i].name);
        p->nfuncs = i + 1;
        p->fnrow[i] = p->fast[i] = NONE;
        p->outside = NONE;
        p->plain[i] = (uint8_t)plain_kind(funcs[i].kind);
        oom = !p->f[i].lib || !p->f[i].name;
    }
    if (!oom && l->nprocs == l->capprocs) {
        uint32_t nc = l->capprocs ? l->capprocs * 2 : 16;
        struct lproc **np = realloc(l->procs, nc * sizeof *np);
        if (np) {
            l->procs = np;
            l->capprocs = nc;
        }
        oom = !np;
    }
    if (oom || umap_put(&l->pmap, proc, l->nprocs)) {
        proc_free(p);
        return -ENOMEM;
    }
    l->procs[l->nprocs++] = p;
    return 0;
}

static struct lthread *find_thread(struct opp_top_agg *l, uint32_t proc, uint32_t tid)
{
    if (l->last_t && l->last_t->proc == proc && l->last_t->tid == tid)
        return l->last_t;
    uint64_t k = (uint64_t)proc << 32 | tid;
    uint32_t i = umap_get(&l->tmap, k);
    if (i != NONE)
        return l->last_t = l->threads[i];
    if (l->nthreads == l->capthreads) {
        uint32_t nc = l->capthreads ? l->capthreads * 2 : 64;
        struct lthread **nt = realloc(l->threads, nc * sizeof *nt);
        if (!nt)
            return NULL;
        l->threads = nt;
        l->capthreads = nc;
    }
    struct lthread *t = calloc(1, sizeof *t);
    if (!t || umap_put(&l->tmap, k, l->nthreads)) {
        free(t);
        return NULL;
    }
    t->proc = proc;
    t->tid = tid;
    t->p = find_proc(l, proc);
    l->threads[l->nthreads++] = t;
    return l->last_t = t;
}

void opp_top_agg_thread_end(struct opp_top_agg *l, uint32_t proc, uint32_t tid)
{
    uint64_t k = (uint64_t)proc << 32 | tid;
    uint32_t i = umap_get(&l->tmap, k);
    if (i == NONE)
        return;
    if (l->last_t == l->threads[i])
        l->last_t = NULL;
    free(l->threads[i]);
    /* the last takes its place: the map is built again (threads end seldom) */
    l->threads[i] = l->threads[--l->nthreads];
    umap_free(&l->tmap);
    for (uint32_t j = 0; j < l->nthreads; j++)
        if (umap_put(&l->tmap, (uint64_t)l->threads[j]->proc << 32 | l->threads[j]->tid, j)) {
            /* out of memory: the threads after j start afresh when seen again */
            for (uint32_t m = j; m < l->nthreads; m++)
                free(l->threads[m]);
            l->nthreads = j;
            break;
        }
}

static uint32_t new_row(struct lproc *p, uint32_t fn)
{
    uint32_t r = p->free_row;
    if (r != NONE) {
        p->free_row = p->rows[r].fn;
        p->rows[r] = (struct lrow){.fn = fn};
        return r;
    }
    if (p->nrows == p->caprows) {
        uint32_t nc = p->caprows ? p->caprows * 2 : 64;
        struct lrow *nr = realloc(p->rows, nc * sizeof *nr);
        if (!nr)
            return NONE;
        p->rows = nr;
        p->caprows = nc;
    }
    p->rows[p->nrows] = (struct lrow){.fn = fn};
    return p->nrows++;
}

/* The string of id in p, NULL when not come yet. */
static const char *str_of(const struct lproc *p, uint64_t id)
{
    uint32_t i = umap_get(&p->strs, id);
    return i == NONE ? NULL : p->strv[i];
}

static int step_of(const char *name, uint32_t kind, uint64_t scope)
{
    if (opp_profiler_step(name))
        return STEP_PROFILER;
    if (opp_kind_base(kind) == OPP_OP_TORCH && scope <= INT32_MAX &&
        opp_optimizer_step((int)scope, name))
        return STEP_OPTIMIZER;
    return STEP_NONE;
}

/* The keys of rows found by a hash (row_of): an NVTX range's by its
 * message (and domain), a torch operator's by its name (string id + 1, or
 * its entry point's), a relabelled call's by its entry point and sub. */
static uint64_t nvtx_key(uint64_t dom, uint64_t msg)
{
    return 1ull << 62 | (dom & 0x3fffffffull) << 32 | (msg & 0xffffffffull);
}

static uint64_t torch_key(uint64_t name)
{
    return 2ull << 62 | name;
}

/* Whether string id is known and a profiler step's name. */
static int step_str(const struct lproc *p, uint64_t id)
{
    const char *s = str_of(p, id);
    return s && opp_profiler_step(s);
}

/* The row of a call, made when new: NONE when out of memory. Keys: the
 * entry point (plain), else a hash's (nvtx_key, torch_key, 3 << 62 | entry
 * point << 16 | sub). A call named by a step's string goes to the step row. */
static uint32_t row_of(struct lproc *p, uint32_t fn, uint32_t kind, const uint64_t *args,
                       uint32_t nargs)
{
    const uint64_t *a = args;
    uint32_t na = opp_op_args(kind, &a, nargs), base = opp_kind_base(kind);
    uint64_t key = 0, msg = 0, dom = 0;
    uint32_t sub = 0;
    if (base == OPP_OP_NVTX && na > OPP_COL_NVTX_MSG) {
        msg = a[OPP_COL_NVTX_MSG] + 1;
        dom = na > OPP_COL_NVTX_DOMAIN ? a[OPP_COL_NVTX_DOMAIN] : 0;
        key = nvtx_key(dom, a[OPP_COL_NVTX_MSG]);
    } else if (base == OPP_OP_TORCH) {
        msg = opp_torch_call_name(kind, fn, args, nargs);
        if (msg >> 63)
            msg = 0; /* unnamed: its entry point's */
        key = torch_key(msg ? msg : (uint64_t)fn << 32);
    } else if ((sub = opp_op_relabel(kind, args, nargs))) {
        key = 3ull << 62 | (uint64_t)fn << 16 | sub;
    } else {
        if (p->fnrow[fn] == NONE)
            p->fnrow[fn] = new_row(p, fn);
        return p->fnrow[fn];
    }
    uint32_t r = umap_get(&p->keyed, key);
    if (r != NONE)
        return r;
    /* (an NVTX range's message 0 is none: no string names it) */
    int step = msg > (base == OPP_OP_NVTX) && !dom && step_str(p, msg - 1);
    if (step && p->step_row != NONE)
        return umap_put(&p->keyed, key, p->step_row) ? NONE : p->step_row;
    if ((r = new_row(p, fn)) == NONE || umap_put(&p->keyed, key, r))
        return NONE;
    if (step)
        p->step_row = r;
    struct lrow *row = &p->rows[r];
    row->msg = msg;
    row->dom = dom;
    if (sub) {
        char buf[OPP_NAME_MAX * 2 + 64];
        if (opp_op_label(kind, args, nargs, p->f[fn].lib, p->f[fn].name, buf, sizeof buf))
            row->name = strdup(buf);
    }
    row->module = base == OPP_OP_TORCH && na > OPP_COL_TORCH_SCOPE &&
                  a[OPP_COL_TORCH_SCOPE] == OPP_TORCH_SCOPE_MODULE;
    p->modules |= row->module;
    if (base == OPP_OP_TORCH && msg) /* a step is known by its name: looked up later */
        row->step = -1 - (int)(na > OPP_COL_TORCH_SCOPE ? a[OPP_COL_TORCH_SCOPE] & 0xffff : 0);
    else if (base == OPP_OP_NVTX)
        row->step = -1 - OPP_TORCH_SCOPE_FUNCTION;
    return r;
}

/* A row's name, when its string has come: made once. */
static const char *row_name(struct lproc *p, struct lrow *row)
{
    if (row->name)
        return row->name;
    uint32_t kind = p->f[row->fn].kind, base = opp_kind_base(kind);
    if (base == OPP_OP_MEMORY)
        return "[memory]";
    if (!row->msg)
        return p->f[row->fn].name;
    /* an NVTX range's message 0 is none (docs/FORMAT.md): no string comes */
    int none = base == OPP_OP_NVTX && row->msg == 1;
    const char *m = none ? NULL : str_of(p, row->msg - 1);
    if (!m && !none)
        return NULL;
    if (base == OPP_OP_NVTX) {
        const char *d = row->dom ? str_of(p, row->dom) : NULL;
        if (row->dom && !d)
            return NULL;
        char buf[OPP_NAME_STR_MAX + 300];
        opp_nvtx_label(buf, sizeof buf, d, m);
        row->name = strdup(buf);
    } else {
        row->name = strdup(m);
    }
    return row->name;
}

void opp_top_agg_proc_end(struct opp_top_agg *l, uint32_t proc)
{
    struct lproc *p = find_proc(l, proc);
    if (!p || !p->f)
        return;
    for (uint32_t i = 0; i < p->nrows; i++) {
        struct lrow *row = &p->rows[i];
        if (i == p->outside || row->folded)
            continue;
        const char *n = row_name(p, row); /* made and kept, for a name from a string */
        if (!row->name)
            row->name = strdup(n ? n : "(name not come yet)");
        row->lib = strdup(p->f[row->fn].lib);
        if (!row->name || !row->lib) { /* out of memory: the row goes */
            row->calls = row->layer = 0;
            free(row->name);
            row->name = NULL;
            row->lib = NULL;
        }
    }
    proc_tables_free(p);
}

/* A step ended; lat: how long it took, 0 unknown (a training loop's
 * first: from where is the report's to say). */
static void step_ended(struct opp_top_agg *l, int step, uint64_t lat)
{
    l->steps[step]++;
    if (lat)
        l->lat[step][l->nlat[step]++ % LAT_RING] = lat;
}

/* A training iteration ends with its optimizer's step, and began where
 * the one before ended. */
static void optimizer_step(struct opp_top_agg *l, struct lthread *t, uint64_t end_ns)
{
    step_ended(l, STEP_OPTIMIZER, t->opt_end && end_ns > t->opt_end ? end_ns - t->opt_end : 0);
    t->opt_end = end_ns;
}

/* row's name n has come: whether its calls are steps, those before it
 * counted. */
static void step_named(struct opp_top_agg *l, struct lproc *p, struct lrow *row, const char *n)
{
    row->step = step_of(n, p->f[row->fn].kind, (uint64_t)(-1 - row->step));
    uint64_t steps = row->step == STEP_PROFILER    ? (uint64_t)row->unnamed + row->unnamed_in
                     : row->step == STEP_OPTIMIZER ? row->unnamed
                                                   : 0;
    for (; steps; steps--)
        step_ended(l, row->step, 0); /* how long they took is not known */
    row->unnamed = row->unnamed_in = 0;
}

static void steps_of(struct opp_top_agg *l, struct lproc *p, struct lthread *t, struct lrow *row,
                     uint32_t depth, uint64_t end_ns, uint64_t dur_ns)
{
    if (row->step < 0) { /* its name, once it has come, says whether it is a step */
        const char *n = row_name(p, row);
        if (!n) { /* not yet (its string comes on the socket, the call in the ring) */
            row->unnamed += !depth;
            row->unnamed_in += !!depth;
            return;
        }
        step_named(l, p, row, n);
    }
    /* an optimizer step inside another (a wrapping optimizer steps its
     * inner one) is not one: the one waiting goes when its parent comes */
    if (t->opt_pending && depth < t->opt_depth) {
        if (row->step != STEP_OPTIMIZER)
            optimizer_step(l, t, t->opt_pending);
        t->opt_pending = 0;
    }
    if (row->step == STEP_PROFILER) {
        step_ended(l, STEP_PROFILER, dur_ns);
    } else if (row->step == STEP_OPTIMIZER && !depth) {
        optimizer_step(l, t, end_ns);
    } else if (row->step == STEP_OPTIMIZER) {
        t->opt_pending = end_ns;
        t->opt_depth = depth;
    }
}

static void lns_add(struct lns *to, const struct lns *from)
{
    to->ticks += from->ticks;
    to->ns += from->ns;
}

/* Row from's counts added to row to's (as the snapshot adds rows of one
 * key: each one's ticks shown so far at the rate they were shown), and
 * from free. */
static void fold_row(struct lproc *p, uint32_t from, uint32_t to)
{
    struct lrow *f = &p->rows[from], *t = &p->rows[to];
    t->calls += f->calls;
    t->self += f->self;
    t->total += f->total;
    t->gpu += f->gpu;
    t->layer += f->layer;
    t->mem = opp_add_sat(t->mem, f->mem);
    lns_add(&t->self_ns, &f->self_ns);
    lns_add(&t->total_ns, &f->total_ns);
    lns_add(&t->layer_ns, &f->layer_ns);
    free(f->name);
    free(f->lib);
    *f = (struct lrow){.fn = p->free_row, .folded = 1};
    p->free_row = from;
}

/* String id, text s, a profiler step's, has come: the rows its calls made
 * before it (a torch operator's, an NVTX range's without a domain) fold
 * into the step row, the first becoming it when there is none, their
 * calls before the name counted as steps. */
static void step_string(struct opp_top_agg *l, struct lproc *p, uint64_t id, const char *s)
{
    const uint64_t keys[2] = {torch_key(id + 1), nvtx_key(0, id)};
    for (int i = 0; i < 2; i++) {
        uint32_t r = umap_get(&p->keyed, keys[i]);
        if (r == NONE || r == p->step_row)
            continue;
        if (p->rows[r].step < 0)
            step_named(l, p, &p->rows[r], s);
        if (p->step_row == NONE)
            p->step_row = r;
        else if (!umap_put(&p->keyed, keys[i], p->step_row))
            fold_row(p, r, p->step_row); /* (out of memory: the snapshot adds them) */
    }
}

/* String id, text s, another's than a profiler step, has come: a torch
 * operator's row whose calls all came before it learns now, not at a
 * next call that may never come, whether they were steps (an
 * optimizer's ending a training loop's last iterations). */
static void string_named(struct opp_top_agg *l, struct lproc *p, uint64_t id, const char *s)
{
    uint32_t r = umap_get(&p->keyed, torch_key(id + 1));
    if (r != NONE && p->rows[r].step < 0)
        step_named(l, p, &p->rows[r], s);
}

static uint32_t slot_of(uint32_t proc, uint64_t x, uint32_t slots)
{
    return umix(x * 31 + proc) & (slots - 1);
}

/* A CUDA call's slot by its correlation id. CUPTI numbers a process's
 * calls one after another, so its last CORR_SLOTS calls never share a
 * slot, however many launches come before their GPU work is handed over
 * (thousands between two flushes on an H200; a hashed slot lost a third
 * of the kernel time). Processes start apart. */
static uint32_t corr_slot(uint32_t proc, uint64_t corr)
{
    return (uint32_t)(corr + (uint64_t)proc * 40503u) & (CORR_SLOTS - 1);
}

/* Self time goes up to the innermost nn.Module forward around it, as its
 * calls return (a module's comes after what it holds); what reaches depth
 * 0 outside any module is the "(outside nn.Module)" row's. */
static void to_layer(struct lproc *p, struct lthread *t, struct lrow *row, uint32_t d,
                     uint64_t self)
{
    uint64_t claim = self + t->layer[d + 1];
    t->layer[d + 1] = 0;
    if (row->module) {
        row->layer += claim;
    } else if (d) {
        t->layer[d] += claim;
    } else if (claim) {
        if (p->outside == NONE) {
            uint32_t r = new_row(p, 0);
            if (r == NONE)
                return;
            p->rows[r].name = strdup("(outside nn.Module)");
            p->outside = r;
        }
        p->rows[p->outside].layer += claim;
    }
}

/* A MEMORY instant: the bytes it allocates (a free's < 0, its size its
 * allocation's while that is remembered). */
static int64_t memory_bytes(struct opp_top_agg *l, uint32_t proc, const uint64_t *a)
{
    uint64_t op = a[OPP_COL_MEM_OP], addr = a[OPP_COL_MEM_ADDRESS];
    int64_t b = a[OPP_COL_MEM_BYTES] > INT64_MAX ? INT64_MAX : (int64_t)a[OPP_COL_MEM_BYTES];
    uint32_t s = slot_of(proc, addr, BLOCK_SLOTS);
    if (op == OPP_MEM_ALLOC) {
        l->blocks[s].proc = proc;
        l->blocks[s].addr = addr;
        l->blocks[s].bytes = b;
        return b;
    }
    if (op != OPP_MEM_FREE)
        return 0;
    if (!b && l->blocks[s].proc == proc && l->blocks[s].addr == addr)
        b = l->blocks[s].bytes;
    l->blocks[s].bytes = 0;
    return -b;
}

void opp_top_agg_call(struct opp_top_agg *l, uint32_t proc, uint32_t tid, uint32_t fn,
                      uint32_t depth, uint64_t begin, uint64_t end, uint32_t nargs,
                      const uint64_t *args, int range)
{
    /* a ring's records come in a row: its thread is the last one's */
    struct lthread *t = l->last_t;
    if (!t || t->proc != proc || t->tid != tid) {
        struct lproc *fp = find_proc(l, proc);
        if (!fp || !(t = find_thread(l, proc, tid)))
            return;
    }
    struct lproc *p = t->p;
    if (fn >= p->nfuncs)
        return;
    /* times stay the process's ticks here: ns when a snapshot is taken */
    uint32_t d = depth < DEPTH_MAX ? depth : DEPTH_MAX - 1;
    uint64_t dur = end > begin ? end - begin : 0;
    uint64_t children = opp_call_children(t->child, d, dur, range);
    uint32_t kind = p->f[fn].kind;
    uint32_t r = p->fast[fn];
    if (r == NONE) {
        if ((r = row_of(p, fn, kind, args, nargs)) == NONE)
            return;
        if (p->plain[fn])
            p->fast[fn] = r;
    }
    struct lrow *row = &p->rows[r];
    const uint64_t *a = args;
    uint32_t na = 0, base = OPP_OP_PLAIN; /* what the fast path needs not know */
    if (!p->plain[fn]) {
        na = opp_op_args(kind, &a, nargs);
        base = opp_kind_base(kind);
    }
    if (base == OPP_OP_MEMORY && na >= OPP_COL_MEM_COLS && d) {
        /* an instant inside the call open at depth - 1: its bytes are that
         * call's, not a row of its own (the report's key_averages) */
        t->mem[d] = opp_add_sat(t->mem[d], memory_bytes(l, proc, a));
        return;
    }
    uint64_t name = p->plain[fn] ? 0 : opp_torch_call_name(kind, fn, args, nargs);
    if (d + 1 < DEPTH_MAX - 1 && opp_call_folds(t->kids, d, name, range)) {
        /* its only child is itself: one call (the same row: the same name) */
        const struct opp_call_kids *k = &t->kids[d + 1];
        row->calls--;
        row->total -= k->dur < row->total ? k->dur : row->total;
        row->self -= k->self < row->self ? k->self : row->self;
        children -= k->self < children ? k->self : children;
        /* and its self time, gone up to this call's layer, is this call's now */
        t->layer[d + 1] -= k->self < t->layer[d + 1] ? k->self : t->layer[d + 1];
    }
    uint64_t self = dur > children ? dur - children : 0;
    row->calls++;
    row->total += dur;
    row->self += self;
    opp_call_kid(t->kids, d, name, dur, self, range, base == OPP_OP_MEMORY);
    if (!range)
        to_layer(p, t, row, d, self);
    row = &p->rows[r]; /* the rows may have moved */
    if (!range && t->mem[d + 1]) {
        row->mem = opp_add_sat(row->mem, t->mem[d + 1]);
        t->mem[d + 1] = 0;
    }
    if (!p->plain[fn]) {
        if (base == OPP_OP_MEMORY && na >= OPP_COL_MEM_COLS) { /* outside any operator */
            row->mem = opp_add_sat(row->mem, memory_bytes(l, proc, a));
        } else if (base == OPP_OP_CUDA_API && na > OPP_COL_CUDA_CORR && a[OPP_COL_CUDA_CORR]) {
            uint64_t corr = a[OPP_COL_CUDA_CORR];
            uint32_t s = corr_slot(proc, corr);
            l->corr[s].proc = proc;
            l->corr[s].corr = corr;
            l->corr[s].row = r;
        }
    }
    if (row->step || (t->opt_pending && d < t->opt_depth)) {
        double scale = tick_ns(l, p);
        steps_of(l, p, t, row, d, (uint64_t)((double)end * scale), (uint64_t)((double)dur * scale));
    }
}

void opp_top_agg_gpu(struct opp_top_agg *l, uint32_t proc, const struct opp_gpu_rec *g)
{
    struct lproc *p = find_proc(l, proc);
    if (!p || !p->f)
        return; /* unknown, or ended */
    if (g->type == OPP_GPU_STRING) {
        if (umap_get(&p->strs, g->f[0]) != NONE)
            return;
        if (p->nstr == p->capstr) {
            uint32_t nc = p->capstr ? p->capstr * 2 : 64;
            char **nv = realloc(p->strv, nc * sizeof *nv);
            if (!nv)
                return;
            p->strv = nv;
            p->capstr = nc;
        }
        char *s = malloc(g->slen + 1);
        if (!s)
            return;
        memcpy(s, g->str, g->slen);
        s[g->slen] = 0;
        if (umap_put(&p->strs, g->f[0], p->nstr)) {
            free(s);
            return;
        }
        p->strv[p->nstr++] = s;
        if (opp_profiler_step(s))
            step_string(l, p, g->f[0], s);
        else
            string_named(l, p, g->f[0], s);
        return;
    }
    if (g->type != OPP_GPU_KERNEL && g->type != OPP_GPU_MEMCPY && g->type != OPP_GPU_MEMSET)
        return;
    uint64_t dur =
        g->f[OPP_GF_END] > g->f[OPP_GF_START] ? g->f[OPP_GF_END] - g->f[OPP_GF_START] : 0;
    l->gpu_ns += dur;
    uint64_t corr = g->f[OPP_GF_CORRELATION];
    uint32_t s = corr_slot(proc, corr);
    if (corr && l->corr[s].proc == proc && l->corr[s].corr == corr && l->corr[s].row < p->nrows)
        p->rows[l->corr[s].row].gpu += dur;
}

uint32_t opp_top_agg_rows(const struct opp_top_agg *l)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < l->nprocs; i++)
        for (uint32_t k = 0; k < l->procs[i]->nrows; k++)
            n += !l->procs[i]->rows[k].folded;
    return n;
}

static int by_total(const void *a, const void *b)
{
    const struct opp_top_row *x = a, *y = b;
    return x->total_ns < y->total_ns   ? 1
           : x->total_ns > y->total_ns ? -1
                                       : strcmp(x->name, y->name);
}

int opp_top_agg_snapshot(struct opp_top_agg *l, struct opp_top_snap *s)
{
    out_free(l);
    size_t n = 0;
    for (uint32_t i = 0; i < l->nprocs; i++)
        n += l->procs[i]->nrows;
    s->rows = NULL;
    s->nrows = 0;
    if (n && !(l->out = malloc(n * sizeof *l->out)))
        return -ENOMEM;
    /* once some process has nn.Module layers, every process's time
     * outside them is shown (a DataLoader worker has none: all of its
     * time), so that the layers and it add up to the whole self time */
    int modules = 0;
    for (uint32_t i = 0; i < l->nprocs; i++)
        modules |= l->procs[i]->modules;
    for (uint32_t i = 0; i < l->nprocs; i++) {
        struct lproc *p = l->procs[i];
        double scale = tick_ns(l, p);
        struct opp_top_row *steps = NULL; /* its ProfilerStep#N rows' one row (torch_rules.h) */
        for (uint32_t k = 0; k < p->nrows; k++) {
            struct lrow *row = &p->rows[k];
            if (k == p->outside ? !modules || !row->layer : !row->calls)
                continue;
            if (!p->f && !row->name)
                continue; /* its process ended and its name was lost */
            const char *name = row_name(p, row);
            struct opp_top_row o =
                (struct opp_top_row){.name = name ? opp_torch_row_key(name) : "(name not come yet)",
                                     .lib = k == p->outside ? ""
                                            : row->lib      ? row->lib
                                                            : p->f[row->fn].lib,
                                     .layer_ns = lns_of(&row->layer_ns, row->layer, scale),
                                     .module = k == p->outside ? 2u
                                               : row->module   ? 1u
                                                               : 0u,
                                     .proc = p->proc,
                                     .calls = row->calls,
                                     .self_ns = lns_of(&row->self_ns, row->self, scale),
                                     .total_ns = lns_of(&row->total_ns, row->total, scale),
                                     .gpu_ns = row->gpu,
                                     .mem = row->mem};
            if (name && o.name != name && steps) {
                steps->calls += o.calls;
                steps->self_ns += o.self_ns;
                steps->total_ns += o.total_ns;
                steps->layer_ns += o.layer_ns;
                steps->gpu_ns += o.gpu_ns;
                steps->mem = opp_add_sat(steps->mem, o.mem);
                continue;
            }
            if (name && o.name != name)
                steps = &l->out[s->nrows];
            l->out[s->nrows++] = o;
        }
    }
    if (s->nrows)
        qsort(l->out, s->nrows, sizeof *l->out, by_total);
    s->rows = l->out;
    s->gpu_ns = l->gpu_ns;
    int step = l->steps[STEP_PROFILER] ? STEP_PROFILER : STEP_OPTIMIZER;
    s->step_name = !l->steps[step]         ? ""
                   : step == STEP_PROFILER ? OPP_PROFILER_STEP "N"
                                           : OPP_OPTIMIZER_STEP "N";
    s->steps = l->steps[step];
    uint64_t have = l->nlat[step] < LAT_RING ? l->nlat[step] : LAT_RING;
    s->nlat = (uint32_t)(have < OPP_TOP_LAT_MAX ? have : OPP_TOP_LAT_MAX);
    for (uint32_t i = 0; i < s->nlat; i++)
        s->lat_ns[i] = l->lat[step][(l->nlat[step] - s->nlat + i) % LAT_RING];
    return 0;
}
