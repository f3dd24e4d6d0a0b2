# opprof's Python side (loaded by sitecustomize.py): once `import torch`
# has finished, give libopprof.so the torch shim that fits this torch (built
# on first use against its headers and cached), and record nn.Module
# forwards through torch's global module hooks. Nothing here runs in a
# program that never imports torch; nothing here may break the program: a
# failure is one line on stderr and opprof keeps its library-level view.
# Only os and sys at start-up: every profiled interpreter loads this file,
# the rest is imported once torch is.
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHIM_SRC = os.path.join(HERE, "shim")  # shim.cpp, pyframes.c, modhooks.c, torch/shim/shim.h, format.h
MODULE_PREFIX = "nn.Module: "


def _say(*what):
    sys.stderr.write("opprof: " + "".join(str(w) for w in what) + "\n")


def _agent():
    """libopprof.so's exports, from the process's global scope."""
    import ctypes
    lib = ctypes.PyDLL(None)  # calls keep the GIL: quicker, and no thread switch in a hook
    f = lib.opprof_torch_attach
    f.argtypes, f.restype = [ctypes.c_char_p], ctypes.c_int
    lib.opprof_torch_name.argtypes = [ctypes.c_char_p]
    lib.opprof_torch_name.restype = ctypes.c_uint32
    lib.opprof_torch_module_enter.argtypes = [ctypes.c_uint32]
    lib.opprof_torch_module_enter.restype = ctypes.c_uint32
    lib.opprof_torch_module_leave.argtypes = [ctypes.c_uint32]
    lib.opprof_torch_module_leave.restype = None
    return lib


# ---- the shim: one per torch install, built once ----

def _torch_paths(torch):
    root = os.path.dirname(os.path.realpath(torch.__file__))
    inc = os.path.join(root, "include")
    return root, [inc, os.path.join(inc, "torch", "csrc", "api", "include")], os.path.join(root, "lib")


def _cache_dir():
    """Where built shims are kept: OPPROF_TORCH_CACHE, else beside us when
    we may write there, else the user's cache folder."""
    if os.environ.get("OPPROF_TORCH_CACHE"):
        return os.environ["OPPROF_TORCH_CACHE"]
    mine = os.path.join(HERE, "cache")
    if os.access(HERE, os.W_OK) or os.path.isdir(mine) and os.access(mine, os.W_OK):
        return mine
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "opprof")


def shim_key(torch):
    """What the shim depends on: torch's version, ABI and install, our sources."""
    import hashlib
    root, _, libdir = _torch_paths(torch)
    h = hashlib.sha256()
    lib = os.path.join(libdir, "libtorch_cpu.so")
    st = os.stat(lib) if os.path.exists(lib) else None
    h.update(repr((torch.__version__, bool(torch._C._GLIBCXX_USE_CXX11_ABI), root,
                   st and (st.st_size, int(st.st_mtime)), sys.version, _python_include())).encode())
    for name in ("shim.cpp", "pyframes.c", "modhooks.c", "torch/shim/shim.h", "format.h"):
        with open(os.path.join(SHIM_SRC, name), "rb") as f:
            h.update(f.read())
    return "torch-%s-%s" % (torch.__version__.replace("+", "_").replace("/", "_"), h.hexdigest()[:12])


def _python_include():
    """This interpreter's headers (internal ones for the frame reader), or None."""
    import sysconfig
    inc = sysconfig.get_paths().get("include")
    return inc if inc and os.path.exists(os.path.join(inc, "internal")) else None


def _run(cmd):
    """None, or the first error line of a compiler run (not profiled: no
    preload, opprof off)."""
    import subprocess
    env = dict(os.environ, OPPROF_DISABLE="1")
    env["LD_PRELOAD"] = " ".join(p for p in env.get("LD_PRELOAD", "").replace(":", " ").split()
                                 if "libopprof" not in os.path.basename(p))
    for k in ("OPPROF_SOCKET", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH"):
        env.pop(k, None)
    try:
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600,
                           env=env)
    except (OSError, subprocess.SubprocessError) as e:
        return "cannot run %s: %s" % (cmd[0], e)
    if r.returncode:
        lines = [l for l in r.stderr.decode(errors="replace").splitlines() if "error" in l]
        return "the shim did not build: %s" % (lines[0] if lines else "%s failed" % cmd[0])
    return None


def build_shim(torch, out):
    """Compile the shim against this torch's headers (and this Python's, for
    the frame reader) into out; None or why not."""
    root, incs, libdir = _torch_paths(torch)
    if not os.path.exists(os.path.join(incs[0], "ATen", "record_function.h")):
        return ("no C++ headers in %s (Debian: install libtorch-dev)" % incs[0])
    cc, cxx = os.environ.get("CC") or "cc", os.environ.get("CXX") or "c++"
    tmp = "%s.%d.tmp" % (out, os.getpid())
    pyinc = _python_include()
    cflags = [cc, "-std=gnu11", "-O2", "-fPIC", "-fvisibility=hidden", "-w", "-DNDEBUG",
              "-I" + SHIM_SRC]
    objs = []
    why = None
    for src in ("pyframes", "modhooks"):  # Python's frames, the module hooks
        obj = "%s.%s.o" % (tmp, src)
        c = ["-c", os.path.join(SHIM_SRC, src + ".c"), "-o", obj]
        why = _run(cflags + (["-I" + pyinc] if pyinc else ["-DOPP_NO_PYTHON"]) + c)
        if why and pyinc:  # an interpreter it does not know: without Python
            why = _run(cflags + ["-DOPP_NO_PYTHON"] + c)
        if why:
            break
        objs.append(obj)
    if not why:
        # Python's symbols come from the interpreter: no --no-undefined
        why = _run([cxx, "-std=c++17", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-w",
                    "-DNDEBUG", "-D_GLIBCXX_USE_CXX11_ABI=%d" % int(bool(torch._C._GLIBCXX_USE_CXX11_ABI)),
                    "-I" + SHIM_SRC] + ["-I" + i for i in incs] + [
                    os.path.join(SHIM_SRC, "shim.cpp")] + objs + ["-L" + libdir,
                    "-Wl,-rpath," + libdir, "-ltorch_cpu", "-lc10", "-o", tmp])
    for obj in objs:
        if os.path.exists(obj):
            os.unlink(obj)
    if why:
        return why
    os.rename(tmp, out)
    return None


def find_shim(torch, quiet=False):
    """The shim's path for this torch (built now if need be), or (None, why)."""
    d = os.path.join(_cache_dir(), shim_key(torch))
    path = os.path.join(d, "libopprof_torch.so")
    if os.path.exists(path):
        return path, None
    import fcntl
    try:
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "lock"), "w") as lk:
            fcntl.flock(lk, fcntl.LOCK_EX)  # another process may be building it
            if os.path.exists(path):
                return path, None
            import time
            t0 = time.monotonic()
            why = build_shim(torch, path)
            if not why and not quiet:
                _say("built the torch shim for torch %s in %.1f s (once; kept in %s)"
                     % (torch.__version__, time.monotonic() - t0, d))
    except OSError as e:
        why = "cannot write %s: %s" % (d, e.strerror)
    return (None, why) if why else (path, None)


# ---- nn.Module layers ----

NAMES_PER_CLASS = 1000  # instances named one by one; later ones share "Class_more"


class _Modules:
    """Global forward hooks: each module call is a range named like torch's
    with_modules ("nn.Module: Linear_0": class name, then the index of the
    instance among those of its class, in the order first called)."""

    def __init__(self, torch, lib):
        import threading
        import weakref
        self.enter, self.leave, self.name = (lib.opprof_torch_module_enter,
                                             lib.opprof_torch_module_leave, lib.opprof_torch_name)
        self.weakref = weakref
        self.ids = {}  # id(module) -> (weakref, name id)
        self.count = {}
        self.open = threading.local()  # per thread: id(module) -> [enter's index, ...]
        self.always_call = False  # the post hook runs when a forward raises (torch >= 2.1)
        comp = getattr(torch, "compiler", None)
        self.is_compiling = getattr(comp, "is_compiling", None)  # None before torch 2.1
        if hasattr(os, "register_at_fork"):  # a forked child's string ids start over
            os.register_at_fork(after_in_child=self.forget)

    def c_call(self, shim, torch_call):
        """nn.Module.__call__ wrapped in C (modhooks.c): torch's own, the
        forward a range around it, with torch's fast path kept (global
        hooks take its slow path, about 1 us a module call); None where the
        shim has no Python."""
        import ctypes
        try:
            f = ctypes.PyDLL(shim).opp_torch_shim_module_call
            f.argtypes = [ctypes.py_object] * 4
            f.restype = ctypes.py_object
            return f(self.ids, self.id_of, self.forget, torch_call)
        except Exception:  # built without Python's headers
            return None

    def c_hooks(self, shim):
        """The shim's hooks in C (modhooks.c): the module and its name id go
        to the agent without ctypes; None where the shim has none."""
        import ctypes
        try:
            f = ctypes.PyDLL(shim).opp_torch_shim_module_hooks
            f.argtypes = [ctypes.py_object] * 4 + [ctypes.c_int]
            f.restype = ctypes.py_object
            return f(self.ids, self.id_of, self.forget, self.is_compiling, self.always_call)
        except Exception:  # built without Python's headers
            return None

    def forget(self):
        self.ids.clear()
        self.count.clear()
        self.open = __import__("threading").local()

    def id_of(self, mod):
        key = id(mod)
        e = self.ids.get(key)
        if e is not None and e[0]() is mod:
            return e[1]
        cls = type(mod).__name__
        n = self.count.get(cls, 0)
        self.count[cls] = n + 1
        label = "%s%s_%s" % (MODULE_PREFIX, cls, n if n < NAMES_PER_CLASS else "more")
        sid = self.name(label.encode())
        try:
            ref = self.weakref.ref(mod, lambda r, k=key: self.ids.pop(k, None))
        except TypeError:
            ref = lambda: mod  # noqa: E731
        self.ids[key] = (ref, sid)
        return sid

    def pre(self, mod, inputs):
        if self.is_compiling and self.is_compiling():  # traced by torch.compile: no call out of Python
            return
        opened = self.open.__dict__.setdefault("d", {}).setdefault(id(mod), [])
        if opened and not self.always_call:
            # before torch 2.1 a forward that raised never ran its post hook:
            # its range (and what it left open) ends here (a module that
            # calls itself is taken for one that raised)
            self.leave(opened[0])
            del opened[:]
        opened.append(self.enter(self.id_of(mod)))

    def post(self, mod, inputs, output):
        if self.is_compiling and self.is_compiling():
            return
        st = self.open.__dict__.get("d", {}).get(id(mod))
        if st:
            self.leave(st.pop())  # and whatever a forward that raised left open


def attach(torch):
    try:
        lib = _agent()
    except Exception:
        return  # not under opprof (or an older libopprof.so, or no ctypes)
    try:
        path, why = find_shim(torch)
        if why:
            _say("torch operators not recorded: ", why, "; library calls only")
            lib.opprof_torch_attach(None)  # the agent drops what needed them
            return
        if lib.opprof_torch_attach(path.encode()):  # says why
            return
        m = _Modules(torch, lib)
        import inspect
        from torch.nn.modules import module as tm
        # Before torch 2 (no torch.compile, which traces Module.__call__'s
        # Python code and would stop its graph at a builtin there): the
        # module calls through a wrapped __call__
        if int(torch.__version__.split(".")[0]) < 2:
            call = m.c_call(path, tm.Module.__call__)
            if call is not None:
                tm.Module.__call__ = call
                return
        # torch >= 2.1: the end is seen when a forward raises too
        m.always_call = "always_call" in inspect.signature(tm.register_module_forward_hook).parameters
        pre, post = m.c_hooks(path) or (m.pre, m.post)
        tm.register_module_forward_pre_hook(pre)
        if m.always_call:
            tm.register_module_forward_hook(post, always_call=True)
        else:
            tm.register_module_forward_hook(post)
    except Exception as e:  # never the program's problem
        _say("torch operators not recorded: ", type(e).__name__, ": ", e, "; library calls only")


# ---- waiting for `import torch` ----

class _Finder:
    """Finds nothing itself: when torch is being imported, wraps the real
    loader so attach() runs once torch's own import has finished. It stays
    until then: a program may only ask where torch is first
    (importlib.util.find_spec), which imports nothing."""

    def __init__(self):
        self.busy = False

    def find_spec(self, name, path=None, target=None):
        if name != "torch" or self.busy:
            return None
        import importlib.util
        self.busy = True  # the lookup below asks the finders again
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        real, finder = spec.loader.exec_module, self

        def exec_module(module):
            real(module)
            if getattr(module, "__name__", None) == "torch" and finder in sys.meta_path:
                sys.meta_path.remove(finder)
                attach(module)

        spec.loader.exec_module = exec_module
        return spec


def install():
    if os.environ.get("OPPROF_TORCH") != "0" and sys.version_info >= (3, 4):
        sys.meta_path.insert(0, _Finder())


if __name__ == "__main__":  # `python3 _opprof_torch.py build`: the shim, now
    import torch  # noqa: E402
    p, why = find_shim(torch, quiet=True)
    print(p or why)
    sys.exit(0 if p else 1)
