#!/usr/bin/env bash
# make bench: what opprof adds per intercepted call, next to uftrace and ltrace,
# and what its trace and collector cost. A report from one run, not a test.
# docs/BENCHMARKS.md explains each figure. Settings: BENCH_RUNS (default 7).
set -euo pipefail

cd "$(dirname "$0")/.."
export LC_ALL=C # a '.' in EPOCHREALTIME and in printf's numbers
BUILD=${BUILD:-build}
CC=${CC:-gcc}
RUNS=${BENCH_RUNS:-7}
PRELOAD=$PWD/$BUILD/libopprof.so
COLLECTOR=$PWD/$BUILD/opprof-collector

# Sizes: about a minute in all on a 2-core machine.
DDOT_N=10000000   # timed calls per ddot run
DDOT_WARM=1000000 # untimed calls first: two laps of the default ring
DGEMM_N=2000000
DGEMM_WARM=200000
UFTRACE_N=1000000
UFTRACE_RUNS=5
LTRACE_N=5000     # about 0.1 to 0.3 ms per call under ltrace
LTRACE_RUNS=3
CLOCK_N=10000000
INGEST_N=8000000  # the backlog the collector drains in the ingest test
INGEST_BUF=8388608
DROP_N=20000000
DROP_RUNS=3

die() {
    echo "bench: $*" >&2
    exit 1
}

for f in "$PRELOAD" "$COLLECTOR"; do
    [[ -x $f ]] || die "$f is missing: run 'make $BUILD/libopprof.so $BUILD/opprof-collector' first"
done

# One environment for every run: OpenBLAS on one thread (its pool would
# otherwise spin beside the collector), none of the caller's opprof settings.
export OPENBLAS_NUM_THREADS=1
unset OPPROF_SOCKET OPPROF_OUTPUT OPPROF_BUFFER OPPROF_CLOCK OPPROF_DISABLE OPPROF_COLLECTOR

scratch=$(mktemp -d "${TMPDIR:-/tmp}/opprof-bench.XXXXXX")
coll_pid=
cleanup() {
    if [[ -n $coll_pid ]]; then
        kill -CONT "$coll_pid" 2>/dev/null || true
        kill -TERM "$coll_pid" 2>/dev/null || true
        wait "$coll_pid" 2>/dev/null || true
    fi
    rm -rf "$scratch"
}
trap cleanup EXIT

# ---- build the loads ----
cflags=(-std=gnu11 -O2 -Wall -Wextra -Werror)
for p in ddot_loop dgemm_loop; do
    "$CC" "${cflags[@]}" -o "$scratch/$p" "bench/$p.c" -lopenblas 2>"$scratch/cc.err" ||
        die "cannot build bench/$p.c against OpenBLAS (is libopenblas-dev installed?): $(head -n 3 "$scratch/cc.err")"
done
"$CC" "${cflags[@]}" -o "$scratch/clocks" bench/clocks.c
# Counts come from the trace itself, read with the project's own reader.
"$CC" "${cflags[@]}" -D_GNU_SOURCE -Icommon -o "$scratch/trace_count" bench/trace_count.c \
    common/trace_read.c common/util.c -pthread

# ---- helpers ----

# The value of key=value in a line of a program's output.
field() {
    local key=$1 line=$2 w
    for w in $line; do
        if [[ $w == "$key="* ]]; then
            echo "${w#*=}"
            return 0
        fi
    done
    die "no $key in: $line"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
calc() { awk "BEGIN { printf \"%.${2:-1}f\", $1 }"; }
now_us() { echo "${EPOCHREALTIME/./}"; }

# Run a load under the preload, which starts its own collector; the trace
# goes to $1. Prints the load's output line followed by tail_ms (from the end
# of the timed loop until the process was gone: the wait for the collector).
profiled() {
    local trace=$1 out t1
    shift
    rm -f "$trace"
    out=$(LD_PRELOAD=$PRELOAD OPPROF_OUTPUT=$trace "$@" 2>>"$scratch/preload.err")
    t1=$(now_us)
    if [[ $out == *end_ns=* ]]; then
        echo "$out tail_ms=$(calc "($t1 * 1000 - $(field end_ns "$out")) / 1e6" 2)"
    else
        echo "$out"
    fi
}

# events= dropped= bytes= of a finished trace.
counts() { "$scratch/trace_count" "$1"; }

sep() { printf '\n== %s\n' "$1"; }

echo "opprof bench: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "median of $RUNS runs where not said otherwise; scratch in $scratch"

# ---- 0. clocks ----
sep "clock reads ($CLOCK_N each, median of 3)"
cg=() tsc=()
for _ in 1 2 3; do
    line=$("$scratch/clocks" "$CLOCK_N")
    cg+=("$(field clock_gettime_ns "$line")")
    tsc+=("$(field rdtsc_ns "$line")")
done
CG=$(printf '%s\n' "${cg[@]}" | median)
TSC=$(printf '%s\n' "${tsc[@]}" | median)
echo "clock_gettime(CLOCK_MONOTONIC): ${cg[*]} -> $CG ns"
echo "rdtsc:                          ${tsc[*]} -> $TSC ns"

# ---- 1. ddot: the added cost of one intercepted call ----
sep "cblas_ddot(n=1), $DDOT_N timed calls after $DDOT_WARM untimed, unprofiled and profiled in turn"
base=() prof=() tails=() ddot_drops=0
for ((i = 1; i <= RUNS; i++)); do
    line=$("$scratch/ddot_loop" "$DDOT_N" "$DDOT_WARM")
    base+=("$(field ns_per_call "$line")")
    line=$(profiled "$scratch/ddot.trace" "$scratch/ddot_loop" "$DDOT_N" "$DDOT_WARM")
    prof+=("$(field ns_per_call "$line")")
    tails+=("$(field tail_ms "$line")")
    c=$(counts "$scratch/ddot.trace")
    ddot_drops=$((ddot_drops + $(field dropped "$c")))
    ddot_calls=$(field calls "$line")
    ddot_events=$(field events "$c")
    ddot_bytes=$(field bytes "$c")
done
rm -f "$scratch/ddot.trace"
BASE=$(printf '%s\n' "${base[@]}" | median)
PROF=$(printf '%s\n' "${prof[@]}" | median)
TAIL=$(printf '%s\n' "${tails[@]}" | median)
ADDED=$(calc "$PROF - $BASE" 2)
echo "unprofiled ns/call: ${base[*]} -> $BASE"
echo "profiled ns/call:   ${prof[*]} -> $PROF"
echo "added ns/call: $ADDED; exit waited for the collector (ms): ${tails[*]} -> $TAIL"
[[ $ddot_drops -eq 0 ]] || echo "note: $ddot_drops records dropped during these runs: the timings include the cheaper drop path"

# ---- 4. bytes per recorded call (the last ddot trace) ----
BPC=$(calc "$ddot_bytes / $ddot_events" 2)
echo "last trace: $ddot_bytes bytes, $ddot_events events of $ddot_calls calls -> $BPC bytes/call"

# ---- 3. dgemm 1x1x1: a wrapper that records a shape ----
sep "cblas_dgemm 1x1x1 (records M, N, K, trans: 2 ring slots), $DGEMM_N timed calls"
gbase=() gprof=()
for ((i = 1; i <= RUNS; i++)); do
    gbase+=("$(field ns_per_call "$("$scratch/dgemm_loop" "$DGEMM_N" "$DGEMM_WARM")")")
    gprof+=("$(field ns_per_call "$(profiled "$scratch/dgemm.trace" "$scratch/dgemm_loop" "$DGEMM_N" "$DGEMM_WARM")")")
done
rm -f "$scratch/dgemm.trace"
GBASE=$(printf '%s\n' "${gbase[@]}" | median)
GPROF=$(printf '%s\n' "${gprof[@]}" | median)
GADDED=$(calc "$GPROF - $GBASE" 2)
echo "unprofiled ns/call: ${gbase[*]} -> $GBASE"
echo "profiled ns/call:   ${gprof[*]} -> $GPROF"
echo "added ns/call: $GADDED"

# ---- 2. the same ddot loop under uftrace and ltrace ----
UF_ADDED= LT_ADDED=
sep "uftrace: record --force (PLT calls of an uninstrumented binary), $UFTRACE_N calls, median of $UFTRACE_RUNS"
if command -v uftrace >/dev/null; then
    uf=()
    for ((i = 1; i <= UFTRACE_RUNS; i++)); do
        rm -rf "$scratch/uftrace.data"
        if line=$(uftrace record --force -d "$scratch/uftrace.data" \
            "$scratch/ddot_loop" "$UFTRACE_N" 100000 2>"$scratch/uftrace.err"); then
            uf+=("$(field ns_per_call "$line")")
        else
            echo "uftrace failed: $(head -n 3 "$scratch/uftrace.err")"
            break
        fi
        if grep -qi lost "$scratch/uftrace.err"; then
            echo "uftrace says: $(grep -i lost "$scratch/uftrace.err" | head -n 1)"
        fi
    done
    if [[ ${#uf[@]} -gt 0 ]]; then
        UF=$(printf '%s\n' "${uf[@]}" | median)
        UF_ADDED=$(calc "$UF - $BASE" 2)
        echo "ns/call: ${uf[*]} -> $UF; added $UF_ADDED (uftrace data $(du -sk "$scratch/uftrace.data" | cut -f1) KiB)"
    fi
    rm -rf "$scratch/uftrace.data"
else
    echo "uftrace not installed: comparison skipped (Debian: apt-get install uftrace)"
fi

sep "ltrace -e cblas_ddot, $LTRACE_N calls, median of $LTRACE_RUNS"
if command -v ltrace >/dev/null; then
    lt=()
    for ((i = 1; i <= LTRACE_RUNS; i++)); do
        if line=$(ltrace -o /dev/null -e cblas_ddot "$scratch/ddot_loop" "$LTRACE_N" 2>"$scratch/ltrace.err"); then
            lt+=("$(field ns_per_call "$line")")
        else
            echo "ltrace failed: $(head -n 3 "$scratch/ltrace.err")"
            break
        fi
    done
    if [[ ${#lt[@]} -gt 0 ]]; then
        LT=$(printf '%s\n' "${lt[@]}" | median)
        LT_ADDED=$(calc "$LT - $BASE" 0)
        echo "ns/call: ${lt[*]} -> $LT; added $LT_ADDED"
    fi
else
    echo "ltrace not installed: comparison skipped (Debian: apt-get install ltrace)"
fi

# ---- 5. collector ingest: how fast it drains a backlog ----
# A collector of our own, stopped while the load fills an 8M-slot ring, then
# let go when the loop ends: the time until the load's exit handler has its
# acknowledgement (every record written) is the collector's work alone.
sep "collector ingest: drain a backlog of $INGEST_N records"
INGEST= INGEST_NOTE=
sock=$scratch/c.sock
"$COLLECTOR" --socket "$sock" --output "$scratch/ingest.trace" 2>"$scratch/collector.err" &
coll_pid=$!
for _ in $(seq 500); do
    [[ -S $sock ]] && break
    sleep 0.01
done
if [[ -S $sock ]]; then
    kill -STOP "$coll_pid"
    OPPROF_SOCKET=$sock OPPROF_BUFFER=$INGEST_BUF LD_PRELOAD=$PRELOAD \
        "$scratch/ddot_loop" "$INGEST_N" >"$scratch/ingest.out" 2>>"$scratch/preload.err" &
    load_pid=$!
    while [[ ! -s $scratch/ingest.out ]] && kill -0 "$load_pid" 2>/dev/null; do
        sleep 0.002
    done
    t0=$(now_us)
    kill -CONT "$coll_pid"
    load_rc=0
    wait "$load_pid" || load_rc=$?
    t1=$(now_us)
    kill -TERM "$coll_pid"
    wait "$coll_pid" || true
    coll_pid=
    if [[ $load_rc -eq 0 ]] && c=$(counts "$scratch/ingest.trace" 2>&1); then
        ev=$(field events "$c")
        INGEST=$(calc "$ev / (($t1 - $t0) / 1e6) / 1e6" 1)
        echo "$ev events written in $(calc "($t1 - $t0) / 1000" 1) ms -> $INGEST M events/s" \
            "(dropped $(field dropped "$c"))"
    else
        INGEST_NOTE="failed"
        echo "ingest run failed (load exit $load_rc): ${c:-} $(tail -n 2 "$scratch/collector.err")"
    fi
    rm -f "$scratch/ingest.trace"
else
    INGEST_NOTE="no collector"
    echo "the collector did not start: $(tail -n 2 "$scratch/collector.err")"
fi

# ---- 6. drops at full speed, default buffer ----
sep "drops: one thread, $DROP_N calls flat out, default buffer, $DROP_RUNS runs"
drops=() DROPPED_TOTAL=0
for ((i = 1; i <= DROP_RUNS; i++)); do
    line=$(profiled "$scratch/drop.trace" "$scratch/ddot_loop" "$DROP_N")
    c=$(counts "$scratch/drop.trace")
    d=$(field dropped "$c")
    drops+=("$d")
    DROPPED_TOTAL=$((DROPPED_TOTAL + d))
    echo "run $i: $(field calls "$line") calls, $(field events "$c") events, $d dropped," \
        "$(field ns_per_call "$line") ns/call"
done
rm -f "$scratch/drop.trace"

if grep -v 'trace written to\|records dropped' "$scratch/preload.err" | grep -q .; then
    echo
    echo "the preload said:"
    grep -v 'trace written to\|records dropped' "$scratch/preload.err" | sort | uniq -c | head -n 5
fi

# ---- the table ----
verdict() { if awk "BEGIN { exit !($1) }"; then echo PASS; else echo FAIL; fi; }
PRODUCER=$(calc "1000 / $PROF" 1) # M calls/s one profiled thread makes
ratio_uf=n/a ratio_lt=n/a
[[ -n $UF_ADDED ]] && ratio_uf=$(calc "$UF_ADDED / $ADDED" 1)x
[[ -n $LT_ADDED ]] && ratio_lt=$(calc "$LT_ADDED / $ADDED" 0)x

echo
printf '%-34s %16s %12s %6s  %s\n' figure measured target result "ratio"
printf '%-34s %16s %12s %6s  %s\n' "cblas_ddot unprofiled" "$BASE ns" - - "baseline"
printf '%-34s %16s %12s %6s  %s\n' "cblas_ddot profiled" "$PROF ns" - - \
    "$(calc "$PROF / $BASE" 1)x baseline"
printf '%-34s %16s %12s %6s  %s\n' "added per call (ddot)" "$ADDED ns" "<= 25 ns" \
    "$(verdict "$ADDED <= 25")" "$(calc "$ADDED / $TSC" 1) rdtsc reads"
printf '%-34s %16s %12s %6s  %s\n' "added per call (dgemm, shapes)" "$GADDED ns" - - \
    "$(calc "$GADDED - $ADDED" 1) ns over ddot; baseline $GBASE ns"
printf '%-34s %16s %12s %6s  %s\n' "added per call under uftrace" "${UF_ADDED:-skipped} ns" - - \
    "$ratio_uf opprof's"
printf '%-34s %16s %12s %6s  %s\n' "added per call under ltrace" "${LT_ADDED:-skipped} ns" - - \
    "$ratio_lt opprof's"
printf '%-34s %16s %12s %6s  %s\n' "trace bytes per call (ddot)" "$BPC B" "<= 16 B" \
    "$(verdict "$BPC <= 16")" "uftrace stores ~32 B"
printf '%-34s %16s %12s %6s  %s\n' "collector ingest (backlog)" "${INGEST:-$INGEST_NOTE} M/s" - - \
    "${INGEST:+$(calc "$INGEST / $PRODUCER" 2)x one profiled thread ($PRODUCER M/s)}"
printf '%-34s %16s %12s %6s  %s\n' "exit waits for collector (ddot)" "$TAIL ms" - - \
    "after $DDOT_N+$DDOT_WARM calls"
printf '%-34s %16s %12s %6s  %s\n' "dropped, $DROP_RUNS x $DROP_N calls" "${drops[*]}" 0 \
    "$(verdict "$DROPPED_TOTAL == 0")" "default buffer"
printf '%-34s %16s %12s %6s  %s\n' "clock_gettime(MONOTONIC) read" "$CG ns" - - \
    "$(calc "$CG / $TSC" 1)x rdtsc"
printf '%-34s %16s %12s %6s  %s\n' "rdtsc read" "$TSC ns" - - baseline
echo "(a report: the exit status does not depend on the targets)"
