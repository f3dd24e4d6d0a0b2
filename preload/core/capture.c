/* Capture windows and steps (capture.h). The timer is a thread of ours that
 * sleeps to each deadline with every signal blocked, so the program never
 * sees it; deadlines are CLOCK_MONOTONIC, so a fork child continues the
 * same window. The schedule is torch.profiler.schedule's arithmetic over a
 * step counter that the markers advance. */
#include "core/capture.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedule.h"
#include "torch_rules.h"

#ifdef OPP_HAVE_CUDA
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#endif

int opp_capturing = 1;
int opp_enter_gate;
int opp_capture_api;
int opp_capture_due;
uint32_t opp_step_fn = UINT32_MAX, opp_step_msg;
_Atomic int opp_step_torch;
void (*opp_capture_changed)(void);

static int timer_open = 1, api_open = 1, sched_open = 1;
int opp_summary_windows;
static uint32_t window_no; /* the schedule window (from 1) of the last active step */
static uint64_t start_at, stop_at; /* monotonic ns; 0: none */

void opp_capture_update(void)
{
    int on = __atomic_load_n(&timer_open, __ATOMIC_RELAXED) &&
             __atomic_load_n(&api_open, __ATOMIC_RELAXED) &&
             __atomic_load_n(&sched_open, __ATOMIC_RELAXED);
    int was = __atomic_exchange_n(&opp_capturing, on, __ATOMIC_RELAXED);
    __atomic_store_n(&opp_enter_gate,
                     !on || opp_step_fn != UINT32_MAX || opp_stacks_n ||
                         __atomic_load_n(&opp_summary_windows, __ATOMIC_RELAXED) ||
                         __atomic_load_n(&opp_capture_due, __ATOMIC_RELAXED),
                     __ATOMIC_RELAXED);
    void (*changed)(void) = __atomic_load_n(&opp_capture_changed, __ATOMIC_ACQUIRE);
    if (changed && was != on)
        changed();
}

void opp_window_sync(void)
{
    static __thread uint32_t seen;
    uint32_t w = __atomic_load_n(&window_no, __ATOMIC_RELAXED);
    if (w == seen)
        return;
    struct opp_ring_hdr *r = opp_thread_ring();
    if (!r)
        return;
    uint64_t a[1] = {w};
    opp_publish_f(r, 0, r->depth, 0, 0, a, 1, OPP_REC_WINDOW, OPP_PUB_RECORD);
    seen = w;
}

/* opp_enter's slow path: the step marker, the window, the stack. */
int opp_enter_gated(struct opp_frame *f, uint32_t fn, uint32_t sp)
{
    if (OPP_UNLIKELY(__atomic_load_n(&opp_capture_due, __ATOMIC_RELAXED)))
        opp_capture_child_start();
    if (OPP_UNLIKELY(fn == opp_step_fn))
        opp_step_mark();
    if (!__atomic_load_n(&opp_capturing, __ATOMIC_RELAXED))
        return 0;
    if (__atomic_load_n(&opp_summary_windows, __ATOMIC_RELAXED))
        opp_window_sync();
    return opp_enter_ring(f, fn, opp_stacks_n != 0, sp);
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
        opp_capture_update();
    }
    if (stop_at) {
        sleep_until(stop_at);
        __atomic_store_n(&timer_open, 0, __ATOMIC_RELAXED);
        opp_capture_update();
    }
    return NULL;
}

static void start_timer(void)
{
    uint64_t now = opp_mono_ns();
    int pending = (start_at && now < start_at) || (stop_at && now < stop_at);
    __atomic_store_n(&timer_open, (!start_at || now >= start_at) && (!stop_at || now < stop_at),
                     __ATOMIC_RELAXED);
    opp_capture_update();
    if (!pending)
        return;
    int rc = opp_spawn(timer);
    if (rc) {
        opp_agent_say("cannot start the capture timer: ", strerror(rc),
                      "; recording for the whole run");
        __atomic_store_n(&timer_open, 1, __ATOMIC_RELAXED);
        opp_capture_update();
    }
}

/* ---- the schedule ---- */

static struct {
    long skip_first, wait, warmup, active, repeat;
    int on;
    uint64_t period_ns; /* time:N steps */
    pthread_mutex_t lock;
    long step;          /* the running step; -1 before the first marker */
    uint64_t step_begin; /* ticks */
    uint64_t step_range_end; /* ticks: where the range that began it ended, 0 while open */
} sched = {.lock = PTHREAD_MUTEX_INITIALIZER, .step = -1};

/* In the child of a fork that ran no atfork handler, the lock may be held
 * by a thread of the parent's: made anew (opp_capture_forked) first. */
static void sched_lock(void)
{
    opp_fork_check();
    pthread_mutex_lock(&sched.lock);
}

/* torch.profiler.schedule: 1 when step k is recorded (an active step). */
static int active_step(long k)
{
    if (k < sched.skip_first)
        return 0;
    k -= sched.skip_first;
    long cycle = sched.wait + sched.warmup + sched.active;
    if (sched.repeat > 0 && k / cycle >= sched.repeat)
        return 0;
    return k % cycle >= sched.wait + sched.warmup;
}

/* With sched.lock held, at each step: windows are marked for a collector
 * in summary mode (opp_conn_summary), whatever our environment says.
 * Nothing records before the first step, and a window changes only at a
 * step, so marking follows the collector from the step it has said its
 * mode at (the first, but for a collector that has not read our hello). */
static void windows_by_mode(void)
{
    if (sched.on)
        __atomic_store_n(&opp_summary_windows, opp_conn_summary(), __ATOMIC_RELAXED);
}

/* Step k (active) opens or continues window (k - skip_first) / cycle + 1. */
static void set_sched(long k)
{
    int on = active_step(k);
    if (on)
        __atomic_store_n(
            &window_no,
            (uint32_t)((k - sched.skip_first) / (sched.wait + sched.warmup + sched.active) + 1),
            __ATOMIC_RELAXED);
    __atomic_store_n(&sched_open, on, __ATOMIC_RELAXED);
}

/* Step k, when it was active, as an operator: ProfilerStep#k around what
 * it did, on this thread (the NVTX table's range entry, which every build
 * has: a step marked by call:NAME needs no NVTX). */
static void record_step(long k, uint64_t end)
{
    if (k < 0 || !active_step(k))
        return;
    char name[40];
    int n = snprintf(name, sizeof name, OPP_PROFILER_STEP "%ld", k);
    uint64_t a[OPP_COL_NVTX_COLS] = {[OPP_COL_NVTX_MSG] = opp_str_id(name, (size_t)n)};
    opp_record_at(OPP_FN_nvtx_range, sched.step_begin, end, a, OPP_COL_NVTX_COLS);
}

void opp_step_mark(void)
{
    static __thread int in_mark; /* a signal handler's marker inside ours: skipped */
    if (in_mark)
        return;
    in_mark = 1;
    sched_lock();
    uint64_t now = opp_now();
    long k = sched.step;
    windows_by_mode();
    record_step(k, now);
    sched.step = k + 1;
    sched.step_begin = now;
    sched.step_range_end = 0;
    set_sched(k + 1);
    opp_capture_update();
    pthread_mutex_unlock(&sched.lock);
    in_mark = 0;
}

void opp_step_range_end(uint64_t t)
{
    sched_lock();
    if (sched.on && t > sched.step_begin)
        sched.step_range_end = t;
    pthread_mutex_unlock(&sched.lock);
}

void opp_schedule_off(const char *why)
{
    sched_lock();
    int was = sched.on;
    sched.on = 0;
    pthread_mutex_unlock(&sched.lock);
    if (!was)
        return;
    opp_step_torch = 0;
    opp_agent_say("OPPROF_SCHEDULE ignored: ", why, "; recording for the whole run");
    __atomic_store_n(&sched_open, 1, __ATOMIC_RELAXED);
    opp_capture_update();
}

void opp_step_finish(void)
{
    sched_lock(); /* a time step's timer may be advancing it */
    int torch = opp_step_torch;
    if (sched.on && torch && sched.step < 0)
        opp_agent_say("OPPROF_STEP=", torch == OPP_STEP_TORCH_FORWARD ? "torch:forward" : "torch",
                      ": no step was marked (no torch step ran), so the schedule recorded nothing");
    if (sched.on && !sched.period_ns) {
        uint64_t end = sched.step_range_end > sched.step_begin ? sched.step_range_end : opp_now();
        record_step(sched.step, end);
        sched.on = 0; /* once */
    }
    pthread_mutex_unlock(&sched.lock);
}

static void *step_timer(void *arg)
{
    opp_tls.state = OPP_T_OFF;
    uint64_t next = opp_mono_ns();
    for (;;) {
        /* time steps have no ProfilerStep events: this thread records nothing */
        sched_lock();
        sched.step++;
        windows_by_mode();
        set_sched(sched.step);
        opp_capture_update();
        pthread_mutex_unlock(&sched.lock);
        next += sched.period_ns;
        sleep_until(next);
    }
    return NULL;
}

static uint32_t fn_named(const char *name)
{
    for (uint32_t i = 0; i < OPP_FN_COUNT; i++)
        if (opp_fn_info[i].name && !strcmp(opp_fn_info[i].name, name))
            return i;
    return UINT32_MAX;
}

/* OPPROF_SCHEDULE with OPPROF_STEP (schedule.h); anything wrong: one line,
 * no schedule. */
static void schedule_init(void)
{
    struct opp_schedule s;
    char why[300];
    switch (
        opp_schedule_parse(getenv("OPPROF_SCHEDULE"), getenv("OPPROF_STEP"), &s, why, sizeof why)) {
    case OPP_SCHEDULE_NONE:
        return;
    case OPP_SCHEDULE_BAD:
        opp_agent_say("OPPROF_SCHEDULE ignored (", why, ")");
        return;
    case OPP_SCHEDULE_NO_STEP:
    case OPP_SCHEDULE_BAD_STEP:
        opp_agent_say("OPPROF_SCHEDULE ignored: ", "OPPROF_STEP ", why);
        return;
    case OPP_SCHEDULE_OK:
        break;
    }
    switch (s.marker) {
    case OPP_MARK_TORCH:
    case OPP_MARK_TORCH_FORWARD:
        /* marked by preload/torch once torch is attached */
        opp_step_torch =
            s.marker == OPP_MARK_TORCH_FORWARD ? OPP_STEP_TORCH_FORWARD : OPP_STEP_TORCH_OPTIMIZER;
        break;
    case OPP_MARK_CALL:
        opp_step_fn = fn_named(s.name);
        if (opp_step_fn == UINT32_MAX) {
            opp_agent_say("OPPROF_SCHEDULE ignored: OPPROF_STEP names no function opprof "
                          "intercepts: ",
                          s.name, "");
            return;
        }
        break;
    case OPP_MARK_NVTX:
#ifdef OPP_HAVE_CUDA
        opp_step_msg = opp_str_id(s.name, strlen(s.name));
        if (!opp_step_msg)
            return;
#else
        opp_agent_say("OPPROF_SCHEDULE ignored: ", "this build has no NVTX support", "");
        return;
#endif
        break;
    case OPP_MARK_TIME:
        break;
    }
    sched.skip_first = s.skip_first;
    sched.wait = s.wait;
    sched.warmup = s.warmup;
    sched.active = s.active;
    sched.repeat = s.repeat;
    sched.period_ns = s.period_ns;
    sched.on = 1;
    windows_by_mode();
    __atomic_store_n(&sched_open, 0, __ATOMIC_RELAXED); /* nothing before the first step */
    opp_capture_update();
    if (sched.period_ns) {
        int rc = opp_spawn(step_timer);
        if (rc) {
            opp_agent_say("OPPROF_SCHEDULE ignored: cannot start the step timer: ", strerror(rc), "");
            sched.on = 0;
            __atomic_store_n(&sched_open, 1, __ATOMIC_RELAXED);
            opp_capture_update();
        }
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
    schedule_init();
    /* a fork child's timers start at its first connection too (a record
     * made without an intercepted call: an NVTX range, a torch op) */
    opp_conn_on_child_connect(opp_capture_child_start);
}

void opp_capture_forked(void)
{
    /* only the forking thread came along: the lock may have been held by
     * a timer thread that is not here */
    pthread_mutex_init(&sched.lock, NULL);
    /* its timers start at its first intercepted call (opp_enter_gated) or
     * its first record (a thread: not here) */
    if (start_at || stop_at || (sched.on && sched.period_ns)) {
        __atomic_store_n(&opp_capture_due, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&opp_enter_gate, 1, __ATOMIC_RELAXED);
    }
}

void opp_capture_child_start(void)
{
    if (!__atomic_exchange_n(&opp_capture_due, 0, __ATOMIC_RELAXED))
        return;
    if (start_at || stop_at)
        start_timer();
    if (sched.on && sched.period_ns && opp_spawn(step_timer)) {
        sched.on = 0; /* no steps in this child: record throughout */
        __atomic_store_n(&sched_open, 1, __ATOMIC_RELAXED);
    }
    opp_capture_update();
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
    opp_capture_update();
#else
    (void)fn;
#endif
}
