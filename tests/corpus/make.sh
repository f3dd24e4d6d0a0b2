#!/bin/sh
# Records the corpus's traces (tests/corpus/traces/) again from the build:
# tests/corpus/make.sh [BUILD] (default build/, made by `make -j2 all
# test-build`). The corpus test (tests/e2e/test_corpus.c) reads the
# committed traces, never these runs: a new recording changes pids, times
# and hosts, so re-record the expected outputs after it (make corpus-update)
# and commit both. Needs /usr/bin/python3 with torch and the CUDA test
# double (a build with the CUDA toolkit).
set -eu
cd "$(dirname "$0")/../.."
B=${1:-build} # as given: the programs' command lines in the traces say it
ABS=$(cd "$B" && pwd)
OUT=tests/corpus/traces
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for f in "$B/opprof" "$B/tests/progs/blas_calls" "$B/tests/double/gpu_app" "$B/tests/double/blas_app"; do
    [ -x "$f" ] || { echo "make.sh: $f is not built (make -j2 all test-build)" >&2; exit 1; }
done
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "make.sh: /usr/bin/python3 has no torch" >&2; exit 1; }

# NAME [VAR=VALUE...] -- PROGRAM ARGS: one run of opprof into $T/NAME.trace;
# the program's own output and exit code are not the corpus's.
rec() {
    name=$1
    shift
    env OPPROF_CUPTI="$ABS/tests/double/libcudart.so.13" "$@" >/dev/null 2>"$T/$name.err" || true
    [ -s "$T/$name.trace" ] || { cat "$T/$name.err" >&2; echo "make.sh: no $name.trace" >&2; exit 1; }
}
run() { name=$1; shift; rec "$name" "$B/opprof" run -q -o "$T/$name.trace" -- "$@"; }

P=$B/tests/progs
run blas "$P/blas_calls" 1                                    # cblas and Fortran BLAS, one process
run threads "$P/scenarios" threads 3 2                        # named threads
run fork "$P/scenarios" fork 2                                # a forked child
run crash "$P/scenarios" crash-in-call 2                      # died inside a dgemm
# code stacks, of a copy of the program gone once recorded: the report
# symbolises a frame from the file its trace names, which would make the
# corpus's outputs depend on this build; gone, every machine shows offsets
cp "$P/stack_calls" "$T/stack_calls"
OPPROF_STACKS=4 run stacks "$T/stack_calls"
OPPROF_SCHEDULE=wait=1,active=2,repeat=2 OPPROF_STEP=call:cblas_ddot \
    run schedule "$P/scenarios" loop 8                        # two windows of ProfilerStep#N
run ranks /bin/sh -c "for r in 0 1 2; do RANK=\$r WORLD_SIZE=3 LOCAL_RANK=\$r '$P/blas_calls' \$((r+1)) & done; wait"
run torch /usr/bin/python3 tests/py/torch_train.py 2         # two training iterations
run gpu "$B/tests/double/gpu_app"                             # CUDA runtime and CUPTI, the double
run cublas "$B/tests/double/blas_app"                         # cuBLAS launches (external correlation)
"$B/opprof" summarize "$T/torch.trace" -o "$T/torch_summary.trace"

mkdir -p "$OUT"
rm -f "$OUT"/*.trace
cp "$T"/*.trace "$OUT"/
ls -l "$OUT"
