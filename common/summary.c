/* Over 600 lines: one aggregator whose arena, hash and per-thread waiting lists are private to it. */
/* Summary mode's aggregation (see summary.h). Nodes live in one arena and
 * are found by key in a chained hash; a node's children form a doubly
 * linked list, so moving a placeholder's children under the call that
 * arrived is a walk over what waited, not over the tree. */
#include "summary.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "format.h"
#include "ops.h"
#include "trace.h"
#include "util.h"

#define NONE 0u         /* node id 0 is never used */
#define MAP_CAP (1u << 18) /* entries per map at first */
#define MAP_CAP_MAX (1u << 22) /* the correlation map grows to this while GPU records lag */

struct node {
    uint32_t parent, proc, window, fn;
    uint32_t first, next, prev; /* children; siblings */
    uint32_t hnext, hash;
    uint32_t refs;  /* map entries and stubs that point here */
    uint32_t fwd;   /* a stub: merged into this node */
    uint8_t nargs;
    uint8_t state;  /* N_FREE, N_LIVE, N_HOLD (a placeholder or a root), N_STUB */
    uint64_t *args;
    uint64_t count, total, self, open, self_cuda;
    int64_t self_mem;
    int64_t cpu_mem; /* MEMORY nodes: bytes allocated minus freed */
};
enum { N_FREE = 0, N_LIVE, N_HOLD, N_STUB };

struct sthread {
    uint32_t proc, tid, window;
    uint32_t hold[OPP_SUM_DEPTH_MAX];      /* placeholder of the call in flight at depth d */
    uint32_t last[OPP_SUM_DEPTH_MAX];      /* the node the last call at depth d went to */
    uint64_t child[OPP_SUM_DEPTH_MAX + 1]; /* durations of depth d calls since the last
                                              call at depth d - 1 */
    uint64_t folded; /* calls folded into a same-named parent */
    struct sthread *next;
};

struct grow_row { /* a GPU op row */
    uint32_t window, type, name, kind, src, dst, device, stream;
    uint64_t count, dur, bytes;
};

struct sproc {
    uint32_t proc, window, nfuncs, root;
    uint32_t *kinds;
    struct grow_row *rows;
    size_t nrows, rows_cap;
    uint64_t dropped;
    uint64_t gpu_corr_max; /* the highest correlation id its GPU records have carried */
    struct sproc *next;
};

/* A bounded map of (a, b) -> v: the oldest entry goes when it is full. */
struct ment {
    uint64_t a, b, v;
    uint32_t hnext;
    uint8_t used;
};
struct bmap {
    struct ment *e; /* cap entries, used as a ring */
    uint32_t *heads;
    uint32_t cap;  /* a power of two */
    uint32_t next; /* the slot the next entry takes (the oldest when full) */
    uint32_t used; /* entries in it */
};

struct opp_sum {
    struct node *n;
    uint32_t nnodes, cap, max_nodes, live;
    uint32_t free_head; /* freed ids, chained through .next */
    uint32_t *heads;
    uint32_t nheads; /* a power of two */
    struct sthread *threads;
    struct sproc *procs;
    struct sthread *last_t; /* the last looked up: a ring's records come in a row */
    struct sproc *last_p;
    struct bmap corr;   /* (proc, corr) -> node of the CUDA call */
    struct bmap ext;    /* (proc, external id) -> node of the library call */
    struct bmap extc;   /* (proc, corr) -> external id */
    struct bmap addr;   /* (proc, address) -> bytes allocated */
    struct bmap cpu;    /* (proc, address) -> CPU bytes allocated (made at the first) */
    uint64_t calls, dropped, unattached;
    uint64_t lost; /* entries still needed that the maps' bound made go */
    uint32_t just;  /* the node of the call opp_sum_call was last given, or NONE */
    int given;      /* the next MEMORY call's bytes are given_bytes (opp_sum_given_bytes) */
    int64_t given_bytes;
    int joined;     /* GPU work comes with its call (opp_sum_op_add): ids are not kept */
};

/* ---- bounded maps ---- */

static uint32_t mix(uint64_t a, uint64_t b)
{
    uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    return (uint32_t)h;
}

static int bmap_alloc(struct bmap *m, uint32_t cap)
{
    m->e = calloc(cap, sizeof *m->e);
    m->heads = malloc(cap * sizeof *m->heads);
    if (!m->e || !m->heads) {
        free(m->e);
        free(m->heads);
        return -1;
    }
    memset(m->heads, 0xff, cap * sizeof *m->heads);
    m->cap = cap;
    m->next = 0;
    m->used = 0;
    return 0;
}

static int bmap_init(struct bmap *m) { return bmap_alloc(m, MAP_CAP); }

static void bmap_free(struct bmap *m)
{
    free(m->e);
    free(m->heads);
}

static struct ment *bmap_find(struct bmap *m, uint64_t a, uint64_t b)
{
    for (uint32_t i = m->heads[mix(a, b) & (m->cap - 1)]; i != UINT32_MAX; i = m->e[i].hnext)
        if (m->e[i].a == a && m->e[i].b == b)
            return &m->e[i];
    return NULL;
}

static void bmap_unlink(struct bmap *m, uint32_t i)
{
    uint32_t *p = &m->heads[mix(m->e[i].a, m->e[i].b) & (m->cap - 1)];
    while (*p != i)
        p = &m->e[*p].hnext;
    *p = m->e[i].hnext;
    m->e[i].used = 0;
    m->used--;
}

static void unref(struct opp_sum *s, uint32_t id);
static struct sproc *find_proc(struct opp_sum *s, uint32_t proc);

/* The entries packed oldest first into cap slots (the ring goes on after
 * them): the same room when at most half is used (the rest were holes
 * left by deletions), else twice. 0 or -1 (out of memory: the map is as
 * it was). */
static int bmap_repack(struct bmap *m)
{
    struct bmap g;
    if (bmap_alloc(&g, m->used <= m->cap / 2 ? m->cap : m->cap * 2))
        return -1;
    for (uint32_t k = 0; k < m->cap; k++) {
        const struct ment *o = &m->e[(m->next + k) & (m->cap - 1)];
        if (!o->used)
            continue;
        uint32_t h = mix(o->a, o->b) & (g.cap - 1);
        g.e[g.next] = (struct ment){o->a, o->b, o->v, g.heads[h], 1};
        g.heads[h] = g.next++;
        g.used++;
    }
    bmap_free(m);
    *m = g;
    return 0;
}

/* Whether the map's oldest entry is still needed, so the map is repacked
 * (or grows) rather than lose it: a CPU block still allocated in a process
 * still running (its free needs its size); a correlation id none of whose
 * process's GPU records has been reached yet (CUPTI hands buffers over
 * late, when full or asked; work queued deep on a GPU ends later). */
static int needed(struct opp_sum *s, const struct bmap *m, const struct ment *e)
{
    if (!e->used || (m != &s->cpu && m != &s->corr))
        return 0;
    struct sproc *p = find_proc(s, (uint32_t)e->a);
    return p && (m == &s->cpu || e->b > p->gpu_corr_max);
}

static int still_needed(struct opp_sum *s, const struct bmap *m, const struct ment *e)
{
    return m->cap < MAP_CAP_MAX && needed(s, m, e);
}

/* Insert or replace; an evicted or replaced value that is a node id is
 * released when nodes is set. The map is repacked (or grows) rather than
 * lose an entry still needed. */
static void bmap_put(struct opp_sum *s, struct bmap *m, uint64_t a, uint64_t b, uint64_t v,
                     int nodes)
{
    struct ment *e = bmap_find(m, a, b);
    if (e) {
        if (nodes)
            unref(s, (uint32_t)e->v);
        e->v = v;
        return;
    }
    if (still_needed(s, m, &m->e[m->next]))
        bmap_repack(m); /* out of memory: the oldest goes */
    uint32_t i = m->next;
    m->next = (m->next + 1) & (m->cap - 1);
    s->lost += needed(s, m, &m->e[i]); /* the map is as large as it grows */
    if (m->e[i].used) {
        if (nodes)
            unref(s, (uint32_t)m->e[i].v);
        bmap_unlink(m, i);
    }
    uint32_t h = mix(a, b) & (m->cap - 1);
    m->e[i] = (struct ment){a, b, v, m->heads[h], 1};
    m->heads[h] = i;
    m->used++;
}

static void bmap_del(struct opp_sum *s, struct bmap *m, struct ment *e, int nodes)
{
    if (nodes)
        unref(s, (uint32_t)e->v);
    bmap_unlink(m, (uint32_t)(e - m->e));
}

/* ---- nodes ---- */

static uint32_t key_hash(const struct node *x)
{
    uint64_t h = mix((uint64_t)x->parent << 32 | x->fn, (uint64_t)x->proc << 32 | x->window);
    for (uint32_t i = 0; i < x->nargs; i++)
        h = mix(h + x->nargs, x->args[i]);
    return (uint32_t)h;
}

static int key_eq(const struct node *a, uint32_t parent, uint32_t proc, uint32_t window,
                  uint32_t fn, uint32_t nargs, const uint64_t *args)
{
    if (a->state != N_LIVE || a->parent != parent || a->fn != fn || a->proc != proc ||
        a->window != window || a->nargs != nargs)
        return 0;
    for (uint32_t i = 0; i < nargs; i++)
        if (a->args[i] != args[i])
            return 0;
    return 1;
}

static int rehash(struct opp_sum *s)
{
    uint32_t nh = s->nheads ? s->nheads * 2 : 1024;
    uint32_t *h = malloc(nh * sizeof *h);
    if (!h)
        return -1;
    memset(h, 0, nh * sizeof *h);
    for (uint32_t id = 1; id < s->nnodes; id++) {
        struct node *x = &s->n[id];
        if (x->state != N_LIVE)
            continue;
        x->hnext = h[x->hash & (nh - 1)];
        h[x->hash & (nh - 1)] = id;
    }
    free(s->heads);
    s->heads = h;
    s->nheads = nh;
    return 0;
}

static void hash_add(struct opp_sum *s, uint32_t id)
{
    struct node *x = &s->n[id];
    x->hash = key_hash(x);
    uint32_t b = x->hash & (s->nheads - 1);
    x->hnext = s->heads[b];
    s->heads[b] = id;
}

static void hash_del(struct opp_sum *s, uint32_t id)
{
    uint32_t *p = &s->heads[s->n[id].hash & (s->nheads - 1)];
    while (*p != id)
        p = &s->n[*p].hnext;
    *p = s->n[id].hnext;
}

static uint32_t hash_find(const struct opp_sum *s, uint32_t parent, uint32_t proc,
                          uint32_t window, uint32_t fn, uint32_t nargs, const uint64_t *args)
{
    struct node k = {.parent = parent, .proc = proc, .window = window, .fn = fn,
                     .nargs = (uint8_t)nargs, .args = (uint64_t *)args};
    uint32_t h = key_hash(&k);
    for (uint32_t id = s->heads[h & (s->nheads - 1)]; id; id = s->n[id].hnext)
        if (s->n[id].hash == h && key_eq(&s->n[id], parent, proc, window, fn, nargs, args))
            return id;
    return NONE;
}

static void link_child(struct opp_sum *s, uint32_t parent, uint32_t id)
{
    struct node *x = &s->n[id];
    x->parent = parent;
    x->prev = NONE;
    x->next = s->n[parent].first;
    if (x->next)
        s->n[x->next].prev = id;
    s->n[parent].first = id;
}

static void unlink_child(struct opp_sum *s, uint32_t id)
{
    struct node *x = &s->n[id];
    if (x->prev)
        s->n[x->prev].next = x->next;
    else
        s->n[x->parent].first = x->next;
    if (x->next)
        s->n[x->next].prev = x->prev;
    x->next = x->prev = NONE;
}

/* A fresh node (zeroed, state set); NONE when out of memory or past the
 * bound (holders are always allowed: they are few). */
static uint32_t node_new(struct opp_sum *s, uint8_t state, uint32_t nargs)
{
    if (state == N_LIVE && s->live >= s->max_nodes)
        return NONE;
    if ((s->live + 1) * 2 > s->nheads && rehash(s)) {
        /* a longer chain is slower, not wrong */
    }
    uint64_t *args = NULL;
    if (nargs && !(args = malloc(nargs * sizeof *args)))
        return NONE;
    uint32_t id = s->free_head;
    if (id) {
        s->free_head = s->n[id].next;
    } else {
        if (s->nnodes >= s->cap) {
            uint32_t nc = s->cap ? s->cap * 2 : 1024;
            struct node *nn = realloc(s->n, (size_t)nc * sizeof *nn);
            if (!nn || nc < s->cap) {
                free(args);
                return NONE;
            }
            s->n = nn;
            s->cap = nc;
        }
        id = s->nnodes++;
    }
    s->n[id] = (struct node){.state = state, .nargs = (uint8_t)nargs, .args = args};
    if (state == N_LIVE)
        s->live++;
    return id;
}

static void node_release(struct opp_sum *s, uint32_t id)
{
    struct node *x = &s->n[id];
    if (x->state == N_LIVE)
        s->live--;
    free(x->args);
    *x = (struct node){.next = s->free_head};
    s->free_head = id;
}

/* A map entry or stub let go of id: a stub nobody points at is freed (and
 * lets go of what it forwards to). */
static void unref(struct opp_sum *s, uint32_t id)
{
    while (id && id < s->nnodes && s->n[id].refs) {
        struct node *x = &s->n[id];
        if (--x->refs || x->state != N_STUB)
            return;
        uint32_t to = x->fwd;
        node_release(s, id);
        id = to;
    }
}

/* The live node a mapped id stands for now (stubs followed). */
static uint32_t resolve(const struct opp_sum *s, uint32_t id)
{
    while (id && id < s->nnodes && s->n[id].state == N_STUB)
        id = s->n[id].fwd;
    return id && id < s->nnodes && s->n[id].state != N_FREE ? id : NONE;
}

static void merge_into(struct opp_sum *s, uint32_t from, uint32_t to);

/* Every child of from moves under to, merging with a child of the same
 * key that is already there. */
static void move_children(struct opp_sum *s, uint32_t from, uint32_t to)
{
    uint32_t c;
    while ((c = s->n[from].first) != NONE) {
        unlink_child(s, c);
        hash_del(s, c);
        struct node *x = &s->n[c];
        uint32_t e = hash_find(s, to, x->proc, x->window, x->fn, x->nargs, x->args);
        if (e) {
            merge_into(s, c, e);
        } else {
            link_child(s, to, c);
            hash_add(s, c);
        }
    }
}

/* from (out of the hash and of every list) adds its counts to to and is
 * gone: freed, or a stub while map entries point at it. */
static void merge_into(struct opp_sum *s, uint32_t from, uint32_t to)
{
    struct node *f = &s->n[from], *t = &s->n[to];
    t->count += f->count;
    t->total += f->total;
    t->self += f->self;
    t->open += f->open;
    t->self_cuda += f->self_cuda;
    t->self_mem = opp_add_sat(t->self_mem, f->self_mem);
    t->cpu_mem = opp_add_sat(t->cpu_mem, f->cpu_mem);
    move_children(s, from, to);
    f = &s->n[from];
    if (f->refs) {
        s->live--;
        f->state = N_STUB;
        f->fwd = to;
        free(f->args);
        f->args = NULL;
        s->n[to].refs++;
    } else {
        node_release(s, from);
    }
}

/* ---- processes and threads ---- */

static struct sproc *find_proc(struct opp_sum *s, uint32_t proc)
{
    if (s->last_p && s->last_p->proc == proc)
        return s->last_p;
    for (struct sproc *p = s->procs; p; p = p->next)
        if (p->proc == proc)
            return s->last_p = p;
    return NULL;
}

static struct sthread *find_thread(struct opp_sum *s, uint32_t proc, uint32_t tid, int make)
{
    if (s->last_t && s->last_t->proc == proc && s->last_t->tid == tid)
        return s->last_t;
    for (struct sthread *t = s->threads; t; t = t->next)
        if (t->proc == proc && t->tid == tid)
            return s->last_t = t;
    if (!make)
        return NULL;
    struct sthread *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->proc = proc;
    t->tid = tid;
    t->next = s->threads;
    s->threads = t;
    return t;
}

void opp_sum_threads(const struct opp_sum *s, uint32_t proc,
                     void (*fn)(void *ctx, uint32_t tid, uint64_t folded), void *ctx)
{
    for (const struct sthread *t = s->threads; t; t = t->next)
        if (t->proc == proc)
            fn(ctx, t->tid, t->folded);
}

struct opp_sum *opp_sum_new(uint32_t max_nodes)
{
    struct opp_sum *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->max_nodes = max_nodes ? max_nodes : 1;
    s->nnodes = 1; /* id 0 is NONE */
    if (bmap_init(&s->corr) || bmap_init(&s->ext) || bmap_init(&s->extc) ||
        bmap_init(&s->addr) || rehash(s)) {
        opp_sum_free(s);
        return NULL;
    }
    return s;
}

static void thread_free(struct opp_sum *s, struct sthread *t)
{
    if (s->last_t == t)
        s->last_t = NULL;
    for (uint32_t d = 0; d < OPP_SUM_DEPTH_MAX; d++)
        if (t->hold[d])
            node_release(s, t->hold[d]);
    free(t);
}

static void proc_free(struct sproc *p)
{
    free(p->kinds);
    free(p->rows);
    free(p);
}

void opp_sum_free(struct opp_sum *s)
{
    if (!s)
        return;
    for (uint32_t id = 1; id < s->nnodes; id++)
        free(s->n[id].args);
    free(s->n);
    free(s->heads);
    while (s->threads) {
        struct sthread *t = s->threads;
        s->threads = t->next;
        free(t);
    }
    while (s->procs) {
        struct sproc *p = s->procs;
        s->procs = p->next;
        proc_free(p);
    }
    bmap_free(&s->corr);
    bmap_free(&s->ext);
    bmap_free(&s->extc);
    bmap_free(&s->addr);
    bmap_free(&s->cpu);
    free(s);
}

int opp_sum_proc(struct opp_sum *s, uint32_t proc, uint32_t nfuncs,
                 const struct opp_func_desc *funcs)
{
    struct sproc *p = find_proc(s, proc);
    if (!p) {
        if (!(p = calloc(1, sizeof *p)))
            return -ENOMEM;
        p->root = node_new(s, N_HOLD, 0);
        if (!p->root) {
            free(p);
            return -ENOMEM;
        }
        p->proc = proc;
        p->next = s->procs;
        s->procs = p;
    }
    uint32_t *k = malloc((nfuncs ? nfuncs : 1) * sizeof *k);
    if (!k)
        return -ENOMEM;
    for (uint32_t i = 0; i < nfuncs; i++)
        k[i] = funcs[i].kind;
    free(p->kinds);
    p->kinds = k;
    p->nfuncs = nfuncs;
    return 0;
}

int opp_sum_window(struct opp_sum *s, uint32_t proc, uint32_t tid, uint32_t window)
{
    struct sproc *p = find_proc(s, proc);
    struct sthread *t = p ? find_thread(s, proc, tid, 1) : NULL;
    if (!t)
        return p ? -ENOMEM : 0;
    t->window = window;
    p->window = window; /* GPU work that matched no call: the latest */
    return 0;
}

/* ---- memory blocks, CPU memory and torch's folding ---- */

/* An allocation (op OPP_MEM_ALLOC) or free (OPP_MEM_FREE) of the block at
 * addr, in m's map of the live blocks of each process: + bytes allocated,
 * - bytes freed (a free without a size takes its allocation's), 0 for any
 * other op. CPU and device memory alike. */
static int64_t block_bytes(struct opp_sum *s, struct bmap *m, uint32_t proc, uint64_t op,
                           uint64_t addr, uint64_t size)
{
    int64_t b = size > INT64_MAX ? INT64_MAX : (int64_t)size;
    if (op == OPP_MEM_ALLOC) {
        bmap_put(s, m, proc, addr, (uint64_t)b, 0);
        return b;
    }
    if (op != OPP_MEM_FREE)
        return 0;
    struct ment *e = bmap_find(m, proc, addr);
    if (e) {
        if (!b)
            b = (int64_t)e->v;
        bmap_del(s, m, e, 0);
    }
    return -b;
}

/* A MEMORY call's bytes (*out: *given when given, else as block_bytes; 0
 * for anything else), as the report gives a full trace's (cpu_memory.c).
 * 0 or -ENOMEM. */
static int cpu_bytes(struct opp_sum *s, uint32_t proc, uint32_t kind, const uint64_t *args,
                     uint32_t nargs, const int64_t *given, int64_t *out)
{
    const uint64_t *a = args;
    *out = 0;
    if (opp_kind_base(kind) != OPP_OP_MEMORY || opp_op_args(kind, &a, nargs) < OPP_COL_MEM_COLS)
        return 0;
    if (given) {
        *out = *given;
        return 0;
    }
    if (!s->cpu.cap && bmap_init(&s->cpu))
        return -ENOMEM;
    *out = block_bytes(s, &s->cpu, proc, a[OPP_COL_MEM_OP], a[OPP_COL_MEM_ADDRESS],
                       a[OPP_COL_MEM_BYTES]);
    return 0;
}

/* torch.profiler drops an operator that is the only child (memory aside)
 * of an operator of the same name, its children becoming the parent's
 * (_remove_dup_nodes; the report does the same to a full trace's calls,
 * opp_tree_fold). The node under hold that is such a child of the call
 * named name, or NONE: one node of one call, the other children memory. */
static uint32_t folded_child(const struct opp_sum *s, const struct sproc *p, uint32_t hold,
                             uint64_t name)
{
    uint32_t only = NONE;
    uint64_t calls = 0;
    for (uint32_t c = s->n[hold].first; c; c = s->n[c].next) {
        const struct node *x = &s->n[c];
        if (opp_kind_base(p->kinds[x->fn]) == OPP_OP_MEMORY)
            continue;
        if ((calls += x->count) > 1)
            return NONE;
        only = c;
    }
    if (!only)
        return NONE;
    const struct node *x = &s->n[only];
    return opp_op_torch_name(p->kinds[x->fn], x->fn, x->args, x->nargs) == name ? only : NONE;
}

/* The folded child's call is not counted; what it held goes to its parent. */
static void fold_into(struct opp_sum *s, uint32_t from, uint32_t to)
{
    unlink_child(s, from);
    hash_del(s, from);
    struct node *f = &s->n[from];
    f->count = f->total = f->self = f->open = 0;
    merge_into(s, from, to);
}

/* ---- calls ---- */

int opp_sum_call(struct opp_sum *s, uint32_t proc, uint32_t tid, uint32_t fn, uint32_t depth,
                 uint64_t begin, uint64_t end, uint32_t nargs, const uint64_t *args,
                 unsigned flags)
{
    int range = (flags & OPP_SUM_RANGE) != 0, given = s->given;
    struct sproc *p = find_proc(s, proc);
    s->just = NONE;
    s->given = 0;
    if (!p || fn >= p->nfuncs)
        return 0; /* the collector checked both: not reached */
    struct sthread *t = find_thread(s, proc, tid, 1);
    if (!t)
        return -ENOMEM;
    if (nargs > OPP_MAX_ARGS)
        nargs = OPP_MAX_ARGS;
    uint32_t d = depth < OPP_SUM_DEPTH_MAX ? depth : OPP_SUM_DEPTH_MAX - 1;
    uint32_t parent;
    if (!d) {
        parent = p->root;
    } else {
        if (!t->hold[d - 1] && !(t->hold[d - 1] = node_new(s, N_HOLD, 0)))
            return -ENOMEM;
        parent = t->hold[d - 1];
    }
    uint32_t kind = p->kinds[fn];
    uint64_t key[OPP_MAX_ARGS];
    opp_op_identity(kind, args, nargs, key);
    uint64_t dur = end > begin ? end - begin : 0;
    uint64_t children = opp_call_children(t->child, d, dur, range);
    s->calls++;
    int64_t bytes;
    if (cpu_bytes(s, proc, kind, args, nargs, given ? &s->given_bytes : NULL, &bytes))
        return -ENOMEM;
    /* a child folded into this call: its self time is this call's */
    uint64_t name = opp_op_torch_name(kind, fn, key, nargs);
    uint32_t fold = !range && name && t->hold[d] && d + 1 < OPP_SUM_DEPTH_MAX - 1
                        ? folded_child(s, p, t->hold[d], name)
                        : NONE; /* not where depths were clamped: siblings there */
    if (fold)
        children = children > s->n[fold].self ? children - s->n[fold].self : 0;

    uint32_t id = t->last[d];
    if (!id || id >= s->nnodes || !key_eq(&s->n[id], parent, proc, t->window, fn, nargs, key))
        id = hash_find(s, parent, proc, t->window, fn, nargs, key);
    if (!id) {
        id = node_new(s, N_LIVE, nargs);
        if (!id) {
            s->dropped++;
            p->dropped++;
            /* its children wait for the next call at this depth */
            return s->live >= s->max_nodes ? 0 : -ENOMEM;
        }
        struct node *x = &s->n[id];
        x->proc = proc;
        x->window = t->window;
        x->fn = fn;
        if (nargs)
            memcpy(x->args, key, nargs * sizeof *key);
        link_child(s, parent, id);
        hash_add(s, id);
    }
    t->last[d] = s->just = id;
    struct node *x = &s->n[id];
    x->count++;
    x->total += dur;
    x->self += dur > children ? dur - children : 0;
    x->open += (flags & OPP_SUM_OPEN) != 0;
    x->cpu_mem = opp_add_sat(x->cpu_mem, bytes);
    if (fold) {
        fold_into(s, fold, id);
        t->folded++;
    }
    if (!range && t->hold[d] && s->n[t->hold[d]].first)
        move_children(s, t->hold[d], id);

    /* GPU work finds this node by the call's correlation id, or by the
     * external id the call pushed */
    if (s->joined)
        return 0;
    uint64_t corr = opp_kind_base(kind) == OPP_OP_CUDA_API && nargs > OPP_COL_CUDA_CORR
                        ? args[OPP_COL_CUDA_CORR] : 0;
    if (corr && corr != UINT64_MAX) {
        s->n[id].refs++;
        bmap_put(s, &s->corr, proc, corr, id, 1);
    }
    uint64_t ext = opp_op_extid(kind, args, nargs);
    if (ext) {
        s->n[id].refs++;
        bmap_put(s, &s->ext, proc, ext, id, 1);
    }
    return 0;
}

void opp_sum_thread_end(struct opp_sum *s, uint32_t proc, uint32_t tid)
{
    struct sproc *p = find_proc(s, proc);
    struct sthread **pp = &s->threads;
    while (*pp && !((*pp)->proc == proc && (*pp)->tid == tid))
        pp = &(*pp)->next;
    struct sthread *t = *pp;
    if (!t)
        return;
    for (uint32_t d = OPP_SUM_DEPTH_MAX; d-- > 0;)
        if (t->hold[d] && p)
            move_children(s, t->hold[d], p->root);
    *pp = t->next;
    thread_free(s, t);
}

/* ---- GPU records ---- */

static uint32_t gpu_node(struct opp_sum *s, uint32_t proc, uint64_t corr)
{
    if (!corr)
        return NONE;
    struct ment *e = bmap_find(&s->corr, proc, corr);
    uint32_t id = e ? resolve(s, (uint32_t)e->v) : NONE;
    if (!id) {
        struct ment *x = bmap_find(&s->extc, proc, corr);
        struct ment *n = x ? bmap_find(&s->ext, proc, x->v) : NULL;
        id = n ? resolve(s, (uint32_t)n->v) : NONE;
    }
    if (!id)
        s->unattached++;
    return id;
}

static int gpu_row(struct sproc *p, const struct grow_row *k, uint64_t dur, uint64_t bytes)
{
    for (size_t i = 0; i < p->nrows; i++) {
        struct grow_row *r = &p->rows[i];
        if (r->window == k->window && r->type == k->type && r->name == k->name &&
            r->kind == k->kind && r->src == k->src && r->dst == k->dst &&
            r->device == k->device && r->stream == k->stream) {
            r->count++;
            r->dur += dur;
            r->bytes += bytes;
            return 0;
        }
    }
    if (p->nrows == p->rows_cap) {
        size_t nc = p->rows_cap ? p->rows_cap * 2 : 16;
        struct grow_row *nr = realloc(p->rows, nc * sizeof *nr);
        if (!nr)
            return -ENOMEM;
        p->rows = nr;
        p->rows_cap = nc;
    }
    struct grow_row *r = &p->rows[p->nrows++];
    *r = *k;
    r->count = 1;
    r->dur = dur;
    r->bytes = bytes;
    return 0;
}

static uint32_t u32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

int opp_sum_gpu_keeps(uint32_t type)
{
    return type < OPP_GPU_KERNEL || type > OPP_GPU_EXTCORR;
}

int opp_sum_op_of(struct opp_sum *s, uint32_t proc, const struct opp_gpu_rec *g,
                  struct opp_sum_op *op)
{
    struct sproc *p = find_proc(s, proc);
    if (opp_sum_gpu_keeps(g->type) || g->type == OPP_GPU_EXTCORR)
        return 0;
    const uint64_t *f = g->f;
    /* How far the device's work has come back: kernels, copies and sets
     * (memory, sync and overhead records come at call time) */
    if (p && (g->type == OPP_GPU_KERNEL || g->type == OPP_GPU_MEMCPY || g->type == OPP_GPU_MEMSET) &&
        f[OPP_GF_CORRELATION] != UINT64_MAX && f[OPP_GF_CORRELATION] > p->gpu_corr_max)
        p->gpu_corr_max = f[OPP_GF_CORRELATION];
    *op = (struct opp_sum_op){.type = g->type};
    if (g->type == OPP_GPU_MEMORY) {
        op->mem = block_bytes(s, &s->addr, proc, f[OPP_GF_M_OP], f[OPP_GF_M_ADDRESS],
                              f[OPP_GF_M_BYTES]);
        return 1;
    }
    op->dur = f[OPP_GF_END] > f[OPP_GF_START] ? f[OPP_GF_END] - f[OPP_GF_START] : 0;
    op->device = u32(f[OPP_GF_DEVICE]);
    op->stream = u32(f[OPP_GF_STREAM]);
    if (g->type == OPP_GPU_KERNEL) {
        op->name = u32(f[OPP_GF_K_NAME]);
    } else if (g->type == OPP_GPU_MEMCPY) {
        op->bytes = f[OPP_GF_C_BYTES];
        op->kind = u32(f[OPP_GF_C_KIND]);
        op->src = u32(f[OPP_GF_C_SRC_KIND]);
        op->dst = u32(f[OPP_GF_C_DST_KIND]);
    } else if (g->type == OPP_GPU_MEMSET) {
        op->bytes = f[OPP_GF_S_BYTES];
        op->kind = u32(f[OPP_GF_S_MEM_KIND]);
    } else if (g->type == OPP_GPU_SYNC) {
        op->kind = u32(f[OPP_GF_Y_TYPE]);
    } else {
        op->kind = u32(f[OPP_GF_O_KIND]);
    }
    return 1;
}

/* op added up, owned by node id (NONE: by no call). */
static int op_add(struct opp_sum *s, struct sproc *p, uint32_t id, const struct opp_sum_op *op)
{
    if (op->type == OPP_GPU_MEMORY) {
        if (id)
            s->n[id].self_mem = opp_add_sat(s->n[id].self_mem, op->mem);
        return 0;
    }
    if (id && (op->type == OPP_GPU_KERNEL || op->type == OPP_GPU_MEMCPY ||
               op->type == OPP_GPU_MEMSET))
        s->n[id].self_cuda += op->dur;
    struct grow_row k = {.window = id ? s->n[id].window : p->window, .type = op->type,
                         .name = op->name, .kind = op->kind, .src = op->src, .dst = op->dst,
                         .device = op->device, .stream = op->stream};
    return gpu_row(p, &k, op->dur, op->bytes) ? -ENOMEM : 0;
}

void opp_sum_joined(struct opp_sum *s)
{
    s->joined = 1;
}

void opp_sum_given_bytes(struct opp_sum *s, int64_t bytes)
{
    s->given = 1;
    s->given_bytes = bytes;
}

int opp_sum_op_add(struct opp_sum *s, uint32_t proc, const struct opp_sum_op *op, int owned)
{
    struct sproc *p = find_proc(s, proc);
    return p ? op_add(s, p, owned ? s->just : NONE, op) : 0;
}

int opp_sum_gpu(struct opp_sum *s, uint32_t proc, const struct opp_gpu_rec *g)
{
    struct sproc *p = find_proc(s, proc);
    if (!p)
        return 0;
    if (g->type == OPP_GPU_EXTCORR) {
        const uint64_t *f = g->f;
        if (f[OPP_GF_X_KIND] == OPP_EXTCORR_KIND && f[OPP_GF_X_CORRELATION])
            bmap_put(s, &s->extc, proc, f[OPP_GF_X_CORRELATION], f[OPP_GF_X_EXTERNAL], 0);
        return 1;
    }
    struct opp_sum_op op;
    if (!opp_sum_op_of(s, proc, g, &op))
        return 0;
    uint32_t id = g->type == OPP_GPU_OVERHEAD ? NONE : gpu_node(s, proc, g->f[OPP_GF_CORRELATION]);
    return op_add(s, p, id, &op) ? -ENOMEM : 1;
}

/* ---- writing ---- */

#define NODE_FIXED (4u * 4u + 7u * 8u)

static int flush(struct opp_tw *w, struct opp_wbuf *b, uint32_t proc, uint32_t *count,
                 uint32_t first)
{
    if (!*count)
        return 0;
    memcpy(b->p + 4, count, 4);
    memcpy(b->p + 8, &first, 4);
    int rc = opp_tw_chunk(w, OPP_CHUNK_SUMMARY, b->p, (uint32_t)b->len);
    b->len = 0;
    opp_put_u32(b, proc);
    opp_put_u32(b, 0);
    opp_put_u32(b, 0);
    opp_put_u32(b, 0);
    *count = 0;
    return rc;
}

int opp_sum_write(struct opp_sum *s, uint32_t proc, struct opp_tw *w)
{
    struct sproc *p = find_proc(s, proc);
    if (!p)
        return 0;
    for (struct sthread *t = s->threads, *nx; t; t = nx) {
        nx = t->next;
        if (t->proc == proc)
            opp_sum_thread_end(s, proc, t->tid);
    }
    size_t cap = 1u << 20;
    uint8_t *mem = malloc(cap);
    /* serial[id]: the node's number in the file, its parent's first */
    uint32_t *serial = calloc(s->nnodes, sizeof *serial);
    uint32_t *stack = malloc((size_t)s->nnodes * sizeof *stack);
    int rc = 0;
    if (!mem || !serial || !stack) {
        rc = -ENOMEM;
        goto out;
    }
    struct opp_wbuf b;
    opp_wbuf_init(&b, mem, cap);
    opp_put_u32(&b, proc);
    opp_put_u32(&b, 0);
    opp_put_u32(&b, 0);
    opp_put_u32(&b, 0);
    uint32_t count = 0, next = 1, first = 1;
    size_t sp = 0;
    for (uint32_t c = s->n[p->root].first; c; c = s->n[c].next)
        stack[sp++] = c;
    while (sp) {
        uint32_t id = stack[--sp];
        struct node *x = &s->n[id];
        if (b.len + NODE_FIXED + 8u * x->nargs > cap && (rc = flush(w, &b, proc, &count, first)))
            goto out;
        if (!count)
            first = next;
        serial[id] = next++;
        opp_put_u32(&b, x->parent == p->root ? 0 : serial[x->parent]);
        opp_put_u32(&b, x->window);
        opp_put_u32(&b, x->fn);
        opp_put_u32(&b, x->nargs);
        opp_put_u64(&b, x->count);
        opp_put_u64(&b, x->total);
        opp_put_u64(&b, x->self);
        opp_put_u64(&b, x->open);
        opp_put_u64(&b, x->self_cuda);
        opp_put_u64(&b, (uint64_t)x->self_mem);
        opp_put_u64(&b, (uint64_t)x->cpu_mem);
        for (uint32_t i = 0; i < x->nargs; i++)
            opp_put_u64(&b, x->args[i]);
        count++;
        for (uint32_t c = x->first; c; c = s->n[c].next)
            stack[sp++] = c;
    }
    if ((rc = flush(w, &b, proc, &count, first)))
        goto out;
    /* GPU rows, as many chunks as they need */
    for (size_t i = 0; i < p->nrows;) {
        b.len = 0;
        opp_put_u32(&b, proc);
        opp_put_u32(&b, 0);
        uint32_t n = 0;
        for (; i < p->nrows && b.len + 8u * 4u + 3u * 8u <= cap; i++, n++) {
            const struct grow_row *r = &p->rows[i];
            opp_put_u32(&b, r->window);
            opp_put_u32(&b, r->type);
            opp_put_u32(&b, r->name);
            opp_put_u32(&b, r->kind);
            opp_put_u32(&b, r->src);
            opp_put_u32(&b, r->dst);
            opp_put_u32(&b, r->device);
            opp_put_u32(&b, r->stream);
            opp_put_u64(&b, r->count);
            opp_put_u64(&b, r->dur);
            opp_put_u64(&b, r->bytes);
        }
        memcpy(b.p + 4, &n, 4);
        if ((rc = opp_tw_chunk(w, OPP_CHUNK_SUMMARY_GPU, b.p, (uint32_t)b.len)))
            goto out;
    }
    if (p->dropped && (rc = opp_tw_dropped(w, proc, 0, p->dropped)))
        goto out;
out:
    free(mem);
    free(serial);
    free(stack);
    /* forget the process: its nodes go (map entries keep stubs alive; a
     * stub of a forgotten node forwards to nothing) */
    for (uint32_t id = 1; id < s->nnodes; id++) {
        struct node *x = &s->n[id];
        if (x->state != N_LIVE || x->proc != proc)
            continue;
        hash_del(s, id);
        if (x->refs) {
            s->live--;
            x->state = N_STUB;
            x->fwd = NONE;
            x->first = NONE;
            free(x->args);
            x->args = NULL;
        } else {
            node_release(s, id);
        }
    }
    node_release(s, p->root);
    struct sproc **pp = &s->procs;
    while (*pp != p)
        pp = &(*pp)->next;
    *pp = p->next;
    if (s->last_p == p)
        s->last_p = NULL;
    proc_free(p);
    return rc;
}

void opp_sum_stats(const struct opp_sum *s, struct opp_sum_stats *out)
{
    out->calls = s->calls;
    out->nodes = s->live;
    out->dropped = s->dropped;
    out->unattached = s->unattached;
    out->lost = s->lost;
    out->map_slots = (uint64_t)s->corr.cap + s->ext.cap + s->extc.cap + s->addr.cap + s->cpu.cap;
}
