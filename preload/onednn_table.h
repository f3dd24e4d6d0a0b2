/* oneDNN (libdnnl.so.2, what Debian's PyTorch runs convolutions with): one
 * line per entry point, X(name, lib, kind, flags, dtype, class) as every
 * table (funcs.h). Every primitive runs through dnnl_primitive_execute; the
 * class (preload/onednn.c) names it by primitive kind and records its
 * tensors. dnnl_primitive_destroy is interposed so that a primitive created
 * later at the same address is not described by the old one's cache entry. */
#define OPP_ONEDNN_FUNCS(X)                                                     \
    X(dnnl_primitive_execute, onednn, TENSORS, SN, F32, ONEDNN_EXECUTE)         \
    X(dnnl_primitive_destroy, onednn, PLAIN, S, NONE, ONEDNN_DESTROY)
