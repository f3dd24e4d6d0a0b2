/* String ids of the preload (strtab.h): an open-addressing table of 64-bit
 * hashes, read without locks; a new string is sent under a mutex, and its
 * slot is published only after the collector has been sent its text. */
#include "strtab.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "cupti_client.h" /* opp_agent_send, opp_agent_say */
#include "format.h"
#include "gpu.h"
#include "proto.h"

#define CAP (1u << 16)
#define LIMIT (CAP / 4 * 3)

static struct slot {
    _Atomic uint64_t hash; /* 0: free */
    _Atomic uint32_t id;
} tab[CAP];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t count, next_id = OPP_STR_PRELOAD;
static int full_said;

/* FNV-1a; the hash stands for the string (a 64-bit collision would merge
 * two names, as in the CUPTI converter). Never 0. */
static uint64_t hash_of(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    return h ? h : 1;
}

/* The slot holding h, or the free slot where it goes (NULL: none left). */
static struct slot *probe(uint64_t h)
{
    for (uint32_t i = 0, k = (uint32_t)h & (CAP - 1); i < CAP; i++, k = (k + 1) & (CAP - 1)) {
        uint64_t e = atomic_load_explicit(&tab[k].hash, memory_order_acquire);
        if (e == h || e == 0)
            return &tab[k];
    }
    return NULL;
}

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

uint32_t opp_str_id(const char *s, size_t n)
{
    if (!s)
        return 0;
    if (n > OPP_NAME_STR_MAX)
        n = OPP_NAME_STR_MAX; /* what a STRING record keeps */
    uint64_t h = hash_of(s, n);
    struct slot *e = probe(h);
    if (e && atomic_load_explicit(&e->hash, memory_order_acquire) == h)
        return atomic_load_explicit(&e->id, memory_order_relaxed);
    pthread_mutex_lock(&lock);
    e = probe(h);
    uint32_t id = 0;
    if (e && atomic_load_explicit(&e->hash, memory_order_relaxed) == h) {
        id = atomic_load_explicit(&e->id, memory_order_relaxed);
    } else if (e && count < LIMIT) {
        id = next_id++;
        send_string(id, s, n);
        atomic_store_explicit(&e->id, id, memory_order_relaxed);
        atomic_store_explicit(&e->hash, h, memory_order_release);
        count++;
    } else if (!full_said) {
        full_said = 1;
        opp_agent_say("more distinct NVTX strings than opprof keeps; later ones are unnamed", NULL,
                      NULL);
    }
    pthread_mutex_unlock(&lock);
    return id;
}

void opp_str_atfork_prepare(void) { pthread_mutex_lock(&lock); }
void opp_str_atfork_parent(void) { pthread_mutex_unlock(&lock); }

void opp_str_forked(void)
{
    if (count)
        memset(tab, 0, sizeof tab);
    count = 0;
    next_id = OPP_STR_PRELOAD;
    full_said = 0;
    pthread_mutex_init(&lock, NULL); /* held by the forking thread's prepare */
}
