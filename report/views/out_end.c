/* The end of what the tool wrote on a stream (out_end.h). */
#include "views/out_end.h"

#include <errno.h>

int opp_out_end(FILE *f, int rc)
{
    if (rc && rc != -EIO)
        return rc;
    errno = 0;
    if (fflush(f))
        return errno ? -errno : -EIO;
    return ferror(f) ? -EIO : 0;
}
