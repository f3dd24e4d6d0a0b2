/* OPPROF_SCHEDULE with OPPROF_STEP read (common/schedule.h): the numbers
 * and the step marker the agent records by, and what `opprof run` refuses. */
#include <check.h>
#include <string.h>

#include "schedule.h"

/* sched with step: what the reader found, *s and why filled. */
static enum opp_schedule_read parse(const char *sched, const char *step, struct opp_schedule *s,
                                    char *why)
{
    memset(s, 0x5a, sizeof *s);
    why[0] = 0;
    return opp_schedule_parse(sched, step, s, why, 300);
}

START_TEST(numbers_and_markers)
{
    struct opp_schedule s;
    char why[300];
    ck_assert_int_eq(
        parse("skip_first=2,wait=1,warmup=1,active=2,repeat=3", "nvtx:train_step", &s, why),
        OPP_SCHEDULE_OK);
    ck_assert_int_eq(s.skip_first, 2);
    ck_assert_int_eq(s.wait, 1);
    ck_assert_int_eq(s.warmup, 1);
    ck_assert_int_eq(s.active, 2);
    ck_assert_int_eq(s.repeat, 3);
    ck_assert_int_eq(s.marker, OPP_MARK_NVTX);
    ck_assert_str_eq(s.name, "train_step");
    ck_assert_uint_eq(s.period_ns, 0);
    /* torch's defaults for the keys not given: active 1, the others 0 */
    ck_assert_int_eq(parse("wait=4", "torch", &s, why), OPP_SCHEDULE_OK);
    ck_assert_int_eq(s.skip_first + s.warmup + s.repeat, 0);
    ck_assert_int_eq(s.wait, 4);
    ck_assert_int_eq(s.active, 1);
    ck_assert_int_eq(s.marker, OPP_MARK_TORCH);
    ck_assert_ptr_null(s.name);
    ck_assert_int_eq(parse("active=1", "torch:forward", &s, why), OPP_SCHEDULE_OK);
    ck_assert_int_eq(s.marker, OPP_MARK_TORCH_FORWARD);
    ck_assert_int_eq(parse("active=1", "call:cblas_ddot", &s, why), OPP_SCHEDULE_OK);
    ck_assert_int_eq(s.marker, OPP_MARK_CALL);
    ck_assert_str_eq(s.name, "cblas_ddot");
    /* time:N in us, ms or s, from 1 ms to 10000 s */
    const struct {
        const char *step;
        uint64_t ns;
    } times[] = {{"time:500ms", 500000000u},
                 {"time:1.5s", 1500000000u},
                 {"time:1000us", 1000000u},
                 {"time:10000s", 10000000000000u}};
    for (size_t i = 0; i < sizeof times / sizeof *times; i++) {
        ck_assert_int_eq(parse("active=1", times[i].step, &s, why), OPP_SCHEDULE_OK);
        ck_assert_int_eq(s.marker, OPP_MARK_TIME);
        ck_assert_uint_eq(s.period_ns, times[i].ns);
    }
}
END_TEST

START_TEST(none_and_wrong)
{
    struct opp_schedule s;
    char why[300];
    /* no schedule: the step is not read */
    ck_assert_int_eq(parse(NULL, "epoch", &s, why), OPP_SCHEDULE_NONE);
    ck_assert_int_eq(parse("", NULL, &s, why), OPP_SCHEDULE_NONE);
    char long_text[300];
    memset(long_text, 'a', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = 0;
    const char *bad[][2] = {
        {"active", "wants key=value pairs"},
        {"wait=-1", "values must be whole numbers from 0"},
        {"wait=1000000001", "values must be whole numbers from 0"},
        {"wait=1x", "values must be whole numbers from 0"},
        {"pause=1", "keys are skip_first, wait, warmup, active, repeat"},
        {"wait=1,active=0", "active must be at least 1"},
        {long_text, "too long"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_int_eq(parse(bad[i][0], "torch", &s, why), OPP_SCHEDULE_BAD);
        ck_assert_str_eq(why, bad[i][1]);
    }
    ck_assert_int_eq(parse("active=1", NULL, &s, why), OPP_SCHEDULE_NO_STEP);
    ck_assert_str_eq(why, "does not say what a step is (torch, torch:forward, nvtx:NAME, "
                          "call:NAME or time:500ms)");
    ck_assert_int_eq(parse("active=1", "", &s, why), OPP_SCHEDULE_NO_STEP);
    const char *steps[][2] = {
        {"epoch", "must be torch, torch:forward, nvtx:NAME, call:NAME or time:500ms, not epoch"},
        {"nvtx:", "must be torch, torch:forward, nvtx:NAME, call:NAME or time:500ms, not nvtx:"},
        {"call:", "must be torch, torch:forward, nvtx:NAME, call:NAME or time:500ms, not call:"},
        {"torch:backward", "must be torch, torch:forward, nvtx:NAME, call:NAME or time:500ms, "
                           "not torch:backward"},
        {"time:999us", "time wants 1ms to 10000s, e.g. time:500ms, not 999us"},
        {"time:10001s", "time wants 1ms to 10000s, e.g. time:500ms, not 10001s"},
        {"time:5", "time wants 1ms to 10000s, e.g. time:500ms, not 5"},
        {"time:ms", "time wants 1ms to 10000s, e.g. time:500ms, not ms"},
    };
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        ck_assert_int_eq(parse("active=1", steps[i][0], &s, why), OPP_SCHEDULE_BAD_STEP);
        ck_assert_str_eq(why, steps[i][1]);
    }
    /* a wrong schedule is said first, whatever the step */
    ck_assert_int_eq(parse("active=0", "epoch", &s, why), OPP_SCHEDULE_BAD);
    ck_assert_str_eq(why, "active must be at least 1");
}
END_TEST

Suite *suite_schedule(void)
{
    Suite *s = suite_create("schedule");
    TCase *tc = tcase_create("schedule");
    tcase_add_test(tc, numbers_and_markers);
    tcase_add_test(tc, none_and_wrong);
    suite_add_tcase(s, tc);
    return s;
}
