/* key_averages (see aggregate.h): one hash lookup per event, then a sort. */
#ifndef _GNU_SOURCE /* qsort_r */
#define _GNU_SOURCE
#endif
#include "aggregate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(elt) (hash_oom = 1)
#include <uthash.h>

static const struct {
    const char *name;
    enum opp_sort_key key;
} sort_keys[] = {
    {"self_cpu_time_total", OPP_SORT_SELF_CPU_TIME_TOTAL},
    {"cpu_time_total", OPP_SORT_CPU_TIME_TOTAL},
    {"cpu_time", OPP_SORT_CPU_TIME},
    {"count", OPP_SORT_COUNT},
    {"flops", OPP_SORT_FLOPS},
    {"self_cuda_time_total", OPP_SORT_SELF_CUDA_TIME_TOTAL},
    {"cuda_time_total", OPP_SORT_CUDA_TIME_TOTAL},
    {"cuda_time", OPP_SORT_CUDA_TIME},
    {"self_cuda_memory_usage", OPP_SORT_SELF_CUDA_MEMORY_USAGE},
    {"cuda_memory_usage", OPP_SORT_CUDA_MEMORY_USAGE},
};

int opp_sort_key_parse(const char *name, enum opp_sort_key *out)
{
    for (size_t i = 0; i < sizeof sort_keys / sizeof sort_keys[0]; i++)
        if (!strcmp(name, sort_keys[i].name)) {
            *out = sort_keys[i].key;
            return 0;
        }
    return -EINVAL;
}

const char *opp_sort_key_list(void)
{
    return "self_cpu_time_total, cpu_time_total, cpu_time, count, flops, self_cuda_time_total, "
           "cuda_time_total, cuda_time, self_cuda_memory_usage, cuda_memory_usage";
}

const char *opp_device_type_name(uint32_t t)
{
    return t == OPP_DEVICE_CUDA ? "CUDA" : "CPU";
}

/* A row's identity: the name, and the shapes when grouping by them. Zeroed
 * before it is filled, so that it can be hashed as bytes. */
struct group_key {
    uint32_t name;
    uint32_t device_type;
    int32_t n;
    int32_t rank[OPP_SHAPES_MAX];
    int64_t dim[OPP_SHAPES_MAX][OPP_RANK_MAX];
};

struct group {
    struct group_key key;
    size_t row;
    UT_hash_handle hh;
};

static void make_key(struct group_key *k, uint32_t name, uint32_t device_type,
                     const struct opp_shapes *s)
{
    memset(k, 0, sizeof *k);
    k->name = name;
    k->device_type = device_type;
    if (!s)
        return;
    k->n = s->n;
    for (int i = 0; i < s->n; i++) {
        k->rank[i] = s->rank[i];
        for (int j = 0; j < s->rank[i]; j++)
            k->dim[i][j] = s->dim[i][j];
    }
}

static int cmp_double_desc(double a, double b)
{
    return a > b ? -1 : a < b;
}

double opp_row_metric(const struct opp_row *r, enum opp_sort_key key)
{
    switch (key) {
    case OPP_SORT_SELF_CPU_TIME_TOTAL:
        return (double)r->self_cpu_time_total_ns;
    case OPP_SORT_CPU_TIME_TOTAL:
        return (double)r->cpu_time_total_ns;
    case OPP_SORT_CPU_TIME:
        return opp_row_avg_ns(r);
    case OPP_SORT_COUNT:
        return (double)r->count;
    case OPP_SORT_FLOPS:
        return (double)r->flops;
    case OPP_SORT_SELF_CUDA_TIME_TOTAL:
        return (double)r->self_cuda_time_total_ns;
    case OPP_SORT_CUDA_TIME_TOTAL:
        return (double)r->cuda_time_total_ns;
    case OPP_SORT_CUDA_TIME:
        return opp_row_cuda_avg_ns(r);
    case OPP_SORT_SELF_CUDA_MEMORY_USAGE:
        return (double)r->self_cuda_memory_usage;
    case OPP_SORT_CUDA_MEMORY_USAGE:
        return (double)r->cuda_memory_usage;
    }
    return 0;
}

static int cmp_shapes(const struct opp_shapes *a, const struct opp_shapes *b)
{
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    for (int i = 0; i < a->n; i++) {
        if (a->rank[i] != b->rank[i])
            return a->rank[i] < b->rank[i] ? -1 : 1;
        for (int j = 0; j < a->rank[i]; j++)
            if (a->dim[i][j] != b->dim[i][j])
                return a->dim[i][j] < b->dim[i][j] ? -1 : 1;
    }
    return 0;
}

/* Descending by the sort key; ties by name, then shapes, ascending. */
static int cmp_rows(const void *pa, const void *pb, void *ctx)
{
    const struct opp_row *a = pa, *b = pb;
    enum opp_sort_key key = *(const enum opp_sort_key *)ctx;
    int c = cmp_double_desc(opp_row_metric(a, key), opp_row_metric(b, key));
    if (!c)
        c = strcmp(a->key, b->key);
    if (!c && a->device_type != b->device_type)
        c = a->device_type < b->device_type ? -1 : 1;
    return c ? c : cmp_shapes(&a->shapes, &b->shapes);
}

static int thread_selected(const struct opp_model *m, const struct opp_thread *t,
                           const struct opp_agg_opts *o)
{
    const struct opp_process *p = opp_thread_process(m, t);
    if ((o->filter_pid && p->pid != o->pid) || (o->filter_rank && p->rank != o->rank))
        return 0;
    return !o->filter_tid || t->tid == o->tid;
}

int opp_agg_selects(const struct opp_model *m, const struct opp_agg_opts *o, uint32_t proc,
                    uint32_t thread)
{
    if (thread != OPP_GPU_NONE)
        return thread_selected(m, &m->threads[thread], o);
    return !o->filter_tid && (!o->filter_pid || m->procs[proc].pid == o->pid) &&
           (!o->filter_rank || m->procs[proc].rank == o->rank);
}

static void free_groups(struct group **groups)
{
    struct group *g, *tmp;
    HASH_ITER(hh, *groups, g, tmp) {
        HASH_DEL(*groups, g);
        free(g);
    }
}

/* The row of the event's group, created on first sight; NULL when out of
 * memory. */
static struct opp_row *row_for(struct opp_agg *a, size_t *cap, struct group **groups,
                               const struct group_key *k)
{
    struct group *g;
    HASH_FIND(hh, *groups, k, sizeof *k, g);
    if (g)
        return &a->rows[g->row];
    if (a->nrows_all == *cap) {
        size_t n = *cap ? 2 * *cap : 64;
        struct opp_row *r = reallocarray(a->rows, n, sizeof *r);
        if (!r)
            return NULL;
        a->rows = r;
        *cap = n;
    }
    g = malloc(sizeof *g);
    if (!g)
        return NULL;
    g->key = *k;
    g->row = a->nrows_all;
    int hash_oom = 0;
    HASH_ADD(hh, *groups, key, sizeof g->key, g);
    if (hash_oom) {
        free(g);
        return NULL;
    }
    struct opp_row *r = &a->rows[a->nrows_all++];
    memset(r, 0, sizeof *r);
    return r;
}

int opp_aggregate(const struct opp_model *m, const struct opp_agg_opts *o, struct opp_agg *a)
{
    memset(a, 0, sizeof *a);
    struct group *groups = NULL;
    size_t cap = 0;
    for (size_t ti = 0; ti < m->nthreads; ti++) {
        const struct opp_thread *t = &m->threads[ti];
        if (!thread_selected(m, t, o))
            continue;
        for (size_t i = 0; i < t->nevents; i++) {
            const struct opp_event *e = &t->events[i];
            const struct opp_func *f = opp_event_func(m, t, e);
            if (o->lib && strcmp(opp_model_str(m, f->lib), o->lib))
                continue;
            const uint64_t *args = opp_event_args(t, e);
            struct opp_shapes shapes = {0};
            if (o->group_by_shape)
                opp_op_shapes(f->kind, args, e->nargs, &shapes);
            struct group_key k;
            make_key(&k, e->name, OPP_DEVICE_CPU, o->group_by_shape ? &shapes : NULL);
            struct opp_row *r = row_for(a, &cap, &groups, &k);
            if (!r)
                goto oom;
            if (!r->count) {
                r->key = opp_model_str(m, e->name);
                r->lib = opp_model_str(m, f->lib);
                r->shapes = shapes;
            }
            r->count++;
            r->self_cpu_time_total_ns += e->self_ns;
            r->cpu_time_total_ns += opp_event_dur(e);
            r->flops += opp_op_flops(f->kind, f->dtype, args, e->nargs);
            uint64_t cb = opp_coll_alg_bytes(f->kind, args, e->nargs);
            if (cb) {
                r->coll = 1;
                r->coll_bytes += cb;
                r->coll_bus_bytes += (double)cb * opp_coll_bus_factor(f->kind, args, e->nargs);
            }
            if (t->gpu) {
                const struct opp_event_gpu *g = &t->gpu[i];
                r->self_cuda_time_total_ns += g->self_cuda_ns;
                r->cuda_time_total_ns += g->cuda_ns;
                r->self_cuda_memory_usage = opp_add_sat(r->self_cuda_memory_usage, g->self_mem);
                r->cuda_memory_usage = opp_add_sat(r->cuda_memory_usage, g->mem);
            }
            a->self_cpu_time_total_ns += e->self_ns;
            a->events++;
        }
    }
    for (size_t i = 0; i < m->gpu.nops; i++) {
        const struct opp_gpu_op *g = &m->gpu.ops[i];
        if (o->lib || !opp_gpu_op_timed(g) || !opp_agg_selects(m, o, g->proc, g->thread))
            continue;
        struct group_key k;
        make_key(&k, g->name, OPP_DEVICE_CUDA, NULL); /* no shapes: "[]" when grouped */
        struct opp_row *r = row_for(a, &cap, &groups, &k);
        if (!r)
            goto oom;
        if (!r->count) {
            r->key = opp_model_str(m, g->name);
            r->lib = "";
            r->device_type = OPP_DEVICE_CUDA;
        }
        uint64_t dur = opp_gpu_op_dur(g);
        r->count++;
        r->self_cuda_time_total_ns += dur;
        r->cuda_time_total_ns += dur;
        r->bytes += g->bytes;
        r->transfers = g->type != OPP_GPU_KERNEL;
        a->self_cuda_time_total_ns += dur;
        a->gpu_ops++;
    }
    a->gpu = opp_model_has_gpu(m);
    free_groups(&groups);
    enum opp_sort_key key = o->sort;
    if (a->nrows_all)
        qsort_r(a->rows, a->nrows_all, sizeof *a->rows, cmp_rows, &key);
    a->nrows = o->limit && o->limit < a->nrows_all ? o->limit : a->nrows_all;
    for (size_t i = 0; i < a->nrows; i++)
        if (o->group_by_shape)
            opp_shapes_format(&a->rows[i].shapes, a->rows[i].shapes_str,
                              sizeof a->rows[i].shapes_str);
    return 0;
oom:
    free_groups(&groups);
    opp_agg_free(a);
    return -ENOMEM;
}

void opp_agg_free(struct opp_agg *a)
{
    free(a->rows);
    memset(a, 0, sizeof *a);
}
