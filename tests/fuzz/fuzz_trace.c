/* Fuzz target: the trace reader (common/trace_read.c) and the report's
 * loader and analyses (report/analysis/), and the views read in one
 * pass over the file (steps, GPU statistics, the table's rows, checked
 * against the loaded model's, the call paths), on any bytes as a trace
 * file.
 * Built for libFuzzer (make fuzz) or with replay.c (make test without
 * clang); see HACKING.md, "Fuzzing". */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis/advise_pass.h"
#include "analysis/aggregate.h"
#include "analysis/callpath_tree.h"
#include "analysis/codestack_tree.h"
#include "analysis/gpu_stats.h"
#include "analysis/gpu_stream.h"
#include "analysis/model.h"
#include "analysis/pass.h"
#include "analysis/ranks.h"
#include "analysis/step_stream.h"
#include "analysis/step_times.h"
#include "analysis/table_stream.h"
#include "trace.h"
#include "oracle/loaded.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Everything the visitor reads goes here, so that each byte it is given
 * is touched (and checked by ASan) and nothing is optimised away. */
static volatile uint64_t sink;

static void touch(const char *s)
{
    uint64_t h = 0;
    for (; *s; s++)
        h = h * 31 + (unsigned char)*s;
    sink += h;
}

static int on_process(void *ctx, const struct opp_tr_process *p)
{
    touch(p->exe);
    for (uint32_t i = 0; i < p->argc; i++)
        touch(p->argv[i]);
    sink += p->proc + p->pid + p->ppid + p->parent_proc + p->clock + p->start_ns + p->start_real_ns;
    return 0;
}

static int on_funcs(void *ctx, uint32_t proc, uint32_t count, const struct opp_tr_func *f)
{
    for (uint32_t i = 0; i < count; i++) {
        touch(f[i].lib);
        touch(f[i].name);
        sink += f[i].kind + f[i].dtype;
    }
    return 0;
}

static int on_thread(void *ctx, uint32_t proc, uint32_t tid, const char *name)
{
    touch(name);
    sink += proc + tid;
    return 0;
}

static int on_event(void *ctx, const struct opp_tr_event *e)
{
    sink += e->proc + e->tid + e->fn + e->depth + e->flags + e->stack + e->begin_ns + e->end_ns;
    for (uint32_t i = 0; i < e->nargs; i++)
        sink += e->args[i];
    return 0;
}

static int on_dropped(void *ctx, uint32_t proc, uint32_t tid, uint64_t count, uint32_t why)
{
    sink += proc + tid + count + why;
    return 0;
}

static int on_process_end(void *ctx, uint32_t proc, uint32_t how, uint64_t end_ns)
{
    sink += proc + how + end_ns;
    return 0;
}

static int on_gpu(void *ctx, uint32_t proc, const struct opp_gpu_rec *g)
{
    sink += proc + g->type;
    for (uint32_t i = 0; i < g->nfields; i++)
        sink += g->f[i];
    for (uint32_t i = 0; g->type == OPP_GPU_STRING && i < g->slen; i++)
        sink += (unsigned char)g->str[i];
    return 0;
}

static int on_info(void *ctx, uint32_t proc, uint32_t count, const char *const *keys,
                   const char *const *values)
{
    for (uint32_t i = 0; i < count; i++) {
        touch(keys[i]);
        touch(values[i]);
    }
    return 0;
}

static int on_snode(void *ctx, uint32_t proc, const struct opp_tr_snode *n)
{
    sink += n->serial + n->parent + n->window + n->fn + n->count + n->open + n->total_ns +
            n->self_ns + n->self_cuda_ns + (uint64_t)n->self_mem;
    for (uint32_t i = 0; i < n->nargs; i++)
        sink += n->args[i];
    return 0;
}

static int on_sgpu(void *ctx, uint32_t proc, const struct opp_tr_sgpu *g)
{
    sink += g->window + g->type + g->name + g->kind + g->src_kind + g->dst_kind + g->device +
            g->stream + g->count + g->dur_ns + g->bytes;
    return 0;
}

static const struct opp_tr_visitor visitor = {
    .process = on_process,
    .funcs = on_funcs,
    .thread = on_thread,
    .event = on_event,
    .dropped = on_dropped,
    .process_end = on_process_end,
    .gpu = on_gpu,
    .info = on_info,
    .snode = on_snode,
    .sgpu = on_sgpu,
};

/* What `opprof report` computes from a model, without showing it: the
 * table (plain, by shape and stack, in a time window), the tree, the ranks,
 * and for a full trace the steps and GPU statistics (which refuse a
 * summary trace, as the command does). */
static void analyse(const struct opp_model *m)
{
    struct opp_agg_opts o = {0};
    struct opp_agg agg;
    if (tu_aggregate(m, &o, &agg) == 0)
        opp_agg_free(&agg);
    struct opp_agg_opts by = {
        .sort = OPP_SORT_CPU_TIME, .group_by_shape = 1, .group_by_stack = 4, .limit = 5};
    if (tu_aggregate(m, &by, &agg) == 0)
        opp_agg_free(&agg);

    struct opp_calltree ct;
    if (tu_calltree_build(m, &o, &ct) == 0) {
        char *path = NULL;
        size_t cap = 0;
        for (size_t i = 0; i < ct.n; i++)
            opp_calltree_path(m, &ct, (uint32_t)i, &path, &cap);
        free(path);
        opp_calltree_free(&ct);
    }
    struct opp_rank_table rt;
    if (opp_rank_table_build(m, &o, tu_rank_aggregates, (void *)m, &rt) == 0)
        opp_rank_table_free(&rt);
    if (m->summary)
        return;

    struct opp_agg_opts win = {.window = 1, .from_ns = 1000, .to_ns = 1000000};
    if (tu_aggregate(m, &win, &agg) == 0)
        opp_agg_free(&agg);
    struct opp_steps st;
    char what[OPP_NAME_MAX + 64];
    if (tu_steps_default(m, &o, &st, what, sizeof what) == 0)
        opp_steps_free(&st);
    struct opp_window *w;
    size_t nw;
    if (tu_profiler_windows(m, &w, &nw) == 0)
        free(w);
}

/* What the table, --tree and --window compute on the pass over the file
 * (table_stream.h): the rows, those of a time window and grouped by
 * stack, the call paths, the code frames (as the loaded model's) and
 * the schedule's windows; the rows' totals those of the loaded model m
 * (NULL: it did not load), as the report promises. */
static void table_read(const char *path, const struct opp_model *m)
{
    enum opp_stream_refused why;
    char err[512];
    struct opp_pass *p = opp_pass_open(&path, 1, &why, err, sizeof err);
    struct opp_table_stream *s = p ? opp_table_stream_over(p, err, sizeof err) : NULL;
    if (!s) {
        opp_pass_free(p);
        return;
    }
    struct opp_agg_opts o[3] = {
        {0}, {.window = 1, .from_ns = 1000, .to_ns = 1000000}, {.group_by_stack = 3}};
    for (int k = 0; k < 3; k++) {
        struct opp_agg a, b;
        if (opp_table_stream_aggregate(s, &o[k], &a, err, sizeof err) != 0)
            continue;
        sink += a.nrows;
        if (m && !tu_aggregate(m, &o[k], &b)) {
            if (a.nrows_all != b.nrows_all || a.events != b.events ||
                a.self_cpu_time_total_ns != b.self_cpu_time_total_ns ||
                a.self_cuda_time_total_ns != b.self_cuda_time_total_ns) {
                fprintf(stderr,
                        "fuzz_trace: the pass's rows are not the loaded model's (options %d): "
                        "rows %zu/%zu, events %" PRIu64 "/%" PRIu64 ", self CPU %" PRIu64
                        "/%" PRIu64 ", self CUDA %" PRIu64 "/%" PRIu64 "\n",
                        k, a.nrows_all, b.nrows_all, a.events, b.events, a.self_cpu_time_total_ns,
                        b.self_cpu_time_total_ns, a.self_cuda_time_total_ns,
                        b.self_cuda_time_total_ns);
                abort();
            }
            opp_agg_free(&b);
        }
        opp_agg_free(&a);
    }
    struct opp_calltree ct;
    if (opp_table_stream_calltree(s, &o[0], &ct, err, sizeof err) == 0) {
        sink += ct.n;
        opp_calltree_free(&ct);
    }
    struct opp_codetree t, lt;
    if (opp_pass_meta(p)->stacked_calls && opp_table_stream_codetree(s, &t, err, sizeof err) == 0) {
        if (m && tu_codetree_build(m, &lt) == 0) {
            int same = t.ct.n == lt.ct.n;
            for (size_t i = 0; same && i < t.ct.n; i++)
                same = t.ct.nodes[i].parent == lt.ct.nodes[i].parent &&
                       t.ct.nodes[i].calls == lt.ct.nodes[i].calls &&
                       t.ct.nodes[i].self_ns == lt.ct.nodes[i].self_ns &&
                       !strcmp(t.names[t.ct.nodes[i].name], lt.names[lt.ct.nodes[i].name]);
            if (!same) {
                fprintf(stderr,
                        "fuzz_trace: the pass's code frames are not the loaded model's: "
                        "%zu/%zu nodes\n",
                        t.ct.n, lt.ct.n);
                abort();
            }
            opp_codetree_free(&lt);
        }
        sink += t.ct.n;
        opp_codetree_free(&t);
    }
    struct opp_window *w;
    size_t nw;
    if (opp_table_stream_windows(s, &w, &nw, err, sizeof err) == 0) {
        sink += nw;
        free(w);
    }
    opp_table_stream_free(s);
    opp_pass_free(p);
}

/* What the views on the pass over the file compute (pass.h): the steps
 * as `opprof report --step` finds them (the program's own, then those of
 * a name), the GPU statistics as --gpu does, advise's every rule on the
 * program's own steps. */
static void pass_read(const char *path)
{
    enum opp_stream_refused why;
    char err[512], what[OPP_NAME_MAX + 64];
    struct opp_pass *p = opp_pass_open(&path, 1, &why, err, sizeof err);
    struct opp_step_stream *s = p ? opp_step_stream_over(p, err, sizeof err) : NULL;
    if (!s) {
        opp_pass_free(p);
        return;
    }
    struct opp_agg_opts o = {0};
    struct opp_steps st;
    for (int named = 0; named < 2; named++) {
        if (opp_step_stream_steps(s, &o, named ? "cudaLaunchKernel" : NULL, &st, what, sizeof what,
                                  err, sizeof err) == 0)
            sink += st.n;
        opp_steps_free(&st);
    }
    opp_step_stream_free(s);
    struct opp_gpu_stream *g = opp_gpu_stream_over(p, err, sizeof err);
    struct opp_gpu_stats gs;
    struct opp_kernel_stats *k;
    size_t nk;
    if (g && opp_gpu_stream_stats(g, &o, &gs, &k, &nk, err, sizeof err) == 0) {
        sink += gs.ndevs + gs.nstreams + nk;
        free(k);
        opp_gpu_stats_free(&gs);
    }
    opp_gpu_stream_free(g);
    struct opp_advise_pass *ap = opp_advise_pass_over(p, err, sizeof err);
    struct opp_advice adv;
    if (ap && opp_advise_pass_run(ap, &o, NULL, NULL, &adv, err, sizeof err) == 0) {
        sink += adv.fs.n;
        opp_advice_free(&adv);
    }
    opp_advise_pass_free(ap);
    opp_pass_free(p);
}

/* The reader takes a path: the input goes into one memfd, opened again by
 * its /proc path for each input. */
static int trace_fd = -1;
static char trace_path[64];

/* Each chunk's checksum made right, so that a mutated payload reaches the
 * chunk parsers instead of stopping at the CRC check (which the unit suite
 * `format` covers). Chunks are walked as the reader walks them. */
static void fix_crcs(uint8_t *p, size_t n)
{
    size_t off = sizeof(struct opp_file_header);
    while (off <= n && n - off >= OPP_CHUNK_HEADER_SIZE) {
        struct opp_chunk_header h;
        memcpy(&h, p + off, sizeof h);
        if (h.size > n - off - OPP_CHUNK_HEADER_SIZE)
            break;
        h.crc = opp_crc32(0, p + off + OPP_CHUNK_HEADER_SIZE, h.size);
        memcpy(p + off, &h, sizeof h);
        off += OPP_CHUNK_HEADER_SIZE + (size_t)h.size;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (trace_fd < 0) {
        trace_fd = memfd_create("fuzz_trace", MFD_CLOEXEC);
        if (trace_fd < 0) {
            perror("fuzz_trace: memfd_create");
            abort();
        }
        snprintf(trace_path, sizeof trace_path, "/proc/self/fd/%d", trace_fd);
        setenv("OPPROF_WAIT_MS", "0", 1);
    }
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    fix_crcs(copy, size);
    if (ftruncate(trace_fd, 0) < 0 || pwrite(trace_fd, copy, size, 0) != (ssize_t)size) {
        perror("fuzz_trace: writing the input");
        abort();
    }
    free(copy);

    struct opp_tr_summary sum;
    char err[512];
    if (opp_trace_read(trace_path, &visitor, NULL, &sum, err, sizeof err) == 0)
        sink += sum.events + sum.chunks + strlen(sum.warning);

    struct opp_model *m = tu_model_load(trace_path, err, sizeof err);
    if (m)
        analyse(m);
    table_read(trace_path, m);
    if (m)
        opp_model_free(m);
    pass_read(trace_path);
    return 0;
}
