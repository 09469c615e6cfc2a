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

cat >main.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char** argv) {
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  unsigned (*work)(unsigned) = (unsigned (*)(unsigned))dlsym(lib, "work");
  return work ? (int)(work(3000000) & 1) : 1;
}
C
cat >lib.c <<'C'
unsigned work(unsigned n) {
  volatile unsigned x = 1;
  for (unsigned i = 0; i < n; ++i) x = x * 1664525u + 1013904223u;
  return x;
}
C
gcc -O2 -o main main.c -ldl
gcc -O2 -g -fPIC -c -o lib.o lib.c

# The workload: every process maps a library linked for it, with a build-id of its own (a new
# image), kept on disk for a while after the process exits, as a build tree keeps its outputs.
(
    i=0
    while :; do
        i=$((i + 1))
        ld -shared --build-id=0x"$(printf '%040x' "$i")" -o "lib$i.so" lib.o
        ./main "$work/lib$i.so" || true
        rm -f "lib$((i - 50)).so"
    done
) >/dev/null 2>&1 &
loop=$!

"$profcollect" -q -a -e cpu-clock -F 1000 --flush-interval 10 -o "$work/out" &
pc=$!
: >rss.log
t=0
while [ "$t" -lt "$seconds" ]; do
    sleep 1
    t=$((t + 1))
    rss=$(awk '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 } /^RssFile:/ { f = $2 }
               END { if (r != "") print r, a, f }' "/proc/$pc/status" 2>/dev/null || true)
    if [ -z "$rss" ]; then
        echo "live_rss_bench: profcollect exited early" >&2
        exit 1
    fi
    echo "$t $rss" >>rss.log
done
kill -INT "$pc"
wait "$pc" || { echo "live_rss_bench: profcollect failed" >&2; exit 1; }
pc=""
kill "$loop" 2>/dev/null || true
wait "$loop" 2>/dev/null || true
loop=""

dirs=$(find out -mindepth 1 -maxdepth 1 -type d | wc -l)
echo "run of $seconds s: $(grep -o '"samples": *[0-9]*' out/collection.json | head -1), $dirs profiled binaries"
awk -v w="$warmup" -v n="$seconds" '
    function window(from, to, which,    t, sum, count, top, low) {
        sum = 0; count = 0; top = 0; low = -1
        for (t = from; t <= to; t++) {
            if (!(t in rss)) continue
            sum += rss[t]; count++
            if (rss[t] > top) top = rss[t]
            if (low < 0 || rss[t] < low) low = rss[t]
        }
        mean[which] = count ? sum / count : 0; peak[which] = top; trough[which] = low
    }
    { rss[$1] = $2 }
    END {
        window(w + 1, w + 60, "first")
        window(n - 59, n, "last")
        printf "RSS KiB, minute after the warm-up (%d-%d s): mean %d, largest %d, smallest %d\n",
               w + 1, w + 60, mean["first"], peak["first"], trough["first"]
        printf "RSS KiB, last minute (%d-%d s): mean %d, largest %d, smallest %d\n",
               n - 59, n, mean["last"], peak["last"], trough["last"]
        printf "flush transient (largest - smallest): %d KiB first, %d KiB last\n",
               peak["first"] - trough["first"], peak["last"] - trough["last"]
        by_mean = mean["first"] > 0 ? mean["last"] / mean["first"] - 1 : 1
        by_peak = peak["first"] > 0 ? peak["last"] / peak["first"] - 1 : 1
        growth = by_mean > by_peak ? by_mean : by_peak
        printf "growth after the first minute: %.1f%% by the mean, %.1f%% by the largest (target < 5%%: %s)\n",
               100 * by_mean, 100 * by_peak, growth < 0.05 ? "met" : "MISSED"
        exit growth < 0.05 ? 0 : 3
    }' rss.log
