/* XNNPACK wrappers, generated from xnnpack_table.h. */
#include "agent.h"

/* enum xnn_status xnn_run_operator(xnn_operator_t, pthreadpool_t) */
#define XNN_RUN(name)                                                                              \
    OPP_WRAP_RET(int, name, (void *op, void *threadpool), (op, threadpool), 1,                    \
                 ((uint64_t)(int64_t)r_))

#define OPP_XNNPACK_DEFINE(name, lib, kind, flags, dtype, cls) cls(name)
OPP_XNNPACK_FUNCS(OPP_XNNPACK_DEFINE)
