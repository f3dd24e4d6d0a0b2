/* TEST DOUBLE of the CUDA runtime and of CUPTI, for machines without a GPU.
 * Built as build/tests/double/libcudart.so.13 and used only by
 * tests/double/gpu_app.c (and loaded as CUPTI with OPPROF_CUPTI). It plays
 * what a GPU machine would do, through CUPTI's real ABI (cupti.h structs and
 * callback signatures), so the agent's CUPTI client runs its real code:
 * subscription, API enter/exit callbacks with correlation ids, activity
 * buffers requested and completed, our clock registered as the timestamp.
 *
 * Its "GPU" is a timeline: a kernel launched with grid.x = G runs exactly
 * G * 1000 ns, a copy of B bytes runs B / 16 ns (16 GB/s), one after the
 * other, starting no earlier than the end of the call that launched them.
 * The runtime entry points keep their real signatures (cuda_runtime_api.h).
 *
 * It keeps CUPTI's documented rules, never kinder: cuptiActivityFlushAll(0)
 * hands over only records that are complete (the device is past their
 * end), FORCED all of them; cuptiActivityFlushPeriod hands over only full
 * buffers (none of these programs fills one), so it delivers nothing; a
 * second subscriber is refused (MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), until
 * the first unsubscribes (its callbacks end there; the activity kinds,
 * buffer callbacks and pending records are the process's and stay) or
 * cuptiFinalize detaches CUPTI (everything gone, records not handed over
 * too; calls are numbered on); in a
 * forked child CUPTI is the parent's copy: the parent's subscription
 * holds, delivering nothing, until it is unsubscribed there, the parent's
 * pending records are gone, and no activity of the child's is recorded
 * until cuptiFinalize detaches the copy; nothing is handed over
 * at exit unless the client flushes, and the runtime's teardown (atexit,
 * registered at the first CUDA call) destroys the context, and with it
 * what was not handed over, before any library destructor runs; the
 * records pending are one queue under one lock, as CUPTI's activity API is
 * thread-safe ("default flush can be done at a regular interval in a
 * separate thread", cupti_activity.h): a flush on one thread, the program's
 * calls adding records and a context destroyed on another never hand a
 * record over twice or drop one twice, and the lock is held while a flush
 * hands its buffers over, as CUPTI may hold its own; an external correlation record is
 * made only beside an API activity record (kinds RUNTIME/DRIVER), just
 * before it, as cupti_activity.h says, never on its own; cuptiEnableDomain
 * turns every callback of its domain on or off, one turned off before
 * included ("enable or disable all callbacks for a specific domain"), and
 * the driver calls a runtime call makes come through the DRIVER_API domain
 * inside its callbacks. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#define EXPORT __attribute__((visibility("default")))

static struct {
    CUpti_CallbackFunc cb;
    void *ud;
    uintptr_t sub;       /* the subscriber's handle: each subscription its own */
    int fork_copy;       /* a fork child's copy of the parent's CUPTI, until cuptiFinalize */
    uintptr_t subs_made;
    CUpti_TimestampCallbackFunc ts;
    CUpti_BuffersCallbackRequestFunc req;
    CUpti_BuffersCallbackCompleteFunc done;
    int kernels_on, memcpy_on, memory_on, sync_on, extcorr_on, api_on;
    uint32_t period_ms; /* cuptiActivityFlushPeriod: full buffers only */
    /* the RUNTIME_API and DRIVER_API callback ids turned on, as CUPTI keeps
     * them: cuptiEnableDomain turns every id of its domain on or off (one
     * turned off before is on again), cuptiEnableCallback one id */
    uint8_t rt_cb[1024], drv_cb[1024];
    int ctx_destroy_on;   /* the resource callback CONTEXT_DESTROY_STARTING turned on */
    uint32_t corr;
    uint64_t busy_until; /* the device timeline */
    uint8_t *pending;    /* records not yet handed over */
    size_t len, cap;
    struct { void *p; size_t n; } allocs[64];
} cupti_double;

/* cupti_double.pending, cupti_double.len and cupti_double.cap: the program's threads add records, any
 * thread flushes them (the agent's flush thread, a callback at context
 * destroy, exit), the context's destroy drops them. */
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;

/* External correlation ids pushed, a stack per kind, per thread. */
static __thread uint64_t ext[8][8];
static __thread unsigned ext_n[8];

/* The device's clock: the client's when it registered one, else
 * CLOCK_MONOTONIC, or with DOUBLE_CUPTI_NO_TS_CALLBACK (a CUPTI that cannot
 * stamp with the client's clock) a clock of its own, 5 s ahead and running
 * 0.1% fast. */
static uint64_t now(void)
{
    if (cupti_double.ts)
        return cupti_double.ts();
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    uint64_t ns = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
    return getenv("DOUBLE_CUPTI_NO_TS_CALLBACK") ? ns + ns / 1000 + 5000000000ull : ns;
}

static void queue(const void *rec, size_t n)
{
    if (cupti_double.fork_copy)
        return; /* a fork child's copy of CUPTI delivers none of the child's activity */
    pthread_mutex_lock(&pending_lock);
    if (cupti_double.len + n > cupti_double.cap) {
        size_t cap = cupti_double.cap ? cupti_double.cap * 2 : 1 << 16;
        while (cap < cupti_double.len + n)
            cap *= 2;
        cupti_double.pending = realloc(cupti_double.pending, cap);
        cupti_double.cap = cap;
    }
    memcpy(cupti_double.pending + cupti_double.len, rec, n);
    cupti_double.len += n;
    pthread_mutex_unlock(&pending_lock);
}

/* 32 bits, wrapping past 0 (CUPTI_CORRELATION_ID_UNKNOWN, no call's). */
static uint32_t new_corr(void)
{
    if (++cupti_double.corr == CUPTI_CORRELATION_ID_UNKNOWN)
        ++cupti_double.corr;
    return cupti_double.corr;
}

/* The API activity record of a runtime call that ends now (kind RUNTIME),
 * preceded, for each kind with an external id pushed on the thread, by an
 * EXTERNAL_CORRELATION record tying the call to the innermost one. */
static void api_record(CUpti_CallbackId cbid, uint32_t corr, uint64_t start, int status)
{
    if (!cupti_double.api_on)
        return;
    for (unsigned k = 0; k < 8 && cupti_double.extcorr_on; k++) {
        if (!ext_n[k])
            continue;
        CUpti_ActivityExternalCorrelation x;
        memset(&x, 0, sizeof x);
        x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
        x.externalKind = (CUpti_ExternalCorrelationKind)k;
        x.externalId = ext[k][ext_n[k] - 1];
        x.correlationId = corr;
        queue(&x, sizeof x);
    }
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a.cbid = cbid;
    a.start = start;
    a.end = now();
    a.correlationId = corr;
    a.returnValue = (uint32_t)status;
    queue(&a, sizeof a);
}

/* ---- the API calls, each between an enter and an exit callback ---- */

struct call {
    CUpti_CallbackData data;
    CUpti_CallbackId cbid;
    int status;
    uint64_t start;
};

EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx);

/* The runtime's teardown at exit: its primary context is destroyed. */
static void runtime_teardown(void)
{
    cuCtxDestroy_v2(NULL);
}

/* The driver's start, inside the process's first CUDA call: as the real
 * one, it loads the library CUDA_INJECTION64_PATH names and calls its
 * InitializeInjection (so a client that subscribes there misses that
 * call's enter, and sees its exit). The runtime registers its teardown
 * with atexit then, after main began: it runs before any library's
 * destructor. */
static void driver_start(void)
{
    static int started;
    if (started)
        return;
    started = 1;
    atexit(runtime_teardown);
    const char *path = getenv("CUDA_INJECTION64_PATH");
    void *h = path && *path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
    if (init)
        init();
}

static void enter(struct call *c, CUpti_CallbackId cbid, const char *name)
{
    memset(c, 0, sizeof *c);
    c->cbid = cbid;
    c->data.functionName = name;
    c->data.correlationId = new_corr();
    c->data.functionReturnValue = &c->status;
    c->data.callbackSite = CUPTI_API_ENTER;
    c->start = now();
    if (cupti_double.cb && cbid < 1024 && cupti_double.rt_cb[cbid])
        cupti_double.cb(cupti_double.ud, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &c->data);
    driver_start();
}

static cudaError_t leave(struct call *c, int status)
{
    c->status = status;
    c->data.callbackSite = CUPTI_API_EXIT;
    if (cupti_double.cb && c->cbid < 1024 && cupti_double.rt_cb[c->cbid])
        cupti_double.cb(cupti_double.ud, CUPTI_CB_DOMAIN_RUNTIME_API, c->cbid, &c->data);
    api_record(c->cbid, c->data.correlationId, c->start, status);
    return (cudaError_t)status;
}

/* A span of device time, starting after the launching call so far. */
static void device_span(uint64_t dur, uint64_t *start, uint64_t *end)
{
    uint64_t t = now();
    *start = t > cupti_double.busy_until ? t : cupti_double.busy_until;
    *end = *start + dur;
    cupti_double.busy_until = *end;
}

static void kernel(const char *name, unsigned grid, unsigned block, uint32_t corr)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    device_span((uint64_t)grid * 1000u, &k.start, &k.end);
    k.name = name; /* the program's string: lives as long as the program */
    k.deviceId = 0, k.contextId = 1, k.streamId = 7, k.correlationId = corr;
    k.gridX = (int32_t)grid, k.gridY = 1, k.gridZ = 1;
    k.blockX = (int32_t)block, k.blockY = 1, k.blockZ = 1;
    k.registersPerThread = 32;
    if (cupti_double.kernels_on)
        queue(&k, sizeof k);
}

static void memory(int op, void *p, size_t n, uint32_t corr)
{
    CUpti_ActivityMemory4 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = op ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
                               : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.correlationId = corr, m.address = (uint64_t)(uintptr_t)p, m.bytes = n;
    m.timestamp = now(), m.deviceId = 0, m.contextId = 1;
    if (cupti_double.memory_on)
        queue(&m, sizeof m);
}

EXPORT cudaError_t cudaMalloc(void **p, size_t n)
{
    struct call c;
    enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, "cudaMalloc");
    *p = malloc(n);
    for (int i = 0; i < 64; i++)
        if (!cupti_double.allocs[i].p) {
            cupti_double.allocs[i].p = *p, cupti_double.allocs[i].n = n;
            break;
        }
    memory(0, *p, n, c.data.correlationId);
    return leave(&c, *p ? 0 : 2 /* cudaErrorMemoryAllocation */);
}

/* A call that returns no status: CUPTI's functionReturnValue then points
 * at the string it returns, as the real one does. */
EXPORT const char *cudaGetErrorString(cudaError_t e)
{
    struct call c;
    enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaGetErrorString_v3020, "cudaGetErrorString");
    const char *r = e == cudaSuccess ? "no error" : "invalid argument";
    c.data.functionReturnValue = &r;
    leave(&c, 0);
    return r;
}

/* A query a framework makes thousands of times: device 0. */
EXPORT cudaError_t cudaGetDevice(int *dev)
{
    struct call c;
    enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, "cudaGetDevice");
    *dev = 0;
    return leave(&c, 0);
}

EXPORT cudaError_t cudaFree(void *p)
{
    struct call c;
    enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, "cudaFree");
    size_t n = 0;
    for (int i = 0; i < 64; i++)
        if (cupti_double.allocs[i].p == p) {
            n = cupti_double.allocs[i].n;
            cupti_double.allocs[i].p = NULL;
        }
    memory(1, p, n, c.data.correlationId);
    free(p);
    return leave(&c, 0);
}

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    struct call c;
    enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy");
    memcpy(dst, src, n);
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = kind == cudaMemcpyHostToDevice ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD : CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    m.srcKind = kind == cudaMemcpyHostToDevice ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.dstKind = kind == cudaMemcpyHostToDevice ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE : CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m.bytes = n;
    device_span(n / 16, &m.start, &m.end);
    m.deviceId = 0, m.contextId = 1, m.streamId = 7, m.correlationId = c.data.correlationId;
    if (cupti_double.memcpy_on)
        queue(&m, sizeof m);
    /* A synchronous copy returns when the device is done with it. */
    while (now() < m.end)
        ;
    return leave(&c, 0);
}

/* func: the kernel's (mangled) name, standing in for its host stub. */
EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                                    size_t smem, cudaStream_t stream)
{
    struct call c;
    enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel");
    kernel(func, grid.x, block.x, c.data.correlationId);
    return leave(&c, 0);
}

/* A "graph" whose handle value is n: n kernels of 2 us each, all under the
 * launch's correlation. */
EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t graph, cudaStream_t stream)
{
    struct call c;
    enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, "cudaGraphLaunch");
    for (uintptr_t i = 0; i < (uintptr_t)graph; i++)
        kernel("_Z8graph_opv", 2, 64, c.data.correlationId);
    return leave(&c, 0);
}

/* A launch whose call the agent has no event for (as when a full buffer
 * dropped it): CUPTI traced it (its API activity record, and an external
 * correlation record where an id is pushed, come when those kinds are on),
 * but no callback reaches the agent. For the cuBLAS double
 * (cublas_double.c). */
EXPORT void double_unseen_launch(const char *name, unsigned grid)
{
    uint64_t start = now();
    uint32_t corr = new_corr();
    kernel(name, grid, 128, corr);
    api_record(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, corr, start, 0);
}

/* cudaProfilerStart / Stop: for OPPROF_CAPTURE=cudaProfilerApi. */
EXPORT cudaError_t cudaProfilerStart(void)
{
    struct call c;
    enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, "cudaProfilerStart");
    return leave(&c, 0);
}

EXPORT cudaError_t cudaProfilerStop(void)
{
    struct call c;
    enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, "cudaProfilerStop");
    return leave(&c, 0);
}

/* A driver entry point, called by the program itself (torch asks
 * cuDevicePrimaryCtxGetState hundreds of times a step) or by a runtime
 * call for its work (cudaDeviceSynchronize's cuCtxSynchronize, inside the
 * runtime call's callbacks, as CUPTI reports it): the DRIVER_API domain's
 * callbacks around it unless turned off, its correlation id from the
 * runtime's count, as CUPTI's. Only cuDevicePrimaryCtxGetState and
 * cuCtxSynchronize have them here: cuCtxDestroy_v2, which the runtime's
 * teardown calls, has none. */
static CUresult driver_call(CUpti_CallbackId cbid, const char *name, CUresult status)
{
    CUpti_CallbackData d;
    memset(&d, 0, sizeof d);
    d.functionName = name;
    d.correlationId = new_corr();
    d.functionReturnValue = &status;
    d.callbackSite = CUPTI_API_ENTER;
    if (cupti_double.cb && cbid < 1024 && cupti_double.drv_cb[cbid])
        cupti_double.cb(cupti_double.ud, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &d);
    driver_start();
    d.callbackSite = CUPTI_API_EXIT;
    if (cupti_double.cb && cbid < 1024 && cupti_double.drv_cb[cbid])
        cupti_double.cb(cupti_double.ud, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &d);
    return status;
}

EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    struct call c;
    enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, "cudaDeviceSynchronize");
    CUpti_ActivitySynchronization2 y;
    memset(&y, 0, sizeof y);
    y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    y.start = now();
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, "cuCtxSynchronize", CUDA_SUCCESS);
    while (now() < cupti_double.busy_until)
        ;
    y.end = now();
    y.contextId = 1, y.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    y.correlationId = c.data.correlationId;
    if (cupti_double.sync_on)
        queue(&y, sizeof y);
    return leave(&c, 0);
}

EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    *flags = 0, *active = dev == 0;
    return driver_call(CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
                       "cuDevicePrimaryCtxGetState", CUDA_SUCCESS);
}

EXPORT CUresult cuCtxSynchronize(void)
{
    return driver_call(CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, "cuCtxSynchronize", CUDA_SUCCESS);
}

/* The driver's cuCtxDestroy: the resource callback CONTEXT_DESTROY_STARTING
 * (where turned on), then the context is gone, and with it the records
 * not handed over (the double keeps no buffers past their context). */
EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    if (cupti_double.cb && cupti_double.ctx_destroy_on) {
        CUpti_ResourceData r;
        memset(&r, 0, sizeof r);
        r.context = ctx;
        cupti_double.cb(cupti_double.ud, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, &r);
    }
    pthread_mutex_lock(&pending_lock);
    cupti_double.len = 0;
    pthread_mutex_unlock(&pending_lock);
    return CUDA_SUCCESS;
}

/* ---- CUPTI ---- */

/* A forked child: its CUPTI is a copy of the parent's, as on an H200 with
 * CUDA 13: the parent's subscription still holds (a client's subscribe is
 * refused until that handle is unsubscribed) and its kinds stay on, but
 * none of its callbacks are delivered, the records the parent had pending
 * are not the child's, and none of the child's activity is recorded, even
 * after a new subscription, until cuptiFinalize detaches the copy. */
static void forked(void)
{
    pthread_mutex_init(&pending_lock, NULL); /* a thread of the parent's may have held it */
    free(cupti_double.pending);
    cupti_double.pending = NULL;
    cupti_double.len = cupti_double.cap = 0;
    cupti_double.cb = NULL;
    cupti_double.fork_copy = cupti_double.sub != 0;
}

/* DOUBLE_CUPTI_CORR=N: the process has made N calls already (its next
 * correlation id is N + 1, 32 bits, wrapping as CUPTI's). */
__attribute__((constructor)) static void double_init(void)
{
    pthread_atfork(NULL, NULL, forked);
    const char *n = getenv("DOUBLE_CUPTI_CORR");
    if (n)
        cupti_double.corr = (uint32_t)strtoul(n, NULL, 10);
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *ud)
{
    if (getenv("DOUBLE_CUPTI_HELD") || cupti_double.sub)
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    cupti_double.cb = cb, cupti_double.ud = ud;
    cupti_double.sub = ++cupti_double.subs_made;
    *s = (CUpti_SubscriberHandle)cupti_double.sub;
    return CUPTI_SUCCESS;
}

/* The subscription ends, and with it its callbacks; the activity API
 * (kinds, buffers, records pending) is the process's and stays. */
EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
    if (getenv("DOUBLE_CUPTI_NO_UNSUBSCRIBE")) /* asked for: a CUPTI that cannot */
        return CUPTI_ERROR_NOT_SUPPORTED;
    if (!cupti_double.sub || (uintptr_t)s != cupti_double.sub)
        return CUPTI_ERROR_INVALID_PARAMETER;
    cupti_double.sub = 0;
    cupti_double.cb = NULL, cupti_double.ud = NULL;
    cupti_double.ctx_destroy_on = 0;
    memset(cupti_double.rt_cb, 0, sizeof cupti_double.rt_cb);
    memset(cupti_double.drv_cb, 0, sizeof cupti_double.drv_cb);
    return CUPTI_SUCCESS;
}

/* CUPTI detached from the process: as one that never started it, the
 * records not handed over gone with it (a client flushes first). The
 * runtime's numbering of calls goes on. */
EXPORT CUptiResult cuptiFinalize(void)
{
    uint32_t corr = cupti_double.corr;
    uint64_t busy = cupti_double.busy_until;
    uintptr_t made = cupti_double.subs_made;
    pthread_mutex_lock(&pending_lock);
    free(cupti_double.pending);
    memset(&cupti_double, 0, sizeof cupti_double);
    cupti_double.corr = corr, cupti_double.busy_until = busy, cupti_double.subs_made = made;
    pthread_mutex_unlock(&pending_lock);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle s, CUpti_CallbackDomain d)
{
    if (d == CUPTI_CB_DOMAIN_RUNTIME_API)
        memset(cupti_double.rt_cb, enable != 0, sizeof cupti_double.rt_cb);
    if (d == CUPTI_CB_DOMAIN_DRIVER_API)
        memset(cupti_double.drv_cb, enable != 0, sizeof cupti_double.drv_cb);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle s, CUpti_CallbackDomain d,
                                       CUpti_CallbackId cbid)
{
    if (d == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < 1024)
        cupti_double.rt_cb[cbid] = enable != 0;
    if (d == CUPTI_CB_DOMAIN_DRIVER_API && cbid < 1024)
        cupti_double.drv_cb[cbid] = enable != 0;
    if (d == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
        cupti_double.ctx_destroy_on = (int)enable;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *t)
{
    /* DOUBLE_CUPTI_TS_STALL_US: not the library's doing but the host's, a
     * caller preempted inside calls, before the clock is read: of every
     * six, the 2nd and the 4th to 6th (a caller reading three times in a
     * row gets one narrow read, then none) */
    static unsigned calls;
    const char *stall = getenv("DOUBLE_CUPTI_TS_STALL_US");
    unsigned k = stall ? __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED) % 6 : 0;
    if (k == 1 || k >= 3)
        usleep((useconds_t)atoi(stall));
    *t = now();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
    if (getenv("DOUBLE_CUPTI_NO_TS_CALLBACK"))
        return CUPTI_ERROR_NOT_SUPPORTED;
    if (cupti_double.kernels_on || cupti_double.memcpy_on)
        return CUPTI_ERROR_INVALID_OPERATION; /* only before any kind is enabled */
    cupti_double.ts = f;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                                  CUpti_BuffersCallbackCompleteFunc done)
{
    cupti_double.req = req, cupti_double.done = done;
    return CUPTI_SUCCESS;
}

/* The flag of kind k the double records, or NULL. */
static int *kind_flag(CUpti_ActivityKind k)
{
    switch (k) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return &cupti_double.kernels_on;
    case CUPTI_ACTIVITY_KIND_MEMCPY: return &cupti_double.memcpy_on;
    case CUPTI_ACTIVITY_KIND_MEMORY2: return &cupti_double.memory_on;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return &cupti_double.sync_on;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return &cupti_double.extcorr_on;
    case CUPTI_ACTIVITY_KIND_RUNTIME: return &cupti_double.api_on;
    default: return NULL;
    }
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
    int *on = kind_flag(k);
    if (on)
        *on = 1;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
    int *on = kind_flag(k);
    if (on)
        *on = 0;
    return CUPTI_SUCCESS;
}

static size_t record_size(CUpti_ActivityKind k);

/* When the device is done with a pending record (0: at once). */
static uint64_t record_end(const CUpti_Activity *a)
{
    if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
        return ((const CUpti_ActivityKernel10 *)a)->end;
    if (a->kind == CUPTI_ACTIVITY_KIND_MEMCPY)
        return ((const CUpti_ActivityMemcpy6 *)a)->end;
    return 0;
}

/* A record of work the device is not done with, as a forced flush hands
 * it over: without timestamps. */
static void unfinished(CUpti_Activity *a, uint64_t t)
{
    if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && ((CUpti_ActivityKernel10 *)a)->end > t)
        ((CUpti_ActivityKernel10 *)a)->start = ((CUpti_ActivityKernel10 *)a)->end = 0;
    if (a->kind == CUPTI_ACTIVITY_KIND_MEMCPY && ((CUpti_ActivityMemcpy6 *)a)->end > t)
        ((CUpti_ActivityMemcpy6 *)a)->start = ((CUpti_ActivityMemcpy6 *)a)->end = 0;
}

/* Hand pending records over in buffers the client gives us: all of them
 * (FORCED: those the device is not done with without timestamps), or (0)
 * those before the first the device is not done with. */
EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    /* DOUBLE_CUPTI_FLUSH_HANG: a forced flush never returns, as one waiting
     * on a device that no longer answers */
    while ((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) && getenv("DOUBLE_CUPTI_FLUSH_HANG"))
        pause();
    pthread_mutex_lock(&pending_lock);
    size_t upto = cupti_double.len;
    uint64_t t = now();
    if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) {
        for (size_t at = 0, sz; at < cupti_double.len && (sz = record_size(((CUpti_Activity *)(cupti_double.pending + at))->kind));
             at += sz)
            unfinished((CUpti_Activity *)(cupti_double.pending + at), t);
    } else {
        for (upto = 0; upto < cupti_double.len;) {
            const CUpti_Activity *a = (const void *)(cupti_double.pending + upto);
            if (record_end(a) > t)
                break;
            upto += record_size(a->kind);
        }
    }
    size_t off = 0;
    while (off < upto && cupti_double.req && cupti_double.done) {
        uint8_t *buf = NULL;
        size_t size = 0, maxrec = 0;
        cupti_double.req(&buf, &size, &maxrec);
        if (!buf) {
            pthread_mutex_unlock(&pending_lock);
            return CUPTI_ERROR_OUT_OF_MEMORY;
        }
        size_t n = upto - off < size ? upto - off : size;
        memcpy(buf, cupti_double.pending + off, n);
        off += n;
        cupti_double.done(NULL, 0, buf, size, n);
    }
    memmove(cupti_double.pending, cupti_double.pending + off, cupti_double.len - off);
    cupti_double.len -= off;
    pthread_mutex_unlock(&pending_lock);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
    cupti_double.period_ms = ms;
    return CUPTI_SUCCESS;
}

static size_t record_size(CUpti_ActivityKind k)
{
    switch (k) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_RUNTIME: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    default: return 0;
    }
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
    uint8_t *p = *rec ? (uint8_t *)*rec + record_size((*rec)->kind) : buf;
    if (p >= buf + valid || !record_size(((CUpti_Activity *)p)->kind))
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *rec = (CUpti_Activity *)p;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t *n)
{
    *n = 0;
    return CUPTI_SUCCESS;
}

/* A stack per kind, one thread: all the double's programs use. */
EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind k, uint64_t id)
{
    if ((unsigned)k >= 8 || k == CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || ext_n[k] == 8)
        return CUPTI_ERROR_INVALID_PARAMETER;
    ext[k][ext_n[k]++] = id;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind k, uint64_t *id)
{
    if ((unsigned)k >= 8 || !ext_n[k])
        return CUPTI_ERROR_QUEUE_EMPTY;
    uint64_t v = ext[k][--ext_n[k]];
    if (id)
        *id = v;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
    *s = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
             ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" : "CUPTI_ERROR";
    return CUPTI_SUCCESS;
}
