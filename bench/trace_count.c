/* Benchmark helper: reads a trace with the shared reader and prints its event and drop counts. */
#include <stdio.h>

#include "trace.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s TRACE\n", argv[0]);
        return 2;
    }
    struct opp_tr_visitor v = {0};
    struct opp_tr_summary s;
    char err[512];
    if (opp_trace_read(argv[1], &v, NULL, &s, err, sizeof err) < 0) {
        fprintf(stderr, "trace_count: %s\n", err);
        return 1;
    }
    if (!s.complete || s.warning[0]) {
        fprintf(stderr, "trace_count: %s: incomplete trace%s%s\n", argv[1],
                s.warning[0] ? ": " : "", s.warning);
        return 1;
    }
    printf("events=%llu dropped=%llu bytes=%llu\n", (unsigned long long)s.events,
           (unsigned long long)s.end_dropped, (unsigned long long)s.file_size);
    return 0;
}
