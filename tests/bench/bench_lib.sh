# Shared by the long-run benchmarks (live_rss_bench.sh, daemon_soak_bench.sh): the workload of
# short-lived processes each mapping a new image, a per-second sampler of a process, and the
# growth report. Sourced, not run.

# new_image_workload_build DIR: compiles, in DIR, a program that dlopens the library it is given
# and runs its `work`, and the object every library is linked from.
new_image_workload_build() {
    cat >"$1/main.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char** argv) {
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  unsigned (*work)(unsigned) = (unsigned (*)(unsigned))dlsym(lib, "work");
  return work ? (int)(work(3000000) & 1) : 1;
}
C
    cat >"$1/lib.c" <<'C'
unsigned work(unsigned n) {
  volatile unsigned x = 1;
  for (unsigned i = 0; i < n; ++i) x = x * 1664525u + 1013904223u;
  return x;
}
C
    gcc -O2 -o "$1/main" "$1/main.c" -ldl
    gcc -O2 -g -fPIC -c -o "$1/lib.o" "$1/lib.c"
}

# new_image_workload_start DIR: in the background, without end, every process maps a library
# linked for it with a build-id of its own (a new image), kept on disk for the next 50 processes
# (so that it can still be opened when its records are read), as a build tree keeps its
# outputs. Sets workload_pid.
new_image_workload_start() {
    (
        cd "$1"
        i=0
        while :; do
            i=$((i + 1))
            ld -shared --build-id=0x"$(printf '%040x' "$i")" -o "lib$i.so" lib.o
            ./main "$PWD/lib$i.so" || true
            rm -f "lib$((i - 50)).so"
        done
    ) >/dev/null 2>&1 &
    workload_pid=$!
}

# sample_process PID SECONDS LOG: every second, "t VmRSS RssAnon RssFile fds cpu_ticks" of PID
# (cpu_ticks: utime + stime in clock ticks) appended to LOG. Fails if PID ends early.
sample_process() {
    t=0
    while [ "$t" -lt "$2" ]; do
        sleep 1
        t=$((t + 1))
        line=$(awk '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 } /^RssFile:/ { f = $2 }
                    END { if (r != "") print r, a, f }' "/proc/$1/status" 2>/dev/null || true)
        [ -n "$line" ] || { echo "the process $1 ended early" >&2; return 1; }
        fds=$(ls "/proc/$1/fd" 2>/dev/null | wc -l)
        ticks=$(awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0)
        echo "$t $line $fds $ticks" >>"$3"
    done
}

# growth_report LOG WARMUP SECONDS COLUMN NAME UNIT: compares the minute after the warm-up with
# the last minute of column COLUMN of LOG, by the mean and by the largest value; prints both
# and the spread of each window, and returns 0 when both grew by less than 5%, 3 otherwise.
growth_report() {
    awk -v w="$2" -v n="$3" -v col="$4" -v name="$5" -v unit="$6" '
        function window(from, to, which,    t, sum, count, top, low) {
            sum = 0; count = 0; top = 0; low = -1
            for (t = from; t <= to; t++) {
                if (!(t in v)) continue
                sum += v[t]; count++
                if (v[t] > top) top = v[t]
                if (low < 0 || v[t] < low) low = v[t]
            }
            mean[which] = count ? sum / count : 0; peak[which] = top; trough[which] = low
        }
        { v[$1] = $col }
        END {
            window(w + 1, w + 60, "first")
            window(n - 59, n, "last")
            printf "%s %s, minute after the warm-up (%d-%d s): mean %d, largest %d, smallest %d\n",
                   name, unit, w + 1, w + 60, mean["first"], peak["first"], trough["first"]
            printf "%s %s, last minute (%d-%d s): mean %d, largest %d, smallest %d\n",
                   name, unit, n - 59, n, mean["last"], peak["last"], trough["last"]
            printf "%s spread in a minute (largest - smallest): %d %s first, %d %s last\n",
                   name, peak["first"] - trough["first"], unit, peak["last"] - trough["last"], unit
            by_mean = mean["first"] > 0 ? mean["last"] / mean["first"] - 1 : 1
            by_peak = peak["first"] > 0 ? peak["last"] / peak["first"] - 1 : 1
            growth = by_mean > by_peak ? by_mean : by_peak
            printf "%s growth after the first minute: %.1f%% by the mean, %.1f%% by the largest (target < 5%%: %s)\n",
                   name, 100 * by_mean, 100 * by_peak, growth < 0.05 ? "met" : "MISSED"
            exit growth < 0.05 ? 0 : 3
        }' "$1"
}

# build_live_fixtures NAME DIR: the live fixture programs (tests/fixtures/make_live_fixtures.sh)
# built into DIR/fx; on failure prints the script's log and exits 2, naming the benchmark NAME.
build_live_fixtures() {
    if ! sh "$repo/tests/fixtures/make_live_fixtures.sh" "$2/fx" >"$2/fixtures.log" 2>&1; then
        cat "$2/fixtures.log" >&2
        echo "$1: building the workloads failed" >&2
        exit 2
    fi
}
