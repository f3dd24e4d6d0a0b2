/* `opprof`: one binary, subcommands dispatched from a table like perf's. */
#include <signal.h>
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
    int starts; /* it starts a program, which must find the signals as they were */
} cmds[] = {
    {"run", cmd_run, "profile a program: opprof run [-o TRACE] -- CMD [ARGS...]", 1},
    {"report", cmd_report, "summarise a trace like torch.profiler's key_averages().table()", 0},
    {"advise", cmd_advise, "what to try first, ranked by the time at stake: opprof advise TRACE",
     0},
    {"diff", cmd_diff,
     "compare two traces by operator: opprof diff A.trace B.trace [--fail-above PCT]", 0},
    {"summarize", cmd_summarize,
     "add a trace's calls up by call path: opprof summarize TRACE -o OUT", 0},
    {"top", cmd_top, "watch a run's operators as it goes: opprof top -- CMD [ARGS...]", 1},
    {"ctl", cmd_ctl, "start or stop recording in a running job: opprof ctl start|stop|status", 0},
    {"export", cmd_export, "write a trace for other tools: opprof export chrome TRACE -o OUT.json",
     0},
    {"analyze", cmd_analyze, "many traces (one per rank) on Dask: opprof analyze TRACE_OR_DIR...",
     1},
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
    int own = !strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "--version");
    if (own && argc > 2) { /* else taken for nothing */
        opp_say("opprof: %s takes nothing after it, not '%s'%s", name, argv[2],
                name[2] == 'v' ? "" : " (a command's help: 'opprof COMMAND --help')");
        return 2;
    }
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
        usage(stdout);
        return finish(NULL, 0);
    }
    if (!strcmp(name, "--version")) {
        printf("opprof " OPPROF_VERSION " (trace format %u)\n", OPP_TRACE_VERSION);
        return finish(NULL, 0);
    }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        if (strcmp(name, cmds[i].name))
            continue;
        /* a write past the file size limit (ulimit -f), to -o OUT or a
         * redirected stdout, fails with EFBIG and is said as any failed
         * write, instead of SIGXFSZ killing the tool (a temporary file left
         * behind) */
        if (!cmds[i].starts)
            signal(SIGXFSZ, SIG_IGN);
        return finish(name, cmds[i].fn(argc - 1, argv + 1));
    }
    if (name[0] == '-')
        opp_say("opprof: unknown option '%s' (see 'opprof --help')", name);
    else
        opp_say("opprof: '%s' is not an opprof command (see 'opprof --help')", name);
    return 2;
}
