/* What advise's rules find (analysis/advise.h runs them): the thresholds'
 * and the rules' tables, and a finding. Shared by the rules (advise_*.c) and
 * the views. */
#ifndef OPP_ADVISE_FINDINGS_H
#define OPP_ADVISE_FINDINGS_H

#include <stddef.h>
#include <stdint.h>

/* The thresholds, one line each: id, name, value, unit, meaning. The README's
 * table is `opprof advise --thresholds`. */
#define OPP_ADVISE_THRESHOLDS(X)                                                                   \
    X(INPUT_SHARE, "input_share", 0.10, "share",                                                   \
      "input pipeline: DataLoader time at least this share of the steps' wall time")               \
    X(OUTSIDE_SHARE, "outside_share", 0.50, "share",                                               \
      "time outside any recorded call at least this share of the steps")                           \
    X(SYNC_PER_STEP, "sync_per_step", 1.0, "calls",                                                \
      "host synchronisations (item, synchronize, DtoH copies) at least this many a step")          \
    X(FUSE_PER_STEP, "fuse_per_step", 16.0, "calls",                                               \
      "elementwise calls on one shape at least this many a step")                                  \
    X(FUSE_AVG_US, "fuse_avg_us", 50.0, "us",                                                      \
      "... each taking at most this long on average (self CPU time)")                              \
    X(TINY_GEMM_PER_STEP, "tiny_gemm_per_step", 16.0, "calls",                                     \
      "matrix products of one shape at least this many a step")                                    \
    X(TINY_GEMM_FLOPS, "tiny_gemm_flops", 1e6, "FLOPs", "... each of at most this many FLOPs")     \
    X(STEPS_MIN, "steps_min", 4.0, "steps",                                                        \
      "warm-up and outlier rules need at least this many steps")                                   \
    X(WARMUP_RATIO, "warmup_ratio", 2.0, "x p50",                                                  \
      "a first step is warm-up while its wall time is at least this times the steps' p50")         \
    X(OUTLIER_RATIO, "outlier_ratio", 1.5, "x p50",                                                \
      "a steady step is an outlier at this times the p50 or more (p99 must reach it)")             \
    X(GPU_IDLE_SHARE, "gpu_idle_share", 0.30, "share",                                             \
      "a device idle at least this share of the steps' wall time")                                 \
    X(COMM_EXPOSED_SHARE, "comm_exposed_share", 0.5, "share",                                      \
      "communication (NCCL kernels) with no compute beside it at least this share of its time")    \
    X(LAUNCH_KERNEL_US, "launch_kernel_us", 10.0, "us",                                            \
      "launch-bound: mean kernel time at most this, and launch calls' CPU time above kernels'")    \
    X(CPU_ALLOCS_PER_STEP, "cpu_allocs_per_step", 1000.0, "allocations",                           \
      "CPU allocator churn: at least this many allocations a steady step")                         \
    X(CUDA_ALLOCS_PER_STEP, "cuda_allocs_per_step", 1.0, "allocations",                            \
      "device allocations (cudaMalloc) at least this many a steady step")                          \
    X(GROWTH_PER_STEP, "growth_bytes_per_step", 1048576.0, "bytes",                                \
      "memory growing by at least this much a steady step, over each half of them")                \
    X(STRAGGLER_RATIO, "straggler_ratio", 1.2, "x median",                                         \
      "a rank's operator time at least this times the ranks' median")                              \
    X(STRAGGLER_MS, "straggler_ms", 1.0, "ms", "... and at least this much more than the median")

enum opp_advise_threshold {
#define OPP_ADVISE_TH_ENUM(id, name, value, unit, help) OPP_TH_##id,
    OPP_ADVISE_THRESHOLDS(OPP_ADVISE_TH_ENUM)
#undef OPP_ADVISE_TH_ENUM
        OPP_TH_COUNT
};

struct opp_advise_threshold_desc {
    const char *name;
    double value;
    const char *unit, *help;
};
extern const struct opp_advise_threshold_desc opp_advise_thresholds[OPP_TH_COUNT];

/* A rule: its name, the thresholds it reads (names, for people; what it
 * looks at is README's table of rules), whether it needs the calls'
 * times (each step's time, the GPU timeline, the memory series): those
 * rules are not run on a summary trace, which counts the steps without
 * timing each; and whether it looks at each step's own time (outside the
 * calls, against the others, its memory): those are not run where the
 * program has no steps, its run taken as one step, start-up and all. The
 * rules' table is opp_advise_rules. */
struct opp_advise_ctx;
struct opp_findings;
struct opp_advise_rule {
    const char *name;
    const char *thresholds; /* "input_share" */
    int (*fn)(const struct opp_advise_ctx *c, struct opp_findings *out);
    int timed;
    int stepped;
};
extern const struct opp_advise_rule opp_advise_rules[];
extern const size_t opp_advise_nrules;

#define OPP_ADVICE_TEXT 320

/* One finding. A field that does not apply: NULL, "", or -1. */
struct opp_finding {
    const char *rule;           /* the rule's name ("input_pipeline") */
    int lost;                   /* about data the trace lost: shown before the findings */
    char what[OPP_ADVICE_TEXT]; /* the pattern, a sentence */
    /* where */
    char op[OPP_ADVICE_TEXT];    /* the operator(s), "" when none */
    char code[OPP_ADVICE_TEXT];  /* the Python line that called it (OPPROF_STACKS) */
    char layer[OPP_ADVICE_TEXT]; /* the nn.Module around its heaviest call path */
    int64_t step, step_last;     /* steps from 0, -1 every step */
    int64_t rank, pid, device, stream;
    /* how much */
    double share;              /* of the steps' wall time */
    double ms_per_step;        /* time at stake a step */
    double per_step;           /* calls, allocations or bytes a step */
    const char *per_step_unit; /* "calls", "allocations", "bytes"; NULL: no per_step */
    uint64_t stake_ns;         /* time at stake over the steps: the ranking */
    char evidence[OPP_ADVICE_TEXT];
    const char *try_; /* what to try */
    uint32_t order;   /* the order found in: ties of stake keep it */
};

struct opp_findings {
    struct opp_finding *f; /* lost data first, then by stake_ns descending, then rule order */
    size_t n, cap;
};

#endif
