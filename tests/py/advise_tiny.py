# opprof advise's small-operators case: an nn.Module whose forward is a
# chain of 60 elementwise operators on one [64, 64] tensor (what a fused
# kernel would do in one pass), run 40 times.
import torch


class Chain(torch.nn.Module):
    def forward(self, x):
        for _ in range(20):
            x = x * 0.5
            x = x + 1.0
            x = torch.relu(x)
        return x


torch.manual_seed(0)
net = Chain()
x = torch.randn(64, 64)
with torch.no_grad():
    for _ in range(40):
        y = net(x)
print("sum %.4f" % float(y.sum()))
