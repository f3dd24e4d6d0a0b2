#!/usr/bin/env bash
# The layering rules, read from the #include "..." lines (make test runs it):
#   1. no cycle between the modules of common/, collector/, preload/, report/
#      (a module: NAME.c and NAME.h in one folder, so that a.c including b.h
#      while b.c includes a.h is a cycle, as it is in the calls);
#   2. no cycle between the folders of report/ (tool, analysis, views, exports);
#   3. preload/: core/ and tables/ include no feature; a feature (libs/,
#      cuda/, nvtx/, stacks/) includes the core, the tables and itself only.
# A quoted include is looked up next to the including file, then in its
# layer's root (preload/ or report/), then in common/; others (system and
# generated headers) are not ours. Usage: scripts/check-layers.sh [ROOT]
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

check() {
    local root=$1 edges bad=0
    edges=$(cd "$root" && find common collector preload report -name '*.[chS]' 2>/dev/null | sort |
        while read -r f; do
            layer=${f%%/*}
            sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
                while read -r inc; do
                    for cand in "$(dirname "$f")/$inc" "$layer/$inc" "common/$inc"; do
                        cand=$(realpath -m --relative-to=. "$cand")
                        if [ -f "$cand" ]; then
                            [ "$cand" != "$f" ] && printf '%s %s\n' "$f" "$cand"
                            break
                        fi
                    done
                done
        done)
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
        if (to == "core" && from != "tables") next;
        print "  " $1 " includes " $2 }')
    if [ -n "$wrong" ]; then
        echo "preload/ layering: only the core and the tables are below a feature:" >&2
        printf '%s\n' "$wrong" >&2
        bad=1
    fi
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
    return $fails
}

if [ "${1:-}" = --self-test ]; then
    self_test && echo "check-layers: self-test passed (6 trees)"
    exit
fi
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
check "$root"
echo "check-layers: no include cycle; preload/ and report/ layered"
