/* Bad options, said the same way by every subcommand (see cli.h). */
#include "tool/cli.h"

#include <getopt.h>
#include <stdio.h>

int opp_cli_bad_option(const char *cmd, int c, char **argv)
{
    if (c == ':')
        fprintf(stderr, "opprof %s: option '%s' wants a value\n", cmd, argv[optind - 1]);
    else if (optopt)
        fprintf(stderr, "opprof %s: unknown option '-%c' (see 'opprof %s --help')\n", cmd, optopt,
                cmd);
    else
        fprintf(stderr, "opprof %s: unknown option '%s' (see 'opprof %s --help')\n", cmd,
                argv[optind - 1], cmd);
    return 2;
}
