#!/bin/sh
# Benchmark of live collection (issue 3, acceptance 5). Run by hand (not by ctest), as root or
# with perf_event access to one's own processes; needs gcc, clang-19, ld.lld-19, perf,
# /usr/bin/time.
#
# Usage: live_bench.sh [-k] [PROFCOLLECT]
#   PROFCOLLECT  the profcollect executable (default: build/profcollect in the repository)
#   -k           keep the work directory and print its path
#   BENCH_CPU_SECONDS=N  length of the CPU part (default 30)
#   BENCH_RSS_SECONDS=N  length of the memory part (default 60; the first 10 s are warm-up)
#   BENCH_FREQ=HZ        sampling frequency of the CPU part (default 4000)
#
# 1. CPU time per sample. A workload of two spinning threads (live_spin) runs; profcollect
#    --pid and `perf record -p` attach to it at the same time, with the same event (cpu-clock)
#    and frequency, for the same duration. Each runs under /usr/bin/time, which reports its own
#    user+sys time (not the workload's). CPU time / samples taken (samples + lost) of each; the
#    ratio profcollect / perf must be at most 0.5. perf record runs with -N (no copy into
#    ~/.debug) and --buildid-mmap: build-ids come in the kernel's MMAP2 records, as
#    profcollect takes them (without it, the kernel flags perf's records as carrying a
#    build-id over a device/inode body while profcollect watches the same process, and perf
#    6.1 aborts reading them).
# 2. Memory. A workload that loads and unloads four libraries without end (live_dlloop, ~150
#    dlopen/dlclose a second, every one a new MMAP2 record) runs under profcollect --pid with
#    the libraries named by --binary and a 5 s flush interval; profcollect's VmRSS is read every
#    second. Growth = (largest RSS after the warm-up - RSS at the end of the warm-up) / RSS at
#    the end of the warm-up; it must stay under 5%.
#
# Exit status: 0 both targets met; 3 a target missed; 1 a run failed; 2 usage or missing tools.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$here/bench_lib.sh"
cpu_seconds=${BENCH_CPU_SECONDS:-30}
rss_seconds=${BENCH_RSS_SECONDS:-60}
freq=${BENCH_FREQ:-4000}
warmup=10

keep=0
if [ "${1:-}" = "-k" ]; then
    keep=1
    shift
fi
profcollect=${1:-$repo/build/profcollect}
if [ ! -x "$profcollect" ]; then
    echo "live_bench: no profcollect executable at $profcollect (give its path)" >&2
    exit 2
fi
for tool in perf /usr/bin/time awk; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "live_bench: $tool not found" >&2
        exit 2
    fi
done
if [ "$rss_seconds" -le "$warmup" ]; then
    echo "live_bench: BENCH_RSS_SECONDS must be more than the $warmup s warm-up" >&2
    exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/live-bench.XXXXXX")
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null || true; done
    if [ "$keep" = 1 ]; then
        echo "live_bench: work directory kept: $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT INT TERM

build_live_fixtures live_bench "$work"
fx=$work/fx

# CPU seconds (user + sys) /usr/bin/time wrote to $1.
cpu_of() { awk 'END { printf "%.3f", $1 + $2 }' "$1"; }

echo "== 1. collector CPU time per sample: profcollect vs perf record, cpu-clock at $freq Hz, $cpu_seconds s"
"$fx/live_spin" a 0 2 &
spin=$!
pids="$pids $spin"
sleep 0.5
/usr/bin/time -f "%U %S" -o "$work/pc.time" \
    "$profcollect" -q -e cpu-clock -F "$freq" --duration "$cpu_seconds" -o "$work/pc.out" --pid "$spin" &
pc=$!
/usr/bin/time -f "%U %S" -o "$work/perf.time" \
    perf record -q -N --buildid-mmap -e cpu-clock -F "$freq" -o "$work/perf.data" -p "$spin" -- sleep "$cpu_seconds" \
    >"$work/perf.log" 2>&1 &
pr=$!
status=0
wait "$pc" || status=1
wait "$pr" || status=1
kill "$spin" 2>/dev/null || true
wait "$spin" 2>/dev/null || true
if [ "$status" != 0 ] || [ ! -s "$work/pc.out/collection.json" ] || [ ! -s "$work/perf.data" ]; then
    cat "$work/perf.log" >&2 || true
    echo "live_bench: a collector failed" >&2
    exit 1
fi
pc_samples=$(awk -F'[:,]' '/"samples"/ { s = $2 } /"lost"/ { l = $2 } END { print s + l }' "$work/pc.out/collection.json")
perf_samples=$(perf report --stats -i "$work/perf.data" 2>/dev/null \
    | awk '/SAMPLE events:/ { s = $3 } /LOST_SAMPLES events:/ { l = $3 } END { print s + l }')
pc_cpu=$(cpu_of "$work/pc.time")
perf_cpu=$(cpu_of "$work/perf.time")
awk -v pcc="$pc_cpu" -v pcs="$pc_samples" -v pfc="$perf_cpu" -v pfs="$perf_samples" 'BEGIN {
    pcu = pcs ? pcc / pcs * 1e6 : 0; pfu = pfs ? pfc / pfs * 1e6 : 0
    printf "  %-12s %10s %10s %14s\n", "collector", "CPU s", "samples", "CPU us/sample"
    printf "  %-12s %10.3f %10d %14.2f\n", "profcollect", pcc, pcs, pcu
    printf "  %-12s %10.3f %10d %14.2f\n", "perf record", pfc, pfs, pfu
    if (pfu > 0) printf "  ratio profcollect / perf record: %.3f (target: at most 0.5)\n", pcu / pfu
}'
cpu_ok=$(awk -v pcc="$pc_cpu" -v pcs="$pc_samples" -v pfc="$perf_cpu" -v pfs="$perf_samples" \
    'BEGIN { print (pcs > 0 && pfs > 0 && pfc > 0 && (pcc / pcs) / (pfc / pfs) <= 0.5) ? 1 : 0 }')

echo "== 2. collector RSS over $rss_seconds s of a workload that loads and unloads libraries"
"$fx/live_dlloop" 0 "$fx/liblive_plug_0.so" "$fx/liblive_plug_1.so" "$fx/liblive_plug_2.so" \
    "$fx/liblive_plug_3.so" &
loop=$!
pids="$pids $loop"
sleep 0.5
"$profcollect" -q -e cpu-clock --flush-interval 5 -o "$work/rss.out" --pid "$loop" \
    --binary "$fx/liblive_plug_0.so" --binary "$fx/liblive_plug_1.so" \
    --binary "$fx/liblive_plug_2.so" --binary "$fx/liblive_plug_3.so" &
pc=$!
pids="$pids $pc"
: >"$work/rss.log"
t=0
while [ "$t" -lt "$rss_seconds" ]; do
    sleep 1
    t=$((t + 1))
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pc/status" 2>/dev/null || true)
    if [ -z "$rss" ]; then
        echo "live_bench: profcollect ended early" >&2
        exit 1
    fi
    echo "$t $rss" >>"$work/rss.log"
done
kill -TERM "$pc"
wait "$pc" || { echo "live_bench: profcollect failed at SIGTERM" >&2; exit 1; }
kill "$loop" 2>/dev/null || true
wait "$loop" 2>/dev/null || true
loads=$(awk -F'[:,]' '/"samples"/ { print $2 }' "$work/rss.out/collection.json")
awk -v w="$warmup" '
    { rss[$1] = $2 }
    END {
        line = "  RSS KiB by second:"
        for (t = 1; t in rss; t++) { line = line " " rss[t]; if (t % 15 == 0) { print line; line = "   " } }
        if (line != "   ") print line
        base = rss[w]; top = 0
        for (t = w + 1; t in rss; t++) if (rss[t] > top) top = rss[t]
        printf "  at %d s: %d KiB; largest after: %d KiB; growth %.2f%% (target: under 5%%)\n",
               w, base, top, base ? 100 * (top - base) / base : 0
    }' "$work/rss.log"
echo "  ($loads samples; profiles: $(ls "$work/rss.out" | grep -c -- '-') binaries)"
rss_ok=$(awk -v w="$warmup" '{ rss[$1] = $2 } END {
    base = rss[w]; top = 0; for (t = w + 1; t in rss; t++) if (rss[t] > top) top = rss[t]
    print (base > 0 && (top - base) / base < 0.05) ? 1 : 0 }' "$work/rss.log")

if [ "$cpu_ok" = 1 ] && [ "$rss_ok" = 1 ]; then
    echo "live_bench: both targets met"
    exit 0
fi
echo "live_bench: target missed (cpu ok: $cpu_ok, rss ok: $rss_ok)"
exit 3
