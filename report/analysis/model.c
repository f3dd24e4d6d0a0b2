/* What a loaded model answers about itself (model.h): a process's labels,
 * how it ended, whether it holds every call. */
#include "analysis/model.h"

#include <stdio.h>
#include <string.h>

const char *opp_process_info(const struct opp_process *p, const char *key)
{
    for (uint32_t i = 0; i < p->ninfo; i++)
        if (!strcmp(p->info_keys[i], key))
            return p->info_values[i];
    return NULL;
}

const char *opp_end_how_name(uint32_t how)
{
    switch (how) {
    case OPP_END_EXITED:
        return "exited";
    case OPP_END_LOST:
        return "lost";
    case OPP_END_RUNNING:
        return "running";
    default:
        return "unknown";
    }
}

int opp_model_needs_calls(const struct opp_model *m, const char *what, char *err, size_t errlen)
{
    if (!m->summary)
        return 0;
    snprintf(err, errlen,
             "this is a summary trace (OPPROF_MODE=summary: calls added up by call path, "
             "without their times); %s needs every call: record without OPPROF_MODE=summary",
             what);
    return -1;
}
