/* Loads a trace into memory (see model.h): a visitor of opp_trace_read that
 * interns names and appends each event to its thread, then the call trees. */
#include "model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* uthash reports running out of memory through this flag instead of exiting;
 * every function that adds to a table declares `int hash_oom = 0`. */
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(elt) (hash_oom = 1)
#include <uthash.h>

#include "tree.h"

struct str_ent {
    uint32_t id;
    UT_hash_handle hh; /* key: the string itself (model->strs[id]) */
};

struct proc_ent {
    uint32_t proc; /* key: serial in the trace */
    uint32_t index;
    UT_hash_handle hh;
};

struct thread_ent {
    uint64_t key; /* proc serial << 32 | tid */
    uint32_t index;
    UT_hash_handle hh;
};

struct opp_model_index {
    struct str_ent *strs;
    struct proc_ent *procs;
    struct thread_ent *threads;
    uint64_t last_key; /* events come in runs of one thread */
    uint32_t last_thread;
    int have_last;
};

struct loader {
    struct opp_model *m;
    size_t procs_cap, threads_cap, strs_cap;
    int failed; /* errno of the first failure, which stops the reader */
};

/* Grow *arr (of elements of size sz) to hold at least need; 0 or -1. */
static int grow(void **arr, size_t *cap, size_t need, size_t sz)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *p = reallocarray(*arr, n, sz);
    if (!p)
        return -1;
    *arr = p;
    *cap = n;
    return 0;
}

/* The id of s, interned; UINT32_MAX when out of memory. */
static uint32_t intern(struct loader *ld, const char *s)
{
    struct opp_model *m = ld->m;
    struct opp_model_index *ix = m->index;
    struct str_ent *e;
    size_t len = strlen(s);
    HASH_FIND(hh, ix->strs, s, len, e);
    if (e)
        return e->id;
    char *copy = strdup(s);
    e = malloc(sizeof *e);
    if (!copy || !e || grow((void **)&m->strs, &ld->strs_cap, m->nstrs + 1u, sizeof *m->strs)) {
        free(copy);
        free(e);
        return UINT32_MAX;
    }
    e->id = m->nstrs;
    m->strs[m->nstrs++] = copy;
    int hash_oom = 0;
    HASH_ADD_KEYPTR(hh, ix->strs, copy, len, e);
    if (hash_oom) {
        free(e);
        return UINT32_MAX; /* copy stays owned by m->strs */
    }
    return e->id;
}

static struct opp_process *find_proc(const struct opp_model *m, uint32_t proc)
{
    struct proc_ent *e;
    HASH_FIND(hh, m->index->procs, &proc, sizeof proc, e);
    return e ? &m->procs[e->index] : NULL;
}

static int fail(struct loader *ld, int err)
{
    if (!ld->failed)
        ld->failed = err;
    return 1; /* stop reading */
}

/* The thread (proc serial, tid), created on first sight; NULL when out of
 * memory or the process is unknown. */
static struct opp_thread *get_thread(struct loader *ld, uint32_t proc, uint32_t tid)
{
    struct opp_model *m = ld->m;
    struct opp_model_index *ix = m->index;
    uint64_t key = (uint64_t)proc << 32 | tid;
    if (ix->have_last && ix->last_key == key)
        return &m->threads[ix->last_thread];
    struct thread_ent *e;
    HASH_FIND(hh, ix->threads, &key, sizeof key, e);
    if (!e) {
        struct opp_process *p = find_proc(m, proc);
        if (!p)
            return NULL;
        char *name = strdup("");
        e = malloc(sizeof *e);
        if (!name || !e ||
            grow((void **)&m->threads, &ld->threads_cap, m->nthreads + 1, sizeof *m->threads)) {
            free(name);
            free(e);
            return NULL;
        }
        e->key = key;
        e->index = (uint32_t)m->nthreads;
        int hash_oom = 0;
        HASH_ADD(hh, ix->threads, key, sizeof key, e);
        if (hash_oom) {
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

static int on_process(void *ctx, const struct opp_tr_process *tp)
{
    struct loader *ld = ctx;
    struct opp_model *m = ld->m;
    if (grow((void **)&m->procs, &ld->procs_cap, m->nprocs + 1, sizeof *m->procs))
        return fail(ld, ENOMEM);
    struct opp_process *p = &m->procs[m->nprocs];
    memset(p, 0, sizeof *p);
    p->proc = tp->proc;
    p->pid = tp->pid;
    p->ppid = tp->ppid;
    p->parent_proc = tp->parent_proc;
    p->clock = tp->clock;
    p->start_ns = tp->start_ns;
    p->start_real_ns = tp->start_real_ns;
    p->exe = strdup(tp->exe);
    p->argv = calloc(tp->argc + 1u, sizeof *p->argv);
    struct proc_ent *e = malloc(sizeof *e);
    /* Counted now so that opp_model_free releases whatever was allocated. */
    m->nprocs++;
    if (!p->exe || !p->argv || !e) {
        free(e);
        return fail(ld, ENOMEM);
    }
    for (; p->argc < tp->argc; p->argc++) {
        p->argv[p->argc] = strdup(tp->argv[p->argc]);
        if (!p->argv[p->argc]) {
            free(e);
            return fail(ld, ENOMEM);
        }
    }
    e->proc = tp->proc;
    e->index = (uint32_t)(m->nprocs - 1);
    int hash_oom = 0;
    HASH_ADD(hh, m->index->procs, proc, sizeof e->proc, e);
    if (hash_oom) {
        free(e);
        return fail(ld, ENOMEM);
    }
    return 0;
}

static int on_funcs(void *ctx, uint32_t proc, uint32_t count, const struct opp_tr_func *f)
{
    struct loader *ld = ctx;
    struct opp_process *p = find_proc(ld->m, proc);
    if (!p)
        return fail(ld, EPROTO); /* the reader only passes declared processes */
    p->funcs = calloc(count ? count : 1, sizeof *p->funcs);
    if (!p->funcs)
        return fail(ld, ENOMEM);
    for (uint32_t i = 0; i < count; i++) {
        p->funcs[i].kind = f[i].kind;
        p->funcs[i].dtype = f[i].dtype;
        p->funcs[i].name = intern(ld, f[i].name);
        p->funcs[i].lib = intern(ld, f[i].lib);
        if (p->funcs[i].name == UINT32_MAX || p->funcs[i].lib == UINT32_MAX)
            return fail(ld, ENOMEM);
        p->nfuncs = i + 1;
    }
    return 0;
}

static int on_thread(void *ctx, uint32_t proc, uint32_t tid, const char *name)
{
    struct loader *ld = ctx;
    struct opp_thread *t = get_thread(ld, proc, tid);
    char *copy = strdup(name);
    if (!t || !copy) {
        free(copy);
        return fail(ld, ENOMEM);
    }
    free(t->name);
    t->name = copy; /* the latest name wins */
    return 0;
}

static int on_event(void *ctx, const struct opp_tr_event *te)
{
    struct loader *ld = ctx;
    struct opp_thread *t = get_thread(ld, te->proc, te->tid);
    if (!t)
        return fail(ld, ENOMEM);
    const struct opp_process *p = &ld->m->procs[t->proc];
    if (te->fn >= p->nfuncs)
        return fail(ld, EPROTO); /* the reader checks this: never happens */
    if (t->nevents >= OPP_NO_PARENT - 1 || t->nargs + te->nargs > UINT32_MAX)
        return fail(ld, EOVERFLOW);
    if (grow((void **)&t->events, &t->cap, t->nevents + 1, sizeof *t->events) ||
        grow((void **)&t->args, &t->args_cap, t->nargs + te->nargs, sizeof *t->args))
        return fail(ld, ENOMEM);
    struct opp_event *e = &t->events[t->nevents++];
    e->begin_ns = te->begin_ns;
    e->end_ns = te->end_ns;
    e->self_ns = 0;
    e->parent = OPP_NO_PARENT;
    e->name = p->funcs[te->fn].name;
    e->fn = te->fn;
    e->args = (uint32_t)t->nargs;
    e->depth = (uint16_t)te->depth;
    e->flags = (uint8_t)te->flags;
    e->nargs = (uint8_t)te->nargs;
    if (te->nargs) {
        memcpy(t->args + t->nargs, te->args, te->nargs * sizeof *te->args);
        t->nargs += te->nargs;
    }
    ld->m->events++;
    return 0;
}

/* DROPPED chunks add up: each counts records lost since the previous one. */
static int on_dropped(void *ctx, uint32_t proc, uint32_t tid, uint64_t count)
{
    struct loader *ld = ctx;
    struct opp_thread *t = get_thread(ld, proc, tid);
    if (!t)
        return fail(ld, ENOMEM);
    t->dropped += count;
    ld->m->dropped += count;
    return 0;
}

static int on_process_end(void *ctx, uint32_t proc, uint32_t how, uint64_t end_ns)
{
    struct loader *ld = ctx;
    struct opp_process *p = find_proc(ld->m, proc);
    if (!p)
        return fail(ld, EPROTO);
    p->end_how = how;
    p->end_ns = end_ns;
    return 0;
}

/* A call the process died inside ends when the process ended, and contains
 * everything its thread did after it began. */
static void close_open_events(struct opp_model *m)
{
    for (size_t i = 0; i < m->nthreads; i++) {
        struct opp_thread *t = &m->threads[i];
        const struct opp_process *p = &m->procs[t->proc];
        uint64_t last = p->end_how ? p->end_ns : 0;
        for (size_t k = 0; k < t->nevents; k++)
            if (t->events[k].end_ns > last)
                last = t->events[k].end_ns;
        for (size_t k = 0; k < t->nevents; k++) {
            struct opp_event *e = &t->events[k];
            if (!(e->flags & OPP_EV_OPEN))
                continue;
            m->open_events++;
            e->end_ns = last > e->begin_ns ? last : e->begin_ns;
        }
    }
}

const char *opp_end_how_name(uint32_t how)
{
    switch (how) {
    case OPP_END_EXITED:
        return "exited";
    case OPP_END_LOST:
        return "lost";
    case OPP_END_RUNNING:
        return "running";
    default:
        return "unknown";
    }
}

struct opp_model *opp_model_load(const char *path, char *err, size_t errlen)
{
    struct opp_model *m = calloc(1, sizeof *m);
    if (m)
        m->index = calloc(1, sizeof *m->index);
    if (!m || !m->index) {
        free(m);
        snprintf(err, errlen, "out of memory");
        errno = ENOMEM;
        return NULL;
    }
    struct loader ld = {.m = m};
    static const struct opp_tr_visitor v = {
        .process = on_process,
        .funcs = on_funcs,
        .thread = on_thread,
        .event = on_event,
        .dropped = on_dropped,
        .process_end = on_process_end,
    };
    if (opp_trace_read(path, &v, &ld, &m->sum, err, errlen) < 0) {
        opp_model_free(m);
        errno = EINVAL;
        return NULL;
    }
    if (ld.failed) {
        snprintf(err, errlen, "cannot load %s: %s", path,
                 ld.failed == EOVERFLOW ? "too many events on one thread" : strerror(ld.failed));
        opp_model_free(m);
        errno = ld.failed;
        return NULL;
    }
    close_open_events(m);
    for (size_t i = 0; i < m->nthreads; i++) {
        struct opp_thread *t = &m->threads[i];
        int rc = opp_tree_build(t->events, t->nevents);
        if (rc) {
            snprintf(err, errlen, "cannot load %s: %s", path, strerror(-rc));
            opp_model_free(m);
            errno = -rc;
            return NULL;
        }
    }
    return m;
}

void opp_model_free(struct opp_model *m)
{
    if (!m)
        return;
    if (m->index) {
        struct str_ent *s, *stmp;
        HASH_ITER(hh, m->index->strs, s, stmp) {
            HASH_DEL(m->index->strs, s);
            free(s);
        }
        struct proc_ent *p, *ptmp;
        HASH_ITER(hh, m->index->procs, p, ptmp) {
            HASH_DEL(m->index->procs, p);
            free(p);
        }
        struct thread_ent *t, *ttmp;
        HASH_ITER(hh, m->index->threads, t, ttmp) {
            HASH_DEL(m->index->threads, t);
            free(t);
        }
        free(m->index);
    }
    for (size_t i = 0; i < m->nprocs; i++) {
        struct opp_process *p = &m->procs[i];
        free(p->exe);
        if (p->argv)
            for (uint32_t k = 0; k < p->argc; k++)
                free(p->argv[k]);
        free(p->argv);
        free(p->funcs);
    }
    free(m->procs);
    for (size_t i = 0; i < m->nthreads; i++) {
        free(m->threads[i].name);
        free(m->threads[i].events);
        free(m->threads[i].args);
    }
    free(m->threads);
    for (uint32_t i = 0; i < m->nstrs; i++)
        free(m->strs[i]);
    free(m->strs);
    free(m);
}
