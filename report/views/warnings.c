/* What `opprof report` says about a trace besides its answer (output.h):
 * its own warning, records dropped, no call at all, calls and processes
 * cut short, GPU records lost, what a summary's bound let go of, CUPTI
 * taken from another client. */
#include <inttypes.h>

#include "summary.h"
#include "util.h"
#include "views/fmt.h"
#include "views/output.h"

#define PREFIX "opprof report: "

void opp_out_warnings(FILE *f, const char *trace, const struct opp_model *m)
{
    if (m->sum.warning[0]) { /* it may name a trace: its control bytes escaped */
        fputs(PREFIX "warning: ", f);
        opp_text_fput(f, m->sum.warning);
        fputc('\n', f);
    }
    if (m->sum.held &&
        m->sum.complete) { /* the held trace a collector replaces at its first hello */
        fputs(PREFIX "warning: a collector holds ", f);
        opp_text_fput(f, trace);
        fputs(": this complete trace is the one it found there (replaced when a process of its "
              "run connects) or one it has just finished\n",
              f);
    }
    uint64_t full = opp_model_dropped_full(m);
    if (full) /* before version 10 a summary's own bound drops too (common/format.h) */
        fprintf(f, PREFIX "warning: %" PRIu64 " records were dropped (buffers full%s): %s\n", full,
                m->summary && !m->sum_dropped
                    ? ", or on new call paths past the summary's bound: opprof "
                      "summarize --max-nodes"
                    : "",
                OPP_DROP_ADVICE);
    if (m->interrupted)
        fprintf(f, PREFIX "warning: %" PRIu64 " record%s dropped (%s): %s\n", m->interrupted,
                m->interrupted == 1 ? " was" : "s were", OPP_INTERRUPTED_WHY,
                OPP_INTERRUPTED_ADVICE);
    if (m->sum_dropped)
        fprintf(f,
                PREFIX "warning: %" PRIu64 " call%s on new call paths past the summary's bound "
                       "%s dropped: OPPROF_MAX_NODES (opprof run --max-nodes, opprof summarize "
                       "--max-nodes) keeps more\n",
                m->sum_dropped, m->sum_dropped == 1 ? "" : "s",
                m->sum_dropped == 1 ? "was" : "were");
    if (!m->events && !m->gpu.nops && !m->dropped && !m->sum.complete && m->sum.warning[0]) {
        fputs(PREFIX, f); /* cut or damaged: the hint below would point the wrong way */
        opp_text_fput(f, trace);
        fputs(" holds no call in what could be read of it (the warning above)\n", f);
    } else if (!m->events && !m->gpu.nops && !m->dropped) {
        fputs(PREFIX, f);
        opp_text_fput(f, trace); /* a path: its control bytes escaped */
        fprintf(f, " holds no call: check that the program calls a library opprof "
                   "interposes (BLAS, LAPACK, oneDNN, XNNPACK, the CUDA libraries, NCCL, NVTX) "
                   "through the dynamic linker, or is a PyTorch program; that it was preloaded "
                   "(not setuid, OPPROF_DISABLE unset); that it recorded (OPPROF_PAUSED waits "
                   "for `opprof ctl start`, a schedule records its active steps only)\n");
    }
    if (m->open_events)
        fprintf(f,
                PREFIX "warning: %" PRIu64 " call%s still running when %s process died: "
                       "shown with the process's end time\n",
                m->open_events, m->open_events == 1 ? " was" : "s were",
                m->open_events == 1 ? "its" : "their");
    if (m->procs_cut)
        fprintf(f,
                PREFIX "warning: %" PRIu32 " process%s still running when the trace was "
                       "finished: what %s did after that is not in it\n",
                m->procs_cut, m->procs_cut > 1 ? "es were" : " was",
                m->procs_cut > 1 ? "they" : "it");
    if (m->gpu.dropped_cupti || m->gpu.dropped_ours)
        fprintf(f,
                PREFIX "warning: GPU activity records were lost: %" PRIu64 " dropped by CUPTI, "
                       "%" PRIu64 " by opprof (buffers full)\n",
                m->gpu.dropped_cupti, m->gpu.dropped_ours);
    if (m->gpu.summary_lost) {
        char said[320];
        opp_sum_lost_said(said, sizeof said, m->gpu.summary_lost);
        fprintf(f, PREFIX "warning: %s; a full trace (OPPROF_MODE=full) has them\n", said);
    }
    if (m->gpu.unfinished)
        fprintf(f,
                PREFIX
                "warning: %" PRIu64 " GPU activity records came without their times "
                "(the work was still running when CUPTI was last flushed) and are left out\n",
                m->gpu.unfinished);
    if (m->gpu.clients_refused)
        fprintf(f, PREFIX
                "warning: another CUPTI client (torch.profiler/Kineto, nsys, ncu or DCGM) was "
                "refused CUPTI in the profiled program, which opprof held: its own output has "
                "no GPU activity; this trace has it\n");
    if (m->gpu.buffers_taken)
        fprintf(f,
                PREFIX "warning: another CUPTI client (torch.profiler/Kineto, nsys, ncu or DCGM) "
                       "took CUPTI's activity buffers in the profiled program: GPU activity after "
                       "that is not in this trace\n");
    if (m->gpu.yielded)
        fprintf(f,
                PREFIX "warning: opprof handed CUPTI over to another client (torch.profiler/Kineto, "
                       "nsys, ncu or DCGM) %" PRIu64 " time%s and took it back %" PRIu64 " time%s: "
                       "the GPU activity while that tool held CUPTI is in its own output, not in "
                       "this trace (the CUDA calls are)\n",
                m->gpu.yielded, m->gpu.yielded > 1 ? "s" : "", m->gpu.retaken,
                m->gpu.retaken == 1 ? "" : "s");
}
