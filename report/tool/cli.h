/* What every subcommand says about a bad option (getopt_long with a
 * leading ':' in its option string and opterr = 0). */
#ifndef OPP_CLI_H
#define OPP_CLI_H

/* One line on stderr, "opprof CMD: option '--x' wants a value" (c == ':')
 * or "opprof CMD: unknown option ..."; returns 2, the usage exit code. */
int opp_cli_bad_option(const char *cmd, int c, char **argv);

#endif
