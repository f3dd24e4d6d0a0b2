/* oneDNN primitives of known shapes through the C API, each executed a
 * known number of times; prints a checksum of every result. Run by
 * tests/e2e/test_cpulibs.c with and without the preload. */
#include <stdio.h>
#include <stdlib.h>

#include <oneapi/dnnl/dnnl.h>

static dnnl_engine_t eng;
static dnnl_stream_t strm;

#define CK(call)                                                                                   \
    do {                                                                                           \
        dnnl_status_t s_ = (call);                                                                 \
        if (s_ != dnnl_success) {                                                                  \
            fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #call, (int)s_);         \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

struct buf {
    dnnl_memory_desc_t md;
    dnnl_memory_t mem;
    float *data;
    size_t n;
};

static void mkbuf(struct buf *b, int nd, const dnnl_dims_t dims, dnnl_format_tag_t tag, int seed)
{
    CK(dnnl_memory_desc_init_by_tag(&b->md, nd, dims, dnnl_f32, tag));
    b->n = 1;
    for (int i = 0; i < nd; i++)
        b->n *= (size_t)dims[i];
    b->data = malloc(b->n * sizeof *b->data);
    for (size_t i = 0; i < b->n; i++)
        b->data[i] = seed ? (float)((int)((i * 7 + (size_t)seed) % 11) - 5) / 4.0f : 0.0f;
    CK(dnnl_memory_create(&b->mem, &b->md, eng, b->data));
}

static void freebuf(struct buf *b)
{
    dnnl_memory_destroy(b->mem);
    free(b->data);
}

static double sum(const struct buf *b)
{
    double s = 0;
    for (size_t i = 0; i < b->n; i++)
        s += b->data[i] * (double)((i % 5) + 1);
    return s;
}

/* Create the primitive of pd, run it times times with args, destroy it. */
static void run(dnnl_primitive_desc_t pd, int times, int nargs, const dnnl_exec_arg_t *args)
{
    dnnl_primitive_t p;
    CK(dnnl_primitive_create(&p, pd));
    for (int i = 0; i < times; i++)
        CK(dnnl_primitive_execute(p, strm, nargs, args));
    CK(dnnl_stream_wait(strm));
    CK(dnnl_primitive_destroy(p));
    CK(dnnl_primitive_desc_destroy(pd));
}

/* Forward convolution, groups > 1: weights goihw. Returns its pd (kept). */
static dnnl_primitive_desc_t conv(int times, const dnnl_dims_t src, const dnnl_dims_t wei, int wnd,
                                  const dnnl_dims_t dst, dnnl_dim_t stride, dnnl_dim_t pad,
                                  const char *what)
{
    struct buf s, w, d;
    mkbuf(&s, 4, src, dnnl_nchw, 1);
    mkbuf(&w, wnd, wei, wnd == 4 ? dnnl_oihw : dnnl_goihw, 2);
    mkbuf(&d, 4, dst, dnnl_nchw, 0);
    dnnl_dims_t st = {stride, stride}, pd_ = {pad, pad};
    dnnl_convolution_desc_t cd;
    CK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct,
                                          &s.md, &w.md, NULL, &d.md, st, pd_, pd_));
    dnnl_primitive_desc_t pd;
    CK(dnnl_primitive_desc_create(&pd, &cd, NULL, eng, NULL));
    dnnl_exec_arg_t a[] = {{DNNL_ARG_SRC, s.mem}, {DNNL_ARG_WEIGHTS, w.mem}, {DNNL_ARG_DST, d.mem}};
    dnnl_primitive_t p;
    CK(dnnl_primitive_create(&p, pd));
    for (int i = 0; i < times; i++)
        CK(dnnl_primitive_execute(p, strm, 3, a));
    CK(dnnl_stream_wait(strm));
    CK(dnnl_primitive_destroy(p));
    printf("%s %.4f\n", what, sum(&d));
    freebuf(&s), freebuf(&w), freebuf(&d);
    return pd;
}

int main(void)
{
    CK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    CK(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags));

    /* N=2 C=3 H=W=10, K=4 R=S=3, stride 2, pad 1: 5x5 out. 3 runs. */
    dnnl_primitive_desc_t fwd = conv(3, (dnnl_dims_t){2, 3, 10, 10}, (dnnl_dims_t){4, 3, 3, 3}, 4,
                                     (dnnl_dims_t){2, 4, 5, 5}, 2, 1, "conv");
    /* Grouped: N=1 C=4 H=W=6, G=2, K=6 R=S=3, stride 1, no pad: 4x4 out. 2 runs. */
    dnnl_primitive_desc_t g = conv(2, (dnnl_dims_t){1, 4, 6, 6}, (dnnl_dims_t){2, 3, 2, 3, 3}, 5,
                                   (dnnl_dims_t){1, 6, 4, 4}, 1, 0, "gconv");
    CK(dnnl_primitive_desc_destroy(g));

    { /* Backward data of the first convolution: dx[2,3,10,10] from dy[2,4,5,5]. 1 run. */
        struct buf dx, w, dy;
        mkbuf(&dx, 4, (dnnl_dims_t){2, 3, 10, 10}, dnnl_nchw, 0);
        mkbuf(&w, 4, (dnnl_dims_t){4, 3, 3, 3}, dnnl_oihw, 2);
        mkbuf(&dy, 4, (dnnl_dims_t){2, 4, 5, 5}, dnnl_nchw, 3);
        dnnl_convolution_desc_t cd;
        dnnl_dims_t st = {2, 2}, pd_ = {1, 1};
        CK(dnnl_convolution_backward_data_desc_init(&cd, dnnl_convolution_direct, &dx.md, &w.md,
                                                    &dy.md, st, pd_, pd_));
        dnnl_primitive_desc_t pd;
        CK(dnnl_primitive_desc_create(&pd, &cd, NULL, eng, fwd));
        dnnl_exec_arg_t a[] = {{DNNL_ARG_DIFF_DST, dy.mem}, {DNNL_ARG_WEIGHTS, w.mem},
                               {DNNL_ARG_DIFF_SRC, dx.mem}};
        run(pd, 1, 3, a);
        printf("conv_bwd_data %.4f\n", sum(&dx));
        freebuf(&dx), freebuf(&w), freebuf(&dy);
    }
    CK(dnnl_primitive_desc_destroy(fwd));

    { /* matmul [2,3,4] x [2,4,5] -> [2,3,5]. 2 runs. */
        struct buf s, w, d;
        mkbuf(&s, 3, (dnnl_dims_t){2, 3, 4}, dnnl_abc, 1);
        mkbuf(&w, 3, (dnnl_dims_t){2, 4, 5}, dnnl_abc, 2);
        mkbuf(&d, 3, (dnnl_dims_t){2, 3, 5}, dnnl_abc, 0);
        dnnl_matmul_desc_t md;
        CK(dnnl_matmul_desc_init(&md, &s.md, &w.md, NULL, &d.md));
        dnnl_primitive_desc_t pd;
        CK(dnnl_primitive_desc_create(&pd, &md, NULL, eng, NULL));
        dnnl_exec_arg_t a[] = {{DNNL_ARG_SRC, s.mem}, {DNNL_ARG_WEIGHTS, w.mem}, {DNNL_ARG_DST, d.mem}};
        run(pd, 2, 3, a);
        printf("matmul %.4f\n", sum(&d));
        freebuf(&s), freebuf(&w), freebuf(&d);
    }
    { /* inner product x[3,7] W[5,7] -> y[3,5]. 2 runs. */
        struct buf s, w, d;
        mkbuf(&s, 2, (dnnl_dims_t){3, 7}, dnnl_nc, 1);
        mkbuf(&w, 2, (dnnl_dims_t){5, 7}, dnnl_oi, 2);
        mkbuf(&d, 2, (dnnl_dims_t){3, 5}, dnnl_nc, 0);
        dnnl_inner_product_desc_t ipd;
        CK(dnnl_inner_product_forward_desc_init(&ipd, dnnl_forward_inference, &s.md, &w.md, NULL, &d.md));
        dnnl_primitive_desc_t pd;
        CK(dnnl_primitive_desc_create(&pd, &ipd, NULL, eng, NULL));
        dnnl_exec_arg_t a[] = {{DNNL_ARG_SRC, s.mem}, {DNNL_ARG_WEIGHTS, w.mem}, {DNNL_ARG_DST, d.mem}};
        run(pd, 2, 3, a);
        printf("inner_product %.4f\n", sum(&d));
        freebuf(&s), freebuf(&w), freebuf(&d);
    }
    { /* relu on [2,4,5,5], in place. 4 runs. */
        struct buf x;
        mkbuf(&x, 4, (dnnl_dims_t){2, 4, 5, 5}, dnnl_nchw, 3);
        dnnl_eltwise_desc_t ed;
        CK(dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference, dnnl_eltwise_relu, &x.md, 0, 0));
        dnnl_primitive_desc_t pd;
        CK(dnnl_primitive_desc_create(&pd, &ed, NULL, eng, NULL));
        dnnl_exec_arg_t a[] = {{DNNL_ARG_SRC, x.mem}, {DNNL_ARG_DST, x.mem}};
        run(pd, 4, 2, a);
        printf("relu %.4f\n", sum(&x));
        freebuf(&x);
    }
    { /* max pooling 2x2 stride 2: [1,6,4,4] -> [1,6,2,2]. 1 run. */
        struct buf s, d;
        mkbuf(&s, 4, (dnnl_dims_t){1, 6, 4, 4}, dnnl_nchw, 4);
        mkbuf(&d, 4, (dnnl_dims_t){1, 6, 2, 2}, dnnl_nchw, 0);
        dnnl_pooling_desc_t pld;
        dnnl_dims_t k = {2, 2}, z = {0, 0};
        CK(dnnl_pooling_forward_desc_init(&pld, dnnl_forward_inference, dnnl_pooling_max, &s.md,
                                          &d.md, k, k, z, z));
        dnnl_primitive_desc_t pd;
        CK(dnnl_primitive_desc_create(&pd, &pld, NULL, eng, NULL));
        dnnl_exec_arg_t a[] = {{DNNL_ARG_SRC, s.mem}, {DNNL_ARG_DST, d.mem}};
        run(pd, 1, 2, a);
        printf("pooling %.4f\n", sum(&d));
        freebuf(&s), freebuf(&d);
    }
    { /* reorder [2,3,4] abc -> acb. 2 runs. */
        struct buf s, d;
        mkbuf(&s, 3, (dnnl_dims_t){2, 3, 4}, dnnl_abc, 5);
        mkbuf(&d, 3, (dnnl_dims_t){2, 3, 4}, dnnl_acb, 0);
        dnnl_primitive_desc_t pd;
        CK(dnnl_reorder_primitive_desc_create(&pd, &s.md, eng, &d.md, eng, NULL));
        dnnl_exec_arg_t a[] = {{DNNL_ARG_FROM, s.mem}, {DNNL_ARG_TO, d.mem}};
        run(pd, 2, 2, a);
        printf("reorder %.4f\n", sum(&d));
        freebuf(&s), freebuf(&d);
    }
    /* A failing call: no primitive. Its status is the program's. */
    printf("null execute %d\n", (int)dnnl_primitive_execute(NULL, strm, 0, NULL));

    dnnl_stream_destroy(strm);
    dnnl_engine_destroy(eng);
    return 0;
}
