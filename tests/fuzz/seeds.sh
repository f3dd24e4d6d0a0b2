#!/usr/bin/env bash
# The fuzz targets' seed corpus, made fresh from this build (so it follows
# the trace format): real traces of the test programs run under the real
# preload, in the ways that give the reader each kind of chunk, and
# fuzz_proto's seeds made from them (proto_seeds.c).
#   tests/fuzz/seeds.sh BUILD OUTDIR   (writes OUTDIR/trace/, OUTDIR/proto/)
set -euo pipefail

build=$(realpath "$1")
out=$2
rm -rf "$out"
mkdir -p "$out/trace" "$out/proto"
out=$(realpath "$out")
progs=$build/tests/progs

# NAME [VAR=value...] -- PROGRAM ARGS...: the trace of one run, whatever
# the run's exit status (some die on purpose); none is an error.
trace() {
    local name=$1 env=()
    shift
    while [ "$1" != -- ]; do env+=("$1"); shift; done
    shift
    # in a subshell of its own, which says "Killed" to /dev/null
    (env LD_PRELOAD="$build/libopprof.so" OPPROF_SOCKET= OPPROF_OUTPUT="$out/trace/$name" \
        "${env[@]}" "$@" || true) >/dev/null 2>&1
    if [ ! -s "$out/trace/$name" ]; then
        echo "fuzz seeds: no trace from $name ($*)" >&2
        exit 1
    fi
}

trace loop -- "$progs/scenarios" loop 20                     # events, the TSC clock
trace threads -- "$progs/scenarios" threads 3 5              # thread names
trace fork -- "$progs/scenarios" fork 3                      # a child process
trace exec -- "$progs/scenarios" exec 2                      # an exec: a new instance
trace killed -- "$progs/scenarios" kill 3                    # a process that is lost
trace summary OPPROF_MODE=summary -- "$progs/scenarios" threads 2 5   # SUMMARY chunks
trace stacks OPPROF_STACKS=4 -- "$progs/stack_calls"        # STACK and MODULE records
trace schedule OPPROF_SCHEDULE=wait=1,active=2,repeat=2 OPPROF_STEP=call:cblas_ddot \
    -- "$progs/scenarios" loop 12                            # ProfilerStep#N ranges
trace schedule-summary OPPROF_MODE=summary OPPROF_SCHEDULE=wait=1,active=2,repeat=2 \
    OPPROF_STEP=call:cblas_ddot -- "$progs/scenarios" loop 12  # summary windows
trace ranked RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 OPPROF_CLOCK=monotonic \
    -- "$progs/scenarios" loop 5                             # labels, the monotonic clock
# With the CUDA toolkit: the CUDA test double's device work (GPU chunks;
# the double is also the CUPTI the preload loads), the same in summary mode
# (SUMMARY_GPU), and cuBLAS's external correlation.
double=$build/tests/double
if [ -x "$double/gpu_app" ]; then
    trace gpu OPPROF_CUPTI="$double/libcudart.so.13" -- "$double/gpu_app"
    trace gpu-summary OPPROF_CUPTI="$double/libcudart.so.13" OPPROF_MODE=summary -- "$double/gpu_app"
fi
if [ -x "$double/blas_app" ]; then
    trace cublas OPPROF_CUPTI="$double/libcudart.so.13" -- "$double/blas_app"
fi

"$build/fuzz/proto-seeds" "$out/proto" "$out"/trace/*
