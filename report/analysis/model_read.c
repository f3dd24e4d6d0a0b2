/* The trace reader's callbacks for processes, their labels and function
 * tables, threads and summary nodes: each node appended to its process's
 * summary thread (loader.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model_read.h"
#include "info.h"

/* The thread (proc serial, tid), created on first sight; NULL when out of
 * memory or the process is unknown. */
static struct opp_thread *get_thread(struct opp_loader *ld, uint32_t proc, uint32_t tid)
{
    struct opp_model *m = ld->m;
    struct opp_model_index *ix = m->index;
    uint64_t key = (uint64_t)proc << 32 | tid;
    if (ix->have_last && ix->last_key == key)
        return &m->threads[ix->last_thread];
    struct thread_ent *e;
    HASH_FIND(hh, ix->threads, &key, sizeof key, e);
    if (!e) {
        struct opp_process *p = opp_loader_proc(m, proc);
        if (!p)
            return NULL;
        char *name = strdup("");
        e = malloc(sizeof *e);
        if (!name || !e ||
            opp_loader_grow((void **)&m->threads, &ld->threads_cap, m->nthreads + 1,
                            sizeof *m->threads)) {
            free(name);
            free(e);
            return NULL;
        }
        e->key = key;
        e->index = (uint32_t)m->nthreads;
        if (OPP_HASH_ADD(ix->threads, key, sizeof key, e)) {
            free(name);
            free(e);
            return NULL;
        }
        struct opp_thread *t = &m->threads[m->nthreads++];
        memset(t, 0, sizeof *t);
        t->proc = (uint32_t)(p - m->procs);
        t->tid = tid;
        t->name = name;
    }
    ix->have_last = 1;
    ix->last_key = key;
    ix->last_thread = e->index;
    return &m->threads[e->index];
}

int64_t opp_loader_thread_find(struct opp_loader *ld, uint32_t proc, uint32_t tid)
{
    struct opp_thread *t = get_thread(ld, proc + ld->base, tid);
    return t ? t - ld->m->threads : -1;
}

int opp_loader_on_process(void *ctx, const struct opp_tr_process *tp)
{
    struct opp_loader *ld = ctx;
    struct opp_model *m = ld->m;
    if (!ld->have_shift) { /* the file's first process pairs its two clocks */
        int64_t off = opp_clock_offset(tp->start_real_ns, tp->start_ns);
        if (!ld->have_ref) {
            ld->ref = off;
            ld->have_ref = 1;
        }
        ld->shift = opp_clock_shift_of(off, ld->ref);
        ld->have_shift = 1;
    }
    if (opp_loader_grow((void **)&m->procs, &ld->procs_cap, m->nprocs + 1, sizeof *m->procs))
        return opp_loader_fail(ld, ENOMEM);
    struct opp_process *p = &m->procs[m->nprocs];
    memset(p, 0, sizeof *p);
    p->proc = tp->proc + ld->base;
    p->pid = tp->pid;
    p->ppid = tp->ppid;
    p->parent_proc = tp->parent_proc && tp->parent_proc != UINT32_MAX ? tp->parent_proc + ld->base
                                                                     : tp->parent_proc;
    p->clock = tp->clock;
    p->start_ns = opp_loader_shifted(ld, tp->start_ns);
    p->start_real_ns = tp->start_real_ns;
    p->rank = p->world_size = p->local_rank = -1;
    p->exe = strdup(tp->exe);
    p->argv = calloc(tp->argc + 1u, sizeof *p->argv);
    struct proc_ent *e = malloc(sizeof *e);
    /* Counted now so that opp_model_free releases whatever was allocated. */
    m->nprocs++;
    if (!p->exe || !p->argv || !e) {
        free(e);
        return opp_loader_fail(ld, ENOMEM);
    }
    for (; p->argc < tp->argc; p->argc++) {
        p->argv[p->argc] = strdup(tp->argv[p->argc]);
        if (!p->argv[p->argc]) {
            free(e);
            return opp_loader_fail(ld, ENOMEM);
        }
    }
    e->proc = p->proc;
    e->index = (uint32_t)(m->nprocs - 1);
    if (OPP_HASH_ADD(m->index->procs, proc, sizeof e->proc, e)) {
        free(e);
        return opp_loader_fail(ld, ENOMEM);
    }
    return 0;
}

int opp_loader_on_info(void *ctx, uint32_t proc, uint32_t count, const char *const *keys,
                   const char *const *values)
{
    struct opp_loader *ld = ctx;
    struct opp_process *p = opp_loader_proc(ld->m, proc + ld->base);
    if (!p || p->ninfo)
        return 0; /* one set per process instance: the first */
    p->info_keys = calloc(count + 1u, sizeof *p->info_keys);
    p->info_values = calloc(count + 1u, sizeof *p->info_values);
    if (!p->info_keys || !p->info_values)
        return opp_loader_fail(ld, ENOMEM);
    for (; p->ninfo < count; p->ninfo++) {
        p->info_keys[p->ninfo] = strdup(keys[p->ninfo]);
        p->info_values[p->ninfo] = strdup(values[p->ninfo]);
        if (!p->info_keys[p->ninfo] || !p->info_values[p->ninfo]) {
            p->ninfo++; /* freed with the model */
            return opp_loader_fail(ld, ENOMEM);
        }
    }
    static const char *const rank[] = OPP_INFO_RANK_KEYS, *const world[] = OPP_INFO_WORLD_KEYS,
                             *const local[] = OPP_INFO_LOCAL_KEYS;
    p->rank = opp_info_number(count, keys, values, rank);
    p->world_size = opp_info_number(count, keys, values, world);
    p->local_rank = opp_info_number(count, keys, values, local);
    return 0;
}

int opp_loader_on_funcs(void *ctx, uint32_t proc, uint32_t count, const struct opp_tr_func *f)
{
    struct opp_loader *ld = ctx;
    struct opp_process *p = opp_loader_proc(ld->m, proc + ld->base);
    if (!p)
        return opp_loader_fail(ld, EPROTO); /* the reader only passes declared processes */
    p->funcs = calloc(count ? count : 1, sizeof *p->funcs);
    if (!p->funcs)
        return opp_loader_fail(ld, ENOMEM);
    for (uint32_t i = 0; i < count; i++) {
        p->funcs[i].kind = f[i].kind;
        p->funcs[i].dtype = f[i].dtype;
        p->funcs[i].name = opp_loader_intern(ld, f[i].name);
        p->funcs[i].lib = opp_loader_intern(ld, f[i].lib);
        if (p->funcs[i].name == UINT32_MAX || p->funcs[i].lib == UINT32_MAX)
            return opp_loader_fail(ld, ENOMEM);
        p->nfuncs = i + 1;
    }
    return 0;
}

int opp_loader_on_thread(void *ctx, uint32_t proc, uint32_t tid, const char *name)
{
    struct opp_loader *ld = ctx;
    struct opp_thread *t = get_thread(ld, proc + ld->base, tid);
    char *copy = strdup(name);
    if (!t || !copy) {
        free(copy);
        return opp_loader_fail(ld, ENOMEM);
    }
    free(t->name);
    t->name = copy; /* the latest name wins */
    return 0;
}

/* A summary node: an event of its process's summary thread (tid 0), in
 * the order written (parents first), standing for its calls. */
int opp_loader_on_snode(void *ctx, uint32_t proc, const struct opp_tr_snode *n)
{
    struct opp_loader *ld = ctx;
    struct opp_thread *t = get_thread(ld, proc + ld->base, 0);
    if (!t)
        return opp_loader_fail(ld, ENOMEM);
    const struct opp_process *p = &ld->m->procs[t->proc];
    if (n->fn >= p->nfuncs || n->serial != t->nevents + 1 || (t->nevents && !t->stat))
        return opp_loader_fail(ld, EPROTO); /* the reader checks the order: never happens */
    if (t->nevents >= OPP_NO_PARENT - 1 || t->nargs + n->nargs > UINT32_MAX)
        return opp_loader_fail(ld, EOVERFLOW);
    size_t cap = t->cap;
    if (opp_loader_grow((void **)&t->events, &t->cap, t->nevents + 1, sizeof *t->events) ||
        opp_loader_grow((void **)&t->args, &t->args_cap, t->nargs + n->nargs, sizeof *t->args))
        return opp_loader_fail(ld, ENOMEM);
    if (!t->stat || t->cap != cap) {
        struct opp_sum_stat *st = reallocarray(t->stat, t->cap, sizeof *st);
        if (!st)
            return opp_loader_fail(ld, ENOMEM);
        t->stat = st;
    }
    struct opp_event *e = &t->events[t->nevents];
    e->begin_ns = 0;
    e->end_ns = n->total_ns;
    e->self_ns = n->self_ns;
    e->parent = n->parent ? n->parent - 1 : OPP_NO_PARENT;
    e->name = p->funcs[n->fn].name;
    e->fn = n->fn;
    e->args = (uint32_t)t->nargs;
    e->depth = n->parent ? (uint16_t)(t->events[n->parent - 1].depth + 1) : 0;
    e->flags = 0;
    e->nargs = (uint8_t)n->nargs;
    e->stack = 0;
    if (n->nargs) {
        memcpy(t->args + t->nargs, n->args, n->nargs * sizeof *n->args);
        t->nargs += n->nargs;
    }
    t->stat[t->nevents++] = (struct opp_sum_stat){n->count, n->open, n->window, n->self_cuda_ns,
                                                  n->self_mem, n->cpu_mem};
    ld->m->events += n->count;
    ld->m->open_events += n->open;
    ld->m->summary = 1;
    return 0;
}

/* DROPPED chunks add up: each counts records lost since the previous one
 * (a summary's own, at its node bound, those of no thread; those a signal
 * handler's interruption lost, apart too). */
int opp_loader_on_dropped(void *ctx, uint32_t proc, uint32_t tid, uint64_t count, uint32_t why)
{
    struct opp_loader *ld = ctx;
    if (why == OPP_DROP_INTERRUPTED)
        ld->m->interrupted += count;
    if (tid == OPP_DROPPED_SUMMARY) {
        ld->m->sum_dropped += count;
        ld->m->dropped += count;
        return 0;
    }
    struct opp_thread *t = get_thread(ld, proc + ld->base, tid);
    if (!t)
        return opp_loader_fail(ld, ENOMEM);
    t->dropped += count;
    if (why == OPP_DROP_INTERRUPTED)
        t->interrupted += count;
    ld->m->dropped += count;
    return 0;
}

int opp_loader_on_process_end(void *ctx, uint32_t proc, uint32_t how, uint64_t end_ns)
{
    struct opp_loader *ld = ctx;
    struct opp_process *p = opp_loader_proc(ld->m, proc + ld->base);
    if (!p)
        return opp_loader_fail(ld, EPROTO);
    p->end_how = how;
    p->end_ns = opp_loader_shifted(ld, end_ns);
    ld->m->procs_cut += how == OPP_END_RUNNING;
    return 0;
}

int opp_loader_on_process_status(void *ctx, uint32_t proc, uint32_t how, uint32_t code)
{
    struct opp_loader *ld = ctx;
    struct opp_process *p = opp_loader_proc(ld->m, proc + ld->base);
    if (!p)
        return opp_loader_fail(ld, EPROTO);
    p->exit_how = how;
    p->exit_code = code;
    return 0;
}

/* A process as opp_loader_parents looks them up: by file and pid, then
 * the order they connected in. */
struct pid_at {
    uint64_t key; /* file << 32 | pid */
    uint32_t proc;
};

static int cmp_pid_at(const void *pa, const void *pb)
{
    const struct pid_at *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->proc > b->proc) - (a->proc < b->proc);
}

int opp_loader_parents(struct opp_model *m)
{
    struct pid_at *v = malloc((m->nprocs ? m->nprocs : 1) * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < m->nprocs; i++)
        v[i] = (struct pid_at){(uint64_t)(m->procs[i].proc >> 24) << 32 | m->procs[i].pid,
                               m->procs[i].proc};
    qsort(v, m->nprocs, sizeof *v, cmp_pid_at);
    for (size_t i = 0; i < m->nprocs; i++) {
        struct opp_process *c = &m->procs[i];
        if (opp_loader_proc(m, c->parent_proc)) /* the collector knew it */
            continue;
        struct pid_at want = {(uint64_t)(c->proc >> 24) << 32 | c->ppid, c->proc + 1};
        size_t k = OPP_PARTITION_POINT(m->nprocs, j, cmp_pid_at(&v[j], &want) < 0);
        for (; k < m->nprocs && v[k].key == want.key; k++) {
            const struct opp_process *p = opp_loader_proc(m, v[k].proc);
            /* it started first (a fork child's start is its fork), and is
             * not a child of c's that took the pid again */
            if (p->start_ns <= c->start_ns && p->parent_proc != c->proc) {
                c->parent_proc = p->proc;
                break;
            }
        }
    }
    free(v);
    return 0;
}
