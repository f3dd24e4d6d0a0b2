/* Allocations made to fail on demand (failalloc.h): the unit runners link
 * with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=reallocarray
 * (tests/tests.mk), so
 * each such call of theirs and of the layers' objects calls these. */
#include "failalloc.h"

#include <errno.h>
#include <stdint.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__real_reallocarray(void *p, size_t k, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_reallocarray(void *p, size_t k, size_t n);

static long fail_nth = -1; /* allocations of fail_min bytes or more to let through first */
static size_t fail_min;
static int failed;

void tu_alloc_fail(long nth, size_t min_bytes)
{
    fail_nth = nth;
    fail_min = min_bytes;
    failed = 0;
}

int tu_alloc_failed(void)
{
    int f = failed;
    tu_alloc_fail(-1, 0);
    return f;
}

/* Whether this allocation of n bytes is the one to fail. */
static int fails(size_t n)
{
    if (fail_nth < 0 || n < fail_min || fail_nth-- > 0)
        return 0;
    failed = 1;
    errno = ENOMEM;
    return 1;
}

void *__wrap_malloc(size_t n)
{
    return fails(n) ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
    return fails(n && k > SIZE_MAX / n ? SIZE_MAX : k * n) ? NULL : __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fails(n) ? NULL : __real_realloc(p, n);
}

void *__wrap_reallocarray(void *p, size_t k, size_t n)
{
    return fails(n && k > SIZE_MAX / n ? SIZE_MAX : k * n) ? NULL : __real_reallocarray(p, k, n);
}
