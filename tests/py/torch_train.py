# A small CNN training script for the torch end-to-end tests: Conv2d,
# BatchNorm2d, ReLU, MaxPool2d, Linear, Dropout, Adam, backward and a
# record_function block. argv: ITERS [torch OUT]: with "torch", the whole
# run after `import torch` is profiled by torch.profiler (record_shapes,
# profile_memory) and what it says is written to OUT (torch_facts.py: the
# counts, the CPU memory, the shapes). Without, the script runs unprofiled
# (opprof's run).
import sys

import torch
iters = int(sys.argv[1])
prof = None
if len(sys.argv) > 2 and sys.argv[2] == "torch":
    from torch.profiler import ProfilerActivity, profile

    import torch_facts

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
    torch_facts.write(prof, sys.argv[3], shapes=True, memory=True)
print("loss %.4f" % val)
