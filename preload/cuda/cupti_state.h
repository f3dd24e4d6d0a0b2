/* The CUPTI client's state (cupti.c), shared by its files: cupti.c (its
 * start, the API callbacks, correlation ids, capture windows),
 * cupti_clock.c (CUPTI's timestamps on our clock), cupti_flush.c (the
 * activity buffers, the flush thread, fatal signals), cupti_share.c
 * (another CUPTI client in the same process). Only with the CUDA toolkit
 * (OPP_HAVE_CUDA). */
#ifndef OPP_CUDA_CUPTI_STATE_H
#define OPP_CUDA_CUPTI_STATE_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda/cupti_conv.h"

typedef CUptiResult (*subscribe_fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
typedef CUptiResult (*subscribe_v2_fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
                                       CUpti_SubscriberParams *);

/* The CUPTI entry points we use, looked up in the library we opened (the
 * client's lib_NAME: the library's own, not our interposer's). */
#define CUPTI_FNS(X)                                                                               \
    X(cuptiSubscribe, CUptiResult, (CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *))         \
    X(cuptiEnableDomain, CUptiResult, (uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain))    \
    X(cuptiActivityRegisterCallbacks, CUptiResult,                                                 \
      (CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))                       \
    X(cuptiActivityEnable, CUptiResult, (CUpti_ActivityKind))                                      \
    X(cuptiActivityFlushAll, CUptiResult, (uint32_t))                                              \
    X(cuptiActivityGetNextRecord, CUptiResult, (uint8_t *, size_t, CUpti_Activity **))             \
    X(cuptiActivityGetNumDroppedRecords, CUptiResult, (CUcontext, uint32_t, size_t *))             \
    X(cuptiActivityPushExternalCorrelationId, CUptiResult,                                         \
      (CUpti_ExternalCorrelationKind, uint64_t))                                                   \
    X(cuptiActivityPopExternalCorrelationId, CUptiResult,                                          \
      (CUpti_ExternalCorrelationKind, uint64_t *))                                                 \
    X(cuptiActivityDisable, CUptiResult, (CUpti_ActivityKind))                                     \
    X(cuptiUnsubscribe, CUptiResult, (CUpti_SubscriberHandle))                                     \
    X(cuptiFinalize, CUptiResult, (void))

/* The client: CUPTI's entry points, what it holds and how it stands. */
struct opp_cupti_client {
#define CUPTI_PTR(name, ret, args) ret(*lib_##name) args;
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
    int taken;      /* another client took the activity buffers: no flush of ours goes to it */
    int yielded;    /* we let go of CUPTI for another client, which holds it now */
    int conv_stale; /* a fork child's converter: its names went on the parent's connection */
    int conv_ready;
    int forked_copy; /* a fork child whose parent ran CUPTI: the child's copy is the parent's */
    void *handle;    /* the CUPTI library we opened */
    CUpti_SubscriberHandle sub;
    struct opp_conv conv;
    uint64_t lost_reported, unfinished_reported;
    char self[PATH_MAX];
};
extern struct opp_cupti_client opp_cupti_client;

/* Whether CUPTI's activity buffers come to us: asking for them hands them
 * over (not once another client took them, nor before we started). */
static inline int opp_cupti_buffers_ours(void)
{
    return opp_cupti_client.on && !__atomic_load_n(&opp_cupti_client.taken, __ATOMIC_RELAXED);
}

/* Our activity kinds (the start enables them; letting go of CUPTI turns
 * them off), and those external correlation needs (OPPROF_GPU_EXTCORR). */
extern const CUpti_ActivityKind opp_cupti_kinds[6];
extern const CUpti_ActivityKind opp_cupti_extcorr_kinds[3];

/* ---- cupti.c ---- */

/* CUPTI numbered afresh: every correlation id from now on above every
 * one so far. */
void opp_cupti_corr_restart(void);

/* ---- cupti_clock.c ---- */

/* At our subscription: CUPTI stamps GPU work with our clock where it can
 * (0); else its times are mapped through calibration points taken from
 * now on (1); -1 when it can do neither. */
int opp_cupti_clock_start(void);
/* A calibration point, where the times are mapped (a flush, a buffer). */
void opp_cupti_clock_point(void);
/* A CUPTI timestamp on our clock (the converter's, under the client's lock). */
uint64_t opp_cupti_clock_ours(uint64_t t);
/* A fork child's: its lock made anew. */
void opp_cupti_clock_forked(void);

/* ---- cupti_flush.c ---- */

/* CUPTI's buffer callbacks (cuptiActivityRegisterCallbacks). */
void CUPTIAPI opp_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records);
void CUPTIAPI opp_cupti_buffer_done(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                    size_t valid);
/* The flush thread started (OPPROF_GPU_FLUSH_MS), and stopped: the forced
 * flush that follows is the last. */
void opp_cupti_start_flusher(void);
void opp_cupti_stop_flusher(void);
/* The feature's flush at exit: what CUPTI holds of ours handed over. */
void opp_cupti_flush(void);
/* A fork child's: the flush thread did not come along. */
void opp_cupti_flush_forked(void);
/* A fatal signal (SIGTERM, SIGINT, SIGHUP) the program left to its
 * default asks the flush thread for the forced flush first. */
void opp_cupti_install_signals(void);

#endif
