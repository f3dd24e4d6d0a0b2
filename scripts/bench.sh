#!/usr/bin/env bash
# make bench: what opprof adds per intercepted call, next to uftrace and ltrace,
# what its trace and collector cost, and what it adds to PyTorch programs
# next to torch.profiler. A report from one run, not a test.
# docs/BENCHMARKS.md explains each figure. Settings: BENCH_RUNS (default 7).
set -euo pipefail

cd "$(dirname "$0")/.."
export LC_ALL=C # a '.' in EPOCHREALTIME and in printf's numbers
BUILD=${BUILD:-build}
CC=${CC:-gcc}
RUNS=${BENCH_RUNS:-7}
PRELOAD=$PWD/$BUILD/libopprof.so
COLLECTOR=$PWD/$BUILD/opprof-collector
OPPROF=$PWD/$BUILD/opprof

# Sizes: about 30 seconds in all on a 2-core machine.
DDOT_N=10000000   # timed calls per ddot run
DDOT_WARM=1000000 # untimed calls first: two laps of the default ring
DGEMM_N=2000000
DGEMM_WARM=200000
DNNL_N=300000     # about 1 us per call: a one-element oneDNN relu
DNNL_WARM=10000
UFTRACE_N=1000000
UFTRACE_RUNS=5
LTRACE_N=5000     # about 0.1 to 0.3 ms per call under ltrace
LTRACE_RUNS=3
CLOCK_N=10000000
INGEST_N=8000000  # the backlog the collector drains in the ingest test
INGEST_BUF=8388608
DROP_N=20000000
DROP_RUNS=3
THREADS_N=5000000 # calls per thread in the drops-per-thread-count runs
REPORT_N=10000000 # records in the synthetic trace that report and export read
REPORT_RUNS=3
ANALYZE_TRACES=64    # rank traces that opprof analyze reads, one slowed
ANALYZE_N=1000000    # records in each
TORCH_OPS_N=300000 # torch.add calls per run, about 1 us each
TORCH_CNN_N=30     # training iterations of the small CNN per run
WHOLE_RUNS=3       # runs of each model for the whole-process CPU figures

die() {
    echo "bench: $*" >&2
    exit 1
}

for f in "$PRELOAD" "$COLLECTOR" "$OPPROF"; do
    [[ -x $f ]] || die "$f is missing: run 'make' first"
done

# One environment for every run: OpenBLAS on one thread (its pool would
# otherwise spin beside the collector), none of the caller's opprof settings.
export OPENBLAS_NUM_THREADS=1
unset OPPROF_SOCKET OPPROF_OUTPUT OPPROF_BUFFER OPPROF_CLOCK OPPROF_DISABLE OPPROF_COLLECTOR \
    OPPROF_MODE OPPROF_DROP

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
"$CC" "${cflags[@]}" -o "$scratch/ddot_threads" bench/ddot_threads.c -lopenblas -pthread
"$CC" "${cflags[@]}" -o "$scratch/clocks" bench/clocks.c
# oneDNN (optional, libdnnl-dev): the load of a TENSORS wrapper.
HAVE_DNNL=
if "$CC" "${cflags[@]}" -o "$scratch/dnnl_loop" bench/dnnl_loop.c -ldnnl 2>"$scratch/cc.err"; then
    HAVE_DNNL=1
fi
# Counts come from the trace itself, read with the project's own reader.
"$CC" "${cflags[@]}" -D_GNU_SOURCE -Icommon -o "$scratch/trace_count" bench/trace_count.c \
    common/*.c -pthread
# A synthetic trace of REPORT_N records for the report and export timings.
"$CC" "${cflags[@]}" -D_GNU_SOURCE -Icommon -o "$scratch/trace_gen" bench/trace_gen.c \
    common/*.c -pthread
# The same with GPU work: launches and the kernels they made.
"$CC" "${cflags[@]}" -D_GNU_SOURCE -Icommon -o "$scratch/gpu_trace_gen" bench/gpu_trace_gen.c \
    common/*.c -pthread

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

# CPU ns/call of $1 profiled ddot runs writing $2, with the environment
# assignments that follow: one figure a line (the last trace is kept).
ddot_cpu() {
    local n=$1 trace=$2 k
    shift 2
    for ((k = 1; k <= n; k++)); do
        (export "$@"; field cpu_ns_per_call "$(profiled "$trace" "$scratch/ddot_loop" "$DDOT_N" "$DDOT_WARM")")
    done
}

# events= dropped= bytes= of a finished trace.
counts() { "$scratch/trace_count" "$1"; }

sep() { printf '\n== %s\n' "$1"; }

echo "opprof bench: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine shows in wall times)"
echo "median of $RUNS runs where not said otherwise"

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
sep "cblas_ddot(n=1), $DDOT_N timed calls after $DDOT_WARM untimed; unprofiled and profiled in turn"
echo "ns/call as wall / thread CPU time"
bw=() bc=() pw=() pc=() tails=() ddot_drops=0
for ((i = 1; i <= RUNS; i++)); do
    b=$("$scratch/ddot_loop" "$DDOT_N" "$DDOT_WARM")
    bw+=("$(field ns_per_call "$b")")
    bc+=("$(field cpu_ns_per_call "$b")")
    p=$(profiled "$scratch/ddot.trace" "$scratch/ddot_loop" "$DDOT_N" "$DDOT_WARM")
    pw+=("$(field ns_per_call "$p")")
    pc+=("$(field cpu_ns_per_call "$p")")
    tails+=("$(field tail_ms "$p")")
    c=$(counts "$scratch/ddot.trace")
    d=$(field dropped "$c")
    ddot_drops=$((ddot_drops + d))
    ddot_calls=$(field calls "$p")
    ddot_events=$(field events "$c")
    ddot_bytes=$(field bytes "$c")
    printf 'run %d: unprofiled %s / %s, profiled %s / %s, dropped %s, exit waited %s ms\n' \
        "$i" "${bw[-1]}" "${bc[-1]}" "${pw[-1]}" "${pc[-1]}" "$d" "${tails[-1]}"
done
rm -f "$scratch/ddot.trace"
BASE_W=$(printf '%s\n' "${bw[@]}" | median)
BASE=$(printf '%s\n' "${bc[@]}" | median)
PROF_W=$(printf '%s\n' "${pw[@]}" | median)
PROF=$(printf '%s\n' "${pc[@]}" | median)
TAIL=$(printf '%s\n' "${tails[@]}" | median)
ADDED=$(calc "$PROF - $BASE" 2)
ADDED_W=$(calc "$PROF_W - $BASE_W" 2)
# The best runs: the least disturbed by other work on the machine.
BEST=$(calc "$(printf '%s\n' "${pc[@]}" | sort -g | head -n 1) - $(printf '%s\n' "${bc[@]}" | sort -g | head -n 1)" 2)
echo "median: unprofiled $BASE_W / $BASE, profiled $PROF_W / $PROF;" \
    "added $ADDED_W (wall) / $ADDED (CPU) ns per call; best runs: $BEST (CPU)"
[[ $ddot_drops -eq 0 ]] ||
    echo "note: $ddot_drops records dropped in these runs (the collector fell behind)"

# The same with the other clock the preload can use: what the TSC saves.
mapfile -t mc < <(ddot_cpu 3 "$scratch/mono.trace" OPPROF_CLOCK=monotonic)
rm -f "$scratch/mono.trace"
MONO=$(printf '%s\n' "${mc[@]}" | median)
MONO_ADDED=$(calc "$MONO - $BASE" 2)
echo "with OPPROF_CLOCK=monotonic, CPU ns/call: ${mc[*]} -> $MONO; added $MONO_ADDED (median of 3)"

# ---- 1c. opprof top watching: what it costs the profiled program ----
# The same ddot loop under `opprof run` and under `opprof top` (a table a
# second), in turn: the program's CPU ns per call. The collector adds the
# calls up while top watches; the program should not notice.
sep "ddot under opprof run and under opprof top (watched from the start), in turn"
rw=() tw=()
for ((i = 1; i <= RUNS; i++)); do
    out=$("$OPPROF" run -q -o "$scratch/run.trace" -- "$scratch/ddot_loop" "$DDOT_N" "$DDOT_WARM" 2>>"$scratch/preload.err")
    rw+=("$(field cpu_ns_per_call "$out")")
    out=$("$OPPROF" top -i 1 -o "$scratch/top.trace" -- "$scratch/ddot_loop" "$DDOT_N" "$DDOT_WARM" 2>>"$scratch/preload.err" |
        grep cpu_ns_per_call)
    tw+=("$(field cpu_ns_per_call "$out")")
done
d=$(field dropped "$(counts "$scratch/top.trace")")
rm -f "$scratch/run.trace" "$scratch/top.trace"
RUN_CPU=$(printf '%s\n' "${rw[@]}" | median)
TOP_CPU=$(printf '%s\n' "${tw[@]}" | median)
echo "CPU ns/call: opprof run ${rw[*]} -> $RUN_CPU; opprof top ${tw[*]} -> $TOP_CPU;" \
    "top adds $(calc "$TOP_CPU - $RUN_CPU" 2) ns per call (the last top run dropped $d records)"

# ---- 4. bytes per recorded call (the last ddot trace) ----
BPC=$(calc "$ddot_bytes / $ddot_events" 2)
echo "last trace: $ddot_bytes bytes, $ddot_events events of $ddot_calls calls -> $BPC bytes/call"

# ---- 3. dgemm 1x1x1: a wrapper that records a shape ----
sep "cblas_dgemm 1x1x1 (records M, N, K, trans: 2 ring slots), $DGEMM_N timed calls"
gbw=() gbc=() gpw=() gpc=()
for ((i = 1; i <= RUNS; i++)); do
    b=$("$scratch/dgemm_loop" "$DGEMM_N" "$DGEMM_WARM")
    gbw+=("$(field ns_per_call "$b")")
    gbc+=("$(field cpu_ns_per_call "$b")")
    p=$(profiled "$scratch/dgemm.trace" "$scratch/dgemm_loop" "$DGEMM_N" "$DGEMM_WARM")
    gpw+=("$(field ns_per_call "$p")")
    gpc+=("$(field cpu_ns_per_call "$p")")
done
rm -f "$scratch/dgemm.trace"
GBASE=$(printf '%s\n' "${gbc[@]}" | median)
GPROF=$(printf '%s\n' "${gpc[@]}" | median)
GADDED=$(calc "$GPROF - $GBASE" 2)
echo "unprofiled CPU ns/call: ${gbc[*]} -> $GBASE (wall median $(printf '%s\n' "${gbw[@]}" | median))"
echo "profiled CPU ns/call:   ${gpc[*]} -> $GPROF (wall median $(printf '%s\n' "${gpw[@]}" | median))"
echo "added CPU ns/call: $GADDED"

# ---- 3a. ddot outside a capture window: the cost of being off ----
sep "cblas_ddot with recording off (OPPROF_DELAY far in the future), $DDOT_N timed calls"
mapfile -t ocpu < <(ddot_cpu "$RUNS" "$scratch/off.trace" OPPROF_DELAY=1000000)
rm -f "$scratch/off.trace"
OFF=$(printf '%s\n' "${ocpu[@]}" | median)
OFF_ADDED=$(calc "$OFF - $BASE" 2)
echo "CPU ns/call: ${ocpu[*]} -> $OFF; added over unprofiled: $OFF_ADDED"

# ---- 3a'. summary mode: the same hot path, a trace that does not grow ----
sep "cblas_ddot in summary mode (OPPROF_MODE=summary), $DDOT_N and $((10 * DDOT_N)) timed calls"
mapfile -t scpu < <(ddot_cpu "$RUNS" "$scratch/sum.trace" OPPROF_MODE=summary)
c=$(counts "$scratch/sum.trace")
SUM_BYTES=$(field bytes "$c")
SUM_DROP=$(field dropped "$c")
p=$(OPPROF_MODE=summary profiled "$scratch/sum10.trace" "$scratch/ddot_loop" "$((10 * DDOT_N))" "$DDOT_WARM")
c=$(counts "$scratch/sum10.trace")
SUM10_BYTES=$(field bytes "$c")
SUM10_DROP=$(field dropped "$c")
rm -f "$scratch/sum.trace" "$scratch/sum10.trace"
SUMC=$(printf '%s\n' "${scpu[@]}" | median)
SUM_ADDED=$(calc "$SUMC - $BASE" 2)
echo "CPU ns/call: ${scpu[*]} -> $SUMC; added over unprofiled: $SUM_ADDED"
echo "trace: $SUM_BYTES bytes after $DDOT_N calls ($SUM_DROP dropped), $SUM10_BYTES bytes after" \
    "$((10 * DDOT_N)) calls ($SUM10_DROP dropped)"

# ---- 3b. dnnl_primitive_execute: a wrapper that records tensor dims ----
DADDED='' DBASE=''
sep "dnnl_primitive_execute, relu on [1, 1] (status, kind, dtype, 2 tensors from the per-primitive cache: 4 ring slots), $DNNL_N timed calls"
if [[ -n $HAVE_DNNL ]]; then
    dbc=() dpc=()
    for ((i = 1; i <= RUNS; i++)); do
        b=$("$scratch/dnnl_loop" "$DNNL_N" "$DNNL_WARM")
        dbc+=("$(field cpu_ns_per_call "$b")")
        p=$(profiled "$scratch/dnnl.trace" "$scratch/dnnl_loop" "$DNNL_N" "$DNNL_WARM")
        dpc+=("$(field cpu_ns_per_call "$p")")
    done
    rm -f "$scratch/dnnl.trace"
    DBASE=$(printf '%s\n' "${dbc[@]}" | median)
    DPROF=$(printf '%s\n' "${dpc[@]}" | median)
    DADDED=$(calc "$DPROF - $DBASE" 2)
    echo "unprofiled CPU ns/call: ${dbc[*]} -> $DBASE"
    echo "profiled CPU ns/call:   ${dpc[*]} -> $DPROF"
    echo "added CPU ns/call: $DADDED"
else
    echo "oneDNN headers not installed: skipped (Debian: apt-get install libdnnl-dev)"
fi

# ---- 2. the same ddot loop under uftrace and ltrace ----
UF_ADDED='' LT_ADDED=''
sep "uftrace record --force (PLT calls of an uninstrumented binary), $UFTRACE_N calls, median of $UFTRACE_RUNS"
if command -v uftrace >/dev/null; then
    ufw=() ufc=()
    for ((i = 1; i <= UFTRACE_RUNS; i++)); do
        rm -rf "$scratch/uftrace.data"
        if line=$(uftrace record --force -d "$scratch/uftrace.data" \
            "$scratch/ddot_loop" "$UFTRACE_N" 100000 2>"$scratch/uftrace.err"); then
            ufw+=("$(field ns_per_call "$line")")
            ufc+=("$(field cpu_ns_per_call "$line")")
        else
            echo "uftrace failed: $(head -n 3 "$scratch/uftrace.err")"
            break
        fi
        if grep -qi lost "$scratch/uftrace.err"; then
            echo "uftrace says: $(grep -i lost "$scratch/uftrace.err" | head -n 1)"
        fi
    done
    if [[ ${#ufc[@]} -gt 0 ]]; then
        UF=$(printf '%s\n' "${ufc[@]}" | median)
        UF_ADDED=$(calc "$UF - $BASE" 2)
        echo "CPU ns/call: ${ufc[*]} -> $UF (wall median $(printf '%s\n' "${ufw[@]}" | median));" \
            "added $UF_ADDED; data $(du -sk "$scratch/uftrace.data" | cut -f1) KiB for $((UFTRACE_N + 100000)) calls"
    fi
    rm -rf "$scratch/uftrace.data"
else
    echo "uftrace not installed: comparison skipped (Debian: apt-get install uftrace)"
fi

# ltrace stops the program at each call (ptrace): the program's own CPU time
# misses that, so only wall time counts here.
sep "ltrace -e cblas_ddot, $LTRACE_N calls, median of $LTRACE_RUNS, wall time"
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
        LT_ADDED=$(calc "$LT - $BASE_W" 0)
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
INGEST='' INGEST_NOTE=''
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
    c=""
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
    echo "run $i: $(field calls "$line") calls, $(field events "$c") events, $d dropped;" \
        "ns/call $(field ns_per_call "$line") wall, $(field cpu_ns_per_call "$line") CPU"
done
rm -f "$scratch/drop.trace"

# ---- 6b. drops by thread count, full and summary mode, and OPPROF_DROP=block ----
# T threads each making THREADS_N calls flat out on this machine's cores:
# beyond the cores the threads and the collector share them.
sep "drops: 1/2/4/8 threads x $THREADS_N calls flat out, default buffer, median of 3"
thread_rows=()
for t in 1 2 4 8; do
    for mode in full summary block; do
        ds=() ws=()
        for _ in 1 2 3; do
            line=$(
                export OPPROF_MODE=full OPPROF_DROP=drop
                [[ $mode == summary ]] && export OPPROF_MODE=summary
                [[ $mode == block ]] && export OPPROF_DROP=block
                profiled "$scratch/thr.trace" "$scratch/ddot_threads" "$t" "$THREADS_N"
            )
            c=$(counts "$scratch/thr.trace")
            ds+=("$(calc "100 * $(field dropped "$c") / ($t * $THREADS_N)" 2)")
            ws+=("$(field wall_ns_per_call "$line")")
        done
        d=$(printf '%s\n' "${ds[@]}" | median) w=$(printf '%s\n' "${ws[@]}" | median)
        echo "$t threads, $mode: dropped ${ds[*]} % -> $d %; wall ns per call per thread ${ws[*]} -> $w"
        thread_rows+=("$t|$mode|$d|$w")
    done
done
rm -f "$scratch/thr.trace"

# ---- 6c. drain rate: the collector's CPU per record under flat-out threads ----
# A collector of our own, so its CPU time can be read (/proc/PID/schedstat,
# in ns) when the load has gone: its whole CPU over the run, the rings'
# mapping and release included, divided by the records it wrote. T threads
# of THREADS_N calls each; drop % as the trace counts it.
sep "drain rate: collector CPU per record, 1/2/4 threads x $THREADS_N calls flat out, median of 3"
drain_rows=()
for t in 1 2 4; do
    ns=() ds=()
    for _ in 1 2 3; do
        rm -f "$sock" "$scratch/drain.trace"
        "$COLLECTOR" --socket "$sock" --output "$scratch/drain.trace" 2>"$scratch/collector.err" &
        coll_pid=$!
        for _ in $(seq 500); do
            [[ -S $sock ]] && break
            sleep 0.01
        done
        OPPROF_SOCKET=$sock LD_PRELOAD=$PRELOAD "$scratch/ddot_threads" "$t" "$THREADS_N" \
            >/dev/null 2>>"$scratch/preload.err" || true
        cpu=$(cut -d' ' -f1 "/proc/$coll_pid/schedstat" 2>/dev/null || echo 0)
        kill -TERM "$coll_pid"
        wait "$coll_pid" || true
        coll_pid=
        c=$(counts "$scratch/drain.trace")
        ns+=("$(calc "$cpu / $(field events "$c")" 1)")
        ds+=("$(calc "100 * $(field dropped "$c") / ($t * $THREADS_N)" 2)")
    done
    n=$(printf '%s\n' "${ns[@]}" | median) d=$(printf '%s\n' "${ds[@]}" | median)
    echo "$t threads: collector CPU ns per record ${ns[*]} -> $n; dropped ${ds[*]} % -> $d %"
    drain_rows+=("$t|$n|$d")
done
rm -f "$scratch/drain.trace"

# ---- 7. ring size: cache footprint against headroom ----
# Every call writes a fresh 32-byte slot: a ring larger than the caches
# makes each write a miss, a small one leaves the collector little time.
sep "ring size: $DDOT_N ddot calls after two untimed laps, median of 3 each"
ring_rows=()
for slots in 32768 524288 4194304; do
    rc=() rd=0
    for _ in 1 2 3; do
        p=$(OPPROF_BUFFER=$slots profiled "$scratch/ring.trace" "$scratch/ddot_loop" "$DDOT_N" \
            $((slots * 2 > DDOT_WARM ? slots * 2 : DDOT_WARM)))
        rc+=("$(field cpu_ns_per_call "$p")")
        c=$(counts "$scratch/ring.trace")
        rd=$((rd + $(field dropped "$c")))
    done
    m=$(printf '%s\n' "${rc[@]}" | median)
    mib=$((slots * 32 / 1048576))
    echo "$slots slots ($mib MiB): CPU ns/call ${rc[*]} -> $m; dropped $rd of $((3 * DDOT_N)) timed calls"
    ring_rows+=("$mib|$m|$rd")
done
rm -f "$scratch/ring.trace"

# ---- 8. report and export of a large trace ----
# What a person waits for: the table and the Chrome export of REPORT_N
# records (4 threads of nested BLAS-like calls with shapes, bench/trace_gen.c),
# elapsed seconds and peak RSS, median of REPORT_RUNS. The export goes to
# /dev/null: what it costs, not what the disk costs (it writes ~200 B a record).
sep "report and export: $REPORT_N records, median of $REPORT_RUNS"
"$scratch/trace_gen" "$scratch/big.trace" "$REPORT_N" >/dev/null || die "trace_gen failed"
big_mib=$(($(stat -c %s "$scratch/big.trace") / 1048576))
timed() { # prints "seconds KiB" of the median run (by time) of "$@" > /dev/null
    local i out=()
    for ((i = 1; i <= REPORT_RUNS; i++)); do
        /usr/bin/time -f '%e %M' -o "$scratch/time" "$@" >/dev/null 2>"$scratch/cmd.err" ||
            die "$* failed: $(tail -n 2 "$scratch/cmd.err")"
        out+=("$(cat "$scratch/time")")
    done
    printf '%s\n' "${out[@]}" | sort -g | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }'
}
measure() { # NAME LABEL ARGS...: NAME_S and NAME_MB of `opprof ARGS`, timed, printed as LABEL
    local name=$1 label=$2 s kb
    shift 2
    read -r s kb <<<"$(timed "$OPPROF" "$@")"
    printf -v "${name}_S" '%s' "$s"
    printf -v "${name}_MB" '%s' "$((kb / 1024))"
    echo "$label: $s s, $((kb / 1024)) MiB peak RSS"
}
echo "trace: $REPORT_N records, $big_mib MiB"
# Every trace is read in one pass whatever its size; --group-by-stack keeps
# each call's numbers until the operators around it come.
measure REP "opprof report" report "$scratch/big.trace"
measure STK "opprof report --group-by-stack 4" report --group-by-stack 4 "$scratch/big.trace"
measure JSON "opprof report -f json" report -f json "$scratch/big.trace"
measure EXP "opprof export chrome" export chrome "$scratch/big.trace"
# The step view (a step ends at each train_step: 8 records a step), one
# pass over the trace whatever its size (--no-stream changes nothing).
measure STEP "opprof report --step train_step" report --step train_step "$scratch/big.trace"
# SQLite: rows a second over the whole export, reading the trace and the
# indexes included, against SQLite alone writing the same rows and name
# index with nothing of opprof's (the most an export can reach on this
# machine). Both write ~80 B a row to the disk, whose speed drifts: three
# runs of each in turn, each figure the median of its three.
SQL_S= SQL_MB= FLOOR_S=
if ! ldd "$OPPROF" | grep -q libsqlite3; then
    echo "opprof export sqlite: skipped (built without libsqlite3-dev)"
else
    "$CC" "${cflags[@]}" -o "$scratch/sqlite_floor" bench/sqlite_floor.c -lsqlite3
    sql_s=() floor_s=()
    for ((i = 1; i <= 3; i++)); do
        /usr/bin/time -f '%e %M' -o "$scratch/time" "$OPPROF" export sqlite "$scratch/big.trace" \
            -o "$scratch/big.sqlite" 2>"$scratch/cmd.err" || die "export sqlite failed: $(tail -n 2 "$scratch/cmd.err")"
        read -r s kb <"$scratch/time"
        sql_s+=("$s")
        SQL_MB=$((kb / 1024 > SQL_MB ? kb / 1024 : SQL_MB))
        echo "opprof export sqlite: $s s, $((kb / 1024)) MiB peak RSS," \
            "$(($(stat -c %s "$scratch/big.sqlite") / 1048576)) MiB database"
        rm -f "$scratch/big.sqlite"
        floor_s+=("$(field total_s "$("$scratch/sqlite_floor" "$scratch/floor.sqlite" "$REPORT_N")")")
        echo "SQLite alone, the same $REPORT_N rows and name index: ${floor_s[-1]} s"
        rm -f "$scratch/floor.sqlite"
    done
    SQL_S=$(printf '%s\n' "${sql_s[@]}" | median)
    FLOOR_S=$(printf '%s\n' "${floor_s[@]}" | median)
fi
rm -f "$scratch/big.trace"
# Every view of 30M and 100M records, each one pass over the trace: memory
# bounded by what it shows (the call paths, the rows: 256 MiB; the steps,
# one every 8 records here, 3.75M and 12.5M of them: 8 MiB and 64 B a
# step), not by the calls. One run each.
BIG_VIEWS=(table tree json by-process step stacks diff)
declare -A BIG_ARGS=([table]="report" [tree]="report --tree" [json]="report -f json"
    [by-process]="report --by-process" [step]="report --step train_step"
    [stacks]="export stacks" [diff]="diff")
declare -A BIG_S BIG_MB
for n in 30000000 100000000; do
    "$scratch/trace_gen" "$scratch/huge.trace" "$n" >/dev/null || die "trace_gen failed"
    for v in "${BIG_VIEWS[@]}"; do
        read -r -a a <<<"${BIG_ARGS[$v]}"
        [ "$v" = diff ] && a+=("$scratch/huge.trace") # the trace against itself
        /usr/bin/time -f '%e %M' -o "$scratch/time" "$OPPROF" "${a[@]}" "$scratch/huge.trace" \
            >/dev/null 2>"$scratch/cmd.err" || die "opprof ${a[*]} failed: $(tail -n 2 "$scratch/cmd.err")"
        read -r s kb <"$scratch/time"
        BIG_S[$v,$n]=$s BIG_MB[$v,$n]=$((kb / 1024))
        echo "opprof ${a[*]}, $n records: $s s, ${BIG_MB[$v,$n]} MiB peak RSS"
    done
    rm -f "$scratch/huge.trace"
done

# The GPU view and the steps of a trace of REPORT_N records with GPU work
# (bench/gpu_trace_gen.c: 3 launches and their kernels a step), one pass
# over the trace (the ops joined to their launches by a sort that spills
# to TMPDIR).
"$scratch/gpu_trace_gen" "$scratch/gpu.trace" "$REPORT_N" >/dev/null || die "gpu_trace_gen failed"
measure GPU "opprof report --gpu, $REPORT_N records with GPU work" report --gpu "$scratch/gpu.trace"
measure GSTEP "opprof report --step train_step (GPU work)" \
    report --step train_step "$scratch/gpu.trace"
# Its table, streamed (each op joined to its launch before the calls are
# summed) and loaded.
measure GTAB "opprof report (GPU work)" report "$scratch/gpu.trace"
measure GTABL "opprof report --no-stream (GPU work)" report --no-stream "$scratch/gpu.trace"
rm -f "$scratch/gpu.trace"

# ---- 8b. opprof analyze: ANALYZE_TRACES rank traces on Dask ----
# One trace per rank (bench/trace_gen.c with a RANK label; rank 17's dgemm
# calls twice as long), analysed on Dask's local cluster with 1 and with 2
# workers; the slowed rank must be named.
AN1_S= AN2_S=
if [[ -x /usr/bin/python3 ]] && /usr/bin/python3 -c 'import dask, distributed, pandas' 2>/dev/null; then
    sep "opprof analyze: $ANALYZE_TRACES traces of $ANALYZE_N records"
    mkdir -p "$scratch/ranks"
    for ((r = 0; r < ANALYZE_TRACES; r++)); do
        slow=(); [[ $r == 17 ]] && slow=(4)
        "$scratch/trace_gen" "$(printf '%s/ranks/rank%02d.trace' "$scratch" $r)" "$ANALYZE_N" $r "${slow[@]}" \
            >/dev/null || die "trace_gen failed"
    done
    for w in 1 2; do
        /usr/bin/time -f '%e' -o "$scratch/time" "$OPPROF" analyze "$scratch/ranks" --workers $w \
            >"$scratch/analyze.out" 2>"$scratch/cmd.err" || die "analyze failed: $(tail -n 2 "$scratch/cmd.err")"
        grep -q '^straggler: rank 17,' "$scratch/analyze.out" || die "analyze did not name rank 17"
        read -r s <"$scratch/time"
        [[ $w == 1 ]] && AN1_S=$s || AN2_S=$s
        echo "opprof analyze, $w worker(s): $s s"
    done
    rm -rf "$scratch/ranks"
else
    echo "opprof analyze: skipped (no python3-dask, python3-distributed, python3-pandas)"
fi

# ---- 9. PyTorch: per op, recording off, a small CNN's training ----
# Debian's python3 with torch, one intra-op thread. glibc's malloc is told
# to keep freed memory (no mmap, no trim) in every mode: otherwise a big
# tensor's free and the next allocation cost page faults that depend on
# what else the process holds, and torch.profiler's runs came out faster
# than unprofiled ones.
PY=/usr/bin/python3
HAVE_TORCH=
if [[ -x $PY ]] && "$PY" -c 'import torch' 2>/dev/null && ls "$BUILD"/python/cache/*/libopprof_torch.so >/dev/null 2>&1; then
    HAVE_TORCH=1
fi
torch_run() { # MODE LOAD ARGS...: one figure line
    local mode=$1
    shift
    case $mode in
    plain) "$PY" "$@" ;;
    torch) "$PY" "$@" torch ;;
    opprof) LD_PRELOAD=$PRELOAD OPPROF_OUTPUT=$scratch/torch.trace "$PY" "$@" 2>>"$scratch/preload.err" ;;
    lean) LD_PRELOAD=$PRELOAD OPPROF_OUTPUT=$scratch/torch.trace OPPROF_TORCH=lean "$PY" "$@" 2>>"$scratch/preload.err" ;;
    closed) LD_PRELOAD=$PRELOAD OPPROF_OUTPUT=$scratch/torch.trace OPPROF_DELAY=3600 "$PY" "$@" 2>>"$scratch/preload.err" ;;
    paused) LD_PRELOAD=$PRELOAD OPPROF_OUTPUT=$scratch/torch.trace OPPROF_PAUSED=1 "$PY" "$@" 2>>"$scratch/preload.err" ;;
    esac
}
# RUNS rounds of LOAD ARG in each MODE in turn (a line per round), then
# MED_<MODE>: each mode's median of FIELD, and LAST_<MODE>: its last run's
# line.
torch_rounds() {
    local field=$1 load=$2 arg=$3 i mode v line out
    shift 3
    local -A got=()
    for ((i = 1; i <= RUNS; i++)); do
        line="run $i:"
        for mode in "$@"; do
            out=$(torch_run "$mode" "$load" "$arg")
            declare -g "LAST_${mode^^}=$out"
            v=$(field "$field" "$out")
            got[$mode]+="$v "
            line+=" $mode $v"
        done
        echo "$line"
    done
    for mode in "$@"; do
        declare -g "MED_${mode^^}=$(printf '%s\n' ${got[$mode]} | median)"
    done
}
if [[ -n $HAVE_TORCH ]]; then
    export MALLOC_MMAP_THRESHOLD_=1000000000 MALLOC_TRIM_THRESHOLD_=1000000000
    sep "torch.add on 4-element tensors, $TORCH_OPS_N per run; modes in turn (CPU ns per op)"
    torch_rounds cpu_ns_per_op bench/torch_ops.py "$TORCH_OPS_N" plain opprof closed paused torch
    TOPS_PLAIN=$MED_PLAIN TOPS_OPPROF=$MED_OPPROF TOPS_CLOSED=$MED_CLOSED TOPS_PAUSED=$MED_PAUSED
    TOPS_TORCH=$MED_TORCH
    T_ON=$(calc "$TOPS_OPPROF - $TOPS_PLAIN" 0)
    T_CLOSED=$(calc "$TOPS_CLOSED - $TOPS_PLAIN" 0)
    T_PAUSED=$(calc "$TOPS_PAUSED - $TOPS_PLAIN" 0)
    T_TORCH=$(calc "$TOPS_TORCH - $TOPS_PLAIN" 0)
    echo "median: unprofiled $TOPS_PLAIN, opprof $TOPS_OPPROF (+$T_ON), window closed $TOPS_CLOSED" \
        "($T_CLOSED), ctl stop $TOPS_PAUSED ($T_PAUSED), torch.profiler $TOPS_TORCH (+$T_TORCH)"

    sep "small CNN training, $TORCH_CNN_N iterations per run; modes in turn (loop wall ms)"
    torch_rounds wall_ms bench/torch_cnn.py "$TORCH_CNN_N" plain opprof torch
    TCNN_PLAIN=$MED_PLAIN TCNN_OPPROF=$MED_OPPROF TCNN_TORCH=$MED_TORCH
    C_ON=$(calc "$TCNN_OPPROF - $TCNN_PLAIN" 1)
    C_TORCH=$(calc "$TCNN_TORCH - $TCNN_PLAIN" 1)
    echo "median: unprofiled $TCNN_PLAIN ms, opprof $TCNN_OPPROF (+$C_ON), torch.profiler" \
        "(record_shapes, profile_memory) $TCNN_TORCH (+$C_TORCH)"
    # Two model shapes (bench/torch_models.py), steady state inside the
    # process, every mode in turn; per op: the added time over the torch
    # operators the full trace holds per unit (an iteration, a round).
    for model in lm cnn; do
        sep "$model: bench/torch_models.py, modes in turn (ms a unit: median of rounds 2-6)"
        # opprof's run last but torch.profiler's, which writes no trace: the
        # trace left is a full one, whose ops are counted
        torch_rounds ms bench/torch_models.py "$model" plain lean opprof torch
        declare -g "M_${model}_plain=$MED_PLAIN" "M_${model}_full=$MED_OPPROF" \
            "M_${model}_lean=$MED_LEAN" "M_${model}_torch=$MED_TORCH"
        units=$(field units "$LAST_OPPROF")
        ops=$("$OPPROF" report "$scratch/torch.trace" --lib torch -f csv 2>/dev/null |
            awk -F, 'NR > 1 { n += $3 } END { print n + 0 }')
        declare -g "OPS_$model=$(calc "$ops / $units" 1)"
        echo "median: unprofiled $MED_PLAIN ms, opprof $MED_OPPROF, lean $MED_LEAN," \
            "torch.profiler $MED_TORCH; $(calc "$ops / $units" 1) torch ops a unit"
        # The whole process tree's CPU (the program's threads and the
        # collector's), 16 rounds less 1: 15 rounds of the steady state.
        for mode in plain opprof lean; do
            for rounds in 1 16; do
                v=()
                for ((i = 1; i <= WHOLE_RUNS; i++)); do
                    case $mode in
                    plain) cmd=("$PY" bench/torch_models.py "$model" x "$rounds") ;;
                    opprof) cmd=("$OPPROF" run -q -o "$scratch/whole.trace" -- "$PY" bench/torch_models.py "$model" x "$rounds") ;;
                    lean) cmd=(env OPPROF_TORCH=lean "$OPPROF" run -q -o "$scratch/whole.trace" -- "$PY" bench/torch_models.py "$model" x "$rounds") ;;
                    esac
                    v+=("$(/usr/bin/time -f '%U %S' "${cmd[@]}" 2>&1 >/dev/null | tail -n 1 | awk '{ print $1 + $2 }')")
                done
                declare -g "W_${model}_${mode}_$rounds=$(printf '%s\n' "${v[@]}" | median)"
            done
        done
        echo "whole-process CPU s (1 round / 16 rounds): unprofiled $(eval echo "\$W_${model}_plain_1 / \$W_${model}_plain_16")," \
            "opprof $(eval echo "\$W_${model}_opprof_1 / \$W_${model}_opprof_16")," \
            "lean $(eval echo "\$W_${model}_lean_1 / \$W_${model}_lean_16")"
        declare -g "UNITS15_$model=$((units * 15 / 6))"
    done
    unset MALLOC_MMAP_THRESHOLD_ MALLOC_TRIM_THRESHOLD_
    rm -f "$scratch/torch.trace" "$scratch/whole.trace"
else
    sep "PyTorch: skipped ($PY has no torch, or no torch shim was built: make torch-shim)"
fi

if grep -v 'trace written to\|records dropped' "$scratch/preload.err" | grep -q .; then
    echo
    echo "the preload said:"
    grep -v 'trace written to\|records dropped' "$scratch/preload.err" | sort | uniq -c | head -n 5
fi

# ---- the table ----
verdict() { if awk "BEGIN { exit !($1) }"; then echo PASS; else echo FAIL; fi; }
row() { printf '%-34s %14s %10s %6s  %s\n' "$@"; }
shown() { if [[ -n $1 ]]; then echo "$1 $2"; else echo "${3:-skipped}"; fi; }
PRODUCER=$(calc "1000 / $PROF" 1) # M calls/s of one profiled thread that has a core to itself
ratio_uf=n/a ratio_lt=n/a
[[ -n $UF_ADDED ]] && ratio_uf="$(calc "$UF_ADDED / $ADDED" 1)x opprof's (CPU)"
[[ -n $LT_ADDED ]] && ratio_lt="$(calc "$LT_ADDED / $ADDED_W" 0)x opprof's (wall)"

echo
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
row figure measured target result ratio
row "cblas_ddot unprofiled (CPU)" "$BASE ns" - - "baseline (wall $BASE_W ns)"
row "cblas_ddot profiled (CPU)" "$PROF ns" - - "$(calc "$PROF / $BASE" 1)x baseline (wall $PROF_W ns)"
row "added per call, ddot (CPU)" "$ADDED ns" "<= 25 ns" "$(verdict "$ADDED <= 25")" \
    "$(calc "$ADDED / $TSC" 1) rdtsc reads"
row "added per call, ddot (CPU, best)" "$BEST ns" "<= 25 ns" "$(verdict "$BEST <= 25")" \
    "best profiled run - best unprofiled run"
row "added per call, monotonic clock" "$MONO_ADDED ns" - - \
    "$(calc "$MONO_ADDED / $ADDED" 1)x with the TSC (CPU)"
row "added per call, ddot (wall)" "$ADDED_W ns" - - "$(calc "$ADDED_W / $ADDED" 1)x the CPU figure"
row "added per call, dgemm shapes (CPU)" "$GADDED ns" - - \
    "$(calc "$GADDED / $ADDED" 2)x ddot's; baseline $GBASE ns"
row "added per call, recording off" "$OFF_ADDED ns" "<= 5 ns" "$(verdict "$OFF_ADDED <= 5")" \
    "outside a capture window (OPPROF_DELAY)"
row "added per call, summary mode (CPU)" "$SUM_ADDED ns" - - \
    "$(calc "$SUM_ADDED / $ADDED" 2)x full mode's"
row "summary trace, 10x the calls" "$((SUM10_BYTES - SUM_BYTES)) B more" - - \
    "$SUM_BYTES B at $DDOT_N calls, $SUM10_BYTES B at $((10 * DDOT_N))"
row "added per call, oneDNN dims (CPU)" "$(shown "$DADDED" ns)" - - \
    "${DADDED:+$(calc "$DADDED / $ADDED" 2)x ddot, baseline $DBASE ns}"
row "added per call under uftrace" "$(shown "$UF_ADDED" ns)" - - "$ratio_uf"
row "added per call under ltrace" "$(shown "$LT_ADDED" ns)" - - "$ratio_lt"
row "trace bytes per call (ddot)" "$BPC B" "<= 16 B" "$(verdict "$BPC <= 16")" \
    "$(calc "$BPC / 32" 2)x uftrace's ~32 B"
row "collector ingest (backlog)" "$(shown "$INGEST" M/s "$INGEST_NOTE")" - - \
    "${INGEST:+$(calc "$INGEST / $PRODUCER" 2)x one profiled thread ($PRODUCER M calls/s)}"
row "exit waits for the collector" "$TAIL ms" - - "after $((DDOT_N + DDOT_WARM)) ddot calls"
row "dropped, $DROP_RUNS x $DROP_N calls" "${drops[*]}" 0 "$(verdict "$DROPPED_TOTAL == 0")" \
    "default buffer"
for r in "${thread_rows[@]}"; do
    IFS='|' read -r t mode d w <<<"$r"
    row "dropped, $t threads, $mode" "$d %" - - "wall $w ns per call per thread"
done
for r in "${drain_rows[@]}"; do
    IFS='|' read -r t n d <<<"$r"
    row "drain, $t threads (collector CPU)" "$n ns" - - \
        "a record: $(calc "1000 / $n" 0) M records per CPU second; $d % dropped"
done
for r in "${ring_rows[@]}"; do
    IFS='|' read -r mib m rd <<<"$r"
    row "profiled ddot, $mib MiB ring (CPU)" "$m ns" - - "$(calc "$m / $BASE" 1)x baseline; $rd dropped in 3 runs"
done
row "report, $((REPORT_N / 1000000))M records (time)" "$REP_S s" "<= 5 s" "$(verdict "$REP_S <= 5")" \
    "table of a $big_mib MiB trace, streamed"
row "report, $((REPORT_N / 1000000))M records (memory)" "$REP_MB MiB" "<= 256 MiB" \
    "$(verdict "$REP_MB <= 256")" "peak RSS: the call paths"
row "report --group-by-stack 4, $((REPORT_N / 1000000))M (memory)" "$STK_MB MiB" "<= 256 MiB" \
    "$(verdict "$STK_MB <= 256")" "$STK_S s: one pass, the paths under the calls still open"
row "report -f json, $((REPORT_N / 1000000))M (memory)" "$JSON_MB MiB" "<= 256 MiB" \
    "$(verdict "$JSON_MB <= 256")" "$JSON_S s: one pass"
row "export chrome, $((REPORT_N / 1000000))M (time)" "$EXP_S s" "<= 5 s" "$(verdict "$EXP_S <= 5")" \
    "to /dev/null"
row "export chrome, $((REPORT_N / 1000000))M (memory)" "$EXP_MB MiB" "<= 1024 MiB" \
    "$(verdict "$EXP_MB <= 1024")" "peak RSS: streams"
for n in 30000000 100000000; do
    for v in "${BIG_VIEWS[@]}"; do
        lim=256 per="${BIG_S[$v,$n]} s: $(calc "${BIG_S[$v,$n]} * 1e9 / $n" 0) ns a record"
        if [ "$v" = step ]; then # what it shows is its steps: 8 MiB and 64 B a step
            lim=$(((8 * 1048576 + 64 * (n / 8)) / 1048576))
            per="$per; $(calc "${BIG_MB[$v,$n]} * 1048576 / ($n / 8)" 0) B a step"
        fi
        row "${BIG_ARGS[$v]}, $((n / 1000000))M (memory)" "${BIG_MB[$v,$n]} MiB" "<= $lim MiB" \
            "$(verdict "${BIG_MB[$v,$n]} <= $lim")" "$per"
    done
done
row "report --step, $((REPORT_N / 1000000))M (time)" "$STEP_S s" - - \
    "$(calc "$REPORT_N / 8 / 1e6" 2)M steps, one pass"
row "report --step, $((REPORT_N / 1000000))M (memory)" "$STEP_MB MiB" - - \
    "the steps, not the calls"
row "report --gpu, $((REPORT_N / 1000000))M (time)" "$GPU_S s" - - \
    "GPU work, one pass (every call loaded for the table: $GTABL_S s)"
row "report --gpu, $((REPORT_N / 1000000))M (memory)" "$GPU_MB MiB" "<= 256 MiB" \
    "$(verdict "$GPU_MB <= 256")" "every call loaded: $GTABL_MB MiB"
row "report --step, $((REPORT_N / 1000000))M GPU (memory)" "$GSTEP_MB MiB" - - \
    "$GSTEP_S s; its steps' GPU time joined as it streams"
row "report, $((REPORT_N / 1000000))M GPU (memory)" "$GTAB_MB MiB" "<= 256 MiB" \
    "$(verdict "$GTAB_MB <= 256")" \
    "$GTAB_S s, loaded $GTABL_S s and $GTABL_MB MiB; ops joined to launches, then summed"
if [[ -n $SQL_S ]]; then
    row "export sqlite, $((REPORT_N / 1000000))M (rows/s)" "$(calc "$REPORT_N / $SQL_S / 1e6" 2) M/s" \
        ">= 85 %" "$(verdict "$(calc "$FLOOR_S * 100 / $SQL_S" 1) >= 85")" \
        "$SQL_S s (median of 3), reading the trace and indexes included"
    row "export sqlite, $((REPORT_N / 1000000))M (memory)" "$SQL_MB MiB" "<= 256 MiB" \
        "$(verdict "$SQL_MB <= 256")" "peak RSS"
    row "SQLite alone, $((REPORT_N / 1000000))M (rows/s)" "$(calc "$REPORT_N / $FLOOR_S / 1e6" 2) M/s" \
        - - "$FLOOR_S s: the export runs at $(calc "$FLOOR_S * 100 / $SQL_S" 0) % of it"
fi
if [[ -n $AN1_S ]]; then
    row "analyze, $ANALYZE_TRACES x $((ANALYZE_N / 1000000))M, 1 worker" "$AN1_S s" - - \
        "$(calc "$ANALYZE_TRACES * $ANALYZE_N / $AN1_S / 1e6" 2) M records/s; straggler found"
    row "analyze, $ANALYZE_TRACES x $((ANALYZE_N / 1000000))M, 2 workers" "$AN2_S s" - - \
        "$(calc "$AN1_S / $AN2_S" 2)x the 1-worker speed ($(nproc) CPUs)"
fi
if [[ -n $HAVE_TORCH ]]; then
    row "torch op added (CPU, torch.add)" "$T_ON ns" "<= 500 ns" "$(verdict "$T_ON <= 500")" \
        "$(calc "$T_ON / $T_TORCH" 2)x torch.profiler's +$T_TORCH ns; baseline $TOPS_PLAIN ns"
    row "torch op added, window closed" "$T_CLOSED ns" "<= 50 ns" "$(verdict "$T_CLOSED <= 50")" \
        "OPPROF_DELAY: callbacks off"
    row "torch op added, ctl stop" "$T_PAUSED ns" "<= 50 ns" "$(verdict "$T_PAUSED <= 50")" \
        "OPPROF_PAUSED=1 (opprof ctl stop)"
    row "CNN training added wall" "$C_ON ms" "<= 0.5x" \
        "$(verdict "$C_ON <= 0.5 * $C_TORCH")" \
        "$(calc "$C_ON / $C_TORCH" 2)x torch.profiler's +$C_TORCH ms; baseline $TCNN_PLAIN ms"
fi
if [[ -n $HAVE_TORCH ]]; then
    for model in lm cnn; do
        plain=$(eval echo "\$M_${model}_plain") ops=$(eval echo "\$OPS_${model}")
        torch_ns=$(calc "($(eval echo "\$M_${model}_torch") - $plain) * 1e6 / $ops" 0)
        for tier in full lean; do
            ns=$(calc "($(eval echo "\$M_${model}_$tier") - $plain) * 1e6 / $ops" 0)
            target=500
            [[ $tier == lean ]] && target=200
            row "$model, $tier: added per op (wall)" "$ns ns" "<= $target ns" "$(verdict "$ns <= $target")" \
                "$(calc "$ns / $torch_ns" 2)x torch.profiler's +$torch_ns ns; $ops ops, $plain ms a unit"
        done
        full_ns=$(calc "($(eval echo "\$M_${model}_full") - $plain) * 1e6 / $ops" 0)
        row "$model, full against torch.profiler" "$(calc "$full_ns / $torch_ns" 2)x" "<= 0.33x" \
            "$(verdict "$full_ns <= $torch_ns / 3")" "added wall per op, same runs"
        u15=$(eval echo "\$UNITS15_$model")
        for tier in opprof lean; do
            w=$(calc "(($(eval echo "\$W_${model}_${tier}_16") - $(eval echo "\$W_${model}_${tier}_1")) - ($(eval echo "\$W_${model}_plain_16") - $(eval echo "\$W_${model}_plain_1"))) * 1e9 / ($u15 * $ops)" 0)
            row "$model, $tier: whole-process CPU per op" "$w ns" - - \
                "program and collector, 15 rounds of steady state (opprof run)"
        done
    done
fi
row "clock_gettime(MONOTONIC) read" "$CG ns" - - "$(calc "$CG / $TSC" 1)x rdtsc"
row "rdtsc read" "$TSC ns" - - baseline
echo "(a report: the exit status does not depend on the targets)"
