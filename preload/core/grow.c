/* A feature's per-thread stack of open ranges grown past the room its
 * thread state holds (torch's ops, NVTX's push/pop ranges): off the hot
 * path, only when a thread nests deeper than that room. */
#include "core/base.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *opp_stack_grow(void *s, uint32_t cap, const void *inline_mem, size_t size, int *said,
                     const char *what)
{
    int saved_errno = errno;
    void *p = cap < OPP_STACK_DEPTH_MAX ? malloc((size_t)cap * 2 * size) : NULL;
    if (p) {
        memcpy(p, s, (size_t)cap * size);
        if (s != inline_mem)
            free(s);
    } else if (!__atomic_exchange_n(said, 1, __ATOMIC_RELAXED)) {
        char n[16];
        snprintf(n, sizeof n, "%u", cap);
        opp_agent_say(what, n,
                      cap < OPP_STACK_DEPTH_MAX
                          ? " on a thread are not recorded: no memory for a deeper stack"
                          : " on a thread are not recorded");
    }
    errno = saved_errno;
    return p;
}
