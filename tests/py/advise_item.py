# opprof advise's host-synchronisation case: a tiny MLP's training loop that
# reads each sample's loss into Python with .item() (32 a step) before its
# optimizer step, as a loop counting or logging per sample does.
import torch

torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
opt = torch.optim.SGD(net.parameters(), lr=0.01)
x, y = torch.randn(32, 16), torch.randn(32, 4)
worst = 0.0
for step in range(40):
    opt.zero_grad()
    per_sample = ((net(x) - y) ** 2).mean(dim=1)
    for v in per_sample:
        worst = max(worst, v.item())
    per_sample.mean().backward()
    opt.step()
print("worst %.4f" % worst)
