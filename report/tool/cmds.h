/* Subcommands of the `opprof` tool, one file each (cmd_NAME.c). */
#ifndef OPP_CMDS_H
#define OPP_CMDS_H

int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_ctl(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_summarize(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_advise(int argc, char **argv);

#endif
