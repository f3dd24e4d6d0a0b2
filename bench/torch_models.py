"""make bench: two model shapes users train, timed in steady state inside
the process. argv: MODEL [torch] [rounds]
  cnn  a small-batch CNN training step (batch 8 of 3x32x32: Conv2d,
       BatchNorm2d, ReLU, MaxPool2d, Dropout, Linear, cross-entropy,
       backward, Adam); 40 iterations a round, the round's median
       iteration
  lm   a small transformer language model (embedding, two
       nn.TransformerEncoderLayer d=64 4 heads, AdamW): 8 training steps
       then 6 greedy decoding steps a round, the round's wall time
With "torch", inside torch.profiler (CPU, record_shapes, profile_memory),
started before the first round. Prints ms= (the median over rounds 2..N:
the steady state, after the first round's warm-up), cpu_ms= (the
process's CPU time for the same unit, an iteration or a round, median
over rounds 2..N), units= (how many units ran in all: divide the ops a
trace holds by it) and rounds= (each round's figure).
OPP_BENCH_DEVICE=cuda runs the same model on the GPU (scripts/gpu-validate.sh),
each unit ending when the GPU's work has."""
import os
import statistics
import sys
import time

import torch

model = sys.argv[1]
use_torch = len(sys.argv) > 2 and sys.argv[2] == "torch"
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 6
torch.set_num_threads(1)
torch.manual_seed(0)
dev = torch.device(os.environ.get("OPP_BENCH_DEVICE", "cpu"))
sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)


def cnn():
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Dropout(0.25),
        torch.nn.Linear(16 * 8 * 8, 10)).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    x, y = torch.randn(8, 3, 32, 32).to(dev), torch.randint(0, 10, (8,)).to(dev)

    def work():
        times = []
        for _ in range(40):
            t0 = time.perf_counter_ns()
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
            sync()
            times.append(time.perf_counter_ns() - t0)
        return statistics.median(times) / 1e6
    work.units = 40
    return work


def lm():
    vocab, d, seq, batch = 200, 64, 16, 4

    class LM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(vocab, d)
            layer = torch.nn.TransformerEncoderLayer(d, 4, dim_feedforward=128, dropout=0.1,
                                                     batch_first=True)
            self.enc = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = torch.nn.Linear(d, vocab)

        def forward(self, tokens):
            n = tokens.shape[1]
            mask = torch.triu(torch.full((n, n), float("-inf"), device=tokens.device), diagonal=1)
            return self.head(self.enc(self.emb(tokens), mask=mask))

    net = LM().to(dev)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    data = torch.randint(0, vocab, (batch, seq + 1)).to(dev)

    def work():
        t0 = time.perf_counter_ns()
        net.train()
        for _ in range(8):
            opt.zero_grad()
            logits = net(data[:, :-1])
            torch.nn.functional.cross_entropy(logits.reshape(-1, vocab),
                                              data[:, 1:].reshape(-1)).backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            tokens = data[:1, :4]
            for _ in range(6):
                nxt = net(tokens)[:, -1].argmax(-1, keepdim=True)
                tokens = torch.cat([tokens, nxt], 1)
        sync()
        return (time.perf_counter_ns() - t0) / 1e6
    work.units = 1
    return work


work = {"cnn": cnn, "lm": lm}[model]()
prof = None
if use_torch:
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.type == "cuda" else [])
    prof = profile(activities=acts, record_shapes=True, profile_memory=True)
    prof.__enter__()
got, cpu = [], []
for _ in range(rounds):
    c0 = time.process_time_ns()
    got.append(work())
    cpu.append((time.process_time_ns() - c0) / 1e6 / work.units)
if prof is not None:
    prof.__exit__(None, None, None)
print("ms=%.3f cpu_ms=%.3f units=%d rounds=%s" % (
    statistics.median(got[1:] or got), statistics.median(cpu[1:] or cpu), rounds * work.units,
    ",".join("%.3f" % g for g in got)))
