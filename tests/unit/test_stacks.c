/* Code stacks in the trace format: the event flag OPP_EV_STACK (encoder,
 * reader, SAME compares the stack too), format 2 files still read with 3
 * flag bits, and STACK/MODULE records symbolized from an ELF file (this
 * test binary's own .symtab). */
#include <check.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"
#include "analysis/codestack_tree.h"
#include "analysis/model.h"
#include "analysis/symbolize.h"
#include "failalloc.h"
#include "testutil.h"
#include "tracebuild.h"

__attribute__((noinline)) int opp_test_stack_marker(int x);
__attribute__((noinline)) int opp_test_stack_marker(int x)
{
    __asm__ volatile("" ::: "memory");
    return x * 3 + 1;
}

static int first_bias(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    *(uint64_t *)ctx = info->dlpi_addr;
    return 1; /* the program is first */
}

static void header(struct tb *b, const char *path)
{
    tb_open(b, path);
    tb_process(b, .proc = 0, .pid = 10, .ppid = 1, .parent = UINT32_MAX, .real = 1,
               .exe = "/usr/bin/app", .argv = {"app"});
    tb_funcs(b, {OPP_OP_PLAIN, OPP_DT_NONE, "blas", "f0"}, {OPP_OP_PLAIN, OPP_DT_NONE, "blas", "f1"});
    tb_thread(b, 10, "app");
}

static const struct opp_event *ev(const struct opp_model *m, size_t i)
{
    ck_assert_uint_eq(m->nthreads, 1);
    ck_assert_uint_gt(m->threads[0].nevents, i);
    return &m->threads[0].events[i];
}

/* SAME compares the stack too: a repeat with the same stack is 5 bytes,
 * one with another stack a whole event. */
START_TEST(stack_part_of_same)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "t.trace");
    struct tb b;
    header(&b, path);
    struct opp_ev_enc *e = tb_enc(&b, 0);
    const uint64_t a[] = {7};
    ck_assert_int_eq(opp_ev_add_stack(e, 1, 0, 1000, 2000, 0, 1, a, 5), 0);
    size_t before = e->w.len;
    ck_assert_int_eq(opp_ev_add_stack(e, 1, 0, 3000, 4000, 0, 1, a, 5), 0);
    ck_assert_uint_eq(e->w.len - before, 5); /* SAME: head, end delta (2 bytes), duration (2) */
    before = e->w.len;
    ck_assert_int_eq(opp_ev_add_stack(e, 1, 0, 5000, 6000, 0, 1, a, 6), 0);
    ck_assert_uint_eq(e->w.len - before, 9); /* another stack: not SAME */
    ck_assert_int_eq(opp_ev_add_stack(e, 1, 0, 7000, 8000, 0, 0, NULL, 0), 0);
    ck_assert_int_eq(opp_ev_add_stack(e, 0, 0, 9000, 10000, 0, 0, NULL, 300), 0);
    tb_enc_write(&b);
    tb_end(&b);
    tu_rmdir(dir);
    free(dir), free(path);
}
END_TEST

/* A format 2 file: 3 flag bits, no stacks. Its head 1 << 3 | ARGS would
 * read as function 0 with ARGS|STACK under format 3's 4 bits. */
START_TEST(stack_v2_file_reads_three_bits)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "t.trace");
    struct tb b;
    header(&b, path);
    struct opp_ev_enc *e = tb_enc(&b, 0);
    const uint64_t v[] = {1u << 3 | OPP_EV_ARGS, 2000, 1000, 0, 1, 42, /* f1(42) */
                          0u << 3, 2000, 500, 0};                       /* f0() */
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        opp_put_varint(&e->w, v[i]);
    e->count = 2;
    tb_enc_write(&b);
    tb_end(&b);
    tb_set_version(path, 2);

    struct opp_model *m = tu_load(path);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->sum.version, 2);
    ck_assert(m->sum.complete);
    ck_assert_uint_eq(m->threads[0].nevents, 2);
    ck_assert_str_eq(opp_model_str(m, ev(m, 0)->name), "f1");
    ck_assert_uint_eq(ev(m, 0)->nargs, 1);
    ck_assert_uint_eq(m->threads[0].args[ev(m, 0)->args], 42);
    ck_assert_uint_eq(ev(m, 0)->stack, 0);
    ck_assert_uint_eq(ev(m, 0)->end_ns - ev(m, 0)->begin_ns, 1000);
    ck_assert_str_eq(opp_model_str(m, ev(m, 1)->name), "f0");
    ck_assert_uint_eq(ev(m, 1)->nargs, 0);
    ck_assert_uint_eq(ev(m, 1)->stack, 0);
    opp_model_free(m);
    tu_rmdir(dir);
    free(dir), free(path);
}
END_TEST

/* The module (this binary), stack 5 (a return address inside the marker,
 * then one in no module), and f1(7) three times with stacks 5, 5 and 6, f1()
 * without one, f0() with stack 300 (no STACK record). */
static char *dir;
static struct opp_model *m;

static void setup(void)
{
    dir = tu_tmpdir();
    char *path = tu_path(dir, "t.trace");
    struct tb b;
    header(&b, path);
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ck_assert_int_gt(n, 0);
    exe[n] = 0;
    uint64_t bias = 0;
    dl_iterate_phdr(first_bias, &bias);
    tb_string(&b, OPP_STR_PRELOAD, exe);
    tb_module(&b, bias, bias, (uint64_t)(uintptr_t)opp_test_stack_marker + 0x1000000,
              OPP_STR_PRELOAD);
    tb_stack(&b, 5, (uint64_t)(uintptr_t)opp_test_stack_marker + 1, 0x10);
    tb_events(&b, {1, 1000, 2000, 0, .stack = 5, .nargs = 1, .args = {7}},
              {1, 3000, 4000, 0, .stack = 5, .nargs = 1, .args = {7}},
              {1, 5000, 6000, 0, .stack = 6, .nargs = 1, .args = {7}}, TB_CALL(1, 7000, 8000, 0),
              {0, 9000, 10000, 0, .stack = 300});
    tb_end(&b);
    m = tu_load(path);
    ck_assert_ptr_nonnull(m);
    free(path);
}

static void teardown(void)
{
    opp_model_free(m);
    m = NULL;
    tu_rmdir(dir);
    free(dir);
}

START_TEST(stack_ids_read_back)
{
    ck_assert_uint_eq(m->threads[0].nevents, 5);
    const uint32_t want_stack[] = {5, 5, 6, 0, 300};
    const char *want_name[] = {"f1", "f1", "f1", "f1", "f0"};
    const unsigned want_nargs[] = {1, 1, 1, 0, 0};
    for (size_t i = 0; i < 5; i++) {
        ck_assert_uint_eq(ev(m, i)->stack, want_stack[i]);
        ck_assert_str_eq(opp_model_str(m, ev(m, i)->name), want_name[i]);
        ck_assert_uint_eq(ev(m, i)->nargs, want_nargs[i]);
        if (want_nargs[i])
            ck_assert_uint_eq(m->threads[0].args[ev(m, i)->args], 7);
    }
}
END_TEST

START_TEST(stack_frames_symbolized)
{
    const char *fr[4];
    ck_assert_int_eq(opp_code_frames(m->code, 0, 5, fr, 4), 2);
    ck_assert_str_eq(fr[0], "opp_test_stack_marker");
    ck_assert_str_eq(fr[1], "0x10");
    ck_assert_int_eq(opp_code_frames(m->code, 0, 5, fr, 1), 1); /* at most max */
    ck_assert_int_eq(opp_code_frames(m->code, 0, 6, fr, 4), 0); /* no STACK record */
    ck_assert_int_eq(opp_code_frames(m->code, 0, 0, fr, 4), 0);
}
END_TEST

/* A STACK record when memory runs out at each of its allocations (the
 * code's, the stack's, the hash table's and its buckets'): -1, never the
 * tool's exit; the record then read again is kept. */
START_TEST(code_stack_out_of_memory)
{
    struct opp_gpu_rec g = {.type = OPP_GPU_STACK, .nfields = 3};
    g.f[OPP_GF_ST_ID] = 5;
    g.f[OPP_GF_ST_PC0] = 0x10;
    g.f[OPP_GF_ST_PC0 + 1] = 0x20;
    const char *fr[4];
    for (long k = 0; k < 4; k++) {
        struct opp_code *c = NULL;
        tu_alloc_fail(k, 0);
        int rc = opp_code_add(&c, 0, &g, NULL, NULL, NULL);
        ck_assert_int_eq(tu_alloc_failed(), 1);
        ck_assert_int_eq(rc, -1);
        ck_assert_int_eq(opp_code_frames(c, 0, 5, fr, 4), 0);
        ck_assert_int_eq(opp_code_add(&c, 0, &g, NULL, NULL, NULL), 0);
        ck_assert_int_eq(opp_code_frames(c, 0, 5, fr, 4), 2);
        ck_assert_str_eq(fr[0], "0x10"); /* innermost first */
        ck_assert_str_eq(fr[1], "0x20");
        opp_code_free(c);
    }
}
END_TEST

/* The code-frame tree when memory runs out at each allocation of its
 * first call that can be made to fail (the names' array, the name's
 * entry, their hash table and its buckets; then the nodes' array, their
 * first calls', the node's entry, table and buckets; the name's copy,
 * strdup's, cannot): -ENOMEM, never the tool's exit; the call then added
 * again makes the tree of one node as if nothing had failed. */
START_TEST(codetree_out_of_memory)
{
    const struct opp_codetree_call c = {.name = "aten::mm", .self_ns = 5, .total_ns = 7};
    for (long k = 0; k < 9; k++) {
        struct opp_codetree t;
        struct opp_codetree_acc *x = opp_codetree_acc_new(&t);
        ck_assert_ptr_nonnull(x);
        tu_alloc_fail(k, 0);
        int rc = opp_codetree_acc_add(x, NULL, &c);
        ck_assert_int_eq(tu_alloc_failed(), 1);
        ck_assert_int_eq(rc, -ENOMEM);
        ck_assert_int_eq(opp_codetree_acc_add(x, NULL, &c), 0);
        ck_assert_int_eq(opp_codetree_acc_finish(x), 0);
        ck_assert_uint_eq(t.ct.n, 1);
        ck_assert_uint_eq(t.nnames, 1);
        ck_assert_str_eq(t.names[t.ct.nodes[0].name], "aten::mm");
        ck_assert_uint_eq(t.ct.nodes[0].calls, 1);
        ck_assert_uint_eq(t.ct.nodes[0].self_ns, 5);
        ck_assert_uint_eq(t.ct.nodes[0].total_ns, 7);
        opp_codetree_free(&t);
    }
}
END_TEST

Suite *suite_stacks(void)
{
    Suite *s = suite_create("stacks");
    TCase *tc = tcase_create("format");
    tcase_add_test(tc, stack_part_of_same);
    tcase_add_test(tc, stack_v2_file_reads_three_bits);
    tcase_add_test(tc, code_stack_out_of_memory);
    tcase_add_test(tc, codetree_out_of_memory);
    suite_add_tcase(s, tc);
    TCase *read = tcase_create("read");
    tcase_add_checked_fixture(read, setup, teardown);
    tcase_add_test(read, stack_ids_read_back);
    tcase_add_test(read, stack_frames_symbolized);
    suite_add_tcase(s, read);
    return s;
}
