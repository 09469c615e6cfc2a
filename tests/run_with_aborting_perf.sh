#!/usr/bin/env bash
# Checks that the suite survives a perf whose `perf record` aborts after writing its data, as
# perf 6.1 can ("assertion failed at util/build-id.c:1010") when a recording writes perf's
# build-id table: it runs the fixture generation (ctest's fixtures.generate, tests/fixtures/*.sh)
# and the integration tests with tests/support/aborting_perf/perf first on PATH. Every recording
# the suite makes uses --buildid-mmap and must not notice; the one fixture recorded without it on
# purpose (hot_gcc_table.data) writes its .aborted marker, and only the test that needs it skips,
# saying why. Everything else must pass.
#
#   tests/run_with_aborting_perf.sh [CTEST ARGS...]
#
# Uses the build of BUILD_DIR (default: build; built here as tests/run.sh builds it). The
# fixture sets are made afresh with the aborting perf, and their stamps removed at the end, so
# that the next run makes them again with the real one. Without CTEST ARGS it runs
# fixtures.generate and every test of profcollect_integration_tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
BUILD_DIR=$build "$root/tests/build.sh"
PROFCOLLECT_REAL_PERF=$(command -v perf) || { echo "$0: perf not found" >&2; exit 1; }
export PROFCOLLECT_REAL_PERF
export PATH=$root/tests/support/aborting_perf:$PATH
[ "$(command -v perf)" = "$root/tests/support/aborting_perf/perf" ] || { echo "$0: the wrapper is not first on PATH" >&2; exit 1; }

remove_stamps() { rm -f "$build"/fixtures/*/*.stamp; }
remove_stamps
trap remove_stamps EXIT

cd "$build"
args=("$@")
if [ ${#args[@]} -eq 0 ]; then
  # The integration binary's suites, as ctest names their tests (Suite.Test).
  suites=$(./tests/profcollect_integration_tests --gtest_list_tests | sed -n 's/^\([^ #][^ ]*\)\.\( .*\)\{0,1\}$/\1/p' |
    sort -u | paste -sd'|')
  args=(-R "^(fixtures\.generate|live\.cpu_hotplug|($suites)\..*)$")
fi
log=$(mktemp)
set +e
ctest --output-on-failure -j"${TEST_JOBS:-2}" "${args[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
echo "== skipped, and why:"
grep "(Skipped)" "$log" || echo "(none)"
rm -f "$log"
exit "$status"
