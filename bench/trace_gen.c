/* Benchmark helper: writes a synthetic trace of N events with the project's
 * own writer, shaped like a profiled BLAS program: on each of 4 threads,
 * steps (a plain call at depth 0) each holding 2 dgemm calls with shapes,
 * 4 ddot calls and one daxpy (depth 1), 1 us apart. Used by `make bench` to
 * time `opprof report` and `opprof export` on 10 million records, and (with
 * a RANK label and a slowdown of its dgemm calls) `opprof analyze` on many
 * rank traces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "trace.h"

#define THREADS 4
#define PER_STEP 8 /* the step and its 7 calls */
#define CHUNK_BYTES (1u << 20)

static int fail(const char *what, const char *err)
{
    fprintf(stderr, "trace_gen: %s%s%s\n", what, err ? ": " : "", err ? err : "");
    return 1;
}

int main(int argc, char **argv)
{
    char *end;
    unsigned long long n = argc >= 3 ? strtoull(argv[2], &end, 10) : 0;
    if (argc < 3 || argc > 5 || !n || *end) {
        fprintf(stderr, "usage: %s OUT.trace EVENTS [RANK [DGEMM_US]]\n", argv[0]);
        return 2;
    }
    const char *rank = argc >= 4 ? argv[3] : NULL;
    uint64_t dgemm_ns = argc == 5 ? strtoull(argv[4], NULL, 10) * 1000ull : 2000;
    struct opp_tw w;
    char err[256];
    if (opp_tw_open(&w, argv[1], err, sizeof err))
        return fail("cannot write the trace", err);
    const char *args[] = {"trace_gen"};
    struct opp_tw_process p = {.proc = 1, .pid = 4242, .clock = OPP_CLOCK_MONOTONIC,
                               .start_ticks = 1000000000ull, .exe = "trace_gen", .argc = 1,
                               .argv = args};
    struct opp_func_desc fd[] = {
        {OPP_OP_PLAIN, 0, "app", "train_step"},
        {OPP_OP_GEMM, OPP_DT_F64, "blas", "cblas_dgemm"},
        {OPP_OP_DOT, OPP_DT_F64, "blas", "cblas_ddot"},
        {OPP_OP_AXPY, OPP_DT_F64, "blas", "cblas_daxpy"},
    };
    if (opp_tw_process(&w, &p) || opp_tw_funcs(&w, 1, 4, fd))
        return fail("cannot write the trace", NULL);
    if (rank) { /* the label a launcher sets */
        uint8_t info[256];
        struct opp_wbuf ib;
        opp_wbuf_init(&ib, info, sizeof info);
        opp_put_u32(&ib, 1);
        opp_put_str(&ib, "RANK", 4);
        opp_put_str(&ib, rank, strlen(rank));
        if (ib.overflow || opp_tw_info(&w, 1, info, (uint32_t)ib.len))
            return fail("cannot write the trace", NULL);
    }
    for (uint32_t t = 0; t < THREADS; t++)
        opp_tw_thread(&w, 1, 100 + t, "worker");
    char *mem = malloc(CHUNK_BYTES);
    if (!mem)
        return fail("out of memory", NULL);
    unsigned long long steps = (n + PER_STEP - 1) / PER_STEP, written = 0;
    uint64_t prev_end[THREADS] = {0};
    for (unsigned long long s0 = 0; s0 < steps; s0 += 4096) {
        for (uint32_t t = 0; t < THREADS; t++) {
            struct opp_ev_enc e;
            opp_ev_begin(&e, mem, CHUNK_BYTES, 1, 100 + t, prev_end[t]);
            for (unsigned long long s = s0 + t; s < s0 + 4096 && s < steps; s += THREADS) {
                uint64_t base = 1000000000ull + s / THREADS * 20000ull, at = base + 500;
                for (int i = 0; i < PER_STEP - 1 && written < n; i++, written++) {
                    uint32_t fn = i < 2 ? 1 : i < 6 ? 2 : 3;
                    uint64_t a[4] = {64 + (uint64_t)i, 32, 48, 'N' | 'N' << 8};
                    uint64_t dur = fn == 1 ? dgemm_ns : 500;
                    opp_ev_add(&e, fn, 0, at, at + dur, 1, fn == 1 ? 4 : 1,
                               fn == 1 ? a : (uint64_t[]){1000});
                    at += dur + 1000;
                }
                if (written < n) {
                    opp_ev_add(&e, 0, 0, base, at + 500, 0, 0, NULL);
                    written++;
                }
                prev_end[t] = at + 500;
            }
            if (e.count && opp_ev_write(&w, &e))
                return fail("cannot write the trace", NULL);
        }
    }
    free(mem);
    if (opp_tw_process_end(&w, 1, 1, 2000000000ull + steps * 20000ull) ||
        opp_tw_end(&w, written, 0, 1) || opp_tw_close(&w))
        return fail("cannot write the trace", NULL);
    printf("events=%llu\n", written);
    return 0;
}
