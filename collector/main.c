/* opprof-collector: started by `opprof run` or by the preload itself when
 * no collector is listening. Serves one run and writes its trace. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "summary.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: opprof-collector --socket PATH --output FILE [--daemon] [--root-pid PID]\n"
               "                        [--ready-fd FD] [--idle-exit-ms MS] [--paused]\n"
               "                        [--mode full|summary] [--max-nodes N] [--top]\n"
               "                        [--parent PID]\n");
}

static int num(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"socket", required_argument, 0, 's'},
                                         {"output", required_argument, 0, 'o'},
                                         {"daemon", no_argument, 0, 'd'},
                                         {"root-pid", required_argument, 0, 'r'},
                                         {"ready-fd", required_argument, 0, 'f'},
                                         {"idle-exit-ms", required_argument, 0, 'i'},
                                         {"paused", no_argument, 0, 'p'},
                                         {"help", no_argument, 0, 'h'},
                                         {"mode", required_argument, 0, 'm'},
                                         {"max-nodes", required_argument, 0, 'n'},
                                         {"top", no_argument, 0, 't'},
                                         {"parent", required_argument, 0, 'P'},
                                         {0, 0, 0, 0}};
    struct opp_collector_opts o = {.ready_fd = -1, .idle_exit_ms = 10000};
    const char *pe = getenv("OPPROF_PAUSED"); /* as the preloads it serves see it */
    o.paused = pe && !strcmp(pe, "1");
    const char *mode = getenv("OPPROF_MODE"); /* likewise */
    if (mode && *mode && opp_collector_mode(mode, &o.summary)) {
        fprintf(stderr, "opprof-collector: OPPROF_MODE=%s is not a mode (full, summary); "
                        "recording every call\n", mode);
        o.summary = 0;
    }
    long v;
    const char *nodes = getenv("OPPROF_MAX_NODES"); /* likewise */
    int bad;
    o.max_nodes = opp_sum_nodes_of(nodes, &bad);
    if (bad)
        fprintf(stderr,
                "opprof-collector: OPPROF_MAX_NODES=%s is not a number from 1 to "
                "268435456; keeping %u call paths\n",
                nodes, OPP_SUM_NODES_DEFAULT);
    int c;
    while ((c = getopt_long(argc, argv, "s:o:dr:f:i:phm:n:tP:", opts, NULL)) != -1) {
        switch (c) {
        case 'm':
            if (opp_collector_mode(optarg, &o.summary)) {
                fprintf(stderr, "opprof-collector: --mode %s: the modes are full and summary\n",
                        optarg);
                return 2;
            }
            break;
        case 'n':
            if (num(optarg, 1, OPP_SUM_NODES_MAX, &v))
                goto bad;
            o.max_nodes = (uint32_t)v;
            break;
        case 'p': o.paused = 1; break;
        case 't': o.top = 1; break;
        case 'P':
            if (num(optarg, 1, 1L << 30, &v))
                goto bad;
            o.parent = (pid_t)v;
            break;
        case 's': o.socket_path = optarg; break;
        case 'o': o.output = optarg; break;
        case 'd': o.daemon = 1; break;
        case 'r':
            if (num(optarg, 1, 1L << 30, &v)) goto bad;
            o.root_pid = (pid_t)v;
            break;
        case 'f':
            if (num(optarg, 0, 1 << 20, &v)) goto bad;
            o.ready_fd = (int)v;
            break;
        case 'i':
            if (num(optarg, 0, 1L << 30, &v)) goto bad;
            o.idle_exit_ms = (int)v;
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!o.socket_path || !o.output || optind != argc) {
        usage(stderr);
        return 2;
    }
    return opp_collector_run(&o);
bad:
    fprintf(stderr, "opprof-collector: bad number: %s\n", optarg);
    return 2;
}
