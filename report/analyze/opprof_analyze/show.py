"""The analysis as text or JSON: shows, never computes."""
import json
import math


def _us(v):
    if v >= 1e6:
        return "%.3fs" % (v / 1e6)
    if v >= 1e3:
        return "%.3fms" % (v / 1e3)
    return "%.3fus" % v


def text(s):
    """A name or path as the tool's text shows it (report/views/fmt.c,
    text_char): what a terminal would act on escaped; a byte of a path that
    is not UTF-8 (Python's surrogate escape of it) as the tool shows it,
    "\\xff"."""
    out = []
    for ch in s:
        c = ord(ch)
        if ch in "\n\r\t":
            out.append("\\" + "nrt"["\n\r\t".index(ch)])
        elif c < 0x20 or c == 0x7f:
            out.append("\\x%02x" % c)
        elif 0xdc80 <= c <= 0xdcff:
            out.append("\\x%02x" % (c - 0xdc00))
        elif (0x80 <= c <= 0x9f or c in (0x200e, 0x200f, 0x2028, 0x2029) or 0x202a <= c <= 0x202e
              or 0x2066 <= c <= 0x2069):
            out.append("\\u%04x" % c)
        else:
            out.append(ch)
    return "".join(out)


def _plain(x):
    """JSON's values: numpy scalars as Python's, NaN as null, a byte of a
    path that is not UTF-8 as U+FFFD (as the tool's JSON has it)."""
    if isinstance(x, str):
        return "".join("\ufffd" if 0xdc80 <= ord(ch) <= 0xdcff else ch for ch in x)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if hasattr(x, "item"):
        x = x.item()
    return None if isinstance(x, float) and math.isnan(x) else x


def _n(count, what):
    """"1 trace", "3 traces"."""
    return "%d %s%s" % (count, what, "" if count == 1 else "s")


def _origin(a, rank):
    """Beside a rank made up for a trace without one: " [FILE, host H, pid
    P]"; "" beside a real rank."""
    o = a["unranked"].get(int(rank))
    if o is None:
        return ""
    return " [%s, host %s, pid %s]" % (text(o["trace"]), text(o["host"] or "?"),
                                       o["pid"] if o["pid"] is not None else "?")


def warnings(summaries):
    """What the tool said of each trace, in the traces' order, one line
    each naming the trace: the report's warnings, then whether it was left
    out and why."""
    out = []
    for s in summaries:
        out += ["warning: %s: %s" % (s["trace"], w) for w in s["warnings"]]
        if "left_out" in s:
            out.append("warning: %s %s: left out" % (s["trace"], s["left_out"]))
    return out


def as_json(a, top):
    ka = a["key_averages"].head(top)
    return json.dumps(_plain({
        "traces": a["traces"],
        "ranks": a["ranks"],
        "left_out": a["left_out"],
        "key_averages": ka.to_dict("records"),
        "per_rank": {"metric": "self_cpu_time_total", "ranks": [int(r) for r in a["per_rank"].columns],
                     "rows": [{"key": k, "values": [float(v) for v in row]}
                              for k, row in a["per_rank"].iterrows()]},
        "rank_time_basis": a["rank_time_basis"],
        "rank_times_us": {str(int(r)): float(v) for r, v in a["rank_times"].items()},
        "stragglers": a["stragglers"],
        "gpu": a["gpu"].to_dict("records"),
        "launch_delays_us": a["launch_delays"].to_dict("records"),
        "gpu_unread": a["gpu_unread"],
        "unranked": {str(int(r)): o for r, o in sorted(a["unranked"].items())},
    }))


def as_text(a, top):
    out = ["%s, %s" % (_n(a["traces"], "trace"), _n(len(a["ranks"]), "rank"))]
    if a["left_out"]:
        out.append("%s left out:" % _n(len(a["left_out"]), "trace"))
        out += ["    %s: %s" % (text(t["trace"]), t["why"]) for t in a["left_out"]]
    if a["unranked"]:
        out.append("%s numbered in file order (no process of %s had a rank variable; "
                   "`opprof report --help` lists them under --by-rank):" %
                   (_n(len(a["unranked"]), "rank"), "its trace" if len(a["unranked"]) == 1 else "their traces"))
        out += ["    rank %d:%s" % (r, _origin(a, r)) for r in sorted(a["unranked"])]
    out += ["",
           "Operators over all ranks (key_averages, most self CPU first):",
           "%-48s %10s %14s %14s %14s" % ("Name", "Calls", "Self CPU", "CPU total", "Self CUDA")]
    for r in a["key_averages"].head(top).itertuples():
        out.append("%-48s %10d %14s %14s %14s" % (text(r.key)[:48], r.count,
                                                  _us(r.self_cpu_time_total), _us(r.cpu_time_total),
                                                  _us(r.self_cuda_time_total)))
    t = a["rank_times"]
    out += ["", "Ranks by %s: min %s, median %s, max %s" % (a["rank_time_basis"], _us(t.min()),
                                                           _us(a["rank_time_median"]), _us(t.max()))]
    if not a["stragglers"]:
        out.append("no straggler (no rank over the median by 10%)")
    for s in a["stragglers"]:
        out.append("straggler: rank %d%s, %s (%.2fx the median)" % (
            s["rank"], _origin(a, s["rank"]), _us(s["time_us"]), s["over_median"]))
        for o in s["operators"]:
            out.append("    %-44s %s here, median %s (+%s)" % (text(o["key"])[:44], _us(o["rank_us"]),
                                                            _us(o["median_us"]), _us(o["over_us"])))
    g = a["gpu"]
    if len(g):
        out += ["", "GPU time per rank:",
                "%6s %12s %14s %12s %12s %12s %9s" % ("Rank", "Compute", "Communication", "Memcpy",
                                                        "Idle", "Overlap", "Hidden")]
        for r in g.itertuples():
            out.append("%6d %12s %14s %12s %12s %12s %8.1f%%%s" % (
                r.rank, _us(r.compute_us), _us(r.communication_us), _us(r.memcpy_us + r.memset_us),
                _us(r.idle_us), _us(r.overlap_us), 100 * r.overlap_share, _origin(a, r.rank)))
    d = a["launch_delays"]
    if len(d):
        out += ["", "Launch delay (kernel start - its launch's start) per rank:",
                "%6s %8s %12s %12s %12s %12s" % ("Rank", "Kernels", "Mean", "p50", "p90", "Max")]
        for r in d.itertuples():
            out.append("%6d %8d %12s %12s %12s %12s%s" % (r.rank, r.kernels, _us(r.mean), _us(r.p50),
                                                         _us(r.p90), _us(r.max), _origin(a, r.rank)))
    if a["gpu_unread"]:
        out += ["", "GPU time not read (this opprof was built without SQLite) for: " +
                ", ".join(text(t) for t in a["gpu_unread"])]
    return "\n".join(out) + "\n"
