/* The hooks features fill at their start (thread.h): off until one does. */
#include "core/thread.h"

int opp_stacks_n;
uint32_t (*opp_stack_capture)(void);
int (*opp_stack_extra)(uint64_t *out, int max);
uintptr_t opp_stack_skip_lo, opp_stack_skip_hi;
uintptr_t opp_stack_entry_lo, opp_stack_entry_hi;
_Atomic int opp_extcorr_on;
uint64_t (*opp_extcorr_push)(void);
void (*opp_extcorr_pop)(void);
