#!/usr/bin/env bash
# Edge inference: how much of BOLT's gain with an exact profile a profile inferred from IP samples
# alone reaches (`profcollect convert --format bolt-inferred`: the edge counts of each sampled
# function's control-flow graph, as BOLT pre-aggregated B/F records). Run by hand (not by ctest),
# as root or with perf_event access to one's own processes; needs clang-19 and lld-19, tclsh,
# perf, valgrind, llvm-bolt and perf2bolt of LLVM 19 (/usr/lib/llvm-19/bin). About 10 minutes
# on a 2-core virtual machine.
#
# Usage: edge_inference_bench.sh [-k] [PROFCOLLECT]
#   PROFCOLLECT          the profcollect that converts (default: build/profcollect in the
#                        repository; copied into the work directory first)
#   -k                   keep the work directory and print its path
#   BENCH_TRIALS=N       perf recordings per program (default 3)
#   BENCH_PROGRAMS="P.." programs of edge_inference_programs.sh (default: sqlite3 synth)
#   BENCH_WORK=DIR       work in DIR and keep it; a directory kept from an earlier run keeps its
#                        builds, instrumented profiles and their measurements (the recordings
#                        and everything made of them are done again)
#   BENCH_SAMPLES=N      samples a recording aims at, counted as perf2bolt reads them (default
#                        45000: the peers' figures in the issue were made at 40-50K so counted):
#                        a machine's timer makes more or fewer of them at a given frequency, and
#                        more samples make every profile better, so every recording is made
#                        again (five times at most) until its count is within a tenth of N, the
#                        frequency set from the last two counts. 0: 20000 Hz whatever the count
#   BENCH_OTHER_I1="SIZE,ASSOC,LINE.."  I1 geometries measured besides the target's (default
#                        "16384,4,64 65536,8,64"; empty: none)
#
# For each program (edge_inference_programs.sh: built by clang-19 -O2 -fno-pie, linked -no-pie by
# lld with --emit-relocs; a fixed workload):
#   none     the program as built
#   inst     the exact profile: the program instrumented by `llvm-bolt -instrument`, one run of
#            the workload
#   then BENCH_TRIALS times a recording of NAME_runs workload runs (`perf record -e cpu-clock
#   -F FREQ --buildid-mmap`, about BENCH_SAMPLES samples; see above) and, of that
#   same recording,
#   nolbr    `perf2bolt -nl` (no_lbr fdata: a count per sampled address, BOLT's default use)
#   guess    the same fdata with BOLT 19's own count guessing (--equalize-bb-counts
#            --iterative-guess): the bar an inference in the collector has to clear
#   bolt-inferred  `profcollect convert --format bolt-inferred`, given to llvm-bolt with --pa
# Every profile is given to llvm-bolt with the same options ($bolt_opts below), and every layout
# runs the workload once under `valgrind --tool=cachegrind` with a simulated 32 KiB 8-way I1 and
# 1 MiB LL: its instruction-cache misses (I1mr) repeat exactly from run to run, unlike timings.
# The gain of a profile = (misses of none - its misses) / (misses of none - misses of inst), in
# percent: inst is 100%. Printed: per program and recording the misses and gains, then per
# profile the mean of the recordings (misses, gain, and the gains' range). The target:
# bolt-inferred's mean gain is at least 85% on every program.
#
# The misses of one geometry hang on which hot lines happen to share a set: a layout that moves
# a function by a line can gain or lose several points. So every layout is also measured with
# other I1 geometries (BENCH_OTHER_I1), and the mean gains at each and over all are printed
# under each program: what to judge a change of the inference by. The target stays the 32 KiB one.
#
# A run fails (exit 1) when a step fails, when a BOLTed binary's output differs from the
# original's, when bolt-inferred is not available (PROFCOLLECT's convert has no such format), or
# when llvm-bolt warns about the bolt-inferred profile: any BOLT-ERROR or PERF2BOLT-ERROR line;
# "!! WARNING !!" (the alarm at a high share of traces that do not fit the code); any BOLT-WARNING
# or PERF2BOLT-WARNING line that mentions profile, data, sample, trace, branch, fall-through,
# count, invalid, stale, mismatch, ignored or discarded (as "N functions have invalid (possibly
# stale) profile"); and a count above 0 in "traces mismatching disassembled function contents"
# (F ranges that run through a jump or a return) or in "Out of range traces involving unknown
# regions" (addresses in no function): BOLT 19 says no more of a few such records (and nothing
# at all of a B record from an instruction that is no branch). They are listed under the figures.
#
# Exit status: 0 target met; 3 target missed; 1 a run failed; 2 usage or missing tools.
set -eu -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
trials=${BENCH_TRIALS:-3}
budget=${BENCH_SAMPLES:-45000}
target=85

# The same for every program and profile.
export CC=clang-19
export CFLAGS="-O2 -fno-pie"   # no -g: valgrind 3.19 cannot read clang-19's DWARF 5, BOLT needs none
export LDFLAGS="-no-pie -fuse-ld=lld -Wl,--emit-relocs"
bolt=/usr/lib/llvm-19/bin/llvm-bolt   # not llvm-bolt-19: the instrumented binary needs the runtime beside it
perf2bolt=/usr/lib/llvm-19/bin/perf2bolt
bolt_opts="-reorder-blocks=ext-tsp -reorder-functions=cdsort -split-functions -split-all-cold -split-eh -dyno-stats --no-threads"
guess_opts="--equalize-bb-counts --iterative-guess"
caches="--I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64"
other_i1=${BENCH_OTHER_I1-16384,4,64 65536,8,64}
run_env="env -i PATH=/usr/bin:/bin LC_ALL=C"   # the same environment, so the same stack, every run

. "$here/edge_inference_programs.sh"
programs=${BENCH_PROGRAMS:-$PROGRAMS}

keep=0
if [ "${1:-}" = "-k" ]; then
    keep=1
    shift
fi
pc=${1:-$repo/build/profcollect}
usage() { echo "edge_inference_bench: $*" >&2; exit 2; }
[ -x "$pc" ] || usage "no profcollect executable at $pc (give its path)"
case "$trials" in [1-9] | [1-9][0-9]) ;; *) usage "BENCH_TRIALS must be 1 to 99" ;; esac
case "$budget" in 0 | [1-9][0-9][0-9][0-9] | [1-9][0-9][0-9][0-9][0-9] | [1-9][0-9][0-9][0-9][0-9][0-9]) ;;
    *) usage "BENCH_SAMPLES must be 0 or 1000 to 9999999" ;; esac
for p in $programs; do
    declare -F "${p}_build" >/dev/null || usage "no program $p (have: $PROGRAMS)"
done
for tool in $CC ld.lld-19 tclsh perf valgrind "$bolt" "$perf2bolt" sha256sum md5sum; do
    command -v "$tool" >/dev/null 2>&1 || usage "$tool not found"
done
[ -f /usr/lib/llvm-19/lib/libbolt_rt_instr.a ] || usage "BOLT's instrumentation runtime is missing"

if [ -n "${BENCH_WORK:-}" ]; then
    work=$BENCH_WORK
    keep=1
    mkdir -p "$work"
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/edge-inference-bench.XXXXXX")
fi
work=$(cd "$work" && pwd)
cleanup() {
    if [ "$keep" = 1 ]; then echo "edge_inference_bench: work directory kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
renice -n 10 $$ >/dev/null 2>&1 || true   # measurements are counts, not times: let others go first
perf record -q --buildid-mmap -e cpu-clock -o "$work/probe.data" -- true >"$work/probe.log" 2>&1 ||
    usage "perf cannot record here: $(head -1 "$work/probe.log") (run as root, or lower kernel.perf_event_paranoid)"
given_pc=$pc
cp "$pc" "$work/profcollect.convert"
pc=$work/profcollect.convert
"$pc" convert --help >"$work/convert-help.txt" 2>&1 || true
inferred=1
grep -q bolt-inferred "$work/convert-help.txt" || inferred=0

start=$(date +%s)
say() { echo "[$(date +%H:%M:%S)] $*" >&2; }
failed=0
fail() { echo "edge_inference_bench: $*" >&2; failed=1; }

# measure DIR LABEL BINARY: "I1mr Ir output-md5" of one workload run under cachegrind, kept in
# DIR/m.LABEL with the sha256 of the binary and run.sh (measured again only when either changed).
measure() {
    local d=$1 l=$2 b=$3 sum
    sum=$(cat "$b" "$d/run.sh" | sha256sum | cut -c1-32)
    if [ "$(sed -n 2p "$d/m.$l" 2>/dev/null)" != "$sum $caches" ]; then
        rm -f "$d/m.$l" "$d/cg.$l"
        $run_env OUT_FILE="$d/out.$l" "$d/run.sh" valgrind --tool=cachegrind --cache-sim=yes $caches \
            --cachegrind-out-file="$d/cg.$l" --log-file="$d/vg.$l.log" "$b" || true
        [ -s "$d/cg.$l" ] || { fail "$l: the run under valgrind failed (see $d/vg.$l.log)"; return 1; }
        awk '/^events:/ { for (i = 2; i <= NF; i++) ev[i] = $i }
             /^summary:/ { for (i = 2; i <= NF; i++) v[ev[i]] = $i }
             END { printf "%s %s ", v["I1mr"], v["Ir"] }' "$d/cg.$l" >"$d/m.$l"
        md5sum <"$d/out.$l" | cut -c1-32 >>"$d/m.$l"
        echo "$sum $caches" >>"$d/m.$l"
    fi
    local g
    for g in $other_i1; do
        [ "$(sed -n 2p "$d/m.$l.$g" 2>/dev/null)" = "$sum" ] && continue
        rm -f "$d/m.$l.$g" "$d/cg.$l.$g"
        $run_env "$d/run.sh" valgrind --tool=cachegrind --cache-sim=yes --I1="$g" --D1=32768,8,64 \
            --LL=1048576,16,64 --cachegrind-out-file="$d/cg.$l.$g" --log-file="$d/vg.$l.$g.log" "$b" || true
        [ -s "$d/cg.$l.$g" ] || { fail "$l: the run under valgrind with I1 $g failed (see $d/vg.$l.$g.log)"; return 1; }
        awk '/^events:/ { for (i = 2; i <= NF; i++) ev[i] = $i }
             /^summary:/ { for (i = 2; i <= NF; i++) v[ev[i]] = $i }
             END { print v["I1mr"] }' "$d/cg.$l.$g" >"$d/m.$l.$g"
        echo "$sum" >>"$d/m.$l.$g"
    done
    say "  $l: I1 misses $(misses "$d" "$l")"
}
misses() { sed -n 1p "$1/m.$2" | cut -d' ' -f1; }
misses_at() { sed -n 1p "$1/m.$2.$3"; }
output_of() { sed -n 1p "$1/m.$2" | cut -d' ' -f3; }

# bolt_with DIR PROG LABEL PROFILE [OPTIONS...]: DIR/PROG.bolt.LABEL, llvm-bolt's output in
# DIR/bolt.LABEL.log.
bolt_with() {
    local d=$1 p=$2 l=$3 prof=$4
    shift 4
    rm -f "$d/$p.bolt.$l"
    if ! "$bolt" "$d/$p" -o "$d/$p.bolt.$l" $bolt_opts "$@" -data="$prof" >"$d/bolt.$l.log" 2>&1 ||
        [ ! -x "$d/$p.bolt.$l" ]; then
        fail "$p: llvm-bolt failed for $l (see $d/bolt.$l.log)"
        return 1
    fi
    say "  bolt $l: $(grep -m1 -oE '[0-9]+ out of [0-9]+ functions in the binary \([0-9.]+%\)' "$d/bolt.$l.log" || true) profiled"
}

# profile_warnings LOG: the lines of llvm-bolt's output that warn about the profile.
profile_warnings() {
    grep -E '^(BOLT|PERF2BOLT)-ERROR|!! WARNING !!' "$1" || true
    grep -E '^(BOLT|PERF2BOLT)-WARNING' "$1" |
        grep -iE 'profile|data|sample|trace|branch|fall-?through|count|invalid|stale|mismatch|ignored|discarded' || true
    grep -E '^PERF2BOLT: (traces mismatching disassembled function contents|Out of range traces involving unknown regions): [1-9]' \
        "$1" | sort -u || true
}

# Gains are kept to a thousandth of a point, so that a mean is judged before it is rounded for
# print (pct).
gain() { awk -v n="$1" -v i="$2" -v x="$3" 'BEGIN { if (n - i <= 0) print "n/a"; else printf "%.3f", 100 * (n - x) / (n - i) }'; }
pct() { awk -v g="$1" 'BEGIN { if (g == "n/a") print g; else printf "%.1f", g }'; }

# record DIR PROG T RUNS FREQ: DIR/perf.tT.data, a cpu-clock recording of RUNS workload runs at
# FREQ Hz, with its no_lbr fdata (DIR/nolbr.tT.fdata) and its sample counts (DIR/samples.tT).
record() {
    local d=$1 p=$2 t=$3 runs=$4 freq=$5
    rm -f "$d/perf.t$t.data"
    (cd "$d" && perf record -q --buildid-mmap -e cpu-clock -F "$freq" -o "$d/perf.t$t.data" -- \
        sh -c "i=0; while [ \$i -lt $runs ]; do $run_env ./run.sh ./$p || exit 1; i=\$((i + 1)); done") \
        >"$d/record.t$t.log" 2>&1 || { fail "$p: perf record failed (see $d/record.t$t.log)"; return 1; }
    "$perf2bolt" -p "$d/perf.t$t.data" -nl -o "$d/nolbr.t$t.fdata" "$d/$p" --thread-count=1 \
        >"$d/perf2bolt.t$t.log" 2>&1 || { fail "$p: perf2bolt failed (see $d/perf2bolt.t$t.log)"; return 1; }
    awk -v f="$freq" '/PERF2BOLT: read [0-9]+ samples/ { n = $3 } /out of range samples/ { o = $(NF - 1) }
         END { printf "%d samples, %d in the binary (%d Hz)\n", n, n - o, f }' "$d/perf2bolt.t$t.log" >"$d/samples.t$t"
}

# judge PROG: builds, profiles, BOLTs and measures PROG; prints its figures and appends
# "PROG MEAN_GAIN" of bolt-inferred (or "PROG -") to $work/inferred.
judge() {
    local p=$1 d=$work/$1 runs t l s stamp
    runs=$(eval echo "\$${p}_runs")
    mkdir -p "$d"
    stamp="$("${p}_stamp") $(declare -f "${p}_build" | cksum)"
    if [ ! -x "$d/$p" ] || [ "$(cat "$d/stamp" 2>/dev/null)" != "$stamp" ]; then
        say "$p: building (log in $d/build.log)"
        rm -f "$d"/m.* "$d/inst.fdata"   # the workload's inputs may have changed too
        "${p}_build" "$d" || { fail "$p: the build failed (see $d/build.log)"; return 1; }
        echo "$stamp" >"$d/stamp"
    fi
    # The exact profile: the instrumented program runs the workload once.
    s=$(sha256sum <"$d/$p" | cut -c1-32)
    if [ ! -s "$d/inst.fdata" ] || [ "$(cat "$d/inst.sum" 2>/dev/null)" != "$s" ]; then
        say "$p: instrumenting"
        rm -f "$d/inst.fdata"
        "$bolt" "$d/$p" -instrument -o "$d/$p.instr" -instrumentation-file="$d/inst.fdata" \
            --no-threads >"$d/instrument.log" 2>&1 || { fail "$p: instrumentation failed (see $d/instrument.log)"; return 1; }
        $run_env "$d/run.sh" "$d/$p.instr" || { fail "$p: the instrumented run failed"; return 1; }
        [ -s "$d/inst.fdata" ] || { fail "$p: the instrumented run wrote no profile"; return 1; }
        echo "$s" >"$d/inst.sum"
    fi
    bolt_with "$d" "$p" inst "$d/inst.fdata" || return 1
    measure "$d" none "$d/$p" || return 1
    measure "$d" inst "$d/$p.bolt.inst" || return 1
    local none inst ref
    none=$(misses "$d" none)
    inst=$(misses "$d" inst)
    ref=$(output_of "$d" none)

    # The recordings, and the profiles made of each.
    rm -f "$d"/m.*.t* "$d"/warnings.t* "$d/gains" "$d/gains.geometries"
    local freq=20000 count
    for t in $(seq 1 "$trials"); do
        say "$p: recording $t ($runs runs, $freq Hz)"
        record "$d" "$p" "$t" "$runs" "$freq" || return 1
        # Each recording is made again, up to five times, until it holds the budget's samples
        # within a tenth. A timer's samples follow neither its frequency nor the machine's load
        # exactly (here 8070 Hz made 23K, 15841 Hz 67K): the next frequency comes from the
        # last two recordings' counts on a log-log line (by proportion from one).
        local tries=0 last_freq=0 last_count=0 next_freq
        while [ "$budget" != 0 ] && [ "$tries" -lt 5 ]; do
            count=$(awk '{ print $1 }' "$d/samples.t$t")
            [ "$count" -gt 0 ] || { fail "$p: no sample recorded (see $d/perf2bolt.t$t.log)"; return 1; }
            awk -v b="$budget" -v n="$count" 'BEGIN { exit !(n > 1.1 * b || n < 0.9 * b) }' || break
            next_freq=$(awk -v f="$freq" -v n="$count" -v f0="$last_freq" -v n0="$last_count" -v b="$budget" 'BEGIN {
                slope = 1
                if (f0 > 0 && n0 > 0 && f0 != f && n0 != n) slope = log(n / n0) / log(f / f0)
                if (slope < 0.5) slope = 0.5; if (slope > 3) slope = 3
                x = int(f * exp(log(b / n) / slope)); if (x < 100) x = 100; if (x > 50000) x = 50000; print x }')
            last_freq=$freq last_count=$count freq=$next_freq
            say "$p: $count samples; recording $t again at $freq Hz"
            record "$d" "$p" "$t" "$runs" "$freq" || return 1
            tries=$((tries + 1))
        done
        bolt_with "$d" "$p" nolbr.t$t "$d/nolbr.t$t.fdata" && measure "$d" nolbr.t$t "$d/$p.bolt.nolbr.t$t" || true
        bolt_with "$d" "$p" guess.t$t "$d/nolbr.t$t.fdata" $guess_opts && measure "$d" guess.t$t "$d/$p.bolt.guess.t$t" || true
        [ "$inferred" = 1 ] || continue
        if ! "$pc" convert -q -p "$d/perf.t$t.data" --format bolt-inferred -o "$d/inferred.t$t.pa" "$d/$p" \
            >"$d/convert.t$t.log" 2>&1; then
            fail "$p: profcollect convert --format bolt-inferred failed (see $d/convert.t$t.log)"
            continue
        fi
        bolt_with "$d" "$p" bolt-inferred.t$t "$d/inferred.t$t.pa" --pa || continue
        profile_warnings "$d/bolt.bolt-inferred.t$t.log" >"$d/warnings.t$t"
        [ -s "$d/warnings.t$t" ] && fail "$p: llvm-bolt warns about the bolt-inferred profile of recording $t"
        measure "$d" bolt-inferred.t$t "$d/$p.bolt.bolt-inferred.t$t" || true
    done

    # The figures.
    echo "$p: $(eval echo "\$${p}_what"), $runs runs a recording"
    printf '  %-22s %12s %8s\n' profile "I1 misses" gain
    printf '  %-22s %12s\n' none "$none"
    printf '  %-22s %12s %7s%%%s\n' inst "$inst" "$(pct "$(gain "$none" "$inst" "$inst")")" \
        "$([ "$(output_of "$d" inst)" = "$ref" ] || echo "  OUTPUT DIFFERS")"
    [ "$(output_of "$d" inst)" = "$ref" ] || fail "$p: the output of inst differs from the original's"
    local k g m
    for t in $(seq 1 "$trials"); do
        echo "  recording $t: $(cat "$d/samples.t$t" 2>/dev/null || echo "? samples")"
        for k in nolbr guess bolt-inferred; do
            l=$k.t$t
            if [ "$k" = bolt-inferred ] && [ "$inferred" = 0 ]; then
                printf '    %-20s not available\n' "$k"
            elif [ ! -s "$d/m.$l" ]; then
                printf '    %-20s failed\n' "$k"
            else
                m=$(misses "$d" "$l")
                g=$(gain "$none" "$inst" "$m")
                echo "$k $m $g" >>"$d/gains"
                echo "$k 32768,8,64 $g" >>"$d/gains.geometries"
                local geo
                for geo in $other_i1; do
                    echo "$k $geo $(gain "$(misses_at "$d" none "$geo")" "$(misses_at "$d" inst "$geo")" \
                        "$(misses_at "$d" "$l" "$geo")")" >>"$d/gains.geometries"
                done
                printf '    %-20s %12s %7s%%%s\n' "$k" "$m" "$(pct "$g")" \
                    "$([ "$(output_of "$d" "$l")" = "$ref" ] || echo "  OUTPUT DIFFERS")"
                [ "$(output_of "$d" "$l")" = "$ref" ] || fail "$p: the output of $l differs from the original's"
            fi
        done
        [ -s "$d/warnings.t$t" ] && sed 's/^/      profile warning: /' "$d/warnings.t$t"
    done
    printf '  mean of %s recordings:' "$trials"
    for k in nolbr guess bolt-inferred; do
        awk -v k="$k" -v trials="$trials" '$1 == k {
                m += $2; g += $3; n++; if (n == 1 || $3 < lo) lo = $3; if (n == 1 || $3 > hi) hi = $3 }
            END { if (n == 0) printf " %s -", k
                  else printf " %s %.0f (%.1f%% [%.1f..%.1f]%s)", k, m / n, g / n, lo, hi, n < trials ? ", " n " of " trials : "" }
            ' "$d/gains" 2>/dev/null || printf ' %s -' "$k"
        [ "$k" = bolt-inferred ] || printf ','
    done
    echo
    if [ -n "$other_i1" ] && [ -s "$d/gains.geometries" ]; then
        # Mean gains of the recordings at each geometry (the target's first), and over all.
        echo "  mean gains at each I1 geometry (size,ways,line) and over all: nolbr / guess / bolt-inferred"
        awk '$3 != "n/a" { s[$1 " " $2] += $3; c[$1 " " $2]++; a[$1] += $3; n[$1]++
                           if (!($2 in seen)) { seen[$2] = 1; order[++geos] = $2 } }
             function m(k) { return k in c ? sprintf("%.1f%%", s[k] / c[k]) : "-" }
             END { for (i = 1; i <= geos; i++)
                       printf "    %-12s %s / %s / %s\n", order[i], m("nolbr " order[i]), m("guess " order[i]), m("bolt-inferred " order[i])
                   printf "    %-12s %s / %s / %s\n", "all", \
                       ("nolbr" in n ? sprintf("%.1f%%", a["nolbr"] / n["nolbr"]) : "-"), \
                       ("guess" in n ? sprintf("%.1f%%", a["guess"] / n["guess"]) : "-"), \
                       ("bolt-inferred" in n ? sprintf("%.1f%%", a["bolt-inferred"] / n["bolt-inferred"]) : "-") }' \
            "$d/gains.geometries"
    fi
    g=$(awk -v trials="$trials" '$1 == "bolt-inferred" { g += $3; n++ } END { if (n == trials) printf "%.3f", g / n; else print "-" }' "$d/gains" 2>/dev/null || echo -)
    echo "$p $g" >>"$work/inferred"
    say "$p: done"
}

rm -f "$work/inferred"
for p in $programs; do
    judge "$p" || { echo "$p: failed (see above)"; echo "$p -" >>"$work/inferred"; }
done

status=0
if [ "$inferred" = 0 ]; then
    echo "bolt-inferred: not available ($given_pc convert has no --format bolt-inferred)"
    status=1
else
    printf 'bolt-inferred against the target (mean gain >= %s%% of inst on every program):' "$target"
    awk -v target="$target" '{ printf " %s %s", $1, ($2 == "-" ? "not measured" : sprintf("%.2f%% ", $2) ($2 + 0 >= target ? "met" : "MISSED")); if ($2 == "-") bad = 1; else if ($2 + 0 < target) miss = 1 }
        END { print ""; exit bad ? 1 : miss ? 3 : 0 }' "$work/inferred" || status=$?
fi
echo "wall: $(($(date +%s) - start)) s"
[ "$failed" = 1 ] && status=1
exit "$status"
