/* torch.profiler's conventions that opprof follows wherever it records or
 * reads calls: the names of the calls that mark steps and their row in the
 * table, and its folding of an operator into itself. */
#ifndef OPP_TORCH_RULES_H
#define OPP_TORCH_RULES_H

#include <stdint.h>
#include <string.h>

#include "ops.h"

/* The calls that mark steps: torch.profiler's step (ProfilerStep#N, which
 * the agent also records for OPPROF_STEP's steps) and an optimizer's
 * (Optimizer.step#CLASS.step, a torch label). */
#define OPP_PROFILER_STEP "ProfilerStep#"
#define OPP_OPTIMIZER_STEP "Optimizer.step#"

/* Whether a call named name (its first n bytes, not NUL-terminated) is
 * torch.profiler's step. */
static inline int opp_profiler_step_n(const char *name, size_t n)
{
    return n >= sizeof OPP_PROFILER_STEP - 1 &&
           !memcmp(name, OPP_PROFILER_STEP, sizeof OPP_PROFILER_STEP - 1);
}
static inline int opp_profiler_step(const char *name)
{
    return opp_profiler_step_n(name, strnlen(name, sizeof OPP_PROFILER_STEP - 1));
}

/* Whether a torch operator's call of scope (enum opp_torch_scope) named
 * name is an optimizer's step (the label torch's optimizers record; a
 * summary's call path, which keeps no scope, asks the name alone). The
 * agent's steps (preload/torch), the live view's (collector/top_agg.c)
 * and the report's (step_stream.c) ask this. */
static inline int opp_optimizer_step_name(const char *name)
{
    return !strncmp(name, OPP_OPTIMIZER_STEP, sizeof OPP_OPTIMIZER_STEP - 1);
}
static inline int opp_optimizer_step(int scope, const char *name)
{
    return scope == OPP_TORCH_SCOPE_USER && opp_optimizer_step_name(name);
}

/* Whether a call named name is an nn.Module forward by its name alone
 * (the agent names them "nn.Module: CLASS_N"; a call path keeps no
 * scope). */
#define OPP_MODULE_PREFIX "nn.Module: "
static inline int opp_module_name(const char *name)
{
    return !strncmp(name, OPP_MODULE_PREFIX, sizeof OPP_MODULE_PREFIX - 1);
}

/* The key_averages row of a call named name: key_averages keys every
 * ProfilerStep#N as one row, ProfilerStep* (profiler_util._rewrite_name
 * with_wildcard), so the table counts the steps in it; every other name
 * is its own row. */
#define OPP_PROFILER_STEP_ROW "ProfilerStep*"
static inline const char *opp_torch_row_key(const char *name)
{
    return opp_profiler_step(name) ? OPP_PROFILER_STEP_ROW : name;
}

/* A call that is a range by itself rather than an operator: an NVTX
 * range, a torch label (record_function, an optimizer's step) or an
 * nn.Module forward (scope: opp_op_torch_scope). What `--step` can take
 * for steps: the pass's steps (step_stream.c) and the tests' loaded
 * model's (tests/oracle/steps.c) ask this. */
static inline int opp_call_is_range(uint32_t kind, int scope)
{
    return opp_kind_base(kind) == OPP_OP_NVTX || scope == OPP_TORCH_SCOPE_USER ||
           scope == OPP_TORCH_SCOPE_MODULE;
}

/* Whether a call of kind is a child for torch's folding: a memory instant
 * is not (torch sums it into the call around it). */
static inline int opp_fold_counts(uint32_t kind)
{
    return opp_kind_base(kind) != OPP_OP_MEMORY;
}

/* torch.profiler's EventList._remove_dup_nodes: a call folds into its
 * parent (it is dropped, its children becoming the parent's, and its GPU
 * work the parent's) when it is the parent's only child (counted: the
 * parent's children that opp_fold_counts, or at least that many) and both
 * are torch operators of the same name (name: however the caller names
 * calls, equal for equal names). Summary mode's aggregation
 * (summary_calls.c), the pass over a full trace (pass.c), the GPU join
 * (gpu_join.c) and the tests' loaded tree (tests/oracle/load.c) all ask
 * this. */
static inline int opp_torch_folds(uint64_t counted, uint32_t parent_kind, uint64_t parent_name,
                                  uint32_t child_kind, uint64_t child_name)
{
    return counted == 1 && opp_kind_base(parent_kind) == OPP_OP_TORCH &&
           opp_kind_base(child_kind) == OPP_OP_TORCH && parent_name == child_name;
}

/* What names a torch operator's calls for opp_torch_folds where the
 * string ids of one process name them: its name's string id + 1, else
 * its entry point fn with the top bit set; 0 when kind is not a torch
 * operator's. */
static inline uint64_t opp_torch_call_name(uint32_t kind, uint32_t fn, const uint64_t *args,
                                           uint32_t nargs)
{
    const uint64_t *a = args;
    if (opp_kind_base(kind) != OPP_OP_TORCH)
        return 0;
    return opp_op_args(kind, &a, nargs) > OPP_COL_TORCH_NAME ? a[OPP_COL_TORCH_NAME] + 1
                                                             : (1ull << 63) | fn;
}

#endif
