/* GPU work joined to the calls that caused it while a trace streams, by
 * gpu_attach.c's rules: an op goes to the outermost CUDA call of its
 * process with its correlation id, else to the library call that CUPTI's
 * external correlation ties it to. Calls and records are given in the
 * order the trace has them (which promises no order between the two);
 * they are sorted beyond memory (extsort.h) and joined at the end. */
#ifndef OPP_GPU_JOIN_H
#define OPP_GPU_JOIN_H

#include <stdint.h>

struct opp_gpu_join;
struct opp_gpu_rec;

/* Where a call is: its thread (an index of the reader's) and place. */
struct opp_gpu_call {
    uint64_t begin, end;
    uint32_t thread, seq; /* seq: the call's arrival on its thread */
    uint32_t depth;
};

struct opp_gpu_join *opp_gpu_join_new(void);
/* A call of process proc (an index) with entry-point kind and its
 * arguments: kept when it can own GPU work. 0 or -errno. */
int opp_gpu_join_call(struct opp_gpu_join *j, uint32_t proc, uint32_t kind, const uint64_t *args,
                      uint32_t nargs, const struct opp_gpu_call *c);
/* A GPU record of process proc: kernels, copies and sets (timed ops) and
 * external correlations are kept. 0 or -errno. */
int opp_gpu_join_rec(struct opp_gpu_join *j, uint32_t proc, const struct opp_gpu_rec *g);
/* Each timed op's duration handed to owned with the call that owns it
 * (ops of no call are left out). 0 or -errno. */
int opp_gpu_join_run(struct opp_gpu_join *j,
                     void (*owned)(void *ctx, const struct opp_gpu_call *c, uint64_t dur_ns),
                     void *ctx);
void opp_gpu_join_free(struct opp_gpu_join *j);

#endif
