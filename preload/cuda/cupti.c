/* The agent's CUPTI client. CUPTI is dlopened (never linked), so a process
 * that does not use CUDA never loads it. It subscribes to the runtime and
 * driver API domains (each call becomes an event in the thread's ring, with
 * its correlation id and status) and collects GPU activity in buffers that
 * are converted (cupti_conv.c) and sent to the collector. When CUPTI cannot
 * serve, one line names the cause and the symbol fallback (tramp.S)
 * keeps recording API calls. */
#include "core/internal.h"
#include "cuda/internal.h"

#ifdef OPP_HAVE_CUDA

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda/cupti_conv.h"

#define BUF_BYTES (4u << 20)
#define DEPTH_MAX 32u

typedef CUptiResult (*subscribe_fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
typedef CUptiResult (*subscribe_v2_fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
                                       CUpti_SubscriberParams *);

/* The CUPTI entry points we use, looked up in the library we opened. */
#define CUPTI_FNS(X)                                                                               \
    X(cuptiSubscribe, CUptiResult, (CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *))        \
    X(cuptiEnableDomain, CUptiResult, (uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain))   \
    X(cuptiActivityRegisterCallbacks, CUptiResult,                                                 \
      (CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))                       \
    X(cuptiActivityEnable, CUptiResult, (CUpti_ActivityKind))                                      \
    X(cuptiActivityFlushAll, CUptiResult, (uint32_t))                                              \
    X(cuptiActivityGetNextRecord, CUptiResult, (uint8_t *, size_t, CUpti_Activity **))            \
    X(cuptiActivityGetNumDroppedRecords, CUptiResult, (CUcontext, uint32_t, size_t *))            \
    X(cuptiActivityPushExternalCorrelationId, CUptiResult, (CUpti_ExternalCorrelationKind, uint64_t)) \
    X(cuptiActivityPopExternalCorrelationId, CUptiResult, (CUpti_ExternalCorrelationKind, uint64_t *)) \
    X(cuptiActivityDisable, CUptiResult, (CUpti_ActivityKind))                                     \
    X(cuptiUnsubscribe, CUptiResult, (CUpti_SubscriberHandle))                                    \
    X(cuptiFinalize, CUptiResult, (void))

static struct {
#define CUPTI_PTR(name, ret, args) ret(*name) args;
    CUPTI_FNS(CUPTI_PTR)
#undef CUPTI_PTR
    subscribe_v2_fn subscribe_v2;
    CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                   CUpti_CallbackId);
    const char *(*result_string)(CUptiResult, const char **);
    CUptiResult (*register_timestamp)(CUpti_TimestampCallbackFunc); /* CUDA 11.6 and later */
    CUptiResult (*get_timestamp)(uint64_t *);
    pthread_mutex_t lock; /* init, and the converter */
    int tried, on;
    int taken; /* another client took the activity buffers: no flush of ours goes to it */
    int yielded;    /* we let go of CUPTI for another client, which holds it now */
    int conv_stale; /* a fork child's converter: its names went on the parent's connection */
    int conv_ready;
    int forked_copy; /* a fork child whose parent ran CUPTI: the child's copy is the parent's */
    void *handle; /* the CUPTI library we opened */
    CUpti_SubscriberHandle sub;
    struct opp_conv conv;
    uint64_t lost_reported, unfinished_reported;
    char self[PATH_MAX];
} C = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Whether CUPTI's activity buffers come to us: asking for them hands them
 * over (not once another client took them, nor before we started). */
static int buffers_ours(void)
{
    return C.on && !__atomic_load_n(&C.taken, __ATOMIC_RELAXED);
}

/* ---- correlation ids past 32 bits ----
 * CUPTI's are 32-bit and wrap after 2^32 calls (about an hour at a million
 * a second), after which two calls would share one. Each is extended to 64
 * bits against a high-water mark that moves in steps of 2^30: every API
 * enter callback, recorded or not, moves it when its id enters a new
 * quarter of the 32-bit range (one load and compare per call, a store four
 * times per wrap), and an id is read as the 64-bit value nearest the mark,
 * right while no id is more than 2^31 calls from it: a buffer is never
 * that late. 0 is no call's (CUPTI_CORRELATION_ID_UNKNOWN) and stays 0. */
#define CORR_STEP_BITS 30
static uint64_t corr_mark;
/* Added to every id: after another client's cuptiFinalize CUPTI may number
 * calls from 1 again, and the ids of before stay in the trace. */
static uint64_t corr_base;

/* v read against mark m, before corr_base */
static uint64_t corr_raw(uint32_t v, uint64_t m)
{
    int64_t d = (int32_t)(v - (uint32_t)m);
    return d < 0 && (uint64_t)-d > m ? v : m + (uint64_t)d; /* ids start at 1 */
}

static uint64_t corr_extend(uint32_t v)
{
    if (v == CUPTI_CORRELATION_ID_UNKNOWN)
        return 0;
    return corr_raw(v, __atomic_load_n(&corr_mark, __ATOMIC_RELAXED)) +
           __atomic_load_n(&corr_base, __ATOMIC_RELAXED);
}

/* An id of a call now made: the mark follows it into a new quarter. */
static uint64_t corr_now(uint32_t v)
{
    if (v == CUPTI_CORRELATION_ID_UNKNOWN)
        return 0;
    uint64_t m = __atomic_load_n(&corr_mark, __ATOMIC_RELAXED);
    uint64_t x = corr_raw(v, m);
    while (OPP_UNLIKELY(x >> CORR_STEP_BITS > m >> CORR_STEP_BITS) &&
           !__atomic_compare_exchange_n(&corr_mark, &m, x >> CORR_STEP_BITS << CORR_STEP_BITS, 0,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
    return x + __atomic_load_n(&corr_base, __ATOMIC_RELAXED);
}

/* CUPTI numbered afresh: every id from now on above every one so far. */
static void corr_restart(void)
{
    uint64_t m = __atomic_load_n(&corr_mark, __ATOMIC_RELAXED);
    __atomic_store_n(&corr_base, __atomic_load_n(&corr_base, __ATOMIC_RELAXED) + m + (1ull << 32),
                     __ATOMIC_RELAXED);
    __atomic_store_n(&corr_mark, 0, __ATOMIC_RELAXED);
}

/* ---- capture windows: GPU work kept when its call was made in one ----
 * Correlation ids grow with each call, so the windows are ranges of them:
 * [lo, hi) for those that closed, [open_lo, ...) for the one open now. An
 * API callback that finds the capture state changed since the last one
 * turns the window at its own id. Never closed: everything is kept. */
#define WINDOWS_MAX 1024u
static struct {
    pthread_mutex_t lock;
    int open, ever_closed;
    uint32_t n;
    uint64_t open_lo;
    struct { uint64_t lo, hi; } w[WINDOWS_MAX];
} W = {.lock = PTHREAD_MUTEX_INITIALIZER, .open = 1};

static void window_turn(uint64_t corr)
{
    pthread_mutex_lock(&W.lock);
    int on = __atomic_load_n(&opp_capturing, __ATOMIC_RELAXED);
    if (on != W.open) {
        if (on) {
            W.open_lo = corr;
        } else {
            if (W.n == WINDOWS_MAX) { /* the two oldest become one (keeps more, never less) */
                W.w[1].lo = W.w[0].lo;
                memmove(&W.w[0], &W.w[1], (W.n - 1) * sizeof W.w[0]);
                W.n--;
            }
            W.w[W.n].lo = W.open_lo;
            W.w[W.n].hi = corr;
            W.n++;
            __atomic_store_n(&W.ever_closed, 1, __ATOMIC_RELEASE);
        }
        __atomic_store_n(&W.open, on, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&W.lock);
}

/* The converter's filter (under C.lock; recent windows first). */
static int window_keep(uint64_t corr)
{
    if (!__atomic_load_n(&W.ever_closed, __ATOMIC_ACQUIRE))
        return 1;
    pthread_mutex_lock(&W.lock);
    int keep = W.open && corr >= W.open_lo;
    for (uint32_t i = W.n; !keep && i-- > 0;)
        keep = corr >= W.w[i].lo && corr < W.w[i].hi;
    pthread_mutex_unlock(&W.lock);
    return keep;
}

/* ---- the calls not recorded ----
 * Queries a framework makes thousands of times a step (the current device
 * or context, the last error, an attribute, whether a stream is capturing,
 * the driver's entry points), each a record of no information. The driver
 * ones are turned off in CUPTI after the domains are on. The runtime ones
 * keep their callback, unrecorded: it marks the runtime call open, so the
 * driver calls made inside it (whichever they are) are never taken for the
 * program's own, as they were on the H200 when they too were turned off. */
static const struct { CUpti_CallbackDomain dom; CUpti_CallbackId id; } trivial[] = {
#define RT(x) {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##x}
#define DRV(x) {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##x}
    RT(cudaGetDevice_v3020), RT(cudaGetLastError_v3020), RT(cudaPeekAtLastError_v3020),
    RT(cudaGetDeviceCount_v3020), RT(cudaDeviceGetAttribute_v5000), RT(cudaStreamIsCapturing_v10000),
    RT(cudaStreamGetCaptureInfo_v10010), RT(cudaStreamGetCaptureInfo_v2_v11030),
    RT(cudaPointerGetAttributes_v4000), RT(cudaFuncGetAttributes_v3020),
    RT(cudaDriverGetVersion_v3020), RT(cudaRuntimeGetVersion_v3020),
    DRV(cuCtxGetCurrent), DRV(cuCtxGetDevice), DRV(cuCtxGetDevice_v2), DRV(cuCtxGetId), DRV(cuDeviceGet),
    DRV(cuDeviceGetCount), DRV(cuDeviceGetAttribute), DRV(cuGetProcAddress), DRV(cuGetProcAddress_v2),
    DRV(cuGetExportTable), DRV(cuDriverGetVersion), DRV(cuPointerGetAttribute),
    DRV(cuPointerGetAttributes), DRV(cuKernelGetName), DRV(cuLibraryGetKernel),
    DRV(cuFuncGetAttribute), DRV(cuStreamIsCapturing), DRV(cuStreamIsCapturing_ptsz),
    DRV(cuStreamGetCaptureInfo), DRV(cuStreamGetCaptureInfo_v2), DRV(cuStreamGetCaptureInfo_v3),
#undef RT
#undef DRV
};
#define RT_CBID_MAX 1024u
static uint8_t rt_trivial[RT_CBID_MAX];

static void skip_trivial(void)
{
    for (size_t i = 0; i < sizeof trivial / sizeof *trivial; i++) {
        if (trivial[i].dom == CUPTI_CB_DOMAIN_RUNTIME_API && trivial[i].id < RT_CBID_MAX)
            rt_trivial[trivial[i].id] = 1;
        else if (C.enable_callback) /* without it (an old CUPTI) they are recorded */
            C.enable_callback(0, C.sub, trivial[i].dom, trivial[i].id);
    }
}

/* API calls in flight on this thread, as CUPTI reports them. */
static __thread struct {
    uint32_t depth, runtime_open;
    struct {
        struct opp_frame f;
        uint8_t recorded, runtime;
    } s[DEPTH_MAX];
} T __attribute__((tls_model("initial-exec")));

/* ---- API callbacks: enter and exit of every runtime and driver call ---- */

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
                                 const void *data)
{
    if (dom == CUPTI_CB_DOMAIN_RESOURCE) {
        /* a context is about to go, and its buffered records with it */
        if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING && buffers_ours())
            C.cuptiActivityFlushAll(0);
        return;
    }
    if (dom != CUPTI_CB_DOMAIN_RUNTIME_API && dom != CUPTI_CB_DOMAIN_DRIVER_API)
        return;
    const CUpti_CallbackData *cb = data;
    int rt = dom == CUPTI_CB_DOMAIN_RUNTIME_API;
    if (cb->callbackSite == CUPTI_API_ENTER) {
        /* every call moves the mark, recorded or not */
        uint64_t corr = corr_now(cb->correlationId);
        if (rt && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 && buffers_ours())
            C.cuptiActivityFlushAll(0); /* the reset destroys what is buffered */
        uint32_t d = T.depth++;
        if (d >= DEPTH_MAX)
            return;
        uint32_t fn = (rt ? OPP_FN_CUDA_RT_BASE : OPP_FN_CUDA_DRV_BASE) + cbid;
        uint32_t lim = rt ? OPP_FN_CUDA_DRV_BASE : OPP_FN_COUNT;
        /* Driver calls a runtime call makes for it are its implementation,
         * not the program's: only direct driver calls are recorded. */
        int want = fn < lim && (rt ? !(cbid < RT_CBID_MAX && rt_trivial[cbid]) : !T.runtime_open);
        if (OPP_UNLIKELY(opp_capture_api))
            opp_capture_cuda(fn);
        if (OPP_UNLIKELY(__atomic_load_n(&opp_capturing, __ATOMIC_RELAXED) !=
                         __atomic_load_n(&W.open, __ATOMIC_RELAXED)))
            window_turn(corr);
        T.s[d].runtime = (uint8_t)rt;
        T.s[d].recorded = want ? (uint8_t)opp_enter(&T.s[d].f, fn) : 0;
        T.runtime_open += (uint32_t)rt;
        return;
    }
    if (!T.depth)
        return; /* an exit whose enter came before we subscribed */
    uint32_t d = --T.depth;
    if (d >= DEPTH_MAX)
        return;
    T.runtime_open -= T.s[d].runtime;
    if (T.s[d].recorded) {
        /* functionReturnValue points at what the call returned, of its
         * own type: only a cudaError_t or CUresult is read as a status */
        int status = cb->functionReturnValue && opp_cuda_has_status(T.s[d].f.fn)
                         ? *(const int *)cb->functionReturnValue
                         : 0;
        const uint64_t a[OPP_COL_CUDA_COLS] = {[OPP_COL_CUDA_STATUS] = (uint64_t)(uint32_t)status,
                                               [OPP_COL_CUDA_CORR] = corr_extend(cb->correlationId),
                                               [OPP_COL_CUDA_CBID] = cbid};
        opp_leave(&T.s[d].f, a, 3);
    }
}

/* ---- external correlation: GPU library calls (core/internal.h) ----
 * CUPTI ties an external id only to its API activity records ("the
 * activity API record will be preceded by a CUpti_ActivityExternalCorrelation
 * record"), which need the RUNTIME and DRIVER activity kinds: one more
 * record per CUDA call, of what the callbacks already record. A launch
 * recorded by them is already inside its library call's event, so the
 * kinds and the pushes are off unless OPPROF_GPU_EXTCORR=1 (for calls whose
 * events are missing: dropped from a full buffer). The kind is CUSTOM2:
 * Kineto pushes CUSTOM0 and CUSTOM1, and both can push in one process. */
#define EXTCORR_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2
_Static_assert(EXTCORR_KIND == OPP_EXTCORR_KIND, "the kind the report reads");

/* A 0/1 setting (OPPROF_GPU_EXTCORR, OPPROF_GPU_SYNC), 0 when unset. */
static int env_flag(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v || !strcmp(v, "0"))
        return 0;
    if (!strcmp(v, "1"))
        return 1;
    opp_agent_say(name, " must be 0 or 1, ignored: ", v);
    return 0;
}

static __thread uint32_t ext_seq __attribute__((tls_model("initial-exec")));

/* thread id << 32 | a per-thread count (never 0): unique in the process
 * without a shared counter. errno is the program's, on both sides. */
static uint64_t extcorr_push(void)
{
    struct opp_ring_hdr *r = opp_tls.ring;
    if (!r || !C.on)
        return 0;
    if (++ext_seq == 0)
        ext_seq = 1;
    uint64_t id = (uint64_t)r->tid << 32 | ext_seq;
    int saved = errno;
    CUptiResult rc = C.cuptiActivityPushExternalCorrelationId(EXTCORR_KIND, id);
    errno = saved;
    return rc == CUPTI_SUCCESS ? id : 0;
}

static void extcorr_pop(void)
{
    uint64_t id;
    int saved = errno;
    C.cuptiActivityPopExternalCorrelationId(EXTCORR_KIND, &id);
    errno = saved;
}

/* ---- CUPTI's timestamps on our clock ----
 * CUPTI stamps GPU work with our clock where it can
 * (cuptiActivityRegisterTimestampCallback). Where it cannot (a CUPTI
 * without it, or one that refuses), its own timestamps are mapped onto
 * ours through calibration points, pairs of (cuptiGetTimestamp, our clock)
 * taken at start, at each flush and before each buffer is converted: a
 * timestamp goes through the segment of points around it (extrapolated
 * past the ends), so a clock that drifts against ours is followed, not
 * just shifted. A point is the narrowest of a few reads of both clocks: a
 * thread preempted between two reads would put it off by half the wait,
 * and every GPU timestamp near it with it; one with no read narrow enough
 * is not taken (the next flush takes one) unless it would be the first,
 * which the next good one then replaces. Past the points (a buffer whose
 * own point was not taken) the line goes through the first and the last:
 * the last segment may be a few ms, its slope off by its points' errors. */
#define CLOCK_POINTS 64u
#define CLOCK_TRIES 3
#define CLOCK_SPAN_MAX 100000u /* ns between our two reads, at most */
static struct {
    pthread_mutex_t lock;
    int calibrated; /* 0: CUPTI stamps with our clock */
    int first_poor; /* the one point there is had no narrow read */
    uint32_t n;
    struct { uint64_t gpu, ours; } p[CLOCK_POINTS]; /* oldest first */
} K = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t CUPTIAPI timestamp(void) { return opp_mono_ns(); }

static void clock_point(void)
{
    if (!K.calibrated || !C.get_timestamp)
        return;
    uint64_t g = 0, mid = 0, span = UINT64_MAX;
    for (int i = 0; i < CLOCK_TRIES; i++) {
        uint64_t t = 0, a = opp_mono_ns();
        if (C.get_timestamp(&t) != CUPTI_SUCCESS)
            return;
        uint64_t b = opp_mono_ns();
        if (b - a < span) {
            span = b - a;
            g = t;
            mid = a + (b - a) / 2;
        }
    }
    int good = span <= CLOCK_SPAN_MAX;
    pthread_mutex_lock(&K.lock);
    if (K.n == 1 && K.first_poor && good)
        K.n = 0;
    if (!K.n || (good && g > K.p[K.n - 1].gpu)) { /* a poor first beats none */
        if (!K.n)
            K.first_poor = !good;
        if (K.n == CLOCK_POINTS) {
            memmove(&K.p[0], &K.p[1], (CLOCK_POINTS - 1) * sizeof K.p[0]);
            K.n--;
        }
        K.p[K.n].gpu = g;
        K.p[K.n].ours = mid;
        K.n++;
    }
    pthread_mutex_unlock(&K.lock);
}

/* A CUPTI timestamp on our clock (the converter's, under C.lock). */
static uint64_t clock_ours(uint64_t t)
{
    if (!t)
        return 0; /* not collected */
    pthread_mutex_lock(&K.lock);
    uint64_t r = t;
    if (K.n == 1) {
        r = t + (K.p[0].ours - K.p[0].gpu);
    } else if (K.n > 1) {
        uint32_t i = 0, j = K.n - 1; /* outside the points: through the first and last */
        if (t >= K.p[0].gpu && t < K.p[K.n - 1].gpu) {
            while (t >= K.p[i + 1].gpu)
                i++;
            j = i + 1;
        }
        __int128 dg = (__int128)K.p[j].gpu - K.p[i].gpu;
        __int128 dm = (__int128)K.p[j].ours - K.p[i].ours;
        __int128 x = (__int128)K.p[i].ours + ((__int128)t - K.p[i].gpu) * dm / dg;
        r = x < 0 ? 0 : (uint64_t)x;
    }
    pthread_mutex_unlock(&K.lock);
    return r;
}

/* ---- activity buffers ---- */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    void *p = NULL;
    if (posix_memalign(&p, 8, BUF_BYTES))
        p = NULL;
    *buffer = p;
    *size = p ? BUF_BYTES : 0;
    *max_records = 0;
}

static int emit(void *ctx, const void *payload, uint32_t size)
{
    return opp_agent_send(OPP_MSG_GPU, payload, size) ? -1 : 0;
}

static void buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                             size_t valid)
{
    /* Asked before our lock is taken: CUPTI may hold its own while a
     * flush on another thread waits for ours (Kineto met that deadlock). */
    size_t dropped = 0;
    if (C.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) != CUPTI_SUCCESS)
        dropped = 0;
    clock_point(); /* the newest records fall inside the points */
    pthread_mutex_lock(&C.lock);
    opp_conv_buffer(&C.conv, buffer, valid);
    uint64_t lost = C.conv.lost - C.lost_reported;
    uint64_t unfinished = C.conv.unfinished - C.unfinished_reported;
    if (dropped || lost || unfinished) {
        struct opp_gpu_rec r = {.type = OPP_GPU_DROPPED, .nfields = OPP_GF_D_COUNT};
        r.f[OPP_GF_D_CUPTI] = dropped;
        r.f[OPP_GF_D_OURS] = lost;
        r.f[OPP_GF_D_UNFINISHED] = unfinished;
        opp_conv_put(&C.conv, &r);
        C.unfinished_reported = C.conv.unfinished;
    }
    opp_conv_flush(&C.conv);
    C.lost_reported = lost ? C.conv.lost : C.lost_reported;
    pthread_mutex_unlock(&C.lock);
    free(buffer);
}

static void CUPTIAPI on_buffer(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
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
            C.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
            atomic_store(&flush_thread.forced_done, 1);
        } else if (!woken) {
            clock_point();
            C.cuptiActivityFlushAll(0);
        }
        pthread_mutex_unlock(&flush_thread.lock);
    }
}

static void start_flusher(void)
{
    const char *v = getenv("OPPROF_GPU_FLUSH_MS");
    unsigned long ms = FLUSH_MS_DEFAULT;
    if (v && *v) {
        char *end;
        errno = 0;
        ms = strtoul(v, &end, 10);
        if (errno || *end || ms > 60000) {
            opp_agent_say("OPPROF_GPU_FLUSH_MS must be milliseconds from 0 to 60000, ignored: ", v, "");
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
static void stop_flusher(void)
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

static void cuda_flush(void)
{
    if (buffers_ours()) {
        stop_flusher();
        clock_point();
        C.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
}

/* Set where CUPTI is to start again at the next CUDA call a thread makes
 * outside any other (cuda/internal.h): a fork child whose parent ran it,
 * and a process whose other CUPTI client let go of it. The call's entry
 * comes through the symbol fallback (symbols.c), before the runtime sees
 * the call, so CUPTI records the call itself and the GPU work it makes. */
_Atomic int opp_cupti_restart;

void opp_cupti_restart_now(void)
{
    if (atomic_exchange(&opp_cupti_restart, 0))
        opp_cupti_init();
}

/* The child of fork(): only the forking thread came along, so the locks
 * are made anew. Where CUPTI ran in the parent, the child's CUPTI is a copy
 * of the parent's that records nothing of the child's: the child detaches
 * it and starts CUPTI again as a process of its own, at the entry of its
 * first CUDA call. */
static void cuda_forked(void)
{
    T.depth = T.runtime_open = 0;
    pthread_mutex_init(&C.lock, NULL);
    pthread_mutex_init(&flush_thread.lock, NULL);
    pthread_mutex_init(&W.lock, NULL);
    pthread_mutex_init(&K.lock, NULL);
    atomic_store(&flush_thread.running, 0);
    if (!C.tried)
        return; /* CUPTI never started: the child starts it as any process */
    int ran = C.on || C.yielded;
    C.forked_copy = ran;
    C.on = 0; /* nothing of the parent's CUPTI is flushed here */
    C.taken = 0;
    C.yielded = 0;
    C.conv_stale = 1;
    corr_mark = 0; /* the child's CUPTI numbers its own calls */
    corr_base = 0;
    C.tried = 0;
    opp_extcorr_on = 0;
    atomic_store(&opp_cuda_via_cupti, 0);
    atomic_store(&opp_cupti_restart, ran);
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
        if (!atomic_load(&flush_thread.forced_done)) {
            static const char line[] = "opprof: the GPU flush at a fatal signal did not end within "
                                       "2 s: GPU work since the last flush is lost\n";
            ssize_t w = write(STDERR_FILENO, line, sizeof line - 1);
            (void)w;
        }
    }
    errno = saved;
    raise(sig); /* SA_NODEFER: delivered now, with its default action */
}

static void install_signals(void)
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

/* ---- another CUPTI client in the same process ----
 * CUPTI takes one subscriber. When the program's own client (Kineto, for
 * torch.profiler) subscribes after us, CUPTI refuses it, and Kineto then
 * goes without GPU activity (it profiles the CPU only). Its cuptiSubscribe
 * comes through here (the preload is first in the global scope), so we
 * yield: what CUPTI holds of ours is flushed to us, our activity kinds are
 * turned off and our subscription ends, and the call is made again for the
 * other client, which now succeeds. The program's CUDA calls are recorded
 * by the symbol fallback meanwhile; the GPU activity is the other
 * client's. When it lets go (cuptiUnsubscribe of its handle, or
 * cuptiFinalize, as Kineto does with TEARDOWN_CUPTI=1), CUPTI is ours
 * again at the next CUDA call. Each such thing is said once on stderr and
 * counted in the trace (a DROPPED record's count at field), for the report
 * to say. Where we cannot let go (no cuptiUnsubscribe), the other client
 * stays refused, as CUPTI answered. */
static void other_client(int *said, unsigned field, const char *what)
{
    if (*said == 0)
        opp_agent_say("another CUPTI client in this process (torch.profiler/Kineto, nsys, ncu or DCGM) ",
                      what, "");
    __atomic_store_n(said, 1, __ATOMIC_RELAXED);
    struct opp_gpu_rec r = {.type = OPP_GPU_DROPPED, .nfields = field + 1};
    r.f[field] = 1;
    pthread_mutex_lock(&C.lock);
    opp_conv_put(&C.conv, &r);
    opp_conv_flush(&C.conv);
    pthread_mutex_unlock(&C.lock);
}

static void other_client_refused(CUptiResult rc)
{
    static int said;
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && C.on && !said)
        other_client(&said, OPP_GF_D_CLIENTS,
                     "was refused CUPTI, which opprof holds: that tool gets no GPU activity; "
                     "opprof records it");
}

/* Our activity kinds (init_locked enables them; yield turns them off). */
static const CUpti_ActivityKind our_kinds[] = {
    CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMORY2,           CUPTI_ACTIVITY_KIND_OVERHEAD};
static const CUpti_ActivityKind extcorr_kinds[] = {
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};

static int yield_locked(void);

/* Let go of CUPTI for a client refused because we hold it: 1 when we did.
 * Nothing of it is the program's: not the calls CUPTI makes, nor errno. */
static int yield_cupti(void)
{
    if (!C.on || !C.cuptiUnsubscribe)
        return 0;
    int saved_errno = errno;
    uint8_t state = opp_tls.state;
    opp_tls.state = OPP_T_OFF;
    int ok = yield_locked();
    opp_tls.state = state;
    errno = saved_errno;
    return ok;
}

static int yield_locked(void)
{
    stop_flusher(); /* no flush of ours from now on */
    if (buffers_ours()) {
        clock_point();
        C.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); /* what it holds is ours */
    }
    /* Not under C.lock: CUPTI may wait for a callback of ours in flight,
     * which may be waiting for C.lock (a flush at a context's destroy). */
    atomic_store(&opp_cuda_via_cupti, 0); /* the symbol fallback records the calls from here */
    if (C.cuptiUnsubscribe(C.sub) != CUPTI_SUCCESS) { /* still ours: as before */
        atomic_store(&opp_cuda_via_cupti, 1);
        start_flusher();
        return 0;
    }
    int extcorr = opp_extcorr_on;
    opp_extcorr_on = 0;
    for (size_t i = 0; i < sizeof our_kinds / sizeof *our_kinds; i++)
        C.cuptiActivityDisable(our_kinds[i]);
    for (size_t i = 0; extcorr && i < sizeof extcorr_kinds / sizeof *extcorr_kinds; i++)
        C.cuptiActivityDisable(extcorr_kinds[i]);
    C.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION); /* OPPROF_GPU_SYNC's */
    pthread_mutex_lock(&C.lock);
    C.on = 0;
    C.yielded = 1;
    C.sub = NULL;
    pthread_mutex_unlock(&C.lock);
    static int said;
    other_client(&said, OPP_GF_D_YIELDED,
                 "asked for CUPTI: opprof handed it over; CUDA calls are still recorded, the "
                 "GPU activity is that tool's until it lets go of CUPTI");
    return 1;
}

/* The other client let go: ours again at the next CUDA call (numbered
 * afresh after a cuptiFinalize). */
static void take_back(int finalized)
{
    pthread_mutex_lock(&C.lock);
    int again = C.yielded || C.on;
    if (finalized && C.tried)
        corr_restart();
    if (again) {
        C.yielded = 0;
        C.on = 0;
        C.taken = 0;
        C.tried = 0;
        atomic_store(&opp_cuda_via_cupti, 0);
        opp_extcorr_on = 0;
    }
    pthread_mutex_unlock(&C.lock);
    if (again) {
        static int said;
        other_client(&said, OPP_GF_D_RETAKEN, "let go of CUPTI: opprof records GPU activity again");
        atomic_store(&opp_cupti_restart, 1);
    }
}

/* Its activity buffers taken by another client (Kineto registers its own
 * buffer callbacks even where its subscription was refused): the records
 * from then on are that client's. */
static void buffers_taken(void)
{
    static int said;
    if (!said)
        other_client(&said, OPP_GF_D_TAKEN,
                     "took CUPTI's activity buffers: GPU activity from now on is that tool's, not in "
                     "opprof's trace");
}

/* The real entry point: the next definition, else the library we opened. */
static void *cupti_next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f && C.handle)
        f = dlsym(C.handle, name);
    return f;
}

OPP_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *ud)
{
    subscribe_fn real = (subscribe_fn)cupti_next("cuptiSubscribe");
    CUptiResult rc = real ? real(s, cb, ud) : CUPTI_ERROR_NOT_INITIALIZED;
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && yield_cupti())
        rc = real(s, cb, ud);
    other_client_refused(rc);
    return rc;
}

OPP_EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *ud,
                                         CUpti_SubscriberParams *p)
{
    subscribe_v2_fn real = (subscribe_v2_fn)cupti_next("cuptiSubscribe_v2");
    CUptiResult rc = real ? real(s, cb, ud, p) : CUPTI_ERROR_NOT_INITIALIZED;
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && yield_cupti())
        rc = real(s, cb, ud, p);
    other_client_refused(rc);
    return rc;
}

OPP_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
    CUptiResult (*real)(CUpti_SubscriberHandle) =
        (CUptiResult(*)(CUpti_SubscriberHandle))cupti_next("cuptiUnsubscribe");
    CUptiResult rc = real ? real(s) : CUPTI_ERROR_NOT_INITIALIZED;
    if (rc == CUPTI_SUCCESS && __atomic_load_n(&C.yielded, __ATOMIC_RELAXED))
        take_back(0);
    return rc;
}

/* Detaches CUPTI from the process, ours too where we held it. */
OPP_EXPORT CUptiResult cuptiFinalize(void)
{
    CUptiResult (*real)(void) = (CUptiResult(*)(void))cupti_next("cuptiFinalize");
    if (buffers_ours()) {
        stop_flusher();
        C.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
    CUptiResult rc = real ? real() : CUPTI_ERROR_NOT_INITIALIZED;
    if (rc == CUPTI_SUCCESS)
        take_back(1);
    return rc;
}

typedef CUptiResult (*register_fn)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);

OPP_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                                      CUpti_BuffersCallbackCompleteFunc done)
{
    register_fn real = (register_fn)cupti_next("cuptiActivityRegisterCallbacks");
    if (!real)
        return CUPTI_ERROR_NOT_INITIALIZED;
    int ours = buffers_ours();
    if (ours) /* what is complete so far is still ours */
        C.cuptiActivityFlushAll(0);
    CUptiResult rc = real(req, done);
    if (ours && rc == CUPTI_SUCCESS) {
        /* no flush of ours from now on: they would hand that client its
         * buffers at times it does not expect (at exit, after its end) */
        __atomic_store_n(&C.taken, 1, __ATOMIC_RELAXED);
        stop_flusher();
        buffers_taken();
    }
    return rc;
}

/* ---- finding and starting CUPTI ---- */

static void *open_cupti(void)
{
    const char *env = getenv("OPPROF_CUPTI");
    if (env && *env)
        return dlopen(env, RTLD_NOW | RTLD_LOCAL);
    static const char *const names[] = {"libcupti.so.13", "libcupti.so",
                                        OPP_CUDA_HOME "/lib64/libcupti.so.13",
                                        OPP_CUDA_HOME "/extras/CUPTI/lib64/libcupti.so.13"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
    }
    return NULL;
}

static const char *result_name(CUptiResult rc)
{
    const char *s = NULL;
    if (C.result_string && C.result_string(rc, &s) == CUPTI_SUCCESS && s)
        return s;
    return "CUPTI error";
}

/* Why CUPTI said no, in words a user can act on. */
static void explain(CUptiResult rc, const char *holder, char *why, size_t cap)
{
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        snprintf(why, cap, "another CUPTI client holds the process (%s)",
                 holder && *holder ? holder : "nsys, ncu, Kineto/torch.profiler or DCGM");
        return;
    }
    if (rc == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ||
        rc == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES) {
        snprintf(why, cap, "insufficient privileges for GPU profiling");
        return;
    }
    void *drv = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
    if (!drv)
        drv = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!drv) {
        snprintf(why, cap, "no CUDA driver (libcuda.so.1 not found): no GPU here");
        return;
    }
    char path[PATH_MAX] = "";
    struct link_map *lm = NULL;
    if (dlinfo(drv, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name)
        if (!realpath(lm->l_name, path))
            snprintf(path, sizeof path, "%s", lm->l_name);
    dlclose(drv);
    if (strstr(path, "/stubs/"))
        snprintf(why, cap, "only the toolkit's stub driver (%s): no GPU here", path);
    else
        snprintf(why, cap, "the driver at %s has no usable GPU", path[0] ? path : "libcuda.so.1");
}

static void fail(const char *what, CUptiResult rc, const char *holder)
{
    char line[768], why[512];
    if (rc == CUPTI_SUCCESS)
        snprintf(why, sizeof why, "%s", what);
    else
        explain(rc, holder, why, sizeof why);
    if (rc == CUPTI_SUCCESS)
        snprintf(line, sizeof line, "CUPTI cannot start: %s", why);
    else
        snprintf(line, sizeof line, "CUPTI cannot start (%s %d in %s): %s", result_name(rc),
                 (int)rc, what, why);
    opp_agent_say(line, "; CUDA calls are recorded by symbol interposition, without GPU activity",
                  NULL);
}

static int init_locked(void);

int opp_cupti_init(void)
{
    if (__atomic_load_n(&C.tried, __ATOMIC_RELAXED))
        return C.on;
    if (!opp_agent_on())
        return 0; /* not profiled: CUPTI is left alone (an inherited CUDA_INJECTION64_PATH) */
    /* CUPTI's own calls into CUDA are not the program's, nor is errno. */
    int saved_errno = errno;
    uint8_t state = opp_tls.state;
    opp_tls.state = OPP_T_OFF;
    /* A fork child's copy of CUPTI still holds the parent's subscription
     * and delivers none of the child's activity, even once unsubscribed
     * (seen on an H200, CUDA 13): detached, it starts as in a new process.
     * Outside our lock: what it may hand over comes through buffer_completed. */
    if (__atomic_exchange_n(&C.forked_copy, 0, __ATOMIC_RELAXED) && C.cuptiFinalize)
        C.cuptiFinalize();
    int on = init_locked();
    opp_tls.state = state;
    errno = saved_errno;
    return on;
}

/* Our subscription; holder: the name of the client that holds CUPTI, where
 * the library says. */
static CUptiResult subscribe_ours(char *holder, size_t cap)
{
    if (!C.subscribe_v2)
        return C.cuptiSubscribe(&C.sub, (CUpti_CallbackFunc)on_callback, NULL);
    CUpti_SubscriberParams p = {.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
                                .subscriberName = "opprof",
                                .oldSubscriberName = holder,
                                .oldSubscriberSize = cap};
    return C.subscribe_v2(&C.sub, (CUpti_CallbackFunc)on_callback, NULL, &p);
}

static int init_locked(void)
{
    pthread_mutex_lock(&C.lock);
    if (C.tried) {
        int on = C.on;
        pthread_mutex_unlock(&C.lock);
        return on;
    }
    C.tried = 1;
    void *h = open_cupti();
    C.handle = h;
    if (!h) {
        pthread_mutex_unlock(&C.lock);
        fail("libcupti.so.13 not found (set OPPROF_CUPTI to its path)", CUPTI_SUCCESS, NULL);
        return 0;
    }
    int missing = 0;
#define CUPTI_LOOKUP(name, ret, args)                                                              \
    C.name = (ret(*) args)dlsym(h, #name);                                                         \
    missing |= C.name == NULL;
    CUPTI_FNS(CUPTI_LOOKUP)
#undef CUPTI_LOOKUP
    C.subscribe_v2 = (subscribe_v2_fn)dlsym(h, "cuptiSubscribe_v2");
    C.result_string = (const char *(*)(CUptiResult, const char **))dlsym(h, "cuptiGetResultString");
    C.register_timestamp = (CUptiResult(*)(CUpti_TimestampCallbackFunc))dlsym(
        h, "cuptiActivityRegisterTimestampCallback");
    C.get_timestamp = (CUptiResult(*)(uint64_t *))dlsym(h, "cuptiGetTimestamp");
    C.enable_callback = (CUptiResult(*)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                        CUpti_CallbackId))dlsym(h, "cuptiEnableCallback");
    if (missing) {
        pthread_mutex_unlock(&C.lock);
        fail("the CUPTI library found lacks entry points we need", CUPTI_SUCCESS, NULL);
        return 0;
    }
    CUptiResult rc;
    char holder[128] = "";
    int extcorr = env_flag("OPPROF_GPU_EXTCORR");
    /* Synchronisation records (torch.profiler's cuda_sync events, which it
     * too makes only when asked) cost a record per wait. */
    int sync = env_flag("OPPROF_GPU_SYNC");
    rc = subscribe_ours(holder, sizeof holder);
    const char *step = "cuptiSubscribe";
    /* Our clock first (else calibration points), then the buffers, then the kinds. */
    if (rc == CUPTI_SUCCESS) {
        K.calibrated = !C.register_timestamp || C.register_timestamp(timestamp) != CUPTI_SUCCESS;
        K.n = 0;
        if (K.calibrated && !C.get_timestamp) {
            step = "cuptiGetTimestamp (the library has no way to put its times on our clock)";
            rc = CUPTI_ERROR_NOT_SUPPORTED;
        }
        clock_point();
    }
    if (rc == CUPTI_SUCCESS &&
        (step = "cuptiActivityRegisterCallbacks",
         rc = C.cuptiActivityRegisterCallbacks(buffer_requested, on_buffer)) == CUPTI_SUCCESS) {
        step = "cuptiActivityEnable";
        for (size_t i = 0; rc == CUPTI_SUCCESS && i < sizeof our_kinds / sizeof *our_kinds; i++) {
            rc = C.cuptiActivityEnable(our_kinds[i]);
            if (our_kinds[i] == CUPTI_ACTIVITY_KIND_DEVICE && rc != CUPTI_SUCCESS)
                rc = CUPTI_SUCCESS; /* device records are a nicety */
        }
        for (size_t i = 0; extcorr && rc == CUPTI_SUCCESS && i < sizeof extcorr_kinds / sizeof *extcorr_kinds;
             i++)
            rc = C.cuptiActivityEnable(extcorr_kinds[i]);
        if (sync && rc == CUPTI_SUCCESS)
            rc = C.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    }
    if (rc == CUPTI_SUCCESS) {
        step = "cuptiEnableDomain";
        rc = C.cuptiEnableDomain(1, C.sub, CUPTI_CB_DOMAIN_RUNTIME_API);
        if (rc == CUPTI_SUCCESS)
            rc = C.cuptiEnableDomain(1, C.sub, CUPTI_CB_DOMAIN_DRIVER_API);
    }
    if (rc != CUPTI_SUCCESS) {
        pthread_mutex_unlock(&C.lock);
        fail(step, rc, holder);
        return 0;
    }
    skip_trivial();
    if (C.enable_callback) /* without it (an old CUPTI) a destroyed context's records may go */
        C.enable_callback(1, C.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
    if (!C.conv_ready || C.conv_stale) { /* taken back after another client: the names sent stay */
        opp_conv_free(&C.conv);
        opp_conv_init(&C.conv, C.cuptiActivityGetNextRecord, emit, NULL);
        C.conv_ready = 1;
        C.conv_stale = 0;
        C.lost_reported = C.unfinished_reported = 0;
        W.open = __atomic_load_n(&opp_capturing, __ATOMIC_RELAXED);
        W.open_lo = 0;
        W.n = 0;
        W.ever_closed = !W.open; /* closed from the start: nothing before the first window */
    }
    C.conv.keep = window_keep;
    C.conv.corr = corr_extend;
    C.conv.time = K.calibrated ? clock_ours : NULL;
    /* Full buffers handed over every 500 ms (only full ones: the flush
     * thread asks for the rest). */
    CUptiResult (*period)(uint32_t) = (CUptiResult(*)(uint32_t))dlsym(h, "cuptiActivityFlushPeriod");
    if (period)
        period(500);
    C.on = 1;
    opp_extcorr_push = extcorr_push; /* before the flag: a wrapper that sees it calls them */
    opp_extcorr_pop = extcorr_pop;
    opp_extcorr_on = extcorr;
    atomic_store(&opp_cuda_via_cupti, 1);
    pthread_mutex_unlock(&C.lock);
    start_flusher(); /* before the handlers that ask it for the last flush */
    install_signals();
    return 1;
}

static int cuda_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
    const char *n = info->dlpi_name;
    return n && (strstr(n, "libcudart") || strstr(n, "libcuda.so"));
}

/* The feature's start: try CUPTI now when CUDA is already loaded, else ask
 * the driver to call us at its start (CUDA_INJECTION64_PATH). */
static void cuda_start(const char *self_path)
{
    if (self_path)
        snprintf(C.self, sizeof C.self, "%s", self_path);
    if (dl_iterate_phdr(cuda_loaded, NULL)) {
        opp_cupti_init();
        return;
    }
    /* Not yet: the driver calls InitializeInjection at its start. */
    const char *inj = getenv("CUDA_INJECTION64_PATH");
    if ((!inj || !*inj) && C.self[0])
        setenv("CUDA_INJECTION64_PATH", C.self, 1);
}

/* The driver's injection entry point (CUDA_INJECTION64_PATH). */
OPP_EXPORT int InitializeInjection(void)
{
    opp_cupti_init();
    return 1;
}

const struct opp_feature opp_feature_cuda = {"cuda", cuda_start, cuda_forked, cuda_flush};

#else /* no CUDA toolkit at build time */

int opp_cupti_init(void) { return 0; }
const struct opp_feature opp_feature_cuda = {"cuda", NULL, NULL, NULL};

#endif
