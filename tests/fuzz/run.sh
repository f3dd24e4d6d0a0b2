#!/usr/bin/env bash
# Runs the fuzz targets (tests/fuzz/fuzz.mk calls it; HACKING.md, "Fuzzing").
#   run.sh check CC                   0 when CC links -fsanitize=fuzzer; else 1
#                                      and why on stdout
#   run.sh fuzz [--fresh] DIR SECONDS TARGET...
#                                      libFuzzer: each DIR/fuzz_TARGET for SECONDS
#                                      on DIR/corpus/TARGET (it adds what it finds
#                                      there), DIR/seeds/TARGET and regress/TARGET;
#                                      a failing input goes to DIR/crashes/TARGET/
#                                      (log: DIR/fuzz_TARGET.log). --fresh: on an
#                                      empty DIR/test-corpus/TARGET instead, so that
#                                      a corpus grown by long runs does not make
#                                      a short one longer (make test)
#   run.sh replay DIR TARGET...        gcc: DIR/replay/fuzz_TARGET once on each seed
#                                      and regression input (log: DIR/replay_TARGET.log)
#   run.sh test CC DIR SECONDS TARGET...
#                                      make test's step: fuzz --fresh when CC links
#                                      libFuzzer, else replay, saying why
# A failure exits 1 and names the input.
set -uo pipefail

regress=$(dirname "$0")/regress

case ${1:-} in
check)
    cc=$2
    if ! command -v "$cc" >/dev/null 2>&1; then
        echo "$cc not found (Debian package: clang)"
        exit 1
    fi
    bin=$(mktemp)
    trap 'rm -f "$bin"' EXIT
    if ! printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }\n' |
        "$cc" -fsanitize=fuzzer,address,undefined -x c - -o "$bin" >/dev/null 2>&1; then
        echo "$cc cannot link -fsanitize=fuzzer (its libFuzzer runtime is Debian's libclang-rt-dev)"
        exit 1
    fi
    exit 0
    ;;
fuzz)
    corpus=corpus
    if [ "$2" = --fresh ]; then
        corpus=test-corpus
        shift
    fi
    dir=$2 secs=$3
    shift 3
    for t in "$@"; do
        [ $corpus = test-corpus ] && rm -rf "${dir:?}/$corpus/$t"
        mkdir -p "$dir/$corpus/$t" "$dir/crashes/$t"
        dirs=("$dir/$corpus/$t" "$dir/seeds/$t")
        [ -d "$regress/$t" ] && dirs+=("$regress/$t")
        log=$dir/fuzz_$t.log
        printf '  %-7s %s\n' FUZZ "fuzz_$t for $secs s (log: $log)"
        if ! "$dir/fuzz_$t" -max_total_time="$secs" -timeout=25 -print_final_stats=1 \
            -artifact_prefix="$dir/crashes/$t/" "${dirs[@]}" >"$log" 2>&1; then
            tail -n 60 "$log" >&2
            input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
            echo "opprof: fuzz_$t failed on ${input:-an input (see $log)}" >&2
            [ -n "$input" ] && echo "opprof: reproduce with: $dir/fuzz_$t $input" >&2
            exit 1
        fi
        # "#1234 DONE cov: 2100 ft: 5400 corp: 80/1Mb ..." and the final stats
        done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)
        cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")
        ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")
        corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$done_line")
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
        echo "fuzz_$t: ${runs:-?} runs (${rate:-?}/s), coverage ${cov:-?} edges, ${ft:-?} features," \
            "corpus ${corp:-?} inputs, no failure"
    done
    ;;
replay)
    dir=$2
    shift 2
    for t in "$@"; do
        dirs=("$dir/seeds/$t")
        [ -d "$regress/$t" ] && dirs+=("$regress/$t")
        log=$dir/replay_$t.log
        printf '  %-7s %s\n' REPLAY "fuzz_$t (log: $log)"
        if ! "$dir/replay/fuzz_$t" "${dirs[@]}" >"$log" 2>&1; then
            tail -n 60 "$log" >&2
            input=$(sed -n 's/^Running: //p' "$log" | tail -n 1)
            echo "opprof: fuzz_$t failed on ${input:-an input (see $log)}" >&2
            [ -n "$input" ] && echo "opprof: reproduce with: $dir/replay/fuzz_$t $input" >&2
            exit 1
        fi
        tail -n 1 "$log"
    done
    ;;
test)
    cc=$2 dir=$3 secs=$4
    shift 4
    if why=$("$0" check "$cc"); then
        exec "$0" fuzz --fresh "$dir" "$secs" "$@"
    fi
    echo "opprof: libFuzzer run skipped: $why; the seeds replayed under gcc's ASan/UBSan instead"
    exec "$0" replay "$dir" "$@"
    ;;
*)
    echo "usage: run.sh check CC | fuzz DIR SECONDS TARGET... | replay DIR TARGET... |" \
        "test CC DIR SECONDS TARGET..." >&2
    exit 2
    ;;
esac
