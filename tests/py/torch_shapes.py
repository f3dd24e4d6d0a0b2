# Model shapes beyond torch_train.py's for the torch end-to-end tests, each
# inside a record_function "shapes": nn.LSTM and nn.GRU forward and
# backward, nn.Embedding, nn.LayerNorm and nn.MultiheadAttention, an
# nn.TransformerEncoderLayer, a torch.jit.script'ed module, inference under
# torch.no_grad, in-place ops, ops on views, double backward
# (torch.autograd.grad with create_graph) and torch.utils.checkpoint.
# argv: [torch OUT]: with "torch", torch.profiler profiles the run and the
# call paths its event tree has inside "shapes" are written to OUT, a line
# "path shapes;A;B N" each (torch_facts.tree_paths). Prints a checksum.
import sys

import torch
import torch.nn as nn
import torch.utils.checkpoint as cp

prof = None
if len(sys.argv) > 2 and sys.argv[1] == "torch":
    from torch.profiler import ProfilerActivity, profile

    import torch_facts

    prof = profile(activities=[ProfilerActivity.CPU])
    prof.__enter__()

torch.manual_seed(0)


class Scripted(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.fc(x)) + 1


lstm, gru = nn.LSTM(8, 8, num_layers=2), nn.GRU(8, 8, batch_first=True)
emb, norm = nn.Embedding(20, 8), nn.LayerNorm(8)
mha = nn.MultiheadAttention(8, 2, batch_first=True)
layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
scripted = torch.jit.script(Scripted())
fc1, fc2 = nn.Linear(8, 8), nn.Linear(8, 8)
x = torch.randn(2, 3, 8)
idx = torch.randint(0, 20, (2, 3))
leaf = torch.randn(4, 6, requires_grad=True)
sum_ = 0.0
with torch.autograd.profiler.record_function("shapes"):
    for _ in range(2):
        o, _ = lstm(x)
        o.sum().backward()
        o, h = gru(x)
        (o.sum() + h.sum()).backward()
        e = norm(emb(idx))
        a, _ = mha(e, e, e)
        a.sum().backward()
        layer(x).sum().backward()
        sum_ += float(scripted(x[0]).sum())
        with torch.no_grad():
            sum_ += float(layer.eval()(x).sum())
            layer.train()
        y = x.clone()
        y.add_(1).mul_(2).relu_()
        y[0].zero_()
        y[:, 1].fill_(2.0)
        v = leaf.view(2, 12).sum() + leaf.t()[1:3].sum() + leaf.narrow(1, 0, 3).sum()
        v.backward()
        g, = torch.autograd.grad((leaf**3).sum(), leaf, create_graph=True)
        g.sum().backward()
        cp.checkpoint(lambda t: fc2(torch.relu(fc1(t))), x[0].requires_grad_()).sum().backward()
        sum_ += float(y.sum())
if prof is not None:
    prof.__exit__(None, None, None)
    with open(sys.argv[2], "w") as f:
        for path, n in torch_facts.tree_paths(prof, "shapes").items():
            f.write("path\t%s\t%d\n" % (path, n))
print("%.3f" % sum_)
