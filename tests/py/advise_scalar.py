# opprof advise's 0-d tensors case: a tiny MLP's training loop that adds up
# its samples' squared losses one by one in Python (a loop over a tensor's
# elements: 32 aten::mul and 32 aten::add on 0-d tensors a step), what one
# (per_sample ** 2).sum() would do.
import torch

torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
opt = torch.optim.SGD(net.parameters(), lr=0.01)
x, y = torch.randn(32, 16), torch.randn(32, 4)
for step in range(40):
    opt.zero_grad()
    per_sample = ((net(x) - y) ** 2).mean(dim=1)
    total = 0.0
    for v in per_sample.detach():
        total = total + v * v
    per_sample.mean().backward()
    opt.step()
print("total %.4f" % float(total))
