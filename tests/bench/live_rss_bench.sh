#!/bin/sh
# Bounded state of a long system-wide run. Run by hand (not by ctest), as root; needs gcc.
#
# Usage: live_rss_bench.sh [-k] [PROFCOLLECT]
#   PROFCOLLECT        the profcollect executable (default: build/profcollect in the repository)
#   -k                 keep the work directory and print its path
#   BENCH_SECONDS=N    length of the run (default 600); the first 60 s are the warm-up
#
# `profcollect -a` collects every process, flushing every 10 s, while a workload keeps
# starting short-lived processes, each mapping a shared library freshly linked for it (its own
# file, inode and build-id: a new image every time, which no process maps once it exits; kept
# on disk for the next 50 processes, so that it can still be opened when its records are read).
# profcollect's VmRSS is read every second. Growth = (largest RSS after the warm-up - RSS at
# the end of the warm-up) / RSS at the end of the warm-up; it must stay under 5%: an image no
# process maps any more is released once its profile is flushed, and what rendering decoded for
# an image still mapped is freed after each flush. The run is system-wide: whatever else runs on
# the machine meanwhile is profiled too and counts in the figures (a large program with debug
# info that starts after the warm-up adds its rendering to the peak).
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
[ "$seconds" -gt "$warmup" ] || { echo "live_rss_bench: BENCH_SECONDS must exceed $warmup" >&2; exit 2; }

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
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pc/status" 2>/dev/null || true)
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
awk -v w="$warmup" '{ rss[$1] = $2 } END {
    base = rss[w]; top = 0; last = 0
    for (t = w + 1; t in rss; t++) { if (rss[t] > top) top = rss[t]; last = rss[t] }
    printf "RSS KiB: %d at %d s (end of warm-up), largest after %d, %d at the end\n", base, w, top, last
    growth = base > 0 ? (top - base) / base : 1
    printf "growth after the warm-up: %.1f%% (target < 5%%: %s)\n", 100 * growth, growth < 0.05 ? "met" : "MISSED"
    exit growth < 0.05 ? 0 : 3
}' rss.log
