/* Memory records as the readers that stream a trace keep them (the
 * table's CPU memory columns, table_stream.c; the memory timeline,
 * mem_stream.c): a CPU MEMORY call or a device memory record, put in time
 * order and sized there (as gpu_memory.c sizes a device's records: a
 * free without a size takes its allocation's). */
#ifndef OPP_MEM_RECORDS_H
#define OPP_MEM_RECORDS_H

#include <stdint.h>

#include "analysis/live_blocks.h"
#include "analysis/pass.h"

struct opp_mrec {
    uint64_t time, idx; /* idx: the order read (GPU), the depth then seq (CPU) */
    uint64_t addr, at;  /* at: the call's place (CPU), the owning call's (GPU) */
    int64_t bytes;      /* as recorded; signed once sized */
    uint32_t proc, thread, seq, op;
};

/* The MEMORY columns (op, address, bytes) of a call of kind with
 * arguments args[0..nargs) in *cols, 1; 0 when it is no CPU MEMORY call
 * or has too few. */
int opp_mrec_cols(uint32_t kind, const uint64_t *args, uint32_t nargs, const uint64_t **cols);
/* Whether some process of m has a CPU MEMORY entry point. */
int opp_mrec_any_calls(const struct opp_model *m);
/* Call x of the pass (m: its model) as a record, 1; 0 when it is no CPU
 * MEMORY call. */
int opp_mrec_of_call(const struct opp_model *m, const struct opp_pass_call *x, struct opp_mrec *r);
/* CPU memory calls by time, process, thread, then a thread's instants at
 * one time in tree order (cpu_memory.c's order). */
int opp_mrec_cmp_time(const void *a, const void *b);
/* Record r, the next in time order, sized: a free (op fre) without a size
 * given its allocation's (op alloc) by address in its process, its bytes
 * then signed (a free's < 0, anything else's 0). 0 or -ENOMEM. */
int opp_mrec_size(struct opp_live *live, struct opp_mrec *r, uint32_t alloc, uint32_t fre);

#endif
