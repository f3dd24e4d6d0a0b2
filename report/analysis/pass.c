/* One pass over a full trace, handed to its consumers (pass.h); a
 * summary trace's read is pass_summary.c's. */
#include "analysis/pass.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/extsort.h"
#include "analysis/loader.h"
#include "analysis/pass_internal.h"
#include "analysis/thread_tree.h"
#include "ops.h"
#include "torch_rules.h"

struct pthread {
    struct opp_pass_call *s; /* s[base..n): the calls no later one has enclosed yet */
    size_t base, n, cap;
    uint64_t *late; /* NVTX ranges' begins in arrival order; then the minimum from each on */
    size_t nlate, late_cap, late_next;
    uint64_t last_end;    /* the end of the call that arrived last */
    uint64_t settled_end; /* the latest end of its top-level calls settled */
    int settled_instant;  /* one of those took no time, at settled_end */
    /* the calls its process died inside: the collector writes them last,
     * outermost first, so they are taken in at the end, innermost first */
    struct opp_pass_call *open;
    size_t nopen, open_cap;
    uint32_t seq; /* calls arrived */
    /* the stack cannot nest its calls as the loaded tree does: they are
     * kept whole and built as a loaded thread's is (thread_tree.h) */
    int whole;
    struct opp_pass_call *all;
    size_t nall, all_cap;
    /* the arguments of the calls kept (open, all): each one's offset in argv */
    size_t *open_off, open_off_cap, *all_off, all_off_cap;
    uint64_t *argv;
    size_t nargv, argv_cap;
};

static int fail(struct opp_pass *p, int err)
{
    if (!p->failed)
        p->failed = err;
    return 1;
}

static int cannot(struct opp_pass *p, const char *why)
{
    if (!p->cannot)
        p->cannot = why;
    return 1;
}

/* Thread t's calls cannot be nested as they arrive (out of the order they
 * returned, overlapping without nesting, ties the tree decides by depth):
 * it is kept whole from now on, and what its calls told the consumers
 * this read is wrong, so the read is made again once over. */
static int whole(struct opp_pass *p, struct pthread *t)
{
    t->whole = 1;
    p->again = 1;
    return 0;
}

/* A consumer's or the join's result: 0, or the read stops (rc: -errno;
 * another than -ENOMEM from the join: a temporary file could not be made
 * or written). */
static int check(struct opp_pass *p, int rc, int tmp)
{
    if (!rc)
        return 0;
    if (tmp && rc != -ENOMEM) {
        opp_extsort_no_room(p->why, sizeof p->why, rc);
        return cannot(p, p->why);
    }
    return fail(p, rc < 0 ? -rc : ENOMEM);
}

/* Thread index i's state, made on first sight. */
static struct pthread *thread_at(struct opp_pass *p, uint32_t i)
{
    if (i < p->nth)
        return &p->th[i];
    if (opp_loader_grow_zeroed((void **)&p->th, &p->nth, (size_t)i + 1, sizeof *p->th))
        return NULL;
    return &p->th[i];
}

/* Call x kept until the read's end (its process died inside it, or its
 * thread is kept whole) as (*arr)[(*n)++], its arguments copied: 0 or 1
 * (out of memory). */
static int keep(struct opp_pass *p, struct pthread *t, struct opp_pass_call **arr, size_t *n,
                size_t *cap, size_t **off, size_t *off_cap, const struct opp_pass_call *x)
{
    if (opp_loader_grow((void **)arr, cap, *n + 1, sizeof **arr) ||
        opp_loader_grow((void **)off, off_cap, *n + 1, sizeof **off) ||
        opp_loader_grow((void **)&t->argv, &t->argv_cap, t->nargv + x->nargs + 1, sizeof *t->argv))
        return fail(p, ENOMEM);
    (*off)[*n] = t->nargv;
    if (x->nargs)
        memcpy(t->argv + t->nargv, x->args, x->nargs * sizeof *x->args);
    t->nargv += x->nargs;
    (*arr)[(*n)++] = *x;
    return 0;
}

/* Nothing of ours runs on the thread: the calls no NVTX range still to
 * come can enclose are top-level. */
static void settle(struct opp_pass *p, struct pthread *t, int all)
{
    uint64_t m = !all && t->late_next < t->nlate ? t->late[t->late_next] : UINT64_MAX;
    while (t->base < t->n && (all || t->s[t->base].begin < m)) {
        const struct opp_pass_call *x = &t->s[t->base++];
        if (x->end > t->settled_end) {
            t->settled_end = x->end;
            t->settled_instant = 0;
        }
        if (x->end == t->settled_end && x->begin == x->end)
            t->settled_instant = 1;
        if (p->c->top)
            check(p, p->c->top(p->c->ctx, x), 0);
    }
    opp_pass_stack_settled(t->s, sizeof *t->s, &t->base, &t->n);
}

/* Call x of thread t, which returned after every call before it: it
 * encloses those of the stack that begin within it. */
static int arrive(struct opp_pass *p, struct pthread *t, struct opp_pass_call *x)
{
    if (x->end < t->last_end) /* what came before may be settled already */
        return whole(p, t);
    if (x->begin < t->settled_end)
        return whole(p, t);
    /* a call settled that took no time where x begins: the loaded tree
     * puts x first (the same begin, the longer first) and nests it in x */
    if (x->begin == t->settled_end && t->settled_instant && x->end > x->begin)
        return whole(p, t);
    t->last_end = x->end;
    uint64_t kids = 0;
    unsigned counted = 0;
    uint32_t nkids = 0;
    struct opp_pass_call only = {0};
    while (t->n > t->base && t->s[t->n - 1].begin >= x->begin) {
        const struct opp_pass_call *c = &t->s[--t->n];
        nkids++;
        /* ties thread_tree.c decides by depth: the shallower encloses */
        if (c->depth <= x->depth &&
            (c->begin == x->end || (c->begin == x->begin && c->end == x->end)))
            return whole(p, t);
        if (!opp_fold_counts(c->kind))
            continue; /* torch sums a memory instant into the call, no child */
        counted++;
        kids += c->end - c->begin;
        only = *c;
    }
    /* what is left began before x: it must have ended by then (a partial
     * overlap, or x inside it with the same end, nests otherwise in the
     * loaded tree) */
    if (t->n > t->base && t->s[t->n - 1].end > x->begin)
        return whole(p, t);
    x->kids_ns = kids;
    x->nkids = nkids;
    x->folded = OPP_PASS_NONE;
    /* torch's folding: the child is removed, its children the parent's */
    if (opp_torch_folds(counted, x->kind, x->name, only.kind, only.name)) {
        x->kids_ns = only.kids_ns;
        x->folded = only.seq;
        p->open -= (only.flags & OPP_PASS_OPEN) != 0;
    }
    p->open += (x->flags & OPP_PASS_OPEN) != 0;
    if (p->c->call && check(p, p->c->call(p->c->ctx, x), 0))
        return 1;
    if (opp_loader_grow((void **)&t->s, &t->cap, t->n + 1, sizeof *t->s))
        return fail(p, ENOMEM);
    t->s[t->n] = *x;
    t->s[t->n].args = NULL; /* the reader's, gone after call */
    t->s[t->n++].nargs = 0;
    if (x->depth == 0)
        settle(p, t, 0);
    return p->failed || p->cannot;
}

static int is_late(uint32_t kind, const struct opp_tr_event *e)
{
    return opp_kind_base(kind) == OPP_OP_NVTX && e->end_ns > e->begin_ns;
}

static int on_event(void *ctx, const struct opp_tr_event *te)
{
    struct opp_pass *p = ctx;
    struct opp_tr_event tmp;
    const struct opp_tr_event *e = opp_loader_event_shifted(&p->meta.ld, te, &tmp);
    int64_t i = opp_stream_meta_thread(&p->meta, e->proc, e->tid);
    if (i < 0 || (size_t)i >= p->nth)
        return fail(p, ENOMEM);
    uint32_t ti = (uint32_t)i;
    struct pthread *t = &p->th[ti];
    const struct opp_thread *mt = &p->meta.ld.m->threads[ti];
    const struct opp_process *pr = &p->meta.ld.m->procs[mt->proc];
    if (e->fn >= pr->nfuncs)
        return fail(p, EPROTO); /* the reader checks this: never happens */
    uint32_t kind = pr->funcs[e->fn].kind;
    t->late_next += is_late(kind, e);
    /* field by field: an initializer zeroes the whole call first, which
     * costs a call more here than any other of its fields. Every field is
     * set below: a field added to the struct fails this assert until it
     * is set here too. */
    _Static_assert(sizeof(struct opp_pass_call) == 96, "set every field of opp_pass_call here");
    struct opp_pass_call x;
    x.begin = e->begin_ns;
    x.end = opp_stream_meta_end(&p->meta, ti, e);
    x.kids_ns = 0;
    x.thread = ti;
    x.seq = t->seq++;
    x.name = 0;
    x.kind = kind;
    x.folded = 0;
    x.scope = -1;
    x.depth = (uint16_t)e->depth;
    x.flags = e->flags & OPP_EV_OPEN ? OPP_PASS_OPEN : 0;
    x.fn = e->fn;
    x.nkids = 0;
    x.stack = e->stack;
    x.nargs = e->nargs;
    x.args = e->args;
    x.at = p->at++;
    x.stat = NULL;
    if (p->join) {
        int rc = opp_stream_meta_join(&p->meta, p->join, ti, e, x.seq, x.at);
        if (check(p, rc, 1))
            return 1;
    }
    x.name = opp_loader_event_name(&p->meta.ld, &p->names, mt->proc, e->fn, e->args, e->nargs);
    if (x.name == UINT32_MAX)
        return fail(p, ENOMEM);
    x.scope = opp_op_torch_scope(kind, e->args, e->nargs);
    if (x.scope == OPP_TORCH_SCOPE_USER || x.scope == OPP_TORCH_SCOPE_MODULE)
        x.flags |= OPP_PASS_LABEL;
    if (p->c->read) { /* the files' order: nothing nested, nothing folded */
        x.folded = OPP_PASS_NONE;
        p->open += (x.flags & OPP_PASS_OPEN) != 0;
        return check(p, p->c->read(p->c->ctx, &x), 0);
    }
    if (t->whole)
        return keep(p, t, &t->all, &t->nall, &t->all_cap, &t->all_off, &t->all_off_cap, &x);
    if (x.flags & OPP_PASS_OPEN)
        return keep(p, t, &t->open, &t->nopen, &t->open_cap, &t->open_off, &t->open_off_cap, &x);
    if (t->nopen)
        return whole(p, t);
    return arrive(p, t, &x);
}

/* GPU records: the ops as the consumer keeps them, and external
 * correlations, to the join. */
static int on_gpu(void *ctx, uint32_t proc, const struct opp_gpu_rec *rec)
{
    struct opp_pass *p = ctx;
    const struct opp_process *pr = opp_loader_proc(p->meta.ld.m, proc + p->meta.ld.base);
    if (!pr)
        return fail(p, EPROTO); /* the reader only passes declared processes */
    uint32_t pi = (uint32_t)(pr - p->meta.ld.m->procs);
    if (p->c->record) {
        struct opp_gpu_rec g = *rec;
        if (g.type >= OPP_GPU_KERNEL && g.type <= OPP_GPU_OVERHEAD) { /* memory's end: its start */
            g.f[OPP_GF_START] = opp_loader_shifted(&p->meta.ld, rec->f[OPP_GF_START]);
            g.f[OPP_GF_END] = opp_loader_shifted(&p->meta.ld, rec->f[OPP_GF_END]);
        }
        if (check(p, p->c->record(p->c->ctx, pi, &g), 0))
            return 1;
    }
    if (!p->join)
        return 0;
    if (rec->type == OPP_GPU_EXTCORR)
        return check(p, opp_gpu_join_extcorr(p->join, pi, rec), 1);
    int op =
        rec->type == OPP_GPU_KERNEL || rec->type == OPP_GPU_MEMCPY || rec->type == OPP_GPU_MEMSET;
    if (!op && rec->type != OPP_GPU_MEMORY && rec->type != OPP_GPU_SYNC &&
        rec->type != OPP_GPU_OVERHEAD)
        return 0;
    struct opp_gpu_rec g_ = *rec, *g = &g_;
    if (op) { /* on the first file's clock */
        g->f[OPP_GF_START] = opp_loader_shifted(&p->meta.ld, rec->f[OPP_GF_START]);
        g->f[OPP_GF_END] = opp_loader_shifted(&p->meta.ld, rec->f[OPP_GF_END]);
    }
    memset(p->op, 0, p->c->op_bytes);
    int rc = p->c->op(p->c->ctx, pi, g, p->op);
    if (rc > 0)
        return 0; /* not one the consumer keeps */
    if (check(p, rc, 0))
        return 1;
    return check(p, opp_gpu_join_op(p->join, pi, opp_corr_id(g->f[OPP_GF_CORRELATION]), p->op), 1);
}

/* A PROCESS or THREAD record, to a consumer of the files' order. */
static int on_process(void *ctx, const struct opp_tr_process *tp)
{
    struct opp_pass *p = ctx;
    const struct opp_process *pr = opp_loader_proc(p->meta.ld.m, tp->proc + p->meta.ld.base);
    if (!pr)
        return fail(p, EPROTO); /* the first read declared it */
    return check(p, p->c->process(p->c->ctx, (uint32_t)(pr - p->meta.ld.m->procs), tp), 0);
}

static int on_thread(void *ctx, uint32_t proc, uint32_t tid, const char *name)
{
    struct opp_pass *p = ctx;
    int64_t i = opp_stream_meta_thread(&p->meta, proc, tid);
    if (i < 0)
        return fail(p, EPROTO); /* the first read made it */
    return check(p, p->c->thread(p->c->ctx, (uint32_t)i, name), 0);
}

/* The records a consumer of the files' order takes as they are (rest). */
#define REST(fn, args, call)                                                                       \
    static int on_##fn args                                                                        \
    {                                                                                              \
        struct opp_pass *p = ctx;                                                                  \
        return check(p, p->c->rest->fn call, 0);                                                   \
    }
REST(funcs, (void *ctx, uint32_t proc, uint32_t count, const struct opp_tr_func *f),
     (p->c->ctx, proc, count, f))
REST(info,
     (void *ctx, uint32_t proc, uint32_t count, const char *const *keys, const char *const *values),
     (p->c->ctx, proc, count, keys, values))
REST(dropped, (void *ctx, uint32_t proc, uint32_t tid, uint64_t count, uint32_t why),
     (p->c->ctx, proc, tid, count, why))
REST(process_end, (void *ctx, uint32_t proc, uint32_t how, uint64_t end_ns),
     (p->c->ctx, proc, how, end_ns))
REST(process_status, (void *ctx, uint32_t proc, uint32_t how, uint32_t code),
     (p->c->ctx, proc, how, code))
#undef REST

/* The first read: a call's or GPU op's times (on the first file's
 * clock) into the traces' first and last; 0, a time unknown (a later
 * file's before the first's clock began clamps to it), is no known first. */
static void note_times(struct opp_pass *p, uint64_t begin, uint64_t end)
{
    if (begin < p->first)
        p->first = begin;
    uint64_t known = begin ? begin : end;
    if (known && known < p->first_known)
        p->first_known = known;
    if (end > p->last)
        p->last = end;
}

/* The first read: each thread's NVTX ranges' begins (thread ti). */
static int each_late(void *ctx, uint32_t ti, const struct opp_tr_event *e)
{
    struct opp_pass *p = ctx;
    struct pthread *t = thread_at(p, ti);
    if (!t)
        return fail(p, ENOMEM);
    note_times(p, e->begin_ns, e->end_ns);
    const struct opp_model *m = p->meta.ld.m;
    const struct opp_process *pr = &m->procs[m->threads[ti].proc];
    if (e->fn >= pr->nfuncs || !is_late(pr->funcs[e->fn].kind, e))
        return 0;
    if (opp_loader_grow((void **)&t->late, &t->late_cap, t->nlate + 1, sizeof *t->late))
        return fail(p, ENOMEM);
    t->late[t->nlate++] = e->begin_ns;
    return 0;
}

/* The first read: the GPU ops' starts (kernels, copies, sets, syncs and
 * overhead: the traces' first time takes the earliest). */
static int each_gpu(void *ctx, uint32_t proc, const struct opp_gpu_rec *g)
{
    struct opp_pass *p = ctx;
    (void)proc;
    if (g->type != OPP_GPU_KERNEL && g->type != OPP_GPU_MEMCPY && g->type != OPP_GPU_MEMSET &&
        g->type != OPP_GPU_SYNC && g->type != OPP_GPU_OVERHEAD)
        return 0;
    uint64_t start = opp_loader_shifted(&p->meta.ld, g->f[OPP_GF_START]);
    uint64_t end = opp_loader_shifted(&p->meta.ld, g->f[OPP_GF_END]);
    note_times(p, start, end);
    return 0;
}

/* What stopped a read, in err: 1 (cannot), -1 (failed), else 0. */
static int stopped(struct opp_pass *p, char *err, size_t errlen)
{
    if (p->cannot) {
        snprintf(err, errlen, "%s", p->cannot);
        return 1;
    }
    if (p->failed || p->meta.ld.failed) {
        snprintf(err, errlen, "cannot read %s: %s", p->path,
                 strerror(p->failed ? p->failed : p->meta.ld.failed));
        return -1;
    }
    return 0;
}

int opp_pass_said(int rc, int failed, char *err, size_t errlen)
{
    if (failed == -ENOMEM || failed == -EPROTO) {
        snprintf(err, errlen, "%s", failed == -ENOMEM ? "out of memory" : strerror(EPROTO));
        return -1;
    }
    if (failed) { /* a sort's temporary file */
        opp_extsort_no_room(err, errlen, failed);
        return 1;
    }
    return rc;
}

struct opp_pass *opp_pass_new(const char *const *paths, size_t npaths, char *err, size_t errlen)
{
    struct opp_pass *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->paths = paths;
    p->npaths = npaths;
    p->path = paths[0];
    p->first = p->first_known = UINT64_MAX;
    return p;
}

struct opp_pass *opp_pass_open(const char *const *paths, size_t npaths,
                               enum opp_stream_refused *why_, char *err, size_t errlen)
{
    *why_ = OPP_STREAM_ERROR;
    struct opp_pass *p = opp_pass_new(paths, npaths, err, errlen);
    if (!p)
        return NULL;
    int rc =
        opp_stream_meta_read_many(&p->meta, paths, npaths, each_late, each_gpu, p, err, errlen);
    if (rc > 0 && p->meta.summary) { /* err: its path */
        *why_ = OPP_STREAM_SUMMARY_FILE;
        opp_pass_free(p);
        return NULL;
    }
    int why = stopped(p, err, errlen);
    if (why || rc < 0) {
        *why_ = why <= 0 || rc < 0 ? OPP_STREAM_ERROR : OPP_STREAM_CANNOT;
        opp_pass_free(p);
        return NULL;
    }
    size_t nth = p->meta.ld.m->nthreads; /* those with no calls have a place too */
    if (nth && !thread_at(p, (uint32_t)(nth - 1))) {
        snprintf(err, errlen, "out of memory");
        opp_pass_free(p);
        return NULL;
    }
    /* each thread's ranges: the earliest begin from each arrival on */
    for (size_t i = 0; i < p->nth; i++) {
        struct pthread *t = &p->th[i];
        for (size_t k = t->nlate; k-- > 1;)
            if (t->late[k] < t->late[k - 1])
                t->late[k - 1] = t->late[k];
    }
    return p;
}

struct opp_model *opp_pass_model(const struct opp_pass *p)
{
    return p->meta.ld.m;
}

struct opp_stream_meta *opp_pass_meta(struct opp_pass *p)
{
    return &p->meta;
}

uint64_t opp_pass_first_ns(const struct opp_pass *p)
{
    return p->first == UINT64_MAX ? 0 : p->first;
}

uint64_t opp_pass_first_known_ns(const struct opp_pass *p)
{
    return p->first_known == UINT64_MAX ? 0 : p->first_known;
}

uint64_t opp_pass_last_ns(const struct opp_pass *p)
{
    return p->last;
}

uint64_t opp_pass_unattached(const struct opp_pass *p)
{
    return p->unattached;
}

uint32_t opp_pass_intern(struct opp_pass *p, const char *s)
{
    return opp_loader_intern(&p->meta.ld, s);
}

/* torch's folding of an op into itself (torch_rules.h), as opp_tree_fold
 * asks it; an event's args holds its index in the thread's calls. */
static int folds_torch(const struct opp_event *c, const struct opp_event *parent, unsigned counted,
                       void *ctx)
{
    const struct pthread *t = ctx;
    const struct opp_pass_call *x = &t->all[c->args], *y = &t->all[parent->args];
    return opp_torch_folds(counted, y->kind, y->name, x->kind, x->name);
}

/* A memory instant: torch sums those into the event around them. */
static int memory_instant(const struct opp_event *c, void *ctx)
{
    const struct pthread *t = ctx;
    return !opp_fold_counts(t->all[c->args].kind);
}

/* Call k of a thread kept whole, with kids its children's time, nkids
 * its children. */
static int hand_over(struct opp_pass *p, struct pthread *t, uint32_t k, uint64_t kids,
                     uint32_t nkids)
{
    struct opp_pass_call *x = &t->all[k];
    x->kids_ns = kids;
    x->nkids = nkids;
    x->args = t->argv + t->all_off[k];
    x->folded = OPP_PASS_NONE; /* those folded are gone */
    p->open += (x->flags & OPP_PASS_OPEN) != 0;
    int rc = p->c->call ? check(p, p->c->call(p->c->ctx, x), 0) : 0;
    x->args = NULL; /* top sees none */
    x->nargs = 0;
    return rc;
}

/* A thread kept whole, at the read's end: its tree built and folded as
 * thread_tree.c builds a tree in memory, then each call handed over after its
 * children, then the top-level ones in tree order. */
static int whole_thread(struct opp_pass *p, struct pthread *t)
{
    size_t n = t->nall;
    struct opp_event *ev = calloc(n ? n : 1, sizeof *ev);
    uint64_t *kids = calloc(n ? n : 1, sizeof *kids);
    uint32_t *path = malloc((n ? n : 1) * sizeof *path);
    uint32_t *nkids = calloc(n ? n : 1, sizeof *nkids);
    int rc = ev && kids && path && nkids ? 0 : -ENOMEM;
    for (size_t k = 0; k < n && !rc; k++)
        ev[k] = (struct opp_event){.begin_ns = t->all[k].begin,
                                   .end_ns = t->all[k].end,
                                   .depth = t->all[k].depth,
                                   .args = (uint32_t)k};
    if (!rc && !(rc = opp_tree_build(ev, n)))
        rc = opp_tree_fold(ev, &n, folds_torch, memory_instant, NULL, t);
    for (size_t i = 0; i < n && !rc; i++) {
        if (ev[i].parent == OPP_NO_PARENT)
            continue;
        nkids[ev[i].parent]++;
        if (!memory_instant(&ev[i], t))
            kids[ev[i].parent] += ev[i].end_ns - ev[i].begin_ns;
    }
    /* after its children: the path from the top to the call before, each
     * handed over once the next call is not inside it */
    size_t depth = 0;
    for (size_t i = 0; i <= n && !rc; i++) {
        while (depth && !rc && (i == n || path[depth - 1] != ev[i].parent)) {
            depth--;
            rc = hand_over(p, t, ev[path[depth]].args, kids[path[depth]], nkids[path[depth]]) ? -1
                                                                                              : 0;
        }
        if (i < n)
            path[depth++] = (uint32_t)i;
    }
    for (size_t i = 0; i < n && !rc && p->c->top; i++)
        if (ev[i].parent == OPP_NO_PARENT)
            rc = check(p, p->c->top(p->c->ctx, &t->all[ev[i].args]), 0) ? -1 : 0;
    free(ev);
    free(kids);
    free(path);
    free(nkids);
    return rc == -1 || !rc ? rc : fail(p, -rc);
}

/* One read of the calls; 0, 1 (cannot), -1 (failed): err says why; 2:
 * a thread is kept whole from now on, the read is to be made again. */
static int read_once(struct opp_pass *p, char *err, size_t errlen)
{
    const struct opp_pass_consumer *c = p->c;
    p->reads++;
    p->open = 0;
    p->again = 0;
    p->at = 0;
    for (size_t i = 0; i < p->nth; i++) {
        struct pthread *t = &p->th[i];
        t->base = t->n = t->late_next = t->nopen = t->nall = t->nargv = 0;
        t->seq = 0;
        t->last_end = t->settled_end = 0;
        t->settled_instant = 0;
    }
    opp_gpu_join_free(p->join);
    p->join = NULL;
    const struct opp_model *m = p->meta.ld.m;
    if (c->op && (p->meta.gpu_ops || m->gpu.records || m->gpu.nmem) &&
        !(p->join = opp_gpu_join_new(c->op_bytes)))
        return opp_err_oom(err, errlen);
    const struct opp_tr_visitor *r = c->rest;
    const struct opp_tr_visitor v = {.event = on_event,
                                     .gpu = p->join || c->record ? on_gpu : NULL,
                                     .process = c->process ? on_process : NULL,
                                     .thread = c->thread ? on_thread : NULL,
                                     .funcs = r && r->funcs ? on_funcs : NULL,
                                     .info = r && r->info ? on_info : NULL,
                                     .dropped = r && r->dropped ? on_dropped : NULL,
                                     .process_end = r && r->process_end ? on_process_end : NULL,
                                     .process_status =
                                         r && r->process_status ? on_process_status : NULL};
    if (c->begin)
        c->begin(c->ctx);
    for (size_t i = 0; i < p->npaths; i++) {
        struct opp_tr_summary sum;
        p->path = p->paths[i];
        opp_loader_next_file(&p->meta.ld, i);
        p->meta.ld.shift = p->meta.shift[i];
        int rc = opp_trace_read(p->path, &v, p, &sum, err, errlen);
        int why = stopped(p, err, errlen);
        if (why || rc < 0)
            return why ? why : -1;
    }
    int why;
    if (p->again)
        return 2;
    for (size_t i = 0; i < p->nth && !p->cannot && !p->failed; i++) {
        struct pthread *t = &p->th[i];
        if (t->whole) {
            whole_thread(p, t);
            continue;
        }
        while (t->nopen && !p->cannot && !p->failed && !t->whole) { /* innermost first */
            struct opp_pass_call x = t->open[--t->nopen];
            x.args = t->argv + t->open_off[t->nopen];
            arrive(p, t, &x);
        }
        if (t->whole)
            p->again = 1;
        else if (!p->cannot && !p->failed)
            settle(p, t, 1); /* the thread is over: what is left is top-level */
    }
    if ((why = stopped(p, err, errlen)))
        return why;
    return p->again ? 2 : 0;
}

/* A consumer c with c->also, as one (ctx: c). */
static void tee_begin(void *ctx)
{
    const struct opp_pass_consumer *c = ctx;
    if (c->also->begin)
        c->also->begin(c->also->ctx);
    if (c->begin)
        c->begin(c->ctx);
}

static int tee_call(void *ctx, const struct opp_pass_call *x)
{
    const struct opp_pass_consumer *c = ctx;
    int rc = c->also->call ? c->also->call(c->also->ctx, x) : 0;
    return !rc && c->call ? c->call(c->ctx, x) : rc;
}

static int tee_top(void *ctx, const struct opp_pass_call *x)
{
    const struct opp_pass_consumer *c = ctx;
    int rc = c->also->top ? c->also->top(c->also->ctx, x) : 0;
    return !rc && c->top ? c->top(c->ctx, x) : rc;
}

static int tee_op(void *ctx, uint32_t pi, const struct opp_gpu_rec *r, void *op)
{
    const struct opp_pass_consumer *c = ctx;
    return c->op(c->ctx, pi, r, op);
}

static void tee_owned(void *ctx, const struct opp_gpu_call *owner, const void *op)
{
    const struct opp_pass_consumer *c = ctx;
    c->owned(c->ctx, owner, op);
}

int opp_pass_run(struct opp_pass *p, const struct opp_pass_consumer *c, char *err, size_t errlen)
{
    struct opp_pass_consumer both;
    if (c->also) {
        both = (struct opp_pass_consumer){.ctx = (void *)c,
                                          .begin = tee_begin,
                                          .call = tee_call,
                                          .top = tee_top,
                                          .op_bytes = c->op_bytes,
                                          .op = c->op ? tee_op : NULL,
                                          .owned = c->owned ? tee_owned : NULL};
        c = &both;
    }
    if (p->run)
        return p->run(p, c, err, errlen);
    p->c = c;
    p->failed = 0;
    p->cannot = NULL;
    free(p->op);
    if (!(p->op = malloc(c->op_bytes ? c->op_bytes : 1)))
        return opp_err_oom(err, errlen);
    int rc;
    while ((rc = read_once(p, err, errlen)) == 2)
        ; /* at most once more a thread: a thread kept whole stays so */
    if (rc)
        return rc;
    p->meta.ld.m->open_events = p->open;
    p->unattached = 0;
    if (p->join) {
        rc = opp_gpu_join_run(p->join, c->owned, c->ctx, &p->unattached);
        opp_gpu_join_free(p->join);
        p->join = NULL;
        if (check(p, rc, 1))
            return stopped(p, err, errlen);
    }
    return 0;
}

uint32_t opp_pass_reads(const struct opp_pass *p)
{
    return p->reads;
}

void opp_pass_free(struct opp_pass *p)
{
    if (!p)
        return;
    opp_gpu_join_free(p->join);
    free(p->op);
    for (size_t i = 0; i < p->nth; i++) {
        free(p->th[i].s);
        free(p->th[i].late);
        free(p->th[i].open);
        free(p->th[i].all);
        free(p->th[i].open_off);
        free(p->th[i].all_off);
        free(p->th[i].argv);
    }
    free(p->th);
    opp_loader_name_cache_free(p->names);
    opp_stream_meta_free(&p->meta);
    free(p);
}
