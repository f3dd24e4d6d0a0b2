/* Operator semantics shared by the report and the tests: how the argument
 * values recorded for an entry point become input shapes and FLOPs. */
#ifndef OPP_OPS_H
#define OPP_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

#define OPP_SHAPES_MAX 4
#define OPP_RANK_MAX 4

struct opp_shapes {
    int n;                        /* operands */
    int rank[OPP_SHAPES_MAX];     /* dims of each */
    int64_t dim[OPP_SHAPES_MAX][OPP_RANK_MAX];
};

/* Logical operand shapes (after transposition), e.g. gemm
 * [[M,K],[K,N],[M,N]]. n = 0 when the kind records none or args are short. */
void opp_op_shapes(uint32_t kind, const uint64_t *args, uint32_t nargs, struct opp_shapes *out);

/* Floating-point operations of one call (complex: 4 real multiplies and
 * 4 adds per complex multiply-add, so gemm is 8*M*N*K). */
uint64_t opp_op_flops(uint32_t kind, uint32_t dtype, const uint64_t *args, uint32_t nargs);

/* "[[300, 200], [200, 100], [300, 100]]" like torch's Input Shapes. */
int opp_shapes_format(const struct opp_shapes *s, char *out, size_t cap);

const char *opp_op_kind_name(uint32_t kind);
const char *opp_dtype_name(uint32_t dtype);

/* Normalise a transpose argument: CBLAS enum (111/112/113) or a Fortran
 * character ('n', 'T', ...) to 'N', 'T' or 'C'. */
static inline uint64_t opp_trans_code(int v)
{
    switch (v) {
    case 111: case 'n': case 'N': return 'N';
    case 112: case 't': case 'T': return 'T';
    case 113: case 'c': case 'C': return 'C';
    default: return '?';
    }
}

#endif
