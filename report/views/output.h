/* The outputs of `opprof report`: torch's key_averages().table() (table.c),
 * CSV (csv.c) and JSON (json.c), each written to a stream from an aggregate
 * (aggregate.h), and the GPU view (gpu_view.c, from gpu_stats.h). */
#ifndef OPP_OUTPUT_H
#define OPP_OUTPUT_H

#include <stdio.h>

#include "analysis/aggregate.h"
#include "analysis/gpu_stats.h"
#include "analysis/model.h"

struct opp_out_opts {
    int group_by_shape; /* the rows were grouped by shape: show them */
    int group_by_stack; /* the rows were grouped by stack: a Stack column (outermost
                           first, ';'-joined), CSV "stack", JSON "stack": [names] */
    int flops;          /* table: add Total FLOPs and GFLOP/s (TFLOP/s) columns */
    int show_lib;       /* table: add a Lib column last (blas, onednn, cublas...) */
    const struct opp_gpu_stats *gpu; /* JSON: the "gpu" object (null when NULL) */
    /* JSON: each thread's calls (by thread index), when the model has not
     * kept them (a trace read as it streams); NULL: the model's */
    const uint64_t *thread_events;
};

/* The table exactly as torch's _build_table lays it out: dashed separator,
 * header, separator, rows, separator, "Self CPU time total: ...". Every
 * column is right-aligned and followed by two spaces. Name is as wide as the
 * longest name + 4, at most 55 (longer names end in "..."); Input Shapes as
 * the longest shapes + 4, at most 80 (cut there); the others 12, or wider
 * when a value needs it. With flops: "Total <unit>" where the unit (FLOPs,
 * KFLOPs, MFLOPs, GFLOPs, TFLOPs, PFLOPs) is the largest power of 1000 not
 * above the smallest non-zero row, each row as "%.3f" in that unit or "--"
 * when it has none; and GFLOP/s = FLOPs / time in ns, the time being CUDA
 * total where the row has some, else CPU total (TFLOP/s, divided by 1000,
 * when some row reaches 1000 GFLOP/s). Like torch, both are left out when
 * no row has FLOPs. With show_lib, a last column Lib: the row's library. Like torch too, Self CUDA, Self CUDA %
 * (of the Self CUDA time total), CUDA total and CUDA time avg follow CPU
 * time avg when some row (before the limit) has Self CUDA time, and then
 * the footer adds "Self CUDA time total: ..."; so they do, at 0, when some
 * call is a CUDA call (a->cuda_calls) though no GPU work was recorded; CPU
 * Mem and Self CPU Mem (torch's _format_memory) when some row has Self CPU
 * Mem above 0, and CUDA Mem and Self CUDA Mem when some row has Self CUDA
 * Mem above 0, come in that order before # of Calls. Then, when some call did not return success, "Calls
 * that did not return success: N of M" and a table of a->statuses (Name,
 * # of Calls, Status: "name (value)", left-aligned). 0, or -EIO on a write
 * error. */
int opp_out_table(FILE *f, const struct opp_agg *a, const struct opp_out_opts *o);
/* When a's rows add up several processes, the line that says so and how
 * to pick one ("3 processes added up (the whole job's cost): --pid PID for
 * one, --by-process for each"), which the table prints above itself and
 * the JSON carries; else NULL. */
const char *opp_out_processes_note(const struct opp_agg *a, char *buf, size_t cap);

/* A header line, then one line per row:
 * key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,
 * [input_shapes,]flops with times in microseconds ("%.3f") and the shapes
 * quoted; when a->gpu (GPU records or CUDA calls), then device_type,
 * self_cuda_time_total_us,cuda_time_total_us,cuda_time_avg_us,
 * self_cuda_memory_usage,cuda_memory_usage,bytes,gbps (bytes and GB/s only
 * on memcpy and memset rows, else empty); when a->cpu_mem (the trace has
 * CPU memory), then self_cpu_memory_usage,cpu_memory_usage (bytes).
 * 0, or -EIO. */
int opp_out_csv(FILE *f, const struct opp_agg *a, const struct opp_out_opts *o);

/* {"trace", "complete", "warning", "self_cpu_time_total",
 * "self_cuda_time_total", "rows_processes" (how many processes the rows add
 * up), "rows_note" (opp_out_processes_note, or null), "processes", "threads", "events", "dropped",
 * "gpu", "rows", "errors", "statuses"}: times in microseconds; processes
 * and threads are the whole trace's, rows the aggregate's (input_shapes
 * only when grouped by shape; errors only on a row with failed calls; when
 * a->gpu also device_type, self_cuda_time_total, cuda_time_total,
 * cuda_time, self_cuda_memory_usage, cuda_memory_usage, and on memcpy and
 * memset rows bytes and gbps; when a->cpu_mem, then self_cpu_memory_usage
 * and cpu_memory_usage in bytes). "gpu" is null without o->gpu, else {"ops",
 * "kernels", "kernel_time", "unattached", "dropped": {"cupti", "opprof"},
 * "devices": [...], "streams": [...]} (README). "errors": the calls that
 * did not return success, "statuses": [{"key", "lib", "status", "name"
 * (null unknown), "count"}]. 0, or -EIO. */
int opp_out_json(FILE *f, const char *path, const struct opp_model *m, const struct opp_agg *a,
                 const struct opp_out_opts *o);

/* `opprof report --gpu`: the first `limit` kernels by total time (0: all)
 * with calls, total, average, share of kernel time, estimated occupancy
 * and launch delay; busy time per stream; per device the busy time, span,
 * idle share and memory; the largest idle gaps per device. 0, -EIO, or
 * -ENOMEM. */
int opp_out_gpu(FILE *f, const struct opp_model *m, const struct opp_gpu_stats *s,
                const struct opp_kernel_stats *k, size_t nk, size_t limit);

/* What f (stderr) should say about the trace m, besides the answer: each
 * warning a line, "opprof report: " first. */
void opp_out_warnings(FILE *f, const char *trace, const struct opp_model *m);

#endif
