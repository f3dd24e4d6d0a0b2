/* `opprof summarize TRACE -o OUT`: a full trace made into the summary trace
 * that OPPROF_MODE=summary would have recorded (common/summary.c, the
 * collector's own aggregation): constant size, the same report table.
 * Exit status: 0 done, 2 usage, 3 the trace cannot be read or OUT written. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "info.h"
#include "ops.h"
#include "summary.h"
#include "tool/cmds.h"
#include "tool/options.h"
#include "trace.h"


struct sproc {
    uint32_t proc, end_how, seen;
    uint64_t end_ns, dropped;
};

struct sz {
    struct opp_tw w;
    struct opp_sum *sum;
    struct sproc *procs;
    size_t nprocs;
    int gpu_pass, failed;
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

static int v_process(void *ctx, const struct opp_tr_process *p)
{
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
    int rc = -ENOMEM;
    if (d) {
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

static int v_event(void *ctx, const struct opp_tr_event *e)
{
    struct sz *z = ctx;
    return check(z, opp_sum_call(z->sum, e->proc, e->tid, e->fn, e->depth, e->begin_ns,
                                 e->end_ns, e->nargs, e->args,
                                 e->flags & OPP_EV_OPEN ? OPP_SUM_OPEN : 0));
}

static int v_dropped(void *ctx, uint32_t proc, uint32_t tid, uint64_t count)
{
    struct sz *z = ctx;
    struct sproc *p = proc_of(z, proc);
    if (p)
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

/* First pass: what summary mode keeps as it is (names, devices, counts);
 * second pass: the rest, added up once every call is in. */
static int v_gpu(void *ctx, uint32_t proc, const struct opp_gpu_rec *g)
{
    struct sz *z = ctx;
    int kept = opp_sum_gpu_keeps(g->type);
    if (z->gpu_pass)
        return kept ? 0 : check(z, opp_sum_gpu(z->sum, proc, g) < 0 ? -ENOMEM : 0);
    if (!kept)
        return 0;
    uint8_t mem[8 + OPP_GPU_REC_MAX];
    struct opp_wbuf b;
    opp_wbuf_init(&b, mem, sizeof mem);
    opp_put_u32(&b, 1);
    if (opp_gpu_put(&b, g))
        return 0; /* it was read: it fits */
    return check(z, opp_tw_gpu(&z->w, proc, mem, (uint32_t)b.len));
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

static int opt_max_nodes(const struct opp_option *o, const char *arg)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(arg, &end, 10);
    *(unsigned long *)o->value = v;
    if (errno || !*arg || *end || !v || v > (1ul << 28)) {
        fprintf(stderr, "opprof summarize: --max-nodes takes 1 to 268435456, not %s\n", arg);
        return 2;
    }
    return 0;
}

int cmd_summarize(int argc, char **argv)
{
    const char *out = NULL;
    unsigned long max_nodes = 1u << 20;
    const struct opp_option options[] = {
        OPP_OPT_STRING('o', "output", &out, "OUT", "the summary trace to write (not TRACE itself)"),
        OPP_OPT_CALLBACK(0, "max-nodes", &max_nodes, "N",
                         "call paths kept at most (default 1048576); calls on\n"
                         "new paths past it are counted as dropped",
                         opt_max_nodes),
        {.type = OPP_OPTION_HELP, .short_name = 'h', .long_name = "help",
         .flags = OPP_OPTION_HIDDEN},
        OPP_OPT_END(),
    };
    const struct opp_command cmd = {
        .name = "summarize",
        .usage = "usage: opprof summarize TRACE -o OUT\n"
                 "\n"
                 "Add up a full trace's calls by call path into a summary trace, as\n"
                 "OPPROF_MODE=summary records one: its size does not grow with the run's\n"
                 "length, and `opprof report OUT` prints the same table (the views that need\n"
                 "every call's time, like --step, --from/--to and the Chrome export, do not\n"
                 "take it).\n"
                 "\n",
        .col = 22,
        .options = options,
    };
    int first, parsed = opp_options_parse(&cmd, argc, argv, &first);
    if (parsed)
        return parsed == 1 ? 0 : parsed;
    if (argc - first != 1 || !out) {
        fprintf(stderr, "opprof summarize: %s\n",
                argc - first != 1 ? (argc - first ? "one trace at a time" : "which trace?")
                                  : "where to? (-o OUT)");
        opp_options_usage(&cmd, stderr);
        return 2;
    }
    const char *in = argv[first];
    if (same_file(in, out)) {
        fprintf(stderr, "opprof summarize: %s is the trace being read: name another output\n",
                out);
        return 2;
    }
    char tmp[4096], err[600];
    if (snprintf(tmp, sizeof tmp, "%s.%d.tmp", out, (int)getpid()) >= (int)sizeof tmp) {
        fprintf(stderr, "opprof summarize: output path too long\n");
        return 2;
    }
    struct sz z = {.sum = opp_sum_new((uint32_t)max_nodes)};
    if (!z.sum) {
        fprintf(stderr, "opprof summarize: out of memory\n");
        return 3;
    }
    if (opp_tw_open(&z.w, tmp, err, sizeof err)) {
        fprintf(stderr, "opprof summarize: %s\n", err);
        opp_sum_free(z.sum);
        return 3;
    }
    struct opp_tr_visitor v = {.process = v_process, .funcs = v_funcs, .info = v_info,
                               .event = v_event, .dropped = v_dropped,
                               .process_end = v_process_end, .gpu = v_gpu};
    struct opp_tr_summary sum;
    int rc = opp_trace_read(in, &v, &z, &sum, err, sizeof err);
    if (rc == 0 && !z.failed && sum.summary) {
        snprintf(err, sizeof err, "%s is a summary trace already", in);
        rc = -1;
    }
    if (rc == 0 && !z.failed) {
        z.gpu_pass = 1;
        struct opp_tr_visitor g = {.gpu = v_gpu};
        rc = opp_trace_read(in, &g, &z, &sum, err, sizeof err);
    }
    uint64_t calls = 0, dropped = 0;
    for (size_t i = 0; rc == 0 && !z.failed && i < z.nprocs; i++) {
        struct sproc *p = &z.procs[i];
        if (p->dropped)
            check(&z, opp_tw_dropped(&z.w, p->proc, 0, p->dropped));
        check(&z, opp_sum_write(z.sum, p->proc, &z.w));
        if (p->end_how)
            check(&z, opp_tw_process_end(&z.w, p->proc, p->end_how, p->end_ns));
        dropped += p->dropped;
    }
    struct opp_sum_stats st;
    opp_sum_stats(z.sum, &st);
    calls = st.calls;
    if (rc == 0 && !z.failed)
        check(&z, opp_tw_end(&z.w, calls, dropped + st.dropped, (uint32_t)z.nprocs));
    int wrc = opp_tw_close(&z.w);
    opp_sum_free(z.sum);
    free(z.procs);
    if (rc == 0 && !z.failed && !wrc && rename(tmp, out) == 0) {
        if (sum.warning[0])
            fprintf(stderr, "opprof summarize: %s: %s\n", in, sum.warning);
        fprintf(stderr, "opprof summarize: %llu calls into %s\n", (unsigned long long)calls, out);
        return 0;
    }
    unlink(tmp);
    if (rc == 0)
        snprintf(err, sizeof err, "writing %s failed: %s", out,
                 strerror(z.failed ? z.failed : wrc ? -wrc : errno));
    fprintf(stderr, "opprof summarize: %s\n", err);
    return 3;
}
