"""make bench: a small CNN trained for N iterations (Conv2d, BatchNorm2d,
ReLU, MaxPool2d, Linear, Adam) on one thread. argv: N [torch]: with
"torch", inside torch.profiler (record_shapes, profile_memory). Prints the
loop's wall time: wall_ms=."""
import sys
import time

import torch

n = int(sys.argv[1])
torch.set_num_threads(1)
torch.manual_seed(0)
net = torch.nn.Sequential(
    torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
    torch.nn.MaxPool2d(2), torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
    torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(32 * 8 * 8, 10))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
x, y = torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,))


def step():
    opt.zero_grad()
    torch.nn.functional.cross_entropy(net(x), y).backward()
    opt.step()


step()  # warm
prof = None
if len(sys.argv) > 2 and sys.argv[2] == "torch":
    from torch.profiler import ProfilerActivity, profile
    prof = profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True)
    prof.__enter__()
t0 = time.perf_counter_ns()
for _ in range(n):
    step()
t1 = time.perf_counter_ns()
if prof is not None:
    prof.__exit__(None, None, None)
print("wall_ms=%.2f" % ((t1 - t0) / 1e6))
