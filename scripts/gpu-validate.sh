#!/usr/bin/env bash
# GPU validation, for a machine with an NVIDIA GPU and PyTorch (CUDA).
#
#   scripts/gpu-validate.sh pack [DIR]      on a machine with the CUDA
#       toolkit and opprof's build dependencies: build opprof and the CUDA
#       test programs into DIR (default build/gpu-pack), for a GPU machine
#       that has neither (copy the checkout with DIR in it)
#   scripts/gpu-validate.sh [PYTHON]        on the GPU machine: use
#       build/gpu-pack when it is there, else build here (nvcc, cupti.h and
#       uthash.h must be found, or it stops and says which is missing)
#
# It profiles (a) a static-cudart program with known work, (b) CUPTI's
# lifecycle: kernels at a normal exit, before _exit, before SIGKILL, in a
# forked child; (c) ResNet-style PyTorch training steps compared with
# torch.profiler (kernel count, kernel time, top kernels, copy bytes,
# overhead over ROUNDS interleaved runs, default 3); (d) torch.profiler
# inside a process opprof profiles; (c3) the training script in summary mode
# against its full trace; (e) make bench's LM and CNN steps on the GPU,
# per op, unprofiled, opprof (full, OPPROF_TORCH=0, summary) and
# torch.profiler. Output goes to stdout; commit it under docs/validation/.
set -uo pipefail
cd "$(dirname "$0")/.."
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC_ARCH=(-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90
           -gencode arch=compute_90,code=compute_90)
die() { echo "gpu-validate: $*" >&2; exit 1; }

build() { # DIR: opprof with CUDA, and the test programs
    local d=$1 nvcc=$CUDA_HOME/bin/nvcc
    [ -x "$nvcc" ] || nvcc=$(command -v nvcc) || die "no nvcc in $CUDA_HOME/bin or on PATH (set CUDA_HOME)"
    local home; home=$(cd "$(dirname "$nvcc")/.." && pwd)
    [ -e "$home/include/cupti.h" ] || [ -e "$home/extras/CUPTI/include/cupti.h" ] ||
        die "no cupti.h under $home/include or $home/extras/CUPTI/include: opprof would build without CUDA"
    printf '#include <uthash.h>\n' | ${CC:-gcc} ${OPP_EXTRA_CFLAGS:-} -E -x c - >/dev/null 2>&1 ||
        die "uthash.h not found (Debian: uthash-dev; else OPP_EXTRA_CFLAGS=-I<dir with uthash.h>, or pack elsewhere)"
    make -j"$(nproc)" BUILD="$d" CUDA_HOME="$home" WERROR=0 HAVE_SQLITE= HAVE_NCURSES= EXTRA_CFLAGS="${OPP_EXTRA_CFLAGS:-}" \
        all >"$d.log" 2>&1 || { tail -20 "$d.log"; die "the build failed (log: $d.log)"; }
    grep -q "CUDA parts are off" "$d.log" && die "opprof built without CUDA (see $d.log)"
    mkdir -p "$d/gpu"
    for p in known lifecycle; do
        "$nvcc" -O2 "${NVCC_ARCH[@]}" -o "$d/gpu/$p" "tests/gpu/$p.cu" || die "nvcc failed on tests/gpu/$p.cu"
    done
    "$nvcc" -O2 "${NVCC_ARCH[@]}" -cudart shared -o "$d/gpu/lifecycle_shared" tests/gpu/lifecycle.cu ||
        die "nvcc failed on tests/gpu/lifecycle.cu (shared cudart)"
}

if [ "${1:-}" = pack ]; then
    d=${2:-build/gpu-pack}; mkdir -p "$d"; build "$d"; echo "packed into $d"; exit 0
fi
py=${1:-python3}
B=build/gpu-pack
out=$(mktemp -d)
echo "== machine"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -2
$py -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
echo "== build"
if [ -x "$B/opprof" ] && [ -x "$B/gpu/known" ] && [ -x "$B/gpu/lifecycle_shared" ]; then
    echo "using the pack in $B (git $(git log -1 --format=%h 2>/dev/null))"
else
    mkdir -p "$B"; build "$B"; echo "built into $B"
fi
O=$B/opprof
# The agent opens libcupti.so.13 by name, then under the CUDA_HOME it was
# built with; where neither finds one, point it at the machine's.
if ! ldconfig -p | grep -q 'libcupti\.so\.13' && [ ! -e "$CUDA_HOME/lib64/libcupti.so.13" ] &&
   [ ! -e "$CUDA_HOME/extras/CUPTI/lib64/libcupti.so.13" ]; then
    c=$(find / -xdev -name 'libcupti.so.13*' -not -path '/proc/*' 2>/dev/null | head -1)
    [ -n "$c" ] || die "no libcupti.so.13 on this machine"
    export OPPROF_CUPTI=$c; echo "OPPROF_CUPTI=$c"
fi

# count JSON NAME...: kernels per name prefix in a JSON report
count() {
    $py - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cuda = [r for r in d["rows"] if r.get("device_type") == "CUDA"]
print(" ".join(str(sum(r["count"] for r in cuda if r["key"].startswith(p))) for p in sys.argv[2:]))
PY
}

echo "== (a) static cudart program with known work"
"$O" run -q -o "$out/known.trace" -- "$B/gpu/known"
"$O" report "$out/known.trace" --limit 20
"$O" report "$out/known.trace" --gpu
"$O" report -f json "$out/known.trace" > "$out/known.json"
ok=1
read -r -a got < <(count "$out/known.json" "scale(" "add(" "Memcpy HtoD" "Memcpy DtoH" "Memset")
want=(10 5 2 1 1); names=(scale add "Memcpy HtoD" "Memcpy DtoH" Memset)
for i in 0 1 2 3 4; do
    r=ok; [ "${got[$i]:-0}" = "${want[$i]}" ] || { r=MISMATCH; ok=0; }
    printf '%-12s want %2d got %2s %s\n' "${names[$i]}" "${want[$i]}" "${got[$i]:-0}" $r
done
echo "(a) known work: $([ $ok = 1 ] && echo PASS || echo FAIL)"

echo "== (b) CUPTI's lifecycle: tick kernels recorded at each way of ending"
# static cudart (CUPTI starts by injection at the first call), then the
# shared one (CUPTI starts at the program's start; a fork child starts it
# again at its first call's entry)
for prog in lifecycle lifecycle_shared; do
    modes="exit _exit kill fork fork_launch"; [ $prog = lifecycle_shared ] && modes="exit fork fork_launch"
    for m in $modes; do
        w=6; case $m in fork*) w=12;; esac
        "$O" run -q -o "$out/life_$m.trace" -- "$B/gpu/$prog" $m >"$out/life_$m.out" 2>&1
        "$O" report -f json "$out/life_$m.trace" >"$out/life_$m.json" 2>"$out/life_$m.err"
        g=$(count "$out/life_$m.json" "tick(" 2>/dev/null || echo "no report")
        printf '%-17s %-12s want %2d got %s %s\n' $prog $m $w "$g" "$([ "$g" = $w ] && echo ok || echo MISMATCH)"
        grep -h opprof "$out/life_$m.out" "$out/life_$m.err" | head -3 | sed 's/^/    /'
    done
done

echo "== (c) PyTorch training steps: unprofiled, opprof, torch.profiler (${ROUNDS:=3} rounds, interleaved)"
# The first opprof run builds the torch shim for this torch: not timed.
"$O" run -q -o "$out/warm.trace" -- $py -c 'import torch' 2>&1 | tail -2
for r in $(seq "$ROUNDS"); do
    $py tests/gpu/train.py | tail -1 >>"$out/plain.txt"
    "$O" run -q -o "$out/train.trace" -- $py tests/gpu/train.py 2>"$out/opprof.err" | tail -1 >>"$out/opprof.txt"
    OPPROF_TORCH=0 "$O" run -q -o "$out/lib.trace" -- $py tests/gpu/train.py 2>/dev/null | tail -1 >>"$out/lib.txt"
    "$O" run -q --mode summary -o "$out/sum.trace" -- $py tests/gpu/train.py 2>"$out/sum.err" | tail -1 >>"$out/sum.txt"
    $py tests/gpu/train.py --torch | tail -1 >>"$out/torch.json"
done
cat "$out/opprof.err"
# Only the 20 measured steps, as torch.profiler sees them: the program marks
# them with cudaProfilerStart/Stop and opprof records only in between.
OPPROF_CAPTURE=cudaProfilerApi "$O" run -q -o "$out/train_win.trace" -- $py tests/gpu/train.py --range
"$O" report -f json "$out/train_win.trace" > "$out/train_win.json"
"$O" report "$out/train.trace" --sort self_cuda_time_total --limit 15
"$O" report "$out/train.trace" --gpu
"$O" report -f json "$out/train.trace" > "$out/train.json"
$py - "$out" <<'PY'
import json, statistics, sys
d = sys.argv[1]
walls = lambda f: [float(l.split()[-1]) for l in open(d + f) if l.strip()]
plain, mine = statistics.median(walls("/plain.txt")), statistics.median(walls("/opprof.txt"))
runs = [json.loads(l) for l in open(d + "/torch.json") if l.strip()]
t = runs[-1]
tw = statistics.median(x["wall_s"] for x in runs)
print("walls (s): plain %s, opprof %s, opprof without torch operators (OPPROF_TORCH=0) %s, opprof --mode summary %s, "
      "torch.profiler %s" % (walls("/plain.txt"), walls("/opprof.txt"), walls("/lib.txt"), walls("/sum.txt"),
                             [round(x["wall_s"], 4) for x in runs]))
# a mode whose runs all failed is said, and the comparison below still made
over = lambda f: "%.1f%%" % (100 * (statistics.median(walls(f)) / plain - 1)) if walls(f) else "no run finished"
print("overhead of opprof without torch operators: %s" % over("/lib.txt"))
print("overhead of opprof --mode summary: %s" % over("/sum.txt"))
def gpu_rows(path):
    rows = [x for x in json.load(open(path))["rows"] if x.get("device_type") == "CUDA"]
    return rows, [x for x in rows if not x["key"].startswith(("Memcpy", "Memset"))]
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
print("%-28s %14.1f %14.1f  (%+.2f%%)" % ("kernel time us", us, t["kernel_us"],
      100 * (us / t["kernel_us"] - 1) if t["kernel_us"] else 0))
print("%-28s %14.0f %14d" % ("memcpy bytes", cp, t["memcpy_bytes"]))
print("%-28s %14.1f %14.1f" % ("overhead vs unprofiled %", 100 * (mine / plain - 1), 100 * (tw / plain - 1)))
# The operators of the 20 steps: torch.profiler's key_averages counts
# against opprof's rows of the same names (torch's own, and the CUDA
# runtime calls torch.profiler lists too)
mine_ops = {}
for x in json.load(open(d + "/train_win.json"))["rows"]:
    if x.get("device_type", "CPU") == "CPU":
        mine_ops[x["key"]] = mine_ops.get(x["key"], 0) + x["count"]
theirs = t.get("ops", {})
both = sorted(set(theirs) & set(mine_ops))
differ = [k for k in both if theirs[k] != mine_ops[k]]
print("operators: torch.profiler %d names (%d calls), opprof %d names; %d names in both, %d counted the same"
      % (len(theirs), sum(theirs.values()), len(mine_ops), len(both), len(both) - len(differ)))
for k in sorted(differ, key=lambda k: -abs(theirs[k] - mine_ops[k]))[:15]:
    print("  differ: %-60s torch.profiler %6d opprof %6d" % (k[:60], theirs[k], mine_ops[k]))
for k in sorted(set(theirs) - set(mine_ops), key=lambda k: -theirs[k])[:10]:
    print("  only torch.profiler: %-50s %6d" % (k[:50], theirs[k]))
for k in sorted(set(mine_ops) - set(theirs), key=lambda k: -mine_ops[k])[:10]:
    print("  only opprof: %-58s %6d" % (k[:58], mine_ops[k]))
print("top 10 kernels (torch.profiler):")
for name, dur in t["top"]:
    print("  %10.1f us  %s" % (dur, name[:100]))
print("top 10 kernels (opprof):")
for x in sorted(kern, key=lambda x: -x["cuda_time_total"])[:10]:
    print("  %10.1f us  %s" % (x["cuda_time_total"] * f, x["key"][:100]))
PY
echo "== (c2) tensor libraries, tree, exports of the training trace"
"$O" report "$out/train.trace" --lib cublas --group-by-shape --flops --limit 10
"$O" report -f json "$out/train.trace" --lib cublas >"$out/cublas.json"
$py - "$out/cublas.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    if r["key"].startswith("cublas") and r["count"]:
        print("%-24s calls %5d  CUDA total %12.1f us (the kernels its calls launched)" % (r["key"], r["count"], r["cuda_time_total"]))
PY
"$O" report "$out/train.trace" --lib cudnn --group-by-shape --flops --limit 10
"$O" report "$out/train.trace" --tree --depth 3 --min-share 1
"$O" export chrome "$out/train.trace" -o "$out/train.chrome.json" && \
    $py tests/py/chrome_summary.py "$out/train.chrome.json" | grep -v '^op \|^dims ' | head -20
# One clock: each kernel starts after its launch began (the arrow's two ends).
$py - "$out/train.chrome.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
s = {e["id"]: e["ts"] for e in ev if e.get("ph") == "s" and e.get("cat") == "ac2g"}
lag = sorted(e["ts"] - s[e["id"]] for e in ev if e.get("ph") == "f" and e.get("cat") == "ac2g" and e["id"] in s)
if lag:
    print("launch -> GPU work: %d arrows, %d start before their launch (clock), lag min %.1f us, median %.1f us, max %.1f us"
          % (len(lag), sum(x < 0 for x in lag), lag[0], lag[len(lag) // 2], lag[-1]))
PY
"$O" export memory "$out/train.trace" -o "$out/mem.json" && head -c 300 "$out/mem.json"; echo

echo "== (c3) summary mode: the training script under --mode summary against the full trace of (c)"
# Two runs of the same steps: the same operators and kernels, counted per
# name; and opprof summarize of the full trace reports as that trace does.
cat "$out/sum.err"
"$O" report -f json "$out/sum.trace" >"$out/sum.json"
$py - "$out/train.json" "$out/sum.json" "$out/train.trace" "$out/sum.trace" <<'PY'
import json, os, sys
f, s = (json.load(open(p)) for p in sys.argv[1:3])
for kind in ("CPU", "CUDA"):
    a, b = ({r["key"]: r["count"] for r in d["rows"] if r.get("device_type", "CPU") == kind} for d in (f, s))
    diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    print("%-4s rows: full %d names, %d calls; summary %d names, %d calls; %d names counted differently%s" %
          (kind, len(a), sum(a.values()), len(b), sum(b.values()), len(diff),
           "".join("\n    %s: full %s, summary %s" % (k[:80], a.get(k), b.get(k)) for k in diff[:10])))
print("Self CUDA time total (us): full %.1f, summary %.1f (%+.2f%%)" % (f["self_cuda_time_total"], s["self_cuda_time_total"],
      100 * (s["self_cuda_time_total"] / f["self_cuda_time_total"] - 1) if f["self_cuda_time_total"] else 0))
print("summary_lost: %s; dropped: full %s, summary %s" % (s.get("summary_lost"), f.get("dropped"), s.get("dropped")))
print("trace sizes (bytes): full %d, summary %d" % tuple(os.path.getsize(p) for p in sys.argv[3:5]))
PY
"$O" summarize "$out/train.trace" -o "$out/train.sum.trace"
for v in "" --tree; do
    "$O" report "$out/train.trace" $v >"$out/full.txt" 2>&1; "$O" report "$out/train.sum.trace" $v >"$out/fs.txt" 2>&1
    if cmp -s "$out/full.txt" "$out/fs.txt"; then echo "report ${v:-(table)} of the full trace and of its summarize: identical ($(wc -l <"$out/full.txt") lines)"
    else echo "report ${v:-(table)} of the full trace and of its summarize: DIFFER"; diff "$out/full.txt" "$out/fs.txt" | head -20; fi
done
"$O" report "$out/sum.trace" --sort self_cuda_time_total --limit 10
"$O" advise "$out/sum.trace" | head -40

echo "== (d) torch.profiler inside a process opprof profiles (opprof hands CUPTI over)"
# torch.profiler alone saw the kernels printed under (c); inside an opprof
# run it must see the same. Then 2 steps after it stopped: with Kineto's
# TEARDOWN_CUPTI=1 it lets go of CUPTI and opprof records them again.
for td in 0 1; do
    TEARDOWN_CUPTI=$td "$O" run -q -o "$out/both.trace" -- $py tests/gpu/train.py --torch --after >"$out/both.txt" 2>"$out/both.err"
    echo "TEARDOWN_CUPTI=$td: exit $?; opprof's lines on stderr:"; grep '^opprof' "$out/both.err" | head -5 | sed 's/^/    /'
    "$O" report -f json "$out/both.trace" >"$out/both.json" 2>"$out/both.rep.err"
    sed 's/^/    report: /' "$out/both.rep.err" | head -3
    $py - "$out" <<'PY'
import json, sys
d = sys.argv[1]
t = json.loads(open(d + "/both.txt").read().strip().splitlines()[-1])
r = json.load(open(d + "/both.json"))
k = [x for x in r["rows"] if x.get("device_type") == "CUDA" and not x["key"].startswith(("Memcpy", "Memset"))]
g = r.get("gpu") or {}
print("    torch.profiler saw %d kernels (20 steps); opprof saw %d (2 warm-up steps, then 2 after if taken back), "
      "CUPTI handed over %s, taken back %s" % (t["kernels"], sum(x["count"] for x in k), g.get("cupti_yielded"), g.get("cupti_retaken")))
PY
done
echo "== (e) per-op cost on the GPU: bench/torch_models.py on cuda, modes interleaved (${ROUNDS} rounds)"
# make bench's model shapes, launch-bound on a GPU: each unit (an LM round,
# a CNN iteration) ends when the GPU's work has; ms a unit is the median of
# rounds 2-6 of a run. Per op: the added time over the torch operators
# opprof's full trace holds a unit (lib: OPPROF_TORCH=0, the CUDA side
# alone, over the same count).
for model in ${GPU_MODELS:-lm cnn}; do
    for r in $(seq "$ROUNDS"); do
        for mode in plain opprof lib summary torch; do
            case $mode in
            plain) cmd=($py bench/torch_models.py "$model" x 6) ;;
            opprof) cmd=("$O" run -q -o "$out/m.trace" -- $py bench/torch_models.py "$model" x 6) ;;
            lib) cmd=(env OPPROF_TORCH=0 "$O" run -q -o "$out/ml.trace" -- $py bench/torch_models.py "$model" x 6) ;;
            summary) cmd=("$O" run -q --mode summary -o "$out/ms.trace" -- $py bench/torch_models.py "$model" x 6) ;;
            torch) cmd=($py bench/torch_models.py "$model" torch 6) ;;
            esac
            OPP_BENCH_DEVICE=cuda "${cmd[@]}" 2>>"$out/m.err" | grep '^ms=' | sed "s/^/$mode /" >>"$out/m_$model.txt"
        done
    done
    units=$(grep '^opprof ' "$out/m_$model.txt" | tail -1 | sed 's/.*units=\([0-9]*\).*/\1/')
    ops=$("$O" report "$out/m.trace" --lib torch -f csv 2>/dev/null | awk -F, 'NR > 1 { n += $3 } END { print n + 0 }')
    $py - "$out/m_$model.txt" "$model" "$ops" "$units" <<'PY'
import statistics, sys
path, model, ops, units = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4] or 1)
ms = {}
for line in open(path):
    mode, f = line.split(" ", 1)
    ms.setdefault(mode, []).append(float(f.split()[0][3:]))
med = {m: statistics.median(v) for m, v in ms.items()}
per = ops / units
print("%s: %.1f torch ops a unit; ms a unit (medians): %s" % (model, per, ", ".join("%s %.3f" % kv for kv in med.items())))
for m in ("opprof", "lib", "summary", "torch"):
    if m in med and per:
        print("  %-8s +%.0f ns an op (%.2fx unprofiled)" % (m, (med[m] - med["plain"]) * 1e6 / per, med[m] / med["plain"]))
if "torch" in med and med["torch"] > med["plain"]:
    print("  opprof's added time / torch.profiler's: %.2f" % ((med["opprof"] - med["plain"]) / (med["torch"] - med["plain"])))
PY
done
grep -v 'trace written to' "$out/m.err" | sort | uniq -c | head -5
echo "== done"
