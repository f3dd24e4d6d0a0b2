/* The old name of thread_tree.h, kept only while tests include it by that
 * name (tests/unit/test_tree.c); remove it when they include thread_tree.h. */
#include "analysis/thread_tree.h"
