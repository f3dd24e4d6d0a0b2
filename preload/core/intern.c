/* Interning tables of the preload (intern.h). */
#include "core/intern.h"

#include <string.h>

/* The slot holding h, or the free slot where it goes (NULL: none left). */
static struct opp_intern_slot *probe(struct opp_intern *t, uint64_t h)
{
    for (uint32_t i = 0, k = (uint32_t)h & (t->cap - 1); i < t->cap; i++, k = (k + 1) & (t->cap - 1)) {
        uint64_t e = atomic_load_explicit(&t->tab[k].hash, memory_order_acquire);
        if (e == h || e == 0)
            return &t->tab[k];
    }
    return NULL;
}

uint32_t opp_intern_find(struct opp_intern *t, uint64_t h)
{
    struct opp_intern_slot *e = probe(t, h);
    if (e && atomic_load_explicit(&e->hash, memory_order_acquire) == h)
        return atomic_load_explicit(&e->id, memory_order_relaxed);
    return 0;
}

/* Around a table's lock, held while a new entry is sent: a signal
 * handler that jumps out of the send (a seccomp filter's SIGSYS) leaves
 * the lock let go (the table's next new entry, or a fork's atfork
 * handler, would wait on it for ever), and no handler of the program's
 * runs while it is held (opp_guard). */
struct intern_guard {
    struct opp_guard g;
    struct opp_intern *t;
    volatile int locked;
};

static void intern_left(struct opp_unwind *u)
{
    struct intern_guard *g = (struct intern_guard *)u;
    if (g->locked)
        pthread_mutex_unlock(&g->t->lock);
    opp_guard_left(&g->g);
}

static void intern_lock(struct intern_guard *g, struct opp_intern *t)
{
    g->t = t;
    g->locked = 0;
    opp_guard_on(&g->g, intern_left);
    pthread_mutex_lock(&t->lock);
    g->locked = 1;
}

static void intern_unlock(struct intern_guard *g)
{
    pthread_mutex_unlock(&g->t->lock);
    opp_guard_off(&g->g);
}

uint32_t opp_intern_id(struct opp_intern *t, uint64_t h, void (*send)(uint32_t id, void *ctx),
                       void *ctx)
{
    uint32_t found = opp_intern_find(t, h);
    if (found)
        return found;
    struct intern_guard g;
    intern_lock(&g, t);
    struct opp_intern_slot *e = probe(t, h);
    uint32_t id = 0;
    if (e && atomic_load_explicit(&e->hash, memory_order_relaxed) == h) {
        id = atomic_load_explicit(&e->id, memory_order_relaxed);
    } else if (e && t->count < t->limit) {
        id = t->next_id++;
        send(id, ctx);
        atomic_store_explicit(&e->id, id, memory_order_relaxed);
        atomic_store_explicit(&e->hash, h, memory_order_release);
        t->count++;
    } else if (!t->full_said) {
        t->full_said = 1;
        opp_agent_say(t->full_msg, NULL, NULL);
    }
    intern_unlock(&g);
    return id;
}

uint32_t opp_intern_unkept(struct opp_intern *t, _Atomic uint32_t *once,
                           void (*send)(uint32_t id, void *ctx), void *ctx)
{
    uint32_t id = once ? atomic_load_explicit(once, memory_order_acquire) : 0;
    if (id)
        return id;
    struct intern_guard g;
    intern_lock(&g, t);
    if (!once || !(id = atomic_load_explicit(once, memory_order_relaxed))) {
        id = t->next_id++;
        send(id, ctx);
        if (once)
            atomic_store_explicit(once, id, memory_order_release);
    }
    intern_unlock(&g);
    return id;
}

void opp_intern_reset(struct opp_intern *t)
{
    if (t->count)
        memset(t->tab, 0, (size_t)t->cap * sizeof *t->tab);
    t->count = 0;
    t->next_id = t->first_id;
    t->full_said = 0;
    pthread_mutex_init(&t->lock, NULL);
}
