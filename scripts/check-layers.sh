#!/usr/bin/env bash
# The layering rules, read from the #include "..." lines (make test runs it):
#   1. no cycle between the modules of common/, collector/, preload/, report/
#      (a module: NAME.c and NAME.h in one folder, so that a.c including b.h
#      while b.c includes a.h is a cycle, as it is in the calls);
#   2. no cycle between the folders of report/ (tool, analysis, views, exports);
#   3. preload/: core/ and tables/ include no feature; a feature (libs/,
#      cuda/, nvtx/, stacks/) includes the core (its one header,
#      core/internal.h), the tables and itself only;
#   4. (--calls OBJDIR, on the built objects of preload/core/) the core's
#      files call downward only: a layer is a header of preload/core/ (its
#      rank: one more than the highest core header it includes, base.h 0),
#      a file's layer the highest it includes; no object uses a symbol
#      (function or variable, nm) that a file of a higher layer defines,
#      and the uses between files form no cycle.
# A quoted include is looked up next to the including file, then in its
# layer's root (preload/ or report/), then in common/; others (system and
# generated headers) are not ours. Usage: scripts/check-layers.sh [ROOT]
#   --calls OBJDIR [ROOT]: rule 4 on OBJDIR's objects (build/pic/preload/core).
#   --self-test: check that each rule catches a violation in a made-up tree.
set -euo pipefail

# Edges "from to" on stdin: 0, or 1 with the cycle said.
acyclic() {
    local out
    out=$(tsort 2>&1 >/dev/null) && return 0
    echo "include cycle between $1:" >&2
    printf '%s\n' "$out" | sed -n 's/^tsort: //p' | grep -v 'input contains a loop' | sed 's/^/  /' >&2
    return 1
}

# "FILE CAND1 CAND2 CAND3" lines on stdin (an include's places, in the
# order it is looked up), in the current folder: "FILE INCLUDED" for the
# first candidate that is a file, unless it is FILE itself. The candidates
# made canonical by one realpath for them all.
resolve() {
    local lines norm i=0 f c1 c2 c3 cand
    lines=$(cat)
    [ -n "$lines" ] || return 0
    mapfile -t norm < <(printf '%s\n' "$lines" | awk '{ print $2; print $3; print $4 }' |
        xargs -d '\n' realpath -m --relative-to=. --)
    while read -r f c1 c2 c3; do
        for cand in "${norm[i]}" "${norm[i + 1]}" "${norm[i + 2]}"; do
            if [ -f "$cand" ]; then
                [ "$cand" != "$f" ] && printf '%s %s\n' "$f" "$cand"
                break
            fi
        done
        i=$((i + 3))
    done <<<"$lines"
}

check() {
    local root=$1 edges bad=0
    # each quoted include, looked up next to its file, in its layer, in common/
    edges=$(cd "$root" && find common collector preload report -name '*.[chS]' 2>/dev/null | sort |
        xargs -r -d '\n' awk '
            FNR == 1 { layer = dir = FILENAME; sub(/\/.*/, "", layer); sub(/\/[^\/]*$/, "", dir) }
            /^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*"/ {
                inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
                print FILENAME, dir "/" inc, layer "/" inc, "common/" inc }' |
        resolve)
    # 1. modules
    printf '%s\n' "$edges" | sed '/^$/d; s/\.[chS]\( \|$\)/\1/g' | awk '$1 != $2' |
        acyclic "modules (NAME.c with NAME.h)" || bad=1
    # 2. report/ folders (a file directly in report/ counts as its own folder)
    local folders
    folders=$(printf '%s\n' "$edges" | awk '$1 ~ /^report\// && $2 ~ /^report\// {
        split($1, a, "/"); split($2, b, "/");
        fa = a[2] (length(a) > 2 ? "/" : ""); fb = b[2] (length(b) > 2 ? "/" : "");
        if (fa != fb) print fa, fb }' | sort -u)
    [ -z "$folders" ] || printf '%s\n' "$folders" | acyclic "report/ folders" || bad=1
    # 3. preload/ layers
    local wrong
    wrong=$(printf '%s\n' "$edges" | awk '$1 ~ /^preload\// && $2 ~ /^preload\// {
        split($1, a, "/"); split($2, b, "/");
        from = length(a) > 2 ? a[2] : ""; to = length(b) > 2 ? b[2] : "";
        if (from == to || to == "tables") next;
        if (to == "core" && from != "tables" && $2 == "preload/core/internal.h") next;
        print "  " $1 " includes " $2 }')
    if [ -n "$wrong" ]; then
        echo "preload/ layering: only the core (core/internal.h) and the tables are below a feature:" >&2
        printf '%s\n' "$wrong" >&2
        bad=1
    fi
    return $bad
}

# The rank of each file of preload/core/ under root $1: "FILE RANK" lines
# (a header: one more than the highest core header it includes; a .c: the
# highest it includes).
core_ranks() {
    (cd "$1/preload/core" && for f in *.[ch]; do
        sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"core\/\([^"]*\)".*/\1/p' "$f" |
            sed "s|^|$f |"
        echo "$f"
    done) | awk '
        NF == 2 { inc[$1] = inc[$1] " " $2 } { files[$1] = 1 }
        function rank(f,   n, a, i, r, best) {
            if (f in memo) return memo[f]
            if (f in busy) return 0 # a cycle: rule 1 says so
            busy[f] = 1; best = -1
            n = split(inc[f], a, " ")
            for (i = 1; i <= n; i++) { r = rank(a[i]); if (r > best) best = r }
            delete busy[f]
            memo[f] = f ~ /\.h$/ ? best + 1 : (best < 0 ? 0 : best)
            return memo[f]
        }
        END { for (f in files) print f, rank(f) }'
}

# Rule 4: objects OBJDIR/NAME.o of preload/core/NAME.c under root $2.
check_calls() {
    local objdir=$1 root=$2 ranks uses bad=0
    ranks=$(core_ranks "$root")
    uses=$(cd "$objdir" && for o in *.o; do nm "$o" | awk -v o="${o%.o}" '
        $1 == "U" { print "U", o, $2 } NF == 3 && $2 ~ /^[BDRTVW]$/ { print "D", o, $3 }'; done)
    local edges
    edges=$(printf '%s\n' "$uses" | awk '$1 == "D" { def[$3] = $2 }
        $1 == "U" { u[++n] = $2 " " $3 }
        END { for (i = 1; i <= n; i++) { split(u[i], a, " ");
              if ((a[2] in def) && def[a[2]] != a[1]) print a[1], def[a[2]], a[2] } }' | sort -u)
    local up
    up=$(printf '%s\n' "$edges" | awk -v ranks="$ranks" 'BEGIN {
            n = split(ranks, l, "\n"); for (i = 1; i <= n; i++) { split(l[i], a, " "); r[a[1]] = a[2] } }
        NF == 3 { rf = r[$1 ".c"]; rt = r[$2 ".c"];
            if (rt > rf) print "  " $1 ".c (layer " rf ") uses " $3 " of " $2 ".c (layer " rt ")" }')
    if [ -n "$up" ]; then
        echo "preload/core layering: a file calls up:" >&2
        printf '%s\n' "$up" >&2
        bad=1
    fi
    printf '%s\n' "$edges" | awk 'NF == 3 { print $1, $2 }' | sort -u |
        acyclic "preload/core files (uses of each other's symbols)" || bad=1
    return $bad
}

self_test() {
    local t fails=0
    t=$(mktemp -d)
    trap 'rm -rf "$t"' RETURN
    mk() { mkdir -p "$t/$1/$(dirname "$2")"; printf '#include "%s"\n' "${@:3}" > "$t/$1/$2"; }
    expect_fail() {
        if check "$t" 2>/dev/null; then echo "check-layers: self-test: missed $1" >&2; fails=1; fi
        rm -rf "${t:?}"/*
    }
    mk report analysis/a.h b.h; mk report analysis/b.h a.h
    expect_fail "a file cycle"
    mk report analysis/a.c b.h; mk report analysis/b.c a.h; mk report analysis/a.h; mk report analysis/b.h
    expect_fail "a module cycle"
    mk report analysis/m.h views/t.h; mk report views/t.h views/u.h; mk report views/u.h analysis/n.h
    mk report analysis/n.h ../common/x.h
    expect_fail "a report/ folder cycle"
    mk preload core/internal.h tables/funcs.h; mk preload tables/funcs.h; mk preload nvtx/n.c core/internal.h
    mk preload stacks/s.c nvtx/n.c
    expect_fail "a feature including another"
    mk preload core/internal.h tables/funcs.h; mk preload tables/funcs.h; mk preload cuda/c.h
    mk preload core/agent.c cuda/c.h
    expect_fail "the core including a feature"
    mk preload core/internal.h tables/funcs.h; mk preload tables/funcs.h; mk preload libs/b.c core/internal.h
    mk report views/t.c analysis/m.h; mk report analysis/m.h ../common/x.h
    if ! check "$t"; then echo "check-layers: self-test: refused a good tree" >&2; fails=1; fi
    rm -rf "${t:?}"/*
    mk preload core/internal.h core/base.h
    mk preload core/base.h tables/funcs.h; mk preload tables/funcs.h; mk preload nvtx/n.c core/base.h
    expect_fail "a feature including a core header other than core/internal.h"
    # rule 4: a two-layer core, compiled
    local c=$t/preload/core o=$t/obj
    mkdir -p "$c" "$o"
    printf 'int low(void);\n' > "$c/base.h"
    printf '#include "core/base.h"\nint high(void);\n' > "$c/top.h"
    calls_case() { # low.c's body, top.c's body, expected: ok or fail, what
        printf '#include "core/base.h"\n%s\n' "$1" > "$c/low.c"
        printf '#include "core/top.h"\n%s\n' "$2" > "$c/top.c"
        printf '#include "core/base.h"\nint aside(void) { return low(); }\n' > "$c/aside.c"
        for f in low top aside; do gcc -c -I"$t/preload" -o "$o/$f.o" "$c/$f.c" || return 1; done
        if check_calls "$o" "$t" 2>/dev/null; then [ "$3" = ok ]; else [ "$3" = fail ]; fi ||
            { echo "check-layers: self-test: $4" >&2; fails=1; }
    }
    calls_case 'int low(void) { return 1; }' 'int high(void) { return low(); }' ok "refused downward calls"
    calls_case 'int high(void); int low(void) { return high(); }' 'int high(void) { return low(); }' \
        fail "missed a call up"
    calls_case 'int aside(void); int low(void) { return aside(); }' 'int high(void) { return 0; }' \
        fail "missed a cycle in one layer"
    return $fails
}

if [ "${1:-}" = --self-test ]; then
    self_test && echo "check-layers: self-test passed (10 trees)"
    exit
fi
if [ "${1:-}" = --calls ]; then
    check_calls "$2" "${3:-$(cd "$(dirname "$0")/.." && pwd)}"
    echo "check-layers: preload/core's files call downward only"
    exit
fi
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
check "$root"
echo "check-layers: no include cycle; preload/ and report/ layered"
