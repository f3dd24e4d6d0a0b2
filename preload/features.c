/* The agent's features, walked by the core (core/internal.h) at its start
 * and in a fork child in this order, at exit in the reverse one. The
 * interposed libraries need no hooks: their tables are enough
 * (tables/funcs.h). Adding a feature is its folder and its line here. */
#include "core/internal.h"

extern const struct opp_feature opp_feature_stacks, opp_feature_cuda, opp_feature_nvtx,
    opp_feature_torch;

const struct opp_feature *const opp_features[] = {
    &opp_feature_stacks, /* code stacks at each call (OPPROF_STACKS) */
    &opp_feature_cuda,   /* CUDA runtime and driver: CUPTI, else symbols */
    &opp_feature_nvtx,   /* NVTX ranges as operators */
    &opp_feature_torch,  /* PyTorch's operators and nn.Module layers */
    NULL,
};
