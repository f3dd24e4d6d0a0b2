# A DataLoader with two worker processes (fork) for the torch end-to-end
# tests: each worker reads its samples through a small nn.Module
# (LayerNorm) and collates them; the main process runs a Linear layer on
# each of the 4 batches. argv: [torch OUT]: with "torch", the run after
# `import torch` is profiled by torch.profiler in the main process and its
# key_averages are written to OUT, a line per name: "count NAME N".
import sys

import torch
from torch.utils.data import DataLoader, Dataset

prof = None
if len(sys.argv) > 1 and sys.argv[1] == "torch":
    from torch.profiler import ProfilerActivity, profile

    import torch_facts

    prof = profile(activities=[ProfilerActivity.CPU], profile_memory=True)
    prof.__enter__()

torch.manual_seed(0)


class Samples(Dataset):
    def __init__(self):
        self.x = torch.randn(64, 8)
        self.norm = torch.nn.LayerNorm(8)

    def __len__(self):
        return 64

    def __getitem__(self, i):
        with torch.no_grad():
            return self.norm(self.x[i])


net = torch.nn.Linear(8, 2)
tot = 0.0
with torch.no_grad():
    for x in DataLoader(Samples(), batch_size=16, num_workers=2):
        tot += float(net(x).sum())

if prof is not None:
    prof.__exit__(None, None, None)
    torch_facts.write(prof, sys.argv[2], memory=True)
print("total %.4f" % tot)
