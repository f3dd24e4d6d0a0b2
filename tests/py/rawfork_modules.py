# A module called, then a fork by the system call itself (no atfork
# handler runs: Python's os.register_at_fork neither): the child calls ops,
# a new module and the first one again, then leaves; the parent waits.
import ctypes, os, sys
import torch

class A(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
    def forward(self, x):
        return self.lin(x)

class B(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)

a, b = A(), B()
x = torch.ones(2, 4)
a(x)
libc = ctypes.CDLL(None, use_errno=True)
pid = libc.syscall(57)  # SYS_fork: no atfork handler runs
if pid == 0:
    for _ in range(3):
        torch.add(x, x)
    b(x)
    a(x)
    sys.stdout.flush()
    os._exit(0)
os.waitpid(pid, 0)
print("done")
