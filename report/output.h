/* The outputs of `opprof report`: torch's key_averages().table(), CSV and
 * JSON, each written to a stream from an aggregate (aggregate.h). */
#ifndef OPP_OUTPUT_H
#define OPP_OUTPUT_H

#include <stdio.h>

#include "aggregate.h"
#include "model.h"

struct opp_out_opts {
    int group_by_shape; /* the rows were grouped by shape: show them */
    int flops;          /* table: add Total FLOPs and GFLOP/s columns */
};

/* The table exactly as torch's _build_table lays it out: dashed separator,
 * header, separator, rows, separator, "Self CPU time total: ...". Every
 * column is right-aligned and followed by two spaces. Name is as wide as the
 * longest name + 4, at most 55 (longer names end in "..."); Input Shapes as
 * the longest shapes + 4, at most 80 (cut there); the others 12, or wider
 * when a value needs it. With flops: "Total <unit>" where the unit (FLOPs,
 * KFLOPs, MFLOPs, GFLOPs, TFLOPs, PFLOPs) is the largest power of 1000 not
 * above the smallest non-zero row, each row as "%.3f" in that unit or "--"
 * when it has none; and GFLOP/s = FLOPs / CPU total in ns. Like torch, both
 * are left out when no row has FLOPs. 0, or -EIO on a write error. */
int opp_out_table(FILE *f, const struct opp_agg *a, const struct opp_out_opts *o);

/* A header line, then one line per row:
 * key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,
 * [input_shapes,]flops with times in microseconds ("%.3f") and the shapes
 * quoted. 0, or -EIO. */
int opp_out_csv(FILE *f, const struct opp_agg *a, const struct opp_out_opts *o);

/* {"trace", "complete", "warning", "self_cpu_time_total", "processes",
 * "threads", "events", "dropped", "rows"}: times in microseconds; processes
 * and threads are the whole trace's, rows the aggregate's (input_shapes
 * only when grouped by shape). 0, or -EIO. */
int opp_out_json(FILE *f, const char *path, const struct opp_model *m, const struct opp_agg *a,
                 const struct opp_out_opts *o);

#endif
