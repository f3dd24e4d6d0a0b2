/* CUPTI's timestamps on our clock (cupti_state.h). CUPTI stamps GPU work
 * with our clock where it can (cuptiActivityRegisterTimestampCallback).
 * Where it cannot (a CUPTI
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
#include "core/internal.h"
#include "cuda/internal.h"

#ifdef OPP_HAVE_CUDA

#include <string.h>

#include "cuda/cupti_state.h"

#define CLOCK_POINTS 64u
#define CLOCK_TRIES 3
#define CLOCK_SPAN_MAX 100000u /* ns between our two reads, at most */
static struct {
    pthread_mutex_t lock;
    int calibrated; /* 0: CUPTI stamps with our clock */
    int first_poor; /* the one point there is had no narrow read */
    uint32_t n;
    struct {
        uint64_t gpu, ours;
    } p[CLOCK_POINTS]; /* oldest first */
} gpu_clock = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t CUPTIAPI timestamp(void)
{
    return opp_mono_ns();
}

void opp_cupti_clock_point(void)
{
    if (!gpu_clock.calibrated || !opp_cupti_client.get_timestamp)
        return;
    uint64_t g = 0, mid = 0, span = UINT64_MAX;
    for (int i = 0; i < CLOCK_TRIES; i++) {
        uint64_t t = 0, a = opp_mono_ns();
        if (opp_cupti_client.get_timestamp(&t) != CUPTI_SUCCESS)
            return;
        uint64_t b = opp_mono_ns();
        if (b - a < span) {
            span = b - a;
            g = t;
            mid = a + (b - a) / 2;
        }
    }
    int good = span <= CLOCK_SPAN_MAX;
    pthread_mutex_lock(&gpu_clock.lock);
    if (gpu_clock.n == 1 && gpu_clock.first_poor && good)
        gpu_clock.n = 0;
    if (!gpu_clock.n ||
        (good && g > gpu_clock.p[gpu_clock.n - 1].gpu)) { /* a poor first beats none */
        if (!gpu_clock.n)
            gpu_clock.first_poor = !good;
        if (gpu_clock.n == CLOCK_POINTS) {
            memmove(&gpu_clock.p[0], &gpu_clock.p[1], (CLOCK_POINTS - 1) * sizeof gpu_clock.p[0]);
            gpu_clock.n--;
        }
        gpu_clock.p[gpu_clock.n].gpu = g;
        gpu_clock.p[gpu_clock.n].ours = mid;
        gpu_clock.n++;
    }
    pthread_mutex_unlock(&gpu_clock.lock);
}

uint64_t opp_cupti_clock_ours(uint64_t t)
{
    if (!t)
        return 0; /* not collected */
    pthread_mutex_lock(&gpu_clock.lock);
    uint64_t r = t;
    if (gpu_clock.n == 1) {
        r = t + (gpu_clock.p[0].ours - gpu_clock.p[0].gpu);
    } else if (gpu_clock.n > 1) {
        uint32_t i = 0, j = gpu_clock.n - 1; /* outside the points: through the first and last */
        if (t >= gpu_clock.p[0].gpu && t < gpu_clock.p[gpu_clock.n - 1].gpu) {
            while (t >= gpu_clock.p[i + 1].gpu)
                i++;
            j = i + 1;
        }
        __int128 dg = (__int128)gpu_clock.p[j].gpu - gpu_clock.p[i].gpu;
        __int128 dm = (__int128)gpu_clock.p[j].ours - gpu_clock.p[i].ours;
        __int128 x = (__int128)gpu_clock.p[i].ours + ((__int128)t - gpu_clock.p[i].gpu) * dm / dg;
        r = x < 0 ? 0 : (uint64_t)x;
    }
    pthread_mutex_unlock(&gpu_clock.lock);
    return r;
}

int opp_cupti_clock_start(void)
{
    struct opp_cupti_client *c = &opp_cupti_client;
    gpu_clock.calibrated =
        !c->register_timestamp || c->register_timestamp(timestamp) != CUPTI_SUCCESS;
    gpu_clock.n = 0;
    if (gpu_clock.calibrated && !c->get_timestamp)
        return -1;
    opp_cupti_clock_point();
    return gpu_clock.calibrated;
}

void opp_cupti_clock_forked(void)
{
    pthread_mutex_init(&gpu_clock.lock, NULL);
}

#endif
