/* Every intercepted entry point, from each library's table: the ids used
 * in records and the descriptions sent to the collector. Adding a library
 * is adding its table here. */
#ifndef OPP_FUNCS_H
#define OPP_FUNCS_H

#include "blas_table.h"

#define OPP_ALL_FUNCS(X) OPP_BLAS_FUNCS(X)

enum opp_fn_id {
#define OPP_FN_ENUM(name, ...) OPP_FN_##name,
    OPP_ALL_FUNCS(OPP_FN_ENUM)
#undef OPP_FN_ENUM
    OPP_FN_COUNT
};

struct opp_fn_info {
    const char *name, *lib;
    uint32_t kind, dtype;
};
extern const struct opp_fn_info opp_fn_info[OPP_FN_COUNT];

#endif
