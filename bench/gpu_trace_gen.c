/* Benchmark helper: writes a synthetic GPU trace of about N records with
 * the project's own writer, shaped like a training loop: on each of 4
 * threads, steps (a call at depth 0) each launching 3 kernels
 * (cudaLaunchKernel at depth 1, a correlation id each) on the thread's
 * device (2) and stream, 1 us apart; each thread's kernels are handed
 * over in GPU chunks after its calls, as CUPTI hands its buffers over
 * late. Used by `make bench` to time `opprof report --gpu` and `--step` on
 * GPU work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gpu.h"
#include "trace.h"

#define THREADS 4
#define KERNELS 3  /* a step's launches */
#define PER_STEP 7 /* the step, its launches and their kernels */
#define STEPS_CHUNK 2048
#define CHUNK_BYTES (1u << 20)

static int fail(const char *what, const char *err)
{
    fprintf(stderr, "gpu_trace_gen: %s%s%s\n", what, err ? ": " : "", err ? err : "");
    return 1;
}

static int put(struct opp_wbuf *b, uint32_t *n, const struct opp_gpu_rec *r)
{
    (*n)++;
    return opp_gpu_put(b, r);
}

int main(int argc, char **argv)
{
    char *end;
    unsigned long long n = argc == 3 ? strtoull(argv[2], &end, 10) : 0;
    if (argc != 3 || !n || *end) {
        fprintf(stderr, "usage: %s OUT.trace RECORDS\n", argv[0]);
        return 2;
    }
    struct opp_tw w;
    char err[256];
    if (opp_tw_open(&w, argv[1], err, sizeof err))
        return fail("cannot write the trace", err);
    const char *args[] = {"gpu_trace_gen"};
    struct opp_tw_process p = {.proc = 1,
                               .pid = 4343,
                               .clock = OPP_CLOCK_MONOTONIC,
                               .start_ticks = 1000000000ull,
                               .exe = "gpu_trace_gen",
                               .argc = 1,
                               .argv = args};
    struct opp_func_desc fd[] = {
        {OPP_OP_PLAIN, 0, "app", "train_step"},
        {OPP_OP_CUDA_API, 0, "cudart", "cudaLaunchKernel"},
    };
    if (opp_tw_process(&w, &p) || opp_tw_funcs(&w, 1, 2, fd))
        return fail("cannot write the trace", NULL);
    uint8_t *ev = malloc(CHUNK_BYTES), *gm = malloc(CHUNK_BYTES);
    if (!ev || !gm)
        return fail("out of memory", NULL);
    static const char *names[KERNELS] = {"_Z4gemmPKfS0_Pfi", "_Z4reluPfi", "_Z3addPfPKfi"};
    struct opp_wbuf g;
    opp_wbuf_init(&g, gm, CHUNK_BYTES);
    uint32_t ng = 0;
    opp_put_u32(&g, 0);
    for (uint32_t k = 0; k < KERNELS; k++) {
        struct opp_gpu_rec r = {.type = OPP_GPU_STRING,
                                .nfields = 1,
                                .str = names[k],
                                .slen = (uint32_t)strlen(names[k])};
        r.f[0] = k + 1;
        put(&g, &ng, &r);
    }
    memcpy(gm, &ng, 4);
    if (opp_tw_gpu(&w, 1, gm, (uint32_t)g.len))
        return fail("cannot write the trace", NULL);
    unsigned long long steps = (n + PER_STEP - 1) / PER_STEP, written = 0, corr = 0;
    uint64_t prev_end[THREADS] = {0};
    for (unsigned long long s0 = 0; s0 < steps; s0 += STEPS_CHUNK) {
        for (uint32_t t = 0; t < THREADS; t++) {
            struct opp_ev_enc e;
            opp_ev_begin(&e, ev, CHUNK_BYTES, 1, 200 + t, prev_end[t]);
            opp_wbuf_init(&g, gm, CHUNK_BYTES);
            ng = 0;
            opp_put_u32(&g, 0);
            for (unsigned long long s = s0 + t; s < s0 + STEPS_CHUNK && s < steps; s += THREADS) {
                uint64_t base = 1000000000ull + s / THREADS * 20000ull, at = base + 500;
                for (int k = 0; k < KERNELS; k++, at += 2000) {
                    uint64_t a[3] = {0, ++corr, 211}; /* status, correlation id, cbid */
                    opp_ev_add(&e, 1, 0, at, at + 1000, 1, 3, a);
                    struct opp_gpu_rec r = {.type = OPP_GPU_KERNEL, .nfields = OPP_GF_K_COUNT};
                    r.f[OPP_GF_START] = at + 3000;
                    r.f[OPP_GF_END] = at + 3000 + 1500 + 500 * (uint64_t)k;
                    r.f[OPP_GF_DEVICE] = t % 2;
                    r.f[OPP_GF_STREAM] = 7 + t;
                    r.f[OPP_GF_CORRELATION] = corr;
                    r.f[OPP_GF_K_NAME] = (uint64_t)k + 1;
                    r.f[OPP_GF_K_GRID_X] = 64;
                    r.f[OPP_GF_K_BLOCK_X] = 256;
                    if (put(&g, &ng, &r))
                        return fail("GPU chunk overflow", NULL);
                }
                opp_ev_add(&e, 0, 0, base, at + 500, 0, 0, NULL);
                written += PER_STEP;
                prev_end[t] = at + 500;
            }
            if (e.count && opp_ev_write(&w, &e))
                return fail("cannot write the trace", NULL);
            memcpy(gm, &ng, 4);
            if (ng && opp_tw_gpu(&w, 1, gm, (uint32_t)g.len))
                return fail("cannot write the trace", NULL);
        }
    }
    free(ev);
    free(gm);
    if (opp_tw_process_end(&w, 1, 1, 2000000000ull + steps * 20000ull) ||
        opp_tw_end(&w, written, 0, 1) || opp_tw_close(&w))
        return fail("cannot write the trace", NULL);
    printf("records=%llu\n", written);
    return 0;
}
