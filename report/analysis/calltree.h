/* The old name of callpath_tree.h, kept only while tests include it by that
 * name (tests/unit/test_kinds.c, tests/e2e/test_nvtx.c); remove it when they
 * include callpath_tree.h. */
#include "analysis/callpath_tree.h"
