#!/usr/bin/env bash
# Installs the Debian packages opprof builds, tests and benchmarks with:
# as root, with apt-get (update first); otherwise names what is missing.
set -euo pipefail

required=(gcc make pkg-config check libopenblas-dev uthash-dev libunwind-dev)
# Real clients for the end-to-end tests (they skip, saying so, without them)
# and the tools the benchmark compares against; libdnnl-dev, libxnnpack-dev and
# libpthreadpool-dev: the oneDNN and XNNPACK test programs (tests/cpulibs,
# built only with those headers; the preload needs none); chromium: the
# headless-browser checks of the HTML and Chrome trace exports; time:
# /usr/bin/time for the report and export figures of make bench;
# libtorch-dev and g++: torch's C++ headers and the compiler that the torch
# shim is built with (preload/torch; without them, torch programs get the
# library-level view); python3-dev: the interpreter's headers, for Python
# frames in code stacks; clang and libclang-rt-dev: libFuzzer for make fuzz
# and the fuzz step of make test (clang only recommends the runtime, and
# recommends are not installed here; without them the step replays its
# seeds under gcc's sanitizers); libsqlite3-dev: `opprof export sqlite`
# (without it the export is refused in one line); python3-dask,
# python3-distributed and python3-pandas: `opprof analyze` (without them it
# says so in one line); libncurses-dev: `opprof top`'s full screen (without
# it, top writes plain snapshots); tmux: the end-to-end test that drives
# that screen and `opprof run`'s progress line in a real terminal.
optional=(zlib1g-dev python3-numpy python3-torch libtorch-dev g++ python3-dev ltrace uftrace libdnnl-dev libxnnpack-dev
          libpthreadpool-dev chromium time clang libclang-rt-dev libsqlite3-dev
          python3-dask python3-distributed python3-pandas libncurses-dev tmux)

missing() {
    local p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
    done
}

mapfile -t need < <(missing "${required[@]}" "${optional[@]}")
[ "${#need[@]}" -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "opprof: installing ${need[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
    exit 0
fi

mapfile -t need_req < <(missing "${required[@]}")
if [ "${#need_req[@]}" -gt 0 ]; then
    echo "opprof: missing Debian packages: ${need_req[*]}" >&2
    echo "opprof: install them with: sudo apt-get install ${need[*]}" >&2
    exit 1
fi
echo "opprof: optional packages missing (tests using them are skipped): ${need[*]}" >&2
echo "opprof: install them with: sudo apt-get install ${need[*]}" >&2
