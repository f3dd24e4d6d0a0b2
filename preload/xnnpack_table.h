/* XNNPACK (libXNNPACK.so.0): X(name, lib, kind, flags, dtype, class) as every
 * table (funcs.h). The public API does not say what an operator computes,
 * so a run records its status only. */
#define OPP_XNNPACK_FUNCS(X) X(xnn_run_operator, xnnpack, PLAIN, S, NONE, XNN_RUN)
