/* The end of what the tool wrote on a stream: whether all of it was. */
#ifndef OPP_OUT_END_H
#define OPP_OUT_END_H

#include <stdio.h>

/* f flushed after a view's status rc (0, or a negative errno; -EIO: the
 * view saw f's error flag): 0 when everything written reached f, else the
 * failed write's negative errno (fflush's: ENOSPC on a full disk, where
 * the error flag alone says nothing; -EIO when only the flag tells), or rc
 * when it is another error (-ENOMEM). */
int opp_out_end(FILE *f, int rc);

#endif
