/* key_averages (see aggregate.h): one hash lookup per event, then a sort. */
#ifndef _GNU_SOURCE /* qsort_r */
#define _GNU_SOURCE
#endif
#include "analysis/aggregate.h"

#include "analysis/loader.h"
#include "analysis/symbolize.h"
#include "torch_rules.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

static const struct {
    const char *name;
    enum opp_unit unit;
} sort_keys[] = {
#define SORT_KEY(id, name, unit) [OPP_SORT_##id] = {name, unit},
    OPP_SORT_KEYS(SORT_KEY)
#undef SORT_KEY
};

#define NKEYS (sizeof sort_keys / sizeof sort_keys[0])

int opp_sort_key_parse(const char *name, enum opp_sort_key *out)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (!strcmp(name, sort_keys[i].name)) {
            *out = (enum opp_sort_key)i;
            return 0;
        }
    return -EINVAL;
}

const char *opp_sort_key_list(void)
{
#define LIST_ITEM(id, name, unit) ", " name
    static const char list[] = "" OPP_SORT_KEYS(LIST_ITEM);
#undef LIST_ITEM
    return list + 2; /* after the first ", " */
}

const char *opp_sort_key_name(enum opp_sort_key k)
{
    return (size_t)k < NKEYS ? sort_keys[k].name : NULL;
}

enum opp_unit opp_sort_key_unit(enum opp_sort_key k)
{
    return (size_t)k < NKEYS ? sort_keys[k].unit : OPP_UNIT_NONE;
}

const char *opp_device_type_name(uint32_t t)
{
    return t == OPP_DEVICE_CUDA ? "CUDA" : "CPU";
}

/* A row's identity, packed into 32-bit words so that hashing it costs what
 * it holds: name, device type, then (grouped by shape) the shapes, then
 * (grouped by stack) the enclosing names. The stack is kept apart until
 * key_seal appends it. */
#define KEY_WORDS (3 + OPP_SHAPES_MAX * (1 + 2 * OPP_RANK_MAX) + 1 + OPP_STACK_MAX)
struct group_key {
    uint32_t nw;
    uint32_t w[KEY_WORDS];
    uint32_t nstack;
    uint32_t stack[OPP_STACK_MAX]; /* innermost first */
};

struct group {
    size_t row;
    UT_hash_handle hh;
    uint32_t nw;
    uint32_t w[]; /* the key's words */
};

static void make_key(struct group_key *k, uint32_t name, uint32_t device_type,
                     const struct opp_shapes *s)
{
    k->nw = 0;
    k->nstack = 0;
    k->w[k->nw++] = name;
    k->w[k->nw++] = device_type;
    if (!s)
        return;
    k->w[k->nw++] = (uint32_t)s->n;
    for (int i = 0; i < s->n; i++) {
        k->w[k->nw++] = (uint32_t)s->rank[i];
        for (int j = 0; j < s->rank[i]; j++) {
            k->w[k->nw++] = (uint32_t)s->dim[i][j];
            k->w[k->nw++] = (uint32_t)((uint64_t)s->dim[i][j] >> 32);
        }
    }
}

static void key_seal(struct group_key *k)
{
    if (!k->nstack)
        return;
    k->w[k->nw++] = k->nstack | 0x80000000u; /* never a shape count: keys stay distinct */
    for (uint32_t i = 0; i < k->nstack; i++)
        k->w[k->nw++] = k->stack[i];
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
    case OPP_SORT_CPU_MEMORY_USAGE:
        return (double)r->cpu_memory_usage;
    case OPP_SORT_SELF_CPU_MEMORY_USAGE:
        return (double)r->self_cpu_memory_usage;
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
    if (!c)
        c = cmp_shapes(&a->shapes, &b->shapes);
    return c || !a->stack_str ? c : strcmp(a->stack_str, b->stack_str);
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

/* The index in *arr (*n elements of elem bytes, room for *cap) of the
 * group keyed by the words w[0..nw): its element, or one appended zeroed on
 * first sight; -1 when out of memory. Rows and statuses are kept this way. */
static ssize_t group_index(struct group **groups, const uint32_t *w, uint32_t nw, void **arr,
                           size_t *n, size_t *cap, size_t elem)
{
    size_t bytes = nw * sizeof *w;
    struct group *g;
    HASH_FIND(hh, *groups, w, bytes, g);
    if (g)
        return (ssize_t)g->row;
    if (opp_loader_grow(arr, cap, *n + 1, elem))
        return -1;
    g = malloc(sizeof *g + bytes);
    if (!g)
        return -1;
    g->nw = nw;
    memcpy(g->w, w, bytes);
    g->row = *n;
    if (OPP_HASH_ADD_KEYPTR(*groups, g->w, bytes, g)) {
        free(g);
        return -1;
    }
    memset((char *)*arr + *n * elem, 0, elem);
    return (ssize_t)(*n)++;
}

/* What an aggregate adds up as calls come (opp_agg_acc_*). */
struct opp_agg_acc {
    const struct opp_model *m;
    const struct opp_agg_opts *o;
    struct opp_agg *a;
    struct group *groups;  /* rows */
    struct group *sgroups; /* (name, status) */
    size_t cap, scap;
    uint8_t *matched; /* --match: by string id, name_matches's */
    size_t nmatched;
    struct opp_agg_proc *pp; /* by process index */
    size_t *by_name;         /* rows keyed by name alone: row + 1 by string id, 0 unknown */
    size_t nby_name;
    uint32_t step_row; /* the first ProfilerStep#N's string id: all key that row; UINT32_MAX */
    int failed;
};

/* Counts calls calls of entry point name (library lib) returning st != 0,
 * grouped by (name, status); -ENOMEM. */
static int count_status(const struct opp_model *m, struct opp_agg *a, size_t *cap,
                        struct group **groups, uint32_t name, const char *lib, int64_t st,
                        uint64_t calls)
{
    const uint32_t w[3] = {name, (uint32_t)st, (uint32_t)((uint64_t)st >> 32)};
    ssize_t i = group_index(groups, w, 3, (void **)&a->statuses, &a->nstatuses, cap,
                            sizeof *a->statuses);
    if (i < 0)
        return -ENOMEM;
    struct opp_status_row *r = &a->statuses[i];
    if (!r->key)
        *r = (struct opp_status_row){.key = opp_model_str(m, name), .lib = lib,
                                     .name = opp_status_name(lib, st), .status = st};
    r->count += calls;
    a->errors += calls;
    return 0;
}

/* Most calls first, then by entry point and status. */
static int cmp_status_rows(const void *pa, const void *pb)
{
    const struct opp_status_row *a = pa, *b = pb;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    int c = strcmp(a->key, b->key);
    return c ? c : (a->status > b->status) - (a->status < b->status);
}

/* regexec once per name: matched[id] is 0 unknown, 1 yes, 2 no (the
 * model's strings may grow as a pass reads: the array grows with them). */
static int name_matches(struct opp_agg_acc *x, uint32_t id)
{
    const struct opp_model *m = x->m;
    if (id >= m->nstrs)
        return regexec(x->o->match, "", 0, NULL, 0) == 0;
    if (opp_loader_grow_zeroed((void **)&x->matched, &x->nmatched, m->nstrs, 1)) {
        x->failed = 1;
        return 0;
    }
    if (!x->matched[id])
        x->matched[id] = regexec(x->o->match, m->strs[id], 0, NULL, 0) == 0 ? 1 : 2;
    return x->matched[id] == 1;
}

/* "outer;...;inner" of a row's stack (names as they are). */
static char *stack_string(const struct opp_model *m, const struct opp_row *r)
{
    size_t len = 1;
    for (uint32_t i = 0; i < r->nstack; i++)
        len += strlen(opp_model_str(m, r->stack[i])) + 1;
    char *s = malloc(len), *p = s;
    if (!s)
        return NULL;
    *p = 0;
    for (uint32_t i = r->nstack; i-- > 0;) {
        const char *n = opp_model_str(m, r->stack[i]);
        size_t l = strlen(n);
        memcpy(p, n, l);
        p += l;
        if (i)
            *p++ = ';';
        *p = 0;
    }
    return s;
}

struct opp_agg_acc *opp_agg_acc_new(const struct opp_model *m, const struct opp_agg_opts *o,
                                    struct opp_agg *a)
{
    memset(a, 0, sizeof *a);
    struct opp_agg_acc *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    *x = (struct opp_agg_acc){.m = m, .o = o, .a = a, .step_row = UINT32_MAX};
    if (!(x->pp = calloc(m->nprocs ? m->nprocs : 1, sizeof *x->pp))) {
        free(x);
        return NULL;
    }
    return x;
}

/* The CPU row of name (of library lib on first sight) with shapes (when
 * grouped by them) and the names of stack[0..nstack): its index, made on
 * first sight, or -1 when out of memory. */
static ssize_t cpu_row(struct opp_agg_acc *x, uint32_t name, uint32_t lib,
                       const struct opp_shapes *shapes, uint32_t nstack, const uint32_t *stack)
{
    struct group_key k;
    make_key(&k, name, OPP_DEVICE_CPU, x->o->group_by_shape ? shapes : NULL);
    k.nstack = nstack;
    if (nstack)
        memcpy(k.stack, stack, nstack * sizeof *stack);
    key_seal(&k);
    struct opp_agg *a = x->a;
    size_t before = a->nrows_all;
    ssize_t i = group_index(&x->groups, k.w, k.nw, (void **)&a->rows, &a->nrows_all, &x->cap,
                            sizeof *a->rows);
    if (i < 0 || a->nrows_all == before)
        return i;
    struct opp_row *r = &a->rows[i]; /* first sight */
    r->name = name;
    r->lib_id = lib;
    r->shapes = *shapes;
    r->nstack = nstack;
    if (nstack)
        memcpy(r->stack, stack, nstack * sizeof *stack);
    return i;
}

/* The name whose row a call named name goes to: torch's (opp_torch_row_key),
 * all ProfilerStep#N the first one's. */
static uint32_t row_name(struct opp_agg_acc *x, uint32_t name)
{
    const char *s = opp_model_str(x->m, name);
    if (opp_torch_row_key(s) == s)
        return name;
    if (x->step_row == UINT32_MAX)
        x->step_row = name;
    return x->step_row;
}

int opp_agg_acc_row(struct opp_agg_acc *x, const struct opp_agg_call *c, struct opp_agg_vals *v)
{
    const struct opp_model *m = x->m;
    const struct opp_agg_opts *o = x->o;
    const struct opp_func *f = c->f;
    *v = (struct opp_agg_vals){.row = OPP_AGG_NO_ROW, .kind = f->kind};
    if (o->lib && strcmp(opp_model_str(m, f->lib), o->lib))
        return 0; /* in the base, as --match's */
    if (o->match && !name_matches(x, c->name))
        return x->failed ? -ENOMEM : 0;
    v->flops = opp_op_flops(f->kind, f->dtype, opp_model_str(m, c->name), c->args, c->nargs);
    v->coll = opp_coll_alg_bytes(f->kind, c->args, c->nargs);
    if (v->coll)
        v->bus = (double)v->coll * opp_coll_bus_factor(f->kind, c->args, c->nargs);
    v->status = opp_op_status(f->kind, c->args, c->nargs);
    /* a row keyed by the name alone is found by it, without hashing */
    int by_name = !o->group_by_shape && !c->nstack;
    if (by_name && c->name < x->nby_name && x->by_name[c->name]) {
        v->row = x->by_name[c->name] - 1;
        return 0;
    }
    struct opp_shapes shapes = {0};
    if (o->group_by_shape)
        opp_op_shapes(f->kind, c->args, c->nargs, &shapes);
    ssize_t i = cpu_row(x, row_name(x, c->name), f->lib, &shapes, c->nstack, c->stack);
    if (i < 0)
        return -ENOMEM;
    v->row = (size_t)i;
    size_t need = (size_t)c->name + 1 > 2 * x->nby_name ? (size_t)c->name + 1 : 2 * x->nby_name;
    if (by_name && c->name >= x->nby_name &&
        opp_loader_grow_zeroed((void **)&x->by_name, &x->nby_name, need, sizeof *x->by_name))
        return -ENOMEM;
    if (by_name)
        x->by_name[c->name] = (size_t)i + 1;
    return 0;
}

int opp_agg_acc_stacked(struct opp_agg_acc *x, size_t row, uint32_t nstack, const uint32_t *stack,
                        size_t *out)
{
    const struct opp_row *r = &x->a->rows[row];
    struct opp_shapes shapes = r->shapes; /* r moves as rows are made */
    ssize_t i = cpu_row(x, r->name, r->lib_id, &shapes, nstack, stack);
    if (i < 0)
        return -ENOMEM;
    *out = (size_t)i;
    return 0;
}

/* One part's sum, made field by field (no zeroing of it first): what it
 * adds to a row. */
static void part_sum(struct opp_agg_sum *one, const struct opp_agg_vals *v,
                     const struct opp_agg_part *p)
{
    one->calls = p->calls;
    one->self_ns = p->self_ns;
    one->dur_ns = p->dur_ns;
    one->flops = p->calls * v->flops;
    one->coll = p->calls * v->coll;
    one->bus = (double)p->calls * v->bus;
    if (p->gpu)
        one->gpu = *p->gpu;
    else
        one->gpu = (struct opp_event_gpu){0};
    if (p->cpumem)
        one->cpumem = *p->cpumem;
    else
        one->cpumem = (struct opp_event_cpumem){0};
}

void opp_agg_sum_add(struct opp_agg_sum *s, const struct opp_agg_vals *v,
                     const struct opp_agg_part *p)
{
    struct opp_agg_sum one;
    part_sum(&one, v, p);
    opp_agg_sum_merge(s, &one);
}

void opp_agg_sum_merge(struct opp_agg_sum *s, const struct opp_agg_sum *x)
{
    s->calls += x->calls;
    s->self_ns += x->self_ns;
    s->dur_ns += x->dur_ns;
    s->flops += x->flops;
    s->coll += x->coll;
    s->bus += x->bus;
    s->gpu.self_cuda_ns += x->gpu.self_cuda_ns;
    s->gpu.cuda_ns += x->gpu.cuda_ns;
    s->gpu.self_mem = opp_add_sat(s->gpu.self_mem, x->gpu.self_mem);
    s->gpu.mem = opp_add_sat(s->gpu.mem, x->gpu.mem);
    s->cpumem.self = opp_add_sat(s->cpumem.self, x->cpumem.self);
    s->cpumem.total = opp_add_sat(s->cpumem.total, x->cpumem.total);
}

int opp_agg_acc_add(struct opp_agg_acc *x, uint32_t proc, const struct opp_agg_vals *v,
                    const struct opp_agg_part *p)
{
    struct opp_agg_sum s;
    part_sum(&s, v, p);
    return opp_agg_acc_add_sum(x, proc, v, &s);
}

int opp_agg_acc_add_sum(struct opp_agg_acc *x, uint32_t proc, const struct opp_agg_vals *v,
                        const struct opp_agg_sum *s)
{
    struct opp_agg *a = x->a;
    a->self_cpu_base_ns += s->self_ns;
    if (v->row == OPP_AGG_NO_ROW)
        return 0; /* not matched */
    struct opp_row *r = &a->rows[v->row];
    r->count += s->calls;
    r->self_cpu_time_total_ns += s->self_ns;
    r->cpu_time_total_ns += s->dur_ns;
    r->flops += s->flops;
    if (s->coll) {
        r->coll = 1;
        r->coll_bytes += s->coll;
        r->coll_bus_bytes += s->bus;
    }
    a->cuda_calls |= opp_kind_base(v->kind) == OPP_OP_CUDA_API;
    if (v->status) {
        r->errors += s->calls;
        if (count_status(x->m, a, &x->scap, &x->sgroups, r->name, opp_model_str(x->m, r->lib_id),
                         v->status, s->calls))
            return -ENOMEM;
    }
    r->self_cuda_time_total_ns += s->gpu.self_cuda_ns;
    r->cuda_time_total_ns += s->gpu.cuda_ns;
    r->self_cuda_memory_usage = opp_add_sat(r->self_cuda_memory_usage, s->gpu.self_mem);
    r->cuda_memory_usage = opp_add_sat(r->cuda_memory_usage, s->gpu.mem);
    r->self_cpu_memory_usage = opp_add_sat(r->self_cpu_memory_usage, s->cpumem.self);
    r->cpu_memory_usage = opp_add_sat(r->cpu_memory_usage, s->cpumem.total);
    a->self_cpu_time_total_ns += s->self_ns;
    a->events += s->calls;
    struct opp_agg_proc *ap = &x->pp[proc];
    ap->calls += s->calls;
    ap->cpu_ns += s->self_ns;
    return 0;
}

int opp_agg_acc_gpu(struct opp_agg_acc *x, const struct opp_agg_gpu *g)
{
    struct opp_agg *a = x->a;
    a->self_cuda_base_ns += g->dur_ns;
    if (x->o->lib)
        return 0; /* a library's calls only */
    if (x->o->match && !name_matches(x, g->name))
        return x->failed ? -ENOMEM : 0;
    struct group_key k;
    make_key(&k, g->name, OPP_DEVICE_CUDA, NULL); /* no shapes: "[]" when grouped */
    key_seal(&k);
    ssize_t i = group_index(&x->groups, k.w, k.nw, (void **)&a->rows, &a->nrows_all, &x->cap,
                            sizeof *a->rows);
    if (i < 0)
        return -ENOMEM;
    struct opp_row *r = &a->rows[i];
    if (!r->count) {
        r->name = g->name;
        r->lib_id = UINT32_MAX;
        r->device_type = OPP_DEVICE_CUDA;
    }
    r->count += g->calls;
    r->self_cuda_time_total_ns += g->dur_ns;
    r->cuda_time_total_ns += g->dur_ns;
    r->bytes += g->bytes;
    r->transfers = g->type != OPP_GPU_KERNEL;
    a->self_cuda_time_total_ns += g->dur_ns;
    a->gpu_ops += g->calls;
    x->pp[g->proc].gpu_ops += g->calls;
    return 0;
}

/* Rows made for calls that were never added (a pass's: folded into
 * their parent, memory inside an operator) gone. */
static void drop_empty(struct opp_agg *a)
{
    size_t n = 0;
    for (size_t i = 0; i < a->nrows_all; i++)
        if (a->rows[i].count)
            a->rows[n++] = a->rows[i];
    a->nrows_all = n;
}

static void acc_free(struct opp_agg_acc *x)
{
    OPP_HASH_FREE(x->groups);
    OPP_HASH_FREE(x->sgroups);
    free(x->matched);
    free(x->by_name);
    free(x->pp);
    free(x);
}

int opp_agg_acc_finish(struct opp_agg_acc *x, int cpu_mem)
{
    const struct opp_model *m = x->m;
    const struct opp_agg_opts *o = x->o;
    struct opp_agg *a = x->a;
    OPP_HASH_FREE(x->groups);
    OPP_HASH_FREE(x->sgroups);
    drop_empty(a);
    for (size_t i = 0; i < a->nrows_all; i++) {
        struct opp_row *r = &a->rows[i];
        r->key = opp_torch_row_key(opp_model_str(m, r->name));
        r->lib = r->lib_id == UINT32_MAX ? "" : opp_model_str(m, r->lib_id);
    }
    a->filtered = o->lib && o->match ? "--lib and --match"
                  : o->lib           ? "--lib"
                  : o->match         ? "--match"
                                     : NULL;
    for (size_t p = 0; p < m->nprocs; p++)
        if (x->pp[p].calls || x->pp[p].gpu_ops) {
            x->pp[p].proc = (uint32_t)p;
            x->pp[a->nprocs++] = x->pp[p];
        }
    a->procs = x->pp;
    x->pp = NULL;
    a->gpu = opp_model_has_gpu(m) || a->cuda_calls;
    a->cpu_mem = cpu_mem;
    acc_free(x);
    if (a->nstatuses)
        qsort(a->statuses, a->nstatuses, sizeof *a->statuses, cmp_status_rows);
    if (o->group_by_stack)
        for (size_t i = 0; i < a->nrows_all; i++)
            if (!(a->rows[i].stack_str = stack_string(m, &a->rows[i]))) {
                opp_agg_free(a);
                return -ENOMEM;
            }
    enum opp_sort_key key = o->sort;
    if (a->nrows_all)
        qsort_r(a->rows, a->nrows_all, sizeof *a->rows, cmp_rows, &key);
    a->nrows = o->limit && o->limit < a->nrows_all ? o->limit : a->nrows_all;
    for (size_t i = 0; i < a->nrows; i++)
        if (o->group_by_shape)
            opp_shapes_format(&a->rows[i].shapes, a->rows[i].shapes_str,
                              sizeof a->rows[i].shapes_str);
    return 0;
}

void opp_agg_acc_drop(struct opp_agg_acc *x)
{
    if (!x)
        return;
    opp_agg_free(x->a);
    acc_free(x);
}

uint32_t opp_agg_stack_depth(const struct opp_agg_opts *o)
{
    return o->group_by_stack < OPP_STACK_MAX ? o->group_by_stack : OPP_STACK_MAX;
}

uint32_t opp_agg_code_frames(const struct opp_model *m, const struct opp_agg_opts *o, uint32_t proc,
                             uint32_t stack, uint32_t *frames)
{
    uint32_t n = opp_agg_stack_depth(o);
    return n && stack ? (uint32_t)opp_code_pyframes(m->code, proc, stack, frames, (int)n) : 0;
}

int opp_agg_has_cuda_time(const struct opp_agg *a)
{
    for (size_t i = 0; i < a->nrows_all; i++)
        if (a->rows[i].self_cuda_time_total_ns > 0)
            return 1;
    return 0;
}

int opp_agg_has_cuda_mem(const struct opp_agg *a)
{
    for (size_t i = 0; i < a->nrows_all; i++)
        if (a->rows[i].self_cuda_memory_usage > 0)
            return 1;
    return 0;
}

int opp_agg_has_cpu_mem(const struct opp_agg *a)
{
    for (size_t i = 0; i < a->nrows_all; i++)
        if (a->rows[i].self_cpu_memory_usage > 0 || a->rows[i].cpu_memory_usage > 0)
            return 1;
    return 0;
}

void opp_agg_free(struct opp_agg *a)
{
    for (size_t i = 0; i < a->nrows_all; i++)
        free(a->rows[i].stack_str);
    free(a->rows);
    free(a->statuses);
    free(a->procs);
    memset(a, 0, sizeof *a);
}
