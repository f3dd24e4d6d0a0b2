/* End to end: CUDA API calls recorded by symbol interposition, the fallback
 * for when CUPTI cannot serve (here: no GPU, so CUPTI answers 999). The
 * programs under tests/cuda/ print what each call returned; the trace must
 * hold exactly those calls, in that order, with those statuses, and the
 * programs' output and exit code must be the same with and without the
 * preload. CUDA programs are built only with the toolkit (tests/tests.mk);
 * without it those tests say SKIP. The dlsym tests need no toolkit. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/aggregate.h"
#include "analysis/model.h"
#include "oracle/loaded.h"
#include "views/output.h"
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void)
{
    tu_rmdir(dir);
    free(dir);
}

static const char *prog(const char *name) { return tu_build(name); }

static int built(const char *name, const char *test)
{
    if (access(prog(name), F_OK) == 0)
        return 1;
    fprintf(stderr, "SKIP %s: %s was not built (no CUDA toolkit at CUDA_HOME when building)\n", test,
            prog(name));
    return 0;
}

/* ---- running a program with and without the preload ---- */

struct runs {
    char *plain, *pre, *err; /* stdout without and with the preload, stderr with it */
    int plain_code, pre_code;
    struct opp_model *m; /* the trace, NULL when none was written */
};

/* argv under the preload (and without), with up to two more environment
 * entries for both runs (e.g. LD_LIBRARY_PATH=...). */
static void run_both(struct runs *r, char *const argv[], const char *env1, const char *env2)
{
    char *trace = tu_path(dir, "t.trace"), *o1 = tu_path(dir, "plain.out"),
         *o2 = tu_path(dir, "pre.out"), *e2 = tu_path(dir, "pre.err");
    char *bare[] = {"LD_PRELOAD=", (char *)env1, (char *)env2, NULL};
    r->plain_code = tu_code(tu_run(argv, bare, o1, NULL));
    struct tu_env te;
    char **env = tu_preload_env(&te, trace, env1);
    if (env1 && env2) {
        env[4] = (char *)env2;
        env[5] = NULL;
    }
    unlink(trace);
    r->pre_code = tu_code(tu_run(argv, env, o2, e2));
    r->plain = tu_slurp(o1);
    r->pre = tu_slurp(o2);
    r->err = tu_slurp(e2);
    r->m = access(trace, F_OK) == 0 ? tu_load(trace) : NULL;
    free(trace), free(o1), free(o2), free(e2);
}

static void runs_free(struct runs *r)
{
    if (r->m)
        opp_model_free(r->m);
    free(r->plain), free(r->pre), free(r->err);
}

/* The program behaves the same: output and exit code. */
static void same_behaviour(const struct runs *r, int code)
{
    ck_assert_ptr_nonnull(r->plain);
    ck_assert_ptr_nonnull(r->pre);
    ck_assert_str_eq(r->pre, r->plain);
    ck_assert_int_eq(r->plain_code, code);
    ck_assert_int_eq(r->pre_code, code);
}

/* A complete trace of one process that dropped nothing. */
static const struct opp_model *trace_ok(const struct runs *r)
{
    ck_assert_msg(r->m != NULL, "no trace; stderr: %s", r->err ? r->err : "");
    ck_assert(r->m->sum.complete);
    ck_assert_uint_eq(r->m->nprocs, 1);
    ck_assert_uint_eq(r->m->dropped, 0);
    ck_assert_uint_eq(r->m->open_events, 0);
    return r->m;
}

/* ---- what the programs printed ---- */

struct want {
    char name[64];
    uint64_t status;
};
struct wants {
    struct want w[160];
    size_t n;
};

static void add(struct wants *ws, const char *name, uint64_t status)
{
    ck_assert_uint_lt(ws->n, sizeof ws->w / sizeof *ws->w);
    snprintf(ws->w[ws->n].name, sizeof ws->w[ws->n].name, "%s", name);
    ws->w[ws->n++].status = status;
}

/* "<prefix><symbol> <status|nostatus> ..." lines: a call with the status it
 * returned (no status records as 0). */
static void parse_calls(const char *out, const char *prefix, struct wants *ws)
{
    size_t plen = strlen(prefix);
    for (const char *p = out; p && *p;) {
        char sym[64], st[16];
        if (!strncmp(p, prefix, plen) && sscanf(p + plen, "%63s %15s", sym, st) == 2)
            add(ws, sym, strcmp(st, "nostatus") ? strtoull(st, NULL, 10) : 0);
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : NULL;
    }
}

/* tests/cuda/rt_calls.cu's main thread, as the trace must hold it: the
 * fat binary registration (program start), each printed call, each <<<>>>
 * launch as cudart's four internal calls (__cudaGetKernel only the first
 * time: the kernel handle is cached), the unregistration (exit). A launch
 * fails with the error cudaGetLastError then reports. */
static void runtime_wants(const char *out, const char *launch_sym, struct wants *ws)
{
    const char *gle = strstr(out, "CALL cudaGetLastError ");
    ck_assert_ptr_nonnull(gle);
    uint64_t launch_status = strtoull(gle + strlen("CALL cudaGetLastError "), NULL, 10);
    add(ws, "__cudaRegisterFatBinary", 0);
    add(ws, "__cudaRegisterFunction", 0);
    add(ws, "__cudaRegisterFatBinaryEnd", 0);
    int launches = 0;
    for (const char *p = out; p && *p;) {
        char sym[64], st[16];
        if (!strncmp(p, "CALL ", 5) && sscanf(p + 5, "%63s %15s", sym, st) == 2)
            add(ws, sym, strcmp(st, "nostatus") ? strtoull(st, NULL, 10) : 0);
        if (!strncmp(p, "LAUNCH ", 7)) {
            add(ws, "__cudaPushCallConfiguration", 0);
            if (launches++ == 0)
                add(ws, "__cudaGetKernel", launch_status);
            add(ws, "__cudaPopCallConfiguration", 0);
            add(ws, launch_sym, launch_status);
        }
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : NULL;
    }
    ck_assert_int_eq(launches, 2);
    add(ws, "__cudaUnregisterFatBinary", 0);
}

/* ---- checking the trace ---- */

static const struct opp_thread *thread_of(const struct opp_model *m, int main_thread)
{
    for (size_t i = 0; i < m->nthreads; i++) {
        const struct opp_thread *t = &m->threads[i];
        if ((t->tid == m->procs[t->proc].pid) == main_thread)
            return &m->threads[i];
    }
    return NULL;
}

static const char *ev_name(const struct opp_model *m, const struct opp_event *e)
{
    return opp_model_str(m, e->name);
}

/* A CUDA API event: {status, correlation id 0 (no CUPTI), its cbid}, the
 * cbid being its index in the process's table after the domain's cbid 0. */
static void check_api_event(const struct opp_model *m, const struct opp_thread *t,
                            const struct opp_event *e, uint64_t status)
{
    const struct opp_process *p = &m->procs[t->proc];
    const struct opp_func *f = opp_event_func(m, t, e);
    const char *lib = opp_model_str(m, f->lib);
    ck_assert_uint_eq(f->kind, OPP_OP_CUDA_API);
    ck_assert_msg(!strcmp(lib, "cudart") || !strcmp(lib, "cuda"), "%s: lib %s", ev_name(m, e), lib);
    uint32_t base = 0;
    while (base < p->nfuncs && strcmp(opp_model_str(m, p->funcs[base].lib), lib))
        base++;
    ck_assert_uint_eq(e->nargs, 3);
    const uint64_t *a = opp_event_args(t, e);
    ck_assert_msg(a[0] == status, "%s: status %llu, the program saw %llu", ev_name(m, e),
                  (unsigned long long)a[0], (unsigned long long)status);
    ck_assert_uint_eq(a[1], 0);
    ck_assert_uint_eq(a[2], e->fn - base);
    ck_assert_uint_eq(e->flags & OPP_EV_OPEN, 0);
}

/* The thread's events at depth 0 are exactly ws, in order. */
static void check_top(const struct opp_model *m, const struct opp_thread *t, const struct wants *ws)
{
    ck_assert_ptr_nonnull(t);
    size_t k = 0;
    for (size_t i = 0; i < t->nevents; i++) {
        const struct opp_event *e = &t->events[i];
        if (e->depth)
            continue;
        ck_assert_msg(k < ws->n, "unexpected call %s", ev_name(m, e));
        ck_assert_str_eq(ev_name(m, e), ws->w[k].name);
        check_api_event(m, t, e, ws->w[k].status);
        k++;
    }
    ck_assert_uint_eq(k, ws->n);
}

static size_t count_nested(const struct opp_thread *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nevents; i++)
        n += t->events[i].depth > 0;
    return n;
}

/* The report's list of calls that did not return success holds exactly the
 * failed calls of the nw want lists, counted per entry point and status,
 * each status named as the library names it; its table shows the CUDA
 * columns at 0 and says "Calls that did not return success: N of M" with
 * every failed pair on a line. */
static void check_statuses(const struct opp_model *m, const struct wants *const *w, size_t nw)
{
    struct opp_agg a;
    struct opp_agg_opts o = {0};
    ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
    uint64_t failed = 0, calls = 0;
    size_t pairs = 0;
    for (size_t l = 0; l < nw; l++)
        for (size_t i = 0; i < w[l]->n; i++) {
            const struct want *x = &w[l]->w[i];
            calls++;
            if (!x->status)
                continue;
            failed++;
            uint64_t n = 0, first = 1;
            for (size_t l2 = 0; l2 < nw; l2++) /* count the pair once, at its first sight */
                for (size_t j = 0; j < w[l2]->n; j++) {
                    const struct want *y = &w[l2]->w[j];
                    if (y->status == x->status && !strcmp(y->name, x->name)) {
                        first &= !(l2 < l || (l2 == l && j < i));
                        n++;
                    }
                }
            if (!first)
                continue;
            pairs++;
            size_t k = 0;
            while (k < a.nstatuses && !(a.statuses[k].status == (int64_t)x->status &&
                                        !strcmp(a.statuses[k].key, x->name)))
                k++;
            ck_assert_msg(k < a.nstatuses, "%s %llu not listed", x->name,
                          (unsigned long long)x->status);
            const struct opp_status_row *s = &a.statuses[k];
            ck_assert_uint_eq(s->count, n);
            const char *want_name = !strcmp(s->lib, "cuda")
                                        ? (x->status == 34 ? "CUDA_ERROR_STUB_LIBRARY" : NULL)
                                        : (x->status == 34   ? "cudaErrorStubLibrary"
                                           : x->status == 35 ? "cudaErrorInsufficientDriver"
                                                             : NULL);
            ck_assert_ptr_nonnull(want_name);
            ck_assert_str_eq(s->name, want_name);
        }
    ck_assert_uint_eq(a.nstatuses, pairs);
    ck_assert_uint_eq(a.errors, failed);
    ck_assert_uint_eq(a.events, calls);
    char *text = NULL;
    struct opp_out_opts oo = {0};
    CAPTURE(text, opp_out_table(f, &a, &oo));
    /* A CUDA program without a GPU: the CUDA time columns, at 0 (and torch's
     * NaN share of a zero total) */
    ck_assert(a.cuda_calls);
    ck_assert_msg(strstr(text, "     Self CUDA   Self CUDA %    CUDA total  CUDA time avg  "),
                  "%s", text);
    ck_assert_ptr_nonnull(strstr(text, "       0.000us           NaN       0.000us        0.000us  "));
    ck_assert_ptr_nonnull(strstr(text, "\nSelf CUDA time total: 0.000us\n"));
    char head[96];
    snprintf(head, sizeof head, "\nCalls that did not return success: %llu of %llu\n",
             (unsigned long long)failed, (unsigned long long)calls);
    ck_assert_msg(strstr(text, head), "%s", text);
    for (size_t k = 0; k < a.nstatuses; k++) {
        char line[224]; /* Status left-aligned: padded to the column's width */
        snprintf(line, sizeof line, " %s  %12llu  %s (%lld)", a.statuses[k].key,
                 (unsigned long long)a.statuses[k].count, a.statuses[k].name,
                 (long long)a.statuses[k].status);
        ck_assert_msg(strstr(text, line), "no line '%s' in:\n%s", line, text);
    }
    free(text);
    opp_agg_free(&a);
}

/* The stub driver's answer to cudart's start-up (measured: static and
 * shared cudart alike): cuGetProcAddress_v2 (for ""), cuGetExportTable,
 * cuDriverGetVersion, each CUDA_ERROR_STUB_LIBRARY (34); then cudart gives
 * up on the driver. No cuInit. */
static void stub_startup(struct wants *ws)
{
    add(ws, "cuGetProcAddress_v2", 34);
    add(ws, "cuGetExportTable", 34);
    add(ws, "cuDriverGetVersion", 34);
}

/* ---- shared cudart ---- */

/* rt (shared cudart, optionally per-thread default stream) with no
 * libcuda.so.1 at all, or with the stub as libcuda.so.1. */
static void runtime_shared(const char *name, const char *launch_sym, int with_stub)
{
    char libpath[4200];
    snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s", prog("tests/cuda/stub"));
    struct runs r;
    run_both(&r, (char *[]){(char *)prog(name), NULL}, with_stub ? libpath : NULL, NULL);
    same_behaviour(&r, 7); /* no device */
    const char *driver_status = with_stub ? "34" : "35";
    char line[64];
    snprintf(line, sizeof line, "CALL cudaGetDeviceCount %s ", driver_status);
    ck_assert_ptr_nonnull(strstr(r.plain, line));
    ck_assert_ptr_nonnull(strstr(r.err, "CUDA calls are recorded by symbol interposition"));
    const struct opp_model *m = trace_ok(&r);
    ck_assert_uint_eq(m->nthreads, 2);

    struct wants main_w = {0}, thr_w = {0};
    runtime_wants(r.plain, launch_sym, &main_w);
    parse_calls(r.plain, "THREAD CALL ", &thr_w);
    ck_assert_uint_eq(thr_w.n, 2);
    const struct opp_thread *t = thread_of(m, 1);
    check_top(m, t, &main_w);
    check_top(m, thread_of(m, 0), &thr_w);
    ck_assert_uint_eq(count_nested(thread_of(m, 0)), 0);

    if (!with_stub) { /* nothing below cudart: no driver to call */
        ck_assert_uint_eq(count_nested(t), 0);
        ck_assert_uint_eq(m->events, main_w.n + thr_w.n);
        check_statuses(m, (const struct wants *[]){&main_w, &thr_w}, 2);
    } else { /* the driver's start-up, inside the first call that needs it */
        struct wants drv = {0};
        stub_startup(&drv);
        ck_assert_uint_eq(count_nested(t), drv.n);
        size_t k = 0, parent = OPP_NO_PARENT;
        for (size_t i = 0; i < t->nevents; i++) {
            const struct opp_event *e = &t->events[i];
            if (!strcmp(ev_name(m, e), "cudaDriverGetVersion"))
                parent = i;
            if (!e->depth)
                continue;
            ck_assert_uint_eq(e->depth, 1);
            ck_assert_uint_eq(e->parent, parent);
            ck_assert_str_eq(ev_name(m, e), drv.w[k].name);
            check_api_event(m, t, e, drv.w[k].status);
            k++;
        }
        ck_assert_uint_ne(parent, OPP_NO_PARENT);
        ck_assert_uint_eq(m->events, main_w.n + thr_w.n + drv.n);
        check_statuses(m, (const struct wants *[]){&main_w, &thr_w, &drv}, 3);
    }
    runs_free(&r);
}

START_TEST(shared_cudart_no_driver)
{
    if (built("tests/cuda/rt_shared", "shared_cudart_no_driver"))
        runtime_shared("tests/cuda/rt_shared", "__cudaLaunchKernel", 0);
}
END_TEST

START_TEST(shared_cudart_ptsz_no_driver)
{
    if (built("tests/cuda/rt_ptsz", "shared_cudart_ptsz_no_driver"))
        runtime_shared("tests/cuda/rt_ptsz", "__cudaLaunchKernel_ptsz", 0);
}
END_TEST

START_TEST(shared_cudart_stub_driver)
{
    if (built("tests/cuda/rt_shared", "shared_cudart_stub_driver"))
        runtime_shared("tests/cuda/rt_shared", "__cudaLaunchKernel", 1);
}
END_TEST

/* ---- static cudart ---- */

/* No runtime symbol to interpose; no libcuda.so.1: nothing to record. */
START_TEST(static_cudart_no_driver)
{
    if (!built("tests/cuda/rt_static", "static_cudart_no_driver"))
        return;
    struct runs r;
    run_both(&r, (char *[]){(char *)prog("tests/cuda/rt_static"), NULL}, NULL, NULL);
    same_behaviour(&r, 7);
    ck_assert_ptr_nonnull(strstr(r.plain, "CALL cudaGetDeviceCount 35 "));
    ck_assert_uint_eq(trace_ok(&r)->events, 0);
    runs_free(&r);
}
END_TEST

/* The stub as libcuda.so.1: static cudart dlopens it and takes its entry
 * points with dlsym (440 lookups; cuGetProcAddress_v2 answered 34), so the
 * driver calls it makes are recorded through the trampolines dlsym handed
 * out, and every runtime call the program made failed with 34. */
START_TEST(static_cudart_stub_driver)
{
    if (!built("tests/cuda/rt_static", "static_cudart_stub_driver"))
        return;
    char libpath[4200];
    snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s", prog("tests/cuda/stub"));
    struct runs r;
    run_both(&r, (char *[]){(char *)prog("tests/cuda/rt_static"), NULL}, libpath, NULL);
    same_behaviour(&r, 7);
    struct wants printed = {0};
    parse_calls(r.plain, "CALL ", &printed);
    ck_assert_uint_eq(printed.n, 21);
    for (size_t i = 0; i < printed.n; i++) /* versions and error strings need no driver */
        if (strcmp(printed.w[i].name, "cudaRuntimeGetVersion") &&
            strcmp(printed.w[i].name, "cudaDriverGetVersion") &&
            strcmp(printed.w[i].name, "cudaGetErrorString"))
            ck_assert_msg(printed.w[i].status == 34, "%s", printed.w[i].name);
    const struct opp_model *m = trace_ok(&r);
    struct wants drv = {0};
    stub_startup(&drv);
    ck_assert_uint_eq(m->events, drv.n);
    const struct opp_thread *t = thread_of(m, 1);
    check_top(m, t, &drv);
    check_statuses(m, (const struct wants *[]){&drv}, 1);
    runs_free(&r);
}
END_TEST

/* ---- the driver through dlsym and cuGetProcAddress ---- */

/* A fake driver that answers with values computed from every argument
 * (tests/cuda/fake_driver.c), reached the way CUDA libraries reach it. */
START_TEST(driver_pointers_fake_driver)
{
    if (!built("tests/cuda/drv_calls", "driver_pointers_fake_driver"))
        return;
    char libpath[4200], stub[4200];
    snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s", prog("tests/cuda/fakecuda"));
    snprintf(stub, sizeof stub, "%s/libcuda.so.1", prog("tests/cuda/stub"));
    struct runs r;
    run_both(&r, (char *[]){(char *)prog("tests/cuda/drv_calls"), stub, NULL}, libpath, NULL);
    same_behaviour(&r, 0);
    /* The values the fake computed reached the program intact: 11 arguments
     * (5 on the stack), errno in and out, out-parameters. */
    ck_assert_ptr_nonnull(strstr(r.plain, "CALL cuDriverGetVersion 0 errno_seen=1234 errno=77\n"));
    ck_assert_ptr_nonnull(strstr(r.plain, "CALL cuMemAlloc_v2 0 dptr=0x10064\n"));
    ck_assert_ptr_nonnull(strstr(r.plain, "CALL cuLaunchKernel 126\n"));
    ck_assert_ptr_nonnull(strstr(r.plain, "CALL cuLaunchKernel_ptsz 1157\n"));
    ck_assert_ptr_nonnull(strstr(r.plain, "CALL cuLaunchHostFunc 0 nested=70\n"));
    ck_assert_ptr_nonnull(strstr(r.plain, "UNRECORDED cuCtxSynchronize 5\n"));
    ck_assert_ptr_nonnull(strstr(r.plain, "UNRECORDED cuDriverGetVersion 34\n"));

    const struct opp_model *m = trace_ok(&r);
    struct wants ws = {0};
    parse_calls(r.plain, "CALL ", &ws);
    ck_assert_uint_eq(ws.n, 15);
    const struct opp_thread *t = thread_of(m, 1);
    check_top(m, t, &ws);
    /* Nested: the fake's cuGetProcAddress calls cuGetProcAddress_v2 through
     * its PLT (the preload's comes first), and cuLaunchHostFunc nests 70
     * deep, of which the first 16 are recorded (the shadow stack's bound),
     * each inside the one before. */
    size_t gpa_children = 0, chain = 0;
    for (size_t i = 0; i < t->nevents; i++) {
        const struct opp_event *e = &t->events[i];
        if (!e->depth)
            continue;
        const struct opp_event *up = &t->events[e->parent];
        if (!strcmp(ev_name(m, up), "cuGetProcAddress")) {
            ck_assert_str_eq(ev_name(m, e), "cuGetProcAddress_v2");
            check_api_event(m, t, e, 0);
            gpa_children++;
            continue;
        }
        ck_assert_str_eq(ev_name(m, e), "cuLaunchHostFunc");
        ck_assert_str_eq(ev_name(m, up), "cuLaunchHostFunc");
        ck_assert_uint_eq(e->depth, up->depth + 1);
        ck_assert_uint_eq(e->depth, ++chain);
        check_api_event(m, t, e, 0);
    }
    ck_assert_uint_eq(gpa_children, 1);
    ck_assert_uint_eq(chain, 15);
    ck_assert_uint_eq(m->events, ws.n + 1 + 15);
    /* Handed back unwrapped: an internal function, a second driver's copy. */
    ck_assert_uint_eq(tu_count(m, "cuCtxSynchronize", -1, 0, -1), 0);
    ck_assert_uint_eq(tu_count(m, "cuDriverGetVersion", -1, 0, -1), 1);
    runs_free(&r);
}
END_TEST

/* ---- dlsym ---- */

static const char *probe_lines =
    "dlsym(RTLD_DEFAULT, cudaGetDeviceCount): absent, dlerror set\n"
    "dlsym(RTLD_DEFAULT, cuInit): absent, dlerror set\n"
    "dlsym(RTLD_DEFAULT, cblas_dgemm): absent, dlerror set\n"
    "dlsym(RTLD_DEFAULT, printf): found, no dlerror\n"
    "dlsym(RTLD_NEXT, cudaGetDeviceCount): absent, dlerror set\n"
    "dlsym(main program, cudaGetDeviceCount): absent, dlerror set\n";

/* A library that wraps rand() through dlsym(RTLD_NEXT) still finds libc's
 * (relative to itself); a program without CUDA or BLAS still sees them
 * absent, though the preload exports wrappers by those names. */
START_TEST(dlsym_next_and_default)
{
    struct runs r;
    run_both(&r, (char *[]){(char *)prog("tests/cuda/dlsym_probe"), NULL}, NULL, NULL);
    same_behaviour(&r, 0);
    ck_assert_ptr_nonnull(strstr(r.plain, "wrapped calls 2, RTLD_NEXT from the library finds libc's: 1\n"));
    ck_assert_ptr_nonnull(strstr(r.plain, probe_lines));
    ck_assert_uint_eq(trace_ok(&r)->events, 0);
    runs_free(&r);
}
END_TEST

/* The same with libcudart.so.13 dlopened RTLD_LOCAL: invisible to
 * RTLD_DEFAULT until promoted to RTLD_GLOBAL; its functions looked up by
 * handle, and by RTLD_DEFAULT once visible, are recorded when called. */
START_TEST(dlsym_cudart_by_handle)
{
    if (!built("tests/cuda/rt_shared", "dlsym_cudart_by_handle"))
        return;
    struct runs r;
    run_both(&r, (char *[]){(char *)prog("tests/cuda/dlsym_probe"), "cudart", NULL}, NULL, NULL);
    same_behaviour(&r, 0);
    const char *after = strstr(r.plain, "CALL cudaGetDeviceCount ");
    ck_assert_ptr_nonnull(after);
    ck_assert_ptr_nonnull(strstr(after, "dlsym(RTLD_DEFAULT, cudaGetDeviceCount): absent, dlerror set\n"
                                        "dlsym(RTLD_DEFAULT, cudaGetDeviceCount): found, no dlerror\n"));
    const struct opp_model *m = trace_ok(&r);
    struct wants ws = {0};
    parse_calls(r.plain, "CALL ", &ws);
    ck_assert_uint_eq(ws.n, 3);
    check_top(m, thread_of(m, 1), &ws);
    ck_assert_uint_eq(m->events, 3);
    runs_free(&r);
}
END_TEST

/* OPPROF_DISABLE=1: nothing recorded, nothing written, same behaviour
 * (the dlsym answers included). */
START_TEST(disabled_changes_nothing)
{
    struct runs r;
    run_both(&r, (char *[]){(char *)prog("tests/cuda/dlsym_probe"), NULL}, "OPPROF_DISABLE=1", NULL);
    same_behaviour(&r, 0);
    ck_assert_ptr_nonnull(strstr(r.plain, probe_lines));
    ck_assert_ptr_null(r.m);
    runs_free(&r);
    if (!built("tests/cuda/rt_shared", "disabled_changes_nothing (CUDA part)"))
        return;
    char libpath[4200];
    snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s", prog("tests/cuda/stub"));
    run_both(&r, (char *[]){(char *)prog("tests/cuda/rt_shared"), NULL}, "OPPROF_DISABLE=1", libpath);
    same_behaviour(&r, 7);
    ck_assert_ptr_nonnull(strstr(r.plain, "CALL cudaGetDeviceCount 34 "));
    ck_assert_str_eq(r.err, "");
    ck_assert_ptr_null(r.m);
    runs_free(&r);
}
END_TEST

Suite *suite_cuda(void)
{
    Suite *s = suite_create("cuda");
    TCase *tc = tcase_create("symbol_fallback");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, shared_cudart_no_driver);
    tcase_add_test(tc, shared_cudart_ptsz_no_driver);
    tcase_add_test(tc, shared_cudart_stub_driver);
    tcase_add_test(tc, static_cudart_no_driver);
    tcase_add_test(tc, static_cudart_stub_driver);
    tcase_add_test(tc, driver_pointers_fake_driver);
    tcase_add_test(tc, dlsym_next_and_default);
    tcase_add_test(tc, dlsym_cudart_by_handle);
    tcase_add_test(tc, disabled_changes_nothing);
    suite_add_tcase(s, tc);
    return s;
}
