# Why opprof's CPU Mem columns follow torch.profiler's event tree, not its
# key_averages table: runs tests/py/torch_train.py ITERS (default 3) under
# torch.profiler and prints the table's rows that differ from the tree's
# ("mem" facts), then the allocations the table charges to two operators
# neither of which is inside the other. The table sums, into each op, every
# thread's allocations whose whole microsecond lies in the op's [start,
# start + duration], each truncated to the microsecond: one on a boundary
# counts in both neighbours, one in an op's last partial microsecond in
# none of its own, so its rows change from run to run; the tree gives each
# allocation to the innermost op open on its thread, the same every run.
#   /usr/bin/python3 scripts/torch-memory-table.py [ITERS]
import os
import runpy
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
facts = tempfile.NamedTemporaryFile(suffix=".txt", delete=False).name
script = os.path.join(here, "..", "tests", "py", "torch_train.py")
sys.path.insert(0, os.path.dirname(script))  # its torch_facts
sys.argv = [script, sys.argv[1] if len(sys.argv) > 1 else "3", "torch", facts]
prof = runpy.run_path(script, run_name="__main__")["prof"]

tree = {}
with open(facts) as f:
    for line in f:
        col = line.rstrip("\n").split("\t")
        if col[0] == "mem":
            tree[col[1]] = (int(col[2]), int(col[3]))
os.unlink(facts)

print("%-58s %22s %22s" % ("key_averages row (CPU Mem, Self)", "table", "event tree"))
differ = 0
for e in prof.key_averages():
    table = (e.cpu_memory_usage, e.self_cpu_memory_usage)
    if table != tree.get(e.key, (0, 0)):
        differ += 1
        print("%-58s %22s %22s" % (e.key[:58], table, tree.get(e.key, (0, 0))))
print("%d rows differ" % differ)

events = prof.events()
ops = [e for e in events if e.name != "[memory]"]
kr = prof.profiler.kineto_results
t0 = kr.trace_start_us()


def inside(a, b):  # a is b or below it
    while a is not None and a is not b:
        a = a.cpu_parent
    return a is b


twice = 0
for r in kr.events():
    if r.name() != "[memory]":
        continue
    t = r.start_us() - t0
    charged = [e for e in ops if e.time_range.start <= t <= e.time_range.end]
    for i, a in enumerate(charged):
        for b in charged[i + 1 :]:
            if not inside(a, b) and not inside(b, a):
                twice += 1
                if twice <= 5:
                    print(
                        "%d bytes at %d us charged to %s [%d, %d] and to %s [%d, %d]"
                        % (r.nbytes(), t, a.name, a.time_range.start, a.time_range.end,
                           b.name, b.time_range.start, b.time_range.end)
                    )
print("%d charges of an allocation to two operators, neither inside the other" % twice)
