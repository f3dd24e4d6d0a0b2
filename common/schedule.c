/* OPPROF_SCHEDULE with OPPROF_STEP read (schedule.h): the agent's rule
 * and `opprof run`'s check, in one place. */
#include "schedule.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "skip_first=10,wait=1,warmup=1,active=3,repeat=2" into s: 0, or -1
 * with why. */
static int parse_numbers(const char *v, struct opp_schedule *s, const char **why)
{
    s->skip_first = s->wait = s->warmup = s->repeat = 0;
    s->active = 1;
    char buf[256];
    if (strlen(v) >= sizeof buf) {
        *why = "too long";
        return -1;
    }
    strcpy(buf, v);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            *why = "wants key=value pairs";
            return -1;
        }
        *eq = 0;
        char *end;
        errno = 0;
        long x = strtol(eq + 1, &end, 10);
        if (errno || end == eq + 1 || *end || x < 0 || x > 1000000000L) {
            *why = "values must be whole numbers from 0";
            return -1;
        }
        if (!strcmp(tok, "skip_first"))
            s->skip_first = x;
        else if (!strcmp(tok, "wait"))
            s->wait = x;
        else if (!strcmp(tok, "warmup"))
            s->warmup = x;
        else if (!strcmp(tok, "active"))
            s->active = x;
        else if (!strcmp(tok, "repeat"))
            s->repeat = x;
        else {
            *why = "keys are skip_first, wait, warmup, active, repeat";
            return -1;
        }
    }
    if (s->active < 1) {
        *why = "active must be at least 1";
        return -1;
    }
    return 0;
}

/* The step marker m into s: 0, or -1 with why said. */
static int parse_step(const char *m, struct opp_schedule *s, char *why, size_t cap)
{
    s->name = NULL;
    s->period_ns = 0;
    if (!strcmp(m, "torch") || !strcmp(m, "torch:forward")) {
        s->marker = m[5] ? OPP_MARK_TORCH_FORWARD : OPP_MARK_TORCH;
    } else if ((!strncmp(m, "nvtx:", 5) || !strncmp(m, "call:", 5)) && m[5]) {
        s->marker = m[0] == 'n' ? OPP_MARK_NVTX : OPP_MARK_CALL;
        s->name = m + 5;
    } else if (!strncmp(m, "time:", 5)) {
        char *end;
        errno = 0;
        double t = strtod(m + 5, &end);
        double unit = !strcmp(end, "ms")   ? 1e6
                      : !strcmp(end, "s")  ? 1e9
                      : !strcmp(end, "us") ? 1e3
                                           : 0;
        if (errno || end == m + 5 || !unit || !(t > 0) || t * unit < 1e6 || t * unit > 1e13) {
            snprintf(why, cap, "time wants 1ms to 10000s, e.g. time:500ms, not %s", m + 5);
            return -1;
        }
        s->marker = OPP_MARK_TIME;
        s->period_ns = (uint64_t)(t * unit);
    } else {
        snprintf(why, cap, "must be " OPP_STEP_MARKERS ", not %s", m);
        return -1;
    }
    return 0;
}

enum opp_schedule_read opp_schedule_parse(const char *sched, const char *step,
                                          struct opp_schedule *s, char *why, size_t cap)
{
    const char *w = NULL;
    if (!sched || !*sched)
        return OPP_SCHEDULE_NONE;
    if (parse_numbers(sched, s, &w)) {
        snprintf(why, cap, "%s", w);
        return OPP_SCHEDULE_BAD;
    }
    if (!step || !*step) {
        snprintf(why, cap, "does not say what a step is (" OPP_STEP_MARKERS ")");
        return OPP_SCHEDULE_NO_STEP;
    }
    return parse_step(step, s, why, cap) ? OPP_SCHEDULE_BAD_STEP : OPP_SCHEDULE_OK;
}
