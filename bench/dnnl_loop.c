/* Benchmark load: a tight loop of dnnl_primitive_execute on a one-element
 * relu (a wrapper that records a primitive's kind and tensor dims, read once
 * per primitive and then from its cache). */
#include <oneapi/dnnl/dnnl.h>
#include "loop.h"

int main(int argc, char **argv)
{
    long iters, warm;
    if (bench_args(argc, argv, &iters, &warm))
        return 2;
    dnnl_engine_t eng;
    dnnl_stream_t strm;
    dnnl_memory_desc_t md;
    dnnl_memory_t mem;
    dnnl_eltwise_desc_t ed;
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t relu;
    float x = 1.0f;
    if (dnnl_engine_create(&eng, dnnl_cpu, 0) || dnnl_stream_create(&strm, eng, dnnl_stream_default_flags) ||
        dnnl_memory_desc_init_by_tag(&md, 2, (dnnl_dims_t){1, 1}, dnnl_f32, dnnl_nc) ||
        dnnl_memory_create(&mem, &md, eng, &x) ||
        dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference, dnnl_eltwise_relu, &md, 0, 0) ||
        dnnl_primitive_desc_create(&pd, &ed, NULL, eng, NULL) || dnnl_primitive_create(&relu, pd)) {
        fprintf(stderr, "oneDNN setup failed\n");
        return 1;
    }
    dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, mem}, {DNNL_ARG_DST, mem}};
    long bad = 0;
    BENCH_RUN(iters, warm, bad += dnnl_primitive_execute(relu, strm, 2, args) != dnnl_success);
    return bad || x != 1.0f;
}
