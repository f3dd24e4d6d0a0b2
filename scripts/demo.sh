#!/usr/bin/env bash
# The main job: profile a sample with opprof and show its report. Profiles
# a small CNN on Debian's PyTorch when it is installed (its operators,
# layers and per-inference latency), else a C program calling OpenBLAS.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OPPROF_DEMO_TRACE:-demo.trace}
py=/usr/bin/python3
if [ -x "$py" ] && "$py" -c 'import torch' 2>/dev/null; then
    echo "== opprof run -q -o $out -- $py tests/py/cnn.py"
    build/opprof run -q -o "$out" -- "$py" tests/py/cnn.py
    echo
    echo "== opprof report $out -n 12"
    build/opprof report "$out" -n 12
    echo
    echo "== opprof report $out --tree --depth 5 --min-share 3"
    build/opprof report "$out" --tree --depth 5 --min-share 3
    echo
    echo "== opprof report $out --step"
    build/opprof report "$out" --step
    exit 0
else
    echo "== (no python3-torch: profiling the OpenBLAS sample instead)"
    make -s build/tests/progs/blas_calls
    echo "== opprof run -q -o $out -- build/tests/progs/blas_calls 3"
    build/opprof run -q -o "$out" -- build/tests/progs/blas_calls 3
fi
echo
echo "== opprof report $out --group-by-shape --flops"
build/opprof report "$out" --group-by-shape --flops
