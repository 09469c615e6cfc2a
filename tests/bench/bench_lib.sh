# Shared by the benchmarks: for the long-run ones (live_rss_bench.sh, daemon_soak_bench.sh) the
# workload of short-lived processes each mapping a new image, a per-second sampler of a process,
# and the growth report; for the AutoFDO ones (autofdo_bench.sh, autofdo_big_bench.sh) the
# conversion of IP samples against llvm-profgen. Sourced, not run.

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

# The helpers below are loaded_loss_bench.sh's: a machine loaded by compiler loops, workloads
# that run as process groups of their own (so that stopping one ends every process it started),
# and the counts read back from profcollect's JSON and from perf.data.

# compiler_load_build DIR FUNCTIONS: writes DIR/load.c, FUNCTIONS generated functions (9 lines
# each: a loop, branches, a switch) that gcc -O2 must optimize one by one: 100 of them take
# it about 1 s of CPU.
compiler_load_build() {
    awk -v n="$2" 'BEGIN {
        print "#include <stddef.h>"
        for (i = 0; i < n; i++) {
            printf "unsigned f%d(const unsigned* a, size_t n) {\n  unsigned s = %d;\n", i, i
            printf "  for (size_t i = 0; i < n; ++i) {\n    s = s * 31u + a[i] * %du;\n", 2 * i + 1
            printf "    if (s & %du) s ^= s >> 7; else s += a[(i * %d) %% n];\n", i + 1, i + 3
            printf "    switch (s & 7u) { case 0: s += %d; break; case 1: s ^= %d; break; case 2: s *= %du; break;", i, 7 * i, 2 * i + 3
            printf " case 3: s -= i; break; default: s = (s << 3) | (s >> 29); }\n  }\n  return s;\n}\n"
        }
    }' >"$1/load.c"
}

# compiler_load_start DIR LOOPS JOBS: LOOPS background loops, each compiling DIR/load.c with
# gcc -O2 JOBS times at once and waiting for the JOBS compilers, over and over (a `make -jJOBS`
# of JOBS such files, again and again). Each loop is a session and process group of its own
# (setsid): group_stop ends its compilers with it. Appends the loops' ids to load_pids.
compiler_load_start() {
    _loop=0
    while [ "$_loop" -lt "$2" ]; do
        _loop=$((_loop + 1))
        setsid sh -c '
            cd "$1"
            while :; do
                j=0
                while [ "$j" -lt "$3" ]; do
                    j=$((j + 1))
                    gcc -O2 -c -o "load.$2.$j.o" load.c &
                done
                wait
            done' sh "$1" "$_loop" "$3" </dev/null >/dev/null 2>&1 &
        load_pids="${load_pids:-} $!"
    done
}

# new_image_loops_start DIR LOOPS: LOOPS background loops (process groups of their own, as
# above); at every turn each links a new shared library from DIR/lib.o (compiled with -g by
# new_image_workload_build: the library has DWARF) with a build-id of its own (the loop's number
# and the turn's) and runs DIR/main on it. Every library stays on disk until the work directory
# goes, as a build tree keeps its outputs. Loop N works in DIR/imagesN and keeps the number of
# processes it has run in DIR/imagesN/count. Appends the loops' ids to image_pids.
new_image_loops_start() {
    _loop=0
    while [ "$_loop" -lt "$2" ]; do
        _loop=$((_loop + 1))
        mkdir -p "$1/images$_loop"
        echo 0 >"$1/images$_loop/count"
        setsid sh -c '
            cd "$1/images$2"
            i=0
            while :; do
                i=$((i + 1))
                ld -shared --build-id=0x"$(printf "%08x%032x" "$2" "$i")" -o "lib$i.so" ../lib.o
                ../main "$PWD/lib$i.so" || true
                echo "$i" >count.new
                mv count.new count
            done' sh "$1" "$_loop" </dev/null >/dev/null 2>&1 &
        image_pids="${image_pids:-} $!"
    done
}

# new_image_count DIR: how many processes the loops of new_image_loops_start DIR have run, each
# on a library of its own.
new_image_count() {
    cat "$1"/images*/count 2>/dev/null | awk '{ n += $1 } END { print n + 0 }'
}

# group_alive PGID: some process of the group PGID is still running (not a zombie).
group_alive() {
    for _member in $(pgrep -g "$1" 2>/dev/null); do
        _state=$(cut -d' ' -f3 "/proc/$_member/stat" 2>/dev/null) || continue
        [ -z "$_state" ] || [ "$_state" = Z ] || return 0
    done
    return 1
}

# group_stop SIGNAL PID...: sends SIGNAL to the process group of each PID (a group leader started
# with setsid, a child of this shell), waits for each PID, then for every process of the groups
# (a compiler whose driver was killed first): those still running after 5 s are killed.
group_stop() {
    _signal=$1
    shift
    for _pid in "$@"; do kill "-$_signal" "-$_pid" 2>/dev/null || true; done
    for _pid in "$@"; do wait "$_pid" 2>/dev/null || true; done
    for _pid in "$@"; do
        _tries=0
        while group_alive "$_pid" && [ "$_tries" -lt 50 ]; do
            sleep 0.1
            _tries=$((_tries + 1))
        done
        ! group_alive "$_pid" || kill -KILL "-$_pid" 2>/dev/null || true
    done
}

# json_number FILE KEY: the value of KEY, a member of the top-level object, or OBJECT.KEY, a
# member of a top-level member object, in JSON written two spaces to a level (profcollect's
# collection.json, `profcollect ctl --json`); nothing when there is no such member.
json_number() {
    awk -v key="$2" '
        BEGIN { depth = split(key, part, ".") }
        /^  "[^"]*": [{]/ { object = $0; sub(/^  "/, "", object); sub(/".*/, "", object); next }
        /^  [}]/ { object = ""; next }
        (depth == 1 && index($0, "  \"" part[1] "\":") == 1) ||
        (depth == 2 && object == part[1] && index($0, "    \"" part[2] "\":") == 1) {
            value = $0; sub(/^[^:]*: */, "", value); sub(/,$/, "", value); print value; exit
        }' "$1"
}

# perf_record_counts PERF_DATA EVENT: "SAMPLES LOST" for EVENT in a perf.data. SAMPLES: its
# SAMPLE records. LOST: the samples that found the ring buffer full, as the kernel counted them
# per event (perf record reads that count at its end with PERF_FORMAT_LOST and writes it in
# PERF_RECORD_LOST_SAMPLES records; perf 6.1's `perf report --stats` prints their sum as the
# event's "LOST_SAMPLES events"). Without such records (a kernel before 6.0 or an older perf),
# the counts of the PERF_RECORD_LOST records are added up instead, which also count side-band
# records (mmap, comm) lost with the samples. Fails when perf cannot read the file.
perf_record_counts() {
    perf report -i "$1" --stats >"$1.stats" 2>&1 || { cat "$1.stats" >&2; return 1; }
    _counts=$(awk -v event="$2" '
        /^[^ ].* stats:$/ { in_event = ($0 == event " stats:"); next }
        in_event && $1 == "SAMPLE" { samples = $3 }
        in_event && $1 == "LOST_SAMPLES" { lost = $3; have_lost = 1 }
        $1 == "LOST" && $2 == "events:" { records = $3 }
        END { print samples + 0, have_lost ? lost : -1, records + 0 }' "$1.stats")
    set -- "$1" $_counts
    if [ "$3" -ge 0 ]; then
        echo "$2 $3"
    elif [ "$4" -eq 0 ]; then
        echo "$2 0"
    else
        echo "$2 $(perf report -D -i "$1" 2>/dev/null | awk '/PERF_RECORD_LOST: / { sub(/.*lost:/, ""); n += $1 } END { print n + 0 }')"
    fi
}

# measure NAME COMMAND...: runs COMMAND, its wall time and peak RSS in NAME.time ("s KiB"),
# and prints "NAME s KiB"; exits with its error output if it fails.
measure() {
    name=$1
    shift
    /usr/bin/time -f "%e %M" -o "$name.time" "$@" >/dev/null 2>"$name.err" || {
        cat "$name.err"
        exit 1
    }
    echo "$name $(cat "$name.time")"
}

# autofdo_ip_vs_profgen PROFCOLLECT DATA BINARY: the IP samples of DATA made an AutoFDO profile
# of BINARY by `PROFCOLLECT convert` (ours.prof) and by the oracles.md pipeline, `perf script` +
# awk + `llvm-profgen-19 --leading-ip-only` (ref.prof), in the current directory; prints both
# times and peak RSS (the pipeline's: its largest process), the ratios, and whether the profiles
# are equal after `llvm-profdata-19 merge --sample --text` (else in how many lines they differ).
# Sets ours_s ours_kib ref_s ref_kib.
autofdo_ip_vs_profgen() {
    measure ours "$1" convert -q -p "$2" --format autofdo -o ours.prof "$3"
    cat >profgen.sh <<SH
perf script -i "$2" -F ip,brstack --show-mmap-events 2>/dev/null \
  | awk '/PERF_RECORD_MMAP/ {print; next} NF==1 {print \$0 " 0x0/0x0/P/-/-/0"; next} {print}' > ip.perfscript
llvm-profgen-19 --perfscript=ip.perfscript --binary="$3" --leading-ip-only --format=text -o ref.prof
SH
    measure profgen sh profgen.sh
    ours_s=$(cut -d' ' -f1 ours.time)
    ours_kib=$(cut -d' ' -f2 ours.time)
    ref_s=$(cut -d' ' -f1 profgen.time)
    ref_kib=$(cut -d' ' -f2 profgen.time)
    echo "profcollect: ${ours_s}s ${ours_kib} KiB; perf script + llvm-profgen: ${ref_s}s ${ref_kib} KiB (largest process)"
    awk -v a="$ours_s" -v b="$ref_s" -v c="$ours_kib" -v d="$ref_kib" \
        'BEGIN { printf "profcollect is %.1fx faster with %.1fx less memory\n", b/a, d/c }'
    llvm-profdata-19 merge --sample --text ours.prof -o ours.txt
    llvm-profdata-19 merge --sample --text ref.prof -o ref.txt
    if cmp -s ours.txt ref.txt; then
        echo "profiles: equal ($(wc -l <ref.txt) lines)"
    else
        echo "profiles: DIFFER in $(diff ours.txt ref.txt | grep -c '^[<>]') of $(wc -l <ref.txt) lines"
    fi
}
