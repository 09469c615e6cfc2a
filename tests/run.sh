#!/usr/bin/env bash
# The one test command: installs what the tests need, builds, and runs every test (unit tests
# and integration tests judged by perf, perf2bolt, llvm-bolt and llvm-profgen).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tests/install-deps.sh"
"$root/tests/build.sh"
build=${BUILD_DIR:-$root/build}
# Sampling our own test programs needs perf_event_paranoid <= 2 (the default); as root any value works.
cd "$build"
ctest --output-on-failure -j"${TEST_JOBS:-2}" "$@"
