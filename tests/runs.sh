#!/usr/bin/env bash
# make test's runs (tests/tests.mk): each suite of each pass, and each fuzz
# target, is a job of its own that make runs beside the others.
#   runs.sh run LOG CMD...     CMD with its output in LOG and its exit status
#                              in LOG.rc, then one line saying what it said
#                              (its checks, or its last line); exits 0, so
#                              that make goes on with the other runs
#   runs.sh sum DIR PASS...    what the runs under DIR/PASS/ said, pass by
#                              pass: each run's own lines under its name
#                              (skips, notes, a fuzz target's result, a
#                              failure's tail), then each pass's totals as
#                              Check writes them, its failures below; exits
#                              1 when a run failed
# A run is a failure when Check counts a failure or an error, or when it
# exits non-zero (a runner that crashed, LeakSanitizer in the runner, a
# fuzz target that failed).
set -uo pipefail

# Check's own lines (CK_NORMAL): "Running suite(s): A" and " B" for each
# further suite, the totals, then "FILE:LINE:F|E:TCASE:TEST:ITER: MESSAGE".
totals_re='^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+$'
failure_re='^[^ :]+:[0-9]+:[FE]:[^:]*:[^:]*:[0-9]+: '
counts_re='.*Checks: ([0-9]+), Failures: ([0-9]+), Errors: ([0-9]+)'

case ${1:-} in
run)
    log=$2
    shift 2
    mkdir -p "$(dirname "$log")"
    t0=$EPOCHREALTIME
    "$@" >"$log" 2>&1
    rc=$?
    echo "$rc" >"$log.rc"
    secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
    name=${log%.log}
    name=${name#"${name%/*/*}/"}
    said=$(grep -E "$totals_re" "$log" | tail -n 1)
    if [ -n "$said" ]; then
        read -r n f e < <(sed -E "s/$counts_re/\\1 \\2 \\3/" <<<"$said")
        said="$n checks, $f failures, $e errors"
    else
        said=$(tail -n 1 "$log")
    fi
    [ "$rc" -ne 0 ] && said="$said; exit status $rc"
    printf '  %-7s %s\n' RAN "$name: $said ($secs s)"
    exit 0
    ;;
sum)
    dir=$2
    shift 2
    status=0
    blocks=""
    for pass in "$@"; do
        logs=("$dir/$pass"/*.log)
        [ -e "${logs[0]}" ] || continue
        # a pass of Check runners, or of other commands (the fuzz targets)
        check=0
        grep -qs '^Running suite(s): ' "${logs[@]}" && check=1
        n=0 f=0 e=0
        failures=""
        for log in "${logs[@]}"; do
            rc=$(cat "$log.rc" 2>/dev/null || echo "none")
            name=$pass/$(basename "$log" .log)
            # its own lines, under its name
            awk -v t="$totals_re" -v f="$failure_re" -v name="$name" '
                /^Running suite\(s\): / { head = 1; next }
                head && /^ [A-Za-z0-9_]+$/ { next }
                { head = 0 }
                $0 ~ t || $0 ~ f { next }
                !named++ { print name ":" }
                { print "  " $0 }' "$log"
            said=$(grep -E "$totals_re" "$log" | tail -n 1)
            if [ -n "$said" ]; then
                read -r a b c < <(sed -E "s/$counts_re/\\1 \\2 \\3/" <<<"$said")
                n=$((n + a)) f=$((f + b)) e=$((e + c))
                failures+=$(grep -E "$failure_re" "$log")$'\n'
                [ "$rc" = 0 ] || [ $((b + c)) -gt 0 ] && continue
                failures+="$name: exit status $rc after Check's totals (log: $log)"$'\n'
            elif [ "$rc" != 0 ]; then
                failures+="$name: exit status $rc, without Check's totals (log: $log)"$'\n'
            else
                continue
            fi
            e=$((e + 1))
            status=1
            [ "$check" = 1 ] || echo "$name: exit status $rc (log: $log)"
        done
        [ $((f + e)) -gt 0 ] && status=1
        [ "$check" = 1 ] || continue
        pct=$(awk -v n=$n -v bad=$((f + e)) 'BEGIN { print bad == 0 ? 100 : n == 0 ? 0 : int((n - bad) / n * 100) }')
        blocks+="$pass (${#logs[@]} runs):"$'\n'"$pct%: Checks: $n, Failures: $f, Errors: $e"$'\n'
        failures=$(grep -v '^$' <<<"$failures")
        [ -n "$failures" ] && blocks+="$failures"$'\n'
    done
    printf '%s' "$blocks"
    exit $status
    ;;
*)
    echo "usage: runs.sh run LOG CMD... | sum DIR PASS..." >&2
    exit 2
    ;;
esac
