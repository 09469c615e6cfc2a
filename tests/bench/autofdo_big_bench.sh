#!/bin/sh
# AutoFDO of a big binary, run by hand (not by ctest); needs perf access, llvm-19 tools and
# /usr/bin/time. Usage: autofdo_big_bench.sh [PROFCOLLECT]   (default: build/profcollect, which
# must be a RelWithDebInfo build: it is the big binary with DWARF that is profiled)
#
# The binary profiled is profcollect itself (about 100 MB with its DWARF). It converts a
# recording of the AutoFDO fixture program over and over while perf samples it (cpu-clock, 10 kHz
# per CPU), until the recording holds at least BENCH_SAMPLES (default 100000) samples of it. That
# recording is then converted to an AutoFDO profile of the big binary by `profcollect convert
# --format autofdo` and by the oracles.md pipeline (`perf script` + awk + `llvm-profgen-19
# --leading-ip-only`): wall time and peak RSS of each, their ratios, and whether the profiles are
# equal after `llvm-profdata-19 merge --sample --text` (and in how many lines they differ).
# BENCH_KEEP=1 keeps the working directory (the recording, both profiles) and prints its path.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$here/bench_lib.sh"
pc=${1:-$repo/build/profcollect}
samples=${BENCH_SAMPLES:-100000}
work=$(mktemp -d)
if [ -n "${BENCH_KEEP:-}" ]; then
    echo "working directory: $work"
else
    trap 'rm -rf "$work"' EXIT
fi
cd "$work"
cp "$pc" ./big
echo "big binary: $(du -m big | cut -f1) MB, $(readelf -S big | grep -c ' .debug_') debug sections"

# The workload the big binary runs: converting a recording of the fixture program.
src=$repo/tests/fixtures/autofdo_src
clang++-19 -O2 -gline-tables-only -fdebug-info-for-profiling -o hot "$src/hot_main.cpp" \
    "$src/hot_work.cpp"
perf record -q --buildid-mmap -e cpu-clock -c 20000 -o hot.data -- ./hot 400 >/dev/null 2>&1
cat >loop.sh <<'SH'
while [ ! -e stop ]; do ./big convert -q -p hot.data --format autofdo -o /dev/null ./hot; done
SH
# 10 kHz of one busy process: the samples wanted take samples/10000 seconds of its CPU time.
seconds=$((samples / 10000 + 2))
while :; do
    rm -f stop
    perf record -q --buildid-mmap -e cpu-clock -c 100000 -o big.data -- sh loop.sh \
        >/dev/null 2>&1 &
    recorder=$!
    sleep "$seconds"
    touch stop
    wait "$recorder" || true
    n=$(perf script -i big.data -F ip --comm big 2>/dev/null | wc -l)
    [ "$n" -ge "$samples" ] && break
    seconds=$((seconds * 3 / 2))  # a loaded machine gave the loop less CPU: longer
done
echo "recording: $n samples of the big binary"

autofdo_ip_vs_profgen "$pc" big.data ./big
echo "(the targets: 10x faster, 10x less memory)"
