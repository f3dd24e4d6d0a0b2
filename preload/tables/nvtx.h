/* NVTX annotations (nvtx/nvtx.c): not wrappers but the callbacks that
 * libopprof.so installs as the process's NVTX injection library. One entry
 * per event shape; the report names each event by its message. The class
 * NVTX_CB defines nothing: the callbacks record through opp_enter/opp_leave
 * (push/pop) and opp_record_at (start/end, marks). */
#define OPP_NVTX_FUNCS(X, L)                                                                       \
    X(L, nvtx_range, NVTX, 0, NONE, NVTX_CB)                                                       \
    X(L, nvtx_mark, NVTX, 0, NONE, NVTX_CB)
