# The operators torch.profiler's with_flops gives FLOPs to (aten::mm,
# addmm, bmm, baddbmm, mul, add, conv2d: torch's computeFlops), called
# directly and from a small training step (nn.Conv2d with stride, padding,
# dilation and groups; nn.Linear on 2-D and 3-D inputs; backward), for the
# torch end-to-end tests. argv: [torch OUT]: with "torch", the run after
# `import torch` is profiled by torch.profiler (record_shapes, with_flops)
# and each name's FLOPs and count are written to OUT, "flops NAME N" and
# "count NAME N" a line, tab-separated; without, it runs unprofiled
# (opprof's run).
import sys

import torch

prof = None
if len(sys.argv) > 2 and sys.argv[1] == "torch":
    from torch.profiler import ProfilerActivity, profile

    prof = profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_flops=True)
    prof.__enter__()

torch.manual_seed(0)
a, b, c = torch.randn(5, 7), torch.randn(7, 3), torch.randn(3)
A, B, C = torch.randn(4, 5, 7), torch.randn(4, 7, 3), torch.randn(4, 5, 3)
x = torch.randn(2, 3, 10, 9)
out = [
    torch.mm(a, b),
    torch.addmm(c, a, b),
    torch.bmm(A, B),
    torch.baddbmm(C, A, B),
    torch.mul(a, 2.0),
    a * a,
    torch.add(a, a),
    a + 1,
    torch.matmul(A, b),
    torch.mm(torch.randn(0, 7), b),
    torch.nn.functional.conv2d(x, torch.randn(6, 3, 3, 2), stride=(2, 1), padding=(1, 2),
                               dilation=(1, 2)),
    torch.nn.functional.conv2d(x, torch.randn(6, 1, 3, 3), groups=3),
    torch.nn.functional.conv1d(torch.randn(2, 3, 9), torch.randn(4, 3, 3)),
]


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 6, 3, stride=2, padding=1, dilation=2, groups=3)
        self.fc = torch.nn.Linear(6 * 3 * 3, 5)
        self.seq = torch.nn.Linear(5, 4)

    def forward(self, x):
        y = self.fc(torch.flatten(torch.relu(self.conv(x)), 1))
        return self.seq(y.unsqueeze(1).expand(-1, 3, -1)).sum()


net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
for _ in range(2):
    opt.zero_grad()
    loss = net(torch.randn(4, 3, 8, 8))
    loss.backward()
    opt.step()

val = loss.item() + sum(float(o.sum()) for o in out)
if prof is not None:
    prof.__exit__(None, None, None)
    with open(sys.argv[2], "w") as f:
        for e in prof.key_averages():
            f.write("count\t%s\t%d\n" % (e.key, e.count))
            if e.flops:
                f.write("flops\t%s\t%d\n" % (e.key, e.flops))
print("%.4f" % val)
