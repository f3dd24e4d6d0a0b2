/* Helpers for the Check suites: temporary directories and running the
 * built tools and test programs. */
#ifndef OPP_TESTUTIL_H
#define OPP_TESTUTIL_H

#include <stddef.h>

/* A fresh directory under /tmp, removed by the caller with tu_rmdir. */
char *tu_tmpdir(void);
void tu_rmdir(const char *dir);
/* path = dir "/" name, malloc'd. */
char *tu_path(const char *dir, const char *name);

#endif
