/* cuDNN backend (graph) API wrappers, generated from tables/cudnn.h's
 * OPP_CUDNN_GRAPH_FUNCS: what cudnnBackendSetAttribute is told is kept per
 * descriptor, and each reference copies its target's summary (tensor ->
 * operation -> operation graph -> engine -> engine config -> execution
 * plan), so cudnnBackendExecute finds the operation its plan runs. */
#include "core/internal.h" /* funcs.h: OPP_HAVE_CUDNN when the header is installed */
#ifdef OPP_HAVE_CUDNN
#include <string.h>

#include "libs/gpulibs.h"

#include <cudnn.h>

#define CDG_RANK 8   /* CUDNN_DIM_MAX */
#define CDG_T 3      /* tensors kept per operation, in the forward sense */
#define CDG_READ 64  /* OPS and RESULTS elements read at most */

struct cdg_tensor {
    uint8_t rank;   /* 0: unknown, or above CDG_RANK */
    uint8_t dtype;  /* enum opp_dtype */
    int64_t dims[CDG_RANK];
};

/* A descriptor: a tensor (t[0]), an operation, or what runs a graph. */
struct cdg_val {
    uint32_t type;  /* cudnnBackendDescriptorType_t */
    uint32_t nops;  /* operations: 1; a graph and what refers to it: its count */
    uint8_t sub;    /* enum opp_subop of the operation (a graph's main one) */
    uint8_t has_b;  /* pointwise: a second input was set */
    struct cdg_tensor t[CDG_T];
};

OPP_PMAP(cdg_map, struct cdg_val, 4096);

/* The operation kinds kept, and what each computes. */
static int cdg_op_sub(uint32_t type)
{
    switch (type) {
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR: return OPP_SUB_CONV;
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR: return OPP_SUB_CONV_BWD_DATA;
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
        return OPP_SUB_CONV_BWD_FILTER;
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR: return OPP_SUB_MATMUL;
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR: return OPP_SUB_ELTWISE;
    case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR: return OPP_SUB_REDUCTION;
    case CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR: return OPP_SUB_RESAMPLING;
    case CUDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR: return OPP_SUB_CONCAT;
    case CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR: return OPP_SUB_LAYER_NORM;
    case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR: return OPP_SUB_ATTENTION;
    default: return -1;
    }
}

/* Descriptors that hold or pass on an operation summary. */
static int cdg_kept(uint32_t type)
{
    switch (type) {
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR:
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
        return 1;
    default:
        return cdg_op_sub(type) >= 0;
    }
}

/* Which tensor slot (x, w, y in the forward sense) an operation attribute
 * names, -1 none. Pointwise: x, b, y. */
static int cdg_slot(uint32_t type, int attr)
{
    switch (attr) {
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X:
    case CUDNN_ATTR_OPERATION_MATMUL_ADESC:
    case CUDNN_ATTR_OPERATION_POINTWISE_XDESC:
    case CUDNN_ATTR_OPERATION_REDUCTION_XDESC:
    case CUDNN_ATTR_OPERATION_RESAMPLE_FWD_XDESC:
    case CUDNN_ATTR_OPERATION_NORM_FWD_XDESC:
    case CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC:
        return 0;
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW:
    case CUDNN_ATTR_OPERATION_MATMUL_BDESC:
    case CUDNN_ATTR_OPERATION_POINTWISE_BDESC:
    case CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC:
        return 1;
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY:
    case CUDNN_ATTR_OPERATION_MATMUL_CDESC:
    case CUDNN_ATTR_OPERATION_POINTWISE_YDESC:
    case CUDNN_ATTR_OPERATION_REDUCTION_YDESC:
    case CUDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC:
    case CUDNN_ATTR_OPERATION_NORM_FWD_YDESC:
    case CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC:
        return 2;
    default:
        (void)type;
        return -1;
    }
}

/* The attribute of type's descriptor that refers to the summary it takes
 * over (a graph, an engine, a config), 0 none. */
static int cdg_parent_attr(uint32_t type)
{
    switch (type) {
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR: return CUDNN_ATTR_ENGINE_OPERATION_GRAPH;
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR: return CUDNN_ATTR_ENGINECFG_ENGINE;
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR: return CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH;
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: return CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG;
    default: return 0;
    }
}

static void cdg_created(cudnnBackendDescriptor_t d, uint32_t type)
{
    if (!cdg_kept(type))
        return;
    struct cdg_val *v = opp_pmap_lock(&cdg_map, d, 1);
    if (!v)
        return; /* full: this descriptor is not known */
    memset(v, 0, sizeof *v); /* an address seen before: forget its past */
    v->type = type;
    int sub = cdg_op_sub(type);
    if (sub >= 0) {
        v->nops = 1;
        v->sub = (uint8_t)sub;
    }
    opp_pmap_unlock(&cdg_map);
}

/* dst takes over src's summary (graph, engine, config): its op count, sub
 * and tensors; dst keeps its type. */
static void cdg_inherit(cudnnBackendDescriptor_t dst, cudnnBackendDescriptor_t src)
{
    struct cdg_val s, *v;
    if (opp_pmap_get(&cdg_map, src, &s) != 0 || !(v = opp_pmap_lock(&cdg_map, dst, 0)))
        return;
    uint32_t type = v->type;
    *v = s;
    v->type = type;
    opp_pmap_unlock(&cdg_map);
}

/* A graph's operations: the first convolution or matmul is what the graph
 * computes (its FLOPs), else the first known operation. */
static void cdg_graph_ops(cudnnBackendDescriptor_t g, int64_t n, const cudnnBackendDescriptor_t *ops)
{
    struct cdg_val best = {0}, o;
    int found = 0;
    for (int64_t i = 0; i < n && i < CDG_READ; i++) {
        if (opp_pmap_get(&cdg_map, ops[i], &o) != 0 || cdg_op_sub(o.type) < 0)
            continue;
        int main_op = o.sub == OPP_SUB_CONV || o.sub == OPP_SUB_CONV_BWD_DATA ||
                      o.sub == OPP_SUB_CONV_BWD_FILTER || o.sub == OPP_SUB_MATMUL;
        if (!found || main_op) {
            best = o;
            found = 1 + main_op;
            if (main_op)
                break;
        }
    }
    struct cdg_val *v = opp_pmap_lock(&cdg_map, g, 0);
    if (!v)
        return;
    if (v->type == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR) {
        v->nops = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
        v->sub = found ? best.sub : OPP_SUB_NONE;
        v->has_b = best.has_b;
        memcpy(v->t, best.t, sizeof v->t);
    }
    opp_pmap_unlock(&cdg_map);
}

/* Keep what a successful or failed SetAttribute was told when its type
 * and count are what that attribute takes: a failed call's values are
 * what the program meant, and execution fails anyway when cuDNN refused. */
static void cdg_set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t attr,
                    cudnnBackendAttributeType_t atype, int64_t n, const void *elems)
{
    struct cdg_val v;
    if (!elems || n < 1 || opp_pmap_get(&cdg_map, d, &v) != 0)
        return;
    if (atype == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
        const cudnnBackendDescriptor_t *ref = elems;
        if (v.type == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR && attr == CUDNN_ATTR_OPERATIONGRAPH_OPS) {
            cdg_graph_ops(d, n, ref);
            return;
        }
        if (n != 1)
            return;
        if (cdg_parent_attr(v.type) == (int)attr) {
            cdg_inherit(d, ref[0]);
            return;
        }
        int slot = cdg_slot(v.type, attr);
        struct cdg_val t, *p;
        if (slot < 0 || cdg_op_sub(v.type) < 0 || opp_pmap_get(&cdg_map, ref[0], &t) != 0 ||
            t.type != CUDNN_BACKEND_TENSOR_DESCRIPTOR || !(p = opp_pmap_lock(&cdg_map, d, 0)))
            return;
        p->t[slot] = t.t[0];
        if (v.type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR && slot == 1) {
            p->has_b = 1;
            p->sub = OPP_SUB_BINARY;
        }
        opp_pmap_unlock(&cdg_map);
        return;
    }
    if (v.type != CUDNN_BACKEND_TENSOR_DESCRIPTOR)
        return;
    struct cdg_val *p;
    if (attr == CUDNN_ATTR_TENSOR_DIMENSIONS && atype == CUDNN_TYPE_INT64 && n <= CDG_RANK) {
        if (!(p = opp_pmap_lock(&cdg_map, d, 0)))
            return;
        p->t[0].rank = (uint8_t)n;
        for (int64_t i = 0; i < n; i++)
            p->t[0].dims[i] = ((const int64_t *)elems)[i];
        opp_pmap_unlock(&cdg_map);
    } else if (attr == CUDNN_ATTR_TENSOR_DATA_TYPE && atype == CUDNN_TYPE_DATA_TYPE && n == 1) {
        if (!(p = opp_pmap_lock(&cdg_map, d, 0)))
            return;
        p->t[0].dtype = (uint8_t)opp_cudnn_dtype(*(const cudnnDataType_t *)elems);
        opp_pmap_unlock(&cdg_map);
    }
}

/* The engine configs that heuristics hand back run the heuristics' graph. */
static void cdg_get(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t attr,
                    cudnnBackendAttributeType_t atype, int64_t req, const int64_t *count,
                    const void *elems)
{
    if (attr != CUDNN_ATTR_ENGINEHEUR_RESULTS || atype != CUDNN_TYPE_BACKEND_DESCRIPTOR || !elems ||
        !count)
        return;
    const cudnnBackendDescriptor_t *cfg = elems;
    for (int64_t i = 0; i < *count && i < req && i < CDG_READ; i++)
        cdg_inherit(cfg[i], d);
}

static unsigned cdg_put(uint64_t *a, unsigned at, const struct cdg_tensor *t)
{
    a[at++] = t->rank;
    for (unsigned i = 0; i < t->rank; i++)
        a[at++] = opp_dim((long)t->dims[i]);
    return at;
}

/* Execute: status, sub (one operation: its own; several: graph), dtype,
 * ntensors, the main operation's tensors, then its sub and the graph's
 * operation count. An unknown plan: status, sub none, no tensors. */
static unsigned cdg_fill(uint64_t *a, cudnnStatus_t r, cudnnBackendDescriptor_t plan)
{
    struct cdg_val v;
    a[0] = (uint64_t)r;
    a[1] = a[2] = a[3] = 0;
    if (opp_pmap_get(&cdg_map, plan, &v) != 0 || v.type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR ||
        !v.nops)
        return 4;
    a[1] = v.nops == 1 ? v.sub : OPP_SUB_GRAPH;
    unsigned at = 4;
    for (int i = 0; i < CDG_T; i++) {
        if (i == 1 && v.sub == OPP_SUB_ELTWISE)
            continue; /* a unary pointwise operation: x, y */
        at = cdg_put(a, at, &v.t[i]);
        a[3]++;
        if (!a[2])
            a[2] = v.t[i].dtype;
    }
    a[at++] = v.sub;
    a[at++] = v.nops;
    return at;
}
_Static_assert(4 + CDG_T * (1 + CDG_RANK) + 2 <= OPP_MAX_ARGS, "execute's arguments fit");

OPP_DEFINE_WRAPPERS(OPP_CUDNN_GRAPH_FUNCS)

#endif /* OPP_HAVE_CUDNN */
