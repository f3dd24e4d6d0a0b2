/* NVTX annotations (nvtx.c): libopprof.so as the NVTX injection library. */
#ifndef OPP_NVTX_H
#define OPP_NVTX_H

/* From the constructor: point NVTX_INJECTION64_PATH at us (self_path) when
 * it is unset; when it names another library, keep it and say once that
 * NVTX ranges are not recorded. */
void opp_nvtx_start(const char *self_path);

#endif
