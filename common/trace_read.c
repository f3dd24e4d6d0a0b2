/* Over 600 lines: the one reader of every chunk type, so the format is validated in one place. */
/* Trace file reader: validates every chunk (size, CRC, fields) before it is
 * delivered, converts ticks to CLOCK_MONOTONIC ns, and stops cleanly with a
 * warning at the first damaged or cut chunk. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "trace.h"
#include "info.h"
#include "ops.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_PROCS (1u << 20)

struct proc_info {
    uint8_t known, clock;
    uint32_t nfuncs;
    uint32_t nodes; /* summary nodes read */
};

struct reader {
    FILE *f;
    const char *path;
    uint64_t off, size;
    /* TSC -> ns: ns = mono0 + ((tsc - tsc0) * mult) >> 32 */
    uint64_t tsc0, mono0, mult;
    int have_cal;
    struct proc_info *procs;
    uint32_t nprocs;
    uint8_t *buf;
    size_t bufcap;
    struct opp_tr_summary *sum;
};

static uint64_t to_ns(const struct reader *r, uint32_t clock, uint64_t t)
{
    if (clock != OPP_CLOCK_TSC)
        return t;
    if (t >= r->tsc0)
        return r->mono0 + (uint64_t)(((unsigned __int128)(t - r->tsc0) * r->mult) >> 32);
    uint64_t back = (uint64_t)(((unsigned __int128)(r->tsc0 - t) * r->mult) >> 32);
    return back < r->mono0 ? r->mono0 - back : 0;
}

/* A duration in ticks as ns. */
static uint64_t dur_ns(const struct reader *r, uint32_t clock, uint64_t t)
{
    if (clock != OPP_CLOCK_TSC)
        return t;
    unsigned __int128 v = ((unsigned __int128)t * r->mult) >> 32;
    return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

static int read_header(struct reader *r, struct opp_chunk_header *h)
{
    if (r->size - r->off < OPP_CHUNK_HEADER_SIZE) {
        if (r->size != r->off)
            snprintf(r->sum->warning, sizeof r->sum->warning,
                     "trace cut at byte %llu: %llu stray bytes after the last whole chunk",
                     (unsigned long long)r->off, (unsigned long long)(r->size - r->off));
        return 1;
    }
    if (fread(h, sizeof *h, 1, r->f) != 1)
        return -1;
    if (h->type == 0 || h->type > OPP_CHUNK_TYPE_MAX || h->size > OPP_CHUNK_MAX || h->reserved) {
        snprintf(r->sum->warning, sizeof r->sum->warning,
                 "trace damaged at byte %llu: not a chunk header (type %u, size %u)",
                 (unsigned long long)r->off, h->type, h->size);
        return 1;
    }
    if (r->size - r->off - OPP_CHUNK_HEADER_SIZE < h->size) {
        snprintf(r->sum->warning, sizeof r->sum->warning,
                 "trace cut at byte %llu: last chunk has %llu of its %u bytes",
                 (unsigned long long)r->off,
                 (unsigned long long)(r->size - r->off - OPP_CHUNK_HEADER_SIZE), h->size);
        return 1;
    }
    return 0;
}

static int read_payload(struct reader *r, const struct opp_chunk_header *h)
{
    if (h->size > r->bufcap) {
        size_t cap = h->size < 65536 ? 65536 : h->size;
        uint8_t *nb = realloc(r->buf, cap);
        if (!nb)
            return -1;
        r->buf = nb;
        r->bufcap = cap;
    }
    if (h->size && fread(r->buf, h->size, 1, r->f) != 1)
        return -1;
    if (opp_crc32(0, r->buf, h->size) != h->crc) {
        snprintf(r->sum->warning, sizeof r->sum->warning,
                 "trace damaged at byte %llu: checksum mismatch in a chunk of type %u",
                 (unsigned long long)r->off, h->type);
        return 1;
    }
    return 0;
}

/* First pass: the first and last CLOCK samples give the TSC calibration. */
static void calibrate(struct reader *r)
{
    uint64_t first_t = 0, first_m = 0, last_t = 0, last_m = 0;
    int n = 0;
    struct opp_chunk_header h;
    char saved[sizeof r->sum->warning];
    memcpy(saved, r->sum->warning, sizeof saved);
    while (read_header(r, &h) == 0) {
        if (h.type == OPP_CHUNK_CLOCK && h.size == 24) {
            if (read_payload(r, &h) != 0)
                break;
            uint64_t t, m;
            memcpy(&t, r->buf, 8);
            memcpy(&m, r->buf + 8, 8);
            if (!n) {
                first_t = t;
                first_m = m;
            }
            last_t = t;
            last_m = m;
            n++;
        } else if (fseeko(r->f, h.size, SEEK_CUR) != 0) {
            break;
        }
        r->off += OPP_CHUNK_HEADER_SIZE + h.size;
    }
    memcpy(r->sum->warning, saved, sizeof saved);
    r->tsc0 = first_t;
    r->mono0 = first_m;
    r->mult = 1ull << 32;
    if (n >= 2 && last_t > first_t && last_m > first_m) {
        r->mult = (uint64_t)(((unsigned __int128)(last_m - first_m) << 32) / (last_t - first_t));
        r->have_cal = 1;
    }
}

static struct proc_info *proc_at(struct reader *r, uint32_t proc)
{
    if (proc >= MAX_PROCS)
        return NULL;
    if (proc >= r->nprocs) {
        uint32_t n = r->nprocs ? r->nprocs : 16;
        while (n <= proc)
            n *= 2;
        struct proc_info *np = realloc(r->procs, n * sizeof *np);
        if (!np)
            return NULL;
        memset(np + r->nprocs, 0, (n - r->nprocs) * sizeof *np);
        r->procs = np;
        r->nprocs = n;
    }
    return &r->procs[proc];
}

static struct proc_info *known_proc(struct reader *r, uint32_t proc)
{
    struct proc_info *p = proc < r->nprocs ? &r->procs[proc] : NULL;
    return p && p->known ? p : NULL;
}

#define BAD(...)                                                                                   \
    do {                                                                                           \
        snprintf(r->sum->warning, sizeof r->sum->warning, __VA_ARGS__);                            \
        return 1;                                                                                  \
    } while (0)

static int chunk_process(struct reader *r, struct opp_rbuf *b, const struct opp_tr_visitor *v,
                         void *ctx)
{
    struct opp_tr_process p;
    p.proc = opp_get_u32(b);
    p.pid = opp_get_u32(b);
    p.ppid = opp_get_u32(b);
    p.parent_proc = opp_get_u32(b);
    p.clock = opp_get_u32(b);
    p.argc = opp_get_u32(b);
    uint64_t start = opp_get_u64(b);
    p.start_real_ns = opp_get_u64(b);
    if (b->bad || p.clock > OPP_CLOCK_TSC || p.argc > OPP_MAX_ARGV)
        return -1;
    struct proc_info *pi = proc_at(r, p.proc);
    if (!pi)
        return -1;
    if (pi->known)
        BAD("trace damaged at byte %llu: process %u declared twice", (unsigned long long)r->off,
            p.proc);
    size_t n;
    const char *exe = opp_get_str(b, OPP_STR_MAX, &n);
    char *exe_z = strndup(exe, n);
    char **argv = calloc(p.argc + 1, sizeof *argv);
    int rc = 0;
    if (!exe_z || !argv) {
        rc = -1;
        goto out;
    }
    for (uint32_t i = 0; i < p.argc; i++) {
        const char *a = opp_get_str(b, OPP_STR_MAX, &n);
        if (b->bad)
            break;
        argv[i] = strndup(a, n);
        if (!argv[i]) {
            rc = -1;
            goto out;
        }
    }
    if (b->bad || opp_rbuf_left(b)) {
        rc = -1;
        goto out;
    }
    pi->known = 1;
    pi->clock = (uint8_t)p.clock;
    p.start_ns = to_ns(r, p.clock, start);
    p.exe = exe_z;
    p.argv = (const char *const *)argv;
    rc = v->process ? (v->process(ctx, &p) ? 2 : 0) : 0;
out:
    if (argv)
        for (uint32_t i = 0; i < p.argc; i++)
            free(argv[i]);
    free(argv);
    free(exe_z);
    return rc;
}

static int chunk_funcs(struct reader *r, struct opp_rbuf *b, const struct opp_tr_visitor *v,
                       void *ctx)
{
    uint32_t proc = opp_get_u32(b), count = opp_get_u32(b);
    struct proc_info *pi = known_proc(r, proc);
    if (b->bad || !pi || pi->nfuncs || count > (1u << 20) || count > opp_rbuf_left(b) / 16)
        return -1;
    struct opp_tr_func *f = calloc(count ? count : 1, sizeof *f);
    char *strs = malloc(opp_rbuf_left(b) + 2u * count + 1);
    if (!f || !strs) {
        free(f);
        free(strs);
        return -1;
    }
    char *s = strs;
    for (uint32_t i = 0; i < count && !b->bad; i++) {
        size_t n;
        f[i].kind = opp_get_u32(b);
        f[i].dtype = opp_get_u32(b);
        const char *lib = opp_get_str(b, OPP_NAME_MAX, &n);
        memcpy(s, lib, n);
        s[n] = 0;
        f[i].lib = s;
        s += n + 1;
        const char *name = opp_get_str(b, OPP_NAME_MAX, &n);
        memcpy(s, name, n);
        s[n] = 0;
        f[i].name = s;
        s += n + 1;
        if (!opp_kind_valid(f[i].kind) || f[i].dtype > OPP_DT_MAX || !f[i].name[0])
            b->bad = 1;
    }
    int rc = -1;
    if (!b->bad && !opp_rbuf_left(b)) {
        pi->nfuncs = count;
        rc = v->funcs ? (v->funcs(ctx, proc, count, f) ? 2 : 0) : 0;
    }
    free(f);
    free(strs);
    return rc;
}

static int chunk_events(struct reader *r, struct opp_rbuf *b, const struct opp_tr_visitor *v,
                        void *ctx)
{
    struct opp_tr_event e;
    e.proc = opp_get_u32(b);
    e.tid = opp_get_u32(b);
    uint32_t count = opp_get_u32(b);
    uint32_t pad = opp_get_u32(b);
    uint64_t end = opp_get_u64(b);
    struct proc_info *pi = known_proc(r, e.proc);
    if (b->bad || !pi || pad || count > opp_rbuf_left(b) / 3) /* an event is >= 3 bytes */
        return -1;
    uint64_t depth = 0;
    const unsigned fbits = r->sum->version >= 3 ? OPP_EV_FLAG_BITS : OPP_EV_FLAG_BITS_V2;
    e.stack = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t head = opp_get_varint(b);
        uint64_t dend = opp_get_varint(b);
        uint64_t dur = opp_get_varint(b);
        uint64_t fn = head >> fbits;
        uint32_t flags = (uint32_t)(head & ((1u << fbits) - 1));
        if (flags & OPP_EV_SAME) {
            /* depth and args as the previous event, which must exist; in
             * format 3 the head is SAME alone (function and flags are the
             * previous event's), before it they had to repeat them */
            if (i == 0)
                return -1;
            if (r->sum->version >= 3) {
                if (head != OPP_EV_SAME)
                    return -1;
                fn = e.fn;
            } else if (fn != e.fn || (flags & ~OPP_EV_SAME) != e.flags) {
                return -1;
            }
        } else {
            e.flags = flags;
            depth = opp_get_varint(b);
            e.nargs = 0;
            if (e.flags & OPP_EV_ARGS) {
                uint64_t na = opp_get_varint(b);
                if (na == 0 || na > OPP_MAX_ARGS)
                    return -1;
                e.nargs = (uint32_t)na;
                for (uint32_t k = 0; k < e.nargs; k++)
                    e.args[k] = opp_get_varint(b);
            }
            e.stack = 0;
            if (e.flags & OPP_EV_STACK) {
                uint64_t st = opp_get_varint(b);
                if (st == 0 || st > UINT32_MAX)
                    return -1;
                e.stack = (uint32_t)st;
            }
        }
        if (b->bad || fn >= pi->nfuncs || depth > 0xffff || end + dend < end)
            return -1;
        end += dend;
        if (dur > end)
            return -1;
        e.fn = (uint32_t)fn;
        e.depth = (uint32_t)depth;
        e.begin_ns = to_ns(r, pi->clock, end - dur);
        e.end_ns = to_ns(r, pi->clock, end);
        r->sum->events++;
        if (v->event && v->event(ctx, &e))
            return 2;
    }
    return opp_rbuf_left(b) ? -1 : 0;
}

/* SUMMARY: u32 proc, u32 count, u32 first serial, u32 0, count nodes. */
static int chunk_summary(struct reader *r, struct opp_rbuf *b, const struct opp_tr_visitor *v,
                         void *ctx)
{
    uint32_t proc = opp_get_u32(b), count = opp_get_u32(b), first = opp_get_u32(b);
    uint32_t zero = opp_get_u32(b);
    struct proc_info *pi = known_proc(r, proc);
    if (b->bad || zero || !pi || first != pi->nodes + 1)
        return -1;
    r->sum->summary = 1;
    struct opp_tr_snode n;
    for (uint32_t i = 0; i < count; i++) {
        n.serial = pi->nodes + 1;
        n.parent = opp_get_u32(b);
        n.window = opp_get_u32(b);
        n.fn = opp_get_u32(b);
        n.nargs = opp_get_u32(b);
        n.count = opp_get_u64(b);
        uint64_t total = opp_get_u64(b), self = opp_get_u64(b);
        n.open = opp_get_u64(b);
        n.self_cuda_ns = opp_get_u64(b);
        n.self_mem = (int64_t)opp_get_u64(b);
        n.cpu_mem = r->sum->version >= 7 ? (int64_t)opp_get_u64(b) : 0;
        if (b->bad || n.parent >= n.serial || n.fn >= pi->nfuncs || n.nargs > OPP_MAX_ARGS ||
            self > total || n.open > n.count)
            return -1;
        for (uint32_t k = 0; k < n.nargs; k++)
            n.args[k] = opp_get_u64(b);
        if (b->bad)
            return -1;
        n.total_ns = dur_ns(r, pi->clock, total);
        n.self_ns = dur_ns(r, pi->clock, self);
        pi->nodes++;
        if (v->snode && v->snode(ctx, proc, &n))
            return 2;
    }
    return opp_rbuf_left(b) ? -1 : 0;
}

/* SUMMARY_GPU: u32 proc, u32 count, count rows. */
static int chunk_summary_gpu(struct reader *r, struct opp_rbuf *b,
                             const struct opp_tr_visitor *v, void *ctx)
{
    uint32_t proc = opp_get_u32(b), count = opp_get_u32(b);
    if (b->bad || !known_proc(r, proc))
        return -1;
    r->sum->summary = 1;
    for (uint32_t i = 0; i < count; i++) {
        struct opp_tr_sgpu g;
        g.window = opp_get_u32(b);
        g.type = opp_get_u32(b);
        g.name = opp_get_u32(b);
        g.kind = opp_get_u32(b);
        g.src_kind = opp_get_u32(b);
        g.dst_kind = opp_get_u32(b);
        g.device = opp_get_u32(b);
        g.stream = opp_get_u32(b);
        g.count = opp_get_u64(b);
        g.dur_ns = opp_get_u64(b);
        g.bytes = opp_get_u64(b);
        if (b->bad || g.type < OPP_GPU_KERNEL || g.type > OPP_GPU_OVERHEAD ||
            g.type == OPP_GPU_MEMORY || !g.count)
            return -1;
        if (v->sgpu && v->sgpu(ctx, proc, &g))
            return 2;
    }
    return opp_rbuf_left(b) ? -1 : 0;
}

static int chunk(struct reader *r, uint32_t type, struct opp_rbuf *b,
                 const struct opp_tr_visitor *v, void *ctx)
{
    switch (type) {
    case OPP_CHUNK_CLOCK:
        return b->len == 24 ? 0 : -1;
    case OPP_CHUNK_PROCESS:
        return chunk_process(r, b, v, ctx);
    case OPP_CHUNK_FUNCS:
        return chunk_funcs(r, b, v, ctx);
    case OPP_CHUNK_THREAD: {
        uint32_t proc = opp_get_u32(b), tid = opp_get_u32(b);
        size_t n;
        const char *s = opp_get_str(b, OPP_NAME_MAX, &n);
        if (b->bad || opp_rbuf_left(b) || !known_proc(r, proc))
            return -1;
        char name[OPP_NAME_MAX + 1];
        memcpy(name, s, n);
        name[n] = 0;
        return v->thread && v->thread(ctx, proc, tid, name) ? 2 : 0;
    }
    case OPP_CHUNK_EVENTS:
        return chunk_events(r, b, v, ctx);
    case OPP_CHUNK_INFO: {
        uint32_t proc = opp_get_u32(b), count = opp_get_u32(b);
        struct opp_info_pair pr[OPP_INFO_MAX];
        if (b->bad || !known_proc(r, proc) || opp_info_read(b, count, pr) || opp_rbuf_left(b))
            return -1;
        if (!v->info)
            return 0;
        char text[OPP_INFO_MAX][OPP_INFO_KEY_MAX + OPP_INFO_VALUE_MAX + 2];
        const char *keys[OPP_INFO_MAX], *values[OPP_INFO_MAX];
        for (uint32_t i = 0; i < count; i++) {
            memcpy(text[i], pr[i].key, pr[i].klen);
            text[i][pr[i].klen] = 0;
            memcpy(text[i] + pr[i].klen + 1, pr[i].value, pr[i].vlen);
            text[i][pr[i].klen + 1 + pr[i].vlen] = 0;
            keys[i] = text[i];
            values[i] = text[i] + pr[i].klen + 1;
        }
        return v->info(ctx, proc, count, keys, values) ? 2 : 0;
    }
    case OPP_CHUNK_DROPPED: {
        uint32_t proc = opp_get_u32(b), tid = opp_get_u32(b);
        uint64_t n = opp_get_u64(b);
        if (b->bad || opp_rbuf_left(b) || !known_proc(r, proc))
            return -1;
        return v->dropped && v->dropped(ctx, proc, tid, n) ? 2 : 0;
    }
    case OPP_CHUNK_PROCESS_END: {
        uint32_t proc = opp_get_u32(b), how = opp_get_u32(b);
        uint64_t t = opp_get_u64(b);
        struct proc_info *pi = known_proc(r, proc);
        if (b->bad || opp_rbuf_left(b) || !pi || how < OPP_END_EXITED || how > OPP_END_RUNNING)
            return -1;
        return v->process_end && v->process_end(ctx, proc, how, to_ns(r, pi->clock, t)) ? 2 : 0;
    }
    case OPP_CHUNK_PROCESS_STATUS: {
        uint32_t proc = opp_get_u32(b), how = opp_get_u32(b), code = opp_get_u32(b);
        uint32_t zero = opp_get_u32(b);
        if (b->bad || opp_rbuf_left(b) || zero || !known_proc(r, proc) ||
            !opp_exit_valid(how, code))
            return -1;
        return v->process_status && v->process_status(ctx, proc, how, code) ? 2 : 0;
    }
    case OPP_CHUNK_GPU: {
        uint32_t proc = opp_get_u32(b), count = opp_get_u32(b);
        if (b->bad || !known_proc(r, proc))
            return -1;
        struct opp_gpu_rec g;
        const char *why;
        for (uint32_t i = 0; i < count; i++) {
            if (opp_gpu_get(b, &g, &why))
                return -1;
            r->sum->gpu_records++;
            if (v->gpu && v->gpu(ctx, proc, &g))
                return 2;
        }
        return opp_rbuf_left(b) ? -1 : 0;
    }
    case OPP_CHUNK_SUMMARY:
        return chunk_summary(r, b, v, ctx);
    case OPP_CHUNK_SUMMARY_GPU:
        return chunk_summary_gpu(r, b, v, ctx);
    case OPP_CHUNK_END:
        r->sum->end_events = opp_get_u64(b);
        r->sum->end_dropped = opp_get_u64(b);
        r->sum->end_processes = opp_get_u32(b);
        opp_get_u32(b);
        if (b->bad || opp_rbuf_left(b))
            return -1;
        r->sum->complete = 1;
        return 0;
    }
    return -1;
}

static const char *chunk_name(uint32_t type)
{
    static const char *n[] = {"?",      "clock",   "process",     "funcs",         "thread",
                              "events", "dropped", "process-end", "end",           "gpu",
                              "info",   "summary", "summary-gpu", "process-status"};
    _Static_assert(sizeof n / sizeof n[0] == OPP_CHUNK_TYPE_MAX + 1, "a name per chunk type");
    return type <= OPP_CHUNK_TYPE_MAX ? n[type] : "?";
}

/* Wait a little for a collector still writing the file (it holds LOCK_EX). */
static void wait_writer(int fd, struct opp_tr_summary *sum)
{
    const char *w = getenv("OPPROF_WAIT_MS");
    long ms = w ? strtol(w, NULL, 10) : 5000;
    for (long waited = 0;; waited += 20) {
        if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
            flock(fd, LOCK_UN);
            return;
        }
        if (errno != EWOULDBLOCK || waited >= ms)
            break;
        usleep(20000);
    }
    snprintf(sum->warning, sizeof sum->warning, "trace is still being written");
}

int opp_trace_read(const char *path, const struct opp_tr_visitor *v, void *ctx,
                   struct opp_tr_summary *sum, char *err, size_t errlen)
{
    memset(sum, 0, sizeof *sum);
    struct reader r = {.path = path, .sum = sum};
    /* O_NONBLOCK: a FIFO would otherwise block the open until a writer came */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s is not a regular file", path);
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    wait_writer(fd, sum);
    char still[sizeof sum->warning];
    memcpy(still, sum->warning, sizeof still);
    sum->warning[0] = 0;
    if (fstat(fd, &st) < 0) {
        snprintf(err, errlen, "cannot stat %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    r.f = fdopen(fd, "rb");
    if (!r.f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    setvbuf(r.f, NULL, _IOFBF, 1 << 20);
    r.size = (uint64_t)st.st_size;
    sum->file_size = r.size;
    struct opp_file_header fh;
    const size_t v1 = OPP_FILE_HEADER_SIZE_V1;
    if (r.size < v1 || fread(&fh, v1, 1, r.f) != 1 || memcmp(fh.magic, OPP_TRACE_MAGIC, 8) != 0) {
        snprintf(err, errlen, "%s is not an opprof trace (bad magic)", path);
        fclose(r.f);
        return -1;
    }
    /* From version 6 the header carries its own CRC, so a flipped version
     * or size is caught rather than read as another format. */
    size_t hsize = v1;
    if (fh.header_size == OPP_FILE_HEADER_SIZE) {
        hsize = OPP_FILE_HEADER_SIZE;
        if (r.size < hsize || fread(&fh.crc, hsize - v1, 1, r.f) != 1) {
            snprintf(err, errlen, "%s: the trace is cut inside its header", path);
            fclose(r.f);
            return -1;
        }
        if (fh.crc != opp_crc32(0, &fh, offsetof(struct opp_file_header, crc)) || fh.reserved ||
            fh.version < 6) {
            snprintf(err, errlen, "%s: the trace's header is damaged (checksum mismatch)", path);
            fclose(r.f);
            return -1;
        }
    } else if (fh.header_size != v1 || fh.version >= 6) {
        snprintf(err, errlen, "%s: the trace's header is damaged (header size %u, version %u)",
                 path, fh.header_size, fh.version);
        fclose(r.f);
        return -1;
    }
    if (fh.version < OPP_TRACE_VERSION_MIN || fh.version > OPP_TRACE_VERSION) {
        snprintf(err, errlen,
                 "%s: trace format version %u is not supported (this opprof reads %u to %u)",
                 path, fh.version, OPP_TRACE_VERSION_MIN, OPP_TRACE_VERSION);
        fclose(r.f);
        return -1;
    }
    sum->version = fh.version;
    r.off = hsize;
    calibrate(&r);
    if (fseeko(r.f, (off_t)hsize, SEEK_SET) != 0) {
        snprintf(err, errlen, "cannot seek in %s", path);
        fclose(r.f);
        return -1;
    }
    r.off = hsize;
    int rc = 0;
    struct opp_chunk_header h;
    while (!sum->complete) {
        int hr = read_header(&r, &h);
        if (hr) {
            if (hr < 0)
                snprintf(sum->warning, sizeof sum->warning, "read error at byte %llu",
                         (unsigned long long)r.off);
            break;
        }
        int pr = read_payload(&r, &h);
        if (pr) {
            if (pr < 0)
                snprintf(sum->warning, sizeof sum->warning, "read error at byte %llu",
                         (unsigned long long)r.off);
            break;
        }
        struct opp_rbuf b;
        opp_rbuf_init(&b, r.buf, h.size);
        int cr = chunk(&r, h.type, &b, v, ctx);
        if (cr == 1)
            break;
        if (cr < 0) {
            snprintf(sum->warning, sizeof sum->warning,
                     "trace damaged at byte %llu: invalid %s chunk", (unsigned long long)r.off,
                     chunk_name(h.type));
            break;
        }
        r.off += OPP_CHUNK_HEADER_SIZE + h.size;
        sum->chunks++;
        sum->bytes_good = r.off;
        if (cr == 2)
            break; /* the visitor asked to stop */
    }
    if (!sum->warning[0] && !sum->complete) {
        if (still[0])
            snprintf(sum->warning, sizeof sum->warning, "%s", still);
        else
            snprintf(sum->warning, sizeof sum->warning,
                     "trace has no end marker: the collector stopped before finishing it");
    }
    if (sum->complete && r.off < r.size && !sum->warning[0])
        snprintf(sum->warning, sizeof sum->warning, "%llu bytes after the end marker ignored",
                 (unsigned long long)(r.size - r.off));
    if (!r.have_cal && !sum->warning[0]) {
        for (uint32_t i = 0; i < r.nprocs; i++)
            if (r.procs[i].known && r.procs[i].clock == OPP_CLOCK_TSC) {
                snprintf(sum->warning, sizeof sum->warning,
                         "no clock calibration in the trace: times are in TSC ticks");
                break;
            }
    }
    free(r.procs);
    free(r.buf);
    fclose(r.f);
    return rc;
}
