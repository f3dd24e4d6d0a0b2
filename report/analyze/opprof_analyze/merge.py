"""The tasks' summaries merged (pandas): computes, never prints."""
import pandas as pd

from .trace_task import METRICS

# A rank is a straggler when its time is this much above the median rank's.
STRAGGLER_RATIO = 1.10


def rank_median(x, axis=None):
    """The median over ranks as `opprof report --by-rank` takes it: of an
    even number, the lower middle one (a rank's own figure, never a mean).
    A frame's: along axis (1: each row's)."""
    if axis is None:
        return x.quantile(0.5, interpolation="lower")
    return x.quantile(0.5, axis=axis, interpolation="lower")


def number_unranked(summaries):
    """A trace without ranks stands for one rank: numbered after the real
    ranks, in trace order (in place)."""
    ranked = [r for s in summaries if s["ranked"] for r in s["ranks"]]
    nxt = max(ranked) + 1 if ranked else 0
    for s in summaries:
        if s["ranked"]:
            continue
        s["ranks"] = [nxt]
        for r in s["ops"]:
            r["rank"] = nxt
        s["gpu"] = {nxt: g for g in s["gpu"].values()}
        nxt += 1
    return summaries


def same_rank(summaries):
    """(rank, first trace, second trace) for the first rank that two traces
    both hold (a copy of a trace, or another run's), which would add up as
    one rank; else None."""
    seen = {}
    for s in summaries:
        if "left_out" in s or not s["ranked"]:
            continue
        for r in s["ranks"]:
            if r in seen:
                return r, seen[r], s["trace"]
            seen[r] = s["trace"]
    return None


def made_up(summaries):
    """{rank: its trace's origin (file, host, pid)} for each rank numbered
    by number_unranked."""
    return {s["ranks"][0]: s["origin"] for s in summaries if not s["ranked"]}


def ops_frame(summaries):
    """One row per (rank, operator), every metric a column (calls whole)."""
    rows = [r for s in summaries for r in s["ops"]]
    df = pd.DataFrame(rows, columns=["rank", "key", *METRICS]).fillna(0)
    return df.astype({m: int if m == "count" else float for m in METRICS})


def key_averages(ops):
    """torch's key_averages over every rank: operators summed across ranks,
    most self CPU time first."""
    t = ops.groupby("key", as_index=False)[list(METRICS)].sum()
    t["cpu_time"] = t["cpu_time_total"] / t["count"].where(t["count"] > 0, 1)
    return t.sort_values(["self_cpu_time_total", "key"], ascending=[False, True], ignore_index=True)


def per_rank(ops, metric="self_cpu_time_total"):
    """Operators by rank, one column per rank (what `opprof report --by-rank`
    shows for metric)."""
    m = ops.pivot_table(index="key", columns="rank", values=metric, aggfunc="sum", fill_value=0)
    return m.reindex(sorted(m.columns), axis=1)


def rank_times(summaries, ops):
    """Per rank: its mean step time (wall, us) where steps were asked for
    and every rank has some (a rank without is the one to look at, and a
    trace of several ranks mixes theirs), else the self CPU time of its
    operators; and what the times are."""
    steps, asked = {}, False
    for s in summaries:
        st = s["steps"]
        asked = asked or st is not None
        if st and st["count"] and len(s["ranks"]) == 1:
            steps[s["ranks"][0]] = sum(st["wall_us"]) / len(st["wall_us"])
    t = ops.groupby("rank")["self_cpu_time_total"].sum().sort_index()
    if steps and set(steps) == set(t.index):
        return pd.Series(steps, name="step_us").sort_index(), "mean step time"
    basis = "self CPU time of its operators"
    if asked:
        missing = sorted(set(t.index) - set(steps))
        basis += " (ranks without steps: %s)" % ", ".join(str(int(r)) for r in missing[:10])
    return t.rename("self_cpu_us"), basis


def stragglers(times):
    """Ranks slower than the median rank by STRAGGLER_RATIO, slowest first."""
    med = rank_median(times)
    if not med > 0:  # nothing to be slower than
        return []
    slow = times[times > med * STRAGGLER_RATIO].sort_values(ascending=False)
    return [{"rank": int(r), "time_us": float(v), "over_median": float(v / med)} for r, v in slow.items()]


def skew(ops, rank, top=5):
    """The operators that make a rank slow: their self CPU time there minus
    their median over all ranks, largest first."""
    m = per_rank(ops)
    if rank not in m.columns:
        return []
    over = (m[rank] - rank_median(m, axis=1)).sort_values(ascending=False)
    return [{"key": k, "rank_us": float(m.at[k, rank]), "median_us": float(rank_median(m.loc[k])),
             "over_us": float(v)} for k, v in over.head(top).items() if v > 0]


def gpu_breakdown(summaries):
    """Per rank: compute, communication, memcpy, memset, idle, span and
    overlap (us); the share of communication hidden under compute."""
    rows = []
    for s in summaries:
        for rank, g in s["gpu"].items():
            row = {"rank": rank, **{k: v for k, v in g.items() if k != "launch_delays_us"}}
            row["overlap_share"] = g["overlap_us"] / g["communication_us"] if g["communication_us"] else 0.0
            rows.append(row)
    return pd.DataFrame(rows).sort_values("rank", ignore_index=True) if rows else pd.DataFrame()


def launch_delays(summaries):
    """Per rank: launch delay statistics (us) over its kernels."""
    rows = []
    for s in summaries:
        for rank, g in s["gpu"].items():
            d = pd.Series(g["launch_delays_us"], dtype=float)
            if len(d):
                rows.append({"rank": rank, "kernels": len(d), "mean": d.mean(), "p50": d.median(),
                             "p90": d.quantile(0.9), "max": d.max()})
    return pd.DataFrame(rows).sort_values("rank", ignore_index=True) if rows else pd.DataFrame()


def analyze(summaries):
    """Everything the output shows, from the tasks' summaries: those of the
    traces left out (no operator) counted as traces, and named, not as
    ranks."""
    left_out = [{"trace": s["trace"], "why": s["left_out"]} for s in summaries if "left_out" in s]
    traces = len(summaries)
    summaries = [s for s in summaries if "left_out" not in s]
    number_unranked(summaries)
    ops = ops_frame(summaries)
    if not len(ops):
        raise ValueError("no operator in these traces")
    times, basis = rank_times(summaries, ops)
    slow = stragglers(times)
    unranked = made_up(summaries)
    for s in slow:
        s["operators"] = skew(ops, s["rank"])
        s["origin"] = unranked.get(s["rank"])  # the trace of a rank made up, else None
    return {
        "traces": traces,
        "left_out": left_out,
        "ranks": sorted(int(r) for r in ops["rank"].unique()) if len(ops) else [],
        "key_averages": key_averages(ops),
        "per_rank": per_rank(ops),
        "rank_times": times,
        "rank_time_median": float(rank_median(times)),
        "rank_time_basis": basis,
        "stragglers": slow,
        "gpu": gpu_breakdown(summaries),
        "launch_delays": launch_delays(summaries),
        "gpu_unread": [s["trace"] for s in summaries if s.get("gpu_unread")],
        "unranked": unranked,
    }
