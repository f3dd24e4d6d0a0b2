# TorchScript's fork and wait for the torch end-to-end tests: a scripted
# function forks three calls onto torch's inter-op threads and waits for
# them, 5 times. Each wait finds its call still running, so the
# interpreter goes on with the rest of the function on an inter-op thread
# when the call is done: the function's operator ends on another thread
# than the one it began on. argv: [torch OUT]: with "torch", the calls are
# profiled by torch.profiler and its key_averages are written to OUT
# (torch_facts.py). The script leaves by os._exit (below).
import os
import sys
import time

import torch


@torch.jit.script
def work(x):
    for _ in range(16):
        x = torch.mm(x, x)
        x = x / x.norm()
    return x


@torch.jit.script
def par(x):
    futs = [torch.jit.fork(work, x) for _ in range(3)]
    return [torch.jit.wait(f) for f in futs]


torch.manual_seed(0)
x = torch.rand(128, 128)
prof = None
if len(sys.argv) > 1 and sys.argv[1] == "torch":
    from torch.profiler import ProfilerActivity, profile

    import torch_facts

    prof = profile(activities=[ProfilerActivity.CPU])
    prof.__enter__()
s = 0.0
for _ in range(5):
    s += sum(float(r.sum()) for r in par(x))
# The last par's end comes on an inter-op thread after its future woke
# this one, which may be done with its own ops by then (1 run in 6 on a
# loaded machine). An op of this thread's once that end has surely come
# closes the par there (opprof's exit handler would, but os._exit runs
# none; torch.profiler too then counts 4 or 5).
time.sleep(0.2)
s += float(torch.zeros(1))
print("%.4f" % s)
if prof:
    prof.__exit__(None, None, None)
    torch_facts.write(prof, sys.argv[2])
# An inter-op thread may still be dropping the last reference to a
# tensor that has a Python object when the interpreter finalizes: torch
# 1.13 then aborts ("terminate called without an active exception", from
# its thread's PyEval_AcquireThread): 2 runs of 60 with no profiler on a
# loaded machine, and more often under a RecordFunction listener, whose
# callbacks widen the window (torch.profiler: about half the runs). So the
# script leaves without finalizing.
sys.stdout.flush()
os._exit(0)
