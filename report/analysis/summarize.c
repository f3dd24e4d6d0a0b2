/* A full trace summarised into a summary trace (summarize.h). */
#include "analysis/summarize.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/loader.h"
#include "analysis/owned_ops.h"
#include "analysis/pass.h"
#include "info.h"
#include "ops.h"
#include "summary.h"
#include "trace.h"

struct sproc {
    uint32_t proc, end_how, seen;
    uint32_t exit_how, exit_code; /* PROCESS_STATUS, 0: none */
    /* its last CPU MEMORY call: thread, depth and time, if any */
    uint32_t mem_tid, mem_depth;
    uint64_t mem_begin;
    int mem_seen;
    uint64_t end_ns, dropped, interrupted; /* its records lost: buffers full, a handler's */
    uint32_t *kinds; /* of its entry points */
    uint32_t nfuncs;
};

/* A thread's latest call at each depth, to see an NVTX range recorded
 * when it ended around calls of its own depth. */
struct sthr {
    uint64_t seen; /* depths with a call */
    uint64_t end[OPP_SUM_DEPTH_MAX]; /* the last call's at each depth */
};

/* How GPU work finds its calls, and CPU frees their sizes: a first read
 * of the pass in the files' order (pass.h) stops at the first GPU op, or
 * at a process's CPU memory call on a second thread (a trace without
 * either is done in it); the ops are then joined to their calls and the
 * frees to their allocations beforehand, in a read of their own, and
 * handed over with the calls (owned_ops.h); where that cannot be,
 * through the summary's maps of ids and blocks, bounded as in summary
 * mode (opp_sum_gpu, in a read of the GPU records after the calls). */
enum how { FIRST, JOINED, BY_IDS };

struct sz {
    struct opp_pass *pass;
    struct opp_tw w;
    struct opp_sum *sum;
    struct sproc *procs;
    size_t nprocs;
    struct sthr *threads; /* by the pass's thread index */
    size_t nthreads;
    enum how how;
    int need_join; /* FIRST: the read stopped for a join */
    int mem_unordered; /* CPU memory calls out of time order in the file */
    struct opp_owned_ops *owned; /* JOINED */
    int gpu_pass, failed, ranges_enclose;
    int is_summary; /* the trace read is a summary trace */
    const char *name; /* the summary's file as err names it */
    /* the calls processes died inside: the collector writes them last; they
     * go in once the reading is done, ending where opp_open_end says */
    struct opp_tr_event *open;
    size_t nopen, open_cap;
};

static struct sproc *proc_of(struct sz *z, uint32_t proc)
{
    for (size_t i = 0; i < z->nprocs; i++)
        if (z->procs[i].proc == proc)
            return &z->procs[i];
    struct sproc *p = realloc(z->procs, (z->nprocs + 1) * sizeof *p);
    if (!p)
        return NULL;
    z->procs = p;
    p = &z->procs[z->nprocs++];
    *p = (struct sproc){.proc = proc};
    return p;
}

static int check(struct sz *z, int rc)
{
    if (rc && !z->failed)
        z->failed = rc < 0 ? -rc : ENOMEM;
    return z->failed != 0;
}

static int v_process(void *ctx, uint32_t pi, const struct opp_tr_process *p)
{
    (void)pi;
    struct sz *z = ctx;
    /* times are ns from here on: the summary's process has the monotonic clock */
    struct opp_tw_process tp = {.proc = p->proc, .pid = p->pid, .ppid = p->ppid,
                                .parent_proc = p->parent_proc, .clock = OPP_CLOCK_MONOTONIC,
                                .start_ticks = p->start_ns, .start_real_ns = p->start_real_ns,
                                .exe = p->exe, .argc = p->argc, .argv = p->argv};
    return check(z, proc_of(z, p->proc) ? opp_tw_process(&z->w, &tp) : -ENOMEM);
}

static int v_funcs(void *ctx, uint32_t proc, uint32_t count, const struct opp_tr_func *f)
{
    struct sz *z = ctx;
    struct opp_func_desc *d = calloc(count ? count : 1, sizeof *d);
    struct sproc *p = proc_of(z, proc);
    uint32_t *kinds = p ? calloc(count ? count : 1, sizeof *kinds) : NULL;
    int rc = -ENOMEM;
    if (kinds) {
        for (uint32_t i = 0; i < count; i++)
            kinds[i] = f[i].kind;
        free(p->kinds);
        p->kinds = kinds;
        p->nfuncs = count;
    }
    if (d && kinds) {
        for (uint32_t i = 0; i < count; i++)
            d[i] = (struct opp_func_desc){f[i].kind, f[i].dtype, f[i].lib, f[i].name};
        rc = opp_sum_proc(z->sum, proc, count, d);
        if (!rc)
            rc = opp_tw_funcs(&z->w, proc, count, d);
    }
    free(d);
    return check(z, rc);
}

static int v_info(void *ctx, uint32_t proc, uint32_t count, const char *const *keys,
                  const char *const *values)
{
    struct sz *z = ctx;
    uint8_t mem[8 + OPP_INFO_MAX * (8 + OPP_INFO_KEY_MAX + OPP_INFO_VALUE_MAX)];
    struct opp_wbuf b;
    opp_wbuf_init(&b, mem, sizeof mem);
    opp_put_u32(&b, count);
    for (uint32_t i = 0; i < count; i++) {
        opp_put_str(&b, keys[i], strlen(keys[i]));
        opp_put_str(&b, values[i], strlen(values[i]));
    }
    return check(z, opp_tw_info(&z->w, proc, mem, (uint32_t)b.len));
}

static struct sthr *thr_of(struct sz *z, uint32_t ti)
{
    if (opp_loader_grow_zeroed((void **)&z->threads, &z->nthreads, (size_t)ti + 1,
                               sizeof *z->threads))
        return NULL;
    return &z->threads[ti];
}

/* Whether e is an NVTX range recorded when it ended (start/end, a
 * schedule's ProfilerStep#N: the trace keeps no mark of it) around calls
 * of its depth before it, as the last of that depth (which returned
 * before it) ended after it began, where a sibling entered after it
 * ends before it begins: the loaded tree makes them its children; a
 * summary, which nests by depth, cannot, and the collector's gives such
 * a range no self time nor counts it in its parent's children's time
 * (OPP_SUM_RANGE). A range around no call of its depth cannot be told
 * from a call. 1, 0 or -ENOMEM. */
static int range_encloses(struct sz *z, const struct opp_tr_event *e, uint32_t ti)
{
    struct sthr *t = thr_of(z, ti);
    struct sproc *p = proc_of(z, e->proc);
    if (!t || !p)
        return -ENOMEM;
    uint32_t d = e->depth < OPP_SUM_DEPTH_MAX ? e->depth : OPP_SUM_DEPTH_MAX - 1;
    int around = e->fn < p->nfuncs && opp_kind_base(p->kinds[e->fn]) == OPP_OP_NVTX &&
                 e->end_ns > e->begin_ns && (t->seen >> d & 1) && t->end[d] > e->begin_ns;
    t->seen |= 1ull << d;
    t->end[d] = e->end_ns;
    return around;
}

/* A call summed (a CPU free's bytes as found in time order), and then
 * the GPU work joined to it (numbered at). */
static int sum_call(struct sz *z, const struct opp_tr_event *e, uint64_t at, unsigned flags)
{
    int64_t bytes;
    if (z->owned && opp_owned_ops_mem(z->owned, at, &bytes))
        opp_sum_given_bytes(z->sum, bytes);
    if (check(z,
              opp_sum_call(z->sum, e->proc, e->tid, e->fn, e->depth, e->begin_ns, e->end_ns,
                           e->nargs, e->args, flags | (e->flags & OPP_EV_OPEN ? OPP_SUM_OPEN : 0))))
        return 1;
    const struct opp_owned_op *x;
    while (z->owned && (x = opp_owned_ops_next(z->owned, at)))
        if (check(z, opp_sum_op_add(z->sum, x->proc, &x->op, x->at == at)))
            return 1;
    return 0;
}

/* The calls processes died inside, each ending when its process or its
 * thread last did (opp_open_end, as the pass ends them), the innermost
 * first (as they would have returned: one folds into a same-named one
 * around it). */
static void open_calls(struct sz *z)
{
    uint32_t *depth = malloc((z->nopen ? z->nopen : 1) * sizeof *depth);
    size_t *order = NULL;
    if (depth) {
        for (size_t i = 0; i < z->nopen; i++)
            depth[i] = z->open[i].depth;
        order = opp_owned_open_order(depth, z->nopen);
    }
    free(depth);
    if (!order) {
        check(z, -ENOMEM);
        return;
    }
    for (size_t k = 0; k < z->nopen && !z->failed; k++) {
        sum_call(z, &z->open[order[k]], OPP_OWNED_OPEN_AT + k, 0);
    }
    free(order);
}

/* Whether a process's CPU memory calls may be out of time order in the
 * trace, where a free would miss its allocation: on a second thread (one's
 * records can be handed over before another's), or at the time of the
 * thread's previous one and shallower (the loaded tree puts it first). */
static int memory_unordered(struct sz *z, const struct opp_tr_event *e)
{
    struct sproc *p = proc_of(z, e->proc);
    if (!p || e->fn >= p->nfuncs || opp_kind_base(p->kinds[e->fn]) != OPP_OP_MEMORY)
        return 0;
    int out = p->mem_seen && (p->mem_tid != e->tid ||
                              (p->mem_begin == e->begin_ns && e->depth < p->mem_depth));
    p->mem_seen = 1;
    p->mem_tid = e->tid, p->mem_depth = e->depth, p->mem_begin = e->begin_ns;
    return out;
}

/* A call as the files give it (x, the pass's), as the trace has it. */
static int v_read(void *ctx, const struct opp_pass_call *x)
{
    struct sz *z = ctx;
    if (z->gpu_pass)
        return 0;
    const struct opp_model *m = opp_pass_model(z->pass);
    const struct opp_thread *th = &m->threads[x->thread];
    struct opp_tr_event ev; /* its arguments past nargs left as they are: none reads them */
    ev.proc = m->procs[th->proc].proc;
    ev.tid = th->tid;
    ev.fn = x->fn;
    ev.depth = x->depth;
    ev.flags = x->flags & OPP_PASS_OPEN ? OPP_EV_OPEN : 0;
    ev.nargs = x->nargs < OPP_MAX_ARGS ? x->nargs : OPP_MAX_ARGS;
    ev.stack = x->stack;
    ev.begin_ns = x->begin;
    ev.end_ns = x->end;
    memcpy(ev.args, x->args, ev.nargs * sizeof *ev.args);
    const struct opp_tr_event *e = &ev;
    if (memory_unordered(z, e) && !z->mem_unordered) {
        z->mem_unordered = 1;
        if (z->how == FIRST)
            return z->need_join = 1;
    }
    int around = range_encloses(z, e, x->thread);
    if (around < 0)
        return check(z, -ENOMEM);
    z->ranges_enclose |= around;
    if (e->flags & OPP_EV_OPEN) {
        if (opp_loader_grow((void **)&z->open, &z->open_cap, z->nopen + 1, sizeof *z->open))
            return check(z, -ENOMEM);
        z->open[z->nopen++] = *e;
        return 0;
    }
    return sum_call(z, e, x->at, around ? OPP_SUM_RANGE : 0);
}

static int v_dropped(void *ctx, uint32_t proc, uint32_t tid, uint64_t count, uint32_t why)
{
    struct sz *z = ctx;
    struct sproc *p = proc_of(z, proc);
    if (p && why == OPP_DROP_INTERRUPTED)
        p->interrupted += count;
    else if (p)
        p->dropped += count;
    return check(z, p ? 0 : -ENOMEM);
}

static int v_process_end(void *ctx, uint32_t proc, uint32_t how, uint64_t end_ns)
{
    struct sz *z = ctx;
    struct sproc *p = proc_of(z, proc);
    if (p) {
        p->end_how = how;
        p->end_ns = end_ns;
    }
    return check(z, p ? 0 : -ENOMEM);
}

static int v_process_status(void *ctx, uint32_t proc, uint32_t how, uint32_t code)
{
    struct sz *z = ctx;
    struct sproc *p = proc_of(z, proc);
    if (p) {
        p->exit_how = how;
        p->exit_code = code;
    }
    return check(z, p ? 0 : -ENOMEM);
}

/* The calls' read: what summary mode keeps as it is (names, devices,
 * counts); BY_IDS, the external correlations too (so that an op found
 * before its own in the file still reaches its library call, as in a
 * loaded trace), and the rest in a read of its own, added up once every
 * call is in. */
static int v_gpu(void *ctx, uint32_t pi, const struct opp_gpu_rec *g)
{
    struct sz *z = ctx;
    uint32_t proc = opp_pass_model(z->pass)->procs[pi].proc;
    int kept = opp_sum_gpu_keeps(g->type), ext = g->type == OPP_GPU_EXTCORR;
    if (z->gpu_pass)
        return kept || ext ? 0 : check(z, opp_sum_gpu(z->sum, proc, g) < 0 ? -ENOMEM : 0);
    if (!kept && !ext && z->how == FIRST)
        return z->need_join = 1;
    if (ext && z->how == BY_IDS)
        return check(z, opp_sum_gpu(z->sum, proc, g) < 0 ? -ENOMEM : 0);
    if (!kept)
        return 0;
    /* kept, and seen by the summary as summary mode sees it (a profiler
     * step's string names its steps) */
    if (check(z, opp_sum_gpu(z->sum, proc, g) < 0 ? -ENOMEM : 0))
        return 1;
    uint8_t mem[8 + OPP_GPU_REC_MAX];
    struct opp_wbuf b;
    opp_wbuf_init(&b, mem, sizeof mem);
    opp_put_u32(&b, 1);
    if (opp_gpu_put(&b, g))
        return 0; /* it was read: it fits */
    return check(z, opp_tw_gpu(&z->w, proc, mem, (uint32_t)b.len));
}

/* The summary and its file, made anew; z keeps how. 0, or -1
 * with err set. */
static int start(struct sz *z, const char *out, unsigned long max_nodes, char *err,
                 size_t errlen)
{
    if (!z->sum && !(z->sum = opp_sum_new((uint32_t)max_nodes)))
        return opp_err_oom(err, errlen);
    if (z->how == JOINED)
        opp_sum_joined(z->sum);
    int rc = opp_tw_open(&z->w, out, err, errlen);
    if (rc) {
        if (z->name != out) /* out is a temporary file: named as what it becomes */
            snprintf(err, errlen, "cannot write %s: %s", z->name, strerror(-rc));
        opp_sum_free(z->sum);
        z->sum = NULL;
        return -1;
    }
    return 0;
}

/* What a read left, gone, the summary too unless keep_sum. */
static void reset(struct sz *z, int keep_sum)
{
    free(z->threads);
    z->threads = NULL;
    z->nthreads = 0;
    for (size_t i = 0; i < z->nprocs; i++)
        free(z->procs[i].kinds);
    free(z->procs);
    z->procs = NULL;
    z->nprocs = 0;
    free(z->open);
    z->open = NULL;
    z->nopen = z->open_cap = 0;
    if (!keep_sum) {
        opp_sum_free(z->sum);
        z->sum = NULL;
    }
}

/* The calls' read (and BY_IDS, the GPU records' read), in the files'
 * order. 0, or -1 with err set. */
static int read_calls(struct sz *z, char *err, size_t errlen)
{
    static const struct opp_tr_visitor rest = {.funcs = v_funcs,
                                               .info = v_info,
                                               .dropped = v_dropped,
                                               .process_end = v_process_end,
                                               .process_status = v_process_status};
    const struct opp_pass_consumer c = {
        .ctx = z, .read = v_read, .process = v_process, .record = v_gpu, .rest = &rest};
    int rc = opp_pass_run(z->pass, &c, err, errlen);
    if (z->failed || z->need_join) /* said below, or read again */
        return 0;
    if (rc == 0)
        open_calls(z);
    if (rc == 0 && !z->failed && z->owned) {
        const struct opp_owned_op *x; /* the ops of no call */
        while (!z->failed && (x = opp_owned_ops_next(z->owned, UINT64_MAX)))
            check(z, opp_sum_op_add(z->sum, x->proc, &x->op, 0));
        check(z, opp_owned_ops_error(z->owned));
    }
    if (rc == 0 && !z->failed && z->how == BY_IDS) {
        z->gpu_pass = 1;
        const struct opp_pass_consumer g = {.ctx = z, .read = v_read, .record = v_gpu};
        rc = opp_pass_run(z->pass, &g, err, errlen);
        if (z->failed)
            return 0;
    }
    return rc ? -1 : 0;
}

/* After a first read that met a GPU op, or CPU memory calls that may be
 * out of order: the ops joined to their calls and the CPU memory calls
 * ordered beforehand (where the join cannot, the ops go by ids; where
 * there is no room for its files, both), and the calls read again. */
static int again(struct sz *z, const char *out, unsigned long max_nodes, char *err, size_t errlen)
{
    opp_tw_close(&z->w);
    reset(z, 0);
    z->ranges_enclose = z->need_join = 0;
    opp_sum_free(z->sum);
    if (!(z->sum = opp_sum_new((uint32_t)max_nodes)))
        return opp_err_oom(err, errlen);
    int rc = opp_owned_ops_read(&z->owned, z->pass, z->sum, err, errlen);
    if (rc < 0)
        return -1;
    z->how = rc ? BY_IDS : JOINED; /* BY_IDS: no room for the join's files */
    if (rc) /* the blocks memory records freed were looked up in this summary */
        reset(z, 0);
    z->mem_unordered = 0; /* the read again says */
    if (start(z, out, max_nodes, err, errlen))
        return -1;
    return read_calls(z, err, errlen);
}

enum opp_summarize_rc opp_summarize(const char *in, const char *out, const char *name,
                                    unsigned long max_nodes, struct opp_summarized *res, char *err,
                                    size_t errlen)
{
    memset(res, 0, sizeof *res);
    struct sz z = {.how = FIRST, .name = name ? name : out};
    if (start(&z, out, max_nodes, err, errlen))
        return OPP_SUMMARIZE_FAILED;
    enum opp_stream_refused why;
    int rc = -1;
    if (!(z.pass = opp_pass_open(&in, 1, &why, err, errlen))) {
        if (why == OPP_STREAM_SUMMARY_FILE) {
            snprintf(err, errlen, "%s is a summary trace already", in);
            z.is_summary = 1;
        }
    } else if (!(rc = read_calls(&z, err, errlen)) && !z.failed && z.need_join) {
        rc = again(&z, out, max_nodes, err, errlen);
    }
    uint64_t dropped = 0;
    for (size_t i = 0; rc == 0 && !z.failed && i < z.nprocs; i++) {
        struct sproc *p = &z.procs[i];
        if (p->dropped)
            check(&z, opp_tw_dropped(&z.w, p->proc, 0, p->dropped, OPP_DROP_FULL));
        if (p->interrupted)
            check(&z, opp_tw_dropped(&z.w, p->proc, 0, p->interrupted, OPP_DROP_INTERRUPTED));
        check(&z, opp_sum_write(z.sum, p->proc, &z.w));
        if (p->end_how)
            check(&z, opp_tw_process_end(&z.w, p->proc, p->end_how, p->end_ns));
        if (p->exit_how)
            check(&z, opp_tw_process_status(&z.w, p->proc, p->exit_how, p->exit_code));
        dropped += p->dropped + p->interrupted;
    }
    struct opp_sum_stats st = {0};
    if (z.sum)
        opp_sum_stats(z.sum, &st);
    res->calls = st.calls;
    res->dropped = st.dropped;
    const struct opp_tr_summary *sum = z.pass ? &opp_pass_model(z.pass)->sum : NULL;
    res->complete = sum && sum->complete;
    res->ranges_enclose = z.ranges_enclose;
    res->lost = st.lost;
    res->frees_unordered = z.mem_unordered && !z.owned;
    size_t nprocs = z.nprocs;
    opp_owned_ops_free(z.owned);
    reset(&z, 1);
    if (rc == 0 && !z.failed)
        check(&z, opp_tw_end(&z.w, st.calls, dropped + st.dropped, (uint32_t)nprocs));
    int wrc = z.w.fd >= 0 ? opp_tw_close(&z.w) : 0;
    opp_sum_free(z.sum);
    if (rc == 0 && !z.failed && !wrc) {
        snprintf(res->warning, sizeof res->warning, "%s", sum->warning);
        opp_pass_free(z.pass);
        return OPP_SUMMARIZED;
    }
    opp_pass_free(z.pass);
    unlink(out);
    if (rc != 0)
        return z.is_summary ? OPP_SUMMARIZE_IS_SUMMARY : OPP_SUMMARIZE_FAILED;
    snprintf(err, errlen, "cannot write %s: %s", z.name,
             strerror(z.failed ? z.failed
                      : wrc    ? -wrc
                               : errno));
    return OPP_SUMMARIZE_OUT_FAILED;
}
