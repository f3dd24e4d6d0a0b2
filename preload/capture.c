/* Capture windows (see capture.h). The timer is a thread of ours that
 * sleeps to each deadline with every signal blocked, so the program never
 * sees it; deadlines are CLOCK_MONOTONIC, so a fork child continues the
 * same window. */
#include "capture.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "cupti_client.h" /* opp_agent_say */

#ifdef OPP_HAVE_CUDA
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#endif

int opp_capturing = 1;
int opp_capture_api;

static int timer_open = 1, api_open = 1;
static uint64_t start_at, stop_at; /* monotonic ns; 0: none */

static void update(void)
{
    __atomic_store_n(&opp_capturing,
                     __atomic_load_n(&timer_open, __ATOMIC_RELAXED) &&
                         __atomic_load_n(&api_open, __ATOMIC_RELAXED),
                     __ATOMIC_RELAXED);
}

static void sleep_until(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static void *timer(void *arg)
{
    opp_tls.state = OPP_T_OFF; /* nothing this thread does is the program's */
    if (start_at && opp_mono_ns() < start_at) {
        sleep_until(start_at);
        __atomic_store_n(&timer_open, 1, __ATOMIC_RELAXED);
        update();
    }
    if (stop_at) {
        sleep_until(stop_at);
        __atomic_store_n(&timer_open, 0, __ATOMIC_RELAXED);
        update();
    }
    return NULL;
}

static void start_timer(void)
{
    uint64_t now = opp_mono_ns();
    int pending = (start_at && now < start_at) || (stop_at && now < stop_at);
    __atomic_store_n(&timer_open, (!start_at || now >= start_at) && (!stop_at || now < stop_at),
                     __ATOMIC_RELAXED);
    update();
    if (!pending)
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int rc = pthread_create(&t, &a, timer, NULL);
    pthread_attr_destroy(&a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        opp_agent_say("cannot start the capture timer: ", strerror(rc),
                      "; recording for the whole run");
        __atomic_store_n(&timer_open, 1, __ATOMIC_RELAXED);
        update();
    }
}

/* Seconds as a decimal ("2", "0.5"); -1 when not one. */
static double seconds(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    double s = strtod(v, &end);
    if (errno || *end || !(s >= 0) || s > 1e9) {
        opp_agent_say(name, " is not a number of seconds, ignored: ", v);
        return 0;
    }
    return s;
}

void opp_capture_init(void)
{
    const char *c = getenv("OPPROF_CAPTURE");
    if (c && *c) {
        if (!strcmp(c, "cudaProfilerApi")) {
            opp_capture_api = 1;
            api_open = 0;
        } else {
            opp_agent_say("OPPROF_CAPTURE must be cudaProfilerApi, ignored: ", c, "");
        }
    }
    double delay = seconds("OPPROF_DELAY"), duration = seconds("OPPROF_DURATION");
    uint64_t now = opp_mono_ns();
    start_at = delay > 0 ? now + (uint64_t)(delay * 1e9) : 0;
    stop_at = duration > 0 ? (start_at ? start_at : now) + (uint64_t)(duration * 1e9) : 0;
    start_timer();
}

void opp_capture_forked(void)
{
    if (start_at || stop_at)
        start_timer();
}

void opp_capture_cuda(uint32_t fn)
{
#ifdef OPP_HAVE_CUDA
    if (fn == OPP_FN_CUDA_RT_BASE + CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000 ||
        fn == OPP_FN_CUDA_DRV_BASE + CUPTI_DRIVER_TRACE_CBID_cuProfilerStart)
        __atomic_store_n(&api_open, 1, __ATOMIC_RELAXED);
    else if (fn == OPP_FN_CUDA_RT_BASE + CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000 ||
             fn == OPP_FN_CUDA_DRV_BASE + CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)
        __atomic_store_n(&api_open, 0, __ATOMIC_RELAXED);
    else
        return;
    update();
#else
    (void)fn;
#endif
}
