/* `opprof export chrome` end to end: real programs under the real preload,
 * the export parsed as JSON by Python and summarised (tests/py/
 * chrome_summary.py), compared exactly; gzip output; bad input. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "testutil.h"
#include "tracebuild.h"

TU_TRACE_FIXTURE

static const char *python(void)
{
    return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

/* opprof export chrome trace -o out; its exit code, stderr in *err. */
static int export(const char *out, char **err)
{
    char *e = tu_path(dir, "export.err");
    char *argv[] = {(char *)tu_tool("opprof"), "export", "chrome", trace, "-o", (char *)out, NULL};
    int code = tu_code(tu_run(argv, NULL, NULL, e));
    if (err)
        *err = tu_slurp(e);
    free(e);
    return code;
}

static char *summary(const char *json)
{
    char script[4200];
    snprintf(script, sizeof script, "%s/tests/py/chrome_summary.py", getenv("OPPROF_SRC"));
    char *o = tu_path(dir, "summary");
    char *argv[] = {(char *)python(), script, (char *)json, NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, o, NULL)), 0);
    char *s = tu_slurp(o);
    free(o);
    return s;
}

/* CPU BLAS: every call a cpu_op with torch's Input Dims and its FLOPs. */
START_TEST(blas_cpu_ops)
{
    struct tu_env te;
    char *argv[] = {(char *)tu_build("tests/progs/blas_calls"), NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, tu_preload_env(&te, trace, NULL), NULL, NULL)), 0);
    char *json = tu_path(dir, "t.json"), *err;
    ck_assert_int_eq(export(json, &err), 0);
    ck_assert_str_eq(err, "");
    char *s = summary(json);
    ck_assert_str_eq(
        s, "keys baseTimeNanoseconds deviceProperties displayTimeUnit schemaVersion traceEvents\n"
           "count M - 2\n"
           "count X cpu_op 19\n"
           "negative 0\n"
           "flows unmatched 0 0\n"
           "op cpu_op cblas_daxpy 1\n"
           "op cpu_op cblas_ddot 5\n"
           "op cpu_op cblas_dgemm 5\n"
           "op cpu_op cblas_dscal 1\n"
           "op cpu_op cblas_zgemm 1\n"
           "op cpu_op dgemv_ 2\n"
           "op cpu_op sgemm_ 4\n"
           "memory []\n"
           "dims cblas_daxpy [[100], [100]] 200 1\n"
           "dims cblas_ddot [[1000], [1000]] 2000 5\n"
           "dims cblas_dgemm [[64, 48], [48, 32], [64, 32]] 196608 5\n"
           "dims cblas_dscal [[100]] 100 1\n"
           "dims cblas_zgemm [[16, 16], [16, 16], [16, 16]] 32768 1\n"
           "dims dgemv_ [[48, 64], [64], [48]] 6144 2\n"
           "dims sgemm_ [[64, 48], [48, 32], [64, 32]] 196608 4\n");
    /* the flame graph is well-formed XML, and its frames add up: "all" is
     * the sum of the operators' frames (one level: BLAS calls do not nest;
     * frames too thin to see are left out, each under 0.3 px) */
    char *svg = tu_path(dir, "t.svg"), *chk = tu_path(dir, "chk");
    char *fg[] = {(char *)tu_tool("opprof"), "export", "flamegraph", trace, "-o", svg, NULL};
    ck_assert_int_eq(tu_code(tu_run(fg, NULL, NULL, NULL)), 0);
    char *py[] = {(char *)python(), "-c",
                  "import sys, re, xml.etree.ElementTree as E\n"
                  "t = E.parse(sys.argv[1])\n"
                  "ns = '{http://www.w3.org/2000/svg}'\n"
                  "w = [float(r.get('width')) for r in t.iter(ns + 'rect') if r.get('height') == '16']\n"
                  "c = sum(w[1:])\n"
                  "print(2 <= len(w) <= 8, w[0] - 0.3 * (8 - len(w)) - 0.1 * len(w) <= c <= w[0] + 0.1 * len(w))\n",
                  svg, NULL};
    ck_assert_int_eq(tu_code(tu_run(py, NULL, chk, NULL)), 0);
    char *cs = tu_slurp(chk);
    /* "all" and up to the 7 operators: a frame under 0.3 px is not drawn,
     * and how many are that thin depends on the run's times (one call
     * preempted on a busy machine makes the others thin) */
    ck_assert_str_eq(cs, "True True\n");
    free(cs), free(svg), free(chk);

    /* the same bytes through gzip (where opprof was built with zlib) */
    char *gz = tu_path(dir, "t.json.gz"), *unz = tu_path(dir, "unz.json");
    char *gzerr;
    int gzrc = export(gz, &gzerr);
    char *a = NULL, *b = NULL;
    if (gzrc == 1 && strstr(gzerr, "built without zlib")) {
        fprintf(stderr, "SKIP gzip export: built without zlib1g-dev\n");
    } else {
        ck_assert_int_eq(gzrc, 0);
        char cmd[9000];
        snprintf(cmd, sizeof cmd, "gzip -dc '%s' > '%s'", gz, unz);
        ck_assert_int_eq(system(cmd), 0);
        a = tu_slurp(json), b = tu_slurp(unz);
        ck_assert_str_eq(a, b);
    }
    free(gzerr);
    ck_assert_int_eq(tu_count_files(dir, ".tmp"), 0);
    free(a), free(b), free(gz), free(unz), free(s), free(err), free(json);
}
END_TEST

/* The CUDA runtime test double (tests/double): runtime calls, kernels on
 * pid 0 (device) / tid 7 (stream), launch arrows, copies, memory. */
START_TEST(gpu_double)
{
    if (access(tu_build("tests/double/gpu_app"), X_OK) != 0) {
        fprintf(stderr, "skipped: no CUDA toolkit at build time, so no test double\n");
        return;
    }
    char cupti[4200];
    snprintf(cupti, sizeof cupti, "OPPROF_CUPTI=%s", tu_build("tests/double/libcudart.so.13"));
    struct tu_env te;
    char *argv[] = {(char *)tu_build("tests/double/gpu_app"), NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, tu_preload_env(&te, trace, cupti), NULL, NULL)), 0);
    char *json = tu_path(dir, "g.json");
    ck_assert_int_eq(export(json, NULL), 0);
    char *s = summary(json);
    ck_assert_str_eq(
        s, "keys baseTimeNanoseconds deviceProperties displayTimeUnit schemaVersion traceEvents\n"
           "count M - 4\n"
           "count X cuda_runtime 9\n"
           "count X gpu_memcpy 2\n"
           "count X kernel 6\n"
           "count f ac2g 8\n"
           "count i cuda_memory 2\n"
           "count s ac2g 6\n"
           "negative 0\n"
           "flows unmatched 0 0\n"
           "op cuda_runtime cudaDeviceSynchronize 1\n"
           "op cuda_runtime cudaFree 1\n"
           "op cuda_runtime cudaGraphLaunch 1\n"
           "op cuda_runtime cudaLaunchKernel 3\n"
           "op cuda_runtime cudaMalloc 1\n"
           "op cuda_runtime cudaMemcpy 2\n"
           "op gpu_memcpy Memcpy DtoH (Device -> Pageable) 1\n"
           "op gpu_memcpy Memcpy HtoD (Pageable -> Device) 1\n"
           "op kernel graph_op() 3\n"
           "op kernel step(float*, int) 3\n"
           "meta process_name 0 0 GPU 0\n"
           "meta thread_name 0 7 stream 7\n"
           "memory [1048576, 0]\n");
    free(s), free(json);

    /* the memory timeline: the 1 MiB cudaMalloc, then its cudaFree */
    char *mem = tu_path(dir, "mem.json"), *svg = tu_path(dir, "mem.svg"), *e = tu_path(dir, "e");
    char *margv[] = {(char *)tu_tool("opprof"), "export", "memory", trace, "-o", mem, NULL};
    ck_assert_int_eq(tu_code(tu_run(margv, NULL, NULL, e)), 0);
    char *mj = tu_slurp(mem);
    double t1 = 0;
    char tail[64] = "";
    ck_assert_int_eq(sscanf(mj, "[[0.000, %lf], %63[^\n]", &t1, tail), 2);
    ck_assert(t1 > 0);
    ck_assert_str_eq(tail, "[[1048576], [0]]]");
    margv[5] = svg;
    ck_assert_int_eq(tu_code(tu_run(margv, NULL, NULL, e)), 0);
    char *ms = tu_slurp(svg);
    ck_assert_ptr_nonnull(strstr(ms, ">peak 1.00 Mb at 0.000us</text>"));
    ck_assert_ptr_nonnull(strstr(ms, ">1.00 Mb in 1 allocation: cudaMalloc</text>"));
    ck_assert_ptr_nonnull(strstr(ms, ">allocated at the end: 0 b;"));
    /* a device the trace does not hold, or the CPU's series it lacks: a
     * usage error (exit 2), nothing written */
    char *dev[] = {
        (char *)tu_tool("opprof"), "export", "memory", trace, "--device", "3", "-o", mem, NULL};
    ck_assert_int_eq(tu_code(tu_run(dev, NULL, NULL, e)), 2);
    char *es = tu_slurp(e), want[4400];
    snprintf(want, sizeof want, "opprof export: %s has no memory records of device 3\n", trace);
    ck_assert_str_eq(es, want);
    free(es);
    dev[5] = "cpu";
    ck_assert_int_eq(tu_code(tu_run(dev, NULL, NULL, e)), 2);
    es = tu_slurp(e);
    snprintf(want, sizeof want,
             "opprof export: %s has no CPU memory records (PyTorch's CPU allocator)\n", trace);
    ck_assert_str_eq(es, want);
    free(es);
    char *left = tu_slurp(mem); /* the export before, untouched */
    ck_assert_str_eq(left, mj);
    free(left);
    free(ms), free(mj), free(mem), free(svg), free(e);
}
END_TEST

/* A double's program (tests/double/APP) run under the preload with one
 * more variable (or NULL), exported, summarised; NULL when not built. */
static char *double_summary(const char *app, const char *extra)
{
    char exe[256];
    snprintf(exe, sizeof exe, "tests/double/%s", app);
    if (access(tu_build(exe), X_OK) != 0) {
        fprintf(stderr, "skipped: no CUDA toolkit or cuBLAS header at build time, so no %s\n", app);
        return NULL;
    }
    char cupti[4200];
    snprintf(cupti, sizeof cupti, "OPPROF_CUPTI=%s", tu_build("tests/double/libcudart.so.13"));
    struct tu_env te;
    const char *vars[] = {cupti, extra, NULL};
    char *argv[] = {(char *)tu_build(exe), NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, tu_preload_env_list(&te, trace, vars), NULL, NULL)), 0);
    char *json = tu_path(dir, "d.json");
    ck_assert_int_eq(export(json, NULL), 0);
    char *s = summary(json);
    free(json);
    return s;
}

/* Arrows join only a call and GPU work both in the trace: the cuBLAS
 * double's split-K kernels come from calls the agent has no event for
 * (tests/double/cublas_double.c), so only the two recorded launches get
 * an arrow, with both ends. */
START_TEST(arrows_need_both_ends)
{
    char *s = double_summary("blas_app", NULL);
    if (!s)
        return;
    ck_assert_ptr_nonnull(strstr(s, "count X kernel 4\n"));
    ck_assert_ptr_nonnull(strstr(s, "count f ac2g 2\n"));
    ck_assert_ptr_nonnull(strstr(s, "count s ac2g 2\n"));
    ck_assert_ptr_nonnull(strstr(s, "flows unmatched 0 0\n"));
    free(s);
}
END_TEST

/* Correlation ids near and past 2^32 (a process whose CUPTI has made
 * 2^32 - 3 calls): every launch still gets its arrow, both ends, and the
 * export does not size anything by the ids' value. */
START_TEST(arrows_past_the_wrap)
{
    char *s = double_summary("gpu_app", "DOUBLE_CUPTI_CORR=4294967293");
    if (!s)
        return;
    ck_assert_ptr_nonnull(strstr(s, "count f ac2g 8\n"));
    ck_assert_ptr_nonnull(strstr(s, "count s ac2g 6\n"));
    ck_assert_ptr_nonnull(strstr(s, "flows unmatched 0 0\n"));
    free(s);
}
END_TEST

/* Wrong arguments, a damaged trace, the trace as its own output, an
 * unwritable place: a clear line, a non-zero exit, nothing damaged. */
START_TEST(bad_input)
{
    char *e = tu_path(dir, "err");
    char *noargs[] = {(char *)tu_tool("opprof"), "export", NULL};
    ck_assert_int_eq(tu_code(tu_run(noargs, NULL, NULL, e)), 2);
    char *s = tu_slurp(e);
    ck_assert_str_eq(s, "opprof export: which format and trace? (usage: opprof export "
                        "chrome|stacks|flamegraph|memory|html|sqlite TRACE... [-o OUT])\n");
    free(s);
    char *noformat[] = {(char *)tu_tool("opprof"), "export", trace, NULL};
    ck_assert_int_eq(tu_code(tu_run(noformat, NULL, NULL, e)), 2);
    s = tu_slurp(e);
    ck_assert_str_eq(s, "opprof export: which format? (usage: opprof export "
                        "chrome|stacks|flamegraph|memory|html|sqlite TRACE... [-o OUT])\n");
    free(s);
    char *fmt[] = {(char *)tu_tool("opprof"), "export", "pprof", trace, NULL};
    ck_assert_int_eq(tu_code(tu_run(fmt, NULL, NULL, e)), 2);
    s = tu_slurp(e);
    ck_assert_str_eq(s, "opprof export: unknown format 'pprof' (known: chrome, stacks, "
                        "flamegraph, memory, html, sqlite)\n");
    free(s);

    FILE *f = fopen(trace, "w");
    fputs("not a trace at all, just text\n", f);
    fclose(f);
    char *json = tu_path(dir, "x.json");
    char *err;
    ck_assert_int_eq(export(json, &err), 1);
    ck_assert_int_eq(tu_count_lines(err, "opprof export: "), 1);
    ck_assert_ptr_nonnull(strstr(err, "not an opprof trace"));
    ck_assert_int_eq(access(json, F_OK), -1); /* no half file */
    ck_assert_int_eq(tu_count_files(dir, ".tmp"), 0);
    free(err);

    /* the trace itself as output: refused, trace untouched */
    char *good = tu_path(dir, "good.trace"), *copy = tu_path(dir, "copy.trace");
    struct tu_env te;
    char *argv[] = {(char *)tu_build("tests/progs/blas_calls"), NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, tu_preload_env(&te, good, NULL), NULL, NULL)), 0);
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", good, copy);
    ck_assert_int_eq(system(cmd), 0);
    char *self[] = {(char *)tu_tool("opprof"), "export", "chrome", good, "-o", good, NULL};
    ck_assert_int_eq(tu_code(tu_run(self, NULL, NULL, e)), 2);
    err = tu_slurp(e);
    ck_assert_ptr_nonnull(strstr(err, "is the trace itself"));
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", good, copy);
    ck_assert_int_eq(system(cmd), 0);

    /* the first chunk damaged: nothing to read, so every command refuses it
     * (not an empty table and exit 0) */
    f = fopen(copy, "r+");
    ck_assert_int_eq(fseek(f, OPP_FILE_HEADER_SIZE + 16 + 1, SEEK_SET), 0);
    int c = fgetc(f);
    ck_assert_int_eq(fseek(f, OPP_FILE_HEADER_SIZE + 16 + 1, SEEK_SET), 0);
    fputc(c ^ 0x40, f);
    fclose(f);
    char *cmds[][5] = {{"report", copy, NULL},
                       {"report", copy, "--tree", NULL},
                       {"export", "chrome", copy, "-o", json},
                       {"advise", copy, NULL}};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char *av[7] = {(char *)tu_tool("opprof")};
        memcpy(av + 1, cmds[i], sizeof cmds[i]);
        ck_assert_int_eq(tu_code(tu_run(av, NULL, NULL, e)), 1);
        err = tu_slurp(e);
        char want[4400];
        snprintf(want, sizeof want,
                 "opprof %s: %s: nothing in the trace can be read: trace damaged at byte %u: "
                 "checksum mismatch in a chunk of type 1\n",
                 cmds[i][0], copy, OPP_FILE_HEADER_SIZE);
        ck_assert_str_eq(err, want);
        free(err);
    }
    ck_assert_int_eq(access(json, F_OK), -1);
    free(good), free(copy);

    /* a directory that does not exist */
    char *nowhere = tu_path(dir, "no/such/dir/x.json");
    ck_assert_int_eq(export(nowhere, &err), 1);
    char want[4400];
    snprintf(want, sizeof want, "opprof export: cannot write %s: No such file or directory\n",
             nowhere);
    ck_assert_str_eq(err, want);
    free(err), free(nowhere), free(json), free(e);
}
END_TEST

/* `opprof export FORMAT path ARGS... -o out` (ARGS: two, or NULL): the
 * exit code 0, nothing on stderr, the output's text in *text; the tool's
 * peak memory in KiB. */
static long export_kb(const char *format, const char *path, const char *a1, const char *a2,
                      const char *out, char **text)
{
    char *argv[] = {(char *)tu_tool("opprof"),
                    "export",
                    (char *)format,
                    (char *)path,
                    "-o",
                    (char *)out,
                    (char *)a1,
                    (char *)a2,
                    NULL};
    long kb;
    char *stdout_text, *why = tu_peak_quiet(dir, argv, &stdout_text, &kb);
    ck_assert_msg(!why, "%s", why);
    ck_assert_str_eq(stdout_text, "");
    *text = tu_slurp(out);
    free(stdout_text);
    return kb;
}

/* The CPU memory timeline read in one pass, its points sorted by time
 * beyond memory and written as read: 10 times the calls and points, the
 * same peak memory give or take 12 MiB (the sort's 8 MiB buffer fills on
 * the larger; every call loaded: over 30 MiB more). */
START_TEST(memory_bounded_by_what_it_shows)
{
    char *small = tu_path(dir, "small.trace"), *big = tu_path(dir, "big.trace");
    char *json = tu_path(dir, "m.json"), *svg = tu_path(dir, "m.svg");
    tb_outer_memory(small, 10000);
    tb_outer_memory(big, 100000);
    char *a, *b;
    long ka = export_kb("memory", small, "--device", "cpu", json, &a);
    long kb = export_kb("memory", big, "--device", "cpu", json, &b);
    ck_assert_msg(kb - ka < 12288, "peak %ld KiB for 400,000 calls against %ld KiB for 40,000", kb,
                  ka);
    /* every allocation and free a point, in time order: 256 bytes up, down */
    ck_assert_int_eq(strncmp(a, "[[0.000, 0.045, 0.200, 0.245, 0.400, ", 37), 0);
    ck_assert_int_eq(strncmp(b, "[[0.000, 0.045, 0.200, 0.245, 0.400, ", 37), 0);
    ck_assert_int_eq(tu_count_lines(b, ""), 1);
    const char *tail = strstr(b, "], [[256], [0], [256], ");
    ck_assert_ptr_nonnull(tail);
    ck_assert_str_eq(b + strlen(b) - 13, "[256], [0]]]\n");
    free(a), free(b);
    ka = export_kb("memory", small, NULL, NULL, svg, &a);
    kb = export_kb("memory", big, NULL, NULL, svg, &b);
    ck_assert_msg(kb - ka < 12288, "SVG: peak %ld KiB for 400,000 calls against %ld KiB", kb, ka);
    ck_assert_ptr_nonnull(strstr(a, ">2.44 Mb in 10000 allocations: outer</text>"));
    ck_assert_ptr_nonnull(strstr(b, ">24.41 Mb in 100000 allocations: outer</text>"));
    ck_assert_ptr_nonnull(strstr(b, ">peak 256 b at 0.000us</text>"));
    free(a), free(b), free(small), free(big), free(json), free(svg);
}
END_TEST

/* The HTML page read in passes over the trace: 10 times the calls, the
 * same rows, call paths and peak memory give or take 4 MiB (every call
 * loaded: about 10 MiB more); with CPU memory, give or take 24 MiB (the
 * sorts' 8 MiB buffers fill on the larger; every call loaded: about 38
 * MiB more). */
START_TEST(html_bounded_by_what_it_shows)
{
    char *small = tu_path(dir, "small.trace"), *big = tu_path(dir, "big.trace");
    char *page = tu_path(dir, "p.html");
    tb_outer_inner(small, 10000);
    tb_outer_inner(big, 100000);
    char *a, *b;
    long ka = export_kb("html", small, NULL, NULL, page, &a);
    long kb = export_kb("html", big, NULL, NULL, page, &b);
    ck_assert_msg(kb - ka < 4096, "peak %ld KiB for 200,000 calls against %ld KiB for 20,000", kb,
                  ka);
    ck_assert_ptr_nonnull(strstr(a, "<p id=\"summary\">20000 events, 1 processes, 1 threads, "
                                    "0 GPU ops</p>"));
    ck_assert_ptr_nonnull(strstr(b, "<p id=\"summary\">200000 events, 1 processes, 1 threads, "
                                    "0 GPU ops</p>"));
    ck_assert_ptr_nonnull(strstr(b, "<span id=\"shown\">2 of 2 operators</span>"));
    ck_assert_ptr_nonnull(strstr(b, "<span class=\"n\">inner</span> <span class=\"t\">2.000ms "
                                    "(20.00%), self 2.000ms, 100000 calls</span>"));
    free(a), free(b);
    /* with PyTorch's CPU memory: its columns, the findings' series and the
     * plot read through the pass too */
    tb_outer_memory(small, 10000);
    tb_outer_memory(big, 100000);
    ka = export_kb("html", small, NULL, NULL, page, &a);
    kb = export_kb("html", big, NULL, NULL, page, &b);
    ck_assert_msg(kb - ka < 24576, "CPU memory: peak %ld KiB for 400,000 calls against %ld KiB", kb,
                  ka);
    ck_assert_ptr_nonnull(strstr(b, "<h2>CPU memory</h2>"));
    ck_assert_ptr_nonnull(strstr(b, ">24.41 Mb in 100000 allocations: outer</text>"));
    free(a), free(b), free(small), free(big), free(page);
}
END_TEST

/* A trace the pass cannot read (its sort of the CPU memory calls spills
 * and TMPDIR is no place to spill to): every command refuses it in one
 * line naming the place, writing nothing (none loads every call). */
START_TEST(no_room_in_tmpdir_refused)
{
    char *t = tu_path(dir, "mem.trace"), *o = tu_path(dir, "x.out"), *e = tu_path(dir, "x.err");
    char *so = tu_path(dir, "x.stdout");
    tb_outer_memory(t, 100000); /* 200,000 memory calls: past the sort's 8 MiB */
    char *nowhere = tu_path(dir, "no/such/dir");
    char tmpdir[4200];
    snprintf(tmpdir, sizeof tmpdir, "TMPDIR=%s", nowhere);
    char *const env[] = {tmpdir, NULL};
    char *tool = (char *)tu_tool("opprof");
    char *cmds[][7] = {{tool, "export", "memory", t, "-o", o, NULL},
                       {tool, "export", "html", t, "-o", o, NULL},
                       {tool, "export", "stacks", t, "-o", o, NULL},
                       {tool, "report", t, NULL},
                       {tool, "advise", t, NULL},
                       {tool, "diff", t, t, NULL}};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        ck_assert_int_eq(tu_code(tu_run(cmds[i], env, so, e)), !strcmp(cmds[i][1], "diff") ? 3 : 1);
        char *msg = tu_slurp(e), want[4400];
        snprintf(want, sizeof want,
                 "opprof %s: no room for temporary files in %s (No such file or directory)\n",
                 cmds[i][1], nowhere);
        ck_assert_str_eq(msg, want);
        if (!strcmp(cmds[i][1], "export"))
            ck_assert_int_eq(access(o, F_OK), -1);
        free(msg);
    }
    free(t), free(o), free(e), free(so), free(nowhere);
}
END_TEST

/* Under a file size limit (ulimit -f) an output that outgrows it, OUT or
 * a redirected stdout, is a failed write: one line, exit 1, OUT as it was
 * and no temporary file (SIGXFSZ killed the tool before, leaving both). */
START_TEST(file_size_limit_said)
{
    char *t = tu_path(dir, "mem.trace"), *o = tu_path(dir, "x.out"), *e = tu_path(dir, "x.err");
    tb_outer_memory(t, 2000);
    char *tool = (char *)tu_tool("opprof");
    char *cmds[][9] = {
        {"sh", "-c", "ulimit -f 1 && exec \"$@\"", "sh", tool, "export", "chrome", t, NULL},
        {"sh", "-c", "ulimit -f 1 && exec \"$@\"", "sh", tool, "export", "memory", t, NULL},
        {"sh", "-c", "ulimit -f 1 && exec \"$@\"", "sh", tool, "export", "sqlite", t, NULL},
        {"sh", "-c", "ulimit -f 1 && exec \"$@\"", "sh", tool, "summarize", t, NULL}};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        FILE *f = fopen(o, "w");
        fputs("OLD\n", f);
        fclose(f);
        char *av[12];
        size_t n = 0;
        for (; cmds[i][n]; n++)
            av[n] = cmds[i][n];
        av[n] = "-o", av[n + 1] = o, av[n + 2] = NULL;
        ck_assert_int_eq(tu_code(tu_run(av, NULL, NULL, e)), 1);
        char *msg = tu_slurp(e), want[4400];
        if (!strcmp(cmds[i][6], "sqlite")) {
            ck_assert_int_eq(tu_count_lines(msg, "opprof export: "), 1);
        } else {
            snprintf(want, sizeof want, "opprof %s: cannot write %s: File too large\n", cmds[i][5],
                     o);
            ck_assert_str_eq(msg, want);
        }
        ck_assert_int_eq(tu_count_lines(msg, ""), 1);
        char *old = tu_slurp(o);
        ck_assert_str_eq(old, "OLD\n");
        ck_assert_int_eq(tu_count_files(dir, ".tmp"), 0);
        free(old), free(msg);
    }
    /* standard output redirected to a file: the same */
    char *so[] = {"sh", "-c", "ulimit -f 1 && exec \"$@\" > \"$0\"", o, tool, "export", "chrome",
                  t,    NULL};
    ck_assert_int_eq(tu_code(tu_run(so, NULL, NULL, e)), 1);
    char *msg = tu_slurp(e);
    ck_assert_str_eq(msg, "opprof export: cannot write standard output: File too large\n");
    free(msg);
    free(t), free(o), free(e);
}
END_TEST

/* `opprof export chrome TRACE --window K [--rank R] -o DIR/` (rank: NULL
 * for none): exit 0, and the one line saying the file it wrote, DIR/name. */
static void window_export(const char *path, const char *window, const char *rank, const char *tb,
                          const char *name)
{
    char *e = tu_path(dir, "err"), want[9000];
    char *ex[] = {(char *)tu_tool("opprof"),
                  "export",
                  "chrome",
                  (char *)path,
                  "--window",
                  (char *)window,
                  "-o",
                  (char *)tb,
                  rank ? "--rank" : NULL,
                  (char *)rank,
                  NULL};
    ck_assert_int_eq(tu_code(tu_run(ex, NULL, NULL, e)), 0);
    char *err = tu_slurp(e);
    snprintf(want, sizeof want, "opprof export: window %s -> %s%s\n", window, tb, name);
    ck_assert_str_eq(err, want);
    free(err), free(e);
}

/* --window K of a trace that cannot be read (not an opprof file, or
 * empty) into DIR/, made or there already: the trace's own line, exit 1,
 * and no output, before any is opened (the window names it). */
START_TEST(window_of_no_trace)
{
    char *e = tu_path(dir, "err"), *made = tu_path(dir, "made/"), *there = tu_path(dir, "there/");
    char *empty = tu_path(dir, "empty.trace"), want[9000];
    ck_assert_int_eq(mkdir(there, 0755), 0);
    FILE *f = fopen(trace, "w");
    fputs("not a trace at all, just text\n", f);
    fclose(f);
    f = fopen(empty, "w");
    fclose(f);
    const char *traces[] = {trace, empty}, *outs[] = {made, there};
    for (int i = 0; i < 4; i++) {
        char *ex[] = {(char *)tu_tool("opprof"),
                      "export",
                      "chrome",
                      (char *)traces[i / 2],
                      "--window",
                      "1",
                      "-o",
                      (char *)outs[i % 2],
                      NULL};
        ck_assert_int_eq(tu_code(tu_run(ex, NULL, NULL, e)), 1);
        char *err = tu_slurp(e);
        snprintf(want, sizeof want, "opprof export: %s is not an opprof trace (bad magic)\n",
                 traces[i / 2]);
        ck_assert_str_eq(err, want);
        free(err);
        ck_assert_int_eq(access(made, F_OK), -1);
        ck_assert_int_eq(tu_count_files(there, ""), 2); /* "." and ".." alone */
    }
    free(e), free(made), free(there), free(empty);
}
END_TEST

/* --window K into a directory: each window its own file, named as torch
 * 2's tensorboard_trace_handler names it, HOST_PID.NS.pt.trace.json with
 * the window's start in ns: the corpus's schedule trace has two windows
 * that start within the same millisecond, and the second must not
 * replace the first. */
START_TEST(windows_named_apart)
{
    char schedule[4200], want[9000];
    snprintf(schedule, sizeof schedule, "%s/tests/corpus/traces/schedule.trace",
             getenv("OPPROF_SRC"));
    char *tb = tu_path(dir, "tb/");
    const char *names[] = {"vm_7060.1795887576835708079.pt.trace.json",
                           "vm_7060.1795887576835772255.pt.trace.json"};
    const char *steps[][2] = {{"\"ProfilerStep#2\"", "\"ProfilerStep#5\""},
                              {"\"ProfilerStep#5\"", "\"ProfilerStep#2\""}};
    for (int k = 0; k < 2; k++)
        window_export(schedule, k ? "2" : "1", NULL, tb, names[k]);
    ck_assert_int_eq(tu_count_files(tb, ".pt.trace.json"), 2);
    for (int k = 0; k < 2; k++) {
        snprintf(want, sizeof want, "%s%s", tb, names[k]);
        char *j = tu_slurp(want);
        ck_assert_ptr_nonnull(strstr(j, steps[k][0]));
        ck_assert_ptr_null(strstr(j, steps[k][1]));
        free(j);
    }
    free(tb);
}
END_TEST

/* Ranks 0 and 1 on host "node", pids 100 and 200, each a ProfilerStep#1
 * at [1000, 2000] ns of its own clock, started at realtime 5 s and 6 s. */
static void write_two_ranks(void)
{
    struct tb b;
    tb_open(&b, trace);
    for (uint32_t p = 1; p <= 2; p++) {
        tb_process(&b, .proc = p, .pid = 100 * p, .real = 4000000000ull + 1000000000ull * p,
                   .exe = "train");
        tb_funcs(&b, {OPP_OP_TORCH, 0, "torch", "torch_op"});
        tb_info(&b, "RANK", p == 1 ? "0" : "1", "host", "node");
        tb_thread(&b, 100 * p, NULL);
        tb_events(&b, TB_CALL(0, 1000, 2000, 0, 1, OPP_TORCH_SCOPE_FUNCTION, 0));
        tb_string(&b, 1, "ProfilerStep#1");
    }
    tb_end(&b);
}

/* --window K --rank N into a directory: the file is named after rank N's
 * process (host, pid and its clock), so that each rank of one trace (one
 * host, as torchrun starts them) has a file of its own. */
START_TEST(ranks_named_apart)
{
    write_two_ranks();
    char *tb = tu_path(dir, "tb/");
    window_export(trace, "1", "0", tb, "node_100.5000001000.pt.trace.json");
    window_export(trace, "1", "1", tb, "node_200.6000001000.pt.trace.json");
    ck_assert_int_eq(tu_count_files(tb, ".pt.trace.json"), 2);
    free(tb);
}
END_TEST

/* The whole trace into a directory (-o DIR/, made, or one there): named
 * as a window's file, at the start of the first process (of --rank N's). */
START_TEST(whole_trace_named_in_a_directory)
{
    write_two_ranks();
    char *tb = tu_path(dir, "tb/"), *there = tu_path(dir, "there"), *e = tu_path(dir, "err");
    ck_assert_int_eq(mkdir(there, 0755), 0);
    const char *outs[] = {tb, tb, there};
    const char *ranks[] = {NULL, "1", NULL};
    const char *names[] = {"node_100.5000000000", "node_200.6000000000", "node_100.5000000000"};
    for (int k = 0; k < 3; k++) {
        char *ex[] = {
            (char *)tu_tool("opprof"),  "export",         "chrome", trace, "-o", (char *)outs[k],
            ranks[k] ? "--rank" : NULL, (char *)ranks[k], NULL};
        ck_assert_int_eq(tu_code(tu_run(ex, NULL, NULL, e)), 0);
        char *err = tu_slurp(e), want[9200], path[9000];
        snprintf(path, sizeof path, "%s%s%s.pt.trace.json", outs[k], k == 2 ? "/" : "", names[k]);
        snprintf(want, sizeof want, "opprof export: %s -> %s\n",
                 ranks[k] ? "rank 1" : "the whole trace", path);
        ck_assert_str_eq(err, want);
        char *j = tu_slurp(path);
        ck_assert_ptr_nonnull(strstr(j, "\"ProfilerStep#1\""));
        free(j), free(err);
    }
    ck_assert_int_eq(tu_count_files(tb, ".pt.trace.json"), 2);
    ck_assert_int_eq(tu_count_files(there, ".pt.trace.json"), 1);
    /* a rank it does not hold: refused before any directory is made */
    char *made = tu_path(dir, "made/");
    char *ex[] = {
        (char *)tu_tool("opprof"), "export", "chrome", trace, "-o", made, "--rank", "7", NULL};
    ck_assert_int_eq(tu_code(tu_run(ex, NULL, NULL, e)), 2);
    char *err = tu_slurp(e), want[9000];
    snprintf(want, sizeof want, "opprof export: no process of %s has rank 7\n", trace);
    ck_assert_str_eq(err, want);
    ck_assert_int_ne(access(made, F_OK), 0);
    free(err), free(made);
    free(tb), free(there), free(e);
}
END_TEST

Suite *suite_export(void)
{
    Suite *s = suite_create("export");
    TCase *tc = tcase_create("chrome");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, blas_cpu_ops);
    tcase_add_test(tc, gpu_double);
    tcase_add_test(tc, arrows_need_both_ends);
    tcase_add_test(tc, arrows_past_the_wrap);
    tcase_add_test(tc, bad_input);
    tcase_add_test(tc, no_room_in_tmpdir_refused);
    tcase_add_test(tc, file_size_limit_said);
    tcase_add_test(tc, window_of_no_trace);
    tcase_add_test(tc, windows_named_apart);
    tcase_add_test(tc, ranks_named_apart);
    tcase_add_test(tc, whole_trace_named_in_a_directory);
    suite_add_tcase(s, tc);
    TCase *peak = tcase_create("peak"); /* tests/tests.mk: the normal build's memory */
    tcase_set_tags(peak, "peak");
    tcase_set_timeout(peak, 60);
    tcase_add_checked_fixture(peak, setup, teardown);
    tcase_add_test(peak, memory_bounded_by_what_it_shows);
    tcase_add_test(peak, html_bounded_by_what_it_shows);
    suite_add_tcase(s, peak);
    return s;
}
