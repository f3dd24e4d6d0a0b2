#!/usr/bin/env bash
# GPU validation, for a machine with an NVIDIA GPU, nvcc and PyTorch (CUDA):
# builds opprof, profiles (a) a static-cudart CUDA program with known work
# and (b) ResNet-style PyTorch training steps, and compares (b) with
# torch.profiler: kernel count, total kernel time, top 10 kernels, copy
# bytes, and wall-time overhead against an unprofiled run. Output goes to
# stdout; commit it under docs/validation/.
#   scripts/gpu-validate.sh [PYTHON]
set -uo pipefail
cd "$(dirname "$0")/.."
py=${1:-python3}
out=$(mktemp -d)
echo "== machine"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -2
nvcc --version | tail -1; $py -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
echo "== build"
# A machine without Debian's uthash-dev: OPP_EXTRA_CFLAGS=-I<dir with uthash.h>
make -j"$(nproc)" all EXTRA_CFLAGS="${OPP_EXTRA_CFLAGS:-}" 2>&1 | tail -3 || exit 1
O=build/opprof

echo "== (a) static cudart program with known work"
nvcc -O2 -o "$out/known" tests/gpu/known.cu || exit 1
"$O" run -q -o "$out/known.trace" -- "$out/known"
"$O" report "$out/known.trace" --limit 20
"$O" report "$out/known.trace" --gpu
"$O" report -f json "$out/known.trace" > "$out/known.json"
$py - "$out/known.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cuda = {r["key"]: r for r in d["rows"] if r.get("device_type") == "CUDA"}
def count(prefix): return sum(r["count"] for k, r in cuda.items() if k.startswith(prefix))
want = {"scale(": 10, "add(": 5, "Memcpy HtoD": 2, "Memcpy DtoH": 1, "Memset": 1}
ok = True
for k, n in want.items():
    got = count(k); ok &= got == n
    print("%-12s want %2d got %2d %s" % (k, n, got, "ok" if got == n else "MISMATCH"))
print("(a) known work:", "PASS" if ok else "FAIL")
PY

echo "== (b) PyTorch training steps: unprofiled, opprof, torch.profiler"
$py tests/gpu/train.py | tee "$out/plain.txt"
"$O" run -q -o "$out/train.trace" -- $py tests/gpu/train.py | tee "$out/opprof.txt"
# Only the 20 measured steps, as torch.profiler sees them: the program marks
# them with cudaProfilerStart/Stop and opprof records only in between.
OPPROF_CAPTURE=cudaProfilerApi "$O" run -q -o "$out/train_win.trace" -- $py tests/gpu/train.py --range
"$O" report -f json "$out/train_win.trace" > "$out/train_win.json"
$py tests/gpu/train.py --torch | tee "$out/torch.json"
"$O" report "$out/train.trace" --sort self_cuda_time_total --limit 15
"$O" report "$out/train.trace" --gpu
"$O" report -f json "$out/train.trace" > "$out/train.json"
$py - "$out" <<'PY'
import json, sys
d = sys.argv[1]
plain = float(open(d + "/plain.txt").read().split()[-1])
mine_wall = float(open(d + "/opprof.txt").read().split()[-1])
t = json.loads(open(d + "/torch.json").read().strip().splitlines()[-1])
def gpu_rows(path):
    rows = [x for x in json.load(open(path))["rows"] if x.get("device_type") == "CUDA"]
    return rows, [x for x in rows if not x["key"].startswith(("Memcpy", "Memset"))]
# The windowed run (cudaProfilerStart/Stop around the 20 steps) is compared
# as it is; should it hold no kernels, the whole run (2 warm-up steps too)
# is scaled to 20 steps instead, and this says so.
rows, kern = gpu_rows(d + "/train_win.json")
f = 1.0
if not kern:
    print("the cudaProfilerApi window recorded no kernels: comparing the whole run scaled by 20/22")
    rows, kern = gpu_rows(d + "/train.json")
    f = 20 / 22
else:
    print("opprof: the 20 steps between cudaProfilerStart and cudaProfilerStop, as recorded")
n = sum(x["count"] for x in kern) * f
us = sum(x["cuda_time_total"] for x in kern) * f
cp = sum(x.get("bytes", 0) for x in rows if x["key"].startswith("Memcpy")) * f
print("%-28s %14s %14s" % ("", "opprof", "torch.profiler"))
print("%-28s %14.0f %14d" % ("kernels (20 steps)", n, t["kernels"]))
print("%-28s %14.1f %14.1f  (%.2f%%)" % ("kernel time us", us, t["kernel_us"], 100 * (us / t["kernel_us"] - 1)))
print("%-28s %14.0f %14d" % ("memcpy bytes", cp, t["memcpy_bytes"]))
print("%-28s %14.1f %14.1f" % ("overhead vs unprofiled %", 100 * (mine_wall / plain - 1), 100 * (t["wall_s"] / plain - 1)))
print("top 10 kernels (torch.profiler):")
for name, dur in t["top"]:
    print("  %10.1f us  %s" % (dur, name[:100]))
print("top 10 kernels (opprof):")
for x in sorted(kern, key=lambda x: -x["cuda_time_total"])[:10]:
    print("  %10.1f us  %s" % (x["cuda_time_total"] * f, x["key"][:100]))
PY
echo "== (c) tensor libraries, tree, exports of the training trace"
"$O" report "$out/train.trace" --lib cublas --group-by-shape --flops --limit 10
"$O" report "$out/train.trace" --lib cudnn --group-by-shape --flops --limit 10
"$O" report "$out/train.trace" --tree --depth 3 --min-share 1
"$O" export chrome "$out/train.trace" -o "$out/train.chrome.json" && \
    $py tests/py/chrome_summary.py "$out/train.chrome.json" | grep -v '^op \|^dims ' | head -20
"$O" export memory "$out/train.trace" -o "$out/mem.json" && head -c 300 "$out/mem.json"; echo
echo "== done"
