/* `opprof export FORMAT TRACE... [-o OUT]`: a trace for other tools (several
 * traces, one per host, merged into one), written to OUT as tool/outfile.h
 * says: a failed export never leaves half a file or damages one, and a
 * device, FIFO or symbolic link is written, never replaced. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/advise_pass.h"
#include "analysis/codestack_tree.h"
#include "analysis/gpu_stream.h"
#include "analysis/mem_stream.h"
#include "analysis/model.h"
#include "analysis/pass.h"
#include "analysis/step_times.h"
#include "analysis/table_stream.h"
#include "exports/export.h"
#include "tool/cmds.h"
#include "tool/options.h"
#include "tool/outfile.h"
#include "views/fmt.h"
#include "views/say.h"

#define PREFIX "opprof export: "

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && !strcmp(s + n - t, tail);
}

/* The traces' names for a title or a message: "a.trace" or
 * "a.trace, b.trace" (file names only; cut short past cap). */
static const char *names_of(const char *const *traces, size_t n, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n && len < cap; i++) {
        const char *base = strrchr(traces[i], '/');
        int w = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", base ? base + 1 : traces[i]);
        len += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

/* The end of an export of m's trace: on failure why (unless said
 * already), else the trace's own warning. */
static int export_done(const struct opp_model *m, int rc, char *err, size_t errlen)
{
    if (rc && !err[0])
        snprintf(err, errlen, "cannot write the export: %s", strerror(errno ? errno : ENOMEM));
    else if (!rc && m->sum.warning[0])
        snprintf(err, errlen, "%s", m->sum.warning);
    return rc;
}

/* What the stacks of m cannot be made of (code frames asked, frames > 0,
 * where it has none, code 0; the CUDA metric without GPU work: not a file
 * of zeros): 0, -1 or OPP_EXPORT_NOT_HELD with err said. */
static int tree_refused(const struct opp_model *m, int frames, int code, int cuda, char *err,
                        size_t errlen)
{
    if (frames > 0 && !code) {
        snprintf(err, errlen, "the trace has no code stacks (record with OPPROF_STACKS=N)");
        return OPP_EXPORT_NOT_HELD; /* as a metric or device it does not hold */
    }
    if (cuda && !opp_model_has_gpu(m)) {
        snprintf(err, errlen,
                 "--metric self_cuda_time_total: the trace has no GPU work (kernels, copies, "
                 "sets)");
        return OPP_EXPORT_NOT_HELD;
    }
    return 0;
}

/* The operator call paths or code frames of traces as pass p merges
 * them (table_stream.h), written folded or as a flame graph titled by
 * label and the metric: 0, -1 (err: no room in TMPDIR for the GPU join's
 * sorts included) or OPP_EXPORT_NOT_HELD. */
static int export_tree_read(struct opp_pass *p, int svg, int cuda, int frames, const char *label,
                            FILE *f, char *err, size_t errlen)
{
    struct opp_agg_opts all = {0};
    struct opp_codetree t = {0}; /* its ct the operator call paths' too */
    const struct opp_model *m = opp_pass_model(p);
    struct opp_table_stream *st = opp_table_stream_over(p, err, errlen);
    int code = frames && opp_pass_meta(p)->stacked_calls;
    int rc = st ? tree_refused(m, frames, code, cuda, err, errlen) : -1;
    if (!rc)
        rc = code ? opp_table_stream_codetree(st, &t, err, errlen)
                  : opp_table_stream_calltree(st, &all, &t.ct, err, errlen);
    if (!rc) {
        /* the exporters name nodes through the model's string table */
        struct opp_model names = *m;
        if (code)
            names.strs = t.names, names.nstrs = t.nnames;
        char title[300];
        snprintf(title, sizeof title, "%s: %s%s", label, cuda ? "self CUDA time" : "self CPU time",
                 code ? " by code frame" : "");
        rc = svg ? opp_export_flamegraph(&names, &t.ct, cuda, title, f)
                 : opp_export_folded(&names, &t.ct, cuda, f);
        rc = export_done(m, rc, err, errlen) ? -1 : 0;
        opp_codetree_free(&t);
    }
    opp_table_stream_free(st);
    return rc == OPP_EXPORT_NOT_HELD ? rc : rc ? -1 : 0;
}

/* frames: 0 operator call paths, 1 code frames, -1 code frames when the
 * trace has code stacks (OPPROF_STACKS), else operator call paths. The
 * pass's (p), else a summary trace's (its nodes as counted calls: no
 * code stacks). */
static int export_tree(struct opp_pass *p, const char *const *traces, size_t n, int svg, int cuda,
                       int frames, FILE *f, char *err, size_t errlen)
{
    char label[256];
    struct opp_pass *summary = p ? NULL : opp_pass_open_summary(traces, n, err, errlen);
    if (!p && !summary)
        return -1;
    int rc = export_tree_read(p ? p : summary, svg, cuda, frames,
                              names_of(traces, n, label, sizeof label), f, err, errlen);
    opp_pass_free(summary);
    return rc;
}

/* What the HTML page shows (export.h), and what holds it. */
struct html_parts {
    struct opp_html_page pg;
    struct opp_pass *pass;
    struct opp_advise_pass *ap;
    struct opp_gpu_stream *gpu;
    struct opp_advice adv;
    struct opp_agg agg;
    struct opp_calltree ct;
    struct opp_gpu_stats gs;
    uint8_t *busy;
    int have_adv, have_agg;
};

static void html_parts_free(struct html_parts *h)
{
    if (h->have_adv)
        opp_advice_free(&h->adv);
    if (h->have_agg)
        opp_agg_free(&h->agg);
    opp_calltree_free(&h->ct);
    opp_gpu_stats_free(&h->gs);
    free(h->busy);
    opp_mem_stream_free(h->pg.ms);
    opp_gpu_stream_free(h->gpu);
    opp_advise_pass_free(h->ap);
}

/* The HTML page of the traces, each part read through pass p. */
static int export_html(struct opp_pass *p, const char *const *traces, size_t n, FILE *f, char *err,
                       size_t errlen)
{
    struct html_parts h = {.pass = p};
    if (!(h.ap = opp_advise_pass_over(h.pass, err, errlen))) {
        html_parts_free(&h);
        return -1;
    }
    const struct opp_model *m = opp_pass_model(h.pass);
    struct opp_table_stream *ts = opp_advise_pass_table(h.ap);
    struct opp_agg_opts all = {0}, o = {0};
    /* every part read over the advice's pass: its first read made once;
     * advise's findings first */
    opp_steps_main_process(m, &o, 1); /* the main process's steps */
    int rc = opp_advise_pass_run(h.ap, &o, NULL, NULL, &h.adv, err, errlen) ? -1 : 0;
    h.have_adv = !rc;
    const struct opp_table_q q[] = {{&all, &h.agg, NULL}, {&all, NULL, &h.ct}};
    if (!rc && (rc = opp_table_stream_ask(ts, q, 2, err, errlen)) == 0)
        h.have_agg = 1;
    if (!rc && opp_model_has_gpu(m)) {
        if (!(h.gpu = opp_gpu_stream_over(h.pass, err, errlen)))
            rc = -1;
        if (!rc && !(rc = opp_gpu_stream_stats(h.gpu, &all, &h.gs, NULL, NULL, err, errlen)))
            rc = opp_gpu_stream_busy(h.gpu, &h.gs, OPP_HTML_BAR_PX, &h.busy, &h.pg.gpu_ops, err,
                                     errlen);
    }
    if (!rc && !(h.pg.ms = opp_mem_stream_over(h.pass, err, errlen)))
        rc = -1;
    if (!rc && opp_mem_stream_read(h.pg.ms, 1, 1, err, errlen))
        rc = -1;
    if (!rc) {
        char names[256];
        h.pg.m = m;
        h.pg.advice = &h.adv;
        h.pg.agg = &h.agg;
        h.pg.ct = &h.ct;
        h.pg.gs = &h.gs;
        h.pg.busy = h.busy;
        rc = export_done(m, opp_export_html(&h.pg, names_of(traces, n, names, sizeof names), f),
                         err, errlen);
    } else if (rc > 0) { /* the pass cannot read the traces: err says why */
        rc = -1;
    }
    html_parts_free(&h);
    return rc;
}

static int export_memory(struct opp_pass *p, const char *const *traces, size_t n, long long device,
                         int svg, FILE *f, char *err, size_t errlen)
{
    /* the series of device, every device's and, when it is the one asked
     * or no device has one, the CPU's; with the operators that allocated
     * most for the plot */
    struct opp_mem_stream *ms = opp_mem_stream_over(p, err, errlen);
    int cpu =
        device == OPP_MEM_CPU || (device == OPP_MEM_FIRST && !opp_pass_model(p)->gpu.nmemseries);
    if (!ms || opp_mem_stream_read(ms, cpu, svg, err, errlen)) {
        opp_mem_stream_free(ms);
        return -1;
    }
    struct opp_memline l;
    int rc;
    /* one trace: its path, as before; several: their file names */
    char names[256];
    const char *which = n == 1 ? traces[0] : names_of(traces, n, names, sizeof names);
    if (!opp_mem_stream_find(ms, device, &l)) {
        /* --device named a series the traces do not hold; none at all is no usage error */
        rc = device == OPP_MEM_FIRST ? -1 : OPP_EXPORT_NOT_HELD;
        if (device == OPP_MEM_CPU)
            snprintf(err, errlen, "%s %s no CPU memory records (PyTorch's CPU allocator)", which,
                     n == 1 ? "has" : "have");
        else if (device < 0)
            snprintf(err, errlen, "%s %s no memory records", which, n == 1 ? "has" : "have");
        else
            snprintf(err, errlen, "%s %s no memory records of device %lld", which,
                     n == 1 ? "has" : "have", device);
    } else {
        rc = svg ? opp_export_memory_svg(ms, &l, names_of(traces, n, names, sizeof names), f)
                 : opp_export_memory_json(ms, &l, f);
    }
    rc = export_done(opp_pass_model(p), rc, err, errlen);
    opp_mem_stream_free(ms);
    return rc;
}

/* path with a trailing '/' made a directory, its parents too (as
 * tensorboard_trace_handler makes its dir). 0, or -1 (said). */
static int make_dir(const char *path)
{
    char p[4096];
    size_t len = strlen(path);
    if (!len || path[len - 1] != '/')
        return 0;
    if (len >= sizeof p) {
        opp_say(PREFIX "output path too long");
        return -1;
    }
    memcpy(p, path, len + 1);
    for (size_t i = 1; i < len; i++) {
        if (p[i] != '/')
            continue;
        p[i] = 0;
        int rc = mkdir(p, 0777);
        p[i] = '/';
        if (rc && errno != EEXIST) {
            opp_say(PREFIX "cannot make the directory %.*s: %s", (int)i, p, strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* The process whose host, pid and clock name a window's file: the first
 * of rank (-1: any), else the first. */
static const struct opp_process *named_process(const struct opp_model *m, int64_t rank)
{
    for (size_t i = 0; rank >= 0 && i < m->nprocs; i++)
        if (m->procs[i].rank == rank)
            return &m->procs[i];
    return &m->procs[0];
}

/* An output that is a directory (or ends in '/': then made) gets
 * tensorboard_trace_handler's file name there, <host>_<pid>.<ns since the
 * epoch of the start>.pt.trace.json, as torch 2 names it (nanoseconds, so
 * that no two windows, or ranks, share a name; the host as one path
 * component: it comes from the trace), of the first process (of --rank's)
 * and the time from_ns (0: its start), said in a line with what (a window,
 * or the whole trace). 0, or 1 (said). */
static int chrome_dir_name(const struct opp_model *m, const struct opp_chrome_opts *co,
                           uint64_t from_ns, const char *what, const char **out_path, char *named,
                           size_t cap)
{
    if (!*out_path)
        return 0;
    if (make_dir(*out_path))
        return 1;
    struct stat st;
    if (stat(*out_path, &st) || !S_ISDIR(st.st_mode) || !m->nprocs)
        return 0;
    const struct opp_process *p = named_process(m, co->rank);
    const char *host = opp_process_info(p, "host");
    char file_host[128]; /* the traced program's: one path component */
    opp_path_component(file_host, sizeof file_host, host ? host : "localhost");
    uint64_t real = p->start_real_ns + (from_ns ? from_ns - p->start_ns : 0);
    int dir_len = (int)strlen(*out_path); /* "DIR/": no "DIR//NAME" */
    while (dir_len > 1 && (*out_path)[dir_len - 1] == '/')
        dir_len--;
    if (snprintf(named, cap, "%.*s/%s_%u.%llu.pt.trace.json", dir_len, *out_path, file_host, p->pid,
                 (unsigned long long)real) >= (int)cap) {
        opp_say(PREFIX "output path too long");
        return 1;
    }
    *out_path = named;
    opp_say(PREFIX "%s -> %s", what, named);
    return 0;
}

/* --window K: the time range of the K-th window a schedule recorded (a
 * read of the pass), the output named as chrome_dir_name says. 0 (a
 * summary trace: the export refuses it), 2 when the traces hold no window
 * K, or 1 (said). */
static int chrome_window(struct opp_pass *pass, const char *const *traces, size_t n,
                         unsigned long k, struct opp_chrome_opts *co, const char **out_path,
                         char *named, size_t cap)
{
    char err[600], names[256];
    struct opp_table_stream *ts = opp_table_stream_over(pass, err, sizeof err);
    if (!ts) {
        opp_say(PREFIX "%s", err);
        return 1;
    }
    struct opp_window *w = NULL;
    size_t nw;
    int rc = 1;
    if (opp_table_stream_windows(ts, &w, &nw, err, sizeof err)) {
        opp_say(PREFIX "%s", err);
    } else if (k > nw) {
        rc = 2;
        opp_say(PREFIX "%s %s %zu recorded window%s (a schedule's runs of "
                       "ProfilerStep#N), not %lu",
                n == 1 ? traces[0] : names_of(traces, n, names, sizeof names),
                n == 1 ? "has" : "have", nw, nw == 1 ? "" : "s", k);
    } else {
        co->from_ns = w[k - 1].begin_ns;
        co->to_ns = w[k - 1].end_ns + 1;
        char what[40];
        snprintf(what, sizeof what, "window %lu", k);
        rc = chrome_dir_name(opp_pass_model(pass), co, co->from_ns, what, out_path, named, cap);
    }
    free(w);
    opp_table_stream_free(ts);
    return rc;
}

/* ---- the formats: one line each, the name and what writes it ---- */

/* What the writers take from the command line, and the pass over the
 * traces the command opened (NULL: opp_pass_open refused them, why, the
 * path of a summary trace or the reason in refusal). */
struct export_req {
    struct opp_pass *pass;
    enum opp_stream_refused why;
    const char *refusal;
    const char *const *traces;
    size_t n;
    const struct opp_chrome_opts *co; /* chrome: --rank, --window */
    long long device;                 /* memory: --device, OPP_MEM_FIRST, OPP_MEM_CPU */
    int cuda, frames;                 /* stacks, flamegraph: --metric, --frames */
    int svg;                          /* OUT ends in .svg */
    const char *path;                 /* own_file: the file to make, NULL: standard output */
};

/* The pass over the traces into r (NULL and r->why when refused: a
 * summary trace, or one that cannot be read in one pass, which the
 * writers say as each needs). 0, or -1 on error (refusal says why). */
static int open_pass(struct export_req *r, char *refusal, size_t cap)
{
    r->pass = opp_pass_open(r->traces, r->n, &r->why, refusal, cap);
    return r->pass || r->why != OPP_STREAM_ERROR ? 0 : -1;
}

/* Why a writer cannot read traces the pass refused (what: the export; a
 * summary trace said as report and advise say it; one_pass: a trace the
 * pass cannot read said as what needs every call): -1, err said. */
static int refused(const struct export_req *r, const char *what, int one_pass, char *err,
                   size_t errlen)
{
    char names[256];
    if (r->why == OPP_STREAM_SUMMARY_FILE)
        opp_summary_refusal(r->refusal, what, err, errlen);
    else if (r->why == OPP_STREAM_CANNOT && one_pass)
        snprintf(err, errlen, "%s cannot be read in one pass (%s), which %s needs",
                 r->n == 1 ? r->traces[0] : names_of(r->traces, r->n, names, sizeof names),
                 r->refusal, what);
    else
        snprintf(err, errlen, "%s", r->refusal);
    return -1;
}

static int write_chrome(const struct export_req *r, FILE *f, char *err, size_t errlen)
{
    if (r->pass)
        return opp_export_chrome(r->pass, r->traces, r->n, r->co, f, err, errlen);
    return refused(r, "the Chrome export", 0, err, errlen);
}

static int write_stacks(const struct export_req *r, FILE *f, char *err, size_t errlen)
{
    if (!r->pass && r->why != OPP_STREAM_SUMMARY_FILE)
        return snprintf(err, errlen, "%s", r->refusal), -1;
    return export_tree(r->pass, r->traces, r->n, 0, r->cuda, r->frames, f, err, errlen);
}

static int write_flamegraph(const struct export_req *r, FILE *f, char *err, size_t errlen)
{
    if (!r->pass && r->why != OPP_STREAM_SUMMARY_FILE)
        return snprintf(err, errlen, "%s", r->refusal), -1;
    return export_tree(r->pass, r->traces, r->n, 1, r->cuda, r->frames, f, err, errlen);
}

static int write_memory(const struct export_req *r, FILE *f, char *err, size_t errlen)
{
    if (!r->pass)
        return refused(r, "export memory (its timeline)", 1, err, errlen);
    return export_memory(r->pass, r->traces, r->n, r->device, r->svg, f, err, errlen);
}

static int write_html(const struct export_req *r, FILE *f, char *err, size_t errlen)
{
    if (!r->pass)
        return refused(r, "export html (its timeline)", 1, err, errlen);
    return export_html(r->pass, r->traces, r->n, f, err, errlen);
}

/* SQLite writes its own file (the temporary one, empty: a new database to
 * SQLite; renamed or copied into OUT when complete): not through f. It is
 * there all along, as every export's, for a signal's handler to remove. */
static int write_sqlite(const struct export_req *r, FILE *f, char *err, size_t errlen)
{
    (void)f;
    if (r->pass)
        return opp_export_sqlite(r->pass, r->path, err, errlen);
    return refused(r, "export sqlite", 0, err, errlen);
}

/* The options only some formats take. */
enum takes { TAKES_METRIC = 1, TAKES_FRAMES = 2, TAKES_DEVICE = 4, TAKES_WINDOW = 8 };

static const struct export_format {
    const char *name;
    int (*write)(const struct export_req *r, FILE *f, char *err, size_t errlen);
    unsigned takes; /* enum takes */
    int own_file;   /* writes its own file at req->path, not through a FILE: needs -o */
} formats[] = {
    {"chrome", write_chrome, TAKES_WINDOW, 0},
    {"stacks", write_stacks, TAKES_METRIC | TAKES_FRAMES, 0},
    {"flamegraph", write_flamegraph, TAKES_METRIC | TAKES_FRAMES, 0},
    {"memory", write_memory, TAKES_DEVICE, 0},
    {"html", write_html, 0, 0},
    {"sqlite", write_sqlite, 0, 1},
};

/* An option given that fmt does not take (given: its enum takes bit, 0
 * when not given), said with the formats that do: 2; else 0. */
static int option_fits(const struct export_format *fmt, unsigned given, const char *option)
{
    if (!given || (fmt->takes & given))
        return 0;
    char with[80] = "";
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
        if (formats[i].takes & given)
            snprintf(with + strlen(with), sizeof with - strlen(with), "%s%s",
                     with[0] ? " and " : "", formats[i].name);
    opp_say(PREFIX "%s goes with %s, not %s", option, with, fmt->name);
    return 2;
}

/* --device N|cpu (torch's device "cpu"). */
static int opt_device(const struct opp_option *o, const char *arg)
{
    double v = OPP_MEM_CPU;
    if (strcmp(arg, "cpu") && opp_option_number(arg, 0, INT32_MAX, 1, &v)) {
        opp_say(PREFIX "--device wants a number or cpu, not '%s'", arg);
        return 2;
    }
    *(long long *)o->value = (long long)v;
    return 0;
}

static int opt_metric(const struct opp_option *o, const char *arg)
{
    if (!strcmp(arg, "self_cuda_time_total")) {
        *(int *)o->value = 1;
    } else if (!strcmp(arg, "self_cpu_time_total")) {
        *(int *)o->value = 0;
    } else {
        opp_say(PREFIX "unknown metric '%s' (self_cpu_time_total or "
                       "self_cuda_time_total)",
                arg);
        return 2;
    }
    return 0;
}

static int opt_frames(const struct opp_option *o, const char *arg)
{
    if (strcmp(arg, "code") && strcmp(arg, "ops")) {
        opp_say(PREFIX "unknown --frames '%s' (code or ops)", arg);
        return 2;
    }
    *(int *)o->value = !strcmp(arg, "code");
    return 0;
}

/* The short names of --frames, --device, --window and --rank work but are
 * not shown; -o and -h line up with the formats above them. */
#define UNLISTED(s, l, v, a, h, f)                                                                 \
    {.type = OPP_OPTION_CALLBACK, .short_name = (s), .long_name = (l), .value = (v), .argh = (a),  \
     .help = (h), .fn = (f), .flags = OPP_OPTION_UNLISTED_SHORT}
/* --window and --rank: a number from lo to INT32_MAX, what a refusal
 * says it wants. */
#define UNLISTED_NUMBER(s, l, v, g, a, h, lo_, w)                                                  \
    {                                                                                              \
        .type = OPP_OPTION_NUMBER, .short_name = (s), .long_name = (l), .value = (v),              \
        .given = (g), .argh = (a), .help = (h), .kind = OPP_NUMBER_U32, .lo = (lo_),               \
        .hi = INT32_MAX, .wants = (w), .flags = OPP_OPTION_UNLISTED_SHORT                          \
    }

int cmd_export(int argc, char **argv)
{
    const char *out_path = NULL;
    int cuda = -1, frames = -1; /* -1: not given */
    long long device = OPP_MEM_FIRST;
    uint32_t rank = 0, window = 0;
    int rank_given = 0;
    const struct opp_option options[] = {
        OPP_OPT_CALLBACK('m', "metric", &cuda, "METRIC",
                         "self_cpu_time_total (default) or self_cuda_time_total", opt_metric),
        UNLISTED('F', "frames", &frames, "code|ops",
                 "stacks, flamegraph: code frames (a trace recorded with\n"
                 "OPPROF_STACKS=N: the program's functions, outermost first, then\n"
                 "the operator; the default for such a trace) or operator call paths",
                 opt_frames),
        UNLISTED('d', "device", &device, "N|cpu",
                 "memory: the device, or cpu: PyTorch's CPU allocator (default:\n"
                 "the first device with allocations, else cpu)",
                 opt_device),
        UNLISTED_NUMBER('w', "window", &window, NULL, "K",
                        "chrome: only the K-th window a schedule recorded (a run of\n"
                        "ProfilerStep#N, numbered over all the traces' steps, as\n"
                        "report --window does); when OUT is a directory (made when it\n"
                        "ends in /), the file is named as tensorboard_trace_handler\n"
                        "names it: HOST_PID.NS.pt.trace.json (NS: the window's start)",
                        1, "a window number from 1"),
        UNLISTED_NUMBER('r', "rank", &rank, &rank_given, "N",
                        "chrome: only the processes of rank N (a rank variable, as\n"
                        "report --by-rank) of every trace, with distributedInfo,\n"
                        "one file per rank",
                        0, "a rank number from 0"),
        {.type = OPP_OPTION_STRING,
         .short_name = 'o',
         .long_name = "output",
         .value = &out_path,
         .argh = "OUT",
         .help = "the file to write (a name ending in .gz is gzip-compressed);\n"
                 "chrome: a directory (made when OUT ends in /) gets\n"
                 "HOST_PID.NS.pt.trace.json, NS the first process's start;\n"
                 "default: standard output",
         .col = 16},
        {.type = OPP_OPTION_HELP,
         .short_name = 'h',
         .long_name = "help",
         .help = "show this help",
         .col = 16},
        OPP_OPT_END(),
    };
    const struct opp_command cmd = {
        .name = "export",
        .usage =
            "usage: opprof export chrome TRACE... [-o OUT.json|OUT.json.gz]\n"
            "       opprof export stacks TRACE... [--metric METRIC] [--frames code|ops] "
            "[-o OUT.folded]\n"
            "       opprof export flamegraph TRACE... [--metric METRIC] [--frames code|ops] "
            "[-o OUT.svg]\n"
            "       opprof export memory TRACE... [--device N|cpu] [-o OUT.json|OUT.svg]\n"
            "       opprof export html TRACE... [-o OUT.html]\n"
            "       opprof export sqlite TRACE... -o OUT.sqlite\n"
            "\n"
            "Write a trace in another tool's format. Several traces (one per host) make one\n"
            "export, merged as `opprof report A B` merges them: each trace's times moved onto\n"
            "the first's clock through its first process's (wall clock, monotonic) start.\n"
            "\n"
            "  chrome        Chrome trace JSON as torch.profiler (Kineto) writes it: opens in\n"
            "                Perfetto UI, chrome://tracing and HTA. CPU calls on the process's\n"
            "                pid/tid, GPU work on pid = device, tid = stream, launch->kernel\n"
            "                arrows, times in us from the trace's first event. Merged: a\n"
            "                pid (or GPU) an earlier trace has is shown as pid + 4194304,\n"
            "                process names say the host\n"
            "  stacks        folded stacks as torch's export_stacks writes them (flamegraph.pl,\n"
            "                speedscope, inferno): the operator call paths, outermost first,\n"
            "                each with its summed self time in integer microseconds\n"
            "  flamegraph    the same as a self-contained SVG flame graph (hover a frame for\n"
            "                its name, time and share)\n"
            "  memory        device memory allocated over time, or with --device cpu\n"
            "                PyTorch's CPU allocations, as torch's export_memory_timeline\n"
            "                writes it ([times in us, [bytes] per time]), or, for an OUT\n"
            "                ending in .svg, a plot with the peak marked and the operators\n"
            "                that allocated most\n"
            "  html          one self-contained page: opprof advise's findings, the table,\n"
            "                the call tree, the flame graph, each GPU stream's busy and idle\n"
            "                time, each device's and the CPU's memory plot\n"
            "  sqlite        an SQLite database (docs/SQLITE.md): processes, threads, every\n"
            "                CPU operator with its parent, shapes, FLOPs, status and\n"
            "                correlation ids, GPU operations, memory records and steps\n",
        .col = 20,
        .options = options,
    };
    int first, parsed = opp_options_parse(&cmd, argc, argv, &first);
    if (parsed)
        return parsed == 1 ? 0 : parsed;
    if (argc - first < 2) { /* one operand: a trace given without its format, or a format */
        int is_format = 0;
        for (size_t i = 0; argc - first && i < sizeof formats / sizeof *formats; i++)
            is_format |= !strcmp(argv[first], formats[i].name);
        opp_say(PREFIX "%s (usage: opprof export chrome|stacks|flamegraph|memory|html|sqlite "
                       "TRACE... [-o OUT])",
                !(argc - first) ? "which format and trace?"
                : is_format     ? "which trace?"
                                : "which format?");
        return 2;
    }
    const char *format = argv[first];
    const char *const *traces = (const char *const *)argv + first + 1;
    size_t ntraces = (size_t)(argc - optind - 1);
    if (opp_option_traces_merged("export", traces, ntraces))
        return 2;
    const struct export_format *fmt = NULL;
    for (size_t i = 0; i < sizeof formats / sizeof *formats && !fmt; i++)
        if (!strcmp(format, formats[i].name))
            fmt = &formats[i];
    if (!fmt) {
        char known[128] = "";
        for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "",
                     formats[i].name);
        opp_say(PREFIX "unknown format '%s' (known: %s)", format, known);
        return 2;
    }
    if (option_fits(fmt, cuda >= 0 ? TAKES_METRIC : 0, "--metric") ||
        option_fits(fmt, frames >= 0 ? TAKES_FRAMES : 0, "--frames") ||
        option_fits(fmt, device != OPP_MEM_FIRST ? TAKES_DEVICE : 0, "--device") ||
        option_fits(fmt, window ? TAKES_WINDOW : 0, "--window") ||
        option_fits(fmt, rank_given ? TAKES_WINDOW : 0, "--rank"))
        return 2;
    cuda = cuda > 0;
    if (out_path && !strcmp(out_path, "-"))
        out_path = NULL;
    if (fmt->own_file && !out_path) {
        opp_say(PREFIX "%s needs an output file: -o OUT.%s", fmt->name, fmt->name);
        return 2;
    }
    struct opp_chrome_opts co = {.rank = rank_given ? (int64_t)rank : -1};
    struct export_req req = {.traces = traces,
                             .n = ntraces,
                             .co = &co,
                             .device = device,
                             .cuda = cuda,
                             .frames = frames};
    char named[4096], refusal[600] = "", err[600] = "";
    req.refusal = refusal;
    /* the one pass every writer reads: first for --window, which names the
     * output (chrome's alone): traces it refuses, said before any output */
    struct stat ost;
    int to_dir = (fmt->takes & TAKES_WINDOW) && out_path &&
                 (ends_with(out_path, "/") || (!stat(out_path, &ost) && S_ISDIR(ost.st_mode)));
    if (window || to_dir) {
        if (open_pass(&req, refusal, sizeof refusal) || !req.pass) {
            refused(&req, "the Chrome export", 0, err, sizeof err);
            opp_say(PREFIX "%s", err);
            return 1;
        }
        /* a rank the traces do not hold names no file: refused first */
        char what[40] = "the whole trace";
        int wrc = co.rank >= 0 ? opp_export_chrome_rank_held(opp_pass_model(req.pass), traces,
                                                             ntraces, co.rank, err, sizeof err)
                               : 0;
        if (wrc) {
            opp_say(PREFIX "%s", err);
            wrc = 2;
        } else if (window) {
            wrc = chrome_window(req.pass, traces, ntraces, window, &co, &out_path, named,
                                sizeof named);
        } else {
            if (co.rank >= 0)
                snprintf(what, sizeof what, "rank %" PRId64, co.rank);
            wrc = chrome_dir_name(opp_pass_model(req.pass), &co, 0, what, &out_path, named,
                                  sizeof named);
        }
        if (wrc) {
            opp_pass_free(req.pass);
            return wrc;
        }
    }
    struct opp_out out;
    int orc = fmt->own_file ? opp_out_open_path(&out, out_path, traces, ntraces, err, sizeof err)
                            : opp_out_open(&out, out_path, out_path && ends_with(out_path, ".gz"),
                                           traces, ntraces, err, sizeof err);
    if (orc) {
        opp_say(PREFIX "%s", err);
        opp_pass_free(req.pass);
        return orc == -2 ? 2 : 1;
    }
    req.svg = out_path && ends_with(out_path, ".svg");
    req.path = out.path;
    int rc = req.pass ? 0 : open_pass(&req, refusal, sizeof refusal);
    if (!rc)
        rc = fmt->write(&req, out.f, err, sizeof err);
    else
        snprintf(err, sizeof err, "%s", refusal);
    opp_pass_free(req.pass);
    if (opp_out_close(&out, !rc, err, sizeof err) && rc != OPP_EXPORT_NOT_HELD)
        rc = -1;
    if (err[0])
        opp_say(PREFIX "%s%s", rc ? "" : "warning: ", err);
    return rc == OPP_EXPORT_NOT_HELD ? 2 : rc ? 1 : 0; /* a rank or device it does not hold: 2 */
}
