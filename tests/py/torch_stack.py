# torch.profiler with with_stack=True (its Python tracer, which knows an
# nn.Module's call by the frames of Module.__call__'s code) for the torch
# end-to-end tests. argv: OUT: key_averages' "count NAME N" lines, then
# the module calls its event tree holds, "count nn.Module: NAME N".
import sys

import torch
from torch._C._profiler import _EventType
from torch.profiler import ProfilerActivity, profile


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)
        self.act = torch.nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x))


torch.manual_seed(0)
net = Net()
x = torch.randn(2, 8)
with profile(activities=[ProfilerActivity.CPU], with_stack=True) as prof:
    for _ in range(3):
        y = net(x)

modules = {}


def walk(e):
    if e.tag == _EventType.PyCall and e.name.startswith("nn.Module: "):
        modules[e.name] = modules.get(e.name, 0) + 1
    for c in e.children:
        walk(c)


for e in prof.profiler.kineto_results.experimental_event_tree():
    walk(e)
with open(sys.argv[1], "w") as f:
    for e in prof.key_averages():
        f.write("count\t%s\t%d\n" % (e.key, e.count))
    for name, n in sorted(modules.items()):
        f.write("count\t%s\t%d\n" % (name, n))
print("%.4f" % float(y.sum()))
