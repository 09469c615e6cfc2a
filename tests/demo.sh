#!/usr/bin/env bash
# Installs what is needed, builds profcollect, and runs the main job on a bundled demo workload:
# the seed program of the project (a small clang/lld PIE whose samples perf2bolt loses), recorded
# with perf, converted to a BOLT profile, and reported.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tests/install-deps.sh"
"$root/tests/build.sh"
build=${BUILD_DIR:-$root/build}
demo=$build/demo
mkdir -p "$demo"
cd "$demo"
clang-19 -O2 -g --ld-path=ld.lld-19 -Wl,--emit-relocs -o hot "$root/tests/fixtures/src/hot.c"
echo "== perf record -e cpu-clock ./hot 300"
perf record -q -e cpu-clock -o hot.data -- ./hot 300 >/dev/null
echo "== profcollect convert -p hot.data -o hot.fdata -nl ./hot"
"$build/profcollect" convert -p hot.data -o hot.fdata -nl ./hot
head -5 hot.fdata
echo "== profcollect report hot.data ./hot"
"$build/profcollect" report hot.data ./hot --top 5
echo "== llvm-bolt-19 ./hot -o hot.bolt -data=hot.fdata"
llvm-bolt-19 ./hot -o hot.bolt -data=hot.fdata 2>&1 | grep -E "profile|BOLT-ERROR" || true
