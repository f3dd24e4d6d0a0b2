# opprof: libopprof.so puts this folder first on PYTHONPATH of a Python
# interpreter it is loaded into. Here the program's environment and
# sys.path are put back as they were, the program's own sitecustomize (if
# any) runs, and a finder waits for `import torch` (_opprof_torch.py).
import os
import sys


def _opprof_restore():
    here = os.path.dirname(os.path.abspath(__file__))
    old = os.environ.pop("OPPROF_PYTHONPATH", None)
    if os.environ.pop("OPPROF_PYTHONPATH_UNSET", None):
        os.environ.pop("PYTHONPATH", None)
    elif old is not None:
        os.environ["PYTHONPATH"] = old
    for i, p in enumerate(sys.path):
        if p and os.path.abspath(p) == here:
            del sys.path[i]
            break
    return here


sys.path.insert(0, _opprof_restore())
try:
    import _opprof_torch
finally:
    del sys.path[0]
_opprof_torch.install()
del sys.modules["sitecustomize"]
import sitecustomize  # noqa: E402,F401 (the program's own, if it has one)
