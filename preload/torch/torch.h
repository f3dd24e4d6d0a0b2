/* What preload/torch's files share: torch.c's pause state, which
 * memory.c's allocations watch for the end of `opprof ctl stop`. */
#ifndef OPP_TORCH_TORCH_H
#define OPP_TORCH_TORCH_H

/* Nonzero while a pause turned torch's callbacks off. */
extern int opp_torch_paused_off;
/* The pause is over (the ring records again): the callbacks come back. */
void opp_torch_unpaused(void);

#endif
