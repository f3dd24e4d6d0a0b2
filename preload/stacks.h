/* Code stacks (OPPROF_STACKS, stacks.c). */
#ifndef OPP_STACKS_H
#define OPP_STACKS_H

/* Read OPPROF_STACKS and load libunwind; off (one line) when either fails. */
void opp_stacks_init(void);
/* The child of fork(): its stack ids and module list start over. */
void opp_stacks_forked(void);

#endif
