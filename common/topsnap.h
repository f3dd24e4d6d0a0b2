/* `opprof top`'s snapshot: what the collector's live aggregate
 * (collector/top_agg.c) answers a TOP request with (proto.h, TOP_SNAP): the
 * run's totals so far, by operator. `opprof top` takes one a second and
 * subtracts the one before for the last interval. Written and read here
 * only, so both sides agree; docs/FORMAT.md describes it. */
#ifndef OPP_TOPSNAP_H
#define OPP_TOPSNAP_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define OPP_TOP_LAT_MAX 128u /* step latencies a snapshot carries, the newest */

/* One operator of one process. Times in ns. */
struct opp_top_row {
    const char *name, *lib; /* a decoded snapshot's point into its message */
    uint32_t proc;
    uint64_t calls, self_ns, total_ns, gpu_ns;
    int64_t mem;       /* CPU bytes allocated minus freed directly inside its calls */
    uint64_t layer_ns; /* an nn.Module's: self time inside it and in no module inside it */
    uint32_t module;   /* 1: an nn.Module's forward; 2: the time outside any (its name
                          "(outside nn.Module)") */
};

struct opp_top_snap {
    uint64_t now_ns; /* the collector's CLOCK_MONOTONIC when it was taken */
    uint64_t events, dropped;
    uint64_t interrupted; /* of dropped: lost to a signal handler's interruption, not a full ring */
    uint32_t procs, threads; /* connected now */
    uint32_t recording;      /* 0: stopped (`opprof ctl stop`) */
    uint32_t from_start;     /* the rows add up every call; 0: those since the first
                                snapshot was asked for (the counts are the run's) */
    uint64_t gpu_ns;         /* every GPU op's time */
    uint64_t steps;          /* steps ended so far */
    uint32_t nlat;           /* the last nlat steps' latencies (ns), oldest first */
    uint64_t lat_ns[OPP_TOP_LAT_MAX];
    const char *step_name; /* what a step is ("ProfilerStep#N", ...); "" none */
    size_t nrows;
    struct opp_top_row *rows;
    uint32_t left_out; /* rows that did not fit in the message (the smallest CPU totals) */
};

/* s into w: the header, then as many rows as fit in cap bytes (rows
 * should come by CPU total, largest first), then how many did not. */
void opp_top_put(struct opp_wbuf *w, const struct opp_top_snap *s);
/* p[0..n) into s; s->rows malloc'd, its names pointing into p (keep it).
 * 0, or -1 when it is damaged (s holds nothing to free). */
int opp_top_get(const void *p, size_t n, struct opp_top_snap *s);
void opp_top_free(struct opp_top_snap *s);

#endif
