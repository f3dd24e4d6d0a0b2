/* Shapes and FLOPs per operator kind (see ops.h and docs/FORMAT.md). */
#include "ops.h"

#include <stdio.h>

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

void opp_op_shapes(uint32_t kind, const uint64_t *a, uint32_t nargs, struct opp_shapes *s)
{
    s->n = 0;
    switch (kind) {
    case OPP_OP_GEMM: /* C[M,N] = op(A)[M,K] op(B)[K,N] */
        if (nargs < 3)
            return;
        s->n = 3;
        set2(s, 0, (int64_t)a[0], (int64_t)a[2]);
        set2(s, 1, (int64_t)a[2], (int64_t)a[1]);
        set2(s, 2, (int64_t)a[0], (int64_t)a[1]);
        return;
    case OPP_OP_GEMV: { /* y = op(A) x, A stored M x N */
        if (nargs < 2)
            return;
        int t = nargs >= 3 && (a[2] == 'T' || a[2] == 'C'); /* unknown: as given */
        int64_t rows = (int64_t)(t ? a[1] : a[0]), cols = (int64_t)(t ? a[0] : a[1]);
        s->n = 3;
        set2(s, 0, rows, cols);
        set1(s, 1, cols);
        set1(s, 2, rows);
        return;
    }
    case OPP_OP_DOT:
    case OPP_OP_AXPY:
        if (nargs < 1)
            return;
        s->n = 2;
        set1(s, 0, (int64_t)a[0]);
        set1(s, 1, (int64_t)a[0]);
        return;
    case OPP_OP_SCAL:
        if (nargs < 1)
            return;
        s->n = 1;
        set1(s, 0, (int64_t)a[0]);
        return;
    default:
        return;
    }
}

uint64_t opp_op_flops(uint32_t kind, uint32_t dtype, const uint64_t *a, uint32_t nargs)
{
    int cplx = dtype == OPP_DT_C64 || dtype == OPP_DT_C128;
    uint64_t f = cplx ? 8 : 2; /* per multiply-add */
    switch (kind) {
    case OPP_OP_GEMM:
        return nargs >= 3 ? f * a[0] * a[1] * a[2] : 0;
    case OPP_OP_GEMV:
        return nargs >= 2 ? f * a[0] * a[1] : 0;
    case OPP_OP_DOT:
    case OPP_OP_AXPY:
        return nargs >= 1 ? f * a[0] : 0;
    case OPP_OP_SCAL: /* one multiply per element; complex x complex is 6 */
        return nargs >= 1 ? (cplx ? 6 : 1) * a[0] : 0;
    default:
        return 0;
    }
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

const char *opp_op_kind_name(uint32_t kind)
{
    static const char *names[] = {"plain", "gemm", "gemv", "dot", "axpy", "scal", "cuda_api"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "unknown";
}

const char *opp_dtype_name(uint32_t dtype)
{
    static const char *names[] = {"", "float32", "float64", "complex64", "complex128"};
    return dtype <= OPP_DT_MAX ? names[dtype] : "unknown";
}
