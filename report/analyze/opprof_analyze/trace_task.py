"""One trace, summarised where a Dask worker runs: small tables, never the
trace itself, travel back. Everything is computed by the opprof tool
(`opprof report --by-rank`, `--step`, `export sqlite`), found at the path
given."""
import json
import os
import sqlite3
import subprocess
import tempfile

# The per-rank metrics taken from `opprof report --by-rank --sort METRIC`.
METRICS = ("count", "self_cpu_time_total", "cpu_time_total", "self_cuda_time_total")
ROWS_ALL = "1000000"


class TraceError(Exception):
    """The tool refused a trace: its message says why, code is its exit
    status (2: an argument the trace does not answer, as --step NAME)."""

    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


# How `opprof report` begins a warning about the trace it read.
WARNING = "opprof report: warning: "


def _tool(opprof, *args):
    """What the tool wrote when it did what was asked: (stdout, stderr)."""
    p = subprocess.run([opprof, *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise TraceError(p.stderr.strip() or "%s exited with %d" % (args[0], p.returncode),
                         2 if p.returncode == 2 else 1)
    return p.stdout, p.stderr


def _report(opprof, path, *args):
    return json.loads(_tool(opprof, "report", path, "-f", "json", *args)[0])


def _ops(opprof, path):
    """{(rank, key): {metric: value}} for every operator of every rank."""
    ops = {}
    for metric in METRICS:
        r = _report(opprof, path, "--by-rank", "--sort", metric, "--limit", ROWS_ALL)
        for row in r["rows"]:
            for rank, v in zip(r["ranks"], row["values"]):
                ops.setdefault((rank, row["key"]), {})[metric] = v
    return ops


def _steps(opprof, path, step):
    r = _report(opprof, path, "--step=" + step)
    return {"count": r["count"], "wall_us": r["wall_us"], "cpu_us": r["cpu_us"], "gpu_us": r["gpu_us"]}


def _union(spans):
    """Total length of the union of [start, end) spans."""
    total, end = 0, None
    for a, b in sorted(spans):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def is_communication(name):
    """A kernel of a collective library (NCCL, RCCL)."""
    n = (name or "").lower()
    return "nccl" in n or "rccl" in n


def _gpu(opprof, path):
    """Per rank: GPU time by class, overlap of communication with compute,
    and launch delays (kernel start minus the start of the call that
    launched it), in us; {} for a trace without GPU work; None when this
    opprof was built without SQLite (it reads them from its export)."""
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "t.sqlite")
        try:
            _tool(opprof, "export", "sqlite", path, "-o", db)
        except TraceError as e:
            if "without" in str(e) and "sqlite" in str(e).lower():
                return None
            raise
        con = sqlite3.connect(db)
        q = ("SELECT p.rank, g.kind, g.name, g.start_ns, g.end_ns, c.start_ns "
             "FROM gpu_ops g JOIN processes p ON p.id = g.process_id "
             "LEFT JOIN cpu_ops c ON c.id = g.cpu_op_id "
             "WHERE g.kind IN ('kernel', 'memcpy', 'memset')")
        per = {}
        for rank, kind, name, start, end, launched in con.execute(q):
            r = per.setdefault(rank, {"compute": [], "communication": [], "memcpy": [], "memset": [],
                                      "delays": []})
            cls = kind if kind != "kernel" else "communication" if is_communication(name) else "compute"
            r[cls].append((start, end))
            if kind == "kernel" and launched is not None:
                r["delays"].append((start - launched) / 1e3)
        con.close()
    out = {}
    for rank, r in per.items():
        every = r["compute"] + r["communication"] + r["memcpy"] + r["memset"]
        first = min(a for a, _ in every)
        last = max(b for _, b in every)
        busy = _union(every)
        compute, comm = _union(r["compute"]), _union(r["communication"])
        out[rank] = {
            "compute_us": compute / 1e3,
            "communication_us": comm / 1e3,
            "memcpy_us": _union(r["memcpy"]) / 1e3,
            "memset_us": _union(r["memset"]) / 1e3,
            "idle_us": (last - first - busy) / 1e3,
            "span_us": (last - first) / 1e3,
            # time covered by both: each alone, less their union
            "overlap_us": (compute + comm - _union(r["compute"] + r["communication"])) / 1e3,
            "launch_delays_us": r["delays"],
        }
    return out


def summarize(path, index, opprof, step=None):
    """What the merge needs of one trace, or {"error", "code"} when the tool
    refused it: returned, not raised, so that no worker logs a failed task
    for what the client says in one line."""
    try:
        return _summary(path, index, opprof, step)
    except TraceError as e:
        return {"error": str(e), "code": e.code}


def _summary(path, index, opprof, step):
    """A trace whose processes carry no rank (no launcher set one) stands
    for one rank, numbered by its place among the traces (index). A trace
    of no operator is left out ("left_out": why); either way "warnings" are
    what the report warned of it."""
    out, said = _tool(opprof, "report", path, "-f", "json", "--limit", ROWS_ALL)
    whole = json.loads(out)
    # the report's warnings (a trace cut or damaged, records dropped), its
    # words after its prefix; its line on a trace of no call is not one
    warnings = [line[len(WARNING):] for line in said.splitlines() if line.startswith(WARNING)]
    if not whole["rows"] and not whole["gpu"]:  # nothing to count as a rank, or compare
        cut = not whole["complete"] and whole["warning"]  # as the report says it
        why = "holds no call" + (" in what could be read of it" if cut else "")
        return {"trace": path, "warnings": warnings, "left_out": why}
    steps = _steps(opprof, path, step) if step else None
    ranks = sorted({p["rank"] for p in whole["processes"] if p["rank"] is not None})
    # the ranks of the processes that made calls: one (or none) and the
    # whole trace's rows are that rank's, else each rank's come apart
    callers = {t["pid"] for t in whole["threads"] if t["events"]}
    calling = {p["rank"] for p in whole["processes"] if p["pid"] in callers}
    if len(calling) <= 1:
        only = calling.pop() if calling else None
        ranks = [] if only is None else [only]
        ops = {(index if only is None else only, r["key"]): {m: r.get(m, 0) for m in METRICS}
               for r in whole["rows"]}
    else:
        ops = _ops(opprof, path)
    gpu = _gpu(opprof, path) if whole["gpu"] else {}
    # where a rank made up for a trace without one comes from: its file and
    # the first process that made calls (else the first process)
    procs = [p for p in whole["processes"] if p["pid"] in callers] or whole["processes"]
    return {
        "gpu_unread": gpu is None,
        "trace": path,
        "warnings": warnings,
        "origin": {"trace": path, "host": procs[0]["host"] if procs else None,
                   "pid": procs[0]["pid"] if procs else None},
        "ranks": ranks or [index],
        "ranked": bool(ranks),
        "ops": [{"rank": rank, "key": key, **m} for (rank, key), m in ops.items()],
        "steps": steps,
        "gpu": {index if rank is None or rank < 0 else rank: g for rank, g in (gpu or {}).items()},
    }
