#!/usr/bin/env bash
# A run under ThreadSanitizer (make test, make test-tsan):
#   tsan-run.sh DIR CMD...   CMD with every process it starts writing its
#                            reports under DIR (emptied first); fails when
#                            any report was written, showing them
# handle_segv=0: the suites' own crashes die of their signal, as the tests
# expect.
set -uo pipefail
dir=$1
shift
rm -rf "$dir" && mkdir -p "$dir" || exit 2
TSAN_OPTIONS="handle_segv=0 log_path=$dir/tsan suppressions=$(dirname "$0")/tsan.supp" "$@"
rc=$?
if ls "$dir" | grep -q .; then
    cat "$dir"/*
    echo "tsan-run: ThreadSanitizer reports above (files in $dir)"
    exit 1
fi
exit $rc
