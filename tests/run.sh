#!/usr/bin/env bash
# The one test command: installs what the tests need, builds, and runs every test (unit tests
# and integration tests judged by perf, perf2bolt, llvm-bolt and llvm-profgen).
#
#   tests/run.sh [--sanitize] [CTEST ARGS...]
#
# --sanitize builds everything with clang-19, AddressSanitizer and UndefinedBehaviorSanitizer in
# its own build directory (build-sanitize, or BUILD_DIR) and runs the same tests; any sanitizer
# report, also from a profcollect process a test started and whose failure the test expected,
# fails the run. Without it the build is g++'s (the system compiler): CI (.ci/run) runs both, so
# both compilers build everything.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sanitize=""
if [ "${1:-}" = "--sanitize" ]; then
  sanitize=1
  shift
fi
"$root/tests/install-deps.sh"
if [ -n "$sanitize" ]; then
  build=${BUILD_DIR:-$root/build-sanitize}
  # A build directory configured with another compiler is configured afresh: CMake keeps the
  # compiler of a cache.
  if [ -f "$build/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++-19$' "$build/CMakeCache.txt"; then
    rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
  fi
  BUILD_DIR=$build "$root/tests/build.sh" -DPROFCOLLECT_SANITIZE=ON \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19
  reports=$build/sanitizer-reports
  rm -rf "$reports"
  mkdir -p "$reports"
  # Every report goes to a file as well as aborting the process that met it.
  export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:strict_string_checks=1:log_path=$reports/asan"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$reports/ubsan"
else
  build=${BUILD_DIR:-$root/build}
  BUILD_DIR=$build "$root/tests/build.sh"
fi
cd "$build"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
ctest --output-on-failure -j"${TEST_JOBS:-2}" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# A test skips only when a tool or privilege is missing. This script installs the tools and CI
# runs as root, so in CI a skipped test means a judge did not run: count that as a failure.
if [ -n "${CI:-}" ] && grep -q "(Skipped)" "$log"; then
  echo "CI: these tests were skipped, so their judges did not run:" >&2
  grep "(Skipped)" "$log" >&2
  exit 1
fi
if [ -n "$sanitize" ] && [ -n "$(ls -A "$reports")" ]; then
  echo "sanitizer reports (in $reports):" >&2
  for f in "$reports"/*; do
    echo "== $f" >&2
    head -40 "$f" >&2
  done
  exit 1
fi
exit "$status"
