#!/bin/sh
# Benchmark of `profcollect convert -nl` against perf2bolt -nl on the same ~1M-sample perf.data.
# Run by hand (not by ctest); needs root-level perf access, gcc, perf, perf2bolt, /usr/bin/time.
#
# Usage: convert_bench.sh [-k] [PROFCOLLECT]
#   PROFCOLLECT  the profcollect executable (default: build/profcollect in the repository)
#   -k           keep the work directory (binary, perf.data, both fdata) and print its path
#   BENCH_SAMPLES=N in the environment changes the target sample count (default 1000000)
#
# What it does: builds the seed program (tests/fixtures/src/hot.c) with gcc, so that perf2bolt
# maps it and its output is a reference; records two concurrent processes of it with
# `perf record -e cpu-clock -c 20000`, the number of rounds calibrated so the file holds about
# BENCH_SAMPLES samples; then runs each converter under /usr/bin/time -v and prints wall time,
# peak RSS and the ratios against the targets (20x faster, 1/10 of the memory), and how close
# convert is to its floor: read_floor (built beside profcollect, tests/bench/read_floor.cpp),
# the file read from page cache and each record decoded once, with nothing resolved or written.
#
# Peak RSS is what /usr/bin/time reports: the largest of the process and the children it waited
# for, not their sum. perf2bolt's `perf script` children run concurrently with it, so its figure
# understates what perf2bolt's whole job holds at once; ours has no children.
#
# Exit status: 0 outputs equal and both targets met; 1 outputs differ or a run failed;
# 3 outputs equal but a target missed; 2 usage or missing tools.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
perf2bolt=/usr/lib/llvm-19/bin/perf2bolt
target_samples=${BENCH_SAMPLES:-1000000}
period=20000

keep=0
if [ "${1:-}" = "-k" ]; then
    keep=1
    shift
fi
profcollect=${1:-$repo/build/profcollect}
read_floor=$(dirname "$profcollect")/tests/read_floor
if [ ! -x "$profcollect" ]; then
    echo "convert_bench: no profcollect executable at $profcollect (give its path)" >&2
    exit 2
fi
for tool in gcc perf "$perf2bolt" /usr/bin/time awk; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "convert_bench: $tool not found (apt-get install -y time for /usr/bin/time)" >&2
        exit 2
    fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/profcollect-bench.XXXXXX")
cleanup() {
    if [ "$keep" = 1 ]; then
        echo "work directory kept: $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
cd "$work"

gcc -O2 -g -Wl,--emit-relocs -o hot "$repo/tests/fixtures/src/hot.c"

# Samples per round under sampling (the sampling itself slows the program down on a VM, so
# time it as recorded, not bare).
perf record -q -N --buildid-mmap -e cpu-clock -c "$period" -o calibrate.data -- ./hot 40 >/dev/null
calibration_samples=$(perf report -i calibrate.data --stats 2>/dev/null |
    awk '/SAMPLE events:/ {print $3; exit}')
rounds=$(awk -v want="$target_samples" -v got="$calibration_samples" \
    'BEGIN { r = int(want / 2 / (got / 40) + 0.5); print (r < 1 ? 1 : r) }')
echo "recording 2 processes x $rounds rounds, cpu-clock every ${period} ns (target $target_samples samples)..."

perf record -q -N --buildid-mmap -e cpu-clock -c "$period" -o bench.data -- \
    sh -c "./hot $rounds >/dev/null & ./hot $rounds >/dev/null; wait"
samples=$(perf report -i bench.data --stats 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}')
echo "perf.data: $(wc -c <bench.data) bytes, $samples samples"

# Runs "$@" under /usr/bin/time -v; sets wall (seconds, from the clock: time -v rounds to 10 ms)
# and rss (KiB, from time -v).
measure() {
    label=$1
    shift
    start=$(date +%s%N)
    if ! /usr/bin/time -v -o "$label.time" "$@" >"$label.log" 2>&1; then
        echo "convert_bench: $label failed:" >&2
        cat "$label.log" >&2
        exit 1
    fi
    end=$(date +%s%N)
    wall=$(awk -v ns=$((end - start)) 'BEGIN { printf "%.3f", ns / 1e9 }')
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$label.time")
}

cat bench.data >/dev/null  # into the page cache, for every reader alike
measure floor "$read_floor" bench.data
floor_wall=$wall
floor_rss=$rss
measure profcollect "$profcollect" convert -nl -q -p bench.data -o profcollect.fdata ./hot
ours_wall=$wall
ours_rss=$rss
measure perf2bolt "$perf2bolt" -p bench.data -o perf2bolt.fdata -nl ./hot
ref_wall=$wall
ref_rss=$rss

printf '%-12s %10s %14s\n' tool "wall (s)" "peak RSS (KiB)"
printf '%-12s %10s %14s\n' profcollect "$ours_wall" "$ours_rss"
printf '%-12s %10s %14s\n' perf2bolt "$ref_wall" "$ref_rss"
printf '%-12s %10s %14s\n' read_floor "$floor_wall" "$floor_rss"

status=0
sort profcollect.fdata >profcollect.sorted
sort perf2bolt.fdata >perf2bolt.sorted
if cmp -s profcollect.sorted perf2bolt.sorted; then
    echo "outputs: equal, sorted ($(wc -l <perf2bolt.sorted) lines)"
else
    echo "outputs: DIFFERENT (sorted; < perf2bolt, > profcollect)"
    diff perf2bolt.sorted profcollect.sorted | head -20
    status=1
fi

awk -v ow="$ours_wall" -v rw="$ref_wall" -v orss="$ours_rss" -v rrss="$ref_rss" -v fw="$floor_wall" 'BEGIN {
    speed = (ow > 0) ? rw / ow : 1e9
    memory = (rrss > 0) ? orss / rrss : 1e9
    printf "speed-up:     %.1fx  (target >= 20x: %s)\n", speed, (speed >= 20 ? "met" : "MISSED")
    printf "memory ratio: %.3f  (target <= 0.10: %s)\n", memory, (memory <= 0.10 ? "met" : "MISSED")
    printf "floor:        convert takes %.2fx the time of reading and decoding the file alone\n", (fw > 0) ? ow / fw : 0
    exit (speed >= 20 && memory <= 0.10) ? 0 : 3
}' || { [ "$status" = 0 ] && status=3; }
exit "$status"
