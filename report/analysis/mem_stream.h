/* Memory over time found as a full trace is read (`opprof export
 * memory`, the plots of `export html`), a consumer of the pass (pass.h):
 * each device's series is the first read's (stream_meta.h: the device
 * memory records, sized, and their series); the CPU's (PyTorch's
 * allocator: the MEMORY calls of every process) is the calls sorted by
 * time beyond memory (extsort.h) and sized as they are walked, so that its
 * points are written as read, never held; the operators that allocated
 * most are added up per operator name in a second read of the calls,
 * with the device records joined to their calls (gpu_join.h). Memory
 * bounded by the device records, the operators named and the calls still
 * open, not by the calls. */
#ifndef OPP_MEM_STREAM_H
#define OPP_MEM_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/stream_meta.h"

/* Which series: a device (>= 0), the CPU, or the first device and else
 * the CPU (as torch's export_memory_timeline takes cuda:0 when there is
 * one, else cpu). */
#define OPP_MEM_FIRST (-1)
#define OPP_MEM_CPU (-2)

struct opp_mem_stream;

/* Allocations charged to one operator. */
struct opp_memtop {
    uint32_t name; /* string id */
    int64_t bytes;
    uint64_t allocs;
};

/* A series: bytes allocated minus freed since the trace began, after
 * each record (a device's: every process's records of it; the CPU's:
 * every process's MEMORY calls). */
struct opp_memline {
    int cpu;
    uint32_t device;
    uint64_t npts, first_ns, last_ns;
    int64_t peak, final; /* peak is at least 0 */
    uint64_t peak_ns;    /* the first point at the peak (peak > 0) */
    /* after a read with tops: the operators that allocated in it, most
     * bytes first (then by string id). A device allocation is charged to
     * the innermost call around the CUDA API call that made it which is
     * not itself a CUDA API call (a library operator or an NVTX range),
     * else that API call; a CPU one to the call open around it on its
     * thread, else its own name ("[memory]"). */
    const struct opp_memtop *tops;
    size_t ntops;
};

/* A consumer of pass p (opp_pass_open), which outlives it; NULL when out
 * of memory (err). */
struct opp_pass;
struct opp_mem_stream *opp_mem_stream_over(struct opp_pass *p, char *err, size_t errlen);
/* Its pass's model (the series' names and operators'). */
const struct opp_model *opp_mem_stream_model(const struct opp_mem_stream *s);
/* The reads of the calls what is asked needs: cpu the CPU's series, tops
 * the operators that allocated most in every series. 0; 1 when the pass
 * cannot read the trace this way (no room for the temporary files, an
 * owner the join cannot tell; err says why); -1 on error (err). */
int opp_mem_stream_read(struct opp_mem_stream *s, int cpu, int tops, char *err, size_t errlen);
/* Series which (a device, OPP_MEM_CPU, OPP_MEM_FIRST: the CPU's known
 * after a read with cpu) in *l: 1, or 0 when the trace has none. */
int opp_mem_stream_find(const struct opp_mem_stream *s, int64_t which, struct opp_memline *l);
/* Each point of l in time order to each (its non-zero stops the walk and
 * is returned). 0, or -errno. */
int opp_mem_stream_walk(struct opp_mem_stream *s, const struct opp_memline *l,
                        int (*each)(void *ctx, uint64_t time_ns, int64_t bytes), void *ctx);
void opp_mem_stream_free(struct opp_mem_stream *s);

#endif
