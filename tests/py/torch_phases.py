# Three phases of small torch ops for the `opprof ctl` test: 100 adds and
# 10 subs, then (after DIR/go2 appears) 100 adds and 10 muls, then (after
# DIR/go3) 100 adds and 10 subs; DIR/p1 and DIR/p2 say when a phase is done.
# argv: DIR.
import os
import sys
import time

import torch

d = sys.argv[1]
a = torch.ones(4)


def wait(name):
    while not os.path.exists(os.path.join(d, name)):
        time.sleep(0.01)


def phase(other):
    for _ in range(100):
        torch.add(a, a)
    for _ in range(10):
        other(a, a)


phase(torch.sub)
open(os.path.join(d, "p1"), "w").close()
wait("go2")
phase(torch.mul)
open(os.path.join(d, "p2"), "w").close()
wait("go3")
phase(torch.sub)
