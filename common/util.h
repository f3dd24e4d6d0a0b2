/* Small helpers shared by the preload, the collector and the tools: clocks,
 * CRC-32, socket I/O that never raises SIGPIPE, the socket directory. */
#ifndef OPP_UTIL_H
#define OPP_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <x86intrin.h>

#include "format.h"
#include "proto.h"

#define OPP_LIKELY(x) __builtin_expect(!!(x), 1)
#define OPP_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Empties a uthash table (handle hh) and frees each element, which owns
 * nothing else. */
#define OPP_HASH_FREE(head)                                                                        \
    do {                                                                                           \
        __typeof__(head) opp_el_, opp_tmp_;                                                        \
        HASH_ITER(hh, head, opp_el_, opp_tmp_) {                                                   \
            HASH_DEL(head, opp_el_);                                                               \
            free(opp_el_);                                                                         \
        }                                                                                          \
    } while (0)

/* Binary search: the first index i of [0, n) for which the expression
 * before (of i) is false, where it is true of a prefix and false after
 * (n when true of all). */
#define OPP_PARTITION_POINT(n, i, before)                                                          \
    ({                                                                                             \
        size_t opp_lo_ = 0, opp_hi_ = (n);                                                         \
        while (opp_lo_ < opp_hi_) {                                                                \
            size_t i = opp_lo_ + (opp_hi_ - opp_lo_) / 2;                                          \
            if (before)                                                                            \
                opp_lo_ = i + 1;                                                                   \
            else                                                                                   \
                opp_hi_ = i;                                                                       \
        }                                                                                          \
        opp_lo_;                                                                                   \
    })

/* Byte counts from a trace (or a client) are not trusted: sums saturate. */
static inline int64_t opp_add_sat(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

/* FNV-1a of n bytes; never 0. */
static inline uint64_t opp_fnv1a(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h ? h : 1;
}

static inline uint64_t opp_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t opp_real_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t opp_ticks(int clock)
{
    return clock == OPP_CLOCK_TSC ? __rdtsc() : opp_mono_ns();
}

/* A (tsc, monotonic, realtime) sample taken as tightly as we can. */
struct opp_clock_sample {
    uint64_t tsc, mono_ns, real_ns;
};
void opp_clock_sample(struct opp_clock_sample *s);

/* Whether the TSC is invariant here (constant_tsc and nonstop_tsc). */
int opp_tsc_usable(void);

/* CRC-32C (Castagnoli polynomial), hardware-accelerated where possible. */
uint32_t opp_crc32(uint32_t crc, const void *buf, size_t len);

/* Full-length send/recv on a stream socket: 0 or -errno. Never SIGPIPE. */
int opp_send_all(int fd, const void *buf, size_t len);
int opp_recv_all(int fd, void *buf, size_t len, int timeout_ms);

/* One protocol message (header + payload), optionally with one fd. */
int opp_send_msg(int fd, uint16_t type, const void *payload, uint32_t size, int pass_fd);
/* Wait up to timeout_ms for a message of type `want` with an empty or
 * bounded payload: 0, -ETIMEDOUT, -EPROTO or -errno. */
int opp_wait_msg(int fd, uint16_t want, void *payload, uint32_t cap, uint32_t *size, int timeout_ms);

/* What the collector answers a control request (CTL_ACK). */
struct opp_ctl_ack {
    uint32_t recording, procs;
    uint64_t events; /* drained, and written, so far */
    uint64_t dropped; /* records lost so far (buffers full) */
};
/* A control request on fd, a new connection to the collector (op: 0
 * status, 1 start, 2 stop), and its answer: 0 or -errno. */
int opp_ctl_ask(int fd, uint32_t op, struct opp_ctl_ack *ack, int timeout_ms);

/* Waiting for the collector's answer without hanging on one that is
 * stopped or stuck: for as long as it makes progress (its trace grows, or
 * it is running or writing), giving up after quiet_ms without progress or
 * max_ms in all, or at once when it is stopped (-ETIMEDOUT; `state` then
 * holds the collector's state letter, 'T' when stopped by a signal, 0
 * when unknown or gone). */
struct opp_patience {
    int pid;           /* the collector, 0 when unknown */
    const char *trace; /* its output file, NULL when unknown */
    int quiet_ms, max_ms;
    char state;        /* out */
};
int opp_wait_answer(int fd, uint16_t want, void *payload, uint32_t cap, uint32_t *size,
                    struct opp_patience *p);
/* What a trace whose writing failed holds, after its path in a message:
 * " (No space left on device): it holds the first N events of M; the rest
 * is lost", or, when only the final sync failed, " when it was synced
 * (...): its last writes may be missing" (the DONE and ACK fields). */
void opp_write_failure(char *buf, size_t cap, int err, uint64_t written, uint64_t events);
/* What to do about records dropped because a thread's buffer was full,
 * for the lines that count them. */
#define OPP_DROP_ADVICE                                                                            \
    "a larger OPPROF_BUFFER (slots per thread) makes room; OPPROF_DROP=block waits instead of "   \
    "dropping"
/* Why records were dropped when a signal handler interrupted a thread's
 * publishing (ring.h's interrupted), and what that means, for the lines
 * that count them apart from the buffers' drops. */
#define OPP_INTERRUPTED_WHY "a signal handler interrupted opprof recording a call"
#define OPP_INTERRUPTED_ADVICE "not for want of room: a larger OPPROF_BUFFER would not keep them"
/* The start of a small file (one read, as /proc files are read), NUL
 * terminated: bytes read, or -1 (cap >= 1). */
ssize_t opp_read_small(const char *path, char *buf, size_t cap);
/* The state letter of /proc/PID/stat ('R', 'S', 'D', 'T', 'Z'...); 0 when
 * there is no such process. */
char opp_proc_state(int pid);

/* Connect to the collector's socket: fd or -errno. */
int opp_connect(const char *path);
/* The same, giving up after ms milliseconds while the listener's backlog
 * is full (-ETIMEDOUT); ms < 0: wait as long as it takes. */
int opp_connect_within(const char *path, int ms);
/* Its two halves, for a caller that must know the socket from the moment
 * it exists (the preload, which a signal handler may jump out of midway):
 * a new socket for opp_connect_on(fd, path, ms) (fd or -errno), then fd
 * connected (0 or -errno; fd stays the caller's, to close). */
int opp_connect_socket(int ms);
int opp_connect_on(int fd, const char *path, int ms);

/* The per-user socket directory ($XDG_RUNTIME_DIR/opprof or /tmp/opprof-UID),
 * created mode 0700 and checked to be ours and private. 0 or -errno, with
 * a reason in why. */
int opp_socket_dir(char *out, size_t cap, const char **why);
/* A fresh socket path in that directory. */
int opp_socket_path(char *out, size_t cap, const char **why);

#endif
