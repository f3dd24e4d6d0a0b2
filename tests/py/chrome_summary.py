"""Summarise a Chrome trace JSON (opprof export chrome) in a fixed, sorted
form that tests compare exactly: it must parse as JSON, every arrow end must
have a start, and no time may be negative."""
import json
import sys
from collections import Counter

d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
print("keys", " ".join(sorted(d)))
for (ph, cat), n in sorted(Counter((e["ph"], e.get("cat", "-")) for e in ev).items()):
    print("count", ph, cat, n)
print("negative", sum(1 for e in ev if e.get("ts", 0) < 0 or e.get("dur", 0) < 0))
starts = {e["id"] for e in ev if e["ph"] == "s"}
ends = {e["id"] for e in ev if e["ph"] == "f"}
print("flows unmatched", len(ends - starts), len(starts - ends))
for (cat, name), n in sorted(Counter((e["cat"], e["name"]) for e in ev if e["ph"] == "X").items()):
    print("op", cat, name, n)
for e in ev:
    if e["ph"] == "M" and e["pid"] < 100:
        print("meta", e["name"], e["pid"], e["tid"], e["args"]["name"])
print("memory", [e["args"]["Total Allocated"] for e in ev if e["ph"] == "i"])
dims = Counter((e["name"], json.dumps(e["args"].get("Input Dims")), e["args"].get("flops"))
               for e in ev if e["ph"] == "X" and "Input Dims" in e["args"])
for (name, dd, fl), n in sorted(dims.items()):
    print("dims", name, dd, fl, n)
