#!/bin/sh
# Bounded state of a long system-wide run. Run by hand (not by ctest), as root; needs gcc.
#
# Usage: live_rss_bench.sh [-k] [PROFCOLLECT]
#   PROFCOLLECT        the profcollect executable (default: build/profcollect in the repository)
#   -k                 keep the work directory and print its path
#   BENCH_SECONDS=N    length of the run (default 600, at least 180); the first 60 s are the
#                      warm-up
#
# `profcollect -a` collects every process, flushing every 10 s, while a workload keeps
# starting short-lived processes, each mapping a shared library freshly linked for it (its own
# file, inode and build-id: a new image every time, which no process maps once it exits; kept
# on disk for the next 50 processes, so that it can still be opened when its records are read).
# profcollect's VmRSS (with its anonymous and file-backed parts) is read every second.
#
# Growth compares like with like: the minute after the warm-up with the last minute of the run,
# each window holding six 10 s flush cycles. Growth = the larger of (mean of the last minute /
# mean of the first - 1) and (largest of the last minute / largest of the first - 1); it must
# stay under 5%: an image no process maps any more is released once its profile is flushed, and
# what rendering decoded for an image still mapped is freed after each flush. A flush's own
# transient (rendering and writing what changed, then freeing it) is printed beside, as the
# largest minus the smallest RSS of each window: it recurs every flush, so it is no growth, but
# it is memory an operator sees. profcollect does not profile itself (its samples are counted
# as own_samples), so its own debug info is not rendered at each flush. The run is
# system-wide: whatever else runs on the machine meanwhile is profiled too and counts in the
# figures (a large program with debug info that starts late adds its rendering to the last
# minute).
#
# Exit status: 0 target met; 3 target missed; 1 a run failed; 2 usage or missing tools.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_lib.sh"
repo=$(cd "$here/../.." && pwd)
seconds=${BENCH_SECONDS:-600}
warmup=60
keep=0
if [ "${1:-}" = "-k" ]; then
    keep=1
    shift
fi
profcollect=${1:-$repo/build/profcollect}
[ -x "$profcollect" ] || { echo "live_rss_bench: no profcollect executable at $profcollect" >&2; exit 2; }
command -v gcc >/dev/null || { echo "live_rss_bench: gcc not found" >&2; exit 2; }
[ "$seconds" -ge $((warmup + 120)) ] || { echo "live_rss_bench: BENCH_SECONDS must be at least $((warmup + 120))" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/profcollect-rss-bench.XXXXXX")
pc=""
loop=""
cleanup() {
    [ -n "$loop" ] && kill "$loop" 2>/dev/null || true
    [ -n "$pc" ] && kill "$pc" 2>/dev/null || true
    wait 2>/dev/null || true
    if [ "$keep" = 1 ]; then echo "work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
cd "$work"

new_image_workload_build "$work"
new_image_workload_start "$work"
loop=$workload_pid

"$profcollect" -q -a -e cpu-clock -F 1000 --flush-interval 10 -o "$work/out" &
pc=$!
: >rss.log
sample_process "$pc" "$seconds" rss.log || { echo "live_rss_bench: profcollect exited early" >&2; exit 1; }
kill -INT "$pc"
wait "$pc" || { echo "live_rss_bench: profcollect failed" >&2; exit 1; }
pc=""
kill "$loop" 2>/dev/null || true
wait "$loop" 2>/dev/null || true
loop=""

dirs=$(find out -mindepth 1 -maxdepth 1 -type d | wc -l)
echo "run of $seconds s: $(grep -o '"samples": *[0-9]*' out/collection.json | head -1), $dirs profiled binaries"
growth_report rss.log "$warmup" "$seconds" 2 RSS KiB
