/* Multi-process jobs: 4 ranks of a real program as a launcher starts them,
 * each labelled from RANK/WORLD_SIZE/LOCAL_RANK (the by-rank view, the
 * per-rank Chrome export with distributedInfo), and a multiprocessing pool
 * whose workers all join. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/aggregate.h"
#include "oracle/loaded.h"
#include "tool/cmds.h"
#include "analysis/model.h"
#include "testutil.h"

TU_TRACE_FIXTURE

/* Rank r runs blas_calls r+1: 5(r+1) cblas_dgemm, 4(r+1) sgemm_... */
static void run_job(void)
{
    char script[8192];
    snprintf(script, sizeof script,
             "for r in 0 1 2 3; do RANK=$r WORLD_SIZE=4 LOCAL_RANK=$r '%s' $((r+1)) >/dev/null & "
             "done; wait",
             tu_build("tests/progs/blas_calls"));
    char *argv[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", "/bin/sh", "-c",
                    script, NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, NULL)), 0);
}

START_TEST(four_ranks_labelled)
{
    run_job();
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    char host[256];
    ck_assert_int_eq(gethostname(host, sizeof host), 0);
    int seen[4] = {0};
    for (size_t i = 0; i < m->nprocs; i++) {
        const struct opp_process *p = &m->procs[i];
        ck_assert_str_eq(opp_process_info(p, "host"), host);
        if (p->rank < 0)
            continue; /* the shell and its children before exec */
        ck_assert_int_lt(p->rank, 4);
        seen[p->rank]++;
        ck_assert_int_eq(p->world_size, 4);
        ck_assert_int_eq(p->local_rank, p->rank);
        static const char *const digits[] = {"0", "1", "2", "3"};
        ck_assert_str_eq(opp_process_info(p, "RANK"), digits[p->rank]);
    }
    for (int r = 0; r < 4; r++) {
        ck_assert_int_eq(seen[r], 1);
        struct opp_agg_opts o = {.filter_rank = 1, .rank = r};
        struct opp_agg a;
        ck_assert_int_eq(tu_aggregate(m, &o, &a), 0);
        ck_assert_uint_eq(a.events, 19u * (unsigned)(r + 1));
        opp_agg_free(&a);
    }
    opp_model_free(m);

    /* the by-rank view: counts are exact; its first line also counts the
     * unranked processes, which depends on the shell */
    char *out, *err;
    char *br[] = {"report", trace, "--by-rank", "--sort", "count", NULL};
    ck_assert_int_eq(tu_call(cmd_report, br, dir, &out, &err), 0);
    ck_assert_str_eq(err, "");
    ck_assert(!strncmp(out, "count per rank (4 ranks", 23));
    ck_assert_str_eq(
        strchr(out, '\n') + 1,
        "Name                                            Rank 0        Rank 1        Rank 2        Rank 3           Min        Median           Max   Slowest\n"
        "cblas_ddot                                           5            10            15            20             5            10            20         3\n"
        "cblas_dgemm                                          5            10            15            20             5            10            20         3\n"
        "sgemm_                                               4             8            12            16             4             8            16         3\n"
        "dgemv_                                               2             4             6             8             2             4             8         3\n"
        "cblas_daxpy                                          1             2             3             4             1             2             4         3\n"
        "cblas_dscal                                          1             2             3             4             1             2             4         3\n"
        "cblas_zgemm                                          1             2             3             4             1             2             4         3\n");
    free(out), free(err);
    char *bj[] = {"report", trace, "--by-rank", "--sort", "count", "--limit", "1", "--format",
                  "json", NULL};
    ck_assert_int_eq(tu_call(cmd_report, bj, dir, &out, &err), 0);
    ck_assert_str_eq(out, "{\"metric\": \"count\", \"ranks\": [0, 1, 2, 3], \"rows\": [\n"
                          "  {\"key\": \"cblas_ddot\", \"values\": [5, 10, 15, 20], \"min\": 5, "
                          "\"median\": 10, \"max\": 20, \"slowest_rank\": 3}\n]}\n");
    free(out), free(err);

    /* one Chrome file per rank, with distributedInfo ("rank": N, as HTA reads it) */
    char *json = tu_path(dir, "r1.json"), *e = tu_path(dir, "e");
    char *ex[] = {(char *)tu_tool("opprof"), "export", "chrome", trace, "--rank", "1", "-o", json,
                  NULL};
    ck_assert_int_eq(tu_code(tu_run(ex, NULL, NULL, e)), 0);
    char *j = tu_slurp(json);
    ck_assert_ptr_nonnull(strstr(j, "\n  \"distributedInfo\": {\"rank\": 1, \"world_size\": 4},\n"));
    int x = 0;
    for (const char *p = j; (p = strstr(p, "\"ph\": \"X\"")); p++)
        x++;
    ck_assert_int_eq(x, 38); /* rank 1 ran blas_calls 2: 2 x 19 calls */
    /* a rank the trace does not hold: a usage error, OUT left as it was */
    ex[5] = "7";
    ck_assert_int_eq(tu_code(tu_run(ex, NULL, NULL, e)), 2);
    char *es = tu_slurp(e), want[4400], *left = tu_slurp(json);
    snprintf(want, sizeof want, "opprof export: no process of %s has rank 7\n", trace);
    ck_assert_str_eq(es, want);
    ck_assert_str_eq(left, j);
    free(j), free(left), free(es), free(json), free(e);
}
END_TEST

/* No launcher variables: the view says so and fails; JSON shows nulls. */
START_TEST(no_ranks)
{
    struct tu_env te;
    char *argv[] = {(char *)tu_build("tests/progs/blas_calls"), NULL};
    char *env[] = {"RANK=", "OMPI_COMM_WORLD_RANK=", "PMI_RANK=", "PMIX_RANK=", "SLURM_PROCID=", NULL};
    char **pe = tu_preload_env(&te, trace, NULL);
    char *all[16];
    int k = 0;
    for (; pe[k]; k++)
        all[k] = pe[k];
    for (int i = 0; env[i]; i++)
        all[k++] = env[i];
    all[k] = NULL;
    ck_assert_int_eq(tu_code(tu_run(argv, all, NULL, NULL)), 0);
    char *out, *err, want[4400];
    char *br[] = {"report", trace, "--by-rank", NULL};
    ck_assert_int_eq(tu_call(cmd_report, br, dir, &out, &err), 2);
    snprintf(want, sizeof want,
             "opprof report: no process of %s has a rank (none had RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK, "
             "PMI_RANK or SLURM_PROCID set)\n",
             trace);
    ck_assert_str_eq(err, want);
    ck_assert_str_eq(out, "");
    free(out), free(err);
    char *js[] = {"report", trace, "--format", "json", NULL};
    ck_assert_int_eq(tu_call(cmd_report, js, dir, &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"rank\": null, \"local_rank\": null, \"world_size\": null}"));
    free(out), free(err);
}
END_TEST

/* Rank r's own trace at path (a plain LD_PRELOAD run of blas_calls n). */
static void run_rank(const char *path, const char *rank, const char *n)
{
    struct tu_env te;
    char **env = tu_preload_env(&te, path, rank);
    char *argv[] = {(char *)tu_build("tests/progs/blas_calls"), (char *)n, NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, env, NULL, NULL)), 0);
}

/* A trace per rank, merged by --by-rank: each rank its column. Two traces
 * that hold one rank (a copy, another run's) would add up as one rank,
 * twice as slow, a straggler of its own making: refused, one line naming
 * both, exit 2. */
START_TEST(trace_per_rank)
{
    char *r0 = tu_path(dir, "r0.trace"), *r1 = tu_path(dir, "r1.trace");
    char *again = tu_path(dir, "again.trace");
    run_rank(r0, "RANK=0", "1");
    run_rank(r1, "RANK=1", "2");
    run_rank(again, "RANK=1", "2");
    char *out, *err, want[9000];
    char *two[] = {"report",        r0,   r1,     "--by-rank", "--sort", "count", "--match",
                   "^cblas_dgemm$", "-f", "json", NULL};
    ck_assert_int_eq(tu_call(cmd_report, two, dir, &out, &err), 0);
    ck_assert_str_eq(out, "{\"metric\": \"count\", \"ranks\": [0, 1], \"rows\": [\n"
                          "  {\"key\": \"cblas_dgemm\", \"values\": [5, 10], \"min\": 5, "
                          "\"median\": 5, \"max\": 10, \"slowest_rank\": 1}\n]}\n");
    free(out), free(err);
    char *one[] = {"report", r1, "--by-rank", "--sort", "count", "--match", "^cblas_dgemm$", NULL};
    ck_assert_int_eq(tu_call(cmd_report, one, dir, &out, &err), 0);
    ck_assert_msg(!strncmp(out, "count per rank (1 rank)\n", 24), "%s", out);
    free(out), free(err);
    char *three[] = {"report", r0, r1, again, "--by-rank", NULL};
    ck_assert_int_eq(tu_call(cmd_report, three, dir, &out, &err), 2);
    snprintf(want, sizeof want,
             "opprof report: %s and %s both hold rank 1: give each rank's trace once\n", r1, again);
    ck_assert_str_eq(err, want);
    ck_assert_str_eq(out, "");
    free(out), free(err), free(r0), free(r1), free(again);
}
END_TEST

/* A multiprocessing pool, forked then spawned: every worker joins the trace
 * and all 12 products are there, made by the workers, not the parent. */
START_TEST(pool_workers_join)
{
    if (system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") != 0) {
        fprintf(stderr, "SKIP pool_workers_join: /usr/bin/python3 has no numpy (python3-numpy)\n");
        return;
    }
    char script[4200];
    snprintf(script, sizeof script, "%s/tests/py/pool.py", getenv("OPPROF_SRC"));
    char *o = tu_path(dir, "o");
    char *argv[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", "/usr/bin/python3",
                    script, NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, (char *[]){"OPENBLAS_NUM_THREADS=1", NULL}, o, NULL)), 0);
    char *out = tu_slurp(o);
    ck_assert_str_eq(out, "262172.0\n131078.0\n");
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(tu_count(m, "cblas_dgemm", -1, 0, 0), 12);
    ck_assert_uint_eq(tu_count(m, "cblas_dgemm", 0, 0, 0), 0); /* the parent (instance 0) */
    unsigned workers = 0;
    for (size_t i = 1; i < m->nprocs; i++)
        workers += tu_count(m, "cblas_dgemm", (long)i, 0, 0) > 0;
    ck_assert_uint_ge(workers, 2); /* at least one fork and one spawn worker did some */
    ck_assert_uint_ge(m->nprocs, 5); /* parent, 2 forked, 2 spawned workers (and a tracker) */
    opp_model_free(m);
    free(out), free(o);
}
END_TEST

Suite *suite_ranks(void)
{
    Suite *s = suite_create("ranks");
    TCase *tc = tcase_create("job");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, four_ranks_labelled);
    tcase_add_test(tc, no_ranks);
    tcase_add_test(tc, trace_per_rank);
    tcase_add_test(tc, pool_workers_join);
    suite_add_tcase(s, tc);
    return s;
}
