#!/usr/bin/env bash
# Fuzzes every parser: builds the fuzz targets (tests/fuzz/*_fuzz.cpp) with clang-19, libFuzzer,
# ASan and UBSan into build-fuzz/ (or FUZZ_BUILD_DIR), makes their seed corpora there
# (tests/fuzz/make_seeds.sh), and runs each target for SECONDS seconds, two at a time. At the
# end it prints each target's executions per second and coverage.
#
#   tests/fuzz/run.sh SECONDS [TARGET...]
#
# With TARGETs, only those are built and fuzzed (the seeds of every target are made all the same).
#
# An input that crashes a target, trips a sanitizer, leaks, runs out of memory
# (-rss_limit_mb) or runs longer than the timeout (an infinite loop is a finding too) is copied
# to tests/fuzz/regressions/<target>/<its sha256>, where ctest replays it in every build once
# the bug is fixed; the script then exits 1. Corpora grow in the build directory from run to run.
set -euo pipefail
usage() {
    echo "usage: $0 SECONDS [TARGET...]" >&2
    exit 2
}
[ $# -ge 1 ] || usage
seconds=$1
shift
[[ "$seconds" =~ ^[0-9]+$ ]] || usage
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
parallel=2           # the machines this runs on have 2 cores
rss_limit_mb=2048
timeout_seconds=10   # per input; the slowest seeds take well under a second

targets=("$@")
for t in "${targets[@]}"; do
    [ -f "$root/tests/fuzz/$t.cpp" ] || { echo "$0: no fuzz target $t" >&2; exit 2; }
done
# Targets named: only they are built, with profcollect (make_seeds.sh runs it), not every other
# target and replay.
build_targets=(fuzzers profcollect)
[ ${#targets[@]} -eq 0 ] || build_targets=("${targets[@]}" profcollect)
if [ ${#targets[@]} -eq 0 ]; then
    for f in "$root"/tests/fuzz/*_fuzz.cpp; do targets+=("$(basename "$f" .cpp)"); done
fi

# ---- build ------------------------------------------------------------------------------------
started=$(date +%s)
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DPROFCOLLECT_BUILD_FUZZERS=ON >/dev/null
cmake --build "$build" --target "${build_targets[@]}" -j"$(nproc)" >"$build/fuzz-build.log" 2>&1 || {
    tail -40 "$build/fuzz-build.log" >&2
    exit 1
}
built=$(date +%s)
echo "built in $((built - started)) s"
for t in "${targets[@]}"; do
    [ -x "$build/tests/fuzz/$t" ] || { echo "$0: no fuzz target $t" >&2; exit 2; }
done

# ---- seeds ------------------------------------------------------------------------------------
"$root/tests/fuzz/make_seeds.sh" "$build/fuzz-seeds" "$build/profcollect"
echo "seeds made in $(($(date +%s) - built)) s"

# ---- fuzz -------------------------------------------------------------------------------------
logs=$build/fuzz-logs
artifacts=$build/fuzz-artifacts
mkdir -p "$logs"
rm -rf "$artifacts"
# The targets' scratch files (tests/fuzz/fuzz_support.h), on tmpfs when there is one, removed
# at the end whatever way the fuzzers ended.
scratch=$(mktemp -d "$( [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")/profcollect-fuzz-run.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export TMPDIR=$scratch
# A quarantine smaller than the time orderer's 64 MiB arena (reserved once per record source)
# lets that one block go back at once, not linger and be re-poisoned at every input (10x slower);
# smaller freed blocks are still held back, so use-after-free is still caught.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1:quarantine_size_mb=32"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

# Inputs longer than this are cut when read: a recording of a megabyte takes a second under
# ASan, and its first 128 KiB hold every kind of record it has.
max_len() {
    case $1 in
        perf_data_*) echo 131072 ;;
        *) echo 0 ;;  # libFuzzer's default: the longest seed
    esac
}

run_target() {
    local t=$1
    local corpus=$build/fuzz-corpus/$t
    mkdir -p "$corpus" "$artifacts/$t" "$root/tests/fuzz/regressions/$t"
    mkdir -p "$build/fuzz-seeds/$t"
    # The first directory receives new inputs; the seeds and regressions are only read.
    local len=()
    [ "$(max_len "$t")" = 0 ] || len=(-max_len="$(max_len "$t")")
    "$build/tests/fuzz/$t" -max_total_time="$seconds" -rss_limit_mb="$rss_limit_mb" \
        -timeout="$timeout_seconds" -print_final_stats=1 -artifact_prefix="$artifacts/$t/" "${len[@]}" \
        "$corpus" "$build/fuzz-seeds/$t" "$root/tests/fuzz/regressions/$t" >"$logs/$t.log" 2>&1 || true
}

echo "fuzzing ${#targets[@]} targets for $seconds s each, $parallel at a time"
running=0
for t in "${targets[@]}"; do
    run_target "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$parallel" ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait

# ---- findings and summary ---------------------------------------------------------------------
status=0
printf '%-28s %10s %8s %8s  %s\n' target exec/s cov ft result
for t in "${targets[@]}"; do
    log=$logs/$t.log
    execs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    last=$(grep -E '(INITED|NEW|REDUCE|pulse|DONE|RELOAD).* cov: ' "$log" | tail -1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    result=ok
    for a in "$artifacts/$t"/*; do
        [ -f "$a" ] || continue
        case $(basename "$a") in
            crash-* | timeout-* | leak-* | oom-*) ;;
            *) continue ;;
        esac
        kind=$(basename "$a" | cut -d- -f1)
        saved=""
        # A regression input that fails again is reported under its own name, not copied twice.
        for known in "$root/tests/fuzz/regressions/$t"/*; do
            if [ -f "$known" ] && cmp -s "$a" "$known"; then saved=$known; fi
        done
        if [ -z "$saved" ]; then
            saved=$root/tests/fuzz/regressions/$t/$(sha256sum "$a" | cut -c1-40)
            cp "$a" "$saved"
        fi
        result="FOUND $kind: ${saved#"$root"/} (log: $log)"
        status=1
    done
    if [ "$result" = ok ] && ! grep -q '^stat::number_of_executed_units' "$log"; then
        result="did not run to the end (log: $log)"
        status=1
    fi
    printf '%-28s %10s %8s %8s  %s\n' "$t" "${execs:--}" "${cov:--}" "${ft:--}" "$result"
done
echo "total $(($(date +%s) - started)) s"
exit "$status"
