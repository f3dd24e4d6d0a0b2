# opprof advise's input-pipeline case: a tiny MLP trained on batches from a
# DataLoader whose two workers take 5 ms a sample (four samples a batch), so
# that each step waits for its batch most of its time.
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Slow(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        time.sleep(0.005)
        return torch.full((16,), float(i)), torch.zeros(4)


torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for x, y in DataLoader(Slow(), batch_size=4, num_workers=2):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(net(x), y)
    loss.backward()
    opt.step()
print("steps 16")
