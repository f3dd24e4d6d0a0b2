"""opprof analyze TRACE_OR_DIR... [--scheduler ADDRESS] [--workers N]
[--step MARK] [--top N] [--format text|json]: one Dask task per trace, on
Dask's local cluster by default, or on a running cluster."""
import argparse
import glob
import logging
import os
import sys

try:
    import cloudpickle
    import distributed  # noqa: F401 (checked here; gather() imports from it)
    from . import merge, show
    from . import trace_task
    from .trace_task import TraceError, summarize
except ImportError as e:
    raise SystemExit("opprof analyze: needs Debian's python3-pandas, python3-dask and "
                     "python3-distributed for %s (make deps installs them): %s" % (sys.executable, e))


MAGIC = b"OPPROF\0T"  # common/format.h's OPP_TRACE_MAGIC


def traces_of(paths):
    """The trace files of paths (a folder: its *.trace), each checked to be
    an opprof trace before any task starts: a file that is not one is said
    in one line here, not in a worker's failure."""
    out = []
    for p in paths:
        if os.path.isdir(p):
            found = sorted(glob.glob(os.path.join(p, "*.trace")))
            if not found:
                raise SystemExit("opprof analyze: no *.trace file in %s" % p)
            out += found
        elif os.path.exists(p):
            out.append(p)
        else:
            raise SystemExit("opprof analyze: %s: no such file or directory" % p)
    for t in out:
        try:
            with open(t, "rb") as f:
                head = f.read(len(MAGIC))
        except OSError as e:
            raise SystemExit("opprof analyze: cannot read %s: %s" % (t, e.strerror))
        if head != MAGIC:
            raise SystemExit("opprof analyze: %s is not an opprof trace (bad magic)" % t)
    return [os.path.abspath(t) for t in out]


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
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        return run(client)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="opprof analyze",
                                 description="Many traces (one per rank or host) analysed on Dask.")
    ap.add_argument("traces", nargs="+", metavar="TRACE_OR_DIR")
    ap.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler (tcp://HOST:PORT)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="workers of the local cluster (default: one per CPU)")
    ap.add_argument("--step", metavar="MARK", help="step boundary for step times, as opprof report --step")
    ap.add_argument("--top", type=int, default=20, help="operators shown (default 20)")
    ap.add_argument("--format", choices=("text", "json"), default="text")
    args = ap.parse_args(argv)
    if args.workers < 1 or args.top < 1:
        ap.error("--workers and --top want a positive number")
    opprof = os.environ.get("OPPROF_TOOL")
    if not opprof:
        ap.error("OPPROF_TOOL is not set (run it as `opprof analyze`)")
    traces = traces_of(args.traces)
    # the task goes to the workers by value: they need not have this package
    cloudpickle.register_pickle_by_value(trace_task)
    # Dask's own log lines of a failed task: the one line below says it
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    try:
        summaries = gather(args, traces, opprof)
    except TraceError as e:
        raise SystemExit("opprof analyze: %s" % e)
    except (OSError, TimeoutError) as e:
        raise SystemExit("opprof analyze: the Dask cluster failed: %s" % e)
    try:
        a = merge.analyze(summaries)
    except ValueError as e:
        raise SystemExit("opprof analyze: %s" % e)
    sys.stdout.write(show.as_json(a, args.top) + "\n" if args.format == "json" else show.as_text(a, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
