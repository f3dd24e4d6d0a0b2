/* CPU memory (report/analysis/cpu_memory.c): PyTorch's allocations and
 * frees as MEMORY instants inside the operators open on their thread; each
 * free's size from its allocation, torch's CPU Mem and Self CPU Mem per
 * operator, the "[memory]" row, the sort keys, the table's columns, CSV and
 * JSON fields and the memory timeline of the CPU, with exact numbers. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "analysis/aggregate.h"
#include "analysis/live_blocks.h"
#include "analysis/mem_stream.h"
#include "analysis/model.h"
#include "analysis/pass.h"
#include "exports/export.h"
#include "failalloc.h"
#include "testutil.h"
#include "tool/cmds.h"
#include "tracebuild.h"
#include "views/output.h"
#include "oracle/loaded.h"

/* ---- the trace ----
 * process 0 (pid 10), thread 100 "main":
 *   step [1000, 10000]
 *     alloc 0x1000 512 @1500                        step's own: +512
 *     matmul [2000, 5000]
 *       alloc 0x2000 1024 @2500, alloc 0x3000 512 @3000, free 0x2000 @4000: +512
 *     matmul [6000, 8000]
 *       alloc 0x2000 256 @7000 (the address again)                        +256
 *   alloc 0x5000 100 @11000, outside every operator
 * thread 101 "worker": free 0x1000 @12000 and free 0x3000 @12200 (another
 *   thread's allocations: 512 each), free 0x9999 @12500 (never seen: 0)
 * process 1 (pid 20), thread 200: free 0x2000 @13000 (process 0's address:
 *   not its allocation, 0), alloc 0x7000 64 @13500 */

enum { F_STEP, F_MATMUL, F_ALLOC, F_FREE };
#define ALLOC(t, addr, n, depth) TB_CALL(F_ALLOC, t, t, depth, OPP_MEM_ALLOC, addr, n)
#define FREE(t, addr, depth) TB_CALL(F_FREE, t, t, depth, OPP_MEM_FREE, addr, 0)

static void funcs(struct tb *b)
{
    tb_funcs(b, [F_STEP] = {OPP_OP_PLAIN, 0, "app", "step"},
             [F_MATMUL] = {OPP_OP_PLAIN, 0, "app", "matmul"},
             [F_ALLOC] = {OPP_OP_MEMORY, 0, "c10", "_ZN3c109alloc_cpuEm"},
             [F_FREE] = {OPP_OP_MEMORY, 0, "c10", "_ZN3c108free_cpuEPv"});
}

static void write_trace(const char *path)
{
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 0, .pid = 10, .exe = "python3");
    funcs(&b);
    tb_thread(&b, 100, "main");
    /* in the order they ended */
    tb_events(&b, ALLOC(1500, 0x1000, 512, 1), ALLOC(2500, 0x2000, 1024, 2),
              ALLOC(3000, 0x3000, 512, 2), FREE(4000, 0x2000, 2), TB_CALL(F_MATMUL, 2000, 5000, 1),
              ALLOC(7000, 0x2000, 256, 2), TB_CALL(F_MATMUL, 6000, 8000, 1),
              TB_CALL(F_STEP, 1000, 10000, 0), ALLOC(11000, 0x5000, 100, 0));
    tb_thread(&b, 101, "worker");
    tb_events(&b, FREE(12000, 0x1000, 0), FREE(12200, 0x3000, 0), FREE(12500, 0x9999, 0));
    tb_process(&b, .proc = 1, .pid = 20, .ppid = 10, .parent = 0, .exe = "python3");
    funcs(&b);
    tb_thread(&b, 200, NULL);
    tb_events(&b, FREE(13000, 0x2000, 0), ALLOC(13500, 0x7000, 64, 0));
    tb_end(&b);
}

static char *dir, *trace;
static struct opp_model *m;

static void setup(void)
{
    dir = tu_tmpdir();
    trace = tu_path(dir, "mem.trace");
    write_trace(trace);
    char err[512];
    m = tu_model_load(trace, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
}

static void teardown(void)
{
    opp_model_free(m);
    tu_rmdir(dir);
    free(trace);
    free(dir);
}

static const struct opp_thread *thread_of(uint32_t tid)
{
    for (size_t i = 0; i < m->nthreads; i++)
        if (m->threads[i].tid == tid)
            return &m->threads[i];
    ck_abort_msg("no thread %u", tid);
    return NULL;
}

START_TEST(memory_events_named_and_nested)
{
    const struct opp_thread *t = thread_of(100);
    ck_assert_uint_eq(t->nevents, 9);
    /* tree order: step, its allocation, matmul and its three, matmul and its one, the last */
    const char *names[] = {"step",     "[memory]", "matmul",   "[memory]", "[memory]",
                           "[memory]", "matmul",   "[memory]", "[memory]"};
    const uint32_t parents[] = {OPP_NO_PARENT, 0, 0, 2, 2, 2, 0, 6, OPP_NO_PARENT};
    for (size_t i = 0; i < t->nevents; i++) {
        ck_assert_str_eq(opp_model_str(m, t->events[i].name), names[i]);
        ck_assert_uint_eq(t->events[i].parent, parents[i]);
    }
}
END_TEST

START_TEST(free_takes_its_allocation_size)
{
    /* the worker's frees: two of main's allocations, one never seen */
    const struct opp_thread *w = thread_of(101);
    const int64_t want[] = {-512, -512, 0};
    ck_assert_uint_eq(w->nevents, 3);
    for (size_t i = 0; i < 3; i++) {
        ck_assert_int_eq(tu_cpu_mem_bytes(m, w, &w->events[i]), want[i]);
        ck_assert_int_eq(w->cpumem[i].self, want[i]);
        ck_assert_int_eq(w->cpumem[i].total, want[i]);
    }
    ck_assert_uint_eq(opp_event_args(w, &w->events[0])[OPP_COL_MEM_BYTES], 512);
    /* main's free of 0x2000: the 1024 allocated before it, not the later 256 */
    const struct opp_thread *t = thread_of(100);
    ck_assert_int_eq(tu_cpu_mem_bytes(m, t, &t->events[5]), -1024);
    /* another process's address is not this one's: 0 */
    const struct opp_thread *c = thread_of(200);
    ck_assert_int_eq(tu_cpu_mem_bytes(m, c, &c->events[0]), 0);
    ck_assert_int_eq(tu_cpu_mem_bytes(m, c, &c->events[1]), 64);
    /* not a MEMORY event */
    ck_assert_int_eq(tu_cpu_mem_bytes(m, t, &t->events[0]), 0);
}
END_TEST

START_TEST(self_and_total_per_event)
{
    const struct opp_thread *t = thread_of(100);
    /* step: its own allocation; total adds both matmuls' */
    const int64_t self[] = {512, 512, 512, 1024, 512, -1024, 256, 256, 100};
    const int64_t total[] = {1280, 512, 512, 1024, 512, -1024, 256, 256, 100};
    for (size_t i = 0; i < t->nevents; i++) {
        ck_assert_int_eq(t->cpumem[i].self, self[i]);
        ck_assert_int_eq(t->cpumem[i].total, total[i]);
    }
}
END_TEST

struct want {
    const char *key;
    uint64_t count;
    int64_t self, total;
};

static void rows_are(enum opp_sort_key sort, const struct want *w, size_t n)
{
    struct opp_agg_opts o = {.sort = sort};
    struct opp_agg a;
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    ck_assert_int_eq(a.cpu_mem, 1);
    ck_assert_uint_eq(a.nrows, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_str_eq(a.rows[i].key, w[i].key);
        ck_assert_uint_eq(a.rows[i].count, w[i].count);
        ck_assert_int_eq(a.rows[i].self_cpu_memory_usage, w[i].self);
        ck_assert_int_eq(a.rows[i].cpu_memory_usage, w[i].total);
    }
    opp_agg_free(&a);
}

START_TEST(rows_and_the_memory_row)
{
    /* The allocations inside operators are theirs; "[memory]" holds the six
     * outside every operator (torch's top-level memory events). */
    const struct want w[] = {
        {"step", 1, 512, 1280}, {"matmul", 2, 768, 768}, {"[memory]", 6, -860, -860}};
    rows_are(OPP_SORT_CPU_MEMORY_USAGE, w, 3);
}
END_TEST

START_TEST(sort_by_cpu_memory)
{
    const struct want self[] = {
        {"matmul", 2, 768, 768}, {"step", 1, 512, 1280}, {"[memory]", 6, -860, -860}};
    rows_are(OPP_SORT_SELF_CPU_MEMORY_USAGE, self, 3);
    ck_assert_int_eq(opp_sort_key_unit(OPP_SORT_CPU_MEMORY_USAGE), OPP_UNIT_BYTES);
    ck_assert_int_eq(opp_sort_key_unit(OPP_SORT_SELF_CPU_MEMORY_USAGE), OPP_UNIT_BYTES);
}
END_TEST

START_TEST(table_shows_cpu_memory)
{
    char *out, *err;
    char *argv[] = {"report", trace, "--sort", "cpu_memory_usage", NULL};
    ck_assert_int_eq(tu_call(cmd_report, argv, dir, &out, &err), 0);
    ck_assert_str_eq(
        out, "2 processes added up (the whole job's cost): --pid PID for one, --by-process for "
             "each\n"
             "------------  ------------  ------------  ------------  ------------  ------------  "
             "------------  ------------  ------------  \n"
             "        Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg  "
             "     CPU Mem  Self CPU Mem    # of Calls  \n"
             "------------  ------------  ------------  ------------  ------------  ------------  "
             "------------  ------------  ------------  \n"
             "        step        44.44%       4.000us       100.00%       9.000us       9.000us  "
             "     1.25 Kb         512 b             1  \n"
             "      matmul        55.56%       5.000us        55.56%       5.000us       2.500us  "
             "       768 b         768 b             2  \n"
             "    [memory]         0.00%       0.000us         0.00%       0.000us       0.000us  "
             "      -860 b        -860 b             6  \n"
             "------------  ------------  ------------  ------------  ------------  ------------  "
             "------------  ------------  ------------  \n"
             "Self CPU time total: 9.000us\n");
    ck_assert_str_eq(err, "");
    free(out), free(err);
}
END_TEST

/* A worker's free of a block, its thread first in the file, before the
 * main thread's allocation of it (512 B), which it allocates again (128 B)
 * and frees. */
static void write_frees_first(const char *t)
{
    struct tb b;
    tb_open(&b, t);
    tb_process(&b, .proc = 0, .pid = 10, .exe = "python3");
    funcs(&b);
    tb_thread(&b, 101, "worker");
    tb_events(&b, FREE(2000, 0x1000, 1), TB_CALL(F_MATMUL, 1900, 2100, 0));
    tb_thread(&b, 100, "main");
    tb_events(&b, ALLOC(1500, 0x1000, 512, 1), ALLOC(3000, 0x1000, 128, 1), FREE(3500, 0x1000, 1),
              TB_CALL(F_STEP, 1000, 4000, 0));
    tb_end(&b);
}

/* A large trace's table adds calls up as it streams (a summary): a free
 * read before its allocation (the worker's records were handed over
 * first) still takes the allocation's size, found in time order as here;
 * so does a free of an address allocated again later. The same table as
 * every call loaded. */
START_TEST(streamed_frees_before_allocations)
{
    char *t = tu_path(dir, "order.trace");
    write_frees_first(t);
    char *a[] = {"report", t, "--no-stream", NULL}, *c[] = {"report", t, "--stream", NULL};
    char *oc, *d = tu_call_differ(cmd_report, a, c, dir, NULL, NULL, NULL);
    ck_assert_msg(!d, "%s", d);
    char *e;
    ck_assert_int_eq(tu_call(cmd_report, c, dir, &oc, &e), 0);
    /* step: +512 +128 -128; the worker's matmul: -512 */
    ck_assert_msg(strstr(oc, "      step        93.75%       3.000us        93.75%       3.000us"
                             "       3.000us         512 b         512 b             1  \n"),
                  "%s", oc);
    ck_assert_msg(strstr(oc, "    matmul         6.25%       0.200us         6.25%       0.200us"
                             "       0.200us        -512 b        -512 b             1  \n"),
                  "%s", oc);
    free(oc), free(e), free(t);
}
END_TEST

/* The same trace summarised: the frees, read before their allocations,
 * are sized in time order before the calls are added up (owned_ops.h),
 * so the summary's CPU memory is the full trace's. */
START_TEST(summarized_frees_before_allocations)
{
    char *t = tu_path(dir, "order.trace"), *s = tu_path(dir, "order.sum");
    write_frees_first(t);
    char *o, *e;
    char *sa[] = {"summarize", t, "-o", s, NULL};
    ck_assert_int_eq(tu_call(cmd_summarize, sa, dir, &o, &e), 0);
    free(o), free(e);
    char *ra[] = {"report", s, "-f", "csv", NULL};
    ck_assert_int_eq(tu_call(cmd_report, ra, dir, &o, &e), 0);
    /* step: +512 +128 -128; the worker's matmul: -512 */
    ck_assert_str_eq(o, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,"
                        "flops,self_cpu_memory_usage,cpu_memory_usage\n"
                        "step,app,1,3.000,3.000,3.000,0,512,512\n"
                        "matmul,app,1,0.200,0.200,0.200,0,-512,-512\n");
    free(o), free(e), free(t), free(s);
}
END_TEST

/* A process's CPU memory calls on two threads, the frees' thread first
 * in the file: 70,000 frees, each of an allocation of 16 bytes made
 * before it on the other thread (past the sorts' memory: they spill). */
static char *unordered_frees(void)
{
    enum { N = 70000, CHUNK = 4096 };
    char *t = tu_path(dir, "frees.trace");
    struct tb b;
    tb_open(&b, t);
    tb_process(&b, .proc = 0, .pid = 10, .exe = "python3");
    funcs(&b);
    struct tb_ev *ev = calloc(CHUNK, sizeof *ev);
    ck_assert_ptr_nonnull(ev);
    for (int th = 0; th < 2; th++) { /* the frees' thread first in the file */
        tb_thread(&b, th ? 100 : 101, NULL);
        for (int i = 0; i < N;) {
            int n = 0;
            for (; n < CHUNK && i < N; n++, i++) {
                uint64_t at = th ? 10 + (uint64_t)i : 1000000 + (uint64_t)i;
                ev[n] = (struct tb_ev){th ? F_ALLOC : F_FREE, at, at, 0, .nargs = 3,
                                       .args = {th ? OPP_MEM_ALLOC : OPP_MEM_FREE,
                                                0x1000 + 16 * (uint64_t)i, th ? 16 : 0}};
            }
            tb_put_events(&b, 0, ev, (size_t)n);
        }
    }
    free(ev);
    tb_end(&b);
    return t;
}

/* No room in TMPDIR (here a file size limit) does not keep the table
 * from ordering the CPU memory calls of a process that has them on two
 * threads, frees first in the file: it sizes them as it reads (one pass,
 * table_stream.h), --stream and --no-stream alike, each free given its
 * allocation's 16 bytes. */
START_TEST(unordered_frees_without_room)
{
    char *t = unordered_frees();
    struct rlimit old, lim;
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 1 << 20;
    void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    char *a[] = {"report", t, "--tid", "101", "-f", "csv", NULL},
         *l[] = {"report", t, "--tid", "101", "-f", "csv", "--no-stream", NULL},
         *c[] = {"report", t, "--tid", "101", "-f", "csv", "--stream", NULL};
    char *oa, *ea, *d = tu_call_differ(cmd_report, a, l, dir, NULL, NULL, NULL);
    char *d2 = tu_call_differ(cmd_report, a, c, dir, NULL, NULL, NULL);
    int rc = tu_call(cmd_report, a, dir, &oa, &ea);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, was);
    ck_assert_msg(!d, "%s", d);
    ck_assert_msg(!d2, "%s", d2);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(ea, "");
    /* the frees: 70,000 of 16 bytes each, all sized */
    ck_assert_str_eq(oa, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,"
                         "flops,self_cpu_memory_usage,cpu_memory_usage\n"
                         "[memory],c10,70000,0.000,0.000,0.000,0,-1120000,-1120000\n");
    free(oa), free(ea), free(t);
}
END_TEST

/* The same trace summarised: with room, the frees are sized in time
 * order before the calls are added up (owned_ops.h); with no room in
 * TMPDIR for that sort, the summary still comes, its frees looked up by
 * address in the file's order as summary mode does (each read before
 * its allocation: none sized), and the command says so. */
START_TEST(summarized_unordered_frees_with_and_without_room)
{
    char *t = unordered_frees(), *s = tu_path(dir, "frees.sum");
    char *nowhere = tu_path(dir, "no/such/dir");
    /* by room: the frees unsized, then each taking its allocation's 16 bytes */
    static const char *const want[] = {
        "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,"
        "flops,self_cpu_memory_usage,cpu_memory_usage\n"
        "[memory],c10,140000,0.000,0.000,0.000,0,1120000,1120000\n",
        "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,"
        "flops,self_cpu_memory_usage,cpu_memory_usage\n"
        "[memory],c10,140000,0.000,0.000,0.000,0,0,0\n"};
    for (int room = 1; room >= 0; room--) {
        if (!room)
            setenv("TMPDIR", nowhere, 1);
        char *o, *e, *said;
        char *sa[] = {"summarize", t, "-o", s, NULL};
        int rc = tu_call(cmd_summarize, sa, dir, &o, &e);
        unsetenv("TMPDIR");
        ck_assert_msg(rc == 0, "%s", e);
        if (room)
            ck_assert_int_gt(asprintf(&said, "opprof summarize: 140000 calls into %s\n", s), 0);
        else
            ck_assert_int_gt(asprintf(&said,
                                      "opprof summarize: 140000 calls into %s\n"
                                      "opprof summarize: CPU frees out of time order in %s could "
                                      "not be ordered (no room for temporary files in TMPDIR): "
                                      "those read before their allocations have no size in %s\n",
                                      s, t, s),
                             0);
        ck_assert_str_eq(e, said);
        free(o), free(e), free(said);
        char *ra[] = {"report", s, "-f", "csv", NULL};
        ck_assert_int_eq(tu_call(cmd_report, ra, dir, &o, &e), 0);
        ck_assert_str_eq(o, want[room]);
        free(o), free(e);
    }
    free(t), free(s), free(nowhere);
}
END_TEST

START_TEST(table_without_cpu_memory_above_zero)
{
    /* like torch: no column when no row has Self CPU Mem above 0 (the
     * worker only frees) */
    char *out, *err;
    char *argv[] = {"report", trace, "--tid", "101", NULL};
    ck_assert_int_eq(tu_call(cmd_report, argv, dir, &out, &err), 0);
    ck_assert_ptr_null(strstr(out, "Mem"));
    ck_assert_ptr_nonnull(strstr(out, "    [memory]  "));
    ck_assert_ptr_nonnull(strstr(out, "  3  \n"));
    free(out), free(err);
}
END_TEST

/* A row whose own frees outweigh its own allocations (Self CPU Mem < 0)
 * but whose operators inside keep memory (CPU Mem > 0), alone in the
 * table (--match): the columns show, as CPU memory was allocated. */
START_TEST(table_shows_cpu_memory_of_children)
{
    char *t = tu_path(dir, "child.trace");
    struct tb b;
    tb_open(&b, t);
    tb_process(&b, .proc = 0, .pid = 10, .exe = "python3");
    funcs(&b);
    tb_thread(&b, 100, "main");
    /* step: its matmul +1024 +256, its own free of the 1024: self -1024, total +256 */
    tb_events(&b, ALLOC(2500, 0x1000, 1024, 2), ALLOC(2600, 0x2000, 256, 2),
              TB_CALL(F_MATMUL, 2000, 5000, 1), FREE(6000, 0x1000, 1),
              TB_CALL(F_STEP, 1000, 10000, 0));
    tb_end(&b);
    char *out, *err;
    char *argv[] = {"report", t, "--match", "step", NULL};
    ck_assert_int_eq(tu_call(cmd_report, argv, dir, &out, &err), 0);
    ck_assert_str_eq(
        out, "--------  ------------  ------------  ------------  ------------  ------------  "
             "------------  ------------  ------------  \n"
             "    Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg  "
             "     CPU Mem  Self CPU Mem    # of Calls  \n"
             "--------  ------------  ------------  ------------  ------------  ------------  "
             "------------  ------------  ------------  \n"
             "    step        66.67%       6.000us       100.00%       9.000us       9.000us  "
             "       256 b      -1.00 Kb             1  \n"
             "--------  ------------  ------------  ------------  ------------  ------------  "
             "------------  ------------  ------------  \n"
             "Self CPU time total: 6.000us of 9.000us before --match (the percentages' base)\n");
    ck_assert_str_eq(err, "");
    free(out), free(err), free(t);
}
END_TEST

START_TEST(csv_and_json_fields)
{
    struct opp_agg_opts o = {.sort = OPP_SORT_CPU_MEMORY_USAGE};
    struct opp_out_opts oo = {0};
    struct opp_agg a;
    char *out;
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    CAPTURE(out, opp_out_csv(f, &a, &oo));
    ck_assert_str_eq(out, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,"
                          "flops,self_cpu_memory_usage,cpu_memory_usage\n"
                          "step,app,1,4.000,9.000,9.000,0,512,1280\n"
                          "matmul,app,2,5.000,5.000,2.500,0,768,768\n"
                          "[memory],c10,6,0.000,0.000,0.000,0,-860,-860\n");
    free(out);
    CAPTURE(out, opp_out_json(f, "mem.trace", m, &a, &oo));
    ck_assert_ptr_nonnull(
        strstr(out, "{\"key\": \"step\", \"lib\": \"app\", \"count\": 1, \"self_cpu_time_total\": "
                    "4.000, \"cpu_time_total\": 9.000, \"cpu_time\": 9.000, \"flops\": 0, "
                    "\"self_cpu_memory_usage\": 512, \"cpu_memory_usage\": 1280}"));
    ck_assert_ptr_nonnull(strstr(out, "\"flops\": 0, \"self_cpu_memory_usage\": -860, "
                                      "\"cpu_memory_usage\": -860}\n  ],"));
    free(out);
    opp_agg_free(&a);
}
END_TEST

static struct opp_pass *mem_pass; /* mem_read's, freed by mem_done */

/* The memory timeline over a pass of trace, read for series which with
 * its operators, in *l. */
static struct opp_mem_stream *mem_read(const char *path, int64_t which, struct opp_memline *l,
                                       int *found)
{
    char err[256];
    struct opp_mem_stream *ms = opp_mem_stream_over(mem_pass = tu_pass_open(path), err, sizeof err);
    ck_assert_msg(ms != NULL, "%s", err);
    ck_assert_int_eq(opp_mem_stream_read(ms, 1, 1, err, sizeof err), 0);
    *found = opp_mem_stream_find(ms, which, l);
    return ms;
}

static void mem_done(struct opp_mem_stream *ms)
{
    opp_mem_stream_free(ms);
    opp_pass_free(mem_pass);
}

START_TEST(timeline_of_the_cpu)
{
    /* every process's allocations and frees by time */
    struct opp_memline s, first, dev;
    int found;
    struct opp_mem_stream *ms = mem_read(trace, OPP_MEM_CPU, &s, &found);
    ck_assert_int_eq(found, 1);
    ck_assert_int_eq(s.cpu, 1);
    ck_assert_int_eq(opp_mem_stream_find(ms, OPP_MEM_FIRST, &first), 1); /* no device: the CPU */
    ck_assert_int_eq(first.cpu, 1);
    ck_assert_int_eq(opp_mem_stream_find(ms, 0, &dev), 0);
    ck_assert_uint_eq(s.npts, 11);
    ck_assert_int_eq(s.peak, 2048);
    ck_assert_int_eq(s.final, 420);
    char *out;
    CAPTURE(out, opp_export_memory_json(ms, &s, f));
    ck_assert_str_eq(out, "[[0.000, 1.000, 1.500, 2.500, 5.500, 9.500, 10.500, 10.700, 11.000, "
                          "11.500, 12.000], [[512], [1536], [2048], [1024], [1280], [1380], "
                          "[868], [356], [356], [356], [420]]]\n");
    free(out);
    CAPTURE(out, opp_export_memory_svg(ms, &s, "mem.trace", f));
    ck_assert_ptr_nonnull(strstr(out, ">mem.trace (CPU)</text>"));
    ck_assert_ptr_nonnull(strstr(out, ">peak 2.00 Kb at 1.500us</text>"));
    ck_assert_ptr_nonnull(strstr(out, ">allocated at the end: 420 b;"));
    /* allocations by the operator open on the thread, else "[memory]" */
    const char *top = strstr(out, ">1.75 Kb in 3 allocations: matmul</text>");
    const char *second = strstr(out, ">512 b in 1 allocation: step</text>");
    const char *third = strstr(out, ">164 b in 2 allocations: [memory]</text>");
    ck_assert(top && second && third && top < second && second < third);
    free(out);
    mem_done(ms);
}
END_TEST

START_TEST(export_memory_device_cpu)
{
    char *out, *err, *json = tu_path(dir, "m.json");
    char *argv[] = {"export", "memory", trace, "--device", "cpu", "-o", json, NULL};
    ck_assert_int_eq(tu_call(cmd_export, argv, dir, &out, &err), 0);
    char *j = tu_slurp(json);
    ck_assert_ptr_nonnull(j);
    ck_assert_ptr_nonnull(strstr(j, "[[512], [1536], [2048]"));
    free(j), free(out), free(err);
    char *bad[] = {"export", "memory", trace, "--device", "gpu", NULL};
    ck_assert_int_eq(tu_call(cmd_export, bad, dir, &out, &err), 2);
    ck_assert_str_eq(err, "opprof export: --device wants a number or cpu, not 'gpu'\n");
    free(out), free(err), free(json);
}
END_TEST

/* A trace without MEMORY events: no CPU series, no fields. */
START_TEST(no_memory_events)
{
    char *path = tu_path(dir, "plain.trace"), err[256];
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 0, .pid = 10, .exe = "p");
    funcs(&b);
    tb_thread(&b, 10, NULL);
    tb_events(&b, TB_CALL(F_STEP, 0, 100, 0));
    tb_end(&b);
    struct opp_model *p = tu_model_load(path, err, sizeof err);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(opp_model_has_cpu_mem(p), 0);
    ck_assert_ptr_null(p->threads[0].cpumem);
    struct opp_agg_opts o = {0};
    struct opp_out_opts oo = {0};
    struct opp_agg a;
    char *out;
    ck_assert_int_eq(tu_aggregate(p, &o, &a), 0);
    ck_assert_int_eq(a.cpu_mem, 0);
    CAPTURE(out, opp_out_csv(f, &a, &oo));
    ck_assert_str_eq(out, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,"
                          "flops\nstep,app,1,0.100,0.100,0.100,0\n");
    free(out);
    opp_agg_free(&a);
    opp_model_free(p);
    struct opp_memline l;
    int found;
    mem_done(mem_read(path, OPP_MEM_FIRST, &l, &found));
    ck_assert_int_eq(found, 0);
    mem_done(mem_read(path, OPP_MEM_CPU, &l, &found));
    ck_assert_int_eq(found, 0);
    char *o2, *e2, *argv[] = {"export", "memory", path, NULL};
    ck_assert_int_eq(tu_call(cmd_export, argv, dir, &o2, &e2), 1);
    char want[600];
    snprintf(want, sizeof want, "opprof export: %s has no memory records\n", path);
    ck_assert_str_eq(e2, want);
    free(o2), free(e2), free(path);
}
END_TEST

/* torch's _remove_dup_nodes: an op whose only child is itself folds, the
 * allocations inside either not counting as children (torch sums them into
 * the op); they then belong to the outer op. */
START_TEST(fold_ignores_memory_children)
{
    char *path = tu_path(dir, "torch.trace"), err[256];
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 0, .pid = 10, .exe = "python3");
    tb_funcs(&b, {OPP_OP_TORCH, 0, "torch", "op"},
             {OPP_OP_MEMORY, 0, "c10", "_ZN3c109alloc_cpuEm"});
    tb_thread(&b, 10, NULL);
    tb_events(&b, TB_CALL(1, 150, 150, 1, OPP_MEM_ALLOC, 0x10, 64),
              TB_CALL(1, 250, 250, 2, OPP_MEM_ALLOC, 0x20, 32),
              TB_CALL(0, 200, 300, 1, OPP_STR_PRELOAD, OPP_TORCH_SCOPE_FUNCTION, 0),
              TB_CALL(0, 100, 400, 0, OPP_STR_PRELOAD, OPP_TORCH_SCOPE_FUNCTION, 0));
    tb_string(&b, OPP_STR_PRELOAD, "aten::div_");
    tb_end(&b);
    struct opp_model *p = tu_model_load(path, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    const struct opp_thread *t = &p->threads[0];
    ck_assert_uint_eq(t->nevents, 3);
    ck_assert_str_eq(opp_model_str(p, t->events[0].name), "aten::div_");
    ck_assert_uint_eq(t->events[1].parent, 0);
    ck_assert_uint_eq(t->events[2].parent, 0);
    ck_assert_int_eq(t->cpumem[0].self, 96);
    ck_assert_int_eq(t->cpumem[0].total, 96);
    opp_model_free(p);
    free(path);
}
END_TEST

/* The live blocks that size CPU frees, when memory runs out at a block's
 * first put: its entry, the hash table or the table's buckets (the
 * first, second and third allocation) failing is -1 with nothing kept,
 * never the tool's exit; the next put keeps it. */
START_TEST(live_blocks_out_of_memory)
{
    struct opp_live l = {0};
    int found;
    for (long k = 0; k < 3; k++) {
        tu_alloc_fail(k, 0);
        int rc = opp_live_put(&l, 1, 0x10, 4096);
        ck_assert_int_eq(tu_alloc_failed(), 1);
        ck_assert_int_eq(rc, -1);
        ck_assert_ptr_null(l.h);
    }
    ck_assert_int_eq(opp_live_put(&l, 1, 0x10, 4096), 0);
    ck_assert_int_eq(opp_live_take(&l, 1, 0x10, &found), 4096);
    ck_assert_int_eq(found, 1);
    opp_live_free(&l);
}
END_TEST

Suite *suite_cpu_memory(void)
{
    Suite *s = suite_create("cpu_memory");
    TCase *tc = tcase_create("cpu_memory");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, memory_events_named_and_nested);
    tcase_add_test(tc, free_takes_its_allocation_size);
    tcase_add_test(tc, self_and_total_per_event);
    tcase_add_test(tc, rows_and_the_memory_row);
    tcase_add_test(tc, sort_by_cpu_memory);
    tcase_add_test(tc, table_shows_cpu_memory);
    tcase_add_test(tc, streamed_frees_before_allocations);
    tcase_add_test(tc, summarized_frees_before_allocations);
    tcase_add_test(tc, summarized_unordered_frees_with_and_without_room);
    tcase_add_test(tc, unordered_frees_without_room);
    tcase_add_test(tc, table_without_cpu_memory_above_zero);
    tcase_add_test(tc, table_shows_cpu_memory_of_children);
    tcase_add_test(tc, csv_and_json_fields);
    tcase_add_test(tc, timeline_of_the_cpu);
    tcase_add_test(tc, export_memory_device_cpu);
    tcase_add_test(tc, no_memory_events);
    tcase_add_test(tc, fold_ignores_memory_children);
    tcase_add_test(tc, live_blocks_out_of_memory);
    suite_add_tcase(s, tc);
    return s;
}
