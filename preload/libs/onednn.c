/* oneDNN wrappers, generated from tables/onednn.h: a primitive's execution is
 * recorded as a TENSORS operator (its kind, data type and tensor dims) read
 * through oneDNN's primitive-descriptor queries, once per primitive. */
#include "core/internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

/* oneDNN 2.x, declared here so that the preload builds without its headers
 * (dnnl_types.h): the public memory descriptor starts with these fields, and
 * the enum values below are 2.x's. A library of another major version (3.x
 * made memory descriptors opaque and renumbered the kinds) is recorded with
 * its status only, named after the entry point. */
#define DNNL_MAX_NDIMS 12
struct dnnl2_md_head {
    int ndims;
    int64_t dims[DNNL_MAX_NDIMS];
    int data_type;
};
struct dnnl_version_s {
    int major, minor, patch;
};
enum { Q_PRIMITIVE_KIND = 2, Q_PROP_KIND = 11, Q_SRC_MD = 129, Q_DIFF_SRC_MD = 130,
       Q_WEIGHTS_MD = 131, Q_DIFF_WEIGHTS_MD = 132, Q_DST_MD = 133, Q_DIFF_DST_MD = 134 };
enum { PROP_BACKWARD = 128, PROP_BACKWARD_DATA = 160, PROP_BACKWARD_WEIGHTS = 192 };

/* The query functions, from the library that defines the real execute
 * (Python loads it RTLD_LOCAL: not reachable by name from here): OPP_FOUND,
 * so a oneDNN unloaded and loaded again elsewhere is looked at again.
 * dnnl_seen: the real execute they were looked up beside (NULL: not yet);
 * the others stay NULL where the library is not 2.x. */
typedef int (*dnnl_get_pd_fn)(const void *prim, const void **pd);
typedef int (*dnnl_query_fn)(const void *pd, int what, int index, void *result);
typedef const struct dnnl2_md_head *(*dnnl_query_md_fn)(const void *pd, int what, int index);
static OPP_FOUND(dnnl_seen);
static OPP_FOUND(dnnl_get_pd);
static OPP_FOUND(dnnl_query);
static OPP_FOUND(dnnl_query_md);

struct dnnl_fns {
    dnnl_get_pd_fn get_pd;
    dnnl_query_fn query;
    dnnl_query_md_fn query_md;
};

/* dnnl_seen is stored first: a library unloaded meanwhile clears it, and
 * the next primitive looks again; a primitive executed meanwhile may find
 * the functions not stored yet, and is described at its next execution. */
static void dnnl_look(void)
{
    Dl_info di;
    void *exec = opp_real(OPP_FN_dnnl_primitive_execute), *h = NULL;
    if (!exec || !dladdr(exec, &di) || !di.dli_fname ||
        !(h = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD)))
        return; /* looked at again at the next primitive */
    const struct dnnl_version_s *(*version)(void) =
        (const struct dnnl_version_s *(*)(void))dlsym(h, "dnnl_version");
    const struct dnnl_version_s *v = version ? version() : NULL;
    void *get_pd = NULL, *query = NULL, *query_md = NULL;
    if (v && v->major == 2) {
        get_pd = dlsym(h, "dnnl_primitive_get_primitive_desc");
        query = dlsym(h, "dnnl_primitive_desc_query");
        query_md = dlsym(h, "dnnl_primitive_desc_query_md");
    }
    dlclose(h); /* it stays loaded: the program holds it */
    atomic_store_explicit(&dnnl_seen, exec, memory_order_relaxed);
    atomic_store_explicit(&dnnl_get_pd, get_pd, memory_order_relaxed);
    atomic_store_explicit(&dnnl_query, query, memory_order_relaxed);
    atomic_store_explicit(&dnnl_query_md, query_md, memory_order_relaxed);
}

/* The query functions as found now: 0, or -1 when they cannot describe. */
static int dnnl_fns(struct dnnl_fns *f)
{
    if (!atomic_load_explicit(&dnnl_seen, memory_order_relaxed))
        dnnl_look();
    f->get_pd = (dnnl_get_pd_fn)atomic_load_explicit(&dnnl_get_pd, memory_order_relaxed);
    f->query = (dnnl_query_fn)atomic_load_explicit(&dnnl_query, memory_order_relaxed);
    f->query_md = (dnnl_query_md_fn)atomic_load_explicit(&dnnl_query_md, memory_order_relaxed);
    return f->get_pd && f->query && f->query_md ? 0 : -1;
}

/* What a primitive records (past the status): sub, dtype, ntensors, then
 * rank and dims per tensor; at most 3 tensors of OPP_RANK_MAX dims. */
#define DESC_MAX (3 + 3 * (1 + OPP_RANK_MAX))

static uint32_t sub_of(int kind, int prop)
{
    switch (kind) {
    case 1: return OPP_SUB_REORDER;
    case 2: return OPP_SUB_SHUFFLE;
    case 3: return OPP_SUB_CONCAT;
    case 4: return OPP_SUB_SUM;
    case 5:
        return prop == PROP_BACKWARD_DATA      ? OPP_SUB_CONV_BWD_DATA
               : prop == PROP_BACKWARD_WEIGHTS ? OPP_SUB_CONV_BWD_FILTER
                                               : OPP_SUB_CONV;
    case 6: return OPP_SUB_DECONV;
    case 7: return OPP_SUB_ELTWISE;
    case 8: case 17: case 23: return OPP_SUB_SOFTMAX; /* softmax, logsoftmax, softmax_v2 */
    case 9: case 20: return OPP_SUB_POOLING;        /* pooling, pooling_v2 */
    case 10: return OPP_SUB_LRN;
    case 11: return OPP_SUB_BATCH_NORM;
    case 12: return OPP_SUB_LAYER_NORM;
    case 13: return OPP_SUB_INNER_PRODUCT;
    case 14: return OPP_SUB_RNN;
    case 15: case 18: return OPP_SUB_MATMUL; /* gemm, matmul */
    case 16: return OPP_SUB_BINARY;
    case 19: return OPP_SUB_RESAMPLING;
    case 21: return OPP_SUB_REDUCTION;
    case 22: return OPP_SUB_PRELU;
    default: return OPP_SUB_NONE;
    }
}

static uint32_t dtype_of(int dt)
{
    static const uint8_t map[] = {0, OPP_DT_F16, OPP_DT_BF16, OPP_DT_F32,
                                  OPP_DT_I32, OPP_DT_I8, OPP_DT_U8};
    return dt >= 0 && dt < (int)sizeof map ? map[dt] : OPP_DT_NONE;
}

static const struct dnnl2_md_head *md(const struct dnnl_fns *f, const void *pd, int what, int index)
{
    const struct dnnl2_md_head *m = f->query_md(pd, what, index);
    return m && m->ndims > 0 && m->ndims <= DNNL_MAX_NDIMS ? m : NULL;
}

static unsigned put_md(uint64_t *a, unsigned n, const struct dnnl2_md_head *m)
{
    if (!m || m->ndims > OPP_RANK_MAX) {
        a[n++] = 0;
        return n;
    }
    a[n++] = (uint64_t)m->ndims;
    for (int i = 0; i < m->ndims; i++)
        a[n++] = m->dims[i] > 0 ? (uint64_t)m->dims[i] : 0;
    return n;
}

/* The description of a primitive, in the order opp_op_shapes reads it:
 * forward sense, src (x or dx), weights (w or dw) where the kind has them,
 * dst (y or dy). Returns the count (0: not described). */
static unsigned describe(const struct dnnl_fns *f, const void *prim, uint64_t *a)
{
    const void *pd = NULL;
    int kind = 0, prop = 0;
    if (f->get_pd(prim, &pd) != 0 || !pd || f->query(pd, Q_PRIMITIVE_KIND, 0, &kind) != 0)
        return 0;
    if (f->query(pd, Q_PROP_KIND, 0, &prop) != 0)
        prop = 0; /* kinds without one: reorder, sum, concat, binary, matmul... */
    int bwd = prop == PROP_BACKWARD || prop == PROP_BACKWARD_DATA;
    int bwd_w = prop == PROP_BACKWARD_WEIGHTS;
    const struct dnnl2_md_head *src = md(f, pd, bwd ? Q_DIFF_SRC_MD : Q_SRC_MD, 0);
    const struct dnnl2_md_head *wei = md(f, pd, bwd_w ? Q_DIFF_WEIGHTS_MD : Q_WEIGHTS_MD, 0);
    const struct dnnl2_md_head *dst = md(f, pd, bwd || bwd_w ? Q_DIFF_DST_MD : Q_DST_MD, 0);
    uint32_t sub = sub_of(kind, prop);
    const struct dnnl2_md_head *t[3];
    unsigned nt = 0;
    t[nt++] = src;
    switch (sub) {
    case OPP_SUB_CONV: case OPP_SUB_CONV_BWD_DATA: case OPP_SUB_CONV_BWD_FILTER:
    case OPP_SUB_DECONV: case OPP_SUB_INNER_PRODUCT: case OPP_SUB_MATMUL: case OPP_SUB_PRELU:
        t[nt++] = wei;
        break;
    case OPP_SUB_BINARY:
        t[nt++] = md(f, pd, Q_SRC_MD, 1);
        break;
    default:
        break;
    }
    t[nt++] = dst;
    const struct dnnl2_md_head *typed = src ? src : dst;
    unsigned n = 0;
    a[n++] = sub;
    a[n++] = typed ? dtype_of(typed->data_type) : 0;
    a[n++] = nt;
    for (unsigned i = 0; i < nt; i++)
        n = put_md(a, n, t[i]);
    return n;
}

/* Descriptions cached per primitive: open addressing on the primitive's
 * address, lock-free. A slot's key is 0 (never used), TOMB (freed), CLAIMED
 * while its writer fills it, or the primitive; the description is complete
 * before the key is published (release). */
#define CACHE_SIZE 1024u
#define PROBES 32u
#define TOMB ((uintptr_t)1)
#define CLAIMED ((uintptr_t)2)
struct cache_ent {
    _Atomic uintptr_t key;
    uint32_t n;
    uint64_t a[DESC_MAX];
};
static struct cache_ent cache[CACHE_SIZE];

static unsigned slot_of(uintptr_t p) { return (unsigned)((p >> 4) * 0x9E3779B1u) % CACHE_SIZE; }

static void cache_put(uintptr_t p, const uint64_t *a, unsigned n)
{
    unsigned s = slot_of(p);
    for (unsigned i = 0; i < PROBES; i++, s = (s + 1) % CACHE_SIZE) {
        uintptr_t k = atomic_load_explicit(&cache[s].key, memory_order_relaxed);
        if ((k == 0 || k == TOMB) &&
            atomic_compare_exchange_strong(&cache[s].key, &k, CLAIMED)) {
            memcpy(cache[s].a, a, n * sizeof *a);
            cache[s].n = n;
            atomic_store_explicit(&cache[s].key, p, memory_order_release);
            return;
        }
    }
    /* Full around here: described again at every call (correct, slower). */
}

/* The values recorded for one execution: status, then the description. */
static unsigned onednn_fill(uint64_t *a, int status, const void *prim)
{
    a[0] = (uint64_t)(int64_t)status;
    /* A failed call may have been given anything: describe nothing. */
    if (status != 0 || !prim)
        return 1;
    uintptr_t p = (uintptr_t)prim;
    unsigned s = slot_of(p);
    for (unsigned i = 0; i < PROBES; i++, s = (s + 1) % CACHE_SIZE) {
        uintptr_t k = atomic_load_explicit(&cache[s].key, memory_order_acquire);
        if (k == p) {
            memcpy(a + 1, cache[s].a, cache[s].n * sizeof *a);
            return 1 + cache[s].n;
        }
        if (k == 0)
            break;
    }
    int saved = errno;
    struct dnnl_fns f;
    unsigned n = dnnl_fns(&f) == 0 ? describe(&f, prim, a + 1) : 0;
    if (n)
        cache_put(p, a + 1, n);
    errno = saved;
    return 1 + n;
}

/* Forget a primitive before the library frees it: its address may come back. */
static const void *onednn_forget(const void *prim)
{
    uintptr_t p = (uintptr_t)prim;
    unsigned s = slot_of(p);
    for (unsigned i = 0; prim && i < PROBES; i++, s = (s + 1) % CACHE_SIZE) {
        uintptr_t k = atomic_load_explicit(&cache[s].key, memory_order_relaxed);
        if (k == p)
            atomic_compare_exchange_strong(&cache[s].key, &k, TOMB);
        else if (k == 0)
            break;
    }
    return prim;
}

OPP_DEFINE_WRAPPERS(OPP_ONEDNN_FUNCS)
