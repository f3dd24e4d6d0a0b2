/* Threads of our own (capture timers, CUPTI's flusher): detached, every
 * signal blocked, so the program's handlers never run on them. */
#include "core/base.h"

#include <pthread.h>
#include <signal.h>

int opp_spawn(void *(*fn)(void *))
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int rc = pthread_create(&t, &a, fn, NULL);
    pthread_attr_destroy(&a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
