#!/usr/bin/env bash
# Installs what is needed, builds profcollect as a user installs it (the tool alone, a release
# build: optimized, without debug info, its sources compiled sixteen to a unit) into
# build-release/ (or BUILD_DIR), and runs the main job on a bundled demo workload:
# the seed program of the project (a small clang/lld PIE whose samples perf2bolt loses),
# profiled live into a profile directory, reported, and given to llvm-bolt; then the same
# through perf record + profcollect convert.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tests/install-deps.sh"
build=${BUILD_DIR:-$root/build-release}
BUILD_DIR=$build "$root/tests/build.sh" --target profcollect -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16
pc=$build/profcollect
demo=$build/demo
mkdir -p "$demo"
cd "$demo"
rm -rf out
clang-19 -O2 -g --ld-path=ld.lld-19 -Wl,--emit-relocs -o hot "$root/tests/fixtures/src/hot.c"

echo "== profcollect -o out -- ./hot 300"
"$pc" -o out -- ./hot 300
echo "== profcollect report out"
"$pc" report out
echo "== llvm-bolt-19 ./hot -o hot.bolt -data=out/hot-*/bolt.fdata"
llvm-bolt-19 ./hot -o hot.bolt -data="$(ls out/hot-*/bolt.fdata)" 2>&1 | grep -E "non-empty execution profile|BOLT-ERROR" || true

echo "== perf record --buildid-mmap -e cpu-clock ./hot 300; profcollect convert -p hot.data -o hot.fdata -nl ./hot"
perf record -q --buildid-mmap -e cpu-clock -o hot.data -- ./hot 300 >/dev/null
"$pc" convert -p hot.data -o hot.fdata -nl ./hot
echo "== profcollect report hot.data ./hot --top 5"
"$pc" report hot.data ./hot --top 5
