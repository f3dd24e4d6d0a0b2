/* The core's fifth layer: what the collector hears of once per process,
 * before any event names it: interning tables (intern.c) and the string
 * ids built on one (strtab.c). Below: conn.h. */
#ifndef OPP_CORE_INTERN_H
#define OPP_CORE_INTERN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/conn.h"

/* ---- interning (intern.c) ----
 * Per-process interning of things the collector must hear of once
 * (strings, code stacks): an open-addressing table of 64-bit hashes read
 * without locks; a new entry gets the next id under a mutex, is sent, and
 * only then published, so no event can name an id the collector lacks.
 * The hash stands for the thing (a 64-bit collision would merge two). */

struct opp_intern_slot {
    _Atomic uint64_t hash; /* 0: free */
    _Atomic uint32_t id;
};

struct opp_intern {
    struct opp_intern_slot *tab; /* cap slots, a power of two */
    uint32_t cap, limit;         /* entries kept: at most limit (3/4 of cap) */
    uint32_t first_id, next_id, count;
    int full_said;
    const char *full_msg; /* said once when full */
    pthread_mutex_t lock;
};

#define OPP_INTERN_INIT(slots, ncap, first, msg)                                                   \
    {                                                                                              \
        .tab = (slots), .cap = (ncap), .limit = (ncap) / 4 * 3, .first_id = (first),               \
        .next_id = (first), .full_msg = (msg), .lock = PTHREAD_MUTEX_INITIALIZER                   \
    }

/* The id of the entry with hash h, 0 when it has none yet (no lock). */
uint32_t opp_intern_find(struct opp_intern *t, uint64_t h);
/* The id of the entry with hash h; a new one is first passed to send(id,
 * ctx) under the table's lock. 0 when the table is full (said once). */
uint32_t opp_intern_id(struct opp_intern *t, uint64_t h, void (*send)(uint32_t id, void *ctx),
                       void *ctx);
/* A new id for a thing the table does not keep (it is never looked up:
 * the table's room is for what recurs), first passed to send(id, ctx)
 * under the table's lock; with once, the first such id is kept in *once
 * and given again thereafter, nothing sent. */
uint32_t opp_intern_unkept(struct opp_intern *t, _Atomic uint32_t *once,
                           void (*send)(uint32_t id, void *ctx), void *ctx);
/* In a fork child: empty, ids from the first again, the lock re-made. */
void opp_intern_reset(struct opp_intern *t);

/* ---- string ids (strtab.c) ----
 * NVTX messages, domains, step names, module paths: the same bytes get
 * the same id (but for torch.profiler's steps, below), from
 * OPP_STR_PRELOAD up, and the collector has the
 * STRING record (an OPP_MSG_GPU message) before the id is used in any
 * event. Lookups of known strings take no lock. */

/* The id of s[0..n), 0 for NULL or when the table is full (said once).
 * torch.profiler's steps, a string each (ProfilerStep#N), are not kept in
 * the table, which a long run's steps would fill: each gets an id of its
 * own, or, under a collector in summary mode (opp_conn_summary), the
 * process's first step's id: the collector keys every step by the first's
 * string (common/summary.h), so no string is sent a step. */
uint32_t opp_str_id(const char *s, size_t n);
/* Around fork() (the agent's atfork handlers): the table's lock is held
 * across it; the child is a process of its own, whose ids start over. */
void opp_str_atfork_prepare(void);
void opp_str_atfork_parent(void);
void opp_str_forked(void);

#endif
