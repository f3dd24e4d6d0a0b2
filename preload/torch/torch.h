/* What preload/torch's files share. */
#ifndef OPP_TORCH_TORCH_H
#define OPP_TORCH_TORCH_H

/* torch.c: nonzero while `opprof ctl stop` turned torch's callbacks off;
 * memory.c's allocations watch for its end, which turns them back on. */
extern int opp_torch_paused_off;
void opp_torch_unpaused(void);
/* torch.c: OPPROF_TORCH=lean: operators without their inputs' shapes, and
 * no CPU memory (memory.c records nothing). */
extern int opp_torch_lean;

/* pypath.c: at the agent's start, in a Python interpreter, opprof's
 * Python folder (beside self_path) first on PYTHONPATH. */
void opp_torch_python_path(const char *self_path);

#endif
