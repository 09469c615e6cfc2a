#!/usr/bin/env bash
# Builds profcollect without its optional parts (-DPROFCOLLECT_WITH_BPF=OFF
# -DPROFCOLLECT_WITH_SYSTEMD=OFF, no tests) into build-minimal (or BUILD_DIR), then checks that
# it converts: a small program recorded with perf is converted by this build and by the full
# one (build/, or FULL_BUILD_DIR), and the two profiles must be byte-equal. It also checks that
# the minimal binary links neither libbpf nor libsystemd, and that it says so when asked for
# the BPF engine.
#
#   tests/minimal_build.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-minimal}
full=${FULL_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPROFCOLLECT_WITH_BPF=OFF \
    -DPROFCOLLECT_WITH_SYSTEMD=OFF -DPROFCOLLECT_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target profcollect -j"$(nproc)"
[ -x "$full/profcollect" ] || cmake --build "$full" --target profcollect -j"$(nproc)"

if ldd "$build/profcollect" | grep -E "libbpf|libsystemd"; then
    echo "minimal build: profcollect links what it was built without" >&2
    exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -g -o "$work/hot" "$root/tests/fixtures/src/hot.c"
perf record -q --buildid-mmap -e cpu-clock -o "$work/hot.data" -- "$work/hot" 300 >/dev/null 2>&1
"$build/profcollect" convert -q -p "$work/hot.data" -o "$work/minimal.fdata" -nl "$work/hot"
"$full/profcollect" convert -q -p "$work/hot.data" -o "$work/full.fdata" -nl "$work/hot"
cmp "$work/minimal.fdata" "$work/full.fdata"
[ "$(grep -c . "$work/minimal.fdata")" -gt 1 ] || { echo "minimal build: an empty profile" >&2; exit 1; }

# Asked for the BPF engine, the minimal build says it has none (exit 2: a setting it cannot meet).
set +e
message=$("$build/profcollect" --engine bpf -o "$work/out" -- true 2>&1)
status=$?
set -e
if [ "$status" -eq 0 ] || ! grep -q "no BPF engine" <<<"$message"; then
    echo "minimal build: --engine bpf gave status $status: $message" >&2
    exit 1
fi
echo "minimal build: converts as the full build does ($(grep -c . "$work/minimal.fdata") lines), without libbpf and libsystemd"
