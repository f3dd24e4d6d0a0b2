"""A small CNN (conv + nn.Linear layers) on Debian's PyTorch, run under the
opprof preload by the end-to-end tests. With --torch-profiler it also runs
torch.profiler around the same steps and prints how many aten::addmm calls
it counted, which must equal the sgemm_ calls in opprof's trace."""
import sys

import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_num_threads(1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(16 * 8 * 8, 64)
        self.fc2 = nn.Linear(64, 32)
        self.fc3 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.conv1(x)))
        x = self.pool(torch.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return self.fc3(x)


def main():
    steps = 5
    model = Net().eval()
    x = torch.randn(4, 3, 32, 32)
    if "--torch-profiler" in sys.argv:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            with torch.no_grad():
                for _ in range(steps):
                    y = model(x)
        addmm = sum(e.count for e in prof.key_averages() if e.key == "aten::addmm")
        print(f"torch.profiler aten::addmm {addmm}")
    else:
        with torch.no_grad():
            for _ in range(steps):
                y = model(x)
    print(f"output {tuple(y.shape)} sum {float(y.sum()):.4f}")


main()
