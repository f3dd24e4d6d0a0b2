/* opprof advise on real PyTorch programs written for it (tests/py/advise_*.py),
 * profiled with OPPROF_STACKS=1: a loop starved by its DataLoader, a loop
 * calling .item() in each step, a chain of tiny elementwise operators, a
 * Python loop over a tensor's elements, a leak every 5th step. The finding
 * each is about is found, with its numbers and the Python line.
 * A large trace advised on in memory bounded by its rows. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tool/cmds.h"
#include "tracebuild.h"

static char *dir;
static void setup(void)
{
    dir = tu_tmpdir();
}
static void teardown(void)
{
    tu_rmdir(dir);
    free(dir);
}
static void suite_setup(void)
{
    tu_python_has("torch");
}

static int have_torch(const char *test)
{
    if (tu_python_has("torch"))
        return 1;
    fprintf(stderr, "SKIP %s: %s has no torch (apt-get install python3-torch)\n", test, TU_PYTHON);
    return 0;
}

static const char *script_arg; /* the program's argument, or NULL */

/* `opprof advise -f json` on the trace of tests/py/NAME (given script_arg)
 * run under opprof with OPPROF_STACKS=1; set: a --set's NAME=VALUE, or
 * NULL. Malloc'd. */
static char *advise_json(const char *name, const char *set, const char *set2)
{
    char script[4096];
    const char *src = getenv("OPPROF_SRC");
    snprintf(script, sizeof script, "%s/tests/py/%s", src ? src : ".", name);
    char *trace = tu_path(dir, "t.trace");
    char *const env[] = {"OPPROF_STACKS=1", NULL};
    char *run[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", TU_PYTHON, script,
                   (char *)script_arg,        NULL};
    char *out = tu_path(dir, "out.txt");
    ck_assert_int_eq(tu_code(tu_run(run, env, out, NULL)), 0);
    char *argv[] = {
        "advise",     trace, "-f", "json", set ? "--set" : NULL, (char *)set, set2 ? "--set" : NULL,
        (char *)set2, NULL};
    char *json, *err;
    ck_assert_int_eq(tu_call(cmd_advise, argv, dir, &json, &err), 0);
    ck_assert_str_eq(err, "");
    free(err);
    free(out);
    free(trace);
    return json;
}

/* The finding of rule (its JSON line) of advise_json, wherever it ranks
 * (a loaded machine slows the programs' compute, which moves the other
 * findings' time). Malloc'd. */
static char *finding(const char *name, const char *rule, const char *set, const char *set2)
{
    char *json = advise_json(name, set, set2);
    char key[128];
    snprintf(key, sizeof key, "\"rule\": \"%s\"", rule);
    const char *f = strstr(json, key);
    ck_assert_msg(f != NULL, "no %s finding: %s", rule, json);
    while (f > json && f[-1] != '\n')
        f--;
    char *line = strndup(f, strcspn(f, "\n"));
    free(json);
    return line;
}

/* A number field of a finding's line. */
static double num(const char *line, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\": ", key);
    const char *p = strstr(line, k);
    ck_assert_msg(p != NULL, "no %s in %s", key, line);
    return atof(p + strlen(k));
}

/* A string field's value (up to its closing quote) starts with want. */
static void str_starts(const char *line, const char *key, const char *want)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\": \"", key);
    const char *p = strstr(line, k);
    ck_assert_msg(p != NULL, "no %s in %s", key, line);
    p += strlen(k);
    ck_assert_msg(!strncmp(p, want, strlen(want)), "%s: %.*s, not %s", key, (int)strcspn(p, "\""),
                  p, want);
}

/* "code" ends with the program's file, line and function. */
static void code_is(const char *line, const char *file_line)
{
    const char *p = strstr(line, "\"code\": \"");
    ck_assert_msg(p != NULL, "no code in %s", line);
    p += strlen("\"code\": \"");
    size_t len = strcspn(p, "\"");
    ck_assert_msg(len >= strlen(file_line) &&
                      !strncmp(p + len - strlen(file_line), file_line, strlen(file_line)),
                  "code %.*s, not ...%s", (int)len, p, file_line);
}

/* `opprof advise -f json` of path; its exit status, stderr in *err. */
static int advise_of(const char *path, char **json, char **err, const char *step)
{
    char *argv[] = {"advise",     (char *)path, "-f", "json", step ? "--step" : NULL,
                    (char *)step, NULL};
    return tu_call(cmd_advise, argv, dir, json, err);
}

/* advise's JSON of the summary (`opprof summarize`) of dir's t.trace. */
static char *summary_advice(void)
{
    char *trace = tu_path(dir, "t.trace"), *sum = tu_path(dir, "s.trace");
    char *sargv[] = {"summarize", trace, "-o", sum, NULL};
    char *out, *err, *json;
    ck_assert_int_eq(tu_call(cmd_summarize, sargv, dir, &out, &err), 0);
    free(out), free(err);
    ck_assert_int_eq(advise_of(sum, &json, &err, NULL), 0);
    ck_assert_str_eq(err, "");
    free(err), free(sum), free(trace);
    return json;
}

/* The finding of rule in summary_advice. */
static char *summary_finding(const char *rule)
{
    char *json = summary_advice(), key[128];
    snprintf(key, sizeof key, "\"rule\": \"%s\"", rule);
    const char *f = strstr(json, key);
    ck_assert_msg(f != NULL, "no %s finding: %s", rule, json);
    char *line = strndup(f, strcspn(f, "\n"));
    if (line[strlen(line) - 1] == ',')
        line[strlen(line) - 1] = 0;
    free(json);
    return line;
}

/* Two workers take 5 ms a sample, 4 samples a batch: a step waits about
 * 10 ms for a batch its compute needs well under 1 ms for; 16 batches. */
START_TEST(loader_starved)
{
    if (!have_torch(__func__))
        return;
    char *f = finding("advise_loader.py", "input_pipeline", NULL, NULL);
    str_starts(f, "op", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__");
    code_is(f, "advise_loader.py(22): <module>");
    /* 70% to 93% on the 2-core machine when idle; a busy one slows the
     * compute between batches, down to 20% seen beside make test's other
     * runs: above the rule's threshold (input_share, 10%) whatever the load */
    double share = num(f, "share");
    ck_assert_msg(share >= 0.1 && share <= 1.0, "share %g", share);
    ck_assert_msg(num(f, "ms_per_step") > 0, "%g ms a step", num(f, "ms_per_step"));
    ck_assert_double_eq(num(f, "per_step"), 1.0);
    free(f);
}
END_TEST

/* 32 .item() a step, 40 steps, on a CPU: an .item() there reads memory
 * and waits for nothing, so there is no host synchronisation to find (the
 * rule's firing is the unit suite's, with a kernel launched each step).
 * The rules on the loop's Python and this machine's noise are set aside. */
START_TEST(item_without_device)
{
    if (!have_torch(__func__))
        return;
    char *json = advise_json("advise_item.py", "steps_min=1e9", "outside_share=2");
    ck_assert_msg(strstr(json,
                         "\"what\": \"training iterations (to each Optimizer.step#SGD.step)\", "
                         "\"count\": 40, ") != NULL,
                  "%s", json);
    ck_assert_msg(strstr(json, "\"rule\": \"host_sync\"") == NULL, "%s", json);
    free(json);
}
END_TEST

/* 60 elementwise operators on one [64, 64] tensor a forward (20 each of
 * mul, add, relu), 40 forwards (the steps); warm-up and outliers set aside
 * as above. */
START_TEST(tiny_ops)
{
    if (!have_torch(__func__))
        return;
    char *f = finding("advise_tiny.py", "fusable_ops", "steps_min=1e9", NULL);
    str_starts(f, "what",
               "Many small elementwise operators on [64, 64] that torch could fuse: "
               "60 calls a step");
    ck_assert_double_eq(num(f, "per_step"), 60.0);
    str_starts(f, "layer", "nn.Module: Chain_0");
    code_is(f, "): Chain.forward"); /* the line of mul, add or relu (10 to 12) */
    ck_assert_ptr_nonnull(strstr(f, "advise_tiny.py(1"));
    ck_assert_ptr_nonnull(strstr(f, "aten::mul 20.0"));
    ck_assert_ptr_nonnull(strstr(f, "aten::add 20.0"));
    ck_assert_ptr_nonnull(strstr(f, "aten::relu 20.0"));
    /* the same trace's summary: the same finding, but for the code line
     * (it keeps no code stacks), its rank (the timed rules not run) and its
     * share (a summary's rows are the whole run's, not only the steps') */
    char *g = summary_finding("fusable_ops");
    char *code = strstr(f, ", \"code\": \""), *rest = strstr(f, "\"rule\": ");
    memmove(code, code + strcspn(code + 11, "\"") + 12,
            strlen(code + strcspn(code + 11, "\"") + 12) + 1);
    char *share = strstr(f, "\"share\": ");
    ck_assert_ptr_nonnull(share);
    memmove(share, share + strcspn(share, ",") + 2, strlen(share + strcspn(share, ",") + 2) + 1);
    ck_assert_str_eq(strstr(g, "\"rule\": "), rest);
    free(g);
    free(f);
}
END_TEST

/* A Python loop over a tensor's elements, 32 a step: its aten::mul and
 * aten::add on 0-d tensors, the shape [], are one finding with the loop's
 * line (backward's own operators on the loss's [] beside them). */
START_TEST(scalar_loop)
{
    if (!have_torch(__func__))
        return;
    char *f = finding("advise_scalar.py", "fusable_ops", "steps_min=1e9", NULL);
    str_starts(f, "what", "Many small elementwise operators on [] that torch could fuse: ");
    ck_assert_msg(num(f, "per_step") >= 64.0, "%g calls a step", num(f, "per_step"));
    code_is(f, "advise_scalar.py(16): <module>");
    ck_assert_ptr_nonnull(strstr(f, "aten::add 32.0, aten::mul 32.0"));
    free(f);
}
END_TEST

/* 10 MiB kept every 5th step of 40: memory growth, though it rose in 1
 * step of 5; the same allocations dropped: none. Which steps are warm-up
 * (and so the MiB a step) is the machine's. */
START_TEST(leak_every_fifth_step)
{
    if (!have_torch(__func__))
        return;
    script_arg = "keep";
    char *f = finding("advise_leak.py", "memory_growth", NULL, NULL);
    script_arg = NULL;
    str_starts(f, "what", "CPU memory grows ");
    double per_step = num(f, "per_step");
    ck_assert_msg(per_step >= 1048576.0 && per_step <= 10.0 * 1048576, "%g bytes", per_step);
    free(f);
    script_arg = "drop";
    char *json = advise_json("advise_leak.py", NULL, NULL);
    script_arg = NULL;
    ck_assert_msg(strstr(json, "\"rule\": \"memory_growth\"") == NULL, "%s", json);
    free(json);
}
END_TEST

enum { F_TORCH, NF };
enum { S_STEP1 = OPP_STR_PRELOAD, S_STEP2, S_STEP3, S_ADD, S_OPT };
static const struct opp_func_desc FUNCS[NF] = {[F_TORCH] = TB_FN_TORCH};
static const struct tb_python PY = {FUNCS, NF,
                                    (const char *const[]){"ProfilerStep#1", "ProfilerStep#2",
                                                          "ProfilerStep#3", "aten::add",
                                                          "Optimizer.step#SGD.step", NULL}};

/* advise's JSON of the summary of a Python process's calls ev[0..n). */
static char *summary_of(const struct tb_ev *ev, size_t n)
{
    char *trace = tu_path(dir, "t.trace");
    tb_python_calls(trace, &PY, ev, n, NULL, 0, 0);
    free(trace);
    return summary_advice();
}

/* Three ProfilerStep#N of 800, 800 and 80 ns, an aten::add in each. */
static const struct tb_ev PROFILER_STEPS[] = {TB_CALL(F_TORCH, 200, 300, 1, TB_TORCH(S_ADD, 0)),
                                              TB_CALL(F_TORCH, 100, 900, 0, TB_LABEL(S_STEP1)),
                                              TB_CALL(F_TORCH, 1200, 1300, 1, TB_TORCH(S_ADD, 0)),
                                              TB_CALL(F_TORCH, 1100, 1900, 0, TB_LABEL(S_STEP2)),
                                              TB_CALL(F_TORCH, 1950, 1960, 1, TB_TORCH(S_ADD, 0)),
                                              TB_CALL(F_TORCH, 1910, 1990, 0, TB_LABEL(S_STEP3))};

#define NOT_RUN                                                                                    \
    "\"not_run\": [\"input_pipeline\", \"outside_ops\", \"warmup\", \"outlier_steps\", "           \
    "\"gpu_idle\", \"comm_exposed\", \"cpu_alloc_churn\", \"cuda_alloc_churn\", "                  \
    "\"memory_growth\"]"

/* A summary trace's steps, counted from its call paths: torch.profiler's
 * (their time theirs: 800, 800 and 80 ns), else the optimizer's (their time
 * not known: the time between two calls is not kept), else none (the run
 * as one step); the rules that need the calls' times said and not run. */
START_TEST(summary_steps_counted)
{
    char *trace = tu_path(dir, "s.trace"), want[1024];
    char *json = summary_of(PROFILER_STEPS, 6);
    snprintf(want, sizeof want,
             "{\"trace\": \"%s\", \"steps\": {\"what\": \"ProfilerStep#N\", \"count\": 3, "
             "\"counted\": true, \"mean_ms\": 0.00056, \"wall_ms\": 0.00168}, " NOT_RUN
             ", \"lost\": [], \"findings\": []}\n",
             trace);
    ck_assert_str_eq(json, want);
    free(json);
    const struct tb_ev training[] = {
        TB_CALL(F_TORCH, 100, 200, 0, TB_TORCH(S_ADD, 0)),
        TB_CALL(F_TORCH, 300, 400, 0, TB_LABEL(S_OPT)),
        TB_CALL(F_TORCH, 500, 600, 0, TB_TORCH(S_ADD, 0)),
        TB_CALL(F_TORCH, 700, 800, 0, TB_LABEL(S_OPT)),
    };
    json = summary_of(training, 4);
    snprintf(want, sizeof want,
             "{\"trace\": \"%s\", \"steps\": {\"what\": \"training iterations (to each "
             "Optimizer.step#SGD.step)\", \"count\": 2, \"counted\": "
             "true}, " NOT_RUN ", \"lost\": [], \"findings\": []}\n",
             trace);
    ck_assert_str_eq(json, want);
    free(json);
    json = summary_of(training, 1);
    snprintf(want, sizeof want,
             "{\"trace\": \"%s\", \"steps\": {\"what\": \"none (no ProfilerStep#N, optimizer "
             "step or nn.Module); the run taken as one step\", \"count\": 0, \"counted\": "
             "true}, " NOT_RUN ", \"lost\": [], \"findings\": []}\n",
             trace);
    ck_assert_str_eq(json, want);
    free(json);
    /* --step: a summary keeps no call's time to cut steps by */
    char *err;
    ck_assert_int_eq(advise_of(trace, &json, &err, "aten::add"), 1);
    snprintf(want, sizeof want,
             "opprof advise: %s: this is a summary trace (OPPROF_MODE=summary: calls added up "
             "by call path, without their times); --step needs every call: record without "
             "OPPROF_MODE=summary\n",
             trace);
    ck_assert_str_eq(err, want);
    ck_assert_str_eq(json, "");
    free(json), free(err), free(trace);
}
END_TEST

/* The "count" of advise's JSON steps. */
static long steps_count(const char *json)
{
    const char *p = strstr(json, "\"count\": ");
    ck_assert_msg(p != NULL, "no count: %s", json);
    return atol(p + 9);
}

/* advise's step count of dir's t.trace (full) and of its summary. */
static void counts_of(long *full, long *summary)
{
    char *trace = tu_path(dir, "t.trace"), *json, *err;
    ck_assert_int_eq(advise_of(trace, &json, &err, NULL), 0);
    *full = steps_count(json);
    free(json), free(err), free(trace);
    json = summary_advice();
    *summary = steps_count(json);
    free(json);
}

/* An optimizer stepping another (a wrapper's step calls its inner one's):
 * one training iteration each, in a trace as in its summary. */
START_TEST(summary_nested_optimizer_steps)
{
    enum { W_OUTER = OPP_STR_PRELOAD, W_INNER, W_ADD };
    const struct tb_python wrap = {FUNCS, NF,
                                   (const char *const[]){"Optimizer.step#Wrap.step",
                                                         "Optimizer.step#SGD.step", "aten::add",
                                                         NULL}};
    const struct tb_ev ev[] = {
        TB_CALL(F_TORCH, 100, 200, 0, TB_TORCH(W_ADD, 0)),
        TB_CALL(F_TORCH, 320, 380, 1, TB_LABEL(W_INNER)),
        TB_CALL(F_TORCH, 300, 400, 0, TB_LABEL(W_OUTER)),
        TB_CALL(F_TORCH, 500, 600, 0, TB_TORCH(W_ADD, 0)),
        TB_CALL(F_TORCH, 720, 780, 1, TB_LABEL(W_INNER)),
        TB_CALL(F_TORCH, 700, 800, 0, TB_LABEL(W_OUTER)),
    };
    char *trace = tu_path(dir, "t.trace");
    tb_python_calls(trace, &wrap, ev, 6, NULL, 0, 0);
    free(trace);
    long full, summary;
    counts_of(&full, &summary);
    ck_assert_int_eq(full, 2);
    ck_assert_int_eq(summary, full);
}
END_TEST

/* Two ranks of three ProfilerStep#N each: a trace and its summary count
 * the steps alike. */
START_TEST(summary_ranks_steps)
{
    char *trace = tu_path(dir, "t.trace");
    struct tb b;
    tb_open(&b, trace);
    for (uint32_t p = 0; p < 2; p++) {
        tb_process(&b, .proc = p, .pid = 10 + p, .ppid = 1, .parent = UINT32_MAX, .real = 1,
                   .exe = "/usr/bin/python3");
        tb_put_funcs(&b, FUNCS, NF);
        tb_info(&b, "RANK", p ? "1" : "0");
        tb_thread(&b, 10 + p, "main");
        tb_put_events(&b, 0, PROFILER_STEPS, 6);
        tb_python_strings(&b, &PY);
    }
    tb_end(&b);
    free(trace);
    long full, summary;
    counts_of(&full, &summary);
    ck_assert_int_eq(full, 3);
    ck_assert_int_eq(summary, full);
}
END_TEST

/* `opprof advise -f json` of a trace of n iterations of outer around
 * inner (no steps: the run, 200 ns an iteration, taken as one): its output
 * exact; the tool's peak memory in KiB. */
static long advise_kb(uint32_t n)
{
    char *t = tu_path(dir, "t.trace");
    tb_outer_inner(t, n);
    char *argv[] = {(char *)tu_tool("opprof"), "advise", t, "-f", "json", NULL};
    long kb;
    char *out, want[512], *why = tu_peak_quiet(dir, argv, &out, &kb);
    ck_assert_msg(!why, "%s", why);
    unsigned ms = n / 5000;
    snprintf(want, sizeof want,
             "{\"trace\": \"%s\", \"steps\": {\"what\": \"none (no ProfilerStep#N, optimizer "
             "step or nn.Module); the run taken as one step\", \"count\": 0, \"p50_ms\": %u, "
             "\"p99_ms\": %u, \"wall_ms\": %u}, \"not_run\": [\"outside_ops\", \"warmup\", "
             "\"outlier_steps\", \"cpu_alloc_churn\", \"cuda_alloc_churn\", \"memory_growth\"], "
             "\"lost\": [], \"findings\": []}\n",
             t, ms, ms, ms);
    ck_assert_str_eq(out, want);
    free(out), free(t);
    return kb;
}

/* The rules' rows, steps and call paths read in one pass over the trace:
 * 30 times the calls, the same peak memory give or take 4 MiB (every call
 * loaded: 14 MiB more). */
START_TEST(large_trace_bounded_by_rows)
{
    long small = advise_kb(5000), big = advise_kb(150000);
    ck_assert_msg(big - small < 4096, "peak %ld KiB for 300,000 calls against %ld KiB for 10,000",
                  big, small);
}
END_TEST

Suite *suite_advise(void)
{
    Suite *s = suite_create("advise");
    TCase *tc = tcase_create("programs");
    tcase_add_unchecked_fixture(tc, suite_setup, NULL);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, loader_starved);
    tcase_add_test(tc, item_without_device);
    tcase_add_test(tc, tiny_ops);
    tcase_add_test(tc, scalar_loop);
    tcase_add_test(tc, leak_every_fifth_step);
    suite_add_tcase(s, tc);
    TCase *sum = tcase_create("summary");
    tcase_add_checked_fixture(sum, setup, teardown);
    tcase_add_test(sum, summary_steps_counted);
    tcase_add_test(sum, summary_nested_optimizer_steps);
    tcase_add_test(sum, summary_ranks_steps);
    suite_add_tcase(s, sum);
    TCase *peak = tcase_create("peak"); /* tests/tests.mk: the normal build's memory */
    tcase_set_tags(peak, "peak");
    tcase_add_checked_fixture(peak, setup, teardown);
    tcase_set_timeout(peak, 120);
    tcase_add_test(peak, large_trace_bounded_by_rows);
    suite_add_tcase(s, peak);
    return s;
}
