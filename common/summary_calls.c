/* Summary mode's aggregation (see summary.h). Nodes live in one arena and
 * are found by key in a chained hash; a node's children form a doubly
 * linked list, so moving a placeholder's children under the call that
 * arrived is a walk over what waited, not over the tree. */
#include "summary_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "format.h"
#include "ops.h"
#include "torch_rules.h"
#include "trace.h"
#include "util.h"

/* ---- nodes ---- */

static uint32_t key_hash(const struct node *x)
{
    uint64_t h = opp_sum_mix((uint64_t)x->parent << 32 | x->fn, (uint64_t)x->proc << 32 | x->window);
    for (uint32_t i = 0; i < x->nargs; i++)
        h = opp_sum_mix(h + x->nargs, x->args[i]);
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

void opp_sum_hash_del(struct opp_sum *s, uint32_t id)
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

void opp_sum_node_release(struct opp_sum *s, uint32_t id)
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
void opp_sum_unref(struct opp_sum *s, uint32_t id)
{
    while (id && id < s->nnodes && s->n[id].refs) {
        struct node *x = &s->n[id];
        if (--x->refs || x->state != N_STUB)
            return;
        uint32_t to = x->fwd;
        opp_sum_node_release(s, id);
        id = to;
    }
}

/* The live node a mapped id stands for now (stubs followed). */
uint32_t opp_sum_resolve(const struct opp_sum *s, uint32_t id)
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
        opp_sum_hash_del(s, c);
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
        opp_sum_node_release(s, from);
    }
}

/* ---- processes and threads ---- */

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

/* A correlation id none of whose process's GPU records has been reached
 * yet is still needed (CUPTI hands buffers over late, when full or asked;
 * work queued deep on a GPU ends later). */
static int corr_needed(struct opp_sum *s, const struct ment *e)
{
    struct sproc *p = opp_sum_proc_find(s, (uint32_t)e->a);
    return p && e->b > p->gpu_corr_max;
}

/* A CPU block still allocated in a process still running is still needed
 * (its free needs its size). */
static int block_needed(struct opp_sum *s, const struct ment *e)
{
    return opp_sum_proc_find(s, (uint32_t)e->a) != NULL;
}

struct opp_sum *opp_sum_new(uint32_t max_nodes)
{
    struct opp_sum *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->max_nodes = max_nodes ? max_nodes : 1;
    s->map_max = MAP_CAP_MAX;
    s->nnodes = 1; /* id 0 is NONE */
    if (opp_bmap_init(&s->corr, corr_needed) || opp_bmap_init(&s->ext, NULL) ||
        opp_bmap_init(&s->extc, NULL) || opp_bmap_init(&s->addr, NULL) || rehash(s)) {
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
            opp_sum_node_release(s, t->hold[d]);
    free(t);
}

void opp_sum_proc_free(struct sproc *p)
{
    free(p->steps);
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
        opp_sum_proc_free(p);
    }
    opp_bmap_free(&s->corr);
    opp_bmap_free(&s->ext);
    opp_bmap_free(&s->extc);
    opp_bmap_free(&s->addr);
    opp_bmap_free(&s->cpu);
    free(s);
}

int opp_sum_proc(struct opp_sum *s, uint32_t proc, uint32_t nfuncs,
                 const struct opp_func_desc *funcs)
{
    s->again = NULL; /* the kinds may change */
    struct sproc *p = opp_sum_proc_find(s, proc);
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
    s->again = NULL; /* the next call is on another call path */
    struct sproc *p = opp_sum_proc_find(s, proc);
    struct sthread *t = p ? find_thread(s, proc, tid, 1) : NULL;
    if (!t)
        return p ? -ENOMEM : 0;
    t->window = window;
    p->window = window; /* GPU work that matched no call: the latest */
    return 0;
}

/* ---- CPU memory and torch's folding ---- */

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
    if (!s->cpu.cap && opp_bmap_init(&s->cpu, block_needed))
        return -ENOMEM;
    *out = opp_sum_block_bytes(s, &s->cpu, proc, a[OPP_COL_MEM_OP], a[OPP_COL_MEM_ADDRESS],
                               a[OPP_COL_MEM_BYTES]);
    return 0;
}

/* torch's folding of an op into itself (torch_rules.h: opp_torch_folds;
 * the report does the same to a full trace's calls, opp_tree_fold). The
 * node under hold that is such a child of the call of kind named name, or
 * NONE: one node of one call, the other children memory. */
static uint32_t folded_child(const struct opp_sum *s, const struct sproc *p, uint32_t hold,
                             uint32_t kind, uint64_t name)
{
    uint32_t only = NONE;
    uint64_t calls = 0;
    for (uint32_t c = s->n[hold].first; c; c = s->n[c].next) {
        const struct node *x = &s->n[c];
        if (!opp_fold_counts(p->kinds[x->fn]))
            continue;
        if ((calls += x->count) > 1)
            return NONE; /* not an only child */
        only = c;
    }
    if (!only)
        return NONE;
    const struct node *x = &s->n[only];
    uint32_t xkind = p->kinds[x->fn];
    return opp_torch_folds(calls, kind, name, xkind,
                           opp_torch_call_name(xkind, x->fn, x->args, x->nargs))
               ? only
               : NONE;
}

/* The folded child's call is not counted; what it held goes to its parent. */
static void fold_into(struct opp_sum *s, uint32_t from, uint32_t to)
{
    unlink_child(s, from);
    opp_sum_hash_del(s, from);
    struct node *f = &s->n[from];
    f->count = f->total = f->self = f->open = 0;
    merge_into(s, from, to);
}

/* ---- torch.profiler's steps ---- */

/* The slot of a call's key (opp_op_identity's) that names it by a string,
 * where a step's string may name it (steps are labels and ranges): a torch
 * label's name, an NVTX range's message when it has one and no domain;
 * NULL when none. */
static uint64_t *step_slot(uint32_t kind, uint64_t *key, uint32_t nargs)
{
    const uint64_t *a = key;
    uint32_t na = opp_op_args(kind, &a, nargs), base = opp_kind_base(kind);
    uint64_t *k = key + (a - key);
    if (opp_op_torch_scope(kind, key, nargs) == OPP_TORCH_SCOPE_USER)
        return &k[OPP_COL_TORCH_NAME];
    if (base == OPP_OP_NVTX && na > OPP_COL_NVTX_MSG && k[OPP_COL_NVTX_MSG] &&
        (na <= OPP_COL_NVTX_DOMAIN || !k[OPP_COL_NVTX_DOMAIN]))
        return &k[OPP_COL_NVTX_MSG];
    return NULL;
}

/* Where v (a string id + 1) is in p's set of steps, or goes. */
static uint32_t step_at(const struct sproc *p, uint64_t v)
{
    uint32_t i = opp_sum_mix(v, 0) & (p->steps_cap - 1);
    while (p->steps[i] && p->steps[i] != v)
        i = (i + 1) & (p->steps_cap - 1);
    return i;
}

static int is_step(const struct sproc *p, uint64_t id)
{
    return p->nsteps && p->steps[step_at(p, id + 1)] == id + 1;
}

static int step_add(struct sproc *p, uint64_t id)
{
    if ((p->nsteps + 1) * 2 > p->steps_cap) {
        uint64_t *old = p->steps, *n;
        uint32_t oc = p->steps_cap, nc = oc ? oc * 2 : 64;
        if (!(n = calloc(nc, sizeof *n)))
            return -ENOMEM;
        p->steps = n;
        p->steps_cap = nc;
        for (uint32_t i = 0; i < oc; i++)
            if (old[i])
                p->steps[step_at(p, old[i])] = old[i];
        free(old);
    }
    uint32_t i = step_at(p, id + 1);
    p->nsteps += !p->steps[i];
    p->steps[i] = id + 1;
    return 0;
}

/* Node id, new, of a call whose key has a step_slot that is no step's
 * (yet): the last OPP_SUM_RECENT such are looked at when a step's string
 * comes. */
static void recent_add(struct sproc *p, uint32_t id)
{
    p->recent[p->nrecent++ % OPP_SUM_RECENT] = id;
}

/* Each ProfilerStep#N has a string of its own: keyed by it, a run's steps
 * would be a node (and the nodes under it) a step. The calls a step's
 * string names are keyed by the process's first step's string instead,
 * as the report's table keys them all (opp_torch_row_key: one row). A
 * string that comes after its calls (they are drained from the ring, it
 * comes on the socket, shortly after) moves the node they made, one of
 * the last labels' and ranges' made, to that key, merging it into the
 * steps' node under the same parent. */
int opp_sum_string(struct opp_sum *s, uint32_t proc, uint64_t id, const char *text, uint32_t len)
{
    struct sproc *p = opp_sum_proc_find(s, proc);
    if (!p || !opp_profiler_step_n(text, len) || is_step(p, id))
        return 0;
    if (step_add(p, id))
        return -ENOMEM;
    if (!p->step_name) {
        p->step_name = id + 1;
        return 0;
    }
    uint32_t n = p->nrecent < OPP_SUM_RECENT ? p->nrecent : OPP_SUM_RECENT;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = p->recent[i];
        struct node *x = &s->n[c];
        uint64_t *slot = x->state == N_LIVE && x->proc == proc
                             ? step_slot(p->kinds[x->fn], x->args, x->nargs)
                             : NULL;
        if (!slot || *slot != id)
            continue;
        uint32_t parent = x->parent;
        unlink_child(s, c);
        opp_sum_hash_del(s, c);
        *slot = p->step_name - 1;
        uint32_t e = hash_find(s, parent, x->proc, x->window, x->fn, x->nargs, x->args);
        if (e) {
            merge_into(s, c, e);
            if (s->just == c) /* what the call's GPU work and repeats find */
                s->just = e;
            s->again = NULL;
        } else {
            link_child(s, parent, c);
            hash_add(s, c);
        }
    }
    return 0;
}

/* ---- calls ---- */

/* A call of duration dur whose children took children, counted in x. */
static inline void node_count(struct node *x, uint64_t dur, uint64_t children)
{
    x->count++;
    x->total += dur;
    x->self += dur > children ? dur - children : 0;
}

int opp_sum_call(struct opp_sum *s, uint32_t proc, uint32_t tid, uint32_t fn, uint32_t depth,
                 uint64_t begin, uint64_t end, uint32_t nargs, const uint64_t *args,
                 unsigned flags)
{
    int range = (flags & OPP_SUM_RANGE) != 0, given = s->given;
    struct sproc *p = opp_sum_proc_find(s, proc);
    s->just = NONE;
    s->again = NULL;
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
    uint64_t *slot = step_slot(kind, key, nargs);
    int step = slot && is_step(p, *slot);
    if (step)
        *slot = p->step_name - 1; /* one node of its steps (opp_sum_string) */
    uint64_t dur = end > begin ? end - begin : 0;
    uint64_t children = opp_call_children(t->child, d, dur, range);
    s->calls++;
    int64_t bytes;
    if (cpu_bytes(s, proc, kind, args, nargs, given ? &s->given_bytes : NULL, &bytes))
        return -ENOMEM;
    /* a child folded into this call: its self time is this call's */
    uint64_t name = opp_torch_call_name(kind, fn, key, nargs);
    uint32_t fold = !range && name && t->hold[d] && d + 1 < OPP_SUM_DEPTH_MAX - 1
                        ? folded_child(s, p, t->hold[d], kind, name)
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
        if (slot && !step)
            recent_add(p, id); /* its string may be a step's still to come */
    }
    t->last[d] = s->just = id;
    struct node *x = &s->n[id];
    node_count(x, dur, children);
    x->open += (flags & OPP_SUM_OPEN) != 0;
    x->cpu_mem = opp_add_sat(x->cpu_mem, bytes);
    if (fold)
        fold_into(s, fold, id);
    int moved = !range && t->hold[d] && s->n[t->hold[d]].first;
    if (moved)
        move_children(s, t->hold[d], id);

    /* GPU work finds this node by the call's correlation id, or by the
     * external id the call pushed (not kept where it comes joined) */
    uint64_t corr = 0, ext = 0, gone;
    if (!s->joined) {
        if (opp_kind_base(kind) == OPP_OP_CUDA_API && nargs > OPP_COL_CUDA_CORR)
            corr = args[OPP_COL_CUDA_CORR];
        ext = opp_op_extid(kind, args, nargs);
    }
    if (corr && corr != UINT64_MAX) {
        s->n[id].refs++;
        if (opp_bmap_put(s, &s->corr, proc, corr, id, &gone))
            opp_sum_unref(s, (uint32_t)gone);
    }
    if (ext) {
        s->n[id].refs++;
        if (opp_bmap_put(s, &s->ext, proc, ext, id, &gone))
            opp_sum_unref(s, (uint32_t)gone);
    }

    /* The same call again next (opp_sum_again) finds this call's node,
     * its parent and child[d + 1] as this call left them, and no children
     * (no call came between): it is counted as this one was where this
     * one had no more to it than that. Not an open call, memory (its
     * bytes), one that had children (moved, folded) or one with an id
     * that GPU work finds it by (each call its own). A range is counted
     * alike: opp_call_children's range branch, and it moves nothing. */
    if (!(flags & OPP_SUM_OPEN) && opp_kind_base(kind) != OPP_OP_MEMORY && !fold && !moved &&
        !corr && !ext) {
        s->again = t;
        s->again_d = d;
        s->again_range = range;
    }
    return 0;
}

int opp_sum_again(struct opp_sum *s, uint64_t begin, uint64_t end)
{
    struct sthread *t = s->again;
    if (!t)
        return 0;
    uint64_t dur = end > begin ? end - begin : 0;
    node_count(&s->n[s->just], dur, opp_call_children(t->child, s->again_d, dur, s->again_range));
    s->calls++;
    return 1;
}

void opp_sum_thread_end(struct opp_sum *s, uint32_t proc, uint32_t tid)
{
    struct sproc *p = opp_sum_proc_find(s, proc);
    s->again = NULL;
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
