#!/bin/sh
# The daemon's soak benchmark. Run by hand (not by ctest), as root; needs gcc.
#
# Usage: daemon_soak_bench.sh [-k] [PROFCOLLECT]
#   PROFCOLLECT        the profcollect executable (default: build/profcollect in the repository)
#   -k                 keep the work directory and print its path
#   BENCH_SECONDS=N    length of the loaded run (default 600, at least 180); the first 60 s are
#                      the warm-up
#   BENCH_IDLE_SECONDS=N  length of the idle run (default 60)
#
# 1. Loaded: `profcollect daemon` (collecting every process, flushing every 10 s, 1000 Hz) while
#    a workload keeps starting short-lived processes, each mapping a library freshly linked for
#    it (bench_lib.sh; the workload of live_rss_bench.sh). The daemon's VmRSS, open descriptors
#    and CPU time are read every second. RSS and descriptors: the minute after the warm-up
#    against the last minute, by the mean and by the largest value; both must grow by less than
#    5%. CPU per sample: the daemon's CPU time over the samples it took in (its own included),
#    printed beside the same figure of `profcollect -a` over the same workload for 60 s in the
#    same run (target: the daemon costs what live collection costs, ratio at most 1.2). The
#    periodic flushes' time and binaries written, from `ctl status` every 5 s.
# 2. Idle: the daemon at its default configuration (only output_dir and socket set) on the
#    machine with the workload stopped: its CPU share over BENCH_IDLE_SECONDS.
#
# Exit status: 0 targets met; 3 a target missed; 1 a run failed; 2 usage or missing tools.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_lib.sh"
repo=$(cd "$here/../.." && pwd)
seconds=${BENCH_SECONDS:-600}
idle_seconds=${BENCH_IDLE_SECONDS:-60}
warmup=60
keep=0
if [ "${1:-}" = "-k" ]; then
    keep=1
    shift
fi
profcollect=${1:-$repo/build/profcollect}
[ -x "$profcollect" ] || { echo "daemon_soak_bench: no profcollect executable at $profcollect" >&2; exit 2; }
command -v gcc >/dev/null || { echo "daemon_soak_bench: gcc not found" >&2; exit 2; }
[ "$seconds" -ge $((warmup + 120)) ] || { echo "daemon_soak_bench: BENCH_SECONDS must be at least $((warmup + 120))" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/profcollect-soak-bench.XXXXXX")
daemon=""
workload_pid=""
cleanup() {
    [ -n "$workload_pid" ] && kill "$workload_pid" 2>/dev/null || true
    [ -n "$daemon" ] && kill "$daemon" 2>/dev/null || true
    wait 2>/dev/null || true
    if [ "$keep" = 1 ]; then echo "work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
cd "$work"
ticks_per_second=$(getconf CLK_TCK)

# status_field NAME: a number from `profcollect ctl status` of the running daemon.
status_field() {
    "$profcollect" ctl --json --socket "$work/ctl" status | awk -v k="\"$1\":" '$1 == k { gsub(/,/, "", $2); print $2; exit }'
}

new_image_workload_build "$work"
new_image_workload_start "$work"

# The reference: live collection of the same workload, 60 s.
/usr/bin/time -f "%U %S" -o live.time "$profcollect" -q -a -e cpu-clock -F 1000 --flush-interval 10 \
    --duration 60 -o "$work/live.out"
live_samples=$(awk -F'[:,]' '/"samples"|"own_samples"/ { n += $2 } END { print n }' live.out/collection.json)
live_cpu=$(awk '{ print $1 + $2 }' live.time)
live_lost=$(awk -F'[:,]' '/"lost"/ { print $2; exit }' live.out/collection.json)
echo "profcollect -a, 60 s: $live_samples samples, $live_lost lost"

cat >loaded.toml <<EOF
output_dir = "$work/out"
socket = "$work/ctl"
event = "cpu-clock"
frequency = 1000
flush_interval = "10s"
final_flush_timeout = "120s"
EOF
"$profcollect" daemon --config "$work/loaded.toml" 2>daemon.log &
daemon=$!
: >soak.log
# The periodic flushes' cost: the last flush of `ctl status` every 5 s (each flush seen once,
# by its time), what it took and how many binaries it wrote.
(
    while kill -0 "$daemon" 2>/dev/null; do
        "$profcollect" ctl --json --socket "$work/ctl" status 2>/dev/null |
            awk '$1 == "\"unix_ns\":" || $1 == "\"seconds\":" || $1 == "\"binaries_written\":" { gsub(/,/, "", $2); printf "%s ", $2 } END { print "" }'
        sleep 5
    done
) >flushes.log &
sample_process "$daemon" "$seconds" soak.log || { echo "daemon_soak_bench: the daemon exited early" >&2; cat daemon.log >&2; exit 1; }
samples=$(status_field samples)
own=$(status_field own_samples)
lost=$(status_field lost)
binaries=$(find out -mindepth 1 -maxdepth 1 -type d | wc -l)
kill -TERM "$daemon"
wait "$daemon" || { echo "daemon_soak_bench: the daemon failed at SIGTERM" >&2; cat daemon.log >&2; exit 1; }
daemon=""
# The final flush writes every binary touched since the last periodic one (hundreds here: the
# workload maps a new library per process), so the bench gives it more than the default 1 s and
# reports how long it took.
stopped=$(sed -n 's/.*stopped \([0-9.]*\) s after the signal.*/\1/p' daemon.log | tail -1)
kill "$workload_pid" 2>/dev/null || true
wait "$workload_pid" 2>/dev/null || true
workload_pid=""

status=0
echo "loaded run of $seconds s: $samples samples (+$own of the daemon's own), $binaries profiled binaries"
echo "stopped ${stopped:-?} s after SIGTERM, the final flush included"
awk 'NF == 3 && !seen[$1]++ { n++; t += $2; b += $3; if ($2 > worst) worst = $2 }
     END { if (n) printf "periodic flushes: %d seen, %.2f s each on average (%.2f s the longest), %.0f binaries written each\n", n, t / n, worst, b / n }' flushes.log
awk -v l="$lost" -v s="$samples" -v o="$own" 'BEGIN { printf "lost: %d samples, %.2f%% of what the kernel took (ring buffers full)\n", l, 100 * l / (l + s + o) }'

growth_report soak.log "$warmup" "$seconds" 2 RSS KiB || status=3
growth_report soak.log "$warmup" "$seconds" 5 descriptors "" || status=3
daemon_ticks=$(tail -1 soak.log | awk '{ print $6 }')
awk -v dt="$daemon_ticks" -v hz="$ticks_per_second" -v ds="$samples" -v own="$own" -v lc="$live_cpu" -v ls="$live_samples" 'BEGIN {
    d = dt / hz / (ds + own) * 1e6; l = lc / ls * 1e6
    printf "CPU per sample: daemon %.1f us (%.1f s for %d samples), profcollect -a %.1f us (%.1f s for %d samples over 60 s); ratio %.2f (target: at most 1.2: %s)\n",
           d, dt / hz, ds + own, l, lc, ls, d / l, d / l <= 1.2 ? "met" : "MISSED"
    exit d / l <= 1.2 ? 0 : 3
}' || status=3

# Idle: the default configuration, nothing running but the machine's own.
cat >idle.toml <<EOF
output_dir = "$work/idle.out"
socket = "$work/ctl"
EOF
"$profcollect" daemon --config "$work/idle.toml" 2>idle.log &
daemon=$!
: >idle.samples
sample_process "$daemon" "$idle_seconds" idle.samples || { echo "daemon_soak_bench: the idle daemon exited early" >&2; cat idle.log >&2; exit 1; }
kill -TERM "$daemon"
wait "$daemon" || true
daemon=""
awk -v hz="$ticks_per_second" -v n="$idle_seconds" 'END {
    printf "idle, default configuration, %d s: %.2f s of CPU, %.2f%% of one CPU; RSS %d KiB, %d descriptors\n",
           n, $6 / hz, 100 * $6 / hz / n, $2, $5
}' idle.samples
exit "$status"
