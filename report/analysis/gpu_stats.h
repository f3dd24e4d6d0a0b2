/* What the GPUs did, per device, stream and kernel name: busy time (the
 * union of the intervals of kernels, memcpy and memset), idle share and
 * the largest idle gaps, estimated occupancy and launch delay. The base of
 * the JSON report's "gpu" object and of `opprof report --gpu`. */
#ifndef OPP_GPU_STATS_H
#define OPP_GPU_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/aggregate.h"
#include "analysis/model.h"

#define OPP_GPU_GAPS_MAX 5 /* idle gaps kept per device */

struct opp_gpu_gap {
    uint64_t start_ns, end_ns;
    uint32_t next; /* the name (string id) of the op that ended the gap */
};

struct opp_gpu_dev_stats {
    uint32_t device;
    const struct opp_gpu_device *info; /* NULL when no DEVICE record described it */
    uint64_t ops, kernels;   /* kernels, memcpy and memset; kernels alone */
    uint64_t kernel_ns;      /* kernel durations summed */
    uint64_t busy_ns;        /* union of the ops' intervals */
    uint64_t first_ns, last_ns; /* first op's start, last op's end (0 without ops) */
    double idle_share;       /* 1 - busy / (last - first); 0 when that span is 0 */
    int has_memory;          /* the model has a memory series for it */
    int64_t peak_memory, final_memory; /* of that series (the whole trace) */
    struct opp_gpu_gap gaps[OPP_GPU_GAPS_MAX]; /* largest first, ties earliest first */
    size_t ngaps;
};

struct opp_gpu_stream_stats {
    uint32_t proc; /* index in model->procs: stream ids are per process */
    uint32_t device, stream;
    uint64_t ops, kernels, kernel_ns, busy_ns;
};

struct opp_gpu_stats {
    struct opp_gpu_dev_stats *devs; /* sorted by device id: those with ops or memory records */
    size_t ndevs;
    struct opp_gpu_stream_stats *streams; /* by process, device, stream */
    size_t nstreams;
    uint64_t ops, kernels, kernel_ns;
};

void opp_gpu_stats_free(struct opp_gpu_stats *s);
/* The stats of device in s (found by search: a stream's device), NULL when
 * it has none. */
const struct opp_gpu_dev_stats *opp_gpu_stats_dev(const struct opp_gpu_stats *s, uint32_t device);

struct opp_kernel_stats {
    const char *name; /* points into the model */
    uint64_t count, total_ns;
    double occupancy;  /* mean estimate over the launches on described devices; -1: none */
    uint64_t delays;   /* launches attached to their API call */
    double delay_sum_ns; /* of start - the API call's end: negative when the kernel
                            started before the call returned */
    int64_t delay_max_ns;
};

/* Theoretical occupancy of a launch: active warps per SM / the SM's maximum,
 * the way CUDA's occupancy calculator estimates it, approximately. Blocks
 * per SM are the fewest of: warps per SM / warps per block (threads),
 * the SM's block limit, registers per SM / registers per block (registers
 * per thread * 32 rounded up to 256 per warp), and shared memory per SM /
 * (static + dynamic) shared memory per block. Not modelled: shared memory
 * allocation granularity and the per-block reservation, the L1/shared
 * carveout, warp allocation granularity of registers. 0 when the block is
 * larger than the device allows; -1 when d is NULL or says too little. */
double opp_gpu_occupancy(const struct opp_gpu_device *d, const struct opp_gpu_launch *l);

/* ---- op by op, as the GPU view's read gives them (gpu_stream.h) ----
 * A device's, a stream's or a kernel name's ops are given by start, then
 * in the order the trace has them. */

/* One op of a device or stream: busy time is the union of their intervals;
 * dev (NULL for a stream) keeps the largest gaps between them. */
struct opp_gpu_sweep {
    uint64_t busy, start, end;
    int any;
};
void opp_gpu_dev_op(struct opp_gpu_dev_stats *d, struct opp_gpu_sweep *w, uint64_t start,
                    uint64_t end, int kernel, uint32_t name);
void opp_gpu_stream_op(struct opp_gpu_stream_stats *st, struct opp_gpu_sweep *w, uint64_t start,
                       uint64_t end, int kernel);
/* The device's (or stream's) last op was given: its busy time, idle share;
 * the totals of s (a device only). */
void opp_gpu_dev_done(struct opp_gpu_dev_stats *d, struct opp_gpu_sweep *w,
                      struct opp_gpu_stats *s);
void opp_gpu_stream_done(struct opp_gpu_stream_stats *st, struct opp_gpu_sweep *w);
/* Devices with memory series but no ops added; devices sorted. 0 or -ENOMEM. */
int opp_gpu_stats_memory(const struct opp_model *m, struct opp_gpu_stats *s, size_t *cap);
/* The stats of a device new to s (appended), NULL when out of memory. */
struct opp_gpu_dev_stats *opp_gpu_dev_new(const struct opp_model *m, struct opp_gpu_stats *s,
                                          size_t *cap, uint32_t device);

/* One kernel launch of name: its duration, occupancy (< 0: unknown) and,
 * when has_delay, start minus its API call's end. */
struct opp_kernel_acc {
    double occ_sum;
    uint64_t occ_n;
};
void opp_kernel_op(struct opp_kernel_stats *k, struct opp_kernel_acc *a, uint64_t dur_ns,
                   double occupancy, int has_delay, int64_t delay_ns);
void opp_kernel_done(struct opp_kernel_stats *k, const struct opp_kernel_acc *a);
/* By total time descending, then name. */
void opp_kernel_stats_sort(struct opp_kernel_stats *k, size_t n);

#endif
