"""python3 -m opprof_analyze [--scheduler ADDRESS | --workers N] [--step NAME]
[--top N] [--format text|json] -- TRACE...: one Dask task per trace, on Dask's
local cluster, or on a running cluster. Run by `opprof analyze`
(report/tool/cmd_analyze.c), which reads the command line: the traces are
files it found to be traces, none twice, and the numbers are in range."""
import argparse
import logging
import os
import sys

try:
    import cloudpickle
    import distributed  # noqa: F401 (checked here; gather() imports from it)
    from . import merge, show
    from . import trace_task
    from .trace_task import summarize
except ImportError as e:
    raise SystemExit("opprof analyze: needs Debian's python3-pandas, python3-dask and "
                     "python3-distributed for %s (make deps installs them): %s" % (sys.executable, e))


def say(message):
    """One line on stderr: what a terminal would act on escaped, a line
    break too."""
    sys.stderr.write("opprof analyze: %s\n" % show.text(message))


def fail(message, code=1):
    """One line on stderr, then the exit: 2 for a wrong argument, as the
    tool's commands."""
    say(message)
    sys.exit(code)


def check_scheduler(address):
    """The address as Dask reads it, checked before anything starts: else a
    connection's traceback says it."""
    from distributed.comm.addressing import get_address_host_port
    try:
        get_address_host_port(address)
    except ValueError as e:
        fail("--scheduler wants a Dask scheduler's address, tcp://HOST:PORT, not '%s' (%s)"
             % (address, e), 2)


def gather(args, traces, opprof):
    """The tasks' summaries, from a running cluster or a local one."""
    from distributed import Client, LocalCluster

    def run(client):
        futures = client.map(summarize, traces, range(len(traces)), opprof=opprof, step=args.step,
                             pure=False)
        return client.gather(futures)

    if args.scheduler:
        with Client(args.scheduler, timeout=30) as client:
            return run(client)
    # no dashboard; the scheduler's HTTP server (there all the same) on a
    # free port of this host, not on 8787 of every interface: were that
    # taken, Dask would warn on stderr
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None,
                      scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}) as cluster, \
            Client(cluster) as client:
        return run(client)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="opprof analyze")
    ap.add_argument("traces", nargs="+", metavar="TRACE")
    ap.add_argument("--scheduler", metavar="ADDRESS")
    ap.add_argument("--workers", type=int)
    ap.add_argument("--step", metavar="NAME")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--format", choices=("text", "json"), default="text")
    args = ap.parse_args(argv)
    opprof = os.environ.get("OPPROF_TOOL")
    if not opprof:
        ap.error("OPPROF_TOOL is not set (run it as `opprof analyze`)")
    if args.scheduler:
        check_scheduler(args.scheduler)
    traces = [os.path.abspath(t) for t in args.traces]
    # the task goes to the workers by value: they need not have this package
    cloudpickle.register_pickle_by_value(trace_task)
    # Dask's own log lines here (a cluster lost): the one line below says it
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    try:
        summaries = gather(args, traces, opprof)
    except (OSError, TimeoutError) as e:
        fail("the Dask cluster failed: %s" % e)
    # the first trace the tool refused, in the traces' order: its exit
    # status too (2: a name the trace does not hold)
    for s in summaries:
        if "error" in s:
            fail(s["error"], s["code"])
    twice = merge.same_rank(summaries)
    if twice:
        fail("%s and %s both hold rank %d: give each rank's trace once" % (twice[1], twice[2], twice[0]),
             2)
    for line in show.warnings(summaries):
        say(line)
    try:
        a = merge.analyze(summaries)
    except ValueError as e:
        fail(str(e))
    try:  # flushed here: a write that fails at exit is a traceback
        sys.stdout.write(show.as_json(a, args.top) + "\n" if args.format == "json" else show.as_text(a, args.top))
        sys.stdout.flush()
    except OSError as e:
        # the flush at exit would try the write again, and say it: gone
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        fail("cannot write the output: %s" % (e.strerror or e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
