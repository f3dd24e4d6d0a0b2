/* The trace file format: writer/reader round trip, TSC calibration, and the
 * reader's behaviour on cut, damaged and foreign files. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "proto.h"
#include "ring.h"
#include "testutil.h"
#include "tracebuild.h"

/* ---- a visitor that logs every callback as one line of text ---- */

struct log {
    char *text;
    size_t len;
    FILE *f;
};

static void log_open(struct log *l)
{
    l->text = NULL;
    l->len = 0;
    l->f = open_memstream(&l->text, &l->len);
    ck_assert_ptr_nonnull(l->f);
}

static void log_close(struct log *l)
{
    fclose(l->f);
    l->f = NULL;
}

static int log_process(void *ctx, const struct opp_tr_process *p)
{
    FILE *f = ((struct log *)ctx)->f;
    fprintf(f, "process %u pid=%u ppid=%u parent=%u clock=%u start=%llu real=%llu exe=%s argv=[",
            p->proc, p->pid, p->ppid, p->parent_proc, p->clock, (unsigned long long)p->start_ns,
            (unsigned long long)p->start_real_ns, p->exe);
    for (uint32_t i = 0; i < p->argc; i++)
        fprintf(f, "%s%s", i ? "|" : "", p->argv[i]);
    fputs("]\n", f);
    return 0;
}

static int log_funcs(void *ctx, uint32_t proc, uint32_t count, const struct opp_tr_func *fn)
{
    FILE *f = ((struct log *)ctx)->f;
    fprintf(f, "funcs %u:", proc);
    for (uint32_t i = 0; i < count; i++)
        fprintf(f, " %s/%s/%u/%u", fn[i].lib, fn[i].name, fn[i].kind, fn[i].dtype);
    fputs("\n", f);
    return 0;
}

static int log_thread(void *ctx, uint32_t proc, uint32_t tid, const char *name)
{
    fprintf(((struct log *)ctx)->f, "thread %u/%u %s\n", proc, tid, name);
    return 0;
}

static int log_event(void *ctx, const struct opp_tr_event *e)
{
    FILE *f = ((struct log *)ctx)->f;
    fprintf(f, "event %u/%u fn=%u flags=%u depth=%u [%llu,%llu] args=[", e->proc, e->tid, e->fn,
            e->flags, e->depth, (unsigned long long)e->begin_ns, (unsigned long long)e->end_ns);
    for (uint32_t i = 0; i < e->nargs; i++)
        fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)e->args[i]);
    fputs("]\n", f);
    return 0;
}

static int log_dropped(void *ctx, uint32_t proc, uint32_t tid, uint64_t n, uint32_t why)
{
    fprintf(((struct log *)ctx)->f, "dropped %u/%u %llu%s\n", proc, tid, (unsigned long long)n,
            why == OPP_DROP_INTERRUPTED ? " interrupted"
            : why                       ? " ?"
                                        : "");
    return 0;
}

static int log_process_end(void *ctx, uint32_t proc, uint32_t how, uint64_t end_ns)
{
    fprintf(((struct log *)ctx)->f, "end %u how=%u at=%llu\n", proc, how,
            (unsigned long long)end_ns);
    return 0;
}

static const struct opp_tr_visitor log_visitor = {
    .process = log_process,
    .funcs = log_funcs,
    .thread = log_thread,
    .event = log_event,
    .dropped = log_dropped,
    .process_end = log_process_end,
};

/* Read path, logging into l (closed on return). The reader's return value. */
static int read_log(const char *path, struct log *l, struct opp_tr_summary *sum, char *err,
                    size_t errlen)
{
    log_open(l);
    err[0] = 0;
    int rc = opp_trace_read(path, &log_visitor, l, sum, err, errlen);
    log_close(l);
    return rc;
}

/* ---- a small trace with every chunk type ---- */

/* Where each chunk ends, and how many events it holds. */
struct layout {
    uint64_t chunk_end[32];
    uint32_t chunk_events[32];
    int nchunks;
};

static void mark(struct layout *lay, const struct tb *b, uint32_t events)
{
    ck_assert_int_lt(lay->nchunks, 32);
    lay->chunk_end[lay->nchunks] = b->w.offset;
    lay->chunk_events[lay->nchunks++] = events;
}

static const char sample_log[] =
    "process 0 pid=100 ppid=1 parent=4294967295 clock=0 start=500 real=1700000000000000000 "
    "exe=/usr/bin/prog argv=[prog|-x|arg with space]\n"
    "funcs 0: blas/cblas_dgemm/1/2 blas/cblas_sdot/3/1 blas/zgemm_/1/4\n"
    "thread 0/100 prog\n"
    "thread 0/100 main\n"
    "event 0/100 fn=0 flags=1 depth=1 [1000,2000] args=[300,100,200,20046]\n"
    "event 0/100 fn=1 flags=0 depth=1 [2500,2500] args=[]\n"
    "event 0/100 fn=0 flags=1 depth=0 [900,3000] args=[18446744073709551615,1,0,0]\n"
    "dropped 0/100 7\n"
    "event 0/100 fn=2 flags=1 depth=0 [4000,5000] args=[2,3,4,20046]\n"
    "event 0/100 fn=2 flags=1 depth=0 [5100,5200] args=[2,3,4,20046]\n"
    "event 0/100 fn=1 flags=3 depth=0 [6000,9000] args=[64]\n"
    "end 0 how=2 at=9000\n";

/* The log above, written to path; lay (if not NULL) gets the chunk layout. */
static void write_sample(const char *path, struct layout *lay)
{
    struct layout dummy;
    if (!lay)
        lay = &dummy;
    memset(lay, 0, sizeof *lay);
    struct tb b;
    tb_open(&b, path);
    mark(lay, &b, 0);
    tb_clock(&b, 1, 2, 3);
    mark(lay, &b, 0);
    tb_process(&b, .proc = 0, .pid = 100, .ppid = 1, .parent = UINT32_MAX, .start = 500,
               .real = 1700000000000000000ull, .exe = "/usr/bin/prog",
               .argv = {"prog", "-x", "arg with space"});
    mark(lay, &b, 0);
    tb_funcs(&b, {OPP_OP_GEMM, OPP_DT_F64, "blas", "cblas_dgemm"},
             {OPP_OP_DOT, OPP_DT_F32, "blas", "cblas_sdot"},
             {OPP_OP_GEMM, OPP_DT_C128, "blas", "zgemm_"});
    mark(lay, &b, 0);
    tb_thread(&b, 100, "prog");
    mark(lay, &b, 0);
    tb_thread(&b, 100, "main");
    mark(lay, &b, 0);
    tb_events(&b, TB_CALL(0, 1000, 2000, 1, 300, 100, 200, 'N' | 'N' << 8),
              TB_CALL(1, 2500, 2500, 1), TB_CALL(0, 900, 3000, 0, UINT64_MAX, 1, 0, 0));
    mark(lay, &b, 3);
    tb_dropped(&b, 7);
    mark(lay, &b, 0);
    tb_events_after(&b, 3000, TB_CALL(2, 4000, 5000, 0, 2, 3, 4, 'N' | 'N' << 8),
                    TB_CALL(2, 5100, 5200, 0, 2, 3, 4, 'N' | 'N' << 8), /* a repeat: OPP_EV_SAME */
                    TB_OPEN(1, 6000, 9000, 0, 64));
    mark(lay, &b, 3);
    tb_process_end(&b, 0, OPP_END_LOST, 9000);
    mark(lay, &b, 0);
    tb_clock(&b, 10, 20, 30);
    mark(lay, &b, 0);
    tb_end(&b);
    mark(lay, &b, 0);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    char *buf = NULL;
    size_t cap = 0;
    FILE *m = open_memstream(&buf, &cap);
    char tmp[4096];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
        fwrite(tmp, 1, n, m);
    fclose(f);
    fclose(m);
    *len = cap;
    return buf;
}

static void spew(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

/* A fresh directory per test, and a trace path in it. */
static char *dir, *path;

static void setup(void)
{
    dir = tu_tmpdir();
    path = tu_path(dir, "t.opprof");
}

static void teardown(void)
{
    tu_rmdir(dir);
    free(path);
    free(dir);
}

START_TEST(round_trip)
{
    write_sample(path, NULL);
    struct log l;
    struct opp_tr_summary sum;
    char err[256];
    ck_assert_int_eq(read_log(path, &l, &sum, err, sizeof err), 0);
    ck_assert_str_eq(l.text, sample_log);
    ck_assert_int_eq(sum.complete, 1);
    ck_assert_str_eq(sum.warning, "");
    ck_assert_uint_eq(sum.events, 6);
    ck_assert_uint_eq(sum.end_events, 6);
    ck_assert_uint_eq(sum.end_dropped, 7);
    ck_assert_uint_eq(sum.end_processes, 1);
    ck_assert_uint_eq(sum.chunks, 11);
    ck_assert_uint_eq(sum.bytes_good, sum.file_size);
    free(l.text);
}
END_TEST

START_TEST(rewrite_replaces_trace)
{
    struct log l;
    struct opp_tr_summary sum;
    char err[256];
    write_sample(path, NULL);
    /* Writing again over a trace replaces it. */
    write_sample(path, NULL);
    ck_assert_int_eq(read_log(path, &l, &sum, err, sizeof err), 0);
    ck_assert_str_eq(l.text, sample_log);
    free(l.text);
}
END_TEST

/* A TSC process: ticks become ns through the first and last CLOCK samples,
 * ns = mono0 + ((ticks - tsc0) * mult) >> 32, mult = (dmono << 32) / dtsc. */
static void write_tsc(const char *file, const struct opp_clock_sample *c0,
                      const struct opp_clock_sample *c1, uint64_t start, uint64_t begin,
                      uint64_t end, uint64_t proc_end)
{
    struct tb b;
    tb_open(&b, file);
    tb_clock(&b, c0->tsc, c0->mono_ns, c0->real_ns);
    tb_process(&b, .proc = 0, .pid = 1, .clock = OPP_CLOCK_TSC, .start = start, .exe = "p");
    tb_funcs(&b, {OPP_OP_DOT, OPP_DT_F64, "blas", "cblas_ddot"});
    tb_thread(&b, 1, NULL);
    tb_events(&b, TB_CALL(0, begin, end, 0));
    tb_process_end(&b, 0, OPP_END_EXITED, proc_end);
    tb_clock(&b, c1->tsc, c1->mono_ns, c1->real_ns);
    tb_end(&b);
}

START_TEST(tsc_two_ticks_per_ns)
{
    struct log l;
    struct opp_tr_summary sum;
    char err[256];

    /* 2 ticks per ns: mult = 2^31 exactly. Ticks before the first sample
     * count backwards from it. */
    struct opp_clock_sample a0 = {.tsc = 1000, .mono_ns = 10000, .real_ns = 1};
    struct opp_clock_sample a1 = {.tsc = 2000001000ull, .mono_ns = 1000010000ull, .real_ns = 2};
    write_tsc(path, &a0, &a1, 0, 4000, 6000, 2000001000ull);
    ck_assert_int_eq(read_log(path, &l, &sum, err, sizeof err), 0);
    ck_assert_str_eq(l.text, "process 0 pid=1 ppid=0 parent=0 clock=1 start=9500 real=0 exe=p "
                             "argv=[p]\n"
                             "funcs 0: blas/cblas_ddot/3/2\n"
                             "event 0/1 fn=0 flags=0 depth=0 [11500,12500] args=[]\n"
                             "end 0 how=1 at=1000010000\n");
    ck_assert_str_eq(sum.warning, "");
    free(l.text);
}
END_TEST

START_TEST(tsc_three_ticks_per_ns_rounds_down)
{
    struct log l;
    struct opp_tr_summary sum;
    char err[256];
    /* 3 ticks per ns: mult = floor(2^32 / 3) = 1431655765, so 3000 ticks
     * are (3000 * 1431655765) >> 32 = 999 ns (the product falls 3000 short
     * of 1000 << 32), and 3 ticks are 0 ns. */
    struct opp_clock_sample b0 = {.tsc = 3000, .mono_ns = 1000};
    struct opp_clock_sample b1 = {.tsc = 3000000000ull + 3000, .mono_ns = 1000001000ull};
    write_tsc(path, &b0, &b1, 3003, 6000, 3000003000ull, 3000003000ull);
    ck_assert_int_eq(read_log(path, &l, &sum, err, sizeof err), 0);
    ck_assert_str_eq(l.text, "process 0 pid=1 ppid=0 parent=0 clock=1 start=1000 real=0 exe=p "
                             "argv=[p]\n"
                             "funcs 0: blas/cblas_ddot/3/2\n"
                             "event 0/1 fn=0 flags=0 depth=0 [1999,1000000999] args=[]\n"
                             "end 0 how=1 at=1000000999\n");
    free(l.text);
}
END_TEST

START_TEST(tsc_one_sample_passes_ticks)
{
    struct log l;
    struct opp_tr_summary sum;
    char err[256];
    struct opp_clock_sample a0 = {.tsc = 1000, .mono_ns = 10000, .real_ns = 1};
    /* One sample only: no calibration, ticks pass through, with a warning. */
    struct tb b;
    tb_open(&b, path);
    tb_clock(&b, a0.tsc, a0.mono_ns, a0.real_ns);
    tb_process(&b, .proc = 0, .pid = 1, .clock = OPP_CLOCK_TSC, .start = 1000, .exe = "p");
    tb_end(&b);
    ck_assert_int_eq(read_log(path, &l, &sum, err, sizeof err), 0);
    ck_assert_str_eq(sum.warning, "no clock calibration in the trace: times are in TSC ticks");
    free(l.text);
}
END_TEST

/* Every prefix of the sample: an error below the file header, else the
 * whole chunks before the cut and a warning; never more. */
START_TEST(truncated_everywhere)
{
    char *cut = tu_path(dir, "cut");
    struct layout lay;
    write_sample(path, &lay);
    size_t size;
    char *data = slurp(path, &size);
    ck_assert_uint_eq(size, lay.chunk_end[lay.nchunks - 1]);
    ck_assert_uint_eq(lay.chunk_end[0], OPP_FILE_HEADER_SIZE);

    for (size_t len = 0; len < size; len++) {
        spew(cut, data, len);
        struct log l;
        struct opp_tr_summary sum;
        char err[256];
        int rc = read_log(cut, &l, &sum, err, sizeof err);
        if (len < OPP_FILE_HEADER_SIZE) {
            ck_assert_msg(rc == -1, "cut at %zu: read as a trace", len);
            const char *want = len < OPP_FILE_HEADER_SIZE_V1 ? "is not an opprof trace"
                                                             : "is cut inside its header";
            ck_assert_msg(strstr(err, want) != NULL, "cut at %zu: %s", len, err);
            free(l.text);
            continue;
        }
        ck_assert_msg(rc == 0, "cut at %zu: %s", len, err);
        ck_assert_msg(sum.warning[0] != 0, "cut at %zu: no warning", len);
        ck_assert_int_eq(sum.complete, 0);
        uint64_t want_events = 0, want_chunks = 0;
        for (int i = 1; i < lay.nchunks && lay.chunk_end[i] <= len; i++) {
            want_events += lay.chunk_events[i];
            want_chunks++;
        }
        ck_assert_msg(sum.events == want_events, "cut at %zu: %llu events, want %llu", len,
                      (unsigned long long)sum.events, (unsigned long long)want_events);
        ck_assert_uint_eq(sum.chunks, want_chunks);
        ck_assert_msg(!strncmp(l.text, sample_log, strlen(l.text)),
                      "cut at %zu: not a prefix:\n%s", len, l.text);
        free(l.text);
    }
    free(data);
    free(cut);
}
END_TEST

START_TEST(flipped_byte)
{
    struct layout lay;
    write_sample(path, &lay);
    size_t size;
    char *data = slurp(path, &size);
    /* Chunk 8 is the second EVENTS chunk; it starts where chunk 7 ends. */
    ck_assert_uint_eq(lay.chunk_events[8], 3);
    uint64_t at = lay.chunk_end[7];
    data[at + OPP_CHUNK_HEADER_SIZE + 5] ^= 0x40;
    spew(path, data, size);

    struct log l;
    struct opp_tr_summary sum;
    char err[256], want[160];
    ck_assert_int_eq(read_log(path, &l, &sum, err, sizeof err), 0);
    snprintf(want, sizeof want,
             "trace damaged at byte %llu: checksum mismatch in a chunk of type 5",
             (unsigned long long)at);
    ck_assert_str_eq(sum.warning, want);
    ck_assert_int_eq(sum.complete, 0);
    ck_assert_uint_eq(sum.events, 3);
    /* Everything up to the dropped chunk, nothing after. */
    const char *stop = strstr(sample_log, "event 0/100 fn=2");
    ck_assert_uint_eq(strlen(l.text), (size_t)(stop - sample_log));
    ck_assert(!strncmp(l.text, sample_log, strlen(l.text)));
    free(l.text);
    free(data);
}
END_TEST

/* A flipped byte in the first chunk: nothing could be delivered, so the
 * file is not read as an empty trace but refused. */
START_TEST(flipped_byte_first_chunk)
{
    struct layout lay;
    write_sample(path, &lay);
    size_t size;
    char *data = slurp(path, &size);
    uint32_t type;
    memcpy(&type, data + OPP_FILE_HEADER_SIZE, sizeof type);
    data[OPP_FILE_HEADER_SIZE + OPP_CHUNK_HEADER_SIZE + 1] ^= 0x40;
    spew(path, data, size);

    struct log l;
    struct opp_tr_summary sum;
    char err[512], want[512];
    ck_assert_int_eq(read_log(path, &l, &sum, err, sizeof err), -1);
    snprintf(want, sizeof want,
             "%s: nothing in the trace can be read: trace damaged at byte %u: checksum mismatch "
             "in a chunk of type %u",
             path, OPP_FILE_HEADER_SIZE, type);
    ck_assert_str_eq(err, want);
    ck_assert_uint_eq(sum.chunks, 0);
    ck_assert_uint_eq(sum.events, 0);
    free(l.text);
    free(data);
}
END_TEST

START_TEST(foreign_file_bad_magic)
{
    struct log l;
    struct opp_tr_summary sum;
    char err[256], want[512];

    const char text[] = "hello, this is not a trace at all\n";
    spew(path, text, sizeof text - 1);
    ck_assert_int_eq(read_log(path, &l, &sum, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s is not an opprof trace (bad magic)", path);
    ck_assert_str_eq(err, want);
    ck_assert_str_eq(l.text, "");
    free(l.text);
}
END_TEST

START_TEST(empty_file_bad_magic)
{
    struct log l;
    struct opp_tr_summary sum;
    char err[256], want[512];
    snprintf(want, sizeof want, "%s is not an opprof trace (bad magic)", path);
    spew(path, "", 0);
    ck_assert_int_eq(read_log(path, &l, &sum, err, sizeof err), -1);
    ck_assert_str_eq(err, want);
    free(l.text);
}
END_TEST

START_TEST(future_version_refused)
{
    struct log l;
    struct opp_tr_summary sum;
    char err[256], want[512];
    /* The same header with a version from the future. */
    write_sample(path, NULL);
    size_t size;
    char *data = slurp(path, &size);
    uint32_t v3 = OPP_TRACE_VERSION + 1;
    spew(path, data, size);
    tb_set_version(path, v3); /* a real header of that version */
    ck_assert_int_eq(read_log(path, &l, &sum, err, sizeof err), -1);
    snprintf(want, sizeof want,
             "%s: trace format version %u is not supported (this opprof reads 1 to %u)", path,
             v3, OPP_TRACE_VERSION);
    ck_assert_str_eq(err, want);
    ck_assert_str_eq(l.text, "");
    free(l.text);
    free(data);
}
END_TEST

/* A DROPPED chunk says why its records were lost (version 11): a full
 * ring in the form every version reads, a signal handler's interruption
 * with its reason; a version before 11 has no reason, and a reason
 * unknown is a damaged chunk. */
static void write_drops(uint32_t why)
{
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 0, .pid = 100, .exe = "prog");
    tb_thread(&b, 100, NULL);
    tb_dropped(&b, 3);
    tb_dropped_why(&b, 2, why);
    tb_end(&b);
}

START_TEST(dropped_reasons)
{
    struct log l;
    struct opp_tr_summary sum;
    char err[256];
    write_drops(OPP_DROP_INTERRUPTED);
    ck_assert_int_eq(read_log(path, &l, &sum, err, sizeof err), 0);
    ck_assert_ptr_nonnull(strstr(l.text, "\ndropped 0/100 3\ndropped 0/100 2 interrupted\n"));
    ck_assert_uint_eq(sum.end_dropped, 5);
    ck_assert_str_eq(sum.warning, "");
    free(l.text);
    tb_set_version(path, 10);
    ck_assert_int_eq(read_log(path, &l, &sum, err, sizeof err), 0);
    ck_assert_ptr_nonnull(strstr(l.text, "\ndropped 0/100 3\n"));
    ck_assert_ptr_null(strstr(l.text, "interrupted"));
    ck_assert_int_eq(sum.complete, 0);
    ck_assert_str_ne(sum.warning, "");
    free(l.text);
    write_drops(OPP_DROP_WHY_MAX + 1);
    ck_assert_int_eq(read_log(path, &l, &sum, err, sizeof err), 0);
    ck_assert_ptr_null(strstr(l.text, "dropped 0/100 2"));
    ck_assert_int_eq(sum.complete, 0);
    free(l.text);
}
END_TEST

/* A summary's own DROPPED chunk (thread OPP_DROPPED_SUMMARY) counts calls
 * past its node bound: no signal handler's reason is one of its, and a
 * chunk that says so is damaged (a reader would count its records as
 * both, and the full ring's drops as fewer than none). */
START_TEST(summary_drops_have_no_interrupted_reason)
{
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 0, .pid = 100, .exe = "prog");
    tb_at(&b, 0, OPP_DROPPED_SUMMARY);
    tb_dropped_why(&b, 2, OPP_DROP_INTERRUPTED);
    tb_end(&b);
    struct log l;
    struct opp_tr_summary sum;
    char err[256];
    ck_assert_int_eq(read_log(path, &l, &sum, err, sizeof err), 0);
    ck_assert_ptr_null(strstr(l.text, "dropped"));
    ck_assert_int_eq(sum.complete, 0);
    ck_assert_str_ne(sum.warning, "");
    free(l.text);
}
END_TEST

/* Every bit of the header is covered: a flipped version is never read as
 * another format, whichever bit it is; a header of versions 1 to 5 (16
 * bytes, no CRC) is still read. */
START_TEST(header_bits_covered)
{
    write_sample(path, NULL);
    size_t size;
    char *data = slurp(path, &size);
    for (int bit = 0; bit < 8 * (int)OPP_FILE_HEADER_SIZE; bit++) {
        data[bit / 8] ^= (char)(1 << bit % 8);
        spew(path, data, size);
        data[bit / 8] ^= (char)(1 << bit % 8);
        struct log l;
        struct opp_tr_summary sum;
        char err[256];
        int rc = read_log(path, &l, &sum, err, sizeof err);
        ck_assert_msg(rc == -1, "bit %d flipped: read as a trace of version %u", bit, sum.version);
        ck_assert_msg(strstr(err, bit < 64 ? "not an opprof trace" : "header is damaged"),
                      "bit %d: %s", bit, err);
        free(l.text);
    }
    /* The same chunks behind a version 5 header. */
    spew(path, data, size);
    tb_set_version(path, 5);
    struct log l;
    struct opp_tr_summary sum;
    char err[256];
    ck_assert_int_eq(read_log(path, &l, &sum, err, sizeof err), 0);
    ck_assert_uint_eq(sum.version, 5);
    ck_assert_int_eq(sum.complete, 1);
    ck_assert_str_eq(l.text, sample_log);
    free(l.text);
    free(data);
}
END_TEST

START_TEST(missing_file)
{
    struct log l;
    struct opp_tr_summary sum;
    char err[256], want[512];
    char *missing = tu_path(dir, "missing");
    ck_assert_int_eq(read_log(missing, &l, &sum, err, sizeof err), -1);
    snprintf(want, sizeof want, "cannot open %s: No such file or directory", missing);
    ck_assert_str_eq(err, want);
    free(l.text);
    free(missing);
}
END_TEST

START_TEST(directory_not_a_trace)
{
    struct log l;
    struct opp_tr_summary sum;
    char err[256], want[512];
    ck_assert_int_eq(read_log(dir, &l, &sum, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s is not a regular file", dir);
    ck_assert_str_eq(err, want);
    free(l.text);
}
END_TEST

START_TEST(writer_keeps_foreign_file)
{
    char *notes = tu_path(dir, "notes.txt");
    const char text[] = "precious notes, not a trace\n";
    spew(notes, text, sizeof text - 1);
    struct opp_tw w;
    char err[512], want[512];
    ck_assert_int_eq(opp_tw_open(&w, notes, err, sizeof err), -EEXIST);
    snprintf(want, sizeof want, "refusing to overwrite %s: it is not an opprof trace", notes);
    ck_assert_str_eq(err, want);
    size_t size;
    char *data = slurp(notes, &size);
    ck_assert_uint_eq(size, sizeof text - 1);
    ck_assert(!memcmp(data, text, size));
    free(data);
    free(notes);
}
END_TEST

START_TEST(writer_refuses_directory)
{
    struct opp_tw w;
    char err[512];
    /* A directory is not written either. */
    ck_assert_int_eq(opp_tw_open(&w, dir, err, sizeof err), -EISDIR);
}
END_TEST

/* What `opprof run` asks before CMD starts: whether the writer could
 * write there, in its words, making and changing nothing. */
START_TEST(writer_check_ahead)
{
    char err[512], want[512];
    char *fresh = tu_path(dir, "fresh.trace");
    ck_assert_int_eq(opp_tw_check(fresh, err, sizeof err), 0);
    ck_assert_int_eq(access(fresh, F_OK), -1); /* nothing made */
    char *nowhere = tu_path(dir, "no/such.trace");
    ck_assert_int_eq(opp_tw_check(nowhere, err, sizeof err), -ENOENT);
    snprintf(want, sizeof want, "cannot create %s: No such file or directory", nowhere);
    ck_assert_str_eq(err, want);
    ck_assert_int_eq(opp_tw_check(dir, err, sizeof err), -EISDIR);
    snprintf(want, sizeof want, "cannot create %s: Is a directory", dir);
    ck_assert_str_eq(err, want);
    char *fifo = tu_path(dir, "fifo"); /* never opened: it would wait for a reader */
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(opp_tw_check(fifo, err, sizeof err), -EINVAL);
    snprintf(want, sizeof want, "refusing to write the trace to %s: not a regular file", fifo);
    ck_assert_str_eq(err, want);
    char *notes = tu_path(dir, "notes.txt");
    spew(notes, "notes\n", 6);
    ck_assert_int_eq(opp_tw_check(notes, err, sizeof err), -EEXIST);
    snprintf(want, sizeof want, "refusing to overwrite %s: it is not an opprof trace", notes);
    ck_assert_str_eq(err, want);
    write_sample(path, NULL); /* a trace: written again, as the writer would */
    ck_assert_int_eq(opp_tw_check(path, err, sizeof err), 0);
    spew(notes, "", 0); /* empty: anything's first bytes */
    ck_assert_int_eq(opp_tw_check(notes, err, sizeof err), 0);
    ck_assert_int_eq(opp_tw_check("", err, sizeof err), -ENOENT); /* not "." */
    ck_assert_str_eq(err, "cannot create '': No such file or directory");
    /* a trace its writer holds: refused as the writer would refuse it */
    struct opp_tw w;
    ck_assert_int_eq(opp_tw_open(&w, path, err, sizeof err), 0);
    ck_assert_int_eq(opp_tw_check(path, err, sizeof err), -EBUSY);
    snprintf(want, sizeof want, "%s is being written by another collector", path);
    ck_assert_str_eq(err, want);
    opp_tw_close(&w);
    ck_assert_int_eq(opp_tw_check(path, err, sizeof err), 0);
    free(fresh), free(nowhere), free(fifo), free(notes);
}
END_TEST

/* The collector's open of a file already there: locked at once (a
 * second writer refused), its bytes kept until the first chunk; closed
 * before one, it is as it was; the first chunk makes it a new trace. A
 * file it makes is a trace at once. */
START_TEST(writer_holds_old_file_until_first_chunk)
{
    write_sample(path, NULL);
    size_t len, n;
    char *before = slurp(path, &len), *after;
    struct opp_tw w, other;
    char err[512], want[512];
    ck_assert_int_eq(opp_tw_open_held(&w, path, err, sizeof err), 0);
    ck_assert_int_eq(w.held, 1);
    ck_assert_int_eq(opp_tw_open_held(&other, path, err, sizeof err), -EBUSY);
    snprintf(want, sizeof want, "%s is being written by another collector", path);
    ck_assert_str_eq(err, want);
    ck_assert_int_eq(opp_tw_close(&w), 0);
    after = slurp(path, &n);
    ck_assert_uint_eq(n, len);
    ck_assert(!memcmp(before, after, len));
    free(after);
    ck_assert_int_eq(opp_tw_open_held(&w, path, err, sizeof err), 0);
    struct opp_clock_sample cs = {.tsc = 1, .mono_ns = 2, .real_ns = 3};
    ck_assert_int_eq(opp_tw_clock(&w, &cs), 0);
    ck_assert_int_eq(w.held, 0);
    ck_assert_int_eq(opp_tw_end(&w, 0, 0, 0), 0);
    ck_assert_int_eq(opp_tw_close(&w), 0);
    after = slurp(path, &n); /* header, CLOCK (16 + 24), END (16 + 24) */
    ck_assert_uint_eq(n, OPP_FILE_HEADER_SIZE + 40 + 40);
    ck_assert(!memcmp(after, OPP_TRACE_MAGIC, 8));
    free(after);
    char *fresh = tu_path(dir, "fresh.trace");
    ck_assert_int_eq(opp_tw_open_held(&w, fresh, err, sizeof err), 0);
    ck_assert_int_eq(w.held, 0);
    ck_assert_int_eq(opp_tw_close(&w), 0);
    after = slurp(fresh, &n);
    ck_assert_uint_eq(n, OPP_FILE_HEADER_SIZE);
    free(after), free(before), free(fresh);
}
END_TEST

/* The first chunk replacing a trace held: the file goes from the old
 * trace to one of the header alone in one step (a collector killed or a
 * write refused then leaves a readable empty trace, never a file of no
 * bytes, which no reader takes for a trace). A file size limit below the
 * header (RLIMIT_FSIZE) refuses every write, as a full disk would. */
START_TEST(writer_replaces_held_trace_never_empty)
{
    write_sample(path, NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (!pid) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {OPP_FILE_HEADER_SIZE / 2, OPP_FILE_HEADER_SIZE / 2};
        struct opp_tw w;
        char err[512];
        struct opp_clock_sample cs = {.tsc = 1, .mono_ns = 2, .real_ns = 3};
        if (setrlimit(RLIMIT_FSIZE, &rl) || opp_tw_open_held(&w, path, err, sizeof err) ||
            opp_tw_clock(&w, &cs) >= 0)
            _exit(1);
        opp_tw_close(&w);
        _exit(0);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    size_t n;
    char *after = slurp(path, &n);
    ck_assert_uint_eq(n, OPP_FILE_HEADER_SIZE);
    ck_assert(!memcmp(after, OPP_TRACE_MAGIC, 8));
    free(after);
}
END_TEST

/* A trace its writer still holds (LOCK_EX): the first read waits for it
 * OPPROF_WAIT_MS, then reads what there is (here a whole trace: nothing
 * to warn of); the next reads of that file in the process (a command
 * reads a trace several times) do not wait again. */
START_TEST(writer_waited_for_once)
{
    write_sample(path, NULL);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(flock(fd, LOCK_EX), 0);
    setenv("OPPROF_WAIT_MS", "400", 1);
    uint64_t took[3];
    for (int i = 0; i < 3; i++) {
        struct log l;
        struct opp_tr_summary sum;
        char err[256];
        uint64_t t0 = opp_mono_ns();
        ck_assert_int_eq(read_log(path, &l, &sum, err, sizeof err), 0);
        took[i] = opp_mono_ns() - t0;
        ck_assert_str_eq(l.text, sample_log);
        ck_assert_str_eq(sum.warning, "");
        free(l.text);
    }
    unsetenv("OPPROF_WAIT_MS");
    ck_assert_uint_ge(took[0], 400000000ull);
    ck_assert_uint_lt(took[1], 200000000ull);
    ck_assert_uint_lt(took[2], 200000000ull);
    close(fd);
}
END_TEST

/* An OPPROF_WAIT_MS that is not a number of milliseconds fails the read
 * and says so, instead of being taken as 0 (or as its digits). */
START_TEST(bad_wait_refused)
{
    write_sample(path, NULL);
    static const char *const bad[] = {"abc", "", "-1", "5s", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("OPPROF_WAIT_MS", bad[i], 1);
        struct log l = {0};
        struct opp_tr_summary sum;
        char err[256], want[128];
        ck_assert_int_eq(read_log(path, &l, &sum, err, sizeof err), -1);
        snprintf(want, sizeof want, "OPPROF_WAIT_MS=%s is not a number of milliseconds", bad[i]);
        ck_assert_str_eq(err, want);
        free(l.text);
    }
    setenv("OPPROF_WAIT_MS", "0", 1);
    struct log l;
    struct opp_tr_summary sum;
    char err[256];
    ck_assert_int_eq(read_log(path, &l, &sum, err, sizeof err), 0);
    ck_assert_str_eq(l.text, sample_log);
    free(l.text);
    unsetenv("OPPROF_WAIT_MS");
}
END_TEST

/* docs/FORMAT.md's title names the versions the code writes (the suite
 * runs in the source tree, as make test runs it). */
START_TEST(format_doc_names_the_versions)
{
    FILE *f = fopen("docs/FORMAT.md", "r");
    ck_assert_msg(f, "docs/FORMAT.md: %s (run from the source tree)", strerror(errno));
    char line[256], want[256];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    snprintf(want, sizeof want,
             "# opprof formats: trace file v%u, socket protocol v%u, shared ring v%u\n",
             OPP_TRACE_VERSION, OPP_PROTO_VERSION, OPP_RING_VERSION);
    ck_assert_str_eq(line, want);
}
END_TEST

Suite *suite_format(void)
{
    Suite *s = suite_create("format");
    TCase *tc = tcase_create("format");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, bad_wait_refused);
    tcase_add_test(tc, format_doc_names_the_versions);
    tcase_add_test(tc, rewrite_replaces_trace);
    tcase_add_test(tc, tsc_two_ticks_per_ns);
    tcase_add_test(tc, tsc_three_ticks_per_ns_rounds_down);
    tcase_add_test(tc, tsc_one_sample_passes_ticks);
    tcase_add_test(tc, truncated_everywhere);
    tcase_add_test(tc, flipped_byte);
    tcase_add_test(tc, flipped_byte_first_chunk);
    tcase_add_test(tc, foreign_file_bad_magic);
    tcase_add_test(tc, empty_file_bad_magic);
    tcase_add_test(tc, future_version_refused);
    tcase_add_test(tc, dropped_reasons);
    tcase_add_test(tc, summary_drops_have_no_interrupted_reason);
    tcase_add_test(tc, header_bits_covered);
    tcase_add_test(tc, missing_file);
    tcase_add_test(tc, directory_not_a_trace);
    tcase_add_test(tc, writer_keeps_foreign_file);
    tcase_add_test(tc, writer_refuses_directory);
    tcase_add_test(tc, writer_check_ahead);
    tcase_add_test(tc, writer_holds_old_file_until_first_chunk);
    tcase_add_test(tc, writer_replaces_held_trace_never_empty);
    suite_add_tcase(s, tc);
    TCase *timed = tcase_create("timing"); /* waits 0.4 s */
    tcase_set_tags(timed, "timing");
    tcase_add_checked_fixture(timed, setup, teardown);
    tcase_add_test(timed, writer_waited_for_once);
    suite_add_tcase(s, timed);
    return s;
}
