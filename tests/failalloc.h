/* Allocations made to fail on demand, for the unit suites' out-of-memory
 * paths: the unit runners link with malloc, calloc, realloc and
 * reallocarray wrapped (tests/failalloc.c), so the layers' allocations
 * come here first. */
#ifndef TU_FAILALLOC_H
#define TU_FAILALLOC_H

#include <stddef.h>

/* From now on, the nth (from 0) malloc, calloc, realloc or reallocarray
 * of at least min_bytes fails (NULL, errno ENOMEM); the others succeed.
 * nth < 0: none fails. */
void tu_alloc_fail(long nth, size_t min_bytes);
/* Whether that failure happened since tu_alloc_fail; none fails from now. */
int tu_alloc_failed(void);

#endif
