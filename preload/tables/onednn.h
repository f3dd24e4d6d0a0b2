/* oneDNN (libdnnl.so.2, what Debian's PyTorch runs convolutions with): one
 * line per entry point, X(L, name, kind, flags, dtype, class) as every
 * table (funcs.h). Every primitive runs through dnnl_primitive_execute; its
 * class (helpers in libs/onednn.c) names it by primitive kind and records its
 * tensors. dnnl_primitive_destroy is interposed so that a primitive created
 * later at the same address is not described by the old one's cache entry. */
#define OPP_ONEDNN_FUNCS(X, L)                                                                     \
    X(L, dnnl_primitive_execute, TENSORS, SN, F32, ONEDNN_EXECUTE)                                 \
    X(L, dnnl_primitive_destroy, PLAIN, S, NONE, ONEDNN_DESTROY)

/* ---- signature classes: the prototype once, what is recorded ---- */

/* dnnl_status_t dnnl_primitive_execute(const_dnnl_primitive_t, dnnl_stream_t,
 * int nargs, const dnnl_exec_arg_t *args) */
#define ONEDNN_EXECUTE(name)                                                                       \
    OPP_WRAP_RET_FILL(int, name, (const void *prim, void *stream, int nargs, const void *args),    \
                      (prim, stream, nargs, args), onednn_fill(a_, r_, prim))
/* dnnl_status_t dnnl_primitive_destroy(dnnl_primitive_t) */
#define ONEDNN_DESTROY(name)                                                                       \
    OPP_WRAP_RET(int, name, (void *prim), ((void *)onednn_forget(prim)), ((uint64_t)(int64_t)r_))
