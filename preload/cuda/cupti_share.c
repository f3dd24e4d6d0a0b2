/* Another CUPTI client in the same process (cupti_state.h). CUPTI takes
 * one subscriber. When the program's own client (Kineto, for
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
#include "core/internal.h"
#include "cuda/internal.h"

#ifdef OPP_HAVE_CUDA

#include <dlfcn.h>
#include <errno.h>

#include "cuda/cupti_state.h"

static void other_client(int *said, unsigned field, const char *what)
{
    if (*said == 0)
        opp_agent_say(
            "another CUPTI client in this process (torch.profiler/Kineto, nsys, ncu or DCGM) ",
            what, "");
    __atomic_store_n(said, 1, __ATOMIC_RELAXED);
    struct opp_gpu_rec r = {.type = OPP_GPU_DROPPED, .nfields = field + 1};
    r.f[field] = 1;
    pthread_mutex_lock(&opp_cupti_client.lock);
    opp_conv_put(&opp_cupti_client.conv, &r);
    opp_conv_flush(&opp_cupti_client.conv);
    pthread_mutex_unlock(&opp_cupti_client.lock);
}

static void other_client_refused(CUptiResult rc)
{
    static int said;
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && opp_cupti_client.on && !said)
        other_client(&said, OPP_GF_D_CLIENTS,
                     "was refused CUPTI, which opprof holds: that tool gets no GPU activity; "
                     "opprof records it");
}

static int yield_locked(void);

/* Let go of CUPTI for a client refused because we hold it: 1 when we did.
 * Nothing of it is the program's: not the calls CUPTI makes, nor errno. */
static int yield_cupti(void)
{
    if (!opp_cupti_client.on || !opp_cupti_client.lib_cuptiUnsubscribe)
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
    opp_cupti_stop_flusher(); /* no flush of ours from now on */
    if (opp_cupti_buffers_ours()) {
        opp_cupti_clock_point();
        opp_cupti_client.lib_cuptiActivityFlushAll(
            CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); /* what it holds is ours */
    }
    /* Not under opp_cupti_client.lock: CUPTI may wait for a callback of ours in flight,
     * which may be waiting for opp_cupti_client.lock (a flush at a context's destroy). */
    atomic_store(&opp_cuda_via_cupti, 0); /* the symbol fallback records the calls from here */
    if (opp_cupti_client.lib_cuptiUnsubscribe(opp_cupti_client.sub) !=
        CUPTI_SUCCESS) { /* still ours: as before */
        atomic_store(&opp_cuda_via_cupti, 1);
        opp_cupti_start_flusher();
        return 0;
    }
    int extcorr = opp_extcorr_on;
    opp_extcorr_on = 0;
    for (size_t i = 0; i < sizeof opp_cupti_kinds / sizeof *opp_cupti_kinds; i++)
        opp_cupti_client.lib_cuptiActivityDisable(opp_cupti_kinds[i]);
    for (size_t i = 0;
         extcorr && i < sizeof opp_cupti_extcorr_kinds / sizeof *opp_cupti_extcorr_kinds; i++)
        opp_cupti_client.lib_cuptiActivityDisable(opp_cupti_extcorr_kinds[i]);
    opp_cupti_client.lib_cuptiActivityDisable(
        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION); /* OPPROF_GPU_SYNC's */
    pthread_mutex_lock(&opp_cupti_client.lock);
    opp_cupti_client.on = 0;
    opp_cupti_client.yielded = 1;
    opp_cupti_client.sub = NULL;
    pthread_mutex_unlock(&opp_cupti_client.lock);
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
    pthread_mutex_lock(&opp_cupti_client.lock);
    int again = opp_cupti_client.yielded || opp_cupti_client.on;
    if (finalized && opp_cupti_client.tried)
        opp_cupti_corr_restart();
    if (again) {
        opp_cupti_client.yielded = 0;
        opp_cupti_client.on = 0;
        opp_cupti_client.taken = 0;
        opp_cupti_client.tried = 0;
        atomic_store(&opp_cuda_via_cupti, 0);
        opp_extcorr_on = 0;
    }
    pthread_mutex_unlock(&opp_cupti_client.lock);
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
        other_client(
            &said, OPP_GF_D_TAKEN,
            "took CUPTI's activity buffers: GPU activity from now on is that tool's, not in "
            "opprof's trace");
}

/* The real entry point: the next definition, else the library we opened. */
static void *cupti_next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f && opp_cupti_client.handle)
        f = dlsym(opp_cupti_client.handle, name);
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
    if (rc == CUPTI_SUCCESS && __atomic_load_n(&opp_cupti_client.yielded, __ATOMIC_RELAXED))
        take_back(0);
    return rc;
}

/* Detaches CUPTI from the process, ours too where we held it. */
OPP_EXPORT CUptiResult cuptiFinalize(void)
{
    CUptiResult (*real)(void) = (CUptiResult(*)(void))cupti_next("cuptiFinalize");
    if (opp_cupti_buffers_ours()) {
        opp_cupti_stop_flusher();
        opp_cupti_client.lib_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
    CUptiResult rc = real ? real() : CUPTI_ERROR_NOT_INITIALIZED;
    if (rc == CUPTI_SUCCESS)
        take_back(1);
    return rc;
}

typedef CUptiResult (*register_fn)(CUpti_BuffersCallbackRequestFunc,
                                   CUpti_BuffersCallbackCompleteFunc);

OPP_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                                      CUpti_BuffersCallbackCompleteFunc done)
{
    register_fn real = (register_fn)cupti_next("cuptiActivityRegisterCallbacks");
    if (!real)
        return CUPTI_ERROR_NOT_INITIALIZED;
    int ours = opp_cupti_buffers_ours();
    if (ours) /* what is complete so far is still ours */
        opp_cupti_client.lib_cuptiActivityFlushAll(0);
    CUptiResult rc = real(req, done);
    if (ours && rc == CUPTI_SUCCESS) {
        /* no flush of ours from now on: they would hand that client its
         * buffers at times it does not expect (at exit, after its end) */
        __atomic_store_n(&opp_cupti_client.taken, 1, __ATOMIC_RELAXED);
        opp_cupti_stop_flusher();
        buffers_taken();
    }
    return rc;
}

#endif
