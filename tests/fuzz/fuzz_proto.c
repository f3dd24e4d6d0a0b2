/* Fuzz target: what the collector takes from a client: the message header
 * and payload checks (collector/parse.c, common/gpu.c's opp_gpu_check, the
 * labels' check in info.h), and in summary mode the ring records and GPU
 * records it aggregates (common/summary_calls.c). Built for libFuzzer (make
 * fuzz) or with replay.c (make test without clang); HACKING.md, "Fuzzing".
 *
 * The first byte picks what the rest is, as the header's type picks the
 * handler in the collector (collector.c, on_message):
 *   OPP_MSG_HELLO, _FUNCS, _RING, _FINISH, _GPU, _INFO: that message's payload
 *   0: a summary-mode session: u16 n, a FUNCS payload of n bytes (the whole
 *      table in one part), u8 slots, that many 32-byte ring slots of one
 *      thread, then a GPU payload
 *   anything else: a message header (16 bytes) and what follows it */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"
#include "gpu.h"
#include "info.h"
#include "ring.h"
#include "summary.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static void hello(const uint8_t *p, uint32_t n)
{
    struct opp_hello h;
    const char *why = NULL;
    if (opp_parse_hello(p, n, &h, &why) == 0) {
        sink += strlen(h.exe);
        for (uint32_t i = 0; i < h.argc; i++)
            sink += strlen(h.argv[i]);
    }
    opp_hello_free(&h);
}

static void funcs(const uint8_t *p, uint32_t n)
{
    struct opp_funcs_msg f;
    const char *why = NULL;
    if (opp_parse_funcs(p, n, &f, &why) == 0)
        for (uint32_t i = 0; i < f.count; i++)
            sink += strlen(f.f[i].lib) + strlen(f.f[i].name) + f.f[i].kind + f.f[i].dtype;
    opp_funcs_free(&f);
}

static struct opp_sum *sum; /* summary mode, below */

/* A GPU payload checked, then each record written again as the collector
 * writes those it keeps: what is read back must be what was read. With a
 * process (summary mode), each goes to the summary first, as the
 * collector's summarize_gpu takes them. */
static void gpu(const uint8_t *p, uint32_t n, uint32_t proc)
{
    uint32_t count;
    const char *why = NULL;
    if (opp_gpu_check(p, n, &count, &why))
        return;
    struct opp_rbuf b;
    opp_rbuf_init(&b, p, n);
    opp_get_u32(&b);
    uint8_t mem[OPP_GPU_REC_MAX];
    for (uint32_t i = 0; i < count; i++) {
        struct opp_gpu_rec g, again;
        if (opp_gpu_get(&b, &g, &why))
            abort(); /* opp_gpu_check passed it */
        if (proc && opp_sum_gpu(sum, proc, &g))
            continue; /* aggregated */
        struct opp_wbuf w;
        opp_wbuf_init(&w, mem, sizeof mem);
        if (opp_gpu_put(&w, &g))
            abort(); /* a record read always fits OPP_GPU_REC_MAX */
        struct opp_rbuf r;
        opp_rbuf_init(&r, mem, w.len);
        if (opp_gpu_get(&r, &again, &why) || opp_rbuf_left(&r) || again.type != g.type ||
            again.nfields != g.nfields || again.slen != g.slen ||
            memcmp(again.f, g.f, sizeof g.f) || (g.slen && memcmp(again.str, g.str, g.slen)))
            abort();
    }
}

static void info(const uint8_t *p, uint32_t n)
{
    struct opp_rbuf b;
    struct opp_info_pair pr[OPP_INFO_MAX];
    opp_rbuf_init(&b, p, n);
    uint32_t count = opp_get_u32(&b);
    if (b.bad || opp_info_read(&b, count, pr) || opp_rbuf_left(&b))
        return;
    for (uint32_t i = 0; i < count; i++)
        sink += pr[i].klen + pr[i].vlen;
}

static void payload(uint32_t type, const uint8_t *p, uint32_t n)
{
    const char *why = NULL;
    struct opp_ring_msg rm;
    struct opp_finish_msg fin;
    switch (type) {
    case OPP_MSG_HELLO:
        hello(p, n);
        break;
    case OPP_MSG_FUNCS:
        funcs(p, n);
        break;
    case OPP_MSG_RING:
        if (opp_parse_ring(p, n, &rm, &why) == 0)
            sink += rm.tid + rm.capacity;
        break;
    case OPP_MSG_FINISH:
        if (opp_parse_finish(p, n, &fin, &why) == 0)
            sink += fin.linger_ms + fin.pid + fin.ppid + fin.status;
        break;
    case OPP_MSG_GPU:
        gpu(p, n, 0);
        break;
    case OPP_MSG_INFO:
        info(p, n);
        break;
    }
}

/* ---- summary mode ---- */

/* One summary for the whole run (a new one costs megabytes of maps); each
 * session is a process of its own, written out and forgotten at its end,
 * so that no session sees another's calls. */
static uint32_t next_proc;
static struct opp_tw devnull = {.fd = -1};

/* The thread's records as the collector drains a ring (collector.c,
 * ring_drain, through the same opp_ring_read), each call or window into
 * the summary; a slot that is the call of one slot before it again but
 * for its times offered to opp_sum_again first, as ring_drain does. */
static void drain(uint32_t proc, uint32_t nfuncs, const uint8_t *p, size_t slots)
{
    struct opp_rec ring[256]; /* slots < 256: a ring of 256 that never wraps */
    memcpy(ring, p, slots * sizeof *ring);
    int again = 0; /* the record before was a call of one slot */
    for (size_t t = 0; t < slots;) {
        if (again && !memcmp(&ring[t].fn, &ring[t - 1].fn, 16) &&
            opp_sum_again(sum, ring[t].begin, ring[t].end)) {
            t++;
            continue;
        }
        struct opp_ring_rec rr;
        if (opp_ring_read(ring, 256, t, slots - t, nfuncs, &rr))
            return; /* the collector abandons the ring */
        const struct opp_rec *rec = &rr.rec;
        if (rec->flags & OPP_REC_WINDOW)
            opp_sum_window(sum, proc, 1, rec->arg0 < UINT32_MAX ? (uint32_t)rec->arg0 : UINT32_MAX);
        else
            opp_sum_call(sum, proc, 1, rec->fn, rec->depth, rec->begin, rec->end, rr.nargs,
                         rr.args, rec->flags & OPP_REC_RANGE ? OPP_SUM_RANGE : 0);
        again = !(rec->flags & ~OPP_REC_RANGE) && rr.slots == 1;
        t += rr.slots;
    }
}

static void session(const uint8_t *p, size_t n)
{
    if (!sum) {
        sum = opp_sum_new(4096);
        devnull.fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (!sum || devnull.fd < 0)
            abort();
    }
    if (n < 2)
        return;
    uint16_t flen;
    memcpy(&flen, p, 2);
    p += 2, n -= 2;
    if (flen > n)
        return;
    struct opp_funcs_msg f;
    const char *why = NULL;
    /* the table whole, as on_funcs hands it to the summary */
    if (opp_parse_funcs(p, flen, &f, &why) || f.first || f.count != f.total) {
        opp_funcs_free(&f);
        return;
    }
    uint32_t proc = ++next_proc;
    int ok = opp_sum_proc(sum, proc, f.count, f.f) == 0;
    uint32_t nfuncs = f.count;
    opp_funcs_free(&f);
    if (!ok)
        return;
    p += flen, n -= flen;
    size_t slots = n ? p[0] : 0;
    if (n)
        p++, n--;
    if (slots > n / sizeof(struct opp_rec))
        slots = n / sizeof(struct opp_rec);
    drain(proc, nfuncs, p, slots);
    p += slots * sizeof(struct opp_rec), n -= slots * sizeof(struct opp_rec);
    gpu(p, n > OPP_MSG_MAX ? OPP_MSG_MAX : (uint32_t)n, proc);
    opp_sum_thread_end(sum, proc, 1);
    opp_sum_write(sum, proc, &devnull);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t sel = data[0];
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    if (sel == 0) {
        session(p, n);
        return 0;
    }
    switch (sel) {
    case OPP_MSG_HELLO:
    case OPP_MSG_FUNCS:
    case OPP_MSG_RING:
    case OPP_MSG_FINISH:
    case OPP_MSG_GPU:
    case OPP_MSG_INFO:
        /* no payload is larger: the collector refuses the header first */
        payload(sel, p, n > OPP_MSG_MAX ? OPP_MSG_MAX : (uint32_t)n);
        return 0;
    }
    struct opp_msg_header h;
    const char *why = NULL;
    if (opp_parse_header(p, n, &h, &why) == 0 && h.size <= n - sizeof h)
        payload(h.type, p + sizeof h, h.size);
    return 0;
}
