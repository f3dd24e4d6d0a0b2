# Six SGD iterations of a Linear layer, for the torch end-to-end tests of
# schedules. argv: [torch OUT]: with "torch", torch.profiler profiles them
# on its schedule (wait 1, warmup 1, active 2; prof.step() after each
# iteration) and what it says is written to OUT (torch_facts.py: the
# counts). Without, the loop runs as it is (opprof's run: OPPROF_SCHEDULE
# and OPPROF_STEP=torch give the same schedule over the optimizer's steps).
import sys

import torch

prof = None
if len(sys.argv) > 1 and sys.argv[1] == "torch":
    from torch.profiler import ProfilerActivity, profile, schedule

    import torch_facts

    prof = profile(
        activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=2, repeat=1)
    )
    prof.__enter__()

torch.manual_seed(0)
net = torch.nn.Linear(4, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
x = torch.randn(3, 4)
for _ in range(6):
    opt.zero_grad()
    net(x).sum().backward()
    opt.step()
    if prof is not None:
        prof.step()

if prof is not None:
    prof.__exit__(None, None, None)
    torch_facts.write(prof, sys.argv[2])
print("weight %.4f" % float(net.weight.sum()))
