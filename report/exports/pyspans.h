/* Python function slices for the Chrome trace (torch's python_function
 * events) from the Python frames that code stacks sampled at each call's
 * start (OPPROF_STACKS in a Python program): on each thread, a frame's
 * slice runs from the first begin to the last end of the calls made while
 * it stayed on the stack. Events are fed as a thread's chunks give them;
 * frames are sampled, not traced, so two calls of one function from one
 * line, with no other frame's call between them, make one slice. */
#ifndef OPP_PYSPANS_H
#define OPP_PYSPANS_H

#include <stdint.h>

struct opp_pyspans_thread;
struct opp_pyspans {
    struct opp_pyspans_thread *threads;
};

/* A slice ends: thread (the caller's key), the frame's string id, times. */
typedef int opp_pyspan_emit(void *ctx, uint64_t thread, uint32_t frame, uint64_t begin,
                            uint64_t end);

/* A call on thread made under frames (string ids, outermost first): the
 * slices of frames it is not under end (emitted, innermost first), the
 * others grow to hold it. 0, or what emit returned, or -1 (no memory). */
int opp_pyspans_add(struct opp_pyspans *ps, uint64_t thread, const uint32_t *frames, int n,
                    uint64_t begin, uint64_t end, opp_pyspan_emit *emit, void *ctx);
/* Every open slice ends (emitted); ps is then empty. 0 or what emit returned. */
int opp_pyspans_flush(struct opp_pyspans *ps, opp_pyspan_emit *emit, void *ctx);

#endif
