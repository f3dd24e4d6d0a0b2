# opprof advise's memory-growth case: a tiny MLP's training loop that, every
# 5th step, makes a 10 MiB tensor of outputs to log; with the argument
# "keep" it keeps each in a list (memory grows in 1 step of 5), without it
# it drops it (the same allocations, no growth).
import sys

import torch

keep = len(sys.argv) > 1 and sys.argv[1] == "keep"
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
opt = torch.optim.SGD(net.parameters(), lr=0.01)
x, y = torch.randn(32, 16), torch.randn(32, 4)
kept = []
for step in range(40):
    opt.zero_grad()
    loss = ((net(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        log = torch.zeros(2560, 1024)
        if keep:
            kept.append(log)
print("kept %d" % len(kept))
