/* Shapes and FLOPs per operator kind (see ops.h and docs/FORMAT.md). */
#include "ops.h"
#include "status_names.h"

#include <stdio.h>
#include <string.h>

static void set2(struct opp_shapes *s, int i, int64_t a, int64_t b)
{
    s->rank[i] = 2;
    s->dim[i][0] = a;
    s->dim[i][1] = b;
}

static void set1(struct opp_shapes *s, int i, int64_t a)
{
    s->rank[i] = 1;
    s->dim[i][0] = a;
}

static uint64_t prod(const int64_t *d, int rank)
{
    uint64_t p = 1;
    for (int i = 0; i < rank; i++)
        p *= d[i] > 0 ? (uint64_t)d[i] : 0;
    return p;
}

/* TENSORS: sub, dtype, ntensors, then rank, dims... per tensor. */
static void tensors(const uint64_t *a, uint32_t nargs, struct opp_shapes *s)
{
    s->n = 0;
    if (nargs < OPP_COL_TENSORS_FIRST)
        return;
    uint32_t at = OPP_COL_TENSORS_FIRST;
    for (uint64_t t = 0; t < a[OPP_COL_TENSORS_COUNT] && s->n < OPP_SHAPES_MAX && at < nargs; t++) {
        uint64_t rank = a[at++];
        if (rank > OPP_RANK_MAX || at + rank > nargs)
            return;
        s->rank[s->n] = (int)rank;
        for (uint64_t j = 0; j < rank; j++)
            s->dim[s->n][j] = (int64_t)a[at++];
        s->n++;
    }
}

/* A TORCH call's inputs: each one's tag (OPP_TIN_*) and the values
 * recorded after it: a tensor's sizes; aten::conv2d's integers' value and
 * integer lists' items (trace version 9 on). */
#define TORCH_IN_LONG 0x100u /* more values than a shape holds: none kept */

struct torch_in {
    struct opp_shapes v;           /* the values, rank their count (0: more than fit) */
    unsigned what[OPP_SHAPES_MAX]; /* OPP_TIN_*, TORCH_IN_LONG past OPP_RANK_MAX values */
    uint32_t dtype;                /* the first tensor's */
};

static void torch_read(const uint64_t *a, uint32_t nargs, struct torch_in *in)
{
    in->v.n = 0;
    in->dtype = 0;
    if (nargs < OPP_COL_TORCH_FIRST)
        return;
    uint32_t at = OPP_COL_TORCH_FIRST;
    struct opp_shapes *s = &in->v;
    for (uint64_t t = 0; t < a[OPP_COL_TORCH_COUNT] && s->n < OPP_SHAPES_MAX && at < nargs; t++) {
        uint64_t tag = a[at++];
        unsigned rank = OPP_TIN_RANK(tag);
        if (tag >> 24 || at + rank > nargs)
            return;
        if (OPP_TIN_WHAT(tag) == OPP_TIN_TENSOR && !in->dtype)
            in->dtype = OPP_TIN_DTYPE(tag);
        in->what[s->n] = rank <= OPP_RANK_MAX ? OPP_TIN_WHAT(tag) : TORCH_IN_LONG;
        s->rank[s->n] = rank <= OPP_RANK_MAX ? (int)rank : 0;
        for (unsigned j = 0; j < rank; j++, at++)
            if (j < OPP_RANK_MAX)
                s->dim[s->n][j] = (int64_t)a[at];
        s->n++;
    }
}

/* TORCH shapes as torch.profiler's record_shapes gives them: a tensor's
 * sizes, [] for anything else. */
static void torch_inputs(const uint64_t *a, uint32_t nargs, struct opp_shapes *s)
{
    struct torch_in in;
    torch_read(a, nargs, &in);
    *s = in.v;
    for (int i = 0; i < s->n; i++)
        if (in.what[i] != OPP_TIN_TENSOR)
            s->rank[i] = 0;
}

/* A graph's main operation (the sub after its tensors), else none. */
static uint64_t graph_sub(const uint64_t *a, uint32_t nargs)
{
    uint32_t at = OPP_COL_TENSORS_FIRST;
    for (uint64_t t = 0; nargs >= OPP_COL_TENSORS_FIRST && t < a[OPP_COL_TENSORS_COUNT] && at < nargs;
         t++)
        at += 1 + (uint32_t)(a[at] <= OPP_RANK_MAX ? a[at] : nargs);
    return at < nargs && a[at] != OPP_SUB_GRAPH ? a[at] : OPP_SUB_NONE;
}

void opp_op_shapes(uint32_t kind, const uint64_t *a, uint32_t nargs, struct opp_shapes *s)
{
    nargs = opp_op_args(kind, &a, nargs);
    s->n = 0;
    switch (opp_kind_base(kind)) {
    case OPP_OP_GEMM: { /* C[M,N] = op(A)[M,K] op(B)[K,N], batched: [batch, ...] */
        if (nargs <= OPP_COL_GEMM_K)
            return;
        int64_t m = (int64_t)a[OPP_COL_GEMM_M], n = (int64_t)a[OPP_COL_GEMM_N],
                k = (int64_t)a[OPP_COL_GEMM_K];
        s->n = 3;
        set2(s, 0, m, k);
        set2(s, 1, k, n);
        set2(s, 2, m, n);
        if (nargs > OPP_COL_GEMM_BATCH && a[OPP_COL_GEMM_BATCH] > 1)
            for (int i = 0; i < 3; i++) {
                s->dim[i][2] = s->dim[i][1];
                s->dim[i][1] = s->dim[i][0];
                s->dim[i][0] = (int64_t)a[OPP_COL_GEMM_BATCH];
                s->rank[i] = 3;
            }
        return;
    }
    case OPP_OP_GEMV: { /* y = op(A) x, A stored M x N */
        if (nargs <= OPP_COL_GEMV_N)
            return;
        uint64_t tr = nargs > OPP_COL_GEMV_TRANS ? a[OPP_COL_GEMV_TRANS] : 0;
        int t = tr == 'T' || tr == 'C'; /* unknown: as given */
        int64_t m = (int64_t)a[OPP_COL_GEMV_M], n = (int64_t)a[OPP_COL_GEMV_N];
        int64_t rows = t ? n : m, cols = t ? m : n;
        s->n = 3;
        set2(s, 0, rows, cols);
        set1(s, 1, cols);
        set1(s, 2, rows);
        return;
    }
    case OPP_OP_DOT:
    case OPP_OP_AXPY:
        if (nargs <= OPP_COL_VEC_N)
            return;
        s->n = 2;
        set1(s, 0, (int64_t)a[OPP_COL_VEC_N]);
        set1(s, 1, (int64_t)a[OPP_COL_VEC_N]);
        return;
    case OPP_OP_SCAL:
        if (nargs <= OPP_COL_VEC_N)
            return;
        s->n = 1;
        set1(s, 0, (int64_t)a[OPP_COL_VEC_N]);
        return;
    case OPP_OP_TENSORS:
        tensors(a, nargs, s);
        return;
    case OPP_OP_TORCH:
        torch_inputs(a, nargs, s);
        return;
    case OPP_OP_COLL:
        if (nargs <= OPP_COL_COLL_COUNT || a[OPP_COL_COLL_OP] == OPP_COLL_NONE ||
            a[OPP_COL_COLL_OP] == OPP_COLL_GROUP_START ||
            a[OPP_COL_COLL_OP] == OPP_COLL_GROUP_END) /* NONE: communicator set-up */
            return;
        s->n = 1;
        set1(s, 0, (int64_t)a[OPP_COL_COLL_COUNT]);
        return;
    default:
        return;
    }
}

/* Dim j of tensor i, 0 when the call recorded no such dim. */
static double dim(const struct opp_shapes *s, int i, int j)
{
    return i < s->n && j < s->rank[i] && s->dim[i][j] > 0 ? (double)s->dim[i][j] : 0;
}

/* LAWN 41's count of a routine's multiplications and additions, weighted
 * as its tables do: 1 each in real arithmetic, 6 and 2 in complex. */
static double lawn(int cplx, double muls, double adds)
{
    return cplx ? 6 * muls + 2 * adds : muls + adds;
}

/* LU of an m x n matrix (LAWN 41, xGETRF). */
static double getrf_flops(int cplx, double m, double n)
{
    double a = m < n ? m : n, b = m < n ? n : m; /* min, max */
    return lawn(cplx, 0.5 * a * (a * (b - a / 3 - 1) + b) + 2 * a / 3,
                0.5 * a * (a * (b - a / 3) - b) + a / 6);
}

/* BLAS and LAPACK subs (format.h): level 1 and 2 by their multiply-adds
 * (2 FLOPs each, 8 complex, as GEMM); level 3 and LAPACK by LAWN 41's
 * formulas for the routine. The tensors are those format.h lists. */
static uint64_t linalg_flops(uint64_t sub, int cplx, const struct opp_shapes *s)
{
    double f = cplx ? 8 : 2, n = dim(s, 0, 0), r = 0;
    switch (sub) {
    case OPP_SUB_NRM2: /* |x|^2: a multiply and an add per real part */
        r = (cplx ? 4 : 2) * n;
        break;
    case OPP_SUB_ASUM:
        r = (cplx ? 2 : 1) * n;
        break;
    case OPP_SUB_ROT: /* 4 multiplies and 2 adds per pair, by real c and s */
        r = (cplx ? 12 : 6) * n;
        break;
    case OPP_SUB_RSCAL:
        r = 2 * n;
        break;
    case OPP_SUB_TRMV:
        r = lawn(cplx, n * (n + 1) / 2, n * (n - 1) / 2);
        break;
    case OPP_SUB_SYMV:
        r = f * n * n;
        break;
    case OPP_SUB_GER:
        r = f * dim(s, 2, 0) * dim(s, 2, 1);
        break;
    case OPP_SUB_SYR:
        r = f * dim(s, 1, 0) * (dim(s, 1, 0) + 1) / 2;
        break;
    case OPP_SUB_SYR2:
        r = f * dim(s, 2, 0) * (dim(s, 2, 0) + 1);
        break;
    case OPP_SUB_SYMM: /* C [m, n] += A [ka, ka] B */
        r = f * dim(s, 2, 0) * dim(s, 2, 1) * n;
        break;
    case OPP_SUB_SYRK: { /* C [n, n] += A [n, k] A^T, one triangle */
        double k = dim(s, 0, 1);
        r = f * k * n * (n + 1) / 2;
        break;
    }
    case OPP_SUB_SYR2K: {
        double k = dim(s, 0, 1);
        r = lawn(cplx, k * n * n, k * n * n + n);
        break;
    }
    case OPP_SUB_TRMM: { /* A [ka, ka] on B [m, n]: B's other dim times a triangle */
        double b = dim(s, 1, 0) * dim(s, 1, 1), other = n > 0 ? b / n : 0;
        r = lawn(cplx, other * n * (n + 1) / 2, other * n * (n - 1) / 2);
        break;
    }
    case OPP_SUB_GESV: { /* xGETRF, then xGETRS on nrhs columns */
        double nrhs = dim(s, 1, 1);
        r = getrf_flops(cplx, n, n) + lawn(cplx, nrhs * n * n, nrhs * n * (n - 1));
        break;
    }
    case OPP_SUB_GETRF:
        r = getrf_flops(cplx, n, dim(s, 0, 1));
        break;
    case OPP_SUB_POTRF:
        r = lawn(cplx, n * ((n / 6 + 0.5) * n + 1.0 / 3), n * (n / 6 * n - 1.0 / 6));
        break;
    case OPP_SUB_GEQRF: {
        double m = n, c = dim(s, 0, 1);
        r = m > c ? lawn(cplx, c * (c * (0.5 - c / 3 + m) + m + 23.0 / 6),
                         c * (c * (0.5 - c / 3 + m) + 5.0 / 6))
                  : lawn(cplx, m * (m * (-0.5 - m / 3 + c) + 2 * c + 23.0 / 6),
                         m * (m * (-0.5 - m / 3 + c) + c + 5.0 / 6));
        break;
    }
    case OPP_SUB_ORGQR: { /* Q [m, n] from k reflectors */
        double m = n, c = dim(s, 0, 1), k = dim(s, 1, 0);
        r = lawn(cplx, k * (2 * m * c + 2 * c - 5.0 / 3 + k * (2.0 / 3 * k - (m + c) - 1)),
                 k * (2 * m * c + c - m + 1.0 / 3 + k * (2.0 / 3 * k - (m + c))));
        break;
    }
    default:
        break;
    }
    return r > 0 ? (uint64_t)(r + 0.5) : 0;
}

/* Whether input i was recorded as a tensor with its sizes. */
static int torch_tensor(const struct torch_in *in, int i)
{
    return i < in->v.n && in->what[i] == OPP_TIN_TENSOR;
}

/* The product of sizes d[0..n), in torch's uint64_t arithmetic. */
static uint64_t torch_numel(const int64_t *d, int n)
{
    uint64_t p = 1;
    for (int i = 0; i < n; i++)
        p *= (uint64_t)d[i];
    return p;
}

/* Matrix products (torch's computeFlops): 2 times the product of mat1's
 * sizes but its last (the overlap) and, batched (bmm, baddbmm), its first
 * (the batch, which mat2's sizes bring), times mat2's sizes. mat1 is
 * input 0, or 1 after addmm's and baddbmm's self. */
static uint64_t torch_gemm(const struct torch_in *in, int self, int batched)
{
    if (in->v.n < 2 + self || !torch_tensor(in, 0) || !torch_tensor(in, 1) ||
        (self && !torch_tensor(in, 2)))
        return 0;
    const int64_t *m1 = in->v.dim[self], *m2 = in->v.dim[self + 1];
    int r1 = in->v.rank[self], r2 = in->v.rank[self + 1];
    if (!r1 || !m1[r1 - 1] || (batched && !m1[0]))
        return 0;
    uint64_t f = torch_numel(m1, r1) / (uint64_t)m1[r1 - 1];
    if (batched)
        f /= (uint64_t)m1[0];
    return f * torch_numel(m2, r2) * 2;
}

/* An integer list input of n items (a value of trace version 9). */
static const int64_t *torch_ints(const struct torch_in *in, int i, int n)
{
    return i < in->v.n && in->what[i] == OPP_TIN_LIST && in->v.rank[i] == n ? in->v.dim[i] : NULL;
}

/* aten::conv2d (input, weight, bias, stride, padding, dilation, groups):
 * 2 * N * OH * OW * KH * KW * C_in * C_out / groups, with torch's
 * unsigned arithmetic and its checks (4-D input and weight, two-item
 * stride, padding and dilation, no zero stride or groups). */
static uint64_t torch_conv2d(const struct torch_in *in)
{
    const struct opp_shapes *v = &in->v;
    if (v->n < 7 || !torch_tensor(in, 0) || !torch_tensor(in, 1) || v->rank[0] != 4 ||
        v->rank[1] != 4 || in->what[6] != OPP_TIN_SCALAR || v->rank[6] != 1)
        return 0;
    const int64_t *x = v->dim[0], *w = v->dim[1], *st = torch_ints(in, 3, 2),
                  *pad = torch_ints(in, 4, 2), *dil = torch_ints(in, 5, 2);
    uint64_t groups = (uint64_t)v->dim[6][0];
    if (!st || !pad || !dil || !groups || (uint64_t)st[0] * (uint64_t)st[1] == 0)
        return 0;
    uint64_t n = (uint64_t)x[0], c = (uint64_t)x[1], h = (uint64_t)x[2], wd = (uint64_t)x[3];
    uint64_t oc = (uint64_t)w[0], kh = (uint64_t)w[2], kw = (uint64_t)w[3];
    uint64_t oh =
        (h + 2 * (uint64_t)pad[0] - (uint64_t)dil[0] * (kh - 1) - 1) / (uint64_t)st[0] + 1;
    uint64_t ow =
        (wd + 2 * (uint64_t)pad[1] - (uint64_t)dil[1] * (kw - 1) - 1) / (uint64_t)st[1] + 1;
    return 2 * n * oh * ow * kh * kw * c * oc / groups;
}

/* A TORCH call's FLOPs as torch.profiler gives them (ops.h), from its
 * own arguments. */
static uint64_t torch_flops(const char *name, const uint64_t *a, uint32_t nargs)
{
    static const char *const ops[] = {"mm", "addmm", "bmm", "baddbmm", "mul", "add", "conv2d"};
    if (!name || strncmp(name, "aten::", 6))
        return 0;
    size_t k = 0;
    while (k < sizeof ops / sizeof *ops && strcmp(name + 6, ops[k]))
        k++;
    if (k == sizeof ops / sizeof *ops)
        return 0; /* the inputs read only for these */
    struct torch_in in;
    torch_read(a, nargs, &in);
    if (k < 4) /* mm, addmm, bmm, baddbmm */
        return torch_gemm(&in, (int)(k & 1), k >= 2);
    if (k < 6) /* mul, add: an operation per element of input 0 */
        return torch_tensor(&in, 0) ? torch_numel(in.v.dim[0], in.v.rank[0]) : 0;
    return torch_conv2d(&in);
}

uint64_t opp_op_flops(uint32_t kind, uint32_t dtype, const char *name, const uint64_t *a,
                      uint32_t nargs)
{
    if (opp_kind_base(kind) == OPP_OP_TORCH) { /* no dtype to read from its tensors */
        nargs = opp_op_args(kind, &a, nargs);
        return torch_flops(name, a, nargs);
    }
    dtype = opp_op_dtype(kind, dtype, a, nargs);
    nargs = opp_op_args(kind, &a, nargs);
    int cplx = dtype == OPP_DT_C64 || dtype == OPP_DT_C128 || dtype == OPP_DT_C32;
    uint64_t f = cplx ? 8 : 2; /* per multiply-add */
    switch (opp_kind_base(kind)) {
    case OPP_OP_GEMM: {
        if (nargs <= OPP_COL_GEMM_K)
            return 0;
        uint64_t batch = nargs > OPP_COL_GEMM_BATCH ? a[OPP_COL_GEMM_BATCH] : 0;
        return f * a[OPP_COL_GEMM_M] * a[OPP_COL_GEMM_N] * a[OPP_COL_GEMM_K] * (batch ? batch : 1);
    }
    case OPP_OP_GEMV:
        return nargs > OPP_COL_GEMV_N ? f * a[OPP_COL_GEMV_M] * a[OPP_COL_GEMV_N] : 0;
    case OPP_OP_DOT:
    case OPP_OP_AXPY:
        return nargs > OPP_COL_VEC_N ? f * a[OPP_COL_VEC_N] : 0;
    case OPP_OP_SCAL: /* one multiply per element; complex x complex is 6 */
        return nargs > OPP_COL_VEC_N ? (cplx ? 6 : 1) * a[OPP_COL_VEC_N] : 0;
    case OPP_OP_TORCH:
        return torch_flops(name, a, nargs);
    case OPP_OP_TENSORS: {
        struct opp_shapes s;
        if (nargs <= OPP_COL_TENSORS_SUB) /* a failed call: its status alone */
            return 0;
        tensors(a, nargs, &s);
        uint64_t sub = a[OPP_COL_TENSORS_SUB];
        /* several fused operations: the FLOPs of the main one */
        switch (sub == OPP_SUB_GRAPH ? graph_sub(a, nargs) : sub) {
        case OPP_SUB_CONV:
        case OPP_SUB_CONV_BWD_DATA:
        case OPP_SUB_CONV_BWD_FILTER:
        case OPP_SUB_DECONV:
        case OPP_SUB_INNER_PRODUCT: {
            /* tensors in the forward sense: src (x/dx), weights (w/dw), dst (y/dy);
               a deconvolution's multiply-adds run over its (smaller) src */
            int t = sub == OPP_SUB_DECONV ? 0 : 2; /* a graph has no deconvolution */
            if (s.n < 3 || s.rank[t] < 2 || s.dim[t][1] <= 0)
                return 0;
            return f * prod(s.dim[t], s.rank[t]) * prod(s.dim[1], s.rank[1]) /
                   (uint64_t)s.dim[t][1];
        }
        case OPP_SUB_MATMUL:
            if (s.n < 3 || s.rank[0] < 1)
                return 0;
            return f * prod(s.dim[2], s.rank[2]) * prod(&s.dim[0][s.rank[0] - 1], 1);
        default:
            return sub >= OPP_SUB_NRM2 && sub <= OPP_SUB_ORGQR ? linalg_flops(sub, cplx, &s) : 0;
        }
    }
    default:
        return 0;
    }
}

uint32_t opp_op_dtype(uint32_t kind, uint32_t fn_dtype, const uint64_t *a, uint32_t nargs)
{
    nargs = opp_op_args(kind, &a, nargs);
    uint64_t d = 0;
    switch (opp_kind_base(kind)) {
    case OPP_OP_GEMM:
        d = nargs > OPP_COL_GEMM_AB_TYPE ? a[OPP_COL_GEMM_AB_TYPE] : 0;
        break;
    case OPP_OP_TENSORS:
        d = nargs > OPP_COL_TENSORS_DTYPE ? a[OPP_COL_TENSORS_DTYPE] : 0;
        break;
    case OPP_OP_COLL:
        d = nargs > OPP_COL_COLL_DTYPE ? a[OPP_COL_COLL_DTYPE] : 0;
        break;
    case OPP_OP_TORCH: { /* its first tensor's */
        struct torch_in in;
        torch_read(a, nargs, &in);
        d = in.dtype;
        break;
    }
    default:
        break;
    }
    return d && d <= OPP_DT_MAX ? (uint32_t)d : fn_dtype;
}

uint64_t opp_op_bytes(uint32_t kind, const uint64_t *a, uint32_t nargs)
{
    const uint64_t *c = a;
    uint32_t nc = opp_op_args(kind, &c, nargs);
    if (opp_kind_base(kind) != OPP_OP_COLL || nc <= OPP_COL_COLL_COUNT)
        return 0; /* the dtype is not looked for: a torch op's is read from its tensors */
    return c[OPP_COL_COLL_COUNT] * opp_dtype_size(opp_op_dtype(kind, 0, a, nargs));
}

static int coll_per_rank(uint64_t c)
{
    return c == OPP_COLL_ALL_GATHER || c == OPP_COLL_REDUCE_SCATTER || c == OPP_COLL_ALL_TO_ALL;
}

/* The communicator's size a COLL call recorded, 0 when unknown. */
static uint64_t coll_nranks(const uint64_t *a, uint32_t nargs)
{
    return nargs > OPP_COL_COLL_NRANKS ? a[OPP_COL_COLL_NRANKS] : 0;
}

uint64_t opp_coll_alg_bytes(uint32_t kind, const uint64_t *a, uint32_t nargs)
{
    uint64_t b = opp_op_bytes(kind, a, nargs);
    nargs = opp_op_args(kind, &a, nargs);
    if (!b || nargs <= OPP_COL_COLL_OP)
        return 0;
    uint64_t c = a[OPP_COL_COLL_OP], n = coll_nranks(a, nargs);
    if (c == OPP_COLL_GROUP_START || c == OPP_COLL_GROUP_END)
        return 0;
    return coll_per_rank(c) && n ? b * n : b;
}

double opp_coll_bus_factor(uint32_t kind, const uint64_t *a, uint32_t nargs)
{
    nargs = opp_op_args(kind, &a, nargs);
    uint64_t nr = coll_nranks(a, nargs);
    if (opp_kind_base(kind) != OPP_OP_COLL || !nr)
        return 1.0;
    double n = (double)nr;
    if (a[OPP_COL_COLL_OP] == OPP_COLL_ALL_REDUCE)
        return 2.0 * (n - 1) / n;
    return coll_per_rank(a[OPP_COL_COLL_OP]) ? (n - 1) / n : 1.0;
}

int opp_shapes_format(const struct opp_shapes *s, char *out, size_t cap)
{
    size_t n = 0;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int k = snprintf(out + n, n < cap ? cap - n : 0, __VA_ARGS__);                             \
        if (k > 0)                                                                                 \
            n += (size_t)k;                                                                        \
    } while (0)
    PUT("[");
    for (int i = 0; i < s->n; i++) {
        PUT("%s[", i ? ", " : "");
        for (int j = 0; j < s->rank[i]; j++)
            PUT("%s%lld", j ? ", " : "", (long long)s->dim[i][j]);
        PUT("]");
    }
    PUT("]");
#undef PUT
    return n < cap ? 0 : -1;
}

#define NAMED(list, i) ((i) < sizeof list / sizeof list[0] ? list[i] : NULL)

const char *opp_op_kind_name(uint32_t kind)
{
    static const char *names[] = {"plain", "gemm", "gemv", "dot", "axpy", "scal",
                                  "cuda_api", "tensors", "coll", "nvtx", "torch", "memory"};
    const char *n = NAMED(names, opp_kind_base(kind));
    return n ? n : "unknown";
}

const char *opp_dtype_name(uint32_t dtype)
{
    static const char *names[] = {"", "float32", "float64", "complex64", "complex128",
                                  "float16", "bfloat16", "tf32", "int8", "uint8", "int32",
                                  "int64", "float8_e4m3", "float8_e5m2", "complex32", "bool"};
    const char *n = NAMED(names, dtype);
    return n ? n : "unknown";
}

unsigned opp_dtype_size(uint32_t dtype)
{
    static const unsigned size[] = {0, 4, 8, 8, 16, 2, 2, 4, 1, 1, 4, 8, 1, 1, 4, 1};
    return dtype < sizeof size / sizeof size[0] ? size[dtype] : 0;
}

const char *opp_subop_name(uint32_t sub)
{
    static const char *names[] = {
        NULL, "convolution", "convolution_backward_data", "convolution_backward_weights",
        "deconvolution", "matmul", "inner_product", "eltwise", "pooling",
        "batch_normalization", "layer_normalization", "softmax", "reorder", "binary", "sum",
        "concat", "lrn", "rnn", "attention", "resampling", "reduction", "shuffle", "prelu",
        "fft", "graph", "nrm2", "asum", "rot", "rscal", "trmv", "symv", "ger", "syr", "syr2",
        "symm", "syrk", "syr2k", "trmm", "gesv", "getrf", "potrf", "geqrf", "orgqr",
        "workspace_query"};
    return NAMED(names, sub);
}

const char *opp_coll_name(uint32_t coll)
{
    static const char *names[] = {NULL, "all_reduce", "broadcast", "reduce", "all_gather",
                                  "reduce_scatter", "send", "recv", "all_to_all",
                                  "group_start", "group_end"};
    return NAMED(names, coll);
}

const char *opp_redop_name(uint32_t op)
{
    static const char *names[] = {NULL, "sum", "prod", "max", "min", "avg", "other"};
    return NAMED(names, op);
}

/* One switch per library, cases from the generated tables. */
#define STATUS_CASE(v, name) case v: return name;
#define STATUS_LIB(table)                                                                          \
    do {                                                                                           \
        switch (st) { table(STATUS_CASE) default: return NULL; }                                    \
    } while (0)

const char *opp_status_name(const char *lib, int64_t st)
{
    if (!lib)
        return NULL;
    if (!strcmp(lib, "cudart"))
        STATUS_LIB(OPP_STATUS_CUDART);
    if (!strcmp(lib, "cuda"))
        STATUS_LIB(OPP_STATUS_CUDA);
    if (!strcmp(lib, "cublas") || !strcmp(lib, "cublaslt"))
        STATUS_LIB(OPP_STATUS_CUBLAS);
    if (!strcmp(lib, "cudnn"))
        STATUS_LIB(OPP_STATUS_CUDNN);
    if (!strcmp(lib, "nccl"))
        STATUS_LIB(OPP_STATUS_NCCL);
    if (!strcmp(lib, "cufft"))
        STATUS_LIB(OPP_STATUS_CUFFT);
    if (!strcmp(lib, "onednn"))
        STATUS_LIB(OPP_STATUS_ONEDNN);
    if (!strcmp(lib, "xnnpack"))
        STATUS_LIB(OPP_STATUS_XNNPACK);
    return NULL;
}
#undef STATUS_LIB
#undef STATUS_CASE

void opp_nvtx_label(char *buf, size_t cap, const char *domain, const char *msg)
{
    const char *text = msg ? msg : "(unnamed range)";
    size_t n = strlen(text);
    /* emit_nvtx appends ", seq = N", ", op_id = N", ", sizes = [...]",
     * ", input_op_ids = [...]" in that order (PyTorch 1.13 to 2.x): cut at
     * the first of the numbered ones (sizes never come without an op id). */
    static const char *const tags[] = {", seq = ", ", op_id = "};
    for (size_t i = 0; i < sizeof tags / sizeof *tags; i++) {
        const char *at = strstr(text, tags[i]);
        size_t tl = strlen(tags[i]);
        if (at && (size_t)(at - text) < n && at[tl] >= '0' && at[tl] <= '9')
            n = (size_t)(at - text);
    }
    if (domain && domain[0])
        snprintf(buf, cap, "%.255s:%.*s", domain, (int)n, text);
    else
        snprintf(buf, cap, "%.*s", (int)n, text);
}

uint32_t opp_op_relabel(uint32_t kind, const uint64_t *a, uint32_t nargs)
{
    nargs = opp_op_args(kind, &a, nargs);
    if (opp_kind_base(kind) != OPP_OP_TENSORS || nargs <= OPP_COL_TENSORS_SUB)
        return 0;
    uint64_t sub = a[OPP_COL_TENSORS_SUB];
    if (sub == OPP_SUB_LWORK_QUERY)
        return OPP_SUB_LWORK_QUERY;
    return (kind & OPP_OPK_SUBNAME) && opp_subop_name((uint32_t)sub) ? (uint32_t)sub : 0;
}

int opp_op_label(uint32_t kind, const uint64_t *a, uint32_t nargs, const char *lib,
                 const char *entry, char *buf, size_t cap)
{
    uint32_t sub = opp_op_relabel(kind, a, nargs);
    if (sub == OPP_SUB_LWORK_QUERY)
        snprintf(buf, cap, "%s (workspace query)", entry);
    else if (sub)
        snprintf(buf, cap, "%s::%s", lib, opp_subop_name(sub));
    return sub != 0;
}

void opp_op_identity(uint32_t kind, const uint64_t *args, uint32_t nargs, uint64_t *out)
{
    for (uint32_t i = 0; i < nargs; i++)
        out[i] = args[i];
    if ((kind & OPP_OPK_EXTID) && nargs)
        out[nargs - 1] = 0;
    uint32_t own = (kind & OPP_OPK_STATUS) && nargs ? 1 : 0; /* the kind's first argument */
    switch (opp_kind_base(kind)) {
    case OPP_OP_CUDA_API:
        if (nargs > own + OPP_COL_CUDA_CORR)
            out[own + OPP_COL_CUDA_CORR] = 0;
        break;
    case OPP_OP_NVTX:
        for (uint32_t i = own + OPP_COL_NVTX_CATEGORY; i < nargs && i < own + OPP_COL_NVTX_COLS; i++)
            out[i] = 0;
        break;
    case OPP_OP_MEMORY: /* one node per allocation or free, not per block */
        for (uint32_t i = own + OPP_COL_MEM_ADDRESS; i < nargs && i < own + OPP_COL_MEM_COLS; i++)
            out[i] = 0;
        break;
    default:
        break;
    }
}
