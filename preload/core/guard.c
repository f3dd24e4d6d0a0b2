/* The rare paths' guard against a signal handler's jump out of them
 * (base.h's opp_guard): this thread's registered paths. */
#include "core/base.h"

__thread struct opp_unwind *opp_unwinds __attribute__((tls_model("initial-exec")));

void opp_guard_undo(struct opp_unwind *u)
{
    opp_guard_left((struct opp_guard *)u);
}
