#!/usr/bin/env bash
# The fuzz targets' seed corpus, made fresh from this build (so it follows
# the trace format): real traces of the test programs run under the real
# preload, in the ways that give the reader each kind of chunk, and
# fuzz_proto's seeds made from them (proto_seeds.c).
#   tests/fuzz/seeds.sh BUILD OUTDIR   (writes OUTDIR/trace/, OUTDIR/proto/, OUTDIR/names/)
set -euo pipefail

build=$(realpath "$1")
out=$2
rm -rf "$out"
mkdir -p "$out/trace" "$out/proto" "$out/names"
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

# fuzz_names: a byte that shapes the call tree, then names split at NUL
# bytes (quotes, controls, bytes that are not UTF-8, noncharacters,
# markup, formulas, ';' and line breaks, a name past what a trace keeps).
printf '\005q"uo\047te\\\\x\000esc\033]0;t\007\000row\r\nforged 99.99%%\000=cmd|\047 /C calc\047!A0\000li\033[2Jb\000thr\377\n\000/bin/ev\033\000../../../escaped/evil' \
    >"$out/names/controls"
printf '\043bad\377\376\303(\000non\357\277\276\357\277\277\000<script>&amp;\000@SUM(A1)\000semi;colon name\nnl\000csi\302\233\302\205\000bidi\342\200\256\342\200\250\000+1' \
    >"$out/names/encodings"
{ printf '\017'; head -c 5000 /dev/zero | tr '\0' A; printf '\000\t-x\000a b'; } >"$out/names/long"
