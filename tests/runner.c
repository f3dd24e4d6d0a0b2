/* Runs every Check suite listed in SUITES_H (generated from the file names).
 * Usage: runner [SUITE...] to run only the named suites. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define X(name) Suite *suite_##name(void);
#include SUITES_H
#undef X

int main(int argc, char **argv)
{
    /* A test case's timeout catches a hang, it does not time anything:
     * Check's default of 4 s is too short for a suite under ASan on a busy
     * machine. Cases that need longer set their own (tcase_set_timeout). */
    setenv("CK_DEFAULT_TIMEOUT", "60", 0);
    SRunner *sr = srunner_create(NULL);
    int added = 0;
#define X(name)                                                                                    \
    do {                                                                                           \
        int want = argc < 2;                                                                       \
        for (int i = 1; i < argc; i++)                                                             \
            want |= !strcmp(argv[i], #name);                                                       \
        if (want) {                                                                                \
            srunner_add_suite(sr, suite_##name());                                                 \
            added++;                                                                               \
        }                                                                                          \
    } while (0);
#include SUITES_H
#undef X
    if (!added) {
        fprintf(stderr, "runner: no such suite\n");
        return 2;
    }
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
