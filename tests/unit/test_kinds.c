/* Format 3's library operator kinds (common/ops.c): shapes, FLOPs, dtypes
 * and bytes from recorded argument values, the status flag, how the model
 * names NVTX ranges and lib::sub operators, and the merged call paths of
 * such a trace as folded stacks and a flame graph, with exact numbers. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/callpath_tree.h"
#include "exports/export.h"
#include "views/steps.h"
#include "views/tree_view.h"
#include "gpu.h"
#include "analysis/model.h"
#include "ops.h"
#include "testutil.h"
#include "tracebuild.h"
#include "oracle/loaded.h"

#define NN ('N' | 'N' << 8)
#define COUNT(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

static void shapes_are(uint32_t kind, const uint64_t *a, uint32_t n, const char *want)
{
    struct opp_shapes s;
    char buf[512];
    opp_op_shapes(kind, a, n, &s);
    ck_assert_int_eq(opp_shapes_format(&s, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, want);
}

START_TEST(gemm_batched_shapes_flops)
{
    /* cublasSgemmStridedBatched-like: M=64 N=32 K=16, batch 4 */
    const uint64_t g[] = {64, 32, 16, NN, 4};
    shapes_are(OPP_OP_GEMM, g, COUNT(g), "[[4, 64, 16], [4, 16, 32], [4, 64, 32]]");
    ck_assert_uint_eq(opp_op_flops(OPP_OP_GEMM, OPP_DT_F32, NULL, g, COUNT(g)),
                      2ull * 64 * 32 * 16 * 4);
    /* batch 0 or 1 is one matrix */
    const uint64_t g1[] = {64, 32, 16, NN, 1};
    shapes_are(OPP_OP_GEMM, g1, COUNT(g1), "[[64, 16], [16, 32], [64, 32]]");
    ck_assert_uint_eq(opp_op_flops(OPP_OP_GEMM, OPP_DT_F32, NULL, g1, COUNT(g1)),
                      2ull * 64 * 32 * 16);
}
END_TEST

START_TEST(gemm_status_first)
{
    const uint64_t g[] = {64, 32, 16, NN, 4};
    /* status first: the same operator, status 13 */
    uint32_t ks = OPP_OP_GEMM | OPP_OPK_STATUS;
    const uint64_t gs[] = {13, 64, 32, 16, NN, 4, OPP_DT_C64};
    shapes_are(ks, gs, COUNT(gs), "[[4, 64, 16], [4, 16, 32], [4, 64, 32]]");
    ck_assert_int_eq(opp_op_status(ks, gs, COUNT(gs)), 13);
    ck_assert_int_eq(opp_op_status(OPP_OP_GEMM, g, COUNT(g)), 0);
}
END_TEST

START_TEST(gemm_recorded_type_overrides)
{
    uint32_t ks = OPP_OP_GEMM | OPP_OPK_STATUS;
    const uint64_t gs[] = {13, 64, 32, 16, NN, 4, OPP_DT_C64};
    /* the A/B type recorded overrides the function's: complex, 8 per MAC */
    ck_assert_uint_eq(opp_op_dtype(ks, OPP_DT_F32, gs, COUNT(gs)), OPP_DT_C64);
    ck_assert_uint_eq(opp_op_flops(ks, OPP_DT_F32, NULL, gs, COUNT(gs)), 8ull * 64 * 32 * 16 * 4);
}
END_TEST

START_TEST(gemm_status_alone)
{
    uint32_t ks = OPP_OP_GEMM | OPP_OPK_STATUS;
    const uint64_t gs[] = {13, 64, 32, 16, NN, 4, OPP_DT_C64};
    /* only the status: nothing else */
    shapes_are(ks, gs, 1, "[]");
    ck_assert_uint_eq(opp_op_flops(ks, OPP_DT_F32, NULL, gs, 1), 0);
    shapes_are(ks, gs, 0, "[]");
    ck_assert_int_eq(opp_op_status(ks, gs, 0), 0);
}
END_TEST

START_TEST(tensors_convolution)
{
    /* conv 3x3 pad 1: x [2,3,8,8], w [4,3,3,3], y [2,4,8,8] */
    const uint64_t c[] = {OPP_SUB_CONV, 0, 3, 4, 2, 3, 8, 8, 4, 4, 3, 3, 3, 4, 2, 4, 8, 8};
    shapes_are(OPP_OP_TENSORS, c, COUNT(c), "[[2, 3, 8, 8], [4, 3, 3, 3], [2, 4, 8, 8]]");
    /* 2*N*K*C*R*S*P*Q = 2*2*4*3*3*3*8*8 */
    ck_assert_uint_eq(opp_op_flops(OPP_OP_TENSORS, OPP_DT_F32, NULL, c, COUNT(c)), 27648);
    /* grouped (g=2), oneDNN's 5-D weights [G, K/G, C/G, R, S]: x [1,4,5,5],
     * w [2,3,2,3,3], y [1,6,3,3]: 2*N*K*(C/g)*R*S*P*Q = 2*1*6*2*3*3*3*3 */
    const uint64_t cg[] = {OPP_SUB_CONV, 0, 3, 4, 1, 4, 5, 5, 5, 2, 3, 2, 3, 3, 4, 1, 6, 3, 3};
    ck_assert_uint_eq(opp_op_flops(OPP_OP_TENSORS, OPP_DT_F32, NULL, cg, COUNT(cg)), 1944);
    /* backward data lists (dx, w, dy): the forward's count */
    uint64_t cb[COUNT(c)];
    memcpy(cb, c, sizeof c);
    cb[0] = OPP_SUB_CONV_BWD_DATA;
    ck_assert_uint_eq(opp_op_flops(OPP_OP_TENSORS, OPP_DT_F32, NULL, cb, COUNT(cb)), 27648);
}
END_TEST

START_TEST(tensors_matmul)
{
    /* batched matmul [2,5,6] x [2,6,7] = [2,5,7]: 2*70*6 */
    const uint64_t mm[] = {OPP_SUB_MATMUL, OPP_DT_BF16, 3, 3, 2, 5, 6, 3, 2, 6, 7, 3, 2, 5, 7};
    ck_assert_uint_eq(opp_op_flops(OPP_OP_TENSORS, OPP_DT_F32, NULL, mm, COUNT(mm)), 840);
    ck_assert_uint_eq(opp_op_dtype(OPP_OP_TENSORS, OPP_DT_F32, mm, COUNT(mm)), OPP_DT_BF16);
}
END_TEST

START_TEST(tensors_inner_product)
{
    /* inner product src [8,16], w [10,16], dst [8,10]: 2*8*10*16 */
    const uint64_t ip[] = {OPP_SUB_INNER_PRODUCT, 0, 3, 2, 8, 16, 2, 10, 16, 2, 8, 10};
    ck_assert_uint_eq(opp_op_flops(OPP_OP_TENSORS, OPP_DT_F32, NULL, ip, COUNT(ip)), 2560);
    ck_assert_uint_eq(opp_op_dtype(OPP_OP_TENSORS, OPP_DT_F32, ip, COUNT(ip)), OPP_DT_F32);
}
END_TEST

START_TEST(tensors_pooling_no_flops)
{
    /* no FLOPs for the rest */
    const uint64_t pool[] = {OPP_SUB_POOLING, 0, 2, 4, 1, 8, 4, 4, 4, 1, 8, 2, 2};
    shapes_are(OPP_OP_TENSORS, pool, COUNT(pool), "[[1, 8, 4, 4], [1, 8, 2, 2]]");
    ck_assert_uint_eq(opp_op_flops(OPP_OP_TENSORS, OPP_DT_F32, NULL, pool, COUNT(pool)), 0);
}
END_TEST

/* Recorded values are untrusted: short, lying or oversized lists give what
 * fits and never read past nargs. */
START_TEST(tensors_malformed)
{
    const uint64_t shortl[] = {OPP_SUB_CONV, 0, 3, 4, 2, 3};
    shapes_are(OPP_OP_TENSORS, shortl, COUNT(shortl), "[]");
    ck_assert_uint_eq(opp_op_flops(OPP_OP_TENSORS, 0, NULL, shortl, COUNT(shortl)), 0);
    const uint64_t lie[] = {OPP_SUB_MATMUL, 0, 1000, 1, 5};
    shapes_are(OPP_OP_TENSORS, lie, COUNT(lie), "[[5]]");
    const uint64_t deep[] = {OPP_SUB_NONE, 0, 1, 9, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    shapes_are(OPP_OP_TENSORS, deep, COUNT(deep), "[]");
    const uint64_t zero_dst[] = {OPP_SUB_CONV, 0, 3, 1, 1, 1, 1, 2, 0, 0};
    ck_assert_uint_eq(opp_op_flops(OPP_OP_TENSORS, 0, NULL, zero_dst, COUNT(zero_dst)), 0);
    shapes_are(OPP_OP_TENSORS, lie, 2, "[]");
    /* one tensor more than a call keeps: the first OPP_SHAPES_MAX */
    uint64_t many[3 + (OPP_SHAPES_MAX + 1) * 2] = {OPP_SUB_CONCAT, 0, OPP_SHAPES_MAX + 1};
    char want[OPP_SHAPES_MAX * 8 + 8] = "[";
    for (int i = 0; i <= OPP_SHAPES_MAX; i++) {
        many[3 + 2 * i] = 1, many[4 + 2 * i] = (uint64_t)i + 1;
        if (i < OPP_SHAPES_MAX)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s[%d]", i ? ", " : "", i + 1);
    }
    strcat(want, "]");
    shapes_are(OPP_OP_TENSORS, many, COUNT(many), want);
}
END_TEST

/* A torch op as the shim records it: name, scope, inputs covered, then per
 * input a tag and its dims; the external correlation id last. torch's
 * record_shapes order, [] for what is not a tensor. */
START_TEST(torch_inputs)
{
    const uint32_t k = OPP_OP_TORCH | OPP_OPK_EXTID;
    const uint64_t addmm[] = {0x80000001u, OPP_TORCH_SCOPE_FUNCTION, 5,
                              OPP_TIN_TAG(OPP_TIN_TENSOR, OPP_DT_F32, 1), 10,
                              OPP_TIN_TAG(OPP_TIN_TENSOR, OPP_DT_F32, 2), 16, 512,
                              OPP_TIN_TAG(OPP_TIN_TENSOR, OPP_DT_F32, 2), 512, 10,
                              OPP_TIN_TAG(OPP_TIN_SCALAR, 0, 0), OPP_TIN_TAG(OPP_TIN_SCALAR, 0, 0),
                              77 /* external id */};
    shapes_are(k, addmm, COUNT(addmm), "[[10], [16, 512], [512, 10], [], []]");
    ck_assert_uint_eq(opp_op_dtype(k, 0, addmm, COUNT(addmm)), OPP_DT_F32);
    ck_assert_uint_eq(opp_op_extid(k, addmm, COUNT(addmm)), 77);
    ck_assert_uint_eq(opp_op_flops(k, 0, NULL, addmm, COUNT(addmm)), 0); /* unnamed */
    ck_assert_uint_eq(opp_op_flops(k, 0, "aten::addmm", addmm, COUNT(addmm)), 2ull * 16 * 512 * 10);
    /* a label: no inputs; the first tensor gives the dtype, an undefined one none */
    const uint64_t label[] = {0x80000002u, OPP_TORCH_SCOPE_USER, 0, 0};
    shapes_are(k, label, COUNT(label), "[]");
    ck_assert_uint_eq(opp_op_dtype(k, OPP_DT_NONE, label, COUNT(label)), OPP_DT_NONE);
    const uint64_t mixed[] = {1, 0, 3, OPP_TIN_TAG(OPP_TIN_UNDEF, 0, 0), OPP_TIN_TAG(OPP_TIN_LIST, 0, 0),
                              OPP_TIN_TAG(OPP_TIN_TENSOR, OPP_DT_I64, 1), 16, 0};
    shapes_are(k, mixed, COUNT(mixed), "[[], [], [16]]");
    ck_assert_uint_eq(opp_op_dtype(k, 0, mixed, COUNT(mixed)), OPP_DT_I64);
    /* cut short or lying: what is whole */
    const uint64_t cut[] = {1, 0, 2, OPP_TIN_TAG(OPP_TIN_TENSOR, OPP_DT_F32, 2), 4, 5,
                            OPP_TIN_TAG(OPP_TIN_TENSOR, OPP_DT_F32, 3), 1, 0};
    shapes_are(k, cut, COUNT(cut), "[[4, 5]]");
    const uint64_t bad_tag[] = {1, 0, 2, OPP_TIN_TAG(OPP_TIN_SCALAR, 0, 0), 1ull << 40, 0};
    shapes_are(k, bad_tag, COUNT(bad_tag), "[[]]");
    const uint64_t none[] = {1};
    shapes_are(k, none, COUNT(none), "[]");
}
END_TEST

START_TEST(coll_bytes)
{
    uint32_t k = OPP_OP_COLL | OPP_OPK_STATUS;
    const uint64_t ar[] = {0, OPP_COLL_ALL_REDUCE, 1000, OPP_DT_F16, OPP_RED_SUM, 1, 4, UINT64_MAX};
    shapes_are(k, ar, COUNT(ar), "[[1000]]");
    ck_assert_uint_eq(opp_op_bytes(k, ar, COUNT(ar)), 2000);
    ck_assert_uint_eq(opp_op_flops(k, 0, NULL, ar, COUNT(ar)), 0);
    const uint64_t gs[] = {0, OPP_COLL_GROUP_START};
    shapes_are(k, gs, COUNT(gs), "[]");
    ck_assert_uint_eq(opp_op_bytes(k, gs, COUNT(gs)), 0);
    ck_assert_uint_eq(opp_op_bytes(OPP_OP_GEMM, ar, COUNT(ar)), 0);
}
END_TEST

START_TEST(kind_flags_valid)
{
    ck_assert(opp_kind_valid(OPP_OP_TENSORS | OPP_OPK_STATUS | OPP_OPK_SUBNAME));
    ck_assert(opp_kind_valid(OPP_OP_NVTX));
    ck_assert(!opp_kind_valid(OPP_OP_KIND_MAX + 1));
    ck_assert(opp_kind_valid(OPP_OP_GEMM | OPP_OPK_STATUS | OPP_OPK_EXTID));
    ck_assert(!opp_kind_valid(OPP_OP_GEMM | 0x800));
}
END_TEST

START_TEST(operation_names)
{
    ck_assert_str_eq(opp_op_kind_name(OPP_OP_COLL | OPP_OPK_STATUS), "coll");
    ck_assert_str_eq(opp_subop_name(OPP_SUB_CONV), "convolution");
    ck_assert_str_eq(opp_subop_name(OPP_SUB_GRAPH), "graph");
    ck_assert_ptr_null(opp_subop_name(OPP_SUB_MAX + 1));
    ck_assert_ptr_null(opp_subop_name(OPP_SUB_NONE));
    ck_assert_str_eq(opp_coll_name(OPP_COLL_REDUCE_SCATTER), "reduce_scatter");
    ck_assert_str_eq(opp_redop_name(OPP_RED_AVG), "avg");
}
END_TEST

START_TEST(dtype_names_and_sizes)
{
    ck_assert_str_eq(opp_dtype_name(OPP_DT_BF16), "bfloat16");
    ck_assert_str_eq(opp_dtype_name(OPP_DT_MAX + 1), "unknown");
    ck_assert_uint_eq(opp_dtype_size(OPP_DT_C128), 16);
    ck_assert_uint_eq(opp_dtype_size(OPP_DT_F8E4M3), 1);
}
END_TEST

START_TEST(nvtx_labels)
{
    char b[128];
    opp_nvtx_label(b, sizeof b, NULL, "aten::mm, seq = 3, op_id = 9, sizes = [[2, 2]]");
    ck_assert_str_eq(b, "aten::mm");
    opp_nvtx_label(b, sizeof b, "", "aten::add, op_id = 12");
    ck_assert_str_eq(b, "aten::add");
    opp_nvtx_label(b, sizeof b, "dom", "x, seq = y");
    ck_assert_str_eq(b, "dom:x, seq = y");
    opp_nvtx_label(b, sizeof b, "dom", NULL);
    ck_assert_str_eq(b, "dom:(unnamed range)");
}
END_TEST


/* A trace of one thread: function 0 an NVTX range, 1 a oneDNN-style
 * lib::sub operator, 2 cblas_dgemm; the strings as STRING records written
 * after the events (the model must not depend on their order). */
static void write_trace(const char *path, const char *const *strs, int nstrs, const struct tb_ev *ev,
                        int nev)
{
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 1, .pid = 10, .exe = "p");
    tb_funcs(&b, {OPP_OP_NVTX, 0, "nvtx", "nvtx_range"},
             {OPP_OP_TENSORS | OPP_OPK_STATUS | OPP_OPK_SUBNAME, OPP_DT_F32, "onednn",
              "dnnl_primitive_execute"},
             {OPP_OP_GEMM, OPP_DT_F64, "blas", "cblas_dgemm"});
    tb_thread(&b, 10, NULL);
    tb_put_events(&b, 0, ev, (size_t)nev);
    for (int i = 0; i < nstrs; i++)
        tb_string(&b, OPP_STR_PRELOAD + (uint64_t)i, strs[i]);
    tb_end(&b);
}

#define S(i) (OPP_STR_PRELOAD + (i))

/* A trace with an NVTX range (named by its STRING record, the ", seq = N"
 * of emit_nvtx dropped, a domain as prefix) and oneDNN-style operators
 * named lib::sub. */
START_TEST(model_names_events)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "k.trace");
    char err[256];
    const char *strs[] = {"aten::conv2d, seq = 12", "train", "aten::conv2d, seq = x"};
    const struct tb_ev ev[] = {
        TB_CALL(1, 100, 200, 1, 0, OPP_SUB_CONV, 0, 0),
        TB_CALL(1, 210, 220, 1, 0, OPP_SUB_ELTWISE, 0, 0),
        TB_CALL(1, 230, 240, 1, 0, 99),
        TB_CALL(0, 50, 300, 0, S(0), 0, 0, 0),
        TB_CALL(0, 400, 500, 0, S(0), S(1), 0, 0),
        TB_CALL(0, 600, 700, 0, S(2), 0, 0, 0),
        TB_CALL(0, 800, 900, 0, S(7), 0, 0, 0), /* never defined */
    };
    write_trace(path, strs, 3, ev, 7);

    struct opp_model *m = tu_model_load(path, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    ck_assert_uint_eq(m->nthreads, 1);
    const struct opp_thread *t = &m->threads[0];
    ck_assert_uint_eq(t->nevents, 7);
    const char *want[] = {"aten::conv2d", "onednn::convolution", "onednn::eltwise",
                          "dnnl_primitive_execute", "train:aten::conv2d",
                          "aten::conv2d, seq = x", "(unnamed range)"};
    /* tree order: the range at 50..300 holds the three operators */
    for (size_t i = 0; i < t->nevents; i++)
        ck_assert_str_eq(m->strs[t->events[i].name], want[i]);
    ck_assert_uint_eq(t->events[1].parent, 0);
    ck_assert_uint_eq(t->events[0].self_ns, 250 - 100 - 10 - 10);
    opp_model_free(m);
    tu_rmdir(dir);
    free(dir), free(path);
}
END_TEST

#define TREE_HEAD                                                                                  \
    "Name                                                               Calls      Self CPU     CPU total     Share\n"
#define TREE_L0                                                                                    \
    "my step                                                                2     700.000us       1.600ms   100.00%\n"
#define TREE_L1                                                                                    \
    "  cblas_dgemm                                                          2     500.000us     500.000us    31.25%\n"
#define TREE_L2                                                                                    \
    "  inner                                                                1     300.000us     400.000us    25.00%\n"
#define TREE_L3                                                                                    \
    "    cblas_dgemm                                                        1     100.000us     100.000us     6.25%\n"

/* Nested ranges (times in us): "my step" [0,1000] holds dgemm [100,400] and
 * "inner" [500,900], which holds dgemm [600,700]; a second "my step"
 * [2000,2600] holds dgemm [2100,2300]. */
static const uint64_t us = 1000;
static char *dir;
static struct opp_model *m;
static const struct opp_agg_opts all = {0};

static void setup(void)
{
    dir = tu_tmpdir();
    char *path = tu_path(dir, "s.trace");
    const char *strs[] = {"my step", "inner"};
    const struct tb_ev ev[] = {
        TB_CALL(2, 100 * us, 400 * us, 1, 8, 8, 8, NN),
        TB_CALL(2, 600 * us, 700 * us, 2, 8, 8, 8, NN),
        TB_CALL(0, 500 * us, 900 * us, 1, S(1), 0, 0, 0),
        TB_CALL(0, 0, 1000 * us, 0, S(0), 0, 0, 0),
        TB_CALL(2, 2100 * us, 2300 * us, 1, 8, 8, 8, NN),
        TB_CALL(0, 2000 * us, 2600 * us, 0, S(0), 0, 0, 0),
    };
    write_trace(path, strs, 2, ev, 6);
    char err[256];
    m = tu_model_load(path, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    free(path);
}

static void teardown(void)
{
    opp_model_free(m);
    m = NULL;
    tu_rmdir(dir);
    free(dir);
}

START_TEST(calltree_merges_paths)
{
    struct opp_calltree ct;
    ck_assert_int_eq(tu_calltree_build(m, &all, &ct), 0);
    ck_assert_uint_eq(ct.n, 4);
    ck_assert_uint_eq(ct.nodes[0].calls, 2);
    ck_assert_uint_eq(ct.nodes[0].total_ns, 1600 * us);
    ck_assert_uint_eq(ct.nodes[1].depth, 1);
    opp_calltree_free(&ct);
}
END_TEST

START_TEST(folded_stacks)
{
    struct opp_calltree ct;
    ck_assert_int_eq(tu_calltree_build(m, &all, &ct), 0);
    char *out = NULL;
    CAPTURE(out, opp_export_folded(m, &ct, 0, f));
    ck_assert_str_eq(out, "my_step 700\n"
                          "my_step;cblas_dgemm 500\n"
                          "my_step;inner 300\n"
                          "my_step;inner;cblas_dgemm 100\n");
    free(out);
    CAPTURE(out, opp_export_folded(m, &ct, 1, f)); /* no GPU work */
    ck_assert_str_eq(out, "");
    free(out);
    opp_calltree_free(&ct);
}
END_TEST

/* A range named "" (torch's record_function("")) inside another and at
 * the top: a frame of its own, written '_' (the path's length counted
 * one ';' short of it wrote before the buffer). */
START_TEST(folded_stacks_empty_name)
{
    char *d = tu_tmpdir(), *path = tu_path(d, "e.trace");
    const char *strs[] = {"outer", ""};
    const struct tb_ev ev[] = {
        TB_CALL(0, 100 * us, 200 * us, 1, S(1), 0, 0, 0),
        TB_CALL(0, 0, 1000 * us, 0, S(0), 0, 0, 0),
        TB_CALL(0, 2000 * us, 2050 * us, 0, S(1), 0, 0, 0),
    };
    write_trace(path, strs, 2, ev, 3);
    char err[256];
    struct opp_model *em = tu_model_load(path, err, sizeof err);
    ck_assert_msg(em != NULL, "%s", err);
    struct opp_calltree ct;
    ck_assert_int_eq(tu_calltree_build(em, &all, &ct), 0);
    char *out = NULL;
    CAPTURE(out, opp_export_folded(em, &ct, 0, f));
    ck_assert_str_eq(out, "outer 900\n"
                          "outer;_ 100\n"
                          "_ 50\n");
    free(out);
    opp_calltree_free(&ct);
    opp_model_free(em);
    tu_rmdir(d);
    free(d), free(path);
}
END_TEST

START_TEST(flamegraph)
{
    struct opp_calltree ct;
    ck_assert_int_eq(tu_calltree_build(m, &all, &ct), 0);
    char *out = NULL;
    CAPTURE(out, opp_export_flamegraph(m, &ct, 0, "t <1>", f));
    ck_assert_ptr_nonnull(strstr(out, ">t &lt;1&gt;</text>"));
    ck_assert_ptr_nonnull(strstr(out, "<g><title>all (1.600ms, 100.00%)</title>"));
    ck_assert_ptr_nonnull(strstr(out, "<g><title>my step (1.600ms, 100.00%)</title>"));
    ck_assert_ptr_nonnull(strstr(out, "<g><title>inner (400.000us, 25.00%)</title>"));
    ck_assert_ptr_nonnull(strstr(out, "<g><title>cblas_dgemm (100.000us, 6.25%)</title>"));
    ck_assert_ptr_nonnull(strstr(out, "<g><title>cblas_dgemm (500.000us, 31.25%)</title>"));
    int frames = 0;
    for (const char *p = out; (p = strstr(p, "<g><title>")); p++)
        frames++;
    ck_assert_int_eq(frames, 5);
    free(out);
    opp_calltree_free(&ct);
}
END_TEST

/* The tree view with these options is want. */
static void tree_is(const struct opp_tree_opts *to, const char *want)
{
    struct opp_calltree ct;
    ck_assert_int_eq(tu_calltree_build(m, &all, &ct), 0);
    char *out = NULL;
    CAPTURE(out, opp_out_tree(f, m, &ct, to));
    ck_assert_str_eq(out, want);
    free(out);
    opp_calltree_free(&ct);
}

/* The tree view: children by CPU total. */
START_TEST(tree_view)
{
    struct opp_tree_opts to = {0};
    tree_is(&to, TREE_HEAD TREE_L0 TREE_L1 TREE_L2 TREE_L3
            "4 of 4 call paths shown; CPU total of the roots: 1.600ms\n");
}
END_TEST

START_TEST(tree_view_max_depth)
{
    struct opp_tree_opts to = {0};
    to.max_depth = 2;
    tree_is(&to, TREE_HEAD TREE_L0 TREE_L1 TREE_L2
            "3 of 4 call paths shown; CPU total of the roots: 1.600ms\n");
}
END_TEST

/* --tree --limit 2: the first two lines, parents before children */
START_TEST(tree_view_max_paths)
{
    struct opp_tree_opts to = {0};
    to.max_paths = 2;
    tree_is(&to, TREE_HEAD TREE_L0 TREE_L1
            "2 of 4 call paths shown; CPU total of the roots: 1.600ms\n");
}
END_TEST

START_TEST(tree_view_min_share)
{
    struct opp_tree_opts to = {0};
    to.max_depth = 0;
    to.min_share_pct = 30;
    tree_is(&to, TREE_HEAD TREE_L0 TREE_L1
            "2 of 4 call paths shown; CPU total of the roots: 1.600ms\n");
}
END_TEST

/* Steps of a range: the range's own calls. */
START_TEST(steps_of_a_range)
{
    char *out = NULL;
    struct opp_steps st;
    ck_assert_int_eq(tu_steps_find(m, &all, "my step", &st), 0);
    ck_assert(st.ranges);
    ck_assert_uint_eq(st.n, 2);
    CAPTURE(out, opp_out_steps(f, "my step", &st, 0));
    ck_assert_str_eq(out,
                     "Steps: my step (each call is a step), 2 steps\n"
                     "                   count          mean           p50           p90           p99           max\n"
                     "wall                   2     800.000us     600.000us       1.000ms       1.000ms       1.000ms\n"
                     "CPU in calls           2     450.000us     200.000us     700.000us     700.000us     700.000us\n");
    free(out);
    CAPTURE(out, opp_out_steps(f, "my step", &st, 1));
    ck_assert_str_eq(out, "{\"step\": \"my step\", \"kind\": \"range\", \"count\": 2, "
                          "\"wall_us\": [1000.000, 600.000], \"cpu_us\": [700.000, 200.000], "
                          "\"gpu_us\": [0.000, 0.000], \"wall\": {\"count\": 2, \"mean\": 800.000, "
                          "\"p50\": 600.000, \"p90\": 1000.000, \"p99\": 1000.000, \"max\": "
                          "1000.000}, \"cpu\": {\"count\": 2, \"mean\": 450.000, \"p50\": 200.000, "
                          "\"p90\": 700.000, \"p99\": 700.000, \"max\": 700.000}, \"gpu\": "
                          "{\"count\": 2, \"mean\": 0.000, \"p50\": 0.000, \"p90\": 0.000, "
                          "\"p99\": 0.000, \"max\": 0.000}}\n");
    free(out);
    opp_steps_free(&st);
}
END_TEST

/* Steps between the calls of a boundary: [400, 700] and [700, 2300]. */
START_TEST(steps_between_calls)
{
    struct opp_steps st;
    ck_assert_int_eq(tu_steps_find(m, &all, "cblas_dgemm", &st), 0);
    ck_assert(!st.ranges);
    ck_assert_uint_eq(st.n, 2);
    ck_assert_uint_eq(st.steps[0].begin_ns, 400 * us);
    ck_assert_uint_eq(st.steps[0].end_ns, 700 * us);
    ck_assert_uint_eq(st.steps[0].cpu_ns, 0);
    ck_assert_uint_eq(st.steps[1].begin_ns, 700 * us);
    ck_assert_uint_eq(st.steps[1].end_ns, 2300 * us);
    ck_assert_uint_eq(st.steps[1].cpu_ns, 600 * us); /* the second "my step" */
    opp_steps_free(&st);
}
END_TEST

START_TEST(steps_of_unknown_name)
{
    char *out = NULL;
    struct opp_steps st;
    ck_assert_int_eq(tu_steps_find(m, &all, "no such op", &st), 0);
    ck_assert_uint_eq(st.n, 0);
    CAPTURE(out, opp_out_steps(f, "no such op", &st, 0));
    ck_assert_str_eq(out,
                     "Steps: no such op, 0 steps: --step NAME says what a step is (an NVTX "
                     "range, a torch label or nn.Module layer, or a call that ends each step)\n");
    free(out);
    opp_steps_free(&st);
}
END_TEST

Suite *suite_kinds(void)
{
    Suite *s = suite_create("kinds");
    TCase *tc = tcase_create("ops");
    tcase_add_test(tc, gemm_batched_shapes_flops);
    tcase_add_test(tc, gemm_status_first);
    tcase_add_test(tc, gemm_recorded_type_overrides);
    tcase_add_test(tc, gemm_status_alone);
    tcase_add_test(tc, tensors_convolution);
    tcase_add_test(tc, tensors_matmul);
    tcase_add_test(tc, tensors_inner_product);
    tcase_add_test(tc, torch_inputs);
    tcase_add_test(tc, tensors_pooling_no_flops);
    tcase_add_test(tc, tensors_malformed);
    tcase_add_test(tc, coll_bytes);
    tcase_add_test(tc, kind_flags_valid);
    tcase_add_test(tc, operation_names);
    tcase_add_test(tc, dtype_names_and_sizes);
    tcase_add_test(tc, nvtx_labels);
    tcase_add_test(tc, model_names_events);
    suite_add_tcase(s, tc);
    TCase *paths = tcase_create("paths");
    tcase_add_checked_fixture(paths, setup, teardown);
    tcase_add_test(paths, calltree_merges_paths);
    tcase_add_test(paths, folded_stacks);
    tcase_add_test(paths, folded_stacks_empty_name);
    tcase_add_test(paths, flamegraph);
    tcase_add_test(paths, tree_view);
    tcase_add_test(paths, tree_view_max_depth);
    tcase_add_test(paths, tree_view_max_paths);
    tcase_add_test(paths, tree_view_min_share);
    tcase_add_test(paths, steps_of_a_range);
    tcase_add_test(paths, steps_between_calls);
    tcase_add_test(paths, steps_of_unknown_name);
    suite_add_tcase(s, paths);
    return s;
}
