# A small CNN training script for the torch end-to-end tests: Conv2d,
# BatchNorm2d, ReLU, MaxPool2d, Linear, Dropout, Adam, backward and a
# record_function block. argv: ITERS [torch OUT]: with "torch", the whole
# run after `import torch` is profiled by torch.profiler (record_shapes,
# profile_memory) and what it says is written to OUT, a line per fact,
# tab-separated: key_averages' "count NAME N" and "shapes NAME SHAPES N";
# each name's CPU memory as torch's event tree has it, "mem NAME CPU_MEM
# SELF_CPU_MEM" ("[memory]": outside every op), and "left BYTES", the bytes
# allocated less freed while it profiled. Without, the script runs
# unprofiled (opprof's run).
import sys

import torch


def tree_memory(prof):
    """Each name's CPU memory (total, self) and "[memory]"'s, and the bytes
    left, as torch's profiler attributes each allocation and free: to its
    event's parent, the innermost op open on its thread (the ns-precise
    event tree). Not key_averages' cpu_memory_usage: that sums the
    allocations of any thread whose whole microsecond falls within an op's
    [start, end], so an allocation on a boundary is charged to a neighbour
    too, and a row moves by whole allocations from run to run
    (scripts/torch-memory-table.py shows it). Named, dropped and folded as
    key_averages does (_filter_name; _remove_dup_nodes: an op that is its
    same-named parent's only child is that parent)."""
    from torch._C._profiler import _EventType
    from torch.autograd.profiler_util import _filter_name, _rewrite_name

    def nbytes(e):
        if e.tag != _EventType.Allocation:
            return 0
        cpu = e.extra_fields.device.type in ("cpu", "mkldnn", "ideep")
        return e.extra_fields.alloc_size if cpu else 0

    def node(e):  # [name, self, children], or a dropped op's (None, self, children)
        ops = [node(c) for c in e.children if c.tag != _EventType.Allocation]
        kids = []
        for k in ops:
            kids += k[2] if k[0] is None else [k]
        own = sum(nbytes(c) for c in e.children) + sum(k[1] for k in ops if k[0] is None)
        name = None if _filter_name(e.name) else _rewrite_name(e.name, with_wildcard=True)
        while name and len(kids) == 1 and kids[0][0] == name:
            own, kids = own + kids[0][1], kids[0][2]
        return [name, own, kids]

    rows, outside = {}, 0

    def add(n):
        total = n[1] + sum(add(k) for k in n[2])
        t, s = rows.get(n[0], (0, 0))
        rows[n[0]] = (t + total, s + n[1])
        return total

    for e in prof.profiler.kineto_results.experimental_event_tree():
        if e.tag == _EventType.Allocation:
            outside += nbytes(e)
        elif e.tag == _EventType.TorchOp:
            n = node(e)
            outside += n[1] if n[0] is None else 0
            for k in n[2] if n[0] is None else [n]:
                add(k)
    left = outside + sum(s for _, s in rows.values())
    rows["[memory]"] = (outside, outside)
    return rows, left


iters = int(sys.argv[1])
prof = None
if len(sys.argv) > 2 and sys.argv[2] == "torch":
    from torch.profiler import ProfilerActivity, profile
    prof = profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True)
    prof.__enter__()

torch.manual_seed(0)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.relu = torch.nn.ReLU()
        self.pool = torch.nn.MaxPool2d(2)
        self.drop = torch.nn.Dropout(0.25)
        self.fc = torch.nn.Linear(8 * 8 * 8, 10)

    def forward(self, x):
        x = self.pool(self.relu(self.bn(self.conv(x))))
        return self.fc(self.drop(torch.flatten(x, 1)))


net = Net()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
x = torch.randn(16, 3, 16, 16)
y = torch.randint(0, 10, (16,))
for _ in range(iters):
    opt.zero_grad()
    with torch.autograd.profiler.record_function("loss_and_backward"):
        loss = torch.nn.functional.cross_entropy(net(x), y)
        loss.backward()
    opt.step()

val = loss.item()
if prof is not None:
    prof.__exit__(None, None, None)
    with open(sys.argv[3], "w") as f:
        for e in prof.key_averages():
            f.write("count\t%s\t%d\n" % (e.key, e.count))
        rows, left = tree_memory(prof)
        for name, (total, self_mem) in rows.items():
            f.write("mem\t%s\t%d\t%d\n" % (name, total, self_mem))
        f.write("left\t%d\n" % left)
        for e in prof.key_averages(group_by_input_shape=True):
            f.write("shapes\t%s\t%s\t%d\n" % (e.key, e.input_shapes, e.count))
print("loss %.4f" % val)
