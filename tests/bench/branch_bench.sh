#!/bin/sh
# Branch-stack conversion benchmark, run by hand (not by ctest): about BENCH_SAMPLES (default
# 100000) branch samples of 32 entries, converted by profcollect and by its two peers on the
# same file, with wall time, peak RSS and their ratios, and whether the outputs are equal.
# Needs gcc, perf, /usr/lib/llvm-19/bin/perf2bolt, llvm-profgen-19, llvm-profdata-19,
# /usr/bin/time and the branch_recorder test tool (built with the tests).
#
# Usage: branch_bench.sh [-k] [PROFCOLLECT [BRANCH_RECORDER]]
#   PROFCOLLECT      the profcollect executable (default: build/profcollect in the repository)
#   BRANCH_RECORDER  default: tests/branch_recorder beside PROFCOLLECT's build directory
#   -k               keep the work directory and print its path
#   BENCH_SAMPLES=N  sample count; BENCH_STEPS=N instructions traced (default 200000)
#   BENCH_PROGRAM=branch_virtual|branch_loop  the traced program (default branch_virtual)
#
# The data: no LBR here (virtual machine), so branch_recorder traces the real taken branches of
# tests/fixtures/src/branch_virtual.cpp (C++ virtual calls; or branch_loop.c) built as
# make_branch_fixtures.sh builds it (gcc/g++ -O2 -g PIE, --emit-relocs) by ptrace single-stepping, and `--window-slide` writes BENCH_SAMPLES samples whose
# 32-entry windows slide 37 branches at a time over that sequence: a file of the size and shape
# of a real LBR recording, which perf script, perf2bolt and llvm-profgen all read.
#
# 1. BOLT: `profcollect convert` (branch fdata) against `perf2bolt -p DATA -o OUT BIN`; sorted
#    lines must be equal.
# 2. AutoFDO: `profcollect convert --format autofdo` against `llvm-profgen-19 --perfdata DATA
#    --binary BIN`; compared after `llvm-profdata-19 merge --sample --text`; a difference is
#    printed (first lines of the diff), not hidden.
#
# Peak RSS is /usr/bin/time's: the largest of the process and the children it waited for, not
# their sum. perf2bolt and llvm-profgen run `perf script` as a child, so their figures understate
# what their whole job holds at once; ours has no children.
#
# Exit status: 0 both outputs equal; 1 an output differs or a run failed; 2 usage or missing tools.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
perf2bolt=/usr/lib/llvm-19/bin/perf2bolt
samples=${BENCH_SAMPLES:-100000}
steps=${BENCH_STEPS:-200000}
program=${BENCH_PROGRAM:-branch_virtual}
period=37

keep=0
if [ "${1:-}" = "-k" ]; then
    keep=1
    shift
fi
pc=${1:-$repo/build/profcollect}
recorder=${2:-$(dirname "$pc")/tests/branch_recorder}
for tool in "$pc" "$recorder"; do
    if [ ! -x "$tool" ]; then
        echo "branch_bench: no executable at $tool (give its path)" >&2
        exit 2
    fi
done
# The work happens in a temporary directory: make both paths absolute first.
pc=$(cd "$(dirname "$pc")" && pwd)/$(basename "$pc")
recorder=$(cd "$(dirname "$recorder")" && pwd)/$(basename "$recorder")
for tool in gcc g++ perf "$perf2bolt" llvm-profgen-19 llvm-profdata-19 /usr/bin/time awk; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "branch_bench: $tool not found" >&2
        exit 2
    fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/profcollect-branch-bench.XXXXXX")
cleanup() {
    if [ "$keep" = 1 ]; then
        echo "work directory kept: $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
cd "$work"

flags="-O2 -g -fPIE -pie -Wl,--emit-relocs"
case $program in
    branch_loop) gcc $flags -o prog "$repo/tests/fixtures/src/branch_loop.c" ;;
    branch_virtual) g++ $flags -o prog "$repo/tests/fixtures/src/branch_virtual.cpp" ;;
    *) echo "branch_bench: BENCH_PROGRAM is branch_virtual or branch_loop" >&2; exit 2 ;;
esac
echo "tracing $steps instructions of $program, writing $samples samples of 32 entries..."
"$recorder" --entries 32 --period "$period" --max-steps "$steps" --window-slide "$samples" \
    -o bench.data -- ./prog
recorded=$(perf script -i bench.data -F ip 2>/dev/null | wc -l)
echo "perf.data: $(wc -c <bench.data) bytes, $recorded samples (perf script)"

# Runs "$@" under /usr/bin/time -v; sets wall (seconds, from the clock) and rss (KiB).
measure() {
    label=$1
    shift
    start=$(date +%s%N)
    if ! /usr/bin/time -v -o "$label.time" "$@" >"$label.log" 2>&1; then
        echo "branch_bench: $label failed:" >&2
        cat "$label.log" >&2
        exit 1
    fi
    end=$(date +%s%N)
    wall=$(awk -v ns=$((end - start)) 'BEGIN { printf "%.3f", ns / 1e9 }')
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$label.time")
    printf '%-26s %10s s %10s KiB\n' "$label" "$wall" "$rss"
}

ratios() {  # ours_wall ours_rss peer_wall peer_rss peer_name
    awk -v ow="$1" -v orss="$2" -v pw="$3" -v prss="$4" -v peer="$5" 'BEGIN {
        printf "vs %s: %.1fx faster (time ratio %.3f), memory ratio %.3f\n",
               peer, (ow > 0 ? pw / ow : 0), (pw > 0 ? ow / pw : 0), (prss > 0 ? orss / prss : 0)
    }'
}

status=0
echo "-- BOLT branch fdata"
measure profcollect-bolt "$pc" convert -q -p bench.data -o ours.fdata ./prog
ow=$wall orss=$rss
measure perf2bolt "$perf2bolt" -p bench.data -o perf2bolt.fdata ./prog
ratios "$ow" "$orss" "$wall" "$rss" perf2bolt
sort ours.fdata >ours.fdata.sorted
sort perf2bolt.fdata >perf2bolt.fdata.sorted
if cmp -s ours.fdata.sorted perf2bolt.fdata.sorted; then
    echo "fdata: equal, sorted ($(wc -l <perf2bolt.fdata.sorted) lines)"
else
    echo "fdata: DIFFERENT (sorted; < perf2bolt, > profcollect)"
    diff perf2bolt.fdata.sorted ours.fdata.sorted | head -20 || true
    status=1
fi

echo "-- AutoFDO"
measure profcollect-autofdo "$pc" convert -q -p bench.data --format autofdo -o ours.prof ./prog
ow=$wall orss=$rss
measure llvm-profgen llvm-profgen-19 --perfdata bench.data --binary ./prog -o ref.prof
ratios "$ow" "$orss" "$wall" "$rss" llvm-profgen
llvm-profdata-19 merge --sample --text ours.prof -o ours.txt
llvm-profdata-19 merge --sample --text ref.prof -o ref.txt
if cmp -s ours.txt ref.txt; then
    echo "AutoFDO profiles: equal ($(wc -l <ref.txt) lines of text)"
else
    echo "AutoFDO profiles: DIFFERENT (< llvm-profgen, > profcollect; $(wc -l <ref.txt) vs $(wc -l <ours.txt) lines)"
    diff ref.txt ours.txt | head -20 || true
    status=1
fi
exit "$status"
