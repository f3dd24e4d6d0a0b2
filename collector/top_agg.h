/* The collector's live aggregate for `opprof top`: as records are drained,
 * each operator's calls, self and total CPU time, GPU time and CPU memory
 * added up, and the program's steps, answered as a snapshot (common/topsnap.h)
 * over the control socket. Small and flat: one row per (process,
 * operator), found by array index or one hash probe, so draining stays
 * as fast; nothing of it goes into the trace. */
#ifndef OPP_TOP_AGG_H
#define OPP_TOP_AGG_H

#include <stdint.h>

#include "gpu.h"
#include "topsnap.h"
#include "util.h"

struct opp_top_agg;
struct opp_func_desc;

struct opp_top_agg *opp_top_agg_new(void);
void opp_top_agg_free(struct opp_top_agg *l);

/* A clock sample (the collector writes one a second): TSC ticks are
 * turned into ns with the rate between the first and the latest. */
void opp_top_agg_clock(struct opp_top_agg *l, const struct opp_clock_sample *s);
/* Process proc's entry points (names copied), its clock (OPP_CLOCK_*).
 * 0 or -ENOMEM. */
int opp_top_agg_proc(struct opp_top_agg *l, uint32_t proc, int clock, uint32_t nfuncs,
                     const struct opp_func_desc *funcs);
/* One call of thread tid, in the order the thread's calls returned (ticks
 * of the process's clock); range: OPP_REC_RANGE. */
void opp_top_agg_call(struct opp_top_agg *l, uint32_t proc, uint32_t tid, uint32_t fn,
                      uint32_t depth, uint64_t begin, uint64_t end, uint32_t nargs,
                      const uint64_t *args, int range);
/* A GPU record of proc: names (STRING) and GPU time. */
void opp_top_agg_gpu(struct opp_top_agg *l, uint32_t proc, const struct opp_gpu_rec *g);
/* The process has ended: its rows keep their names, its tables go. */
void opp_top_agg_proc_end(struct opp_top_agg *l, uint32_t proc);
/* The thread is gone: its state is let go. */
void opp_top_agg_thread_end(struct opp_top_agg *l, uint32_t proc, uint32_t tid);

/* The snapshot, with the counts the collector keeps (events, dropped,
 * processes, threads, recording, now_ns set by the caller in s): rows by
 * CPU total, largest first, into s (s->rows malloc'd, names owned by l:
 * valid until its next call). 0 or -ENOMEM. */
int opp_top_agg_snapshot(struct opp_top_agg *l, struct opp_top_snap *s);
/* The rows it keeps, over its processes (what its memory grows with: one
 * per process and name, ProfilerStep#N's one). */
uint32_t opp_top_agg_rows(const struct opp_top_agg *l);

#endif
