/* `opprof`: one binary, subcommands dispatched from a table like perf's. */
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "tool/cmds.h"
#include "views/out_end.h"
#include "views/say.h"

static const struct cmd {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
} cmds[] = {
    {"run", cmd_run, "profile a program: opprof run [-o TRACE] -- CMD [ARGS...]"},
    {"report", cmd_report, "summarise a trace like torch.profiler's key_averages().table()"},
    {"advise", cmd_advise, "what to try first, ranked by the time at stake: opprof advise TRACE"},
    {"diff", cmd_diff, "compare two traces by operator: opprof diff A.trace B.trace [--fail-above PCT]"},
    {"summarize", cmd_summarize, "add a trace's calls up by call path: opprof summarize TRACE -o OUT"},
    {"top", cmd_top, "watch a run's operators as it goes: opprof top -- CMD [ARGS...]"},
    {"ctl", cmd_ctl, "start or stop recording in a running job: opprof ctl start|stop|status"},
    {"export", cmd_export, "write a trace for other tools: opprof export chrome TRACE -o OUT.json"},
    {"analyze", cmd_analyze, "many traces (one per rank) on Dask: opprof analyze TRACE_OR_DIR..."},
};

static void usage(FILE *f)
{
    fputs("usage: opprof [--version] [--help] COMMAND [ARGS...]\n\ncommands:\n", f);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].help);
    fputs("\nSee 'opprof COMMAND --help' for a command's options.\n", f);
}

/* The exit status rc of command cmd (NULL: opprof's own --help,
 * --version), once what it wrote on stdout is: 1 when some of it was not
 * and cmd did not say so (its --help, ctl list...), said in one line. */
static int finish(const char *cmd, int rc)
{
    int e = opp_out_end(stdout, 0);
    if (!e || rc)
        return rc;
    opp_say("opprof%s%s: cannot write the output: %s", cmd ? " " : "", cmd ? cmd : "",
            strerror(-e));
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
        usage(stdout);
        return finish(NULL, 0);
    }
    if (!strcmp(name, "--version")) {
        printf("opprof " OPPROF_VERSION " (trace format %u)\n", OPP_TRACE_VERSION);
        return finish(NULL, 0);
    }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(name, cmds[i].name))
            return finish(name, cmds[i].fn(argc - 1, argv + 1));
    if (name[0] == '-')
        opp_say("opprof: unknown option '%s' (see 'opprof --help')", name);
    else
        opp_say("opprof: '%s' is not an opprof command (see 'opprof --help')", name);
    return 2;
}
