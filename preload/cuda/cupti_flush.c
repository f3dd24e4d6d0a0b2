/* The CUPTI client's activity buffers (cupti_state.h): each one CUPTI
 * hands back converted (cupti_conv.c) and sent to the collector; the
 * flush thread that asks for them; and at a fatal signal the forced flush
 * of what CUPTI holds. */
#include "core/internal.h"
#include "cuda/internal.h"

#ifdef OPP_HAVE_CUDA

#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda/cupti_state.h"

#define BUF_BYTES (4u << 20) /* an activity buffer handed to CUPTI */

void CUPTIAPI opp_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    void *p = NULL;
    if (posix_memalign(&p, 8, BUF_BYTES))
        p = NULL;
    *buffer = p;
    *size = p ? BUF_BYTES : 0;
    *max_records = 0;
}

static void buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                             size_t valid)
{
    /* Asked before our lock is taken: CUPTI may hold its own while a
     * flush on another thread waits for ours (Kineto met that deadlock). */
    size_t dropped = 0;
    if (opp_cupti_client.lib_cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) !=
        CUPTI_SUCCESS)
        dropped = 0;
    opp_cupti_clock_point(); /* the newest records fall inside the points */
    pthread_mutex_lock(&opp_cupti_client.lock);
    opp_conv_buffer(&opp_cupti_client.conv, buffer, valid);
    uint64_t lost = opp_cupti_client.conv.lost - opp_cupti_client.lost_reported;
    uint64_t unfinished = opp_cupti_client.conv.unfinished - opp_cupti_client.unfinished_reported;
    if (dropped || lost || unfinished) {
        struct opp_gpu_rec r = {.type = OPP_GPU_DROPPED, .nfields = OPP_GF_D_COUNT};
        r.f[OPP_GF_D_CUPTI] = dropped;
        r.f[OPP_GF_D_OURS] = lost;
        r.f[OPP_GF_D_UNFINISHED] = unfinished;
        opp_conv_put(&opp_cupti_client.conv, &r);
        opp_cupti_client.unfinished_reported = opp_cupti_client.conv.unfinished;
    }
    opp_conv_flush(&opp_cupti_client.conv);
    opp_cupti_client.lost_reported =
        lost ? opp_cupti_client.conv.lost : opp_cupti_client.lost_reported;
    pthread_mutex_unlock(&opp_cupti_client.lock);
    free(buffer);
}

void CUPTIAPI opp_cupti_buffer_done(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                    size_t valid)
{
    buffer_completed(ctx, stream, buffer, size, valid);
}

/* ---- the flush thread ----
 * CUPTI hands over a buffer when it is full, at a forced flush (ours at
 * exit), or when asked: cuptiActivityFlushAll(0) returns every buffer whose
 * records are complete, full or not (cuptiActivityFlushPeriod only full
 * ones). Asked every OPPROF_GPU_FLUSH_MS, a program that ends without exit
 * handlers (_exit, SIGKILL) loses at most that much of finished GPU work.
 * The thread also makes the forced flush a fatal signal asks for (below),
 * so it runs with the period off too. flush_thread.lock is held only around a flush,
 * never with a lock of ours. */
#define FLUSH_MS_DEFAULT 200u
static struct {
    pthread_mutex_t lock;
    sem_t wake;
    unsigned ms; /* 0: no periodic flush */
    int stop;
    /* read by the fatal-signal handler, on any thread: atomics, lock-free */
    _Atomic int running, forced_asked, forced_done;
} flush_thread = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *flusher(void *arg)
{
    opp_tls.state = OPP_T_OFF; /* nothing this thread does is the program's */
    for (;;) {
        int woken;
        if (flush_thread.ms) {
            struct timespec at;
            clock_gettime(CLOCK_MONOTONIC, &at);
            at.tv_sec += flush_thread.ms / 1000u;
            at.tv_nsec += (long)(flush_thread.ms % 1000u) * 1000000L;
            if (at.tv_nsec >= 1000000000L)
                at.tv_sec++, at.tv_nsec -= 1000000000L;
            woken = sem_clockwait(&flush_thread.wake, CLOCK_MONOTONIC, &at) == 0;
        } else {
            woken = sem_wait(&flush_thread.wake) == 0;
        }
        if (!woken && errno != ETIMEDOUT)
            continue; /* EINTR */
        pthread_mutex_lock(&flush_thread.lock);
        if (flush_thread.stop) {
            pthread_mutex_unlock(&flush_thread.lock);
            return NULL;
        }
        if (atomic_load(&flush_thread.forced_asked)) {
            opp_cupti_client.lib_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
            atomic_store(&flush_thread.forced_done, 1);
        } else if (!woken) {
            opp_cupti_clock_point();
            opp_cupti_client.lib_cuptiActivityFlushAll(0);
        }
        pthread_mutex_unlock(&flush_thread.lock);
    }
}

void opp_cupti_start_flusher(void)
{
    const char *v = getenv("OPPROF_GPU_FLUSH_MS");
    unsigned long ms = FLUSH_MS_DEFAULT;
    if (v && *v) {
        char *end;
        errno = 0;
        ms = strtoul(v, &end, 10);
        if (errno || *end || ms > 60000) {
            opp_agent_say("OPPROF_GPU_FLUSH_MS must be milliseconds from 0 to 60000, ignored: ", v,
                          "");
            ms = FLUSH_MS_DEFAULT;
        }
    }
    flush_thread.ms = (unsigned)ms; /* 0: buffers come when full, at exit and at a fatal signal */
    flush_thread.stop = 0;
    atomic_store(&flush_thread.forced_asked, 0);
    atomic_store(&flush_thread.forced_done, 0);
    sem_init(&flush_thread.wake, 0, 0);
    int rc = opp_spawn(flusher);
    if (rc)
        opp_agent_say("cannot start the GPU flush thread: ", strerror(rc),
                      "; GPU records come when a buffer is full and at exit");
    atomic_store(&flush_thread.running, rc == 0);
}

/* The flush thread leaves its flush (or is given half a second to), then
 * stops: the forced flush that follows is the last. */
void opp_cupti_stop_flusher(void)
{
    if (!atomic_load(&flush_thread.running))
        return;
    atomic_store(&flush_thread.running, 0); /* a fatal signal from now on asks it nothing */
    for (int i = 0; i < 500; i++) {
        if (pthread_mutex_trylock(&flush_thread.lock) == 0) {
            flush_thread.stop = 1;
            pthread_mutex_unlock(&flush_thread.lock);
            sem_post(&flush_thread.wake);
            break;
        }
        struct timespec ms = {0, 1000000L};
        nanosleep(&ms, NULL);
    }
}

void opp_cupti_flush(void)
{
    if (opp_cupti_buffers_ours()) {
        opp_cupti_stop_flusher();
        opp_cupti_clock_point();
        opp_cupti_client.lib_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
}

/* ---- signals: what CUPTI holds is handed over before the program dies ----
 * A fatal signal can land while its thread holds a lock of malloc's or
 * CUPTI's, so the handler does nothing that is not async-signal-safe: it
 * asks the flush thread for the forced flush (sem_post), waits for it at
 * most 2 s (nanosleep), and dies of the signal either way. No alarm: the
 * program's SIGALRM stays its own, blocked or not. */
#define FATAL_WAIT_MS 2000
static const int flush_signals[] = {SIGTERM, SIGINT, SIGHUP};

static void on_fatal(int sig)
{
    int saved = errno;
    signal(sig, SIG_DFL);
    if (atomic_load(&flush_thread.running)) {
        atomic_store(&flush_thread.forced_asked, 1);
        sem_post(&flush_thread.wake);
        struct timespec ms = {0, 1000000L};
        for (int i = 0; i < FATAL_WAIT_MS && !atomic_load(&flush_thread.forced_done); i++)
            nanosleep(&ms, NULL);
        if (!atomic_load(&flush_thread.forced_done))
            opp_agent_say("the GPU flush at a fatal signal did not end within 2 s: GPU work "
                          "since the last flush is lost",
                          "", "");
    }
    errno = saved;
    raise(sig); /* SA_NODEFER: delivered now, with its default action */
}

void opp_cupti_install_signals(void)
{
    for (size_t i = 0; i < sizeof flush_signals / sizeof *flush_signals; i++) {
        struct sigaction old;
        if (sigaction(flush_signals[i], NULL, &old) || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue; /* the program's own handler stays */
        struct sigaction sa = {.sa_handler = on_fatal, .sa_flags = SA_NODEFER | SA_RESTART};
        sigemptyset(&sa.sa_mask);
        sigaction(flush_signals[i], &sa, NULL);
    }
}

void opp_cupti_flush_forked(void)
{
    pthread_mutex_init(&flush_thread.lock, NULL);
    atomic_store(&flush_thread.running, 0);
}

#endif
