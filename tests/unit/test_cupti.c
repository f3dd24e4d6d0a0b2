/* The agent's CUPTI converter fed with CUPTI's own record structs (13.0:
 * Kernel10, Memcpy6, Memset4, Memory4, Synchronization2, Overhead3,
 * ExternalCorrelation, Device5), iterated by the real libcupti, written as
 * the collector writes them and read back: every field arrives. */
#include <check.h>

#ifdef OPP_HAVE_CUDA
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cupti_conv.h"
#include "testutil.h"
#include "tracebuild.h"

/* ---- the buffer CUPTI would hand us: records back to back ---- */

struct cbuf {
    uint8_t *p;
    size_t len;
};

static void add(struct cbuf *b, const void *rec, size_t n)
{
    ck_assert_uint_eq(n % 8, 0);
    memcpy(b->p + b->len, rec, n);
    b->len += n;
}

static CUpti_ActivityKernel10 kernel(const char *name, uint64_t start, uint64_t end, uint32_t corr)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = name;
    k.start = start;
    k.end = end;
    k.deviceId = 1;
    k.contextId = 2;
    k.streamId = 7;
    k.correlationId = corr;
    k.gridX = 128, k.gridY = 2, k.gridZ = 1;
    k.blockX = 256, k.blockY = 1, k.blockZ = 1;
    k.registersPerThread = 32;
    k.staticSharedMemory = 1024;
    k.dynamicSharedMemory = 4096;
    k.graphId = 0;
    return k;
}

/* ---- where converted messages go: checked and written like the collector does ---- */

struct sink {
    struct tb tb;
    int messages;
    int refuse; /* hand-over fails (collector gone) */
};

static int sink_emit(void *ctx, const void *payload, uint32_t size)
{
    struct sink *s = ctx;
    if (s->refuse)
        return -1;
    uint32_t count;
    const char *why = NULL;
    ck_assert_msg(opp_gpu_check(payload, size, &count, &why) == 0, "bad message: %s", why);
    tb_gpu_payload(&s->tb, payload, size);
    s->messages++;
    return 0;
}

static void sink_open(struct sink *s, const char *path)
{
    memset(s, 0, sizeof *s);
    tb_open(&s->tb, path);
    tb_process(&s->tb, .proc = 0, .pid = 42, .exe = "/app", .argv = {"app"});
}

/* ---- read back as text: one line per record ---- */

struct text {
    char *s;
    size_t n;
    FILE *f;
};

static int on_gpu(void *ctx, uint32_t proc, const struct opp_gpu_rec *g)
{
    FILE *f = ((struct text *)ctx)->f;
    if (g->type == OPP_GPU_STRING) {
        fprintf(f, "string %llu %.*s\n", (unsigned long long)g->f[0], (int)g->slen, g->str);
        return 0;
    }
    fprintf(f, "type %u:", g->type);
    for (uint32_t i = 0; i < g->nfields; i++)
        fprintf(f, " %llu", (unsigned long long)g->f[i]);
    fputc('\n', f);
    return 0;
}

static char *read_back(const char *path)
{
    struct text t = {0};
    t.f = open_memstream(&t.s, &t.n);
    struct opp_tr_visitor v = {.gpu = on_gpu};
    struct opp_tr_summary sum;
    char err[256];
    ck_assert_int_eq(opp_trace_read(path, &v, &t, &sum, err, sizeof err), 0);
    fclose(t.f);
    return t.s;
}

START_TEST(every_kind_arrives)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "t.trace");
    struct sink s;
    sink_open(&s, path);
    struct cbuf b = {calloc(1, 1 << 16), 0};

    CUpti_ActivityKernel10 k1 = kernel("_Z6kernelPf", 1000, 5000, 11);
    CUpti_ActivityKernel10 k2 = kernel("_Z6kernelPf", 6000, 6500, 12); /* same name: one string */
    add(&b, &k1, sizeof k1);
    add(&b, &k2, sizeof k2);
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.bytes = 1 << 20, m.start = 100, m.end = 900, m.deviceId = 1, m.contextId = 2;
    m.streamId = 7, m.correlationId = 10, m.graphId = 5;
    add(&b, &m, sizeof m);
    CUpti_ActivityMemset4 ms;
    memset(&ms, 0, sizeof ms);
    ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    ms.value = 0xab, ms.bytes = 4096, ms.start = 7000, ms.end = 7100, ms.deviceId = 1;
    ms.contextId = 2, ms.streamId = 8, ms.correlationId = 13;
    ms.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    add(&b, &ms, sizeof ms);
    CUpti_ActivitySynchronization2 sy;
    memset(&sy, 0, sizeof sy);
    sy.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    sy.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    sy.start = 7200, sy.end = 9000, sy.correlationId = 14, sy.contextId = 2, sy.streamId = 7;
    sy.cudaEventId = 3;
    add(&b, &sy, sizeof sy);
    CUpti_ActivityMemory4 mem;
    memset(&mem, 0, sizeof mem);
    mem.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    mem.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    mem.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    mem.correlationId = 9, mem.address = 0x7f0000000000ull, mem.bytes = 1 << 20;
    mem.timestamp = 50, mem.deviceId = 1, mem.contextId = 2, mem.streamId = 0;
    add(&b, &mem, sizeof mem);
    CUpti_ActivityOverhead3 ov;
    memset(&ov, 0, sizeof ov);
    ov.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    ov.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
    ov.start = 9100, ov.end = 9200;
    add(&b, &ov, sizeof ov);
    CUpti_ActivityExternalCorrelation x;
    memset(&x, 0, sizeof x);
    x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    x.externalId = 77, x.correlationId = 11;
    add(&b, &x, sizeof x);
    CUpti_ActivityDevice5 d;
    memset(&d, 0, sizeof d);
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.name = "NVIDIA H100 80GB HBM3";
    d.id = 1, d.computeCapabilityMajor = 9, d.computeCapabilityMinor = 0;
    d.numMultiprocessors = 132, d.maxWarpsPerMultiprocessor = 64, d.numThreadsPerWarp = 32;
    d.maxRegistersPerMultiprocessor = 65536, d.maxSharedMemoryPerMultiprocessor = 233472;
    d.maxBlocksPerMultiprocessor = 32, d.maxThreadsPerBlock = 1024;
    d.globalMemorySize = 85520809984ull;
    add(&b, &d, sizeof d);
    CUpti_ActivityMarker2 mk; /* a kind we do not keep */
    memset(&mk, 0, sizeof mk);
    mk.kind = CUPTI_ACTIVITY_KIND_MARKER;
    add(&b, &mk, sizeof mk);

    struct opp_conv c;
    opp_conv_init(&c, cuptiActivityGetNextRecord, sink_emit, &s);
    ck_assert_uint_eq(opp_conv_buffer(&c, b.p, b.len), 9);
    opp_conv_flush(&c);
    ck_assert_uint_eq(c.skipped, 1);
    ck_assert_uint_eq(c.records, 11); /* 9 + two names */
    ck_assert_uint_eq(c.lost, 0);
    ck_assert_int_eq(s.messages, 1);
    tb_close(&s.tb);

    char *got = read_back(path);
    const char *want =
        "string 1 _Z6kernelPf\n"
        /* start end dev ctx stream corr name grid block regs smem dsmem graph node */
        "type 2: 1000 5000 1 2 7 11 1 128 2 1 256 1 1 32 1024 4096 0 0\n"
        "type 2: 6000 6500 1 2 7 12 1 128 2 1 256 1 1 32 1024 4096 0 0\n"
        /* start end dev ctx stream corr bytes kind src dst graph */
        "type 3: 100 900 1 2 7 10 1048576 1 1 3 5\n"
        "type 4: 7000 7100 1 2 8 13 4096 171 3 0\n"
        "type 5: 7200 9000 0 2 7 14 3 3\n"
        "type 6: 50 50 1 2 0 9 1 3 139637976727552 1048576 0\n"
        "type 7: 9100 9200 0 0 0 0 65536\n" /* CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH */
        "type 8: 3 77 11\n"                 /* CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 */
        "string 2 NVIDIA H100 80GB HBM3\n"
        "type 10: 1 2 9 0 132 2048 65536 233472 32 64 1024 85520809984\n";
    ck_assert_str_eq(got, want);
    free(got);
    opp_conv_free(&c);
    free(b.p);
    tu_rmdir(dir);
    free(dir), free(path);
}
END_TEST

enum { N = 4000 };

/* N kernels of four names (the records point to them). */
static char names[4][32];

static struct cbuf many_kernels(void)
{
    struct cbuf b = {calloc(N, sizeof(CUpti_ActivityKernel10)), 0};
    for (int i = 0; i < 4; i++)
        snprintf(names[i], sizeof names[i], "_Z7kernel%dPf", i);
    for (int i = 0; i < N; i++) {
        CUpti_ActivityKernel10 k = kernel(names[i % 4], 1000u * i + 1000, 1000u * i + 1500, (uint32_t)i + 1);
        add(&b, &k, sizeof k);
    }
    return b;
}

/* N kernels converted: a trace dir, its sink and the converter. */
static char *dir, *path;
static struct sink sink;
static struct cbuf buf;
static struct opp_conv conv;

static void setup(void)
{
    dir = tu_tmpdir();
    path = tu_path(dir, "t.trace");
    sink_open(&sink, path);
    buf = many_kernels();
    opp_conv_init(&conv, cuptiActivityGetNextRecord, sink_emit, &sink);
    ck_assert_uint_eq(opp_conv_buffer(&conv, buf.p, buf.len), N);
    opp_conv_flush(&conv);
}

static void teardown(void)
{
    opp_conv_free(&conv);
    free(buf.p);
    tu_rmdir(dir);
    free(dir), free(path);
}

/* The trace holds N kernels and the four names once. */
static void trace_has_each_record_once(void)
{
    tb_close(&sink.tb);
    char *got = read_back(path);
    ck_assert_int_eq(tu_count_lines(got, "type 2:"), N);
    ck_assert_int_eq(tu_count_lines(got, "string "), 4);
    free(got);
}

/* Buffers larger than one message are split; names are sent once per
 * process even across messages. */
START_TEST(many_records_split_across_messages)
{
    ck_assert_int_gt(sink.messages, 1);
    ck_assert_uint_eq(conv.records, N + 4);
    trace_has_each_record_once();
}
END_TEST

/* Records that cannot be handed over are counted as lost, never retried
 * into a wrong order. */
START_TEST(records_refused_counted_lost)
{
    sink.refuse = 1; /* the collector is gone */
    ck_assert_uint_eq(opp_conv_buffer(&conv, buf.p, buf.len), N);
    opp_conv_flush(&conv);
    ck_assert_uint_eq(conv.lost, N); /* no names again: already sent */
    trace_has_each_record_once();
}
END_TEST

/* A kernel without timestamps (cut off by a forced flush, or untimed for
 * lack of device memory) is counted and left out; a record libcupti cannot
 * read (kind 0: incomplete or invalid) ends the buffer, counted once. */
START_TEST(unfinished_records_counted)
{
    char *d = tu_tmpdir(), *t = tu_path(d, "t.trace");
    struct sink s;
    sink_open(&s, t);
    struct cbuf b = {calloc(1, 1 << 16), 0};
    CUpti_ActivityKernel10 k1 = kernel("_Z6kernelPf", 1000, 5000, 11);
    CUpti_ActivityKernel10 k2 = kernel("_Z6kernelPf", 0, 0, 12);
    CUpti_ActivityKernel10 k3 = kernel("_Z6kernelPf", 6000, 6500, 13);
    add(&b, &k1, sizeof k1);
    add(&b, &k2, sizeof k2);
    add(&b, &k3, sizeof k3);
    struct opp_conv c;
    opp_conv_init(&c, cuptiActivityGetNextRecord, sink_emit, &s);
    ck_assert_uint_eq(opp_conv_buffer(&c, b.p, b.len), 2);
    ck_assert_uint_eq(c.unfinished, 1);
    CUpti_ActivityKernel10 bad = kernel("_Z6kernelPf", 7000, 7500, 14);
    bad.kind = CUPTI_ACTIVITY_KIND_INVALID;
    add(&b, &bad, sizeof bad);
    add(&b, &k3, sizeof k3);
    ck_assert_uint_eq(opp_conv_buffer(&c, b.p, b.len), 2);
    ck_assert_uint_eq(c.unfinished, 1 + 1 + 1);
    opp_conv_free(&c);
    tb_close(&s.tb);
    free(b.p);
    tu_rmdir(d);
    free(d), free(t);
}
END_TEST
#endif

Suite *suite_cupti(void)
{
    Suite *s = suite_create("cupti");
    TCase *tc = tcase_create("converter");
#ifdef OPP_HAVE_CUDA
    tcase_add_test(tc, every_kind_arrives);
    tcase_add_test(tc, unfinished_records_counted);
#endif
    suite_add_tcase(s, tc);
#ifdef OPP_HAVE_CUDA
    TCase *many = tcase_create("many");
    tcase_add_checked_fixture(many, setup, teardown);
    tcase_add_test(many, many_records_split_across_messages);
    tcase_add_test(many, records_refused_counted_lost);
    suite_add_tcase(s, many);
#endif
    return s;
}
