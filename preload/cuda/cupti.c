/* The agent's CUPTI client. CUPTI is dlopened (never linked), so a process
 * that does not use CUDA never loads it. It subscribes to the runtime and
 * driver API domains (each call becomes an event in the thread's ring, with
 * its correlation id and status) and collects GPU activity in buffers that
 * are converted (cupti_conv.c) and sent to the collector (cupti_flush.c),
 * their times on our clock (cupti_clock.c); it lets go of CUPTI for
 * another client and takes it back (cupti_share.c); their state is
 * cupti_state.h's. When CUPTI cannot serve, one line names the cause and
 * the symbol fallback (tramp.S) keeps recording API calls. */
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

#include "cuda/cupti_state.h"

/* API calls in flight on a thread that are recorded (a runtime call and
 * the driver calls it makes: two or three); deeper ones are counted only.
 * Few: a preloaded library's static TLS comes out of every thread's stack. */
#define DEPTH_MAX 8u

struct opp_cupti_client opp_cupti_client = {.lock = PTHREAD_MUTEX_INITIALIZER};

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

/* CUPTI numbered afresh (cupti_state.h). */
void opp_cupti_corr_restart(void)
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
} gpu_windows = {.lock = PTHREAD_MUTEX_INITIALIZER, .open = 1};

static void window_turn(uint64_t corr)
{
    pthread_mutex_lock(&gpu_windows.lock);
    int on = __atomic_load_n(&opp_capturing, __ATOMIC_RELAXED);
    if (on != gpu_windows.open) {
        if (on) {
            gpu_windows.open_lo = corr;
        } else {
            if (gpu_windows.n ==
                WINDOWS_MAX) { /* the two oldest become one (keeps more, never less) */
                gpu_windows.w[1].lo = gpu_windows.w[0].lo;
                memmove(&gpu_windows.w[0], &gpu_windows.w[1],
                        (gpu_windows.n - 1) * sizeof gpu_windows.w[0]);
                gpu_windows.n--;
            }
            gpu_windows.w[gpu_windows.n].lo = gpu_windows.open_lo;
            gpu_windows.w[gpu_windows.n].hi = corr;
            gpu_windows.n++;
            __atomic_store_n(&gpu_windows.ever_closed, 1, __ATOMIC_RELEASE);
        }
        __atomic_store_n(&gpu_windows.open, on, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&gpu_windows.lock);
}

/* The converter's filter (under opp_cupti_client.lock; recent windows first). */
static int window_keep(uint64_t corr)
{
    if (!__atomic_load_n(&gpu_windows.ever_closed, __ATOMIC_ACQUIRE))
        return 1;
    pthread_mutex_lock(&gpu_windows.lock);
    int keep = gpu_windows.open && corr >= gpu_windows.open_lo;
    for (uint32_t i = gpu_windows.n; !keep && i-- > 0;)
        keep = corr >= gpu_windows.w[i].lo && corr < gpu_windows.w[i].hi;
    pthread_mutex_unlock(&gpu_windows.lock);
    return keep;
}

/* ---- the calls not recorded ----
 * Queries a framework makes thousands of times a step (the current device
 * or context, whether its primary context is active: torch 2, 9,005 in 20
 * steps on the H200; the last error, an attribute, whether a stream is
 * capturing, the driver's entry points), each a record of no information.
 * The driver ones are turned off in CUPTI after the domains are on. The
 * runtime ones keep their callback, unrecorded: it marks the runtime call
 * open, so the driver calls made inside it (whichever they are) are never
 * taken for the program's own, as they were on the H200 when they too
 * were turned off. */
static const struct {
    CUpti_CallbackDomain dom;
    CUpti_CallbackId id;
} trivial[] = {
#define RT(x) {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##x}
#define DRV(x) {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##x}
    RT(cudaGetDevice_v3020),
    RT(cudaGetLastError_v3020),
    RT(cudaPeekAtLastError_v3020),
    RT(cudaGetDeviceCount_v3020),
    RT(cudaDeviceGetAttribute_v5000),
    RT(cudaStreamIsCapturing_v10000),
    RT(cudaStreamGetCaptureInfo_v10010),
    RT(cudaStreamGetCaptureInfo_v2_v11030),
    RT(cudaPointerGetAttributes_v4000),
    RT(cudaFuncGetAttributes_v3020),
    RT(cudaDriverGetVersion_v3020),
    RT(cudaRuntimeGetVersion_v3020),
    DRV(cuCtxGetCurrent),
    DRV(cuCtxGetDevice),
    DRV(cuCtxGetDevice_v2),
    DRV(cuCtxGetId),
    DRV(cuDeviceGet),
    DRV(cuDeviceGetCount),
    DRV(cuDeviceGetAttribute),
    DRV(cuGetProcAddress),
    DRV(cuGetProcAddress_v2),
    DRV(cuGetExportTable),
    DRV(cuDriverGetVersion),
    DRV(cuPointerGetAttribute),
    DRV(cuPointerGetAttributes),
    DRV(cuKernelGetName),
    DRV(cuLibraryGetKernel),
    DRV(cuFuncGetAttribute),
    DRV(cuStreamIsCapturing),
    DRV(cuStreamIsCapturing_ptsz),
    DRV(cuStreamGetCaptureInfo),
    DRV(cuStreamGetCaptureInfo_v2),
    DRV(cuStreamGetCaptureInfo_v3),
    DRV(cuDevicePrimaryCtxGetState),
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
        else if (opp_cupti_client.enable_callback) /* without it (an old CUPTI) they are recorded */
            opp_cupti_client.enable_callback(0, opp_cupti_client.sub, trivial[i].dom,
                                             trivial[i].id);
    }
}

/* API calls in flight on this thread, as CUPTI reports them. */
static __thread struct {
    uint32_t depth, runtime_open;
    struct {
        struct opp_frame f;
        uint8_t recorded, runtime;
    } s[DEPTH_MAX];
} api_calls __attribute__((tls_model("initial-exec")));

/* ---- API callbacks: enter and exit of every runtime and driver call ---- */

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
                                 const void *data)
{
    if (dom == CUPTI_CB_DOMAIN_RESOURCE) {
        /* a context is about to go, and its buffered records with it */
        if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING && opp_cupti_buffers_ours())
            opp_cupti_client.lib_cuptiActivityFlushAll(0);
        return;
    }
    if (dom != CUPTI_CB_DOMAIN_RUNTIME_API && dom != CUPTI_CB_DOMAIN_DRIVER_API)
        return;
    const CUpti_CallbackData *cb = data;
    int rt = dom == CUPTI_CB_DOMAIN_RUNTIME_API;
    if (cb->callbackSite == CUPTI_API_ENTER) {
        /* every call moves the mark, recorded or not */
        uint64_t corr = corr_now(cb->correlationId);
        if (rt && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 &&
            opp_cupti_buffers_ours())
            opp_cupti_client.lib_cuptiActivityFlushAll(0); /* the reset destroys what is buffered */
        uint32_t d = api_calls.depth++;
        if (d >= DEPTH_MAX)
            return;
        uint32_t fn = (rt ? OPP_FN_CUDA_RT_BASE : OPP_FN_CUDA_DRV_BASE) + cbid;
        uint32_t lim = rt ? OPP_FN_CUDA_DRV_BASE : OPP_FN_COUNT;
        /* Driver calls a runtime call makes for it are its implementation,
         * not the program's: only direct driver calls are recorded. */
        int want =
            fn < lim && (rt ? !(cbid < RT_CBID_MAX && rt_trivial[cbid]) : !api_calls.runtime_open);
        if (OPP_UNLIKELY(opp_capture_api))
            opp_capture_cuda(fn);
        if (OPP_UNLIKELY(__atomic_load_n(&opp_capturing, __ATOMIC_RELAXED) !=
                         __atomic_load_n(&gpu_windows.open, __ATOMIC_RELAXED)))
            window_turn(corr);
        api_calls.s[d].runtime = (uint8_t)rt;
        api_calls.s[d].recorded = want ? (uint8_t)opp_enter(&api_calls.s[d].f, fn) : 0;
        api_calls.runtime_open += (uint32_t)rt;
        return;
    }
    if (!api_calls.depth)
        return; /* an exit whose enter came before we subscribed */
    uint32_t d = --api_calls.depth;
    if (d >= DEPTH_MAX)
        return;
    api_calls.runtime_open -= api_calls.s[d].runtime;
    if (api_calls.s[d].recorded) {
        /* functionReturnValue points at what the call returned, of its
         * own type: only a cudaError_t or CUresult is read as a status */
        int status = cb->functionReturnValue && opp_cuda_has_status(api_calls.s[d].f.fn)
                         ? *(const int *)cb->functionReturnValue
                         : 0;
        const uint64_t a[OPP_COL_CUDA_COLS] = {[OPP_COL_CUDA_STATUS] = (uint64_t)(uint32_t)status,
                                               [OPP_COL_CUDA_CORR] = corr_extend(cb->correlationId),
                                               [OPP_COL_CUDA_CBID] = cbid};
        opp_leave(&api_calls.s[d].f, a, 3);
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
    if (!r || !opp_cupti_client.on)
        return 0;
    if (++ext_seq == 0)
        ext_seq = 1;
    uint64_t id = (uint64_t)r->tid << 32 | ext_seq;
    int saved = errno;
    CUptiResult rc = opp_cupti_client.lib_cuptiActivityPushExternalCorrelationId(EXTCORR_KIND, id);
    errno = saved;
    return rc == CUPTI_SUCCESS ? id : 0;
}

static void extcorr_pop(void)
{
    uint64_t id;
    int saved = errno;
    opp_cupti_client.lib_cuptiActivityPopExternalCorrelationId(EXTCORR_KIND, &id);
    errno = saved;
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

/* The forking thread's API calls open at the fork are the parent's. */
static void cuda_thread_forked(void)
{
    api_calls.depth = api_calls.runtime_open = 0;
}

/* The child of fork(): only the forking thread came along, so the locks
 * are made anew. Where CUPTI ran in the parent, the child's CUPTI is a copy
 * of the parent's that records nothing of the child's: the child detaches
 * it and starts CUPTI again as a process of its own, at the entry of its
 * first CUDA call. */
static void cuda_forked(void)
{
    pthread_mutex_init(&opp_cupti_client.lock, NULL);
    pthread_mutex_init(&gpu_windows.lock, NULL);
    opp_cupti_flush_forked();
    opp_cupti_clock_forked();
    if (!opp_cupti_client.tried)
        return; /* CUPTI never started: the child starts it as any process */
    int ran = opp_cupti_client.on || opp_cupti_client.yielded;
    opp_cupti_client.forked_copy = ran;
    opp_cupti_client.on = 0; /* nothing of the parent's CUPTI is flushed here */
    opp_cupti_client.taken = 0;
    opp_cupti_client.yielded = 0;
    opp_cupti_client.conv_stale = 1;
    corr_mark = 0; /* the child's CUPTI numbers its own calls */
    corr_base = 0;
    opp_cupti_client.tried = 0;
    opp_extcorr_on = 0;
    atomic_store(&opp_cuda_via_cupti, 0);
    atomic_store(&opp_cupti_restart, ran);
}

/* ---- finding and starting CUPTI ---- */

/* Our activity kinds (cupti_state.h). */
const CUpti_ActivityKind opp_cupti_kinds[6] = {
    CUPTI_ACTIVITY_KIND_DEVICE,  CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,  CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_ACTIVITY_KIND_OVERHEAD};
const CUpti_ActivityKind opp_cupti_extcorr_kinds[3] = {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                                       CUPTI_ACTIVITY_KIND_RUNTIME,
                                                       CUPTI_ACTIVITY_KIND_DRIVER};

/* The converter's output: a GPU message to the collector. */
static int emit(void *ctx, const void *payload, uint32_t size)
{
    return opp_agent_send(OPP_MSG_GPU, payload, size) ? -1 : 0;
}

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
    if (opp_cupti_client.result_string && opp_cupti_client.result_string(rc, &s) == CUPTI_SUCCESS &&
        s)
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
    if (__atomic_load_n(&opp_cupti_client.tried, __ATOMIC_RELAXED))
        return opp_cupti_client.on;
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
    if (__atomic_exchange_n(&opp_cupti_client.forked_copy, 0, __ATOMIC_RELAXED) &&
        opp_cupti_client.lib_cuptiFinalize)
        opp_cupti_client.lib_cuptiFinalize();
    int on = init_locked();
    opp_tls.state = state;
    errno = saved_errno;
    return on;
}

/* Our subscription; holder: the name of the client that holds CUPTI, where
 * the library says. */
static CUptiResult subscribe_ours(char *holder, size_t cap)
{
    if (!opp_cupti_client.subscribe_v2)
        return opp_cupti_client.lib_cuptiSubscribe(&opp_cupti_client.sub,
                                                   (CUpti_CallbackFunc)on_callback, NULL);
    CUpti_SubscriberParams p = {.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
                                .subscriberName = "opprof",
                                .oldSubscriberName = holder,
                                .oldSubscriberSize = cap};
    return opp_cupti_client.subscribe_v2(&opp_cupti_client.sub, (CUpti_CallbackFunc)on_callback,
                                         NULL, &p);
}

static int init_locked(void)
{
    pthread_mutex_lock(&opp_cupti_client.lock);
    if (opp_cupti_client.tried) {
        int on = opp_cupti_client.on;
        pthread_mutex_unlock(&opp_cupti_client.lock);
        return on;
    }
    opp_cupti_client.tried = 1;
    void *h = open_cupti();
    opp_cupti_client.handle = h;
    if (!h) {
        pthread_mutex_unlock(&opp_cupti_client.lock);
        fail("libcupti.so.13 not found (set OPPROF_CUPTI to its path)", CUPTI_SUCCESS, NULL);
        return 0;
    }
    int missing = 0;
#define CUPTI_LOOKUP(name, ret, args)                                                              \
    opp_cupti_client.lib_##name = (ret(*) args)dlsym(h, #name);                                    \
    missing |= opp_cupti_client.lib_##name == NULL;
    CUPTI_FNS(CUPTI_LOOKUP)
#undef CUPTI_LOOKUP
    opp_cupti_client.subscribe_v2 = (subscribe_v2_fn)dlsym(h, "cuptiSubscribe_v2");
    opp_cupti_client.result_string =
        (const char *(*)(CUptiResult, const char **))dlsym(h, "cuptiGetResultString");
    opp_cupti_client.register_timestamp = (CUptiResult(*)(CUpti_TimestampCallbackFunc))dlsym(
        h, "cuptiActivityRegisterTimestampCallback");
    opp_cupti_client.get_timestamp = (CUptiResult(*)(uint64_t *))dlsym(h, "cuptiGetTimestamp");
    opp_cupti_client.enable_callback =
        (CUptiResult(*)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                        CUpti_CallbackId))dlsym(h, "cuptiEnableCallback");
    if (missing) {
        pthread_mutex_unlock(&opp_cupti_client.lock);
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
    int calibrated = 0;
    if (rc == CUPTI_SUCCESS && (calibrated = opp_cupti_clock_start()) < 0) {
        step = "cuptiGetTimestamp (the library has no way to put its times on our clock)";
        rc = CUPTI_ERROR_NOT_SUPPORTED;
    }
    if (rc == CUPTI_SUCCESS &&
        (step = "cuptiActivityRegisterCallbacks",
         rc = opp_cupti_client.lib_cuptiActivityRegisterCallbacks(
             opp_cupti_buffer_requested, opp_cupti_buffer_done)) == CUPTI_SUCCESS) {
        step = "cuptiActivityEnable";
        for (size_t i = 0;
             rc == CUPTI_SUCCESS && i < sizeof opp_cupti_kinds / sizeof *opp_cupti_kinds; i++) {
            rc = opp_cupti_client.lib_cuptiActivityEnable(opp_cupti_kinds[i]);
            if (opp_cupti_kinds[i] == CUPTI_ACTIVITY_KIND_DEVICE && rc != CUPTI_SUCCESS)
                rc = CUPTI_SUCCESS; /* device records are a nicety */
        }
        for (size_t i = 0; extcorr && rc == CUPTI_SUCCESS &&
                           i < sizeof opp_cupti_extcorr_kinds / sizeof *opp_cupti_extcorr_kinds;
             i++)
            rc = opp_cupti_client.lib_cuptiActivityEnable(opp_cupti_extcorr_kinds[i]);
        if (sync && rc == CUPTI_SUCCESS)
            rc = opp_cupti_client.lib_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    }
    if (rc == CUPTI_SUCCESS) {
        step = "cuptiEnableDomain";
        rc = opp_cupti_client.lib_cuptiEnableDomain(1, opp_cupti_client.sub,
                                                    CUPTI_CB_DOMAIN_RUNTIME_API);
        if (rc == CUPTI_SUCCESS)
            rc = opp_cupti_client.lib_cuptiEnableDomain(1, opp_cupti_client.sub,
                                                        CUPTI_CB_DOMAIN_DRIVER_API);
    }
    if (rc != CUPTI_SUCCESS) {
        pthread_mutex_unlock(&opp_cupti_client.lock);
        fail(step, rc, holder);
        return 0;
    }
    skip_trivial();
    if (opp_cupti_client
            .enable_callback) /* without it (an old CUPTI) a destroyed context's records may go */
        opp_cupti_client.enable_callback(1, opp_cupti_client.sub, CUPTI_CB_DOMAIN_RESOURCE,
                                         CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
    if (!opp_cupti_client.conv_ready ||
        opp_cupti_client.conv_stale) { /* taken back after another client: the names sent stay */
        opp_conv_free(&opp_cupti_client.conv);
        opp_conv_init(&opp_cupti_client.conv, opp_cupti_client.lib_cuptiActivityGetNextRecord, emit,
                      NULL);
        opp_cupti_client.conv_ready = 1;
        opp_cupti_client.conv_stale = 0;
        opp_cupti_client.lost_reported = opp_cupti_client.unfinished_reported = 0;
        gpu_windows.open = __atomic_load_n(&opp_capturing, __ATOMIC_RELAXED);
        gpu_windows.open_lo = 0;
        gpu_windows.n = 0;
        gpu_windows.ever_closed =
            !gpu_windows.open; /* closed from the start: nothing before the first window */
    }
    opp_cupti_client.conv.keep = window_keep;
    opp_cupti_client.conv.corr = corr_extend;
    opp_cupti_client.conv.time = calibrated ? opp_cupti_clock_ours : NULL;
    /* Full buffers handed over every 500 ms (only full ones: the flush
     * thread asks for the rest). */
    CUptiResult (*period)(uint32_t) = (CUptiResult(*)(uint32_t))dlsym(h, "cuptiActivityFlushPeriod");
    if (period)
        period(500);
    opp_cupti_client.on = 1;
    opp_extcorr_push = extcorr_push; /* before the flag: a wrapper that sees it calls them */
    opp_extcorr_pop = extcorr_pop;
    opp_extcorr_on = extcorr;
    atomic_store(&opp_cuda_via_cupti, 1);
    pthread_mutex_unlock(&opp_cupti_client.lock);
    opp_cupti_start_flusher(); /* before the handlers that ask it for the last flush */
    opp_cupti_install_signals();
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
        snprintf(opp_cupti_client.self, sizeof opp_cupti_client.self, "%s", self_path);
    if (dl_iterate_phdr(cuda_loaded, NULL)) {
        opp_cupti_init();
        return;
    }
    /* Not yet: the driver calls InitializeInjection at its start. */
    const char *inj = getenv("CUDA_INJECTION64_PATH");
    if ((!inj || !*inj) && opp_cupti_client.self[0])
        setenv("CUDA_INJECTION64_PATH", opp_cupti_client.self, 1);
}

/* The driver's injection entry point (CUDA_INJECTION64_PATH). */
OPP_EXPORT int InitializeInjection(void)
{
    opp_cupti_init();
    return 1;
}

const struct opp_feature opp_feature_cuda = {.name = "cuda",
                                             .start = cuda_start,
                                             .forked = cuda_forked,
                                             .thread_forked = cuda_thread_forked,
                                             .stop = opp_cupti_flush};

#else /* no CUDA toolkit at build time */

int opp_cupti_init(void) { return 0; }
const struct opp_feature opp_feature_cuda = {.name = "cuda"};

#endif
