/* XNNPACK (libXNNPACK.so.0): X(L, name, kind, flags, dtype, class) as every
 * table (funcs.h). The public API does not say what an operator computes,
 * so a run records its status only. */
#define OPP_XNNPACK_FUNCS(X, L) X(L, xnn_run_operator, PLAIN, S, NONE, XNN_RUN)

/* ---- signature classes: the prototype once, what is recorded ---- */

/* enum xnn_status xnn_run_operator(xnn_operator_t, pthreadpool_t) */
#define XNN_RUN(name)                                                                              \
    OPP_WRAP_RET(int, name, (void *op, void *threadpool), (op, threadpool),                        \
                 ((uint64_t)(int64_t)r_))
