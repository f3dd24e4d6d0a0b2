/* PyTorch operators (torch/torch.c): not wrappers but what the torch
 * shim's RecordFunction callback and the nn.Module hooks record through
 * opp_enter/opp_leave. The report names each by its recorded name. The
 * class TORCH_CB defines nothing. */
#define OPP_TORCH_FUNCS(X, L) X(L, torch_op, TORCH, 0, NONE, TORCH_CB)
