/* Pages opened in a real headless browser (Debian's chromium): the one-page
 * report of `opprof export html` (table, flame graph, stream bars, memory
 * plot) rendered to a screenshot and its parsed DOM read back; and a Chrome
 * trace exported from a run parsed by the browser's JSON.parse and checked
 * against Kineto's schema (tests/html/chrome_check.html). GPU work comes
 * from the test double of the CUDA runtime (tests/double). Without
 * chromium the browser parts are skipped, saying so. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void)
{
    tu_rmdir(dir);
    free(dir);
}

static const char *chromium(void)
{
    static const char *const paths[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser"};
    for (size_t i = 0; i < 2; i++)
        if (access(paths[i], X_OK) == 0)
            return paths[i];
    return NULL;
}

/* chromium --headless with one action (--dump-dom or --screenshot=...) on
 * the file; stdout to out. Its exit code. */
static int browse(const char *action, const char *file, const char *out)
{
    char url[4300], profile[4300], size[] = "--window-size=1200,2000";
    snprintf(url, sizeof url, "file://%s", file);
    snprintf(profile, sizeof profile, "--user-data-dir=%s/profile", dir);
    char home[4300];
    snprintf(home, sizeof home, "HOME=%s", dir);
    char *argv[] = {(char *)chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                    "--disable-dev-shm-usage", profile, (char *)action, size, url, NULL};
    char *env[] = {home, NULL};
    return tu_code(tu_run(argv, env, out, NULL));
}

/* The GPU double's trace, or NULL (skipped, said why). */
static char *gpu_trace(void)
{
    if (access(tu_build("tests/double/gpu_app"), X_OK) != 0) {
        fprintf(stderr, "skipped: no CUDA toolkit at build time, so no test double\n");
        return NULL;
    }
    char *trace = tu_path(dir, "g.trace");
    char cupti[4200];
    snprintf(cupti, sizeof cupti, "OPPROF_CUPTI=%s", tu_build("tests/double/libcudart.so.13"));
    struct tu_env te;
    char *argv[] = {(char *)tu_build("tests/double/gpu_app"), NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, tu_preload_env(&te, trace, cupti), NULL, NULL)), 0);
    return trace;
}

static int count(const char *s, const char *part)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, part)); p++)
        n++;
    return n;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

START_TEST(report_page)
{
    char *trace = gpu_trace();
    if (!trace)
        return;
    char *page = tu_path(dir, "report.html"), *e = tu_path(dir, "err");
    char *argv[] = {(char *)tu_tool("opprof"), "export", "html", trace, "-o", page, NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, e)), 0);
    char *html = tu_slurp(page), *es = tu_slurp(e);
    ck_assert_str_eq(es, "");
    /* one page: its own script, nothing fetched (the only addresses are
     * the SVG namespace's), the writers' SVGs inline */
    ck_assert_int_eq(count(html, "<script"), 1);
    ck_assert_int_eq(count(html, " src="), 0);
    ck_assert_int_eq(count(html, "http://") + count(html, "https://"),
                     count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
    ck_assert_int_eq(count(html, "<?xml"), 0);
    /* the table: 6 runtime calls, 2 kernels, 2 copies, a row each */
    ck_assert_ptr_nonnull(strstr(html, "<table id=\"ops\">"));
    ck_assert_int_eq(count(html, "<tr id=\"op-"), 10);
    ck_assert_ptr_nonnull(strstr(html, "\"><td>step(float*, int)</td>"));
    ck_assert_ptr_nonnull(strstr(html, "<th>Self CUDA</th>"));
    ck_assert_ptr_nonnull(strstr(html, "<span id=\"shown\">10 of 10 operators</span>"));
    /* the call tree: the runtime calls do not nest, so 6 leaves, those
     * under 0.1% of the time counted, not shown */
    const char *more = strstr(html, "<p class=\"more\">");
    int hidden = 0;
    if (more)
        ck_assert_int_eq(sscanf(more, "<p class=\"more\">%d smaller", &hidden), 1);
    ck_assert_int_eq(count(html, "<div class=\"leaf\"><span class=\"n\">cuda") + hidden, 6);
    ck_assert_ptr_nonnull(strstr(html, "<div class=\"leaf\"><span class=\"n\">cudaMemcpy</span>"));
    ck_assert_ptr_nonnull(strstr(html, "<g><title>cudaMemcpy ("));
    ck_assert_int_eq(count(html, "<g class=\"stream\">"), 1);
    ck_assert_ptr_nonnull(strstr(html, ">peak 1.00 Mb at 0.000us</text>"));
    ck_assert_int_eq(count(html, "<svg"), 3); /* flame graph, streams, memory */

    if (!chromium()) {
        fprintf(stderr, "skipped: the browser checks (no chromium: apt-get install chromium)\n");
    } else {
        /* the browser parsed it and ran its script without an error: the
         * DOM it serialises has the table rows and the SVG elements */
        char *dom = tu_path(dir, "dom.html");
        ck_assert_int_eq(browse("--dump-dom", page, dom), 0);
        char *d = tu_slurp(dom);
        ck_assert_ptr_nonnull(d);
        ck_assert_ptr_nonnull(strstr(d, "<body data-ready=\"1\">"));
        ck_assert_int_eq(count(d, "data-error=\""), 0);
        ck_assert_int_eq(count(d, "<tr id=\"op-"), 10);
        ck_assert_ptr_nonnull(strstr(d, "\"><td>cudaLaunchKernel</td>"));
        ck_assert_int_eq(count(d, "<svg"), 3);
        ck_assert_int_eq(count(d, "<g class=\"stream\">"), 1);
        ck_assert_ptr_nonnull(strstr(d, "<title>cudaMemcpy ("));
        ck_assert_ptr_nonnull(strstr(d, ">peak 1.00 Mb at 0.000us</text>"));
        free(d);
        /* sorted by calls, filtered to "cuda", a frame searched and one
         * zoomed into, all from the address (#...): 6 of 10 rows shown,
         * cudaLaunchKernel's 3 calls first, then cudaMemcpy's 2; 1 frame
         * matched; cudaMemcpy (the longest call: its copies wait for the
         * device) across the whole width */
        char state[4400];
        snprintf(state, sizeof state, "%s#sort=%%23%%20of%%20Calls:desc&filter=CUDA"
                                      "&search=%%5EcudaMemcpy%%24&zoom=cudaMemcpy", page);
        ck_assert_int_eq(browse("--dump-dom", state, dom), 0);
        d = tu_slurp(dom);
        ck_assert_ptr_nonnull(strstr(d, "<body data-ready=\"1\">"));
        ck_assert_int_eq(count(d, "data-error=\""), 0);
        ck_assert_ptr_nonnull(strstr(d, "<span id=\"shown\">6 of 10 operators</span>"));
        ck_assert_int_eq(count(d, "\" hidden=\"\"><td>"), 4);
        ck_assert_ptr_nonnull(strstr(d, "<th data-dir=\"desc\"># of Calls</th>"));
        const char *launch = strstr(d, "\"><td>cudaLaunchKernel</td>");
        const char *copy = strstr(d, "\"><td>cudaMemcpy</td>");
        const char *freed = strstr(d, "\"><td>cudaFree</td>");
        ck_assert(launch && copy && freed && launch < copy && copy < freed);
        ck_assert_ptr_nonnull(strstr(d, "data-matched=\"1\""));
        ck_assert_ptr_nonnull(strstr(d, "in 1 frame</span>"));
        ck_assert_ptr_nonnull(strstr(d, "data-zoom=\"cudaMemcpy\""));
        const char *fr = strstr(d, "<title>cudaMemcpy (");
        ck_assert_ptr_nonnull(fr);
        ck_assert_ptr_nonnull(strstr(fr, "<rect x=\"10.0\" y=\"48.0\" width=\"1180.0\""));
        /* its siblings (those wide enough to be drawn) hidden, "all" not */
        ck_assert_int_ge(count(d, "style=\"display: none;\""), 1);
        const char *all = strstr(d, "<title>all (");
        ck_assert_ptr_nonnull(all);
        ck_assert_ptr_nonnull(strstr(all, "<rect x=\"10.0\" y=\"65.0\" width=\"1180.0\""));
        /* and drew it: a 1200 x 2000 PNG, not blank */
        char *png = tu_path(dir, "shot.png"), shot[4400];
        snprintf(shot, sizeof shot, "--screenshot=%s", png);
        ck_assert_int_eq(browse(shot, page, NULL), 0);
        struct stat st;
        ck_assert_int_eq(stat(png, &st), 0);
        ck_assert_msg(st.st_size > 20000 && st.st_size < 20000000, "PNG of %lld bytes",
                      (long long)st.st_size);
        FILE *f = fopen(png, "rb");
        unsigned char head[24];
        ck_assert_uint_eq(fread(head, 1, 24, f), 24);
        fclose(f);
        ck_assert_int_eq(memcmp(head, "\x89PNG\r\n\x1a\n", 8), 0);
        ck_assert_uint_eq(be32(head + 16), 1200);
        ck_assert_uint_eq(be32(head + 20), 2000);
        free(d), free(dom), free(png);
    }
    free(html), free(es), free(page), free(e), free(trace);
}
END_TEST

/* The chrome export of the double's run, parsed by the browser. */
START_TEST(chrome_trace_in_browser)
{
    char *trace = gpu_trace();
    if (!trace)
        return;
    if (!chromium()) {
        fprintf(stderr, "skipped: chrome_trace_in_browser needs chromium (apt-get install chromium)\n");
        free(trace);
        return;
    }
    char *json = tu_path(dir, "t.json");
    char *argv[] = {(char *)tu_tool("opprof"), "export", "chrome", trace, "-o", json, NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, NULL)), 0);
    char tmpl_path[4200];
    snprintf(tmpl_path, sizeof tmpl_path, "%s/tests/html/chrome_check.html", getenv("OPPROF_SRC"));
    char *tmpl = tu_slurp(tmpl_path), *j = tu_slurp(json);
    ck_assert_ptr_nonnull(tmpl);
    ck_assert_ptr_nonnull(j);
    const char *at = strstr(tmpl, "@TRACE@");
    ck_assert_ptr_nonnull(at);
    /* the trace inside <script type="application/json">: "</" may not
     * appear there, and "<\/" means the same in JSON */
    char *page = tu_path(dir, "check.html");
    FILE *f = fopen(page, "w");
    ck_assert_ptr_nonnull(f);
    fwrite(tmpl, 1, (size_t)(at - tmpl), f);
    for (const char *p = j; *p; p++) {
        if (p[0] == '<' && p[1] == '/')
            fputs("<\\", f);
        else
            putc(*p, f);
    }
    fputs(at + 7, f);
    ck_assert_int_eq(fclose(f), 0);
    char *dom = tu_path(dir, "dom.html");
    ck_assert_int_eq(browse("--dump-dom", page, dom), 0);
    char *d = tu_slurp(dom);
    /* 9 runtime calls, 2 copies, 6 kernels; 6 launch arrows, 8 ends */
    ck_assert_msg(strstr(d, "<pre id=\"result\">PASS X=17 gpu=8 s=6 f=8</pre>") != NULL, "%s",
                  strstr(d, "<pre id=\"result\">") ? strstr(d, "<pre id=\"result\">") : d);
    /* and the page says FAIL when the trace breaks the schema */
    f = fopen(page, "w");
    fwrite(tmpl, 1, (size_t)(at - tmpl), f);
    fputs("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"k\", \"ts\": 1, \"pid\": 0, \"tid\": 7}]}",
          f);
    fputs(at + 7, f);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(browse("--dump-dom", page, dom), 0);
    free(d);
    d = tu_slurp(dom);
    ck_assert_ptr_nonnull(strstr(d, "<pre id=\"result\">FAIL: X event 0 (k) has no numeric dur</pre>"));
    free(d), free(dom), free(page), free(tmpl), free(j), free(json), free(trace);
}
END_TEST

/* The findings of `opprof advise` at the top of the page, on the CUDA test
 * double's committed run (tests/corpus/traces/gpu.trace: a device idle 97%
 * of the run, a device-to-host copy, a cudaDeviceSynchronize): each links
 * to its table row and to its node of the call tree, which the page opens
 * from the address (#tree=NAME) as a click on the link does. */
START_TEST(findings_link_rows_and_tree)
{
    char trace[4200];
    snprintf(trace, sizeof trace, "%s/tests/corpus/traces/gpu.trace", getenv("OPPROF_SRC"));
    char *page = tu_path(dir, "g.html");
    char *argv[] = {(char *)tu_tool("opprof"), "export", "html", trace, "-o", page, NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, NULL)), 0);
    char *html = tu_slurp(page);
    const char *fs = strstr(html, "<h2 id=\"findings\">");
    const char *ops = strstr(html, "<table id=\"ops\">");
    ck_assert(fs && ops && fs < ops);
    ck_assert_int_eq(count(html, "<li><b>"), 3);
    ck_assert_ptr_nonnull(strstr(html, "<ol id=\"advice\">\n<li><b>The GPU is idle 97% of the "
                                       "steps&#39; time</b> <span class=\"rule\">gpu_idle</span>"));
    /* the sync's row link names the row of cudaDeviceSynchronize */
    const char *sync = strstr(html, "where: cudaDeviceSynchronize (<a href=\"#op-");
    ck_assert_ptr_nonnull(sync);
    int row = -1;
    ck_assert_int_eq(sscanf(sync, "where: cudaDeviceSynchronize (<a href=\"#op-%d", &row), 1);
    char want[128];
    snprintf(want, sizeof want, "<tr id=\"op-%d\"><td>cudaDeviceSynchronize</td>", row);
    ck_assert_ptr_nonnull(strstr(html, want));
    ck_assert_ptr_nonnull(strstr(html, "<a class=\"to-tree\" href=\"#calltree\" "
                                       "data-name=\"cudaDeviceSynchronize\">call tree</a>"));
    if (!chromium()) {
        fprintf(stderr, "skipped: the browser checks (no chromium: apt-get install chromium)\n");
    } else {
        char *dom = tu_path(dir, "dom.html"), state[4400];
        snprintf(state, sizeof state, "%s#tree=cudaDeviceSynchronize", page);
        ck_assert_int_eq(browse("--dump-dom", state, dom), 0);
        char *d = tu_slurp(dom);
        ck_assert_ptr_nonnull(strstr(d, "<body data-ready=\"1\">"));
        ck_assert_int_eq(count(d, "data-error=\""), 0);
        ck_assert_int_eq(count(d, "class=\"n hit\""), 1);
        ck_assert_ptr_nonnull(strstr(d, "<span class=\"n hit\">cudaDeviceSynchronize</span>"));
        free(d), free(dom);
    }
    free(html), free(page);
}
END_TEST

/* A CPU-only run: the GPU sections say there is nothing; a file that is
 * not a trace: exit 1, one line, no page left behind. */
START_TEST(cpu_page_and_errors)
{
    char *trace = tu_path(dir, "c.trace"), *page = tu_path(dir, "c.html"), *e = tu_path(dir, "e");
    struct tu_env te;
    char *prog[] = {(char *)tu_build("tests/progs/blas_calls"), NULL};
    ck_assert_int_eq(tu_code(tu_run(prog, tu_preload_env(&te, trace, NULL), NULL, NULL)), 0);
    char *argv[] = {(char *)tu_tool("opprof"), "export", "html", trace, "-o", page, NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, e)), 0);
    char *html = tu_slurp(page);
    ck_assert_ptr_nonnull(strstr(html, "<p id=\"summary\">19 events, 1 processes, 1 threads, 0 GPU ops</p>"));
    ck_assert_ptr_nonnull(strstr(html, "<g><title>cblas_dgemm ("));
    ck_assert_ptr_nonnull(strstr(html, "<p id=\"streams\">no GPU activity records</p>"));
    ck_assert_ptr_nonnull(strstr(html, "<p id=\"memory\">no device memory records</p>"));
    /* 7 entry points, a row each; no CUDA columns without CUDA */
    ck_assert_int_eq(count(html, "<tr id=\"op-"), 7);
    ck_assert_int_eq(count(html, "\"><td>cblas_"), 5);
    ck_assert_ptr_nonnull(strstr(html, "\"><td>cblas_dgemm</td>"));
    ck_assert_int_eq(count(html, "CUDA"), 0);
    free(html);
    FILE *f = fopen(trace, "w");
    fputs("<not a trace>\n", f);
    fclose(f);
    unlink(page);
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, e)), 1);
    char *es = tu_slurp(e);
    ck_assert_int_eq(tu_count_lines(es, "opprof export: "), 1);
    ck_assert_ptr_nonnull(strstr(es, "not an opprof trace"));
    ck_assert_int_eq(access(page, F_OK), -1);
    ck_assert_int_eq(tu_count_files(dir, ".tmp"), 0);
    free(es), free(trace), free(page), free(e);
}
END_TEST

Suite *suite_html(void)
{
    Suite *s = suite_create("html");
    TCase *tc = tcase_create("browser");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, report_page);
    tcase_add_test(tc, chrome_trace_in_browser);
    tcase_add_test(tc, cpu_page_and_errors);
    tcase_add_test(tc, findings_link_rows_and_tree);
    suite_add_tcase(s, tc);
    return s;
}
