"""make bench: the cost of one small torch op (torch.add on 4-element
tensors) in a loop, as thread CPU time and wall time per op. argv: N
[torch]: with "torch", inside torch.profiler (record_shapes, profile_memory).
Prints ns_per_op= cpu_ns_per_op=."""
import sys
import time

import torch

n = int(sys.argv[1])
torch.set_num_threads(1)
a, b = torch.ones(4), torch.ones(4)
for _ in range(5000):  # warm: first calls, allocator, the shim's strings
    torch.add(a, b)
prof = None
if len(sys.argv) > 2 and sys.argv[2] == "torch":
    from torch.profiler import ProfilerActivity, profile
    prof = profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True)
    prof.__enter__()
w0, c0 = time.perf_counter_ns(), time.thread_time_ns()
for _ in range(n):
    torch.add(a, b)
w1, c1 = time.perf_counter_ns(), time.thread_time_ns()
if prof is not None:
    prof.__exit__(None, None, None)
print("ns_per_op=%.1f cpu_ns_per_op=%.1f" % ((w1 - w0) / n, (c1 - c0) / n))
