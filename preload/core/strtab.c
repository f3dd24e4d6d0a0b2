/* String ids of the preload (intern.h), interned: a new string is sent
 * as a STRING record before its id is published. */
#include "core/intern.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "gpu.h"
#include "proto.h"
#include "torch_rules.h"

static struct opp_intern_slot slots[1u << 16];
_Static_assert((1u << 16) / 4 * 3 == 49152, "the count the table's message says");
static struct opp_intern tab =
    OPP_INTERN_INIT(slots, 1u << 16, OPP_STR_PRELOAD,
                    "more than 49152 distinct names (NVTX messages, torch labels, module "
                    "names, Python code lines, library paths): the later new ones are "
                    "unnamed");

static void send_string(uint32_t id, const char *s, size_t n)
{
    uint8_t msg[OPP_GPU_REC_MAX + 8];
    struct opp_wbuf w;
    opp_wbuf_init(&w, msg, sizeof msg);
    opp_put_u32(&w, 1);
    struct opp_gpu_rec r = {.type = OPP_GPU_STRING, .nfields = 1, .str = s, .slen = (uint32_t)n};
    r.f[0] = id;
    if (opp_gpu_put(&w, &r) == 0)
        opp_agent_send(OPP_MSG_GPU, msg, (unsigned)w.len);
}

struct text {
    const char *s;
    size_t n;
};

static void send_text(uint32_t id, void *ctx)
{
    const struct text *t = ctx;
    send_string(id, t->s, t->n);
}

static _Atomic uint32_t first_step; /* its id once shared, 0: none yet */

uint32_t opp_str_id(const char *s, size_t n)
{
    if (!s)
        return 0;
    opp_fork_check(); /* a child whose fork ran no atfork handler: the ids are its parent's */
    if (n > OPP_NAME_STR_MAX)
        n = OPP_NAME_STR_MAX; /* what a STRING record keeps */
    struct text t = {s, n};
    if (opp_profiler_step_n(s, n)) {
        /* the collector's mode (opp_conn_summary: a few steps may follow
         * our environment's, and a full trace then names them as the
         * first, or a summary grows by their strings) */
        return opp_intern_unkept(&tab, opp_conn_summary() ? &first_step : NULL, send_text, &t);
    }
    return opp_intern_id(&tab, opp_fnv1a(s, n), send_text, &t);
}

void opp_str_atfork_prepare(void) { pthread_mutex_lock(&tab.lock); }
void opp_str_atfork_parent(void) { pthread_mutex_unlock(&tab.lock); }

void opp_str_forked(void)
{
    opp_intern_reset(&tab);
    atomic_store_explicit(&first_step, 0, memory_order_relaxed);
}
