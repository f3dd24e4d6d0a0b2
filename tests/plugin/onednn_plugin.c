/* A plugin that links oneDNN and calls it through its PLT (where a
 * preload's wrappers come first): loaded and unloaded by
 * tests/progs/unload.c. */
#include <dlfcn.h>

#include <oneapi/dnnl/dnnl.h>

/* oneDNN's OpenMP runtime, loaded with it, must outlive it: its threads
 * wait in it for the next parallel region. */
__attribute__((constructor)) static void keep_openmp(void)
{
    dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
}

/* A relu over [2, 3] made, run twice and destroyed: the sum of its
 * output, or -1 when oneDNN refused a step. */
double plugin_run(void)
{
    float x[6] = {-3, -2, -1, 1, 2, 3}, y[6] = {0};
    dnnl_engine_t eng = NULL;
    dnnl_stream_t strm = NULL;
    dnnl_memory_desc_t md;
    dnnl_memory_t src = NULL, dst = NULL;
    dnnl_eltwise_desc_t ed;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_t relu = NULL;
    int bad =
        dnnl_engine_create(&eng, dnnl_cpu, 0) ||
        dnnl_stream_create(&strm, eng, dnnl_stream_default_flags) ||
        dnnl_memory_desc_init_by_tag(&md, 2, (dnnl_dims_t){2, 3}, dnnl_f32, dnnl_nc) ||
        dnnl_memory_create(&src, &md, eng, x) || dnnl_memory_create(&dst, &md, eng, y) ||
        dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference, dnnl_eltwise_relu, &md, 0, 0) ||
        dnnl_primitive_desc_create(&pd, &ed, NULL, eng, NULL) || dnnl_primitive_create(&relu, pd);
    dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    for (int i = 0; i < 2 && !bad; i++)
        bad = dnnl_primitive_execute(relu, strm, 2, args) || dnnl_stream_wait(strm);
    if (relu)
        bad |= dnnl_primitive_destroy(relu) != dnnl_success;
    dnnl_primitive_desc_destroy(pd);
    dnnl_memory_destroy(dst);
    dnnl_memory_destroy(src);
    dnnl_stream_destroy(strm);
    dnnl_engine_destroy(eng);
    double s = 0;
    for (int i = 0; i < 6; i++)
        s += y[i];
    return bad ? -1 : s;
}
