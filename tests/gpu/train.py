"""ResNet-style training steps (batch 32, 20 steps) for scripts/gpu-validate.sh.

  train.py            run, print wall time
  train.py --range    the same, the 20 steps between cudaProfilerStart and
                      cudaProfilerStop (for OPPROF_CAPTURE=cudaProfilerApi:
                      opprof then records exactly what torch.profiler does)
  train.py --torch    the same under torch.profiler (CPU + CUDA), print its
                      kernel count, kernel time, top kernels, copy bytes and
                      its key_averages' count of each CPU-side name
  train.py --torch --after   and 2 more steps after the profiler stopped
"""
import json, sys, tempfile, time
import torch, torch.nn as nn

def block(c):
    return nn.Sequential(nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                         nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c))

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        self.blocks = nn.ModuleList([block(64) for _ in range(4)])
        self.head = nn.Linear(64, 1000)
    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            x = torch.relu(x + b(x))
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))

def steps(n=20):
    torch.manual_seed(0)
    m = Net().cuda()
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    x = torch.randn(32, 3, 224, 224)
    y = torch.randint(0, 1000, (32,))
    for _ in range(n):
        xb, yb = x.cuda(), y.cuda()
        loss = nn.functional.cross_entropy(m(xb), yb)
        opt.zero_grad(); loss.backward(); opt.step()
    torch.cuda.synchronize()

def main():
    steps(2)  # warm up: cuDNN autotune, allocator
    if "--range" in sys.argv:
        torch.cuda.profiler.start()
        t = time.perf_counter(); steps(); w = time.perf_counter() - t
        torch.cuda.profiler.stop()
        print("wall_s %.4f" % w); return
    if "--torch" not in sys.argv:
        t = time.perf_counter(); steps(); print("wall_s %.4f" % (time.perf_counter() - t)); return
    from torch.profiler import profile, ProfilerActivity
    # The steps' time inside the profiled region, as the other two runs
    # measure it (after the same warm-up); the profiler's own start and its
    # processing at the end are not counted against it.
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t = time.perf_counter(); steps(); wall = time.perf_counter() - t
    if "--after" in sys.argv:
        steps(2)
    path = tempfile.mktemp(suffix=".json")
    prof.export_chrome_trace(path)
    ev = json.load(open(path))["traceEvents"]
    k = [e for e in ev if e.get("cat") == "kernel"]
    by = {}
    for e in k:
        by[e["name"]] = by.get(e["name"], 0) + e["dur"]
    cp = sum(e.get("args", {}).get("bytes", 0) for e in ev if e.get("cat") == "gpu_memcpy")
    from torch.autograd import DeviceType
    ops = {e.key: e.count for e in prof.key_averages() if e.device_type == DeviceType.CPU}
    print(json.dumps({"wall_s": wall, "kernels": len(k), "kernel_us": sum(e["dur"] for e in k),
                      "memcpy_bytes": cp, "top": sorted(by.items(), key=lambda x: -x[1])[:10],
                      "ops": ops}))

main()
