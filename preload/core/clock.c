/* The clock every record is stamped with: the TSC where it is invariant,
 * else CLOCK_MONOTONIC (docs/DESIGN.md, "Clock"). */
#include "core/base.h"

#include <string.h>

int opp_use_tsc;

int opp_clock_init(const char *setting)
{
    if (setting && *setting && strcmp(setting, "monotonic"))
        opp_agent_say("OPPROF_CLOCK must be monotonic (unset: the TSC), ignored: ", setting, "");
    opp_use_tsc = !(setting && !strcmp(setting, "monotonic")) && opp_tsc_usable();
    return opp_use_tsc ? OPP_CLOCK_TSC : OPP_CLOCK_MONOTONIC;
}
