/* The GPU view's numbers found as a full trace is read (`opprof report
 * --gpu`), a consumer of the pass (pass.h): opp_gpu_stats and
 * opp_kernel_stats (gpu_stats.h) with memory bounded by the devices,
 * streams and kernel names, not by the ops. The pass's first read (the
 * processes, threads, names, devices and memory records); then one read
 * whose GPU work the pass joins to its calls (gpu_join.h), the selected
 * ops sorted beyond memory by device, by stream and by kernel name
 * (extsort.h), and swept in the order opp_gpu_stats sweeps them. */
#ifndef OPP_GPU_STREAM_H
#define OPP_GPU_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/aggregate.h"
#include "analysis/gpu_stats.h"
#include "analysis/stream_meta.h"

struct opp_gpu_stream;

/* A consumer of pass p (opp_pass_open), which outlives it; NULL when out
 * of memory (err). */
struct opp_pass;
struct opp_gpu_stream *opp_gpu_stream_over(struct opp_pass *p, char *err, size_t errlen);
/* The stats of the ops o selects. 0; 1 when the pass cannot read the
 * trace this way (no room for the temporary files; err says why); -1 on error (err). *k and *s are the
 * caller's to free; kernel names point into the model. k NULL: the
 * kernels' stats are not wanted (nk NULL too). */
int opp_gpu_stream_stats(struct opp_gpu_stream *g, const struct opp_agg_opts *o,
                         struct opp_gpu_stats *s, struct opp_kernel_stats **k, size_t *nk,
                         char *err, size_t errlen);
/* Each stream of s (opp_gpu_stream_stats's) drawn npx pixels wide over
 * its device's span (s's first_ns to last_ns), in one read of the GPU
 * records: px[i * npx + p] 1 where a kernel, copy or set of stream i
 * within the span covers pixel p (one shorter than a pixel: the pixel it
 * starts in); *nops the kernels, copies, sets, syncs and overhead records
 * read (a loaded model's gpu.nops). 0; 1 or -1 as above; *px the
 * caller's to free. */
int opp_gpu_stream_busy(struct opp_gpu_stream *g, const struct opp_gpu_stats *s, size_t npx,
                        uint8_t **px, uint64_t *nops, char *err, size_t errlen);
void opp_gpu_stream_free(struct opp_gpu_stream *g);

#endif
