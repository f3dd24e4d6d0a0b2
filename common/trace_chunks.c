/* Each chunk of a trace (trace_reader.h): its payload validated (sizes,
 * fields, the process it names) before it is delivered to the visitor,
 * its ticks turned into ns. Every chunk type is read here, so the format
 * is validated in one place. */
#include "trace_reader.h"

#include <stdlib.h>
#include <string.h>

#include "info.h"
#include "ops.h"

#define MAX_PROCS (1u << 20)

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
    p.start_ns = opp_tr_to_ns(r, p.clock, start);
    if (p.start_ns > INT64_MAX || p.start_real_ns > INT64_MAX) /* ns past the year 2262 */
        BAD("trace damaged at byte %llu: process %u has a damaged clock",
            (unsigned long long)r->off, p.proc);
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
        e.begin_ns = opp_tr_to_ns(r, pi->clock, end - dur);
        e.end_ns = opp_tr_to_ns(r, pi->clock, end);
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
        n.total_ns = opp_tr_dur_ns(r, pi->clock, total);
        n.self_ns = opp_tr_dur_ns(r, pi->clock, self);
        pi->nodes++;
        if (v->snode && v->snode(ctx, proc, &n))
            return 2;
    }
    return opp_rbuf_left(b) ? -1 : 0;
}

/* SUMMARY_GPU: u32 proc, u32 count, count rows. */
static int chunk_summary_gpu(struct reader *r, struct opp_rbuf *b, const struct opp_tr_visitor *v,
                             void *ctx)
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

int opp_tr_chunk(struct reader *r, uint32_t type, struct opp_rbuf *b,
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
        uint32_t proc = opp_get_u32(b), tid = opp_get_u32(b), why = OPP_DROP_FULL, zero = 0;
        uint64_t n = opp_get_u64(b);
        if (r->sum->version >= 11 && opp_rbuf_left(b)) { /* its reason */
            why = opp_get_u32(b);
            zero = opp_get_u32(b);
        }
        /* a summary's own drops (its node bound) have no other reason */
        if (b->bad || opp_rbuf_left(b) || zero || why > OPP_DROP_WHY_MAX ||
            (why != OPP_DROP_FULL && tid == OPP_DROPPED_SUMMARY) || !known_proc(r, proc))
            return -1;
        return v->dropped && v->dropped(ctx, proc, tid, n, why) ? 2 : 0;
    }
    case OPP_CHUNK_PROCESS_END: {
        uint32_t proc = opp_get_u32(b), how = opp_get_u32(b);
        uint64_t t = opp_get_u64(b);
        struct proc_info *pi = known_proc(r, proc);
        if (b->bad || opp_rbuf_left(b) || !pi || how < OPP_END_EXITED || how > OPP_END_RUNNING)
            return -1;
        return v->process_end && v->process_end(ctx, proc, how, opp_tr_to_ns(r, pi->clock, t)) ? 2
                                                                                               : 0;
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

const char *opp_tr_chunk_name(uint32_t type)
{
    static const char *n[] = {"?",      "clock",   "process",     "funcs",         "thread",
                              "events", "dropped", "process-end", "end",           "gpu",
                              "info",   "summary", "summary-gpu", "process-status"};
    _Static_assert(sizeof n / sizeof n[0] == OPP_CHUNK_TYPE_MAX + 1, "a name per chunk type");
    return type <= OPP_CHUNK_TYPE_MAX ? n[type] : "?";
}
